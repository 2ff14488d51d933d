// Checks for jor/08_mixed_precision: precision (the TODO: row_sum, a warp's row sum with A read as S and the
// products and sums in T).
// Shared by the exercise (lessons/) and the solution (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"
#include "perf_gate.hpp"

using namespace jor_checks;

namespace {
// The variants the lesson must have, by name, with their element types and stopping rules.
const std::vector<Required> kRequired{{"float", Types::float_only},
                                      {"float, Kahan", Types::float_only},
                                      {"mixed", Types::double_only},  // float A, double everything else
                                      {"double", Types::double_only}};
}  // namespace

TEST_CASE("jor/08_mixed_precision: solves N = 1 ... 8192 in float and double within the error bound, in the CPU's "
          "iterations",
          "[exercise]") {
    check_all_solve(kRequired);
}

TEST_CASE("jor/08_mixed_precision: reports a diverging system as not converged at the iteration limit", "[exercise]") {
    check_all_diverge(kRequired);
}

// The lesson's claim: float A with double sums is as accurate as double. At the track's
// double tolerance (1e-8) the error bound is set by the tolerance (about 5e-8), and the
// diagonal dominance damps a float row sum's rounding to 1e-9 ... 4e-8 in x: sums done in
// float would pass there. At tol 1e-12 the bound is about 5e-12 (tolerance and the
// double rounding of N - 1 products): double sums meet it (about 1e-15 off), float sums
// miss it by three orders or never meet the stopping rule.
TEST_CASE("jor/08_mixed_precision: the mixed variant reaches double's accuracy (tol 1e-12, within the double error "
          "bound), as the double variant does",
          "[exercise]") {
    for (const char* name : {"mixed", "double"})
        check_solves<double>(Required{name, Types::double_only}, {2, 3, 127, 1000}, 1e-12);
}

TEST_CASE("jor/08_mixed_precision: refuses bad options, bad systems and sizes beyond device memory", "[baseline]") {
    check_all_refuse(kRequired);
}

// Speed, the lesson's idea: 'mixed' (A stored in float, the rest in double) against 'double' on
// matrix 0 of N = 8192, per sweep, timed by the host's clock in the same process
// (judge_against_variant(), jor_checks.hpp); the speed-up is judged against this GPU's threshold
// (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "jor/08_mixed_precision: speed: 'mixed' per sweep at N = 8192 as a multiple of 'double', against this GPU's "
    "gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::Measurement m;
    m.measure = "x the double variant's speed per iteration";
    m.size = "N = 8192, double";
    m.hint = "Does the row sum read A in its storage type (float for 'mixed') and convert each element as it is "
             "used, so that a sweep reads half the bytes of 'double'?";
    judge_against_variant<double>(kSpeedCase, m, "mixed", "double", 8192);
}
