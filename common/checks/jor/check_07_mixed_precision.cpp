// Checks for jor/07_mixed_precision: precision (the TODO: row_sum, a warp's row sum with A read as S and the
// products and sums in T).
// Shared by the exercise (lessons/) and the solution (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"

using namespace jor_checks;

namespace {
// The variants the lesson must have, by name, with their element types and stopping rules.
const std::vector<Required> kRequired{{"float", Types::float_only},
                                      {"float, Kahan", Types::float_only},
                                      {"mixed", Types::double_only},  // float A, double everything else
                                      {"double", Types::double_only}};
}  // namespace

TEST_CASE("jor/07_mixed_precision: solves N = 1 ... 8192 in float and double within the error bound, in the CPU's "
          "iterations",
          "[exercise]") {
    check_all_solve(kRequired);
}

TEST_CASE("jor/07_mixed_precision: reports a diverging system as not converged at the iteration limit", "[exercise]") {
    check_all_diverge(kRequired);
}

TEST_CASE("jor/07_mixed_precision: refuses bad options, bad systems and sizes beyond device memory", "[baseline]") {
    check_all_refuse(kRequired);
}
