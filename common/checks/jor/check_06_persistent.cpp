// Checks for jor/06_persistent: the persistent kernel (the TODO: the decision after the barrier).
// Shared by the exercise (lessons/) and the solution (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"

using namespace jor_checks;

namespace {
// The variants the lesson must have, by name, with their element types and stopping rules.
const std::vector<Required> kRequired{
    {"persistent"}, {"persistent + L2 window"}, {"persistent, alternating direction"}};
}  // namespace

TEST_CASE("jor/06_persistent: solves N = 1 ... 8192 in float and double within the error bound, in the CPU's "
          "iterations",
          "[exercise]") {
    check_all_solve(kRequired);
}

TEST_CASE("jor/06_persistent: reports a diverging system as not converged at the iteration limit", "[baseline]") {
    check_all_diverge(kRequired);
}

TEST_CASE("jor/06_persistent: refuses bad options, bad systems and sizes beyond device memory", "[baseline]") {
    check_all_refuse(kRequired);
}
