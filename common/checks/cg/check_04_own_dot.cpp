// Checks for cg/04_own_dot: our own dot-product kernel (the TODO: dot_kernel).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"
#include "perf_gate.hpp"

using namespace cg_checks;

// The lesson's variant: Jacobi PCG; the host looks at the status every k iterations.
const std::vector<Expected> kVariants{{"own dot", Preconditioner::jacobi, Stops::within_k}};

TEST_CASE("cg/04_own_dot: solves the default problem and small ones to tolerance (true residual on the CPU)",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    check_all_solve(kVariants, names);
}

TEST_CASE("cg/04_own_dot: solves the 2.1 M-row problem to tolerance", "[exercise]") {
    check_all_solve(kVariants, {"large"});
}

TEST_CASE("cg/04_own_dot: stops on a matrix that is not positive definite and at the iteration limit", "[exercise]") {
    check_all_stop(kVariants);
}

TEST_CASE("cg/04_own_dot: refuses what it cannot solve before launching anything", "[baseline]") {
    check_all_refuse(kVariants);
}

// Speed, the lesson's idea: 'own dot' per iteration on the default problem, against the bandwidth floor
// (judge_against_bandwidth_floor(), cg_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "cg/04_own_dot: speed: 'own dot' per iteration on the default problem, as a share of the bandwidth floor, "
    "against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::Measurement m;
    m.measure = "% of the bandwidth floor per iteration";
    m.size = "default problem (40000 rows)";
    m.previous_from = "cg/03_device_pointer_mode";
    m.hint = "Does each dot product run as one launch, every block adding its partial sum into the result once?";
    judge_against_bandwidth_floor(kSpeedCase, m, "own dot", "default");
}
