// Checks for reduction/04_first_add_on_load (the first add during the load): every type, n = 0 .. 2^26, 2^30 once (double), refusal above 2^30.
#include "reduction_checks.hpp"

using namespace reduction_checks;

TEST_CASE("reduction/04: double sums match the compensated reference, n = 0 .. 2^26", "[exercise]") {
    check_all_sums<double>();
}

TEST_CASE("reduction/04: float sums are within the float error bound", "[exercise]") { check_all_sums<float>(); }

TEST_CASE("reduction/04: int sums are exact", "[exercise]") { check_all_sums<int>(); }

TEST_CASE("reduction/04: complex sums match, part by part", "[exercise]") { check_all_sums<cuDoubleComplex>(); }

TEST_CASE("reduction/04: the largest n, 2^30 doubles, by the first double variant", "[exercise]") {
    check_largest<double>();
}

TEST_CASE("reduction/04: n > 2^30 is refused", "[baseline]") { check_all_refuse_too_large(); }
