// Checks for reduction/10_cub (cub::DeviceReduce::Sum): every type, n = 0 .. 2^26, 2^30 once (double), refusal above 2^30.
#include "reduction_checks.hpp"

using namespace reduction_checks;

TEST_CASE("reduction/10: double sums match the compensated reference, n = 0 .. 2^26", "[exercise]") {
    check_all_sums<double>();
}

TEST_CASE("reduction/10: float sums are within the float error bound", "[exercise]") { check_all_sums<float>(); }

TEST_CASE("reduction/10: int sums are exact", "[exercise]") { check_all_sums<int>(); }

TEST_CASE("reduction/10: complex sums match, part by part", "[exercise]") { check_all_sums<cuDoubleComplex>(); }

TEST_CASE("reduction/10: the largest n, 2^30 doubles, by the first double variant", "[exercise]") {
    check_largest<double>();
}

TEST_CASE("reduction/10: CUB is run-to-run deterministic (same bits every run)", "[exercise]") {
    check_run_to_run_identical<double>(size_t(1) << 26, 5);
    check_run_to_run_identical<float>(size_t(1) << 26, 5);
    check_run_to_run_identical<cuDoubleComplex>(1000003, 5);
}

TEST_CASE("reduction/10: n > 2^30 is refused", "[baseline]") { check_all_refuse_too_large(); }
