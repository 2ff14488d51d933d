// Checks for reduction/08_warp_shuffle_atomic (warp shuffles and atomics (per warp, per block, atomicCAS double add)): every type, n = 0 .. 2^26, 2^30 once (double), refusal above 2^30.
#include "reduction_checks.hpp"
#include "perf_gate.hpp"

using namespace reduction_checks;

// The variants these checks require, and the depth their sums are judged with: a
// grid-stride pass, then one level per atomic on the output, one per warp or one per
// block (atomic_per_warp_depth, atomic_per_block_depth in depth_rules.hpp).
const Required kPerWarp{{"double, atomic per warp"}, {"float, atomic per warp"}, {"int, atomic per warp"},
                        {"complex, atomic per warp"}};
const Required kPerBlock{{"double, atomic per block", "double, atomic per block, cas"},
                         {"float, atomic per block"},
                         {"int, atomic per block"},
                         {"complex, atomic per block"}};

template <class T>
void check_both() {
    check_sums<T>(kPerWarp.of<T>(), atomic_per_warp_depth);
    check_sums<T>(kPerBlock.of<T>(), atomic_per_block_depth);
}

TEST_CASE("reduction/08_warp_shuffle_atomic: double sums match the compensated reference, n = 0 .. 2^26",
          "[exercise]") {
    check_both<double>();
}

TEST_CASE("reduction/08_warp_shuffle_atomic: float sums are within the float error bound", "[exercise]") {
    check_both<float>();
}

TEST_CASE("reduction/08_warp_shuffle_atomic: int sums are exact", "[exercise]") { check_both<int>(); }

TEST_CASE("reduction/08_warp_shuffle_atomic: complex sums match, part by part", "[exercise]") {
    check_both<cuDoubleComplex>();
}

TEST_CASE("reduction/08_warp_shuffle_atomic: the largest n, 2^30 doubles, by the double atomic-per-warp variant",
          "[exercise]") {
    check_largest<double>("double, atomic per warp", atomic_per_warp_depth);
}

TEST_CASE("reduction/08_warp_shuffle_atomic: n > 2^30 is refused", "[baseline]") {
    check_all_refuse_too_large(kPerWarp);
    check_all_refuse_too_large(kPerBlock);
}

// Speed, the lesson's idea: 'float, atomic per block' sums 2^26 floats beside a device copy of 1 GiB
// (judge_sum_against_device_copy(), reduction_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "reduction/08_warp_shuffle_atomic: speed: 'float, atomic per block' summing 2^26 floats, as a share of a device "
    "copy's bandwidth, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cudaMemcpy D2D bandwidth";
    c.size = "n = 2^26 floats";
    c.previous_from = "reduction/07_grid_stride";
    c.hint = "Do the warps add their sums with shuffles and each block add its sum into the output with one atomic, "
             "instead of a second pass?";
    judge_sum_against_device_copy(c, "float, atomic per block", size_t(1) << 26);
}
