// Checks for jor/04_fused: the fused sweep (the TODO: block_maxima_to_slot, the block's max |dx| and max |x|
// added to the sweep's slot with one atomicMax per value).
// Shared by the exercise (lessons/) and the solution (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"

using namespace jor_checks;

namespace {
// The variants the lesson must have, by name, with their element types and stopping rules.
const std::vector<Required> kRequired{{"fused"}};
}  // namespace

TEST_CASE("jor/04_fused: solves N = 1 ... 8192 in float and double within the error bound, in the CPU's "
          "iterations",
          "[exercise]") {
    check_all_solve(kRequired);
}

TEST_CASE("jor/04_fused: reports a diverging system as not converged at the iteration limit", "[exercise]") {
    check_all_diverge(kRequired);
}

TEST_CASE("jor/04_fused: refuses bad options, bad systems and sizes beyond device memory", "[baseline]") {
    check_all_refuse(kRequired);
}
