/// @file cg_persistent.hpp
/// @brief What lessons 08 and 09 share: one persistent cooperative kernel per solve.
///
/// Both lessons run a whole Jacobi-PCG solve in one kernel launch, with grid-wide barriers
/// between the phases of an iteration. Shared here: the solver's state in device memory
/// (the global sums, in three slots used in turn), the kernel's arguments, the block sums,
/// what the loop leaves for the host, and the host side of a cooperative launch. Each
/// lesson keeps its own kernel: lesson 08 holds the matrix in registers (resident_cg),
/// lesson 09 streams it from memory (streaming_cg).
///
/// The kernels' helpers are inline device functions, and the header defines no kernel, so
/// any number of translation units may include it.
#pragma once

#include "cg.hpp"
#include "cooperative.hpp"
#include "gpu.hpp"
#include "l2_window.hpp"

#include <cooperative_groups.h>

#include <cstdio>
#include <cstdlib>

namespace tut::cg::persistent {

using tut::cg::kConverged;  // the status codes (tut/cg.hpp), for the lessons that use this namespace
using tut::cg::kNotPositiveDefinite;
using tut::cg::kRunning;

// Global sums of one iteration, in three slots used in turn: the slot for iteration
// it + 1 is zeroed at the start of iteration it. Its last use was in iteration it - 2,
// whose readers all passed a barrier of iteration it - 1 before this thread got here.
// (Two would not do on the resident path: a slow block may still be reading iteration
// it - 1's r.z there.)
struct Sums {
    double pq, rz, rr;
};
struct State {
    Sums slot[3];
    Sums start;                    // r.z and r.r before the first iteration
    double rr_last, bb;
    int iterations, status, converged_at;
};

/// The kernel's one argument (set by name on the host; every field has a default).
struct Args {
    tut::cg::DeviceCsr A;
    const float* b = nullptr;
    const float* dinv = nullptr;
    float *x = nullptr, *r = nullptr, *z = nullptr, *q = nullptr;  // not __restrict__ and not const: other blocks write them
    float *p = nullptr, *p_next = nullptr;  // lesson 08 swaps them every iteration
    State* state = nullptr;
    double tol2 = 0.0;
    int max_iterations = 0;
    int tile_rows = 0;  // lesson 08: rows per block
    int on_chip = 0;    // lesson 09: each block's p and q/z in shared memory
};

/// The sum of v over the 32 lanes of a warp, in every lane.
__device__ inline float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

/// Adds the block's sums of a and b to *a_total and *b_total (one atomic each per block;
/// b_total may be null).
__device__ inline void block_add(float a, float b, double* a_total, double* b_total) {
    __shared__ float2 warp_sums[32];
    a = warp_sum(a);
    b = warp_sum(b);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = make_float2(a, b);
    __syncthreads();
    if (warp == 0) {
        const float2 w = lane < int(blockDim.x / 32) ? warp_sums[lane] : make_float2(0.0f, 0.0f);
        a = warp_sum(w.x);
        b = warp_sum(w.y);
        if (lane == 0) {
            atomicAdd(a_total, double(a));
            if (b_total) atomicAdd(b_total, double(b));
        }
    }
    __syncthreads();  // warp_sums is reused by the next call
}

/// What the loop ends with: the state, for the host.
__device__ inline void finish(State* st, int it, int status, int converged_at, double rr_last, double bb) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        st->iterations = it;
        st->status = status;
        st->converged_at = converged_at;
        st->rr_last = rr_last;
        st->bb = bb;
    }
}

// ---------------------------------------------------------------------------------------
// The host side
// ---------------------------------------------------------------------------------------

// The cooperative-launch checks live in gpu.hpp (the JOR track uses them too).
using tut::refuse_without_cooperative_launch;
using tut::require_cooperative_launch;

// The grid's size and the cooperative launch live in tut/cooperative.hpp (JOR's persistent
// lessons use them too).
using tut::resident_blocks_per_sm;
using tut::sm_count;

/// One solve: zeroes the state, launches kernel(args) cooperatively (every block resident
/// at once, or the launch fails: the grid-wide barrier cannot wait for a block that never
/// got an SM), with the L2 access-policy window `window` when it has bytes, copies the
/// state back (the only wait) and says how the solve ended.
inline SolveResult solve_cooperatively(void (*kernel)(Args), int blocks, int threads, int shared_bytes,
                                       const Args& args, const cudaAccessPolicyWindow& window) {
    TUT_CUDA(cudaMemsetAsync(args.state, 0, sizeof(State)));
    tut::launch_cooperative(kernel, blocks, threads, size_t(shared_bytes), window, args);
    State h{};
    TUT_CUDA(cudaMemcpy(&h, args.state, sizeof(State), cudaMemcpyDeviceToHost));  // the only wait
    return solve_result(outcome_of(h.status), h.iterations, h.converged_at, h.rr_last, h.bb);
}

}  // namespace tut::cg::persistent
