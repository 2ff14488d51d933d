// Checks for reduction/09_vectorized (vectorized loads with an unaligned head and a tail): every type, n = 0 .. 2^26, 2^30 once (double), refusal above 2^30.
#include "reduction_checks.hpp"
#include "perf_gate.hpp"

#include <cstdint>

using namespace reduction_checks;

// The variants these checks require, and the depth their sums are judged with: a
// grid-stride pass over vectors, then one atomic per block (atomic_per_block_depth,
// depth_rules.hpp; a vector's lanes, the head and the tail are within its allowance).
const Required kRequired{{"double", "double2", "double4_32a"},
                         {"float", "float2", "float4"},
                         {"int", "int2", "int4"},
                         {"complex", "complex x2"}};
const DepthRule kDepth = atomic_per_block_depth;

TEST_CASE("reduction/09_vectorized: double sums match the compensated reference, n = 0 .. 2^26", "[exercise]") {
    check_sums<double>(kRequired.f64, kDepth);
}

TEST_CASE("reduction/09_vectorized: float sums are within the float error bound", "[exercise]") {
    check_sums<float>(kRequired.f32, kDepth);
}

TEST_CASE("reduction/09_vectorized: int sums are exact", "[exercise]") { check_sums<int>(kRequired.i32, kDepth); }

TEST_CASE("reduction/09_vectorized: complex sums match, part by part", "[exercise]") {
    check_sums<cuDoubleComplex>(kRequired.c64, kDepth);
}

TEST_CASE("reduction/09_vectorized: the largest n, 2^30 doubles, by the headline double variant", "[exercise]") {
    check_largest<double>("double", kDepth);
}

// Vector loads: sizes that leave a tail (not multiples of 2 or 4), and starts that are
// not 16- or 32-byte aligned (a head), for every type.
const std::vector<size_t> kOddSizes{2, 3, 5, 6, 7, 1000003, (size_t(1) << 26) - 1};
const std::vector<size_t> kOffsets{1, 2, 3};

TEST_CASE("reduction/09_vectorized: sizes that are not multiples of the vector width", "[exercise]") {
    check_sums<double>(kRequired.f64, kDepth, kOddSizes);
    check_sums<float>(kRequired.f32, kDepth, kOddSizes);
    check_sums<int>(kRequired.i32, kDepth, kOddSizes);
    check_sums<cuDoubleComplex>(kRequired.c64, kDepth, kOddSizes);
}

TEST_CASE("reduction/09_vectorized: unaligned starts (in + 1, + 2, + 3) are handled", "[exercise]") {
    const std::vector<size_t> sizes{1, 2, 3, 4, 5, 31, 33, 1000003};
    check_sums<double>(kRequired.f64, kDepth, sizes, kOffsets);
    check_sums<float>(kRequired.f32, kDepth, sizes, kOffsets);
    check_sums<int>(kRequired.i32, kDepth, sizes, kOffsets);
    check_sums<cuDoubleComplex>(kRequired.c64, kDepth, sizes, kOffsets);
}

TEST_CASE("reduction/09_vectorized: a start that is not even element-aligned is refused", "[baseline]") {
    const char* base = reinterpret_cast<const char*>(dataset<double>().device.get());
    for (const std::string& name : kRequired.f64) {
        const Variant<double> v = variant_named<double>(name);
        INFO("variant '" << v.name << "' must refuse a pointer 1 byte past an element with tut::Unsupported");
        tut::reduction::Workspace workspace;
        REQUIRE_THROWS_AS(v.run(reinterpret_cast<const double*>(base + 1), 100, nullptr, workspace), tut::Unsupported);
    }
}

TEST_CASE("reduction/09_vectorized: n > 2^30 is refused", "[baseline]") { check_all_refuse_too_large(kRequired); }

// Speed, the lesson's idea: 'float4' sums 2^26 floats beside a device copy of 1 GiB
// (judge_sum_against_device_copy(), reduction_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "reduction/09_vectorized: speed: 'float4' summing 2^26 floats, as a share of a device copy's bandwidth, against "
    "this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cudaMemcpy D2D bandwidth";
    c.size = "n = 2^26 floats";
    c.previous_from = "reduction/08_warp_shuffle_atomic";
    c.hint = "Does the loop read 16-byte vectors from the first aligned element, with the head and the tail added "
             "one by one?";
    // 'float', one element per load (lesson 08's loop): the previous approach, timed when calibrating
    judge_sum_against_device_copy(c, "float4", size_t(1) << 26, "float");
}
