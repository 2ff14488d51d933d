/// @file cg_fused.hpp
/// @brief Lesson 05's fused kernels, shared by the lessons that build on it (05, 06, 07).
///
/// Lesson 05 runs one Jacobi-PCG iteration as three kernels of its own:
///   1. spmv_pq_alpha: q = A p with our SpMV, p.q as each row's q is made, and the last
///      block to finish computes alpha (here);
///   2. update_x_r_z:  x += alpha p, r -= alpha q, z = D^-1 r, r.z and r.r in one pass,
///      and the last block tests convergence and computes beta (lesson 05 has you write
///      it; finished, for lessons 06 and 07, in cg_fused_update.hpp);
///   3. update_p:      p = z + beta p (here).
/// The scalars of the iteration live in one Scalars struct in device memory. Lessons 06
/// and 07 replace update_p with a version that also tells the host (06) or the graph (07)
/// how the iteration ended.
///
/// The kernels are defined here, and static: each translation unit that includes this
/// header gets its own copy (a kernel of external linkage would be defined twice).
#pragma once

#include "cg.hpp"

#include <algorithm>
#include <cstdint>

namespace tut::cg::fused {

using tut::cg::kConverged;  // the status codes (tut/cg.hpp), for the lessons that use this namespace
using tut::cg::kNotPositiveDefinite;
using tut::cg::kRunning;

constexpr int kThreads = 256;    ///< threads per block of every fused kernel
constexpr int kBlocksPerSm = 8;  ///< resident blocks per SM the grids are sized for
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block_sum adds whole warps, at most 32 of them");

// The SpMV's __launch_bounds__ minimum: kBlocksPerSm where an SM holds 2048 threads
// (sm_80, sm_90, sm_100), the most that fit where it holds fewer (1536 threads on sm_86,
// sm_87, sm_89 and sm_120; 1024 on sm_75), since ptxas ignores a minimum it cannot meet,
// with a warning.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr int kSpmvMinBlocksPerSm = 1024 / kThreads;
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1200)
constexpr int kSpmvMinBlocksPerSm = 1536 / kThreads;
#else
constexpr int kSpmvMinBlocksPerSm = kBlocksPerSm;
#endif

/// Everything an iteration needs to know, in device memory. The dot products are
/// accumulated with atomicAdd into pq, rr and rz_new; the kernel that consumes each one
/// zeroes it for the next iteration.
struct Scalars {
    float pq, rr, rz, rz_new;           // dot products being accumulated / their results
    float alpha, beta;
    float bb, threshold;
    float rr_last;
    int iteration, status, converged_at;
    unsigned blocks_done;               // for the last-block pattern; back to 0 after each use
    int performed;                      // body runs of lesson 07's graph (its loop counter)
};

/// The sum of v over the 32 lanes of a warp, in every lane.
__device__ inline float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

/// Sums a and b over the block (two reductions for the price of one __syncthreads pair).
/// The results are valid in thread 0.
__device__ inline void block_sum(float& a, float& b) {
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
    }
}

/// Called by thread 0 of every block after its atomicAdds; true in exactly one block, the
/// last to get here, which then sees every block's contribution. The __threadfence
/// orders this block's atomicAdds before its count.
__device__ inline bool last_block(unsigned* blocks_done) {
    __threadfence();
    const unsigned ticket = atomicAdd(blocks_done, 1u);
    const bool last = ticket == gridDim.x - 1;
    if (last) *blocks_done = 0;  // everyone has counted: reset for the next use
    return last;
}

/// Before the loop: x = 0, r = b, z = D^-1 r, p = z, r.z and r.r; the last block sets the
/// threshold. *s must be zero.
static __global__ void start(int n, const float* __restrict__ b, const float* __restrict__ dinv, float* __restrict__ x,
                      float* __restrict__ r, float* __restrict__ z, float* __restrict__ p, Scalars* s, float tol2) {
    float rz = 0.0f, rr = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float ri = b[i], zi = dinv[i] * ri;
        x[i] = 0.0f;
        r[i] = ri;
        z[i] = zi;
        p[i] = zi;
        rz += ri * zi;
        rr += ri * ri;
    }
    block_sum(rz, rr);
    if (threadIdx.x == 0) {
        atomicAdd(&s->rz, rz);
        atomicAdd(&s->rr, rr);
        if (last_block(&s->blocks_done)) {
            const float bb = __ldcg(&s->rr);
            s->bb = s->rr_last = bb;
            s->threshold = tol2 * bb;
            s->status = bb <= s->threshold ? kConverged : kRunning;
            s->converged_at = s->status == kConverged ? 0 : -1;
            s->rr = 0.0f;
        }
    }
}

/// q = A p with our own CSR SpMV, p.q in the same pass, and the last block computes alpha
/// (0 once the solve is over) and flags p.q <= 0. A sub-warp of kLanes lanes takes a row:
/// lane l adds nonzeros l, l + kLanes, ..., loading kUnroll of them before using any, so
/// that independent loads are in flight together. Whole warps loop together (the width-
/// kLanes shuffles need all 32 lanes). The matrix is read through the read-only path
/// (__ldg): it does not change during the kernel.
constexpr int kLanes = 8, kUnroll = 4;
static_assert(32 % kLanes == 0, "a row's sub-warp of kLanes lanes must not straddle two warps");

static __global__ void __launch_bounds__(kThreads, kSpmvMinBlocksPerSm)
    spmv_pq_alpha(tut::cg::DeviceCsr A, const float* __restrict__ p, float* __restrict__ q, Scalars* s) {
    const int tid = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    const int lane = tid % kLanes, groups = threads / kLanes;
    float pq = 0.0f, unused = 0.0f;
    for (int row = tid / kLanes, first = (tid / 32) * (32 / kLanes); first < A.n; row += groups, first += groups) {
        int begin = 0, end = 0;
        if (row < A.n) {
            begin = __ldg(A.row_ptr + row);
            end = __ldg(A.row_ptr + row + 1);
        }
        float sum = 0.0f;
        for (int base = begin + lane; base < end; base += kLanes * kUnroll) {
            float value[kUnroll];
            int column[kUnroll];
#pragma unroll
            for (int j = 0; j < kUnroll; ++j) {
                const int k = base + j * kLanes;
                value[j] = k < end ? __ldg(A.values + k) : 0.0f;
                column[j] = k < end ? __ldg(A.col_idx + k) : 0;
            }
#pragma unroll
            for (int j = 0; j < kUnroll; ++j) sum += value[j] * p[column[j]];
        }
        for (int offset = kLanes / 2; offset > 0; offset >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, offset, kLanes);
        if (lane == 0 && row < A.n) {
            q[row] = sum;
            pq += p[row] * sum;
        }
    }
    block_sum(pq, unused);
    if (threadIdx.x == 0) {
        atomicAdd(&s->pq, pq);
        if (last_block(&s->blocks_done)) {
            const float total = __ldcg(&s->pq);
            s->pq = 0.0f;
            s->alpha = 0.0f;
            if (s->status == kRunning) {
                s->iteration++;
                if (total > 0.0f)
                    s->alpha = s->rz / total;
                else
                    s->status = kNotPositiveDefinite;  // also NaN
            }
        }
    }
}

/// p = z + beta p.
static __global__ void update_p(int n, const float* __restrict__ z, float* __restrict__ p, const Scalars* s) {
    const float beta = s->beta;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = z[i] + beta * p[i];
}

/// Grid sizes of the fused kernels for n rows: enough blocks to cover the rows (a row per
/// thread; a row per kLanes threads in the SpMV), at most kBlocksPerSm per SM.
struct FusedGrid {
    int blocks = 1;       ///< start, update_x_r_z, update_p
    int spmv_blocks = 1;  ///< spmv_pq_alpha
};

inline FusedGrid fused_grid(int n) {
    int device = 0, sms = 0;
    TUT_CUDA(cudaGetDevice(&device));
    TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    FusedGrid g;
    g.blocks = std::max(1, std::min((n + kThreads - 1) / kThreads, kBlocksPerSm * sms));
    g.spmv_blocks = std::max(1, std::min(int((int64_t(n) * kLanes + kThreads - 1) / kThreads), kBlocksPerSm * sms));
    return g;
}

/// How a solve ended, from the scalars copied back to the host after `iterations` loop
/// bodies.
inline SolveResult fused_result(const Scalars& h, int iterations) {
    return solve_result(outcome_of(h.status), iterations, h.converged_at, h.rr_last, h.bb);
}

}  // namespace tut::cg::fused
