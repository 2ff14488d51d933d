// Checks for cg/02_jacobi: Jacobi PCG, host pointer mode (the TODO: the next direction from z = D^-1 r, with r.z in beta).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"

using namespace cg_checks;

// The lesson's variant: Jacobi PCG; the host looks at r.r every iteration.
const std::vector<Expected> kVariants{{"jacobi", Preconditioner::jacobi, Stops::at_convergence}};

TEST_CASE("cg/02_jacobi: solves the default problem and small ones to tolerance (true residual on the CPU)",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    check_all_solve(kVariants, names);
}

TEST_CASE("cg/02_jacobi: solves the 2.1 M-row problem to tolerance", "[exercise]") {
    check_all_solve(kVariants, {"large"});
}

TEST_CASE("cg/02_jacobi: stops on a matrix that is not positive definite and at the iteration limit", "[exercise]") {
    check_all_stop(kVariants);
}

TEST_CASE("cg/02_jacobi: refuses what it cannot solve before launching anything", "[baseline]") {
    check_all_refuse(kVariants);
}
