// Checks for jor/04_fused: the fused sweep (the TODO: the update and the block's convergence values).
// Shared by the exercise (lessons/) and the solution (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"

using namespace jor_checks;

TEST_CASE("jor/04_fused solves N = 1 ... 8192 in float and double within the error bound, in the CPU's "
          "iterations",
          "[exercise]") {
    check_all_solve();
}

TEST_CASE("jor/04_fused reports a diverging system as not converged at the iteration limit", "[exercise]") {
    check_all_diverge();
}

TEST_CASE("jor/04_fused refuses bad options, bad systems and sizes beyond device memory", "[baseline]") {
    check_all_refuse();
}
