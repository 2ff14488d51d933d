// Checks for jor/05_graph_loop: the loop on the GPU (the TODO: the WHILE graph, and decide, which ends its loop).
// Shared by the exercise (lessons/) and the solution (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"
#include "perf_gate.hpp"

using namespace jor_checks;

namespace {
// The variants the lesson must have, by name, with their element types and stopping rules.
const std::vector<Required> kRequired{{"while graph"}, {"check every k"}};
// Lesson 04's loop, kept in the harness as a baseline (given, not the exercise).
const std::vector<Required> kBaseline{{"one look per sweep"}};
}  // namespace

TEST_CASE("jor/05_graph_loop: solves N = 1 ... 8192 in float and double within the error bound, in the CPU's "
          "iterations",
          "[exercise]") {
    check_all_solve(kRequired);
}

TEST_CASE("jor/05_graph_loop: reports a diverging system as not converged at the iteration limit", "[exercise]") {
    check_all_diverge(kRequired);
}

TEST_CASE("jor/05_graph_loop: refuses bad options, bad systems and sizes beyond device memory", "[baseline]") {
    check_all_refuse(kRequired);
}

TEST_CASE("jor/05_graph_loop: the baseline 'one look per sweep' (lesson 04's loop) solves N = 1 ... 8192 in float "
          "and double in the CPU's iterations, reports a diverging system and refuses bad input",
          "[baseline]") {
    check_all_solve(kBaseline);
    check_all_diverge(kBaseline);
    check_all_refuse(kBaseline);
}

// Speed, the lesson's idea: 'while graph' per sweep at N = 512, float, as a multiple of 'one look
// per sweep' (lesson 04's loop) in the same process (judge_against_variant(), jor_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "jor/05_graph_loop: speed: 'while graph' per sweep at N = 512, float, as a multiple of 'one look per sweep', "
    "against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::Measurement m;
    m.measure = "x the one-look-per-sweep variant's speed per iteration";
    m.size = "N = 512, float";
    m.previous_from = "jor/04_fused";
    m.hint = "Does the GPU decide when the loop ends (the WHILE node's condition set by the sweep), so that the "
             "host launches once and waits once per solve?";
    judge_against_variant<float>(kSpeedCase, m, "while graph", "one look per sweep", 512);
}
