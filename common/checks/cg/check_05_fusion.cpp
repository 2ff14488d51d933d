// Checks for cg/05_fusion: our SpMV + three fused kernels (the TODO: the fused x, r, z update, its two dots and beta).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"

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
