// Checks for reduction/01_interleaved_divergent (a tree per 256 elements, interleaved addressing, divergent branch): every type, n = 0 .. 2^26, 2^30 once (double), refusal above 2^30.
#include "reduction_checks.hpp"

using namespace reduction_checks;

TEST_CASE("reduction/01: double sums match the compensated reference, n = 0 .. 2^26", "[exercise]") {
    check_all_sums<double>();
}

TEST_CASE("reduction/01: float sums are within the float error bound", "[exercise]") { check_all_sums<float>(); }

TEST_CASE("reduction/01: int sums are exact", "[exercise]") { check_all_sums<int>(); }

TEST_CASE("reduction/01: complex sums match, part by part", "[exercise]") { check_all_sums<cuDoubleComplex>(); }

TEST_CASE("reduction/01: the largest n, 2^30 doubles, by the first double variant", "[exercise]") {
    check_largest<double>();
}

TEST_CASE("reduction/01: n > 2^30 is refused", "[baseline]") { check_all_refuse_too_large(); }
