// Checks for cg/09_streaming: the persistent kernel streaming the matrix from memory, each
// block's vectors on chip or in memory (the TODO: phase A's streaming SpMV, block_spmv; the
// small problems give it rows of 1 to 200 nonzeros with ragged ends within 16-byte quads,
// the larger ones many steps per warp for its loads issued a step ahead).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"
#include "perf_gate.hpp"

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

// Speed, the lesson's idea: 'vectors=on-chip' per iteration on the 2.1 M-row problem, against the bandwidth floor
// (judge_against_bandwidth_floor(), cg_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "cg/09_streaming: speed: 'vectors=on-chip' per iteration on the 2.1 M-row problem, as a share of the bandwidth "
    "floor, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::Measurement m;
    m.measure = "% of the bandwidth floor per iteration";
    m.size = "2.1 M-row problem";
    m.hint = "Does the SpMV read the matrix as aligned 16-byte quads marked read-once, and issue the next step's "
             "loads before this step's gathers of p, so that each thread keeps enough bytes in flight?";
    // 'vectors=memory': the previous approach, as the lesson keeps it, timed when calibrating
    judge_against_bandwidth_floor(kSpeedCase, m, "vectors=on-chip", "large", "vectors=memory");
}
