// Checks for cg/07_graph_while: the loop as a graph with a conditional WHILE node (the TODO: the WHILE node, and the decision on the GPU that ends it).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"
#include "perf_gate.hpp"

using namespace cg_checks;

// The lesson's variants: the WHILE node (the GPU decides after every iteration), and the
// same kernels as a graph the host launches per iteration, looking every k.
const std::vector<Expected> kVariants{{"graph while", Preconditioner::jacobi, Stops::at_convergence},
                                      {"graph per iteration", Preconditioner::jacobi, Stops::within_k}};

TEST_CASE("cg/07_graph_while: solves the default problem and small ones to tolerance (true residual on the CPU)",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    check_all_solve(kVariants, names);
}

TEST_CASE("cg/07_graph_while: solves the 2.1 M-row problem to tolerance", "[exercise]") {
    check_all_solve(kVariants, {"large"});
}

TEST_CASE("cg/07_graph_while: stops on a matrix that is not positive definite and at the iteration limit",
          "[exercise]") {
    check_all_stop(kVariants);
}

TEST_CASE("cg/07_graph_while: refuses what it cannot solve before launching anything", "[baseline]") {
    check_all_refuse(kVariants);
}

// Speed, the lesson's idea: 'graph while' per iteration on the default problem, against the bandwidth floor
// (judge_against_bandwidth_floor(), cg_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "cg/07_graph_while: speed: 'graph while' per iteration on the default problem, as a share of the bandwidth "
    "floor, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::Measurement m;
    m.measure = "% of the bandwidth floor per iteration";
    m.size = "default problem (40000 rows)";
    m.previous_from = "cg/06_mapped_polling";
    m.hint = "Is the whole solve one graph launch, the WHILE node's body ending the loop on the GPU?";
    judge_against_bandwidth_floor(kSpeedCase, m, "graph while", "default");
}
