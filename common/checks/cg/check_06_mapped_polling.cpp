// Checks for cg/06_mapped_polling: residual polled in mapped host memory, three polling policies (the TODO: publish()).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"
#include "perf_gate.hpp"

using namespace cg_checks;

// The lesson's variants: the three polling policies (every-iteration waits for each
// iteration's stamp; every-k and run-ahead may run up to k - 1 past convergence).
const std::vector<Expected> kVariants{{"poll=every-iteration", Preconditioner::jacobi, Stops::at_convergence},
                                      {"poll=every-k", Preconditioner::jacobi, Stops::within_k},
                                      {"poll=run-ahead", Preconditioner::jacobi, Stops::within_k}};

TEST_CASE("cg/06_mapped_polling: solves the default problem and small ones to tolerance (true residual on the CPU)",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    check_all_solve(kVariants, names);
}

// The largest problem once (poll=every-k, the policy lesson 05 used); the other two
// policies on a problem that is still larger than L2, to keep the check fast.
TEST_CASE("cg/06_mapped_polling: solves the 2.1 M-row problem to tolerance (the other policies: a problem beyond L2)",
          "[exercise]") {
    for (const Expected& e : kVariants) check_solves(e, e.name == "poll=every-k" ? "large" : "diffusion 64x64x96");
}

TEST_CASE("cg/06_mapped_polling: stops on a matrix that is not positive definite and at the iteration limit",
          "[exercise]") {
    check_all_stop(kVariants);
}

TEST_CASE("cg/06_mapped_polling: refuses what it cannot solve before launching anything", "[baseline]") {
    check_all_refuse(kVariants);
}

// Speed, the lesson's idea: 'poll=every-k' per iteration on the default problem, against the bandwidth floor
// (judge_against_bandwidth_floor(), cg_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "cg/06_mapped_polling: speed: 'poll=every-k' per iteration on the default problem, as a share of the bandwidth "
    "floor, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::Measurement m;
    m.measure = "% of the bandwidth floor per iteration";
    m.size = "default problem (40000 rows)";
    m.previous_from = "cg/05_fusion";
    m.hint = "Does the host learn the residual from mapped memory, spinning on the stamp, without a cudaMemcpy?";
    judge_against_bandwidth_floor(kSpeedCase, m, "poll=every-k", "default");
}
