// Checks for bandwidth/05_gather_constant: exact gathers against src(:, indices) on the CPU,
// on both index paths (__constant__ up to 16384 indices, the read-only cache beyond).
#include "bandwidth_checks.hpp"

using namespace bandwidth_checks;

namespace lesson {
std::vector<tut::bandwidth::GatherVariant> variants();  // gather_constant.cu
}

namespace {

// The variants the lesson must have, by name: one removed or renamed fails the checks.
std::vector<GatherVariant> checked_variants() {
    return required(lesson::variants(), {"precomputed + const, 64x256 (classic launch)",
                                         "precomputed + read-only cache, full grid",
                                         "precomputed + const, full grid"});
}

}  // namespace

TEST_CASE("bandwidth/05_gather_constant: small shapes, 0, 1 and many indices, repeated and out of order",
          "[exercise]") {
    check_small_gathers(checked_variants());
}

TEST_CASE("bandwidth/05_gather_constant: the classic size and many indices", "[exercise]") {
    check_many_indices(checked_variants());
}

TEST_CASE("bandwidth/05_gather_constant: both index paths, and fresh indices on every call", "[exercise]") {
    // Each variant's path: __constant__ up to 16384 indices (they fill it exactly), the
    // read-only cache beyond; the read-only variant always takes the read-only cache.
    struct Paths {
        const char* variant;
        const char* fit;
        const char* spill;  // a prefix of the path taken with 16385 indices
    };
    for (const Paths& p : {Paths{"precomputed + const, 64x256 (classic launch)", "__constant__", "read-only cache"},
                           Paths{"precomputed + read-only cache, full grid", "read-only cache", "read-only cache"},
                           Paths{"precomputed + const, full grid", "__constant__", "read-only cache"}}) {
        const GatherVariant v = required(lesson::variants(), {p.variant}).front();
        const std::vector<int> fit = make_indices(16384, 20000, IndexOrder::Random, 21);
        const std::vector<int> spill = make_indices(16385, 20000, IndexOrder::Random, 22);
        CHECK(check_gather(v, 100, 20000, fit, "16384 indices") == p.fit);
        CHECK(check_gather(v, 100, 20000, spill, "16385 indices").rfind(p.spill, 0) == 0);
        // Back to back, same count, different indices: the second call must not see the first's.
        check_gather(v, 100, 20000, sequential(16384), "16384 indices in order");
        check_gather(v, 100, 20000, reversed(16384, 20000), "16384 other indices, reversed");
        check_gather(v, 100, 20000, {7}, "one index");
    }
}

TEST_CASE("bandwidth/05_gather_constant: huge columns and the largest size, 2^30 floats", "[exercise]") {
    check_largest(checked_variants());
}

TEST_CASE("bandwidth/05_gather_constant: refuses an empty matrix, a bad index, too large a size", "[baseline]") {
    check_all_refusals(checked_variants());
}

TEST_CASE("bandwidth/05_gather_constant: the device comparison finds planted errors", "[baseline]") {
    check_device_comparison();
}
