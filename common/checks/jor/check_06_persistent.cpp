// Checks for jor/06_persistent: the persistent kernel (the TODO: the decision after the barrier).
// Shared by the exercise (lessons/) and the solution (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"
#include "perf_gate.hpp"

using namespace jor_checks;

namespace {
// The variants the lesson must have, by name, with their element types and stopping rules.
const std::vector<Required> kRequired{{"persistent"}};
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

// Speed, the lesson's idea: 'persistent' per sweep at N = 512, float, against the bandwidth floor
// (judge_against_bandwidth_floor(), jor_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "jor/06_persistent: speed: 'persistent' per sweep at N = 512, float, as a share of the bandwidth floor, against "
    "this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::Measurement m;
    m.measure = "% of the bandwidth floor per iteration";
    m.size = "N = 512, float";
    m.previous_from = "jor/05_graph_loop";
    m.hint = "Does one cooperative kernel run every sweep, a grid barrier between sweeps and every block taking the "
             "same decision to stop?";
    judge_against_bandwidth_floor<float>(kSpeedCase, m, "persistent", 512);
}
