// Checks for reduction/07_grid_stride (grid-stride loop over a full-GPU grid, two passes): every type, n = 0 .. 2^26, 2^30 once (double), refusal above 2^30.
#include "reduction_checks.hpp"
#include "perf_gate.hpp"

using namespace reduction_checks;

// The variants these checks require, and the depth their sums are judged with:
// a grid-stride pass, then a pass over the block sums (two_pass_depth, depth_rules.hpp).
const Required kRequired{{"double", "double, loads=1"}, {"float"}, {"int"}, {"complex"}};
const DepthRule kDepth = two_pass_depth;

TEST_CASE("reduction/07_grid_stride: double sums match the compensated reference, n = 0 .. 2^26", "[exercise]") {
    check_sums<double>(kRequired.f64, kDepth);
}

TEST_CASE("reduction/07_grid_stride: float sums are within the float error bound", "[exercise]") {
    check_sums<float>(kRequired.f32, kDepth);
}

TEST_CASE("reduction/07_grid_stride: int sums are exact", "[exercise]") { check_sums<int>(kRequired.i32, kDepth); }

TEST_CASE("reduction/07_grid_stride: complex sums match, part by part", "[exercise]") {
    check_sums<cuDoubleComplex>(kRequired.c64, kDepth);
}

TEST_CASE("reduction/07_grid_stride: the largest n, 2^30 doubles, by the headline double variant", "[exercise]") {
    check_largest<double>("double", kDepth);
}

TEST_CASE("reduction/07_grid_stride: n > 2^30 is refused", "[baseline]") { check_all_refuse_too_large(kRequired); }

// Speed, the lesson's idea: 'float' sums 2^26 floats beside a device copy of 1 GiB
// (judge_sum_against_device_copy(), reduction_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "reduction/07_grid_stride: speed: 'float' summing 2^26 floats, as a share of a device copy's bandwidth, against "
    "this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cudaMemcpy D2D bandwidth";
    c.size = "n = 2^26 floats";
    c.previous_from = "reduction/06_complete_unroll";
    c.hint = "Does a one-wave grid walk the whole input with a grid-stride loop, several independent loads in "
             "flight per thread, before any tree?";
    judge_sum_against_device_copy(c, "float", size_t(1) << 26);
}
