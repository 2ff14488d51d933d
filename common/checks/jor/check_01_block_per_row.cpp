// Checks for jor/01_block_per_row: the report's kernel (the TODO: the row's loop without the
// diagonal, and the shared-memory tree). Shared by the exercise (lessons/) and the solution
// (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"

using namespace jor_checks;

namespace {
// The variants the lesson must have, by name, with their element types and stopping rules.
const std::vector<Required> kRequired{{"restrict"},
                                      {"texture", Types::float_only},  // the report's texture: float A only
                                      {"min rule", Types::both, StopRule::min}};  // "restrict", the report's rule
}  // namespace

TEST_CASE("jor/01_block_per_row: solves N = 1 ... 8192 in float and double within the error bound, in the CPU's "
          "iterations",
          "[exercise]") {
    check_all_solve(kRequired);
}

TEST_CASE("jor/01_block_per_row: reports a diverging system as not converged at the iteration limit", "[exercise]") {
    check_all_diverge(kRequired);
}

TEST_CASE("jor/01_block_per_row: refuses bad options, bad systems and sizes beyond device memory", "[baseline]") {
    check_all_refuse(kRequired);
}

TEST_CASE("jor/01_block_per_row: the device generator gives the host generator's bits", "[baseline]") {
    for (int n : {1, 2, 17, 127, 300}) {
        check_generator<float>(n, 0);
        check_generator<double>(n, 3);
    }
}
