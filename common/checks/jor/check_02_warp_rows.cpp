// Checks for jor/02_warp_rows: the warp GEMV (the TODO: the 16-byte loop and the warp sum).
// Shared by the exercise (lessons/) and the solution (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"
#include "perf_gate.hpp"

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

// Speed, the lesson's idea: '1 row per warp' per sweep at N = 4096, float, against the bandwidth floor
// (judge_against_bandwidth_floor(), jor_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "jor/02_warp_rows: speed: '1 row per warp' per sweep at N = 4096, float, as a share of the bandwidth floor, "
    "against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::Measurement m;
    m.measure = "% of the bandwidth floor per iteration";
    m.size = "N = 4096, float";
    m.hint = "Does each warp keep several 16-byte loads of its row in flight (streaming loads), and add its lanes' "
             "sums with shuffles, not shared memory?";
    judge_against_bandwidth_floor<float>(kSpeedCase, m, "1 row per warp", 4096);
}
