// Checks for jor/04_fused: the fused sweep (the TODO: block_maxima_to_slot, the block's max |dx| and max |x|
// added to the sweep's slot with one atomicMax per value).
// Shared by the exercise (lessons/) and the solution (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"
#include "perf_gate.hpp"

using namespace jor_checks;

namespace {
// The variants the lesson must have, by name, with their element types and stopping rules.
const std::vector<Required> kRequired{{"fused"}};
// Lesson 02's sweep, kept in the harness as a baseline (given, not the exercise).
const std::vector<Required> kBaseline{{"three launches"}};
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

TEST_CASE("jor/04_fused: the baseline 'three launches' (lesson 02's sweep) solves N = 1 ... 8192 in float and "
          "double in the CPU's iterations, reports a diverging system and refuses bad input",
          "[baseline]") {
    check_all_solve(kBaseline);
    check_all_diverge(kBaseline);
    check_all_refuse(kBaseline);
}

// Speed, the lesson's idea: 'fused' per sweep at N = 512, float, as a multiple of 'three launches'
// (lesson 02's sweep) in the same process (judge_against_variant(), jor_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "jor/04_fused: speed: 'fused' per sweep at N = 512, float, as a multiple of 'three launches', against this "
    "GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::Measurement m;
    m.measure = "x the three-launch variant's speed per iteration";
    m.size = "N = 512, float";
    m.hint = "Does one kernel per sweep compute the sums, update x and reduce the convergence values, without "
             "writing the sums out for another kernel?";
    judge_against_variant<float>(kSpeedCase, m, "fused", "three launches", 512);
}
