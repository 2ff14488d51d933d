// CG lesson 8 (beyond the story): one persistent cooperative kernel runs the whole solve,
// with grid-wide barriers (cooperative_groups::this_grid().sync()) where lessons 5-7
// ended a kernel, and, when the problem fits, with all of its data kept on chip.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/cg/08_persistent/persistent.cu -o persistent
// Run:  ./persistent --problem both     (--help for options; --path, --blocks-per-sm to tune)
//
// A kernel boundary is a grid-wide barrier plus a launch: every block of the next kernel
// must wait for every block of the last. With all blocks resident at once (a cooperative
// launch guarantees it, or refuses), a barrier inside one kernel does the first job
// without the second. Every thread computes alpha, beta and the stopping decision itself,
// from the same global sums read after the same barrier, so all blocks agree and leave
// the loop at the same iteration (a block that left early would leave the others waiting
// forever).
//
// A kernel that never ends can also keep its data where it is. Two paths:
//
// resident_cg (the matrix fits the grid: one block per SM, one tile of at most 512 rows
// and 8192 nonzeros per block): thread t of block b owns row b * tile_rows + t for the
// whole solve. The block's nonzeros sit in its threads' registers (16 each: 128
// registers per thread, which is why one block of 512 per SM), the row's x, r, z, p, q
// and 1/a_ii too. Memory sees only what other blocks must gather: z and p. Per iteration:
//   A. q = A (z + beta p_old), gathered; p = z + beta p; p.q          -> barrier
//   B. alpha; x, r, z in registers; z stored for the gathers; r.z, r.r -> barrier
//   then: stop, or beta = r.z / r.z_old and go round.
// (Forming p where the SpMV gathers it saves the barrier a separate "p = z + beta p"
// phase would need; p is double-buffered, since blocks gather p_old while others write p.)
//
// streaming_cg (any size): lesson 5's three kernels as three phases, the matrix streamed
// from memory every iteration:
//   A. q = A p, p.q                                                     -> barrier
//   B. alpha; x += alpha p; r -= alpha q; z = D^-1 r; r.z and r.r       -> barrier
//   C. stop?; beta; p = z + beta p                                      -> barrier
// Each block owns one contiguous stretch of rows in all three phases, so the vectors only
// it reads can stay on chip: its p (others gather a copy from memory) and its q, then z,
// live in shared memory when the stretch has at most 8192 rows (a 2.1 M-row matrix on
// 132 SMs), and only x, r, 1/a_ii and the gathered p cross the memory bus.
// In phase A the block's warps sweep its stretch side by side, eight consecutive rows
// each, so that at any moment they gather p from the same few cache lines: the gathered
// p then stays in L1, whose room the on-chip vectors have shrunk.
// A cooperative grid must fit on the GPU at once: two blocks of 384 per SM, fewer than
// half the threads lesson 5 runs. So each thread must keep more loads in flight than its:
// the SpMV reads the matrix as aligned 16-byte quads, two rows per sub-warp at a time,
// and loads the next step's quads before it gathers for this one (384 threads, not 512,
// leave it the 80 registers that takes; at 64 it spills). Phases B and C move float4s.
// The row pointers, read again every iteration, are kept in L2 by an access-policy
// window; the nonzeros, read once per iteration, stream past them.
#include "tut/cg.hpp"

#include <cooperative_groups.h>

#include <algorithm>

namespace coop = cooperative_groups;

namespace {

using tut::cg::Outcome;
using tut::cg::SolveResult;

constexpr int kBlock = 512;                              // resident path: threads per block
constexpr int kStreamBlock = 384;                        // streaming path: threads per block
constexpr int kNonzerosPerThread = 16;                   // resident path: registers per thread
constexpr int kTileNonzeros = kBlock * kNonzerosPerThread;  // 8192 per block
constexpr int kLanes = 8, kSubs = 32 / kLanes;           // streaming path: 8 lanes per row,
constexpr int kRowsPerSub = 2;                           // two rows per sub-warp at a time,
constexpr int kBlockRowsOnChip = 8192;                   // a block's p and q on chip up to 8192 rows
constexpr int kWarpStep = kSubs * kRowsPerSub;           // rows a warp takes at a time

enum Status : int { kRunning = 0, kConverged = 1, kNotPositiveDefinite = 2 };

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

struct Args {
    tut::cg::DeviceCsr A;
    const float* b;
    const float* dinv;
    float *x, *r, *z, *q;          // not __restrict__ and not const: other blocks write them
    float *p, *p_next;             // the resident path swaps them every iteration
    State* state;
    double tol2;
    int max_iterations;
    int tile_rows;                 // resident path
    int on_chip;                   // streaming path: each block's p and q/z in shared memory
};

// Every block must have finished the phase before any block starts the next one.
__device__ void grid_barrier(coop::grid_group& grid) { grid.sync(); }

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// Adds the block's sums of a and b to *a_total and *b_total (one atomic each per block).
__device__ void block_add2(float a, float b, double* a_total, double* b_total) {
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

// What the loop of either path ends with: the state, for the host.
__device__ void finish(State* st, int it, int status, int converged_at, double rr_last, double bb) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        st->iterations = it;
        st->status = status;
        st->converged_at = converged_at;
        st->rr_last = rr_last;
        st->bb = bb;
    }
}

// ---------------------------------------------------------------------------------------
// The resident path
// ---------------------------------------------------------------------------------------

__global__ void __launch_bounds__(kBlock, 1) resident_cg(Args a) {
    __shared__ float products[kTileNonzeros];
    coop::grid_group grid = coop::this_grid();
    const tut::cg::DeviceCsr& A = a.A;
    const int t = threadIdx.x;
    State* st = a.state;

    // This block's tile: rows first_row .. first_row + rows - 1, nonzeros begin .. end - 1
    // (host-checked: end - begin <= kTileNonzeros). Blocks past the last row own nothing
    // but still take part in every barrier.
    const int first_row = blockIdx.x * a.tile_rows;
    const int rows = max(0, min(a.tile_rows, A.n - first_row));
    const int begin = rows ? __ldg(A.row_ptr + first_row) : 0, end = rows ? __ldg(A.row_ptr + first_row + rows) : 0;
    const bool owner = t < rows;
    const int row = first_row + t;
    const int row_begin = owner ? __ldg(A.row_ptr + row) - begin : 0;
    const int row_end = owner ? __ldg(A.row_ptr + row + 1) - begin : 0;

    // The tile's nonzeros, loaded once for the whole solve: slot j of thread t holds
    // nonzero begin + j * kBlock + t (coalesced, and the products land in shared memory in
    // CSR order, so a row's products are contiguous there).
    float value[kNonzerosPerThread];
    int column[kNonzerosPerThread];
#pragma unroll
    for (int j = 0; j < kNonzerosPerThread; ++j) {
        const int k = begin + j * kBlock + t;
        value[j] = k < end ? __ldg(A.values + k) : 0.0f;
        column[j] = k < end ? __ldg(A.col_idx + k) : 0;
    }

    // The row's state, in registers: x = 0, r = b, z = D^-1 r, p_old = 0 (with beta = 0,
    // phase A then forms p = z).
    const float dinv = owner ? a.dinv[row] : 0.0f;
    float r = owner ? a.b[row] : 0.0f, x = 0.0f, z = dinv * r, p = 0.0f;
    if (owner) {
        a.z[row] = z;
        a.p[row] = 0.0f;
    }
    block_add2(r * z, r * r, &st->start.rz, &st->start.rr);
    grid_barrier(grid);

    const double bb = __ldcg(&st->start.rr), threshold = a.tol2 * bb;
    double rz_old = __ldcg(&st->start.rz), rr_last = bb;
    float beta = 0.0f;
    int status = bb <= threshold ? kConverged : kRunning;
    int it = 0, converged_at = status == kConverged ? 0 : -1;
    while (status == kRunning && it < a.max_iterations) {
        Sums* cur = &st->slot[it % 3];
        if (blockIdx.x == 0 && t == 0) st->slot[(it + 1) % 3] = Sums{0.0, 0.0, 0.0};
        // (a ? b : c, not an array indexed by it % 2: that would put the pointers in local memory.)
        const float* p_old = it % 2 ? a.p_next : a.p;
        float* p_new = it % 2 ? a.p : a.p_next;

        // A. Gather z + beta p_old where the matrix needs it; row sums from shared memory.
#pragma unroll
        for (int j = 0; j < kNonzerosPerThread; ++j)
            if (begin + j * kBlock + t < end) {
                const int c = column[j];
                products[j * kBlock + t] = value[j] * (a.z[c] + beta * p_old[c]);
            }
        __syncthreads();
        float q = 0.0f;
        for (int k = row_begin; k < row_end; ++k) q += products[k];
        p = z + beta * p;
        if (owner) p_new[row] = p;
        block_add2(p * q, 0.0f, &cur->pq, nullptr);  // (its __syncthreads also frees `products`)
        grid_barrier(grid);

        // B. alpha; x, r, z in registers; z stored for the next gathers.
        const double pq_total = __ldcg(&cur->pq);
        ++it;
        if (!(pq_total > 0.0)) {  // every thread sees the same sum: all leave together
            status = kNotPositiveDefinite;
            break;
        }
        const float alpha = float(rz_old / pq_total);
        x += alpha * p;
        r -= alpha * q;
        z = dinv * r;
        if (owner) a.z[row] = z;
        block_add2(r * z, r * r, &cur->rz, &cur->rr);
        grid_barrier(grid);

        // Stop, or beta for the next iteration's phase A.
        rr_last = __ldcg(&cur->rr);
        if (rr_last <= threshold) {
            status = kConverged;
            converged_at = it;
            break;
        }
        const double rz_new = __ldcg(&cur->rz);
        beta = float(rz_new / rz_old);
        rz_old = rz_new;
    }
    if (owner) a.x[row] = x;
    finish(st, it, status, converged_at, rr_last, bb);
}

// ---------------------------------------------------------------------------------------
// The streaming path
// ---------------------------------------------------------------------------------------

// Block b of B owns rows first .. first + count - 1 for the whole solve, in every phase:
// a contiguous stretch of whole kWarpStep-row units, so that its vectors can move as
// float4 and a warp's step never crosses into the next block's rows. Its rows are
// numbered 0 .. count - 1 locally; the local number indexes its on-chip p and q. (The
// host uses it too, to find the longest stretch.)
struct BlockRows {
    int first, count;
};
__host__ __device__ BlockRows block_rows(int n, int64_t block, int64_t blocks) {
    const int64_t units = (int64_t(n) + kWarpStep - 1) / kWarpStep, begin = kWarpStep * (units * block / blocks),
                  end = kWarpStep * (units * (block + 1) / blocks);
    return {int(begin), int((end < n ? end : n) - begin)};
}

// Nonzeros 4 quad .. 4 quad + 3 of the matrix: one 16-byte load of columns and one of
// values, marked "streaming" (__ldcs: used once, evict first) so that they do not push
// the gathered p out of L1. The last quad of the matrix may be partial.
__device__ void load_quad(const tut::cg::DeviceCsr& A, int quad, int4& column, float4& value) {
    const int k = 4 * quad;
    if (k + 4 <= A.nnz) {
        column = __ldcs(reinterpret_cast<const int4*>(A.col_idx) + quad);
        value = __ldcs(reinterpret_cast<const float4*>(A.values) + quad);
        return;
    }
    column = make_int4(A.col_idx[k], k + 1 < A.nnz ? A.col_idx[k + 1] : 0, k + 2 < A.nnz ? A.col_idx[k + 2] : 0, 0);
    value = make_float4(A.values[k], k + 1 < A.nnz ? A.values[k + 1] : 0.0f, k + 2 < A.nnz ? A.values[k + 2] : 0.0f,
                        0.0f);
}

// The products of a quad's nonzeros that belong to the row [row_begin, row_end).
__device__ float quad_dot(int quad, int row_begin, int row_end, int4 column, float4 value, const float* p) {
    const int k = 4 * quad;
    float sum = 0.0f;
    if (k >= row_begin && k < row_end) sum += value.x * p[column.x];
    if (k + 1 >= row_begin && k + 1 < row_end) sum += value.y * p[column.y];
    if (k + 2 >= row_begin && k + 2 < row_end) sum += value.z * p[column.z];
    if (k + 3 >= row_begin && k + 3 < row_end) sum += value.w * p[column.w];
    return sum;
}

// This block's rows of q = A p, into q_own[local]; returns the thread's share of p.q.
// The warps sweep the stretch side by side: at step t warp w takes the kWarpStep rows
// from local row t kBlockStep + w kWarpStep on, so the block works on kBlockStep
// consecutive rows at a time and its gathers share cache lines. (One stretch per warp
// would spread the block's gathers over 12 places at once, more lines than L1 holds
// beside the on-chip vectors.) Within a warp, a sub-warp of kLanes lanes takes
// kRowsPerSub rows (first + s + i kSubs for sub-warp s), and lane l loads the row's l-th
// aligned quad of nonzeros, masking the ones that belong to the neighbouring rows: 27
// nonzeros are 7 or 8 quads, one each. The loads run a step ahead: the quads of the next
// step, and the row bounds of the one after, are in flight while this step gathers p, so
// that a warp's loads never wait on its own arithmetic.
constexpr int kBlockStep = kStreamBlock / 32 * kWarpStep;
__device__ float block_spmv(const tut::cg::DeviceCsr& A, const float* p, const float* p_own, float* q_own,
                            const BlockRows& rows) {
    const int count = rows.count;
    const int lane32 = threadIdx.x % 32, lane = lane32 % kLanes, sub = lane32 / kLanes, warp = threadIdx.x / 32;
    auto load_bounds = [&](int first, int* begin, int* end) {  // first: a local row number
        const int first_row = first < count ? rows.first + first : 0;
#pragma unroll
        for (int i = 0; i < kRowsPerSub; ++i) {
            const bool mine = first + sub + i * kSubs < count;
            const int row = first_row + sub + i * kSubs;
            begin[i] = mine ? __ldg(A.row_ptr + row) : 0;
            end[i] = mine ? __ldg(A.row_ptr + row + 1) : 0;
        }
    };
    auto load_quads = [&](const int* begin, const int* end, int4* column, float4* value) {
#pragma unroll
        for (int i = 0; i < kRowsPerSub; ++i) {
            const int quad = begin[i] / 4 + lane;
            if (4 * quad < end[i]) load_quad(A, quad, column[i], value[i]);
            else column[i] = make_int4(0, 0, 0, 0), value[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
    };
    // In flight at the top of each step: the quads of this step and the bounds of the next.
    const int first_step = warp * kWarpStep;
    int next_begin[kRowsPerSub], next_end[kRowsPerSub], later_begin[kRowsPerSub], later_end[kRowsPerSub];
    int4 next_column[kRowsPerSub];
    float4 next_value[kRowsPerSub];
    load_bounds(first_step, next_begin, next_end);
    load_quads(next_begin, next_end, next_column, next_value);
    load_bounds(first_step + kBlockStep, later_begin, later_end);
    float pq = 0.0f;
    for (int first = first_step; first < count; first += kBlockStep) {
        int begin[kRowsPerSub], end[kRowsPerSub];
        int4 column[kRowsPerSub];
        float4 value[kRowsPerSub];
#pragma unroll
        for (int i = 0; i < kRowsPerSub; ++i) {
            begin[i] = next_begin[i], end[i] = next_end[i], column[i] = next_column[i], value[i] = next_value[i];
            next_begin[i] = later_begin[i], next_end[i] = later_end[i];
        }
        load_quads(next_begin, next_end, next_column, next_value);  // the next step's, before this one's gathers
        load_bounds(first + 2 * kBlockStep, later_begin, later_end);
        float sum[kRowsPerSub];
#pragma unroll
        for (int i = 0; i < kRowsPerSub; ++i) {
            const int first_quad = begin[i] / 4, quads = (end[i] + 3) / 4 - first_quad;
            sum[i] = lane < quads ? quad_dot(first_quad + lane, begin[i], end[i], column[i], value[i], p) : 0.0f;
            for (int j = lane + kLanes; j < quads; j += kLanes) {  // rows of more than kLanes quads
                int4 c;
                float4 v;
                load_quad(A, first_quad + j, c, v);
                sum[i] += quad_dot(first_quad + j, begin[i], end[i], c, v, p);
            }
        }
#pragma unroll
        for (int i = 0; i < kRowsPerSub; ++i) {
            for (int offset = kLanes / 2; offset > 0; offset >>= 1)
                sum[i] += __shfl_xor_sync(0xffffffffu, sum[i], offset, kLanes);
            const int local = first + sub + i * kSubs;
            if (lane == 0 && local < count) {
                q_own[local] = sum[i];
                pq += p_own[local] * sum[i];
            }
        }
    }
    return pq;
}

// Phase B on this block's rows, four at a time: x += alpha p; r -= alpha q; z = D^-1 r,
// z written over q. Returns the thread's (r.z, r.r).
__device__ float2 update_x_r_z(const Args& a, const BlockRows& rows, float alpha, const float* p_own, float* qz_own) {
    const int count = rows.count;
    float rz = 0.0f, rr = 0.0f;
    for (int i = 4 * int(threadIdx.x); i < count; i += 4 * kStreamBlock) {
        const int row = rows.first + i;
        if (i + 4 <= count) {
            const float4 pi = *reinterpret_cast<const float4*>(p_own + i), qi = *reinterpret_cast<float4*>(qz_own + i);
            const float4 di = *reinterpret_cast<const float4*>(a.dinv + row);
            float4 xi = *reinterpret_cast<float4*>(a.x + row), ri = *reinterpret_cast<float4*>(a.r + row), zi;
            xi.x += alpha * pi.x, xi.y += alpha * pi.y, xi.z += alpha * pi.z, xi.w += alpha * pi.w;
            ri.x -= alpha * qi.x, ri.y -= alpha * qi.y, ri.z -= alpha * qi.z, ri.w -= alpha * qi.w;
            zi.x = di.x * ri.x, zi.y = di.y * ri.y, zi.z = di.z * ri.z, zi.w = di.w * ri.w;
            *reinterpret_cast<float4*>(a.x + row) = xi;
            *reinterpret_cast<float4*>(a.r + row) = ri;
            *reinterpret_cast<float4*>(qz_own + i) = zi;
            rz += ri.x * zi.x + ri.y * zi.y + ri.z * zi.z + ri.w * zi.w;
            rr += ri.x * ri.x + ri.y * ri.y + ri.z * ri.z + ri.w * ri.w;
        } else {
            for (int k = i; k < count; ++k) {  // the matrix's last n % 4 rows
                const int row_k = row + (k - i);
                a.x[row_k] += alpha * p_own[k];
                const float rk = a.r[row_k] - alpha * qz_own[k], zk = a.dinv[row_k] * rk;
                a.r[row_k] = rk;
                qz_own[k] = zk;
                rz += rk * zk;
                rr += rk * rk;
            }
        }
    }
    return make_float2(rz, rr);
}

// Phase C on this block's rows: p = z + beta p, in p_own and in the p that the other
// blocks gather.
__device__ void update_p(const Args& a, const BlockRows& rows, float beta, float* p_own, const float* qz_own) {
    const int count = rows.count;
    for (int i = 4 * int(threadIdx.x); i < count; i += 4 * kStreamBlock) {
        const int row = rows.first + i;
        if (i + 4 <= count) {
            const float4 zi = *reinterpret_cast<const float4*>(qz_own + i);
            float4 pi = *reinterpret_cast<float4*>(p_own + i);
            pi.x = zi.x + beta * pi.x, pi.y = zi.y + beta * pi.y, pi.z = zi.z + beta * pi.z, pi.w = zi.w + beta * pi.w;
            *reinterpret_cast<float4*>(p_own + i) = pi;
            *reinterpret_cast<float4*>(a.p + row) = pi;
        } else {
            for (int k = i; k < count; ++k) a.p[row + (k - i)] = p_own[k] = qz_own[k] + beta * p_own[k];
        }
    }
}

__global__ void __launch_bounds__(kStreamBlock, 2) streaming_cg(Args a) {
    extern __shared__ float4 on_chip[];  // p_own, then q (later z), kBlockRowsOnChip each
    coop::grid_group grid = coop::this_grid();
    // The block's rows, in shared memory: with them in registers the whole iteration took
    // 6 us longer on the H200 (144 against 138 us; the compiler schedules the SpMV loop
    // differently, at its register limit; measured, not analysed further).
    __shared__ BlockRows rows;
    if (threadIdx.x == 0) rows = block_rows(a.A.n, blockIdx.x, gridDim.x);
    __syncthreads();
    State* st = a.state;

    // This block's p and q/z: in shared memory when the host found they fit, else in memory
    // (p_next and q, unused by this path otherwise, hold every block's in local order).
    float* p_own = a.on_chip ? reinterpret_cast<float*>(on_chip) : a.p_next + rows.first;
    float* qz_own = a.on_chip ? reinterpret_cast<float*>(on_chip) + kBlockRowsOnChip : a.q + rows.first;

    // x = 0, r = b, z = D^-1 b, p = z; r.z and r.r.
    float rz = 0.0f, rr = 0.0f;
    for (int local = int(threadIdx.x); local < rows.count; local += kStreamBlock) {
        const int i = rows.first + local;
        const float bi = a.b[i], zi = a.dinv[i] * bi;
        a.x[i] = 0.0f;
        a.r[i] = bi;
        a.p[i] = p_own[local] = zi;
        rz += bi * zi;
        rr += bi * bi;
    }
    block_add2(rz, rr, &st->start.rz, &st->start.rr);
    grid_barrier(grid);

    const double bb = __ldcg(&st->start.rr), threshold = a.tol2 * bb;
    double rz_old = __ldcg(&st->start.rz), rr_last = bb;
    int status = bb <= threshold ? kConverged : kRunning;
    int it = 0, converged_at = status == kConverged ? 0 : -1;
    while (status == kRunning && it < a.max_iterations) {
        Sums* cur = &st->slot[it % 3];
        if (blockIdx.x == 0 && threadIdx.x == 0) st->slot[(it + 1) % 3] = Sums{0.0, 0.0, 0.0};

        // A. q = A p and p.q.
        const float pq = block_spmv(a.A, a.p, p_own, qz_own, rows);
        block_add2(pq, 0.0f, &cur->pq, nullptr);
        grid_barrier(grid);

        // B. alpha, then x, r, z and the two dots in one pass.
        const double pq_total = __ldcg(&cur->pq);
        ++it;
        if (!(pq_total > 0.0)) {
            status = kNotPositiveDefinite;
            break;
        }
        const float alpha = float(rz_old / pq_total);
        const float2 sums = update_x_r_z(a, rows, alpha, p_own, qz_own);
        block_add2(sums.x, sums.y, &cur->rz, &cur->rr);
        grid_barrier(grid);

        // C. Stop, or beta and the new direction.
        rr_last = __ldcg(&cur->rr);
        if (rr_last <= threshold) {
            status = kConverged;
            converged_at = it;
            break;
        }
        const double rz_new = __ldcg(&cur->rz);
        const float beta = float(rz_new / rz_old);
        rz_old = rz_new;
        update_p(a, rows, beta, p_own, qz_own);
        grid_barrier(grid);
    }
    finish(st, it, status, converged_at, rr_last, bb);
}

// The streaming path's SpMV, alone, for the SpMV GB/s column: q = A p.
__global__ void __launch_bounds__(kStreamBlock, 2) spmv_kernel(tut::cg::DeviceCsr A, const float* p, float* q) {
    __shared__ BlockRows rows;
    if (threadIdx.x == 0) rows = block_rows(A.n, blockIdx.x, gridDim.x);
    __syncthreads();
    block_spmv(A, p, p + rows.first, q + rows.first, rows);
}

// ---------------------------------------------------------------------------------------
// The host side
// ---------------------------------------------------------------------------------------

// Options of this lesson.
std::string g_path_option = "auto";
std::string g_l2_window_option = "on";
int g_blocks_per_sm_option = 0;  // 0: as many as fit

// Largest number of nonzeros in any tile of `tile_rows` consecutive rows.
int largest_tile(const tut::cg::Csr& A, int tile_rows) {
    int largest = 0;
    for (int first = 0; first < A.rows; first += tile_rows) {
        const int last = std::min(A.rows, first + tile_rows);
        largest = std::max(largest, A.row_ptr[last] - A.row_ptr[first]);
    }
    return largest;
}

class PersistentSolver final : public tut::cg::Solver {
  public:
    PersistentSolver(const tut::cg::Csr& host_A, const tut::cg::DeviceMatrix& A, const std::vector<float>& dinv,
                     const tut::cg::SolveOptions& opt, const std::string& path)
        : A_(A.view()), opt_(opt), dinv_(dinv), r_(size_t(A_.n)), z_(size_t(A_.n)), q_(size_t(A_.n)),
          p_(size_t(A_.n)), p_next_(size_t(A_.n)), state_(1) {
        TUT_CUDA(cudaMemset(p_.get(), 0, p_.bytes()));  // spmv_once() may run before any solve
        int device = 0, cooperative = 0;
        TUT_CUDA(cudaGetDevice(&device));
        TUT_CUDA(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
        TUT_CUDA(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
        if (!cooperative) throw tut::Unsupported("this GPU does not support cooperative launches");

        // Resident if one tile per block fits: rows <= kBlock and nonzeros <= kTileNonzeros.
        const int resident_blocks = blocks_for(reinterpret_cast<const void*>(resident_cg), kBlock, 0);
        tile_rows_ = (A_.n + resident_blocks - 1) / resident_blocks;
        const bool fits = tile_rows_ <= kBlock && largest_tile(host_A, tile_rows_) <= kTileNonzeros;
        if (path == "resident" && !fits)
            throw tut::Unsupported("--path resident: the matrix does not fit " + std::to_string(resident_blocks) +
                                   " blocks x " + std::to_string(kBlock) + " rows x " + std::to_string(kTileNonzeros) +
                                   " nonzeros");
        resident_ = path == "resident" || (path == "auto" && fits);
        if (resident_) {
            kernel_ = reinterpret_cast<const void*>(resident_cg);
            block_ = kBlock;
            blocks_ = resident_blocks;
            return;
        }
        // Streaming: each block's p and q/z in shared memory if the GPU has room for them
        // and the block's stretch of rows is at most kBlockRowsOnChip long.
        kernel_ = reinterpret_cast<const void*>(streaming_cg);
        block_ = kStreamBlock;
        const int bytes = 2 * kBlockRowsOnChip * int(sizeof(float));
        int optin = 0;
        TUT_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        if (path != "streaming-global" && optin >= bytes) {
            TUT_CUDA(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
            const int blocks = blocks_for(kernel_, block_, bytes);
            int longest = 0;
            for (int b = 0; b < blocks; ++b) {
                longest = std::max(longest, block_rows(A_.n, b, blocks).count);
            }
            on_chip_ = longest <= kBlockRowsOnChip;
        }
        shared_bytes_ = on_chip_ ? bytes : 0;
        blocks_ = blocks_for(kernel_, block_, shared_bytes_);

        // Every iteration reads the whole matrix once, and the row pointers (8 MB of the
        // 454 MB at 2 M rows) with it. Marking the row pointers "persisting" sets aside that
        // much L2 for them, so that they come from L2 from the second iteration on while the
        // nonzeros stream past. (A window on the nonzeros themselves only evicts the vectors.)
        int max_persisting = 0, max_window = 0;
        TUT_CUDA(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device));
        TUT_CUDA(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device));
        if (g_l2_window_option == "on" && max_persisting > 0 && max_window > 0) {
            const size_t bytes_wanted = size_t(A_.n + 1) * sizeof(int);
            const size_t window = std::min(bytes_wanted, size_t(max_window));
            const size_t set_aside = std::min(window, size_t(max_persisting));
            TUT_CUDA(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_aside));
            l2_window_.base_ptr = const_cast<int*>(A_.row_ptr);
            l2_window_.num_bytes = window;
            l2_window_.hitRatio = float(double(set_aside) / double(window));  // the share that persists
            l2_window_.hitProp = cudaAccessPropertyPersisting;
            l2_window_.missProp = cudaAccessPropertyStreaming;
        }
    }

    ~PersistentSolver() override {
        if (l2_window_.num_bytes) {  // give the L2 set-aside back (no throwing from a destructor)
            (void)cudaCtxResetPersistingL2Cache();
            (void)cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
        }
    }
    PersistentSolver(const PersistentSolver&) = delete;
    PersistentSolver& operator=(const PersistentSolver&) = delete;

    SolveResult solve(const float* b, float* x) override {
        Args args{A_,          b,         dinv_.get(), x, r_.get(), z_.get(), q_.get(), p_.get(), p_next_.get(),
                  state_.get(), opt_.tolerance * opt_.tolerance, opt_.max_iterations, tile_rows_, on_chip_};
        void* params[] = {&args};
        if (!resident_ && reinterpret_cast<uintptr_t>(x) % 16)
            throw std::invalid_argument("PersistentSolver::solve: x must be 16-byte aligned (as cudaMalloc gives)");
        TUT_CUDA(cudaMemsetAsync(state_.get(), 0, sizeof(State)));
        // A cooperative launch either makes every block resident at once or fails: the
        // grid-wide barrier cannot deadlock on blocks that never got an SM.
        cudaLaunchAttribute attributes[2] = {};
        attributes[0].id = cudaLaunchAttributeCooperative;
        attributes[0].val.cooperative = 1;
        attributes[1].id = cudaLaunchAttributeAccessPolicyWindow;
        attributes[1].val.accessPolicyWindow = l2_window_;
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(blocks_);
        config.blockDim = dim3(block_);
        config.dynamicSmemBytes = shared_bytes_;
        config.attrs = attributes;
        config.numAttrs = l2_window_.num_bytes ? 2 : 1;
        TUT_CUDA(cudaLaunchKernelExC(&config, kernel_, params));
        State h{};
        TUT_CUDA(cudaMemcpy(&h, state_.get(), sizeof(State), cudaMemcpyDeviceToHost));  // the only wait
        SolveResult res;
        res.iterations = h.iterations;
        res.converged_at = h.converged_at;
        res.outcome = h.status == kConverged             ? Outcome::converged
                      : h.status == kNotPositiveDefinite ? Outcome::not_positive_definite
                                                         : Outcome::max_iterations;
        res.residual = h.bb > 0 ? std::sqrt(h.rr_last / h.bb) : 0.0;
        return res;
    }

    void spmv_once() override {
        spmv_kernel<<<blocks_, kStreamBlock>>>(A_, p_.get(), q_.get());
        TUT_LAUNCH("spmv_kernel");
    }

  private:
    // All blocks must be resident at once: at most what the occupancy calculator allows.
    int blocks_for(const void* kernel, int block, int shared_bytes) const {
        int fit = 0;
        TUT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, block, shared_bytes));
        if (fit < 1) throw tut::Unsupported("the persistent kernel does not fit on an SM");
        const int per_sm = g_blocks_per_sm_option ? g_blocks_per_sm_option : fit;
        if (per_sm > fit)
            throw tut::Unsupported("--blocks-per-sm " + std::to_string(per_sm) + ": only " + std::to_string(fit) +
                                   " blocks of the persistent kernel fit on an SM");
        return per_sm * sms_;
    }

    tut::cg::DeviceCsr A_;
    tut::cg::SolveOptions opt_;
    tut::DeviceBuffer<float> dinv_, r_, z_, q_, p_, p_next_;
    tut::DeviceBuffer<State> state_;
    int sms_ = 1, block_ = kBlock, blocks_ = 1, tile_rows_ = 1, on_chip_ = 0, shared_bytes_ = 0;
    cudaAccessPolicyWindow l2_window_ = {};  // streaming path: the row pointers kept in L2
    bool resident_ = false;
    const void* kernel_ = nullptr;
};

tut::cg::Factory persistent_factory(const std::string& path) {
    return [path](const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA, const tut::cg::SolveOptions& opt) {
        const std::vector<float> dinv = tut::cg::inverse_diagonal(A);
        return std::unique_ptr<tut::cg::Solver>(std::make_unique<PersistentSolver>(A, dA, dinv, opt, path));
    };
}

}  // namespace

namespace lesson {
// The lesson's variant: the path --path picks (auto: resident when the matrix fits).
std::vector<tut::cg::Variant> cg_variants() {
    return {{"persistent cooperative kernel", [](const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                                 const tut::cg::SolveOptions& opt) {
                 return persistent_factory(g_path_option)(A, dA, opt);
             }}};
}
// Each path forced, for the checks (the resident one refuses a matrix that does not fit).
std::vector<tut::cg::Variant> cg_path_variants() {
    return {{"resident path", persistent_factory("resident")},
            {"streaming path", persistent_factory("streaming")},
            {"streaming path, vectors in memory", persistent_factory("streaming-global")}};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"cg", "08_persistent", "one persistent cooperative kernel, its data kept on chip"};
    return tut::cg::lesson_main(argc, argv, info, lesson::cg_variants(), [](tut::Cli& cli) {
        cli.add_string("path", &g_path_option,
                       "auto: resident when the matrix fits on chip, else streaming; or force one "
                       "(streaming-global: each block's p and q in memory even when they would fit on chip)",
                       {"auto", "resident", "streaming", "streaming-global"});
        cli.add_string("l2-window", &g_l2_window_option,
                       "streaming path: keep the row pointers in L2 with an access-policy window", {"on", "off"});
        cli.add_int("blocks-per-sm", &g_blocks_per_sm_option,
                    "blocks per SM (512 threads on the resident path, 384 streaming; 0: as many as fit)", 0, 4);
    });
}
#endif
