// Checks for reduction/10_cub (cub::DeviceReduce::Sum): every type, n = 0 .. 2^26, 2^30 once (double), refusal above 2^30.
#include "reduction_checks.hpp"

using namespace reduction_checks;

// The variants these checks require, and the depth their sums are judged with: CUB's
// design (cub_library_depth, depth_rules.hpp).
const Required kRequired{{"cub::DeviceReduce::Sum double"},
                         {"cub::DeviceReduce::Sum float"},
                         {"cub::DeviceReduce::Sum int"},
                         {"cub::DeviceReduce::Sum complex"}};
const DepthRule kDepth = cub_library_depth;

TEST_CASE("reduction/10_cub: double sums match the compensated reference, n = 0 .. 2^26", "[exercise]") {
    check_sums<double>(kRequired.f64, kDepth);
}

TEST_CASE("reduction/10_cub: float sums are within the float error bound", "[exercise]") {
    check_sums<float>(kRequired.f32, kDepth);
}

TEST_CASE("reduction/10_cub: int sums are exact", "[exercise]") { check_sums<int>(kRequired.i32, kDepth); }

TEST_CASE("reduction/10_cub: complex sums match, part by part", "[exercise]") {
    check_sums<cuDoubleComplex>(kRequired.c64, kDepth);
}

TEST_CASE("reduction/10_cub: the largest n, 2^30 doubles", "[exercise]") {
    check_largest<double>("cub::DeviceReduce::Sum double", kDepth);
}

TEST_CASE("reduction/10_cub: CUB is run-to-run deterministic (same bits every run)", "[exercise]") {
    check_run_to_run_identical<double>(kRequired.f64, kDepth, size_t(1) << 26, 5);
    check_run_to_run_identical<float>(kRequired.f32, kDepth, size_t(1) << 26, 5);
    check_run_to_run_identical<cuDoubleComplex>(kRequired.c64, kDepth, 1000003, 5);
}

TEST_CASE("reduction/10_cub: n > 2^30 is refused", "[baseline]") { check_all_refuse_too_large(kRequired); }
