// Checks for jor/07_mixed_precision: precision (the TODO: row_sum, a warp's row sum with A read as S and the
// products and sums in T).
// Shared by the exercise (lessons/) and the solution (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"

using namespace jor_checks;

TEST_CASE("jor/07_mixed_precision solves N = 1 ... 8192 in float and double within the error bound, in the CPU's "
          "iterations",
          "[exercise]") {
    check_all_solve();
}

TEST_CASE("jor/07_mixed_precision reports a diverging system as not converged at the iteration limit", "[exercise]") {
    check_all_diverge();
}

TEST_CASE("jor/07_mixed_precision refuses bad options, bad systems and sizes beyond device memory", "[baseline]") {
    check_all_refuse();
}
