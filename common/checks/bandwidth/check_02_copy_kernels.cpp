// Checks for bandwidth/02_copy_kernels: exact copies of any length at any 4-byte alignment,
// up to 2^30 floats (those compared on the device, see bandwidth_checks.hpp).
#include "bandwidth_checks.hpp"

using namespace bandwidth_checks;

TEST_CASE("bandwidth/02_copy_kernels: float4 kernels copy exactly, any size, any alignment", "[exercise]") {
    const auto variants = copy_variants_where(true);
    REQUIRE(!variants.empty());
    for (const auto& v : variants)
        for (auto [src_offset, dst_offset] : kCopyOffsets)
            for (size_t n : kCopySizes) check_copy(v, n, src_offset, dst_offset);
}

TEST_CASE("bandwidth/02_copy_kernels: float4 kernels at the largest size, 2^30 floats", "[exercise]") {
    const auto variants = copy_variants_where(true);
    REQUIRE(!variants.empty());
    check_copy(variants.front(), 1000003, 1, 1);  // checked on every GPU, whatever its memory
    if (!largest_size_fits(2 * (kMaxCopyElements + kGuard + 1) * sizeof(float), "copies of 2^30 floats"))
        return;
    for (const auto& v : variants) {
        check_copy(v, kMaxCopyElements, 0, 0);
        check_copy(v, kMaxCopyElements - 5, 1, 1);
    }
}

TEST_CASE("bandwidth/02_copy_kernels: float kernels copy exactly, any size, any alignment, up to 2^30", "[baseline]") {
    const auto variants = copy_variants_where(false);
    REQUIRE(!variants.empty());
    for (const auto& v : variants) {
        for (auto [src_offset, dst_offset] : kCopyOffsets)
            for (size_t n : kCopySizes) check_copy(v, n, src_offset, dst_offset);
        if (largest_size_fits(2 * (kMaxCopyElements + kGuard) * sizeof(float), "copies of 2^30 floats"))
            check_copy(v, kMaxCopyElements, 0, 0);
    }
}

TEST_CASE("bandwidth/02_copy_kernels: refuses more than 2^30 floats and null pointers", "[baseline]") {
    tut::DeviceBuffer<float> a(16), b(16);
    for (const auto& v : lesson::copy_variants()) {
        INFO("variant '" << v.name << "'");
        REQUIRE_THROWS_AS(v.run(kMaxCopyElements + 1, a.get(), b.get()), tut::Unsupported);
        REQUIRE_THROWS_AS(v.run(8, nullptr, b.get()), tut::Unsupported);
        REQUIRE_THROWS_AS(v.run(8, a.get(), nullptr), tut::Unsupported);
        REQUIRE_NOTHROW(v.run(0, nullptr, nullptr));  // nothing to do is fine
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    }
}

TEST_CASE("bandwidth/02_copy_kernels: the device comparison finds planted errors", "[baseline]") {
    check_device_comparison();
}
