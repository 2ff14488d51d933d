// Checks for jor/02_warp_rows: the warp GEMV (the TODO: the 16-byte loop and the warp sum).
// Shared by the exercise (lessons/) and the solution (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"

using namespace jor_checks;

namespace {
// The variants the lesson must have, by name, with their element types and stopping rules.
const std::vector<Required> kRequired{
    {"1 row per warp"}, {"2 rows per warp"}, {"4 rows per warp"}, {"1 row per warp, 4 loads in flight"}};
}  // namespace

TEST_CASE("jor/02_warp_rows: solves N = 1 ... 8192 in float and double within the error bound, in the CPU's "
          "iterations",
          "[exercise]") {
    check_all_solve(kRequired);
}

TEST_CASE("jor/02_warp_rows: reports a diverging system as not converged at the iteration limit", "[exercise]") {
    check_all_diverge(kRequired);
}

TEST_CASE("jor/02_warp_rows: refuses bad options, bad systems and sizes beyond device memory", "[baseline]") {
    check_all_refuse(kRequired);
}
