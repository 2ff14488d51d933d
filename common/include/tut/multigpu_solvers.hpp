/// @file multigpu_solvers.hpp
/// @brief The interface of the multigpu track's solver lessons (3: JOR, 4-6: CG): what a
/// distributed solve is given and what it returns, so that a lesson's main() and its
/// checks call it the same way. No CUDA kernels here.
///
/// A solve runs on every rank of a communicator (`rank` of `parts`, one GPU each) or on
/// one GPU alone (rank 0 of 1: the same lesson's single-GPU baseline, in the same run).
/// Each rank owns a block of rows (RowPartition) and returns, for the checks, the whole
/// solution (every rank's block, gathered) in double.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tut::mg {

/// Where a distributed solve runs.
struct Ranks {
    int rank = 0, parts = 1;
    void* nccl_comm = nullptr;  ///< an ncclComm_t over exactly these ranks (void*: no nccl.h in the interface)
    cudaStream_t stream = nullptr;
};

/// How a solve went, and what it took.
struct SolveOutcome {
    bool converged = false;
    int iterations = 0;
    double ms = 0;          ///< the whole solve on this rank (events on its stream, host waits included)
    double compute_ms = 0;  ///< of which the kernels of the iteration
    double comm_ms = 0;     ///< of which the communication (and the wait for the slowest rank)
    double residual = 0;    ///< the residual the iteration carries at the end (relative)
    std::vector<double> x;  ///< the whole solution (filled when asked for)
};

// ---------------------------------------------------------------------------------------
// Lesson 3: JOR
// ---------------------------------------------------------------------------------------

/// How the JOR lesson shares what each GPU computed in a sweep.
enum class JorSharing {
    two_collectives,  ///< ncclAllGather of x, then ncclAllReduce (max) of the stopping test's values
    one_collective,   ///< the stopping test's values ride in the all-gather, after each block of x
};
inline const char* jor_sharing_name(JorSharing s) {
    return s == JorSharing::two_collectives ? "allgather + allreduce" : "one allgather";
}

/// One distributed JOR solve of the JOR track's system (tut/jor.hpp: matrix 0 of `seed`).
struct JorCall {
    Ranks ranks;
    long long n = 0;
    JorSharing sharing = JorSharing::one_collective;
    double tolerance = 1e-6;
    int max_iterations = 1000;
    uint64_t seed = 2015;
    bool want_x = false;  ///< fill SolveOutcome::x
    int warps_per_row = 0;  ///< of the sweep: 1, 2 or 4; 0: chosen from this GPU's rows and the warps it holds at once
};

// ---------------------------------------------------------------------------------------
// Lessons 4-6: CG
// ---------------------------------------------------------------------------------------

/// The CG lessons' problems: the CG track's 27-point diffusion matrix (tut/cg_matrix.hpp).
struct CgProblem {
    int nx = 0, ny = 0, nz = 0;
    uint64_t seed = 2024;
    std::string label() const {
        return std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
    }
    long long rows() const { return 1ll * nx * ny * nz; }
};

/// One distributed Jacobi-preconditioned CG solve (float, b = A x*).
struct CgCall {
    Ranks ranks;
    CgProblem problem;
    std::string variant;        ///< the lesson's variant name
    double tolerance = 1e-6;    ///< ||r|| <= tol ||b||, as the CG track
    int max_iterations = 20000;
    bool compute_only = false;  ///< the same kernels with no communication, a fixed iteration count (timing)
    int fixed_iterations = 0;   ///< with compute_only: how many
    bool want_x = false;
};

}  // namespace tut::mg
