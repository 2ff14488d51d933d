// Checks for cg/01_sample: plain CG with cuBLAS + cuSPARSE in host pointer mode (the TODO: the step along p: alpha, x and r).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"

using namespace cg_checks;

// The lesson's variant: plain CG, as the sample; the host looks at r.r every iteration.
const std::vector<Expected> kVariants{{"host pointers", Preconditioner::none, Stops::at_convergence}};

TEST_CASE("cg/01_sample: solves the default problem and small ones to tolerance (true residual on the CPU)",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    check_all_solve(kVariants, names);
}

TEST_CASE("cg/01_sample: solves the 2.1 M-row problem to tolerance", "[exercise]") {
    check_all_solve(kVariants, {"large"});
}

TEST_CASE("cg/01_sample: stops on a matrix that is not positive definite and at the iteration limit", "[exercise]") {
    check_all_stop(kVariants);
}

TEST_CASE("cg/01_sample: refuses what it cannot solve before launching anything", "[baseline]") {
    check_all_refuse(kVariants);
}
