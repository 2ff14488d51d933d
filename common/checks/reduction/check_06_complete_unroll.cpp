// Checks for reduction/06_complete_unroll (complete unrolling, template block sizes 128, 256, 512): every type, n = 0 .. 2^26, 2^30 once (double), refusal above 2^30.
#include "reduction_checks.hpp"
#include "perf_gate.hpp"

using namespace reduction_checks;

// The variants these checks require, and the depth their sums are judged with:
// passes of a tree per block, any block size (tree_passes_depth, depth_rules.hpp).
const Required kRequired{{"double", "double, threads=128", "double, threads=512"}, {"float"}, {"int"}, {"complex"}};
const DepthRule kDepth = tree_passes_depth;

TEST_CASE("reduction/06_complete_unroll: double sums match the compensated reference, n = 0 .. 2^26", "[exercise]") {
    check_sums<double>(kRequired.f64, kDepth);
}

TEST_CASE("reduction/06_complete_unroll: float sums are within the float error bound", "[exercise]") {
    check_sums<float>(kRequired.f32, kDepth);
}

TEST_CASE("reduction/06_complete_unroll: int sums are exact", "[exercise]") { check_sums<int>(kRequired.i32, kDepth); }

TEST_CASE("reduction/06_complete_unroll: complex sums match, part by part", "[exercise]") {
    check_sums<cuDoubleComplex>(kRequired.c64, kDepth);
}

TEST_CASE("reduction/06_complete_unroll: the largest n, 2^30 doubles, by the headline double variant", "[exercise]") {
    check_largest<double>("double", kDepth);
}

TEST_CASE("reduction/06_complete_unroll: n > 2^30 is refused", "[baseline]") { check_all_refuse_too_large(kRequired); }

// Speed, the lesson's idea: 'float' sums 2^26 floats beside a device copy of 1 GiB
// (judge_sum_against_device_copy(), reduction_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "reduction/06_complete_unroll: speed: 'float' summing 2^26 floats, as a share of a device copy's bandwidth, "
    "against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cudaMemcpy D2D bandwidth";
    c.size = "n = 2^26 floats";
    c.previous_from = "reduction/05_unroll_last_warp";
    c.hint = "Is every step of the tree decided at compile time (the block size a template parameter), so that no "
             "loop counter, compare or branch is left?";
    judge_sum_against_device_copy(c, "float", size_t(1) << 26);
}
