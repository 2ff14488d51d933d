// Checks for reduction/09_vectorized (vectorized loads with an unaligned head and a tail): every type, n = 0 .. 2^26, 2^30 once (double), refusal above 2^30.
#include "reduction_checks.hpp"

using namespace reduction_checks;

TEST_CASE("reduction/09: double sums match the compensated reference, n = 0 .. 2^26", "[exercise]") {
    check_all_sums<double>();
}

TEST_CASE("reduction/09: float sums are within the float error bound", "[exercise]") { check_all_sums<float>(); }

TEST_CASE("reduction/09: int sums are exact", "[exercise]") { check_all_sums<int>(); }

TEST_CASE("reduction/09: complex sums match, part by part", "[exercise]") { check_all_sums<cuDoubleComplex>(); }

TEST_CASE("reduction/09: the largest n, 2^30 doubles, by the first double variant", "[exercise]") {
    check_largest<double>();
}

// Vector loads: sizes that leave a tail (not multiples of 2 or 4), and starts that are
// not 16- or 32-byte aligned (a head), for every type.
const std::vector<size_t> kOddSizes{2, 3, 5, 6, 7, 1000003, (size_t(1) << 26) - 1};
const std::vector<size_t> kOffsets{1, 2, 3};

TEST_CASE("reduction/09: sizes that are not multiples of the vector width", "[exercise]") {
    check_all_sums<double>(kOddSizes);
    check_all_sums<float>(kOddSizes);
    check_all_sums<int>(kOddSizes);
    check_all_sums<cuDoubleComplex>(kOddSizes);
}

TEST_CASE("reduction/09: unaligned starts (in + 1, + 2, + 3) are handled", "[exercise]") {
    const std::vector<size_t> sizes{1, 2, 3, 4, 5, 31, 33, 1000003};
    check_all_sums<double>(sizes, kOffsets);
    check_all_sums<float>(sizes, kOffsets);
    check_all_sums<int>(sizes, kOffsets);
    check_all_sums<cuDoubleComplex>(sizes, kOffsets);
}

TEST_CASE("reduction/09: a start that is not even element-aligned is refused", "[baseline]") {
    const tut::reduction::Variants all = lesson::reduction_variants();
    const char* base = reinterpret_cast<const char*>(dataset<double>().device.get());
    for (const auto& v : all.f64) {
        INFO("variant '" << v.name << "' must refuse a pointer 1 byte past an element with tut::Unsupported");
        REQUIRE_THROWS_AS(v.run(reinterpret_cast<const double*>(base + 1), 100, nullptr, nullptr), tut::Unsupported);
    }
}

TEST_CASE("reduction/09: n > 2^30 is refused", "[baseline]") { check_all_refuse_too_large(); }
