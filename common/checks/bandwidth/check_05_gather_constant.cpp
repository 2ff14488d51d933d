// Checks for bandwidth/05_gather_constant: exact gathers against src(:, indices) on the CPU,
// on both index paths (__constant__ up to 16384 indices, the read-only cache beyond).
#include "bandwidth_checks.hpp"

using namespace bandwidth_checks;

TEST_CASE("bandwidth/05_gather_constant: small shapes, 0, 1 and many indices, repeated and out of order",
          "[exercise]") {
    check_small_gathers();
}

TEST_CASE("bandwidth/05_gather_constant: the classic size and many indices", "[exercise]") { check_many_indices(); }

TEST_CASE("bandwidth/05_gather_constant: both index paths, and fresh indices on every call", "[exercise]") {
    for (const auto& v : lesson::gather_variants()) {
        // 16384 indices fill __constant__ exactly; 16385 take the read-only path.
        check_gather(v, 100, 20000, make_indices(16384, 20000, IndexOrder::Random, 21), "16384 indices");
        check_gather(v, 100, 20000, make_indices(16385, 20000, IndexOrder::Random, 22), "16385 indices");
        // Back to back, same count, different indices: the second call must not see the first's.
        check_gather(v, 100, 20000, sequential(16384), "16384 indices in order");
        check_gather(v, 100, 20000, reversed(16384, 20000), "16384 other indices, reversed");
        check_gather(v, 100, 20000, {7}, "one index");
    }
    const auto variants = lesson::gather_variants();
    tut::DeviceBuffer<float> src(100 * 20000), dst(100 * 16385);
    const std::vector<int> fit = sequential(16384), spill = sequential(16385);
    for (const auto& v : variants) {
        if (!v.path || v.name.find("const") == std::string::npos) continue;
        INFO("variant '" << v.name << "' reports its path");
        CHECK(v.path(make_gather_input(100, 20000, src.get(), fit, nullptr), dst.get()) == "__constant__");
        CHECK(v.path(make_gather_input(100, 20000, src.get(), spill, nullptr), dst.get()).rfind("read-only cache", 0) == 0);
    }
}

TEST_CASE("bandwidth/05_gather_constant: huge columns and the largest size, 2^30 floats", "[exercise]") {
    check_largest();
}

TEST_CASE("bandwidth/05_gather_constant: refuses an empty matrix, a bad index, too large a size", "[baseline]") {
    check_all_refusals();
}

TEST_CASE("bandwidth/05_gather_constant: the device comparison finds planted errors", "[baseline]") {
    check_device_comparison();
}
