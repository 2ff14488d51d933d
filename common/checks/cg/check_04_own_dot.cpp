// Checks for cg/04_own_dot: our own dot-product kernel (the TODO: dot_kernel).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"
#include "perf_gate.hpp"

using namespace cg_checks;

// The lesson's variant: Jacobi PCG; the host looks at the status every k iterations.
const Expected kOwnDot{"own dot", Preconditioner::jacobi, Stops::within_k};
const std::vector<Expected> kVariants{kOwnDot};
// The baseline the program keeps: lesson 03's iteration, cublasSdot in device pointer mode
// for every dot product. It is the yardstick of the speed case.
const Expected kCublasDot{"cuBLAS dot", Preconditioner::jacobi, Stops::within_k};

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
    check_all_refuse({kCublasDot, kOwnDot});
}

TEST_CASE("cg/04_own_dot: the cuBLAS-dot variant (lesson 03's iteration) solves the small problems and the default "
          "one, and stops",
          "[baseline]") {
    check_all_solve({kCublasDot}, kSmallProblems);
    check_all_stop({kCublasDot});  // solves the default problem first
}

// Speed, the lesson's idea: 'own dot' per iteration on the default problem, against the cuBLAS-dot variant
// (lesson 03's iteration) timed in the same process (judge_against_variant(), cg_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "cg/04_own_dot: speed: 'own dot' per iteration on the default problem, against the cuBLAS-dot variant in the "
    "same process, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::Measurement m;
    m.measure = "x the cuBLAS-dot variant's speed per iteration";
    m.size = "default problem (40000 rows)";
    m.previous_from = "cg/03_device_pointer_mode";
    m.hint = "Does each dot product run as one launch, every block adding its partial sum into the result once?";
    judge_against_variant(kSpeedCase, m, kOwnDot, kCublasDot, "default");
}
