// Checks for cg/09_streaming: the persistent kernel streaming the matrix from memory, each
// block's vectors on chip or in memory (the TODO: phase B on the block's own rows).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"

using namespace cg_checks;

// The lesson's variants: Jacobi PCG, each block's p and q/z on chip or in memory; the
// kernel decides after every iteration.
const Expected kOnChip{"vectors=on-chip", Preconditioner::jacobi, Stops::at_convergence};
const Expected kInMemory{"vectors=memory", Preconditioner::jacobi, Stops::at_convergence};
const std::vector<Expected> kVariants{kOnChip, kInMemory};

TEST_CASE("cg/09_streaming: solves the default problem and small ones to tolerance, vectors on chip and in memory",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    check_all_solve(kVariants, names);
}

TEST_CASE("cg/09_streaming: solves the 2.1 M-row problem to tolerance (vectors on chip)", "[exercise]") {
    check_solves(kOnChip, "large");
}

TEST_CASE("cg/09_streaming: solves a problem larger than L2 with its vectors in memory", "[exercise]") {
    check_solves(kInMemory, "diffusion 64x64x96");
}

TEST_CASE("cg/09_streaming: stops on a matrix that is not positive definite and at the iteration limit", "[exercise]") {
    check_all_stop(kVariants);
}

TEST_CASE("cg/09_streaming: refuses what it cannot solve before launching anything", "[baseline]") {
    check_all_refuse(kVariants);
}
