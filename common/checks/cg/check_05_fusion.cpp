// Checks for cg/05_fusion: our SpMV + three fused kernels (the TODO: the fused x, r, z update, its two dots and beta).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"
#include "perf_gate.hpp"

using namespace cg_checks;

// The lesson's variant: Jacobi PCG; the host looks at the status every k iterations.
const std::vector<Expected> kVariants{{"fused", Preconditioner::jacobi, Stops::within_k}};

TEST_CASE("cg/05_fusion: solves the default problem and small ones to tolerance (true residual on the CPU)",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    check_all_solve(kVariants, names);
}

TEST_CASE("cg/05_fusion: solves the 2.1 M-row problem to tolerance", "[exercise]") {
    check_all_solve(kVariants, {"large"});
}

TEST_CASE("cg/05_fusion: stops on a matrix that is not positive definite and at the iteration limit", "[exercise]") {
    check_all_stop(kVariants);
}

TEST_CASE("cg/05_fusion: refuses what it cannot solve before launching anything", "[baseline]") {
    check_all_refuse(kVariants);
}

// Speed, the lesson's idea: 'fused' per iteration on the default problem, against the bandwidth floor
// (judge_against_bandwidth_floor(), cg_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "cg/05_fusion: speed: 'fused' per iteration on the default problem, as a share of the bandwidth floor, against "
    "this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::Measurement m;
    m.measure = "% of the bandwidth floor per iteration";
    m.size = "default problem (40000 rows)";
    m.previous_from = "cg/04_own_dot";
    m.hint = "Does the fused update walk the rows once, with the dot products folded into the pass and the scalar "
             "step done by the last block, and no other launch?";
    judge_against_bandwidth_floor(kSpeedCase, m, "fused", "default");
}
