// multigpu/06_nvshmem: communication started by the GPU. Lessons 4 and 5 drive every
// iteration from the host: a dozen launches and three NCCL collectives, each a trip
// through a stream's queue. Here one persistent kernel per GPU runs the whole CG (the CG
// track's persistent-kernel idea, lesson cg/08, spread over several GPUs): the halo goes
// to the neighbours as NVSHMEM puts with a signal, issued by the kernel, while the
// interior rows are computed; the dot products are summed by every GPU putting its part
// into every other GPU's memory and waiting for their signals. No host in the loop.
// Between the communication, each GPU streams its rows as the CG track's streaming
// kernel does (cg/09): a persistent kernel is only worth having if its phases run at
// the bandwidth of separate kernels. Measured per iteration against lessons 4 and 5 (the
// tour puts them side by side).
//
// Build alone (from the repository root; needs MPI and NVSHMEM, relocatable device code):
//   nvcc -O3 -std=c++17 -arch=native -rdc=true -Icommon/include -I$NVSHMEM_HOME/include -ccbin mpicxx \
//        lessons/multigpu/06_nvshmem/nvshmem_cg.cu -L$NVSHMEM_HOME/lib -lnvshmem_host -lnvshmem_device -o nvshmem_cg
// Run:  mpirun -np 2 ./nvshmem_cg        (--small: a 24 x 24 x 48 grid; --blocks-per-sm to tune)
//
// In this file:
//   cg_persistent      the whole solve in one cooperative kernel per GPU: grid-wide
//                      barriers between phases, the host waits only for the end
//   spmv_run           q = A p on a run of rows: a stretch per block, 16-byte quads of
//                      nonzeros streamed a step ahead (cg/09's SpMV)
//   update_x_r_z, update_p  the vector phases, four rows at a time
//   send_halo          pack, then one put-with-signal per neighbour, issued by the GPU  (the exercise)
//   wait_halo          wait for every neighbour's signal                                 (the exercise)
//   sum_over_pes       a dot product's parts put into every GPU, summed in rank order
//   variant "nvshmem persistent"
//
// Sources: NVSHMEM documentation ("Signaling operations", "nvshmemx_collective_launch",
// "Initialization with a unique ID"); NVIDIA/multi-gpu-programming-models (its "nvshmem"
// Jacobi); cuda-samples conjugateGradientMultiDeviceCG (one cooperative launch per GPU).
#include "tut/buffer.hpp"
#include "tut/check.hpp"
#include "tut/cli.hpp"
#include "tut/device_facts.hpp"
#include "tut/lesson.hpp"
#include "tut/multigpu.hpp"
#include "tut/multigpu_cg.hpp"
#include "tut/multigpu_halo.hpp"
#include "tut/multigpu_mpi.hpp"
#include "tut/multigpu_nvshmem.hpp"
#include "tut/multigpu_solvers.hpp"
#include "tut/nvtx.hpp"
#include "tut/report.hpp"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lesson {

namespace cg = cooperative_groups;

// The launch shape and the SpMV are those of the CG track's streaming kernel (cg/09): at
// 2 M rows an iteration is a stream from DRAM, as fast as the bytes its warps keep in
// flight. Blocks of 384 threads, two per SM (so at most 80 registers a thread); 8 lanes
// per row, each lane one aligned quad of nonzeros, two rows per 8 lanes at a time.
constexpr int kThreads = 384;
constexpr int kBlocksPerSm = 2;                           // what __launch_bounds__ sizes registers for
constexpr int kWarp = 32;
constexpr int kLanes = 8, kSubs = kWarp / kLanes;         // 8 lanes per row, 4 such groups per warp
constexpr int kRowsPerSub = 2;                            // rows per group of 8 lanes at a time
constexpr int kWarpStep = kSubs * kRowsPerSub;            // rows a warp takes at a time
constexpr int kBlockStep = kThreads / kWarp * kWarpStep;  // rows a block takes at a time
constexpr int kMaxNeighbours = 16;
constexpr int kMaxRuns = 8;
static_assert(kThreads % kWarp == 0 && kThreads / kWarp <= kWarp, "block_add adds whole warps, at most 32 of them");

/// The GPUs this one exchanges halo with: their PE numbers and, for the destinations, where
/// this GPU's block starts in `send` and where it lands in the receiver's p.
struct Neighbours {
    int count;
    int pe[kMaxNeighbours];
    int offset[kMaxNeighbours + 1];
    long long place[kMaxNeighbours];
};

/// Rows as runs of consecutive rows: run j is rows first[j] .. first[j] + count[j] - 1. The
/// rows of a GPU's slab of the 27-point matrix that read no halo are one run, those that do
/// two (its first planes and its last); a few more where a slab is under two planes thick
/// (rows on the grid's edges read fewer neighbours). Runs, not a list: no index per row.
struct Runs {
    int n;
    int first[kMaxRuns], count[kMaxRuns];
};

/// Everything the persistent kernel works on (passed by value).
struct Args {
    int rows, nnz, me, npes;
    bool communicate;  // false: no puts, no waits (the compute-only timing; a single GPU)
    bool stop_test;    // false: run max_iterations whatever the residual (timing)
    int max_iterations;
    double tolerance;
    const int *row_ptr, *col;
    const float *val, *dinv, *b;
    float *x, *r, *z, *q;
    float *p, *send;                    // symmetric: p's halo is written by the neighbours' puts
    const int* send_rows;
    Neighbours to, from;
    Runs interior, boundary;            // rows that read no halo, and the others
    uint64_t *halo_sig, *dot_sig;       // symmetric, one per PE: the last value each PE signalled
    double *partial, *out;              // symmetric: [2 slots][npes][3] parts received, [2][3] this PE's
    double* acc;                        // device: [3 rounds][3] block sums, then [9..12) totals
    double* result;                     // device: iterations, converged, breakdown, r.r, b.b
};

template <class T>
__device__ T warp_sum(T v) {
    for (int d = kWarp / 2; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

/// Adds v over the block into *out (one atomic per block).
__device__ void block_add(double v, double* out) {
    __shared__ double partial[kThreads / kWarp];
    v = warp_sum(v);
    if (threadIdx.x % kWarp == 0) partial[threadIdx.x / kWarp] = v;
    __syncthreads();
    if (threadIdx.x < kWarp) {
        v = threadIdx.x < kThreads / kWarp ? partial[threadIdx.x] : 0.0;
        v = warp_sum(v);
        if (threadIdx.x == 0) atomicAdd(out, v);
    }
    __syncthreads();
}

/// Nonzeros 4 quad .. 4 quad + 3: one 16-byte load of columns and one of values (col and
/// val start 16-byte aligned), marked streaming (__ldcs: read once, evicted first, so that
/// they do not push the gathered p out of L1). The matrix's last quad may be partial.
__device__ void load_quad(const Args& a, int quad, int4& column, float4& value) {
    const int k = 4 * quad;
    if (k + 4 <= a.nnz) {
        column = __ldcs(reinterpret_cast<const int4*>(a.col) + quad);
        value = __ldcs(reinterpret_cast<const float4*>(a.val) + quad);
        return;
    }
    column = make_int4(a.col[k], k + 1 < a.nnz ? a.col[k + 1] : 0, k + 2 < a.nnz ? a.col[k + 2] : 0, 0);
    value = make_float4(a.val[k], k + 1 < a.nnz ? a.val[k + 1] : 0.0f, k + 2 < a.nnz ? a.val[k + 2] : 0.0f, 0.0f);
}

/// The products of a quad's nonzeros that belong to the row of nonzeros [begin, end).
/// p is gathered with plain loads, through L1: the grid barrier before every phase orders
/// what other SMs and, through the signal it follows, other GPUs wrote before these reads
/// (its fence discards L1's stale lines), and neighbouring rows share most of their lines.
__device__ float quad_dot(int quad, int begin, int end, int4 column, float4 value, const float* p) {
    const int k = 4 * quad;
    float sum = 0.0f;
    if (k >= begin && k < end) sum += value.x * p[column.x];
    if (k + 1 >= begin && k + 1 < end) sum += value.y * p[column.y];
    if (k + 2 >= begin && k + 2 < end) sum += value.z * p[column.z];
    if (k + 3 >= begin && k + 3 < end) sum += value.w * p[column.w];
    return sum;
}

/// q = A p for rows first .. first + n - 1, and this thread's part of p . q. Each block takes
/// one stretch of the run (whole kWarpStep-row units); its warps sweep the stretch side by
/// side, so that their gathers of p share L1 lines. A group of kLanes lanes takes
/// kRowsPerSub rows, lane l the row's l-th aligned quad of nonzeros (27 nonzeros: 7 or 8
/// quads), masking the neighbouring rows' nonzeros. The loads run a step ahead: the next
/// step's quads and the bounds of the step after are in flight while this step gathers p.
__device__ double spmv_run(const Args& a, int first_row, int n) {
    const long long units = (n + kWarpStep - 1) / kWarpStep;
    const int begin_local = int(kWarpStep * (units * blockIdx.x / gridDim.x));
    const int end_local = int(min(kWarpStep * (units * (blockIdx.x + 1) / gridDim.x), (long long)n));
    const int base = first_row + begin_local, count = end_local - begin_local;  // this block's stretch
    const int lane32 = threadIdx.x % kWarp, lane = lane32 % kLanes, sub = lane32 / kLanes, warp = threadIdx.x / kWarp;
    auto load_bounds = [&](int first, int* begin, int* end) {  // first: a row of the stretch, counted from 0
#pragma unroll
        for (int i = 0; i < kRowsPerSub; ++i) {
            const int local = first + sub + i * kSubs;
            const bool mine = local < count;
            begin[i] = mine ? __ldg(a.row_ptr + base + local) : 0;
            end[i] = mine ? __ldg(a.row_ptr + base + local + 1) : 0;
        }
    };
    auto load_quads = [&](const int* begin, const int* end, int4* column, float4* value) {
#pragma unroll
        for (int i = 0; i < kRowsPerSub; ++i) {
            const int quad = begin[i] / 4 + lane;
            if (4 * quad < end[i]) {
                load_quad(a, quad, column[i], value[i]);
            } else {
                column[i] = make_int4(0, 0, 0, 0);
                value[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            }
        }
    };
    const int first_step = warp * kWarpStep;
    int next_begin[kRowsPerSub], next_end[kRowsPerSub], later_begin[kRowsPerSub], later_end[kRowsPerSub];
    int4 next_column[kRowsPerSub];
    float4 next_value[kRowsPerSub];
    load_bounds(first_step, next_begin, next_end);
    load_quads(next_begin, next_end, next_column, next_value);
    load_bounds(first_step + kBlockStep, later_begin, later_end);
    double pq = 0.0;
    for (int first = first_step; first < count; first += kBlockStep) {  // the same steps for a whole warp
        int begin[kRowsPerSub], end[kRowsPerSub];
        int4 column[kRowsPerSub];
        float4 value[kRowsPerSub];
#pragma unroll
        for (int i = 0; i < kRowsPerSub; ++i) {
            begin[i] = next_begin[i];
            end[i] = next_end[i];
            column[i] = next_column[i];
            value[i] = next_value[i];
            next_begin[i] = later_begin[i];
            next_end[i] = later_end[i];
        }
        load_quads(next_begin, next_end, next_column, next_value);  // the next step's, before this one's gathers
        load_bounds(first + 2 * kBlockStep, later_begin, later_end);
        float sum[kRowsPerSub];
#pragma unroll
        for (int i = 0; i < kRowsPerSub; ++i) {
            const int first_quad = begin[i] / 4, quads = (end[i] + 3) / 4 - first_quad;
            sum[i] = lane < quads ? quad_dot(first_quad + lane, begin[i], end[i], column[i], value[i], a.p) : 0.0f;
            for (int j = lane + kLanes; j < quads; j += kLanes) {  // rows of more than kLanes quads
                int4 c;
                float4 v;
                load_quad(a, first_quad + j, c, v);
                sum[i] += quad_dot(first_quad + j, begin[i], end[i], c, v, a.p);
            }
        }
#pragma unroll
        for (int i = 0; i < kRowsPerSub; ++i) {
            for (int d = kLanes / 2; d > 0; d /= 2) sum[i] += __shfl_xor_sync(0xffffffffu, sum[i], d, kLanes);
            const int local = first + sub + i * kSubs;
            if (lane == 0 && local < count) {
                a.q[base + local] = sum[i];
                pq += double(a.p[base + local]) * double(sum[i]);
            }
        }
    }
    return pq;
}

/// q = A p for every row of `runs`; this thread's part of p . q.
__device__ double spmv_runs(const Args& a, const Runs& runs) {
    double pq = 0.0;
    for (int j = 0; j < runs.n; ++j) pq += spmv_run(a, runs.first[j], runs.count[j]);
    return pq;
}

/// Where the block sums of round `round` go: three slots, so that block 0 can zero one two
/// rounds ahead, with a grid barrier between the zeroing and the first add into it.
__device__ double* round_sums(const Args& a, unsigned long long round) { return a.acc + 3 * int(round % 3); }

/// The k block sums of this round (every block has added its part: call after a grid
/// barrier), summed over the PEs: every PE puts its k values into slot `round % 2` of
/// every PE's `partial`, with a signal, waits for every PE's signal, and adds the parts in
/// PE order, so every PE gets the same bits. Two slots suffice: a PE reuses a slot only
/// after every PE has delivered the round between, which each did after reading this slot.
/// Without communication every thread reads the block sums themselves: no barrier.
/// Returns the totals in every thread.
__device__ void sum_over_pes(const Args& a, int k, double* total, unsigned long long& round, cg::grid_group& grid) {
    const double* sums = round_sums(a, round);
    if (blockIdx.x == 0 && threadIdx.x < 3) round_sums(a, round + 2)[threadIdx.x] = 0.0;
    ++round;
    if (!(a.communicate && a.npes > 1)) {
        for (int j = 0; j < k; ++j) total[j] = __ldcg(sums + j);
        return;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const int slot = int(round % 2);
        double* mine = a.out + slot * 3;
        for (int j = 0; j < k; ++j) mine[j] = __ldcg(sums + j);
        nvshmem_fence();  // this round's signals arrive after the previous round's
        for (int q = 0; q < a.npes; ++q)
            nvshmem_double_put_signal(a.partial + (slot * a.npes + a.me) * 3, mine, 3, a.dot_sig + a.me, round,
                                      NVSHMEM_SIGNAL_SET, q);
        for (int q = 0; q < a.npes; ++q) nvshmem_signal_wait_until(a.dot_sig + q, NVSHMEM_CMP_GE, round);
        for (int j = 0; j < k; ++j) {
            double s = 0.0;
            for (int q = 0; q < a.npes; ++q) s += __ldcv(a.partial + (slot * a.npes + q) * 3 + j);
            a.acc[9 + j] = s;
        }
    }
    grid.sync();
    for (int j = 0; j < k; ++j) total[j] = __ldcg(a.acc + 9 + j);
}


/// This iteration's p, to the neighbours: every block packs its share of what they need
/// into `send`; after a grid barrier, block d puts destination d's part straight into its
/// place in that PE's p, with a signal (the iteration number) that arrives after the data.
__device__ void send_halo(const Args& a, int it, cg::grid_group& grid) {
    // TODO(exercise): send this iteration's halo of p to the neighbours, from the GPU.
    //   Afterwards every neighbour a.to.pe[d] must receive, at a.p + a.to.place[d] in its
    //   memory, the values p[send_rows[i]] for i in [a.to.offset[d], a.to.offset[d + 1]),
    //   and a signal in its a.halo_sig[a.me] saying "iteration it is here" (it + 1: a
    //   signal starts at 0).
    //   The constraint: every block of the grid runs this; the rows are scattered through
    //   p, and a put moves a contiguous range; the signal must not arrive before the data;
    //   blocks see each other's writes only after a grid barrier (grid.sync()).
    //   Hints: pack into a.send (symmetric memory) first, read p with __ldcg (each value
    //   once: no need to keep it in L1). Let block d put destination d's part: NVSHMEM's
    //   nvshmemx_float_put_signal_nbi_block (the block's threads share the copy;
    //   NVSHMEM_SIGNAL_SET). Non-blocking: what must happen before a.send is reused?
    (void)a;
    (void)it;
    (void)grid;
}

/// Until every neighbour's halo of this iteration has arrived; then every block may read
/// it. The putting blocks also complete their puts (send may be rewritten next iteration).
__device__ void wait_halo(const Args& a, int it, cg::grid_group& grid) {
    // TODO(exercise): return only when every neighbour a.from.pe[j] has signalled this
    //   iteration's halo (its a.halo_sig slot in this GPU's memory reached it + 1), and
    //   every block may then read it; the blocks that put this GPU's halo must also have
    //   completed their puts (a.send is rewritten next iteration).
    //   Hints: nvshmem_signal_wait_until (NVSHMEM_CMP_GE), nvshmem_quiet, and a grid barrier.
    //   One thread per neighbour can wait; every block must see the result.
    (void)a;
    (void)it;
    (void)grid;
}

/// Phase B on this GPU's rows, four at a time (16-byte moves: every vector starts 16-byte
/// aligned): x += alpha p; r -= alpha q; z = D^-1 r; this thread's parts of r.r and r.z.
/// p and q were written by other blocks (read after a grid barrier, once: __ldcg).
__device__ void update_x_r_z(const Args& a, float alpha, double& rr, double& rz) {
    const int tid = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    for (int i = tid; i < a.rows / 4; i += threads) {
        const float4 pi = __ldcg(reinterpret_cast<const float4*>(a.p) + i);
        const float4 qi = __ldcg(reinterpret_cast<const float4*>(a.q) + i);
        const float4 di = reinterpret_cast<const float4*>(a.dinv)[i];
        float4 xi = reinterpret_cast<float4*>(a.x)[i], ri = reinterpret_cast<float4*>(a.r)[i], zi;
        xi.x += alpha * pi.x;
        xi.y += alpha * pi.y;
        xi.z += alpha * pi.z;
        xi.w += alpha * pi.w;
        ri.x -= alpha * qi.x;
        ri.y -= alpha * qi.y;
        ri.z -= alpha * qi.z;
        ri.w -= alpha * qi.w;
        zi.x = di.x * ri.x;
        zi.y = di.y * ri.y;
        zi.z = di.z * ri.z;
        zi.w = di.w * ri.w;
        reinterpret_cast<float4*>(a.x)[i] = xi;
        reinterpret_cast<float4*>(a.r)[i] = ri;
        reinterpret_cast<float4*>(a.z)[i] = zi;
        rr += double(ri.x * ri.x + ri.y * ri.y + ri.z * ri.z + ri.w * ri.w);
        rz += double(ri.x * zi.x + ri.y * zi.y + ri.z * zi.z + ri.w * zi.w);
    }
    for (int i = a.rows / 4 * 4 + tid; i < a.rows; i += threads) {  // the last rows % 4
        a.x[i] += alpha * __ldcg(a.p + i);
        const float ri = a.r[i] - alpha * __ldcg(a.q + i), zi = a.dinv[i] * ri;
        a.r[i] = ri;
        a.z[i] = zi;
        rr += double(ri) * ri;
        rz += double(ri) * zi;
    }
}

/// Phase C: p = z + beta p, four rows at a time. Each thread rewrites the rows it updated
/// in phase B (the same indexing), so z needs no barrier between.
__device__ void update_p(const Args& a, float beta) {
    const int tid = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    for (int i = tid; i < a.rows / 4; i += threads) {
        const float4 zi = reinterpret_cast<const float4*>(a.z)[i];
        float4 pi = reinterpret_cast<float4*>(a.p)[i];
        pi.x = zi.x + beta * pi.x;
        pi.y = zi.y + beta * pi.y;
        pi.z = zi.z + beta * pi.z;
        pi.w = zi.w + beta * pi.w;
        reinterpret_cast<float4*>(a.p)[i] = pi;
    }
    for (int i = a.rows / 4 * 4 + tid; i < a.rows; i += threads) a.p[i] = a.z[i] + beta * a.p[i];
}

/// The whole Jacobi-preconditioned CG, in one cooperative launch per GPU. Per iteration:
/// the halo leaves, q = A p on the interior rows meanwhile, then on the boundary rows once
/// the halo is in; p . q; x, r, z with r . r and r . z; p. Three grid barriers on one GPU
/// (after the SpMV, the update and p), four more with communication (the pack, the
/// halo's arrival, and one after each sum over the PEs).
__global__ void __launch_bounds__(kThreads, kBlocksPerSm) cg_persistent(Args a) {
    cg::grid_group grid = cg::this_grid();
    const int tid = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    unsigned long long round = 0;
    double t[3];
    // x = 0, r = b, z = D^-1 r, p = z; r.r, r.z, b.b.
    double rr = 0.0, rz = 0.0, bb = 0.0;
    for (int i = tid; i < a.rows; i += threads) {
        const float bi = a.b[i], zi = a.dinv[i] * bi;
        a.x[i] = 0.0f;
        a.r[i] = bi;
        a.z[i] = zi;
        a.p[i] = zi;
        rr += double(bi) * bi;
        rz += double(bi) * zi;
        bb += double(bi) * bi;
    }
    block_add(rr, round_sums(a, round) + 0);
    block_add(rz, round_sums(a, round) + 1);
    block_add(bb, round_sums(a, round) + 2);
    grid.sync();
    sum_over_pes(a, 3, t, round, grid);
    rr = t[0];
    rz = t[1];
    const double threshold = a.tolerance * a.tolerance * t[2];
    int it = 0;
    bool converged = a.stop_test && rr <= threshold, breakdown = false;
    while (!converged && it < a.max_iterations) {
        const bool exchange = a.communicate && (a.to.count > 0 || a.from.count > 0);
        if (exchange) send_halo(a, it, grid);
        double pq = spmv_runs(a, a.interior);  // meanwhile, the rows that need no halo
        if (exchange) wait_halo(a, it, grid);
        pq += spmv_runs(a, a.boundary);
        block_add(pq, round_sums(a, round));
        grid.sync();
        sum_over_pes(a, 1, t, round, grid);
        ++it;
        if (a.stop_test && !(t[0] > 0.0)) {
            breakdown = true;
            break;
        }
        const float alpha = float(rz / t[0]);
        double rr_part = 0.0, rz_part = 0.0;
        update_x_r_z(a, alpha, rr_part, rz_part);
        block_add(rr_part, round_sums(a, round) + 0);
        block_add(rz_part, round_sums(a, round) + 1);
        grid.sync();
        sum_over_pes(a, 2, t, round, grid);
        rr = t[0];
        if (a.stop_test && rr <= threshold) {
            converged = true;
            break;
        }
        const float beta = float(t[1] / rz);
        rz = t[1];
        update_p(a, beta);
        grid.sync();  // p is whole before the next pack and SpMV read it
    }
    if (tid == 0) {
        a.result[0] = it;
        a.result[1] = converged;
        a.result[2] = breakdown;
        a.result[3] = rr;
        a.result[4] = t[2];
    }
}

}  // namespace lesson

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {

/// NVSHMEM for the whole process: started once, collectively (start_nvshmem()), and
/// stopped collectively by stop_nvshmem() before MPI_Finalize. A plain pointer, never
/// destroyed by a static destructor: at exit NVSHMEM's own state may already be gone.
tut::mg::Nvshmem*& shmem() {
    static tut::mg::Nvshmem* s = nullptr;
    return s;
}

/// `rows` (ascending) as runs of consecutive rows; false when they need more than kMaxRuns.
bool as_runs(const std::vector<int>& rows, lesson::Runs& runs) {
    runs = lesson::Runs{};
    for (size_t i = 0; i < rows.size(); ++i) {
        if (i > 0 && rows[i] == rows[i - 1] + 1) {
            ++runs.count[runs.n - 1];
            continue;
        }
        if (runs.n == lesson::kMaxRuns) return false;
        runs.first[runs.n] = rows[i];
        runs.count[runs.n] = 1;
        ++runs.n;
    }
    return true;
}

/// One GPU's share of the solve (tut::mg::CgShare: its rows, the halo plan, the matrix,
/// 1 / A_ii and b), its vectors, the symmetric buffers and the persistent kernel's arguments.
struct CgShmem : tut::mg::CgShare {
    tut::DeviceBuffer<int> send_rows;
    tut::DeviceBuffer<float> x, r, z, q;
    tut::DeviceBuffer<double> acc, result;
    lesson::Args args{};
    int grid = 0;
    cudaEvent_t start, stop;

    /// blocks_per_sm: of the persistent kernel, 0 for as many as fit.
    explicit CgShmem(const tut::mg::CgCall& c, int blocks_per_sm = 0) : CgShare(c) {
        const tut::mg::World* world = tut::mg::detail::current_world();
        const bool distributed = c.ranks.parts > 1;
        long long p_size = plan.local_size(), send_size = static_cast<long long>(plan.send_rows.size());
        std::vector<long long> place_from(size_t(c.ranks.parts), -1);
        if (distributed) {
            // Where each neighbour wants this rank's block: its recv_place for this rank.
            std::vector<long long> place_to(size_t(world->size), -1);
            for (size_t i = 0; i < plan.recv_ranks.size(); ++i) place_to[plan.recv_ranks[i]] = plan.recv_place(i);
            TUT_MPI(MPI_Alltoall(place_to.data(), 1, MPI_LONG_LONG, place_from.data(), 1, MPI_LONG_LONG, world->comm));
            // Symmetric objects have one size on every PE: the largest.
            p_size = static_cast<long long>(tut::mg::max_over_ranks(*world, double(p_size)));
            send_size = static_cast<long long>(tut::mg::max_over_ranks(*world, double(send_size)));
        }
        if (plan.send_ranks.size() > size_t(lesson::kMaxNeighbours) || plan.recv_ranks.size() > size_t(lesson::kMaxNeighbours))
            throw tut::Unsupported("more than 16 neighbours");
        // The same verdict on every rank: the symmetric allocations below are collective.
        double runs_fit = as_runs(plan.interior_rows, args.interior) && as_runs(plan.boundary_rows, args.boundary);
        if (distributed) runs_fit = tut::mg::min_over_ranks(*world, runs_fit);
        if (!runs_fit)
            throw tut::Unsupported("a GPU's interior or boundary rows are more than " +
                                   std::to_string(lesson::kMaxRuns) + " runs of consecutive rows");
        for (auto* v : {&x, &r, &z, &q}) *v = tut::DeviceBuffer<float>(size_t(std::max(rows, 1)));
        send_rows = tut::DeviceBuffer<int>(plan.send_rows);
        acc = tut::DeviceBuffer<double>(12);
        result = tut::DeviceBuffer<double>(5);
        TUT_CUDA(cudaMemset(acc.get(), 0, acc.bytes()));

        // Symmetric memory, in the same order and sizes on every PE of this solve.
        tut::mg::Nvshmem& sh = *shmem();
        sh.reset();
        const int npes = distributed ? c.ranks.parts : 1;
        args.p = sh.take<float>(size_t(std::max<long long>(p_size, 1)));
        args.send = sh.take<float>(size_t(std::max<long long>(send_size, 1)));
        args.halo_sig = sh.take<uint64_t>(size_t(c.ranks.parts));
        args.dot_sig = sh.take<uint64_t>(size_t(c.ranks.parts));
        args.partial = sh.take<double>(size_t(2 * c.ranks.parts * 3));
        args.out = sh.take<double>(6);

        args.rows = rows;
        args.nnz = static_cast<int>(plan.nnz());
        args.me = c.ranks.rank;
        args.npes = npes;
        communicate_and_test(!c.compute_only);
        args.max_iterations = c.compute_only ? c.fixed_iterations : c.max_iterations;
        args.tolerance = c.tolerance;
        args.row_ptr = row_ptr.get();
        args.col = col.get();
        args.val = val.get();
        args.dinv = dinv.get();
        args.b = b.get();
        args.x = x.get();
        args.r = r.get();
        args.z = z.get();
        args.q = q.get();
        args.send_rows = send_rows.get();
        args.to.count = static_cast<int>(plan.send_ranks.size());
        args.to.offset[0] = 0;
        for (int i = 0; i < args.to.count; ++i) {
            args.to.pe[i] = plan.send_ranks[i];
            args.to.offset[i + 1] = plan.send_offsets[i + 1];
            args.to.place[i] = place_from[size_t(plan.send_ranks[i])];
        }
        args.from.count = static_cast<int>(plan.recv_ranks.size());
        for (int i = 0; i < args.from.count; ++i) args.from.pe[i] = plan.recv_ranks[i];
        args.acc = acc.get();
        args.result = result.get();

        // A grid every block of which is resident at once (a cooperative launch's rule):
        // blocks_per_sm blocks on every SM, or as many as fit (kBlocksPerSm when the kernel
        // keeps to the registers __launch_bounds__ gives it).
        void* params[] = {&args};
        const int sms = tut::sm_count();
        int fit = 0;
        TUT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, lesson::cg_persistent, lesson::kThreads, 0));
        if (distributed) {
            int most = 0;
            TUT_NVSHMEM(nvshmemx_collective_launch_query_gridsize((const void*)lesson::cg_persistent, dim3(lesson::kThreads),
                                                                  params, 0, &most));
            fit = std::min(fit, most / sms);
        }
        grid = std::max(1, (blocks_per_sm > 0 ? std::min(blocks_per_sm, fit) : fit) * sms);
        if (distributed) grid = static_cast<int>(tut::mg::min_over_ranks(*world, double(grid)));
        TUT_CUDA(cudaEventCreate(&start));
        TUT_CUDA(cudaEventCreate(&stop));
        TUT_CUDA(cudaDeviceSynchronize());
    }
    ~CgShmem() {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
    CgShmem(const CgShmem&) = delete;
    CgShmem& operator=(const CgShmem&) = delete;

    tut::mg::SolveOutcome solve() {
        const cudaStream_t s = call.ranks.stream;
        const bool distributed = call.ranks.parts > 1;
        // Signals start from zero on every PE before any PE's kernel can signal again; so do
        // the slots of the block sums (the kernel zeroes each before its reuse).
        TUT_CUDA(cudaMemsetAsync(args.halo_sig, 0, sizeof(uint64_t) * size_t(call.ranks.parts), s));
        TUT_CUDA(cudaMemsetAsync(args.dot_sig, 0, sizeof(uint64_t) * size_t(call.ranks.parts), s));
        TUT_CUDA(cudaMemsetAsync(args.acc, 0, acc.bytes(), s));
        TUT_CUDA(cudaStreamSynchronize(s));
        if (distributed) tut::mg::barrier(*tut::mg::detail::current_world());
        void* params[] = {&args};
        TUT_CUDA(cudaEventRecord(start, s));
        if (distributed) {
            TUT_NVSHMEM(nvshmemx_collective_launch((const void*)lesson::cg_persistent, dim3(grid), dim3(lesson::kThreads),
                                                   params, 0, s));
        } else {
            TUT_CUDA(cudaLaunchCooperativeKernel((const void*)lesson::cg_persistent, dim3(grid), dim3(lesson::kThreads),
                                                 params, 0, s));
        }
        TUT_LAUNCH("cg_persistent");
        TUT_CUDA(cudaEventRecord(stop, s));
        double h[5];
        TUT_CUDA(cudaMemcpyAsync(h, result.get(), sizeof h, cudaMemcpyDeviceToHost, s));
        tut::mg::progress_detail(call.problem.label() + ", PE " + std::to_string(call.ranks.rank) + " of " +
                                 std::to_string(call.ranks.parts) + ": cg_persistent running (" +
                                 (args.communicate ? "halo puts and sums between the GPUs" : "no communication") +
                                 "), at most " + std::to_string(args.max_iterations) + " iterations");
        TUT_CUDA(cudaStreamSynchronize(s));
        float ms = 0;
        TUT_CUDA(cudaEventElapsedTime(&ms, start, stop));
        tut::mg::SolveOutcome out;
        out.ms = ms;
        out.iterations = static_cast<int>(h[0]);
        out.converged = h[1] != 0 && h[2] == 0;
        out.residual = h[4] > 0 ? std::sqrt(std::max(0.0, h[3]) / h[4]) : 0.0;
        return out;
    }

    /// The whole x, on every rank.
    std::vector<double> gather_x() const { return CgShare::gather_x(x.get()); }

    /// Puts, waits and the stopping test on (on one PE there is nobody to put to) or off.
    void communicate_and_test(bool on) {
        args.communicate = on && args.npes > 1;
        args.stop_test = on;
    }
    /// What time_per_iteration() changes, in turn: at most `iterations`, as the call asks;
    /// exactly that many, with no puts, no waits and no stopping test.
    void stop_after(int iterations) {
        communicate_and_test(!call.compute_only);
        args.max_iterations = iterations;
    }
    void compute_only(int iterations) {
        communicate_and_test(false);
        args.max_iterations = iterations;
    }
};

// ||b - A x|| / ||b|| in double over the whole system, on the host, rows generated again.
double true_residual(const tut::mg::CgProblem& pr, const std::vector<double>& x) {
    const tut::mg::CsrRows all = tut::mg::diffusion_27pt_rows(pr.nx, pr.ny, pr.nz, 0, pr.rows(), pr.seed);
    const std::vector<float> b = tut::mg::cg_rhs_rows(all, pr.seed);
    double rr = 0, bb = 0;
    for (size_t i = 0; i < b.size(); ++i) {
        double ax = 0;
        for (int k = all.row_ptr[i]; k < all.row_ptr[i + 1]; ++k) ax += double(all.values[k]) * x[size_t(all.col_idx[k])];
        rr += (b[i] - ax) * (b[i] - ax);
        bb += double(b[i]) * b[i];
    }
    return bb > 0 ? std::sqrt(rr / bb) : std::sqrt(rr);
}

}  // namespace

namespace lesson {
/// Starts NVSHMEM on every rank of the job (collective; once).
void start_nvshmem() {
    if (shmem()) return;
    shmem() = new tut::mg::Nvshmem(*tut::mg::detail::current_world());
    shmem()->take<unsigned char>(1);  // the symmetric arena, allocated now by every PE together
    shmem()->reset();
}
/// Stops NVSHMEM on every rank (collective: nvshmem_finalize), before MPI_Finalize; nothing
/// when it was not started.
void stop_nvshmem() {
    delete shmem();
    shmem() = nullptr;
}
/// One solve, for the checks (call start_nvshmem() on every rank first): the whole x and,
/// in SolveOutcome::residual, the true residual (computed on the host: small problems).
tut::mg::SolveOutcome cg_solve(const tut::mg::CgCall& c) {
    start_nvshmem();
    CgShmem solver(c);
    tut::mg::SolveOutcome o = solver.solve();
    if (c.want_x) {
        o.x = solver.gather_x();
        o.residual = true_residual(c.problem, o.x);
    }
    return o;
}
}  // namespace lesson

namespace {

/// How main() runs the solver: blocks_per_sm of the persistent kernel (0: as many as fit);
/// true_residual: also compute ||b - A x|| on the host after the solve to convergence.
struct Shape {
    int blocks_per_sm = 0;
    bool true_residual = false;
};

/// A solve to convergence (its iterations, whether it converged), then the time per
/// iteration on this rank (tut::mg::time_per_iteration: the compute-only solves make no
/// puts and no waits). Symmetric memory is taken in the constructor: every rank of the
/// solve makes it together.
struct Timed : tut::mg::CgTiming {
    double true_residual = -1;  // ||b - A x|| / ||b|| of the solve to convergence; -1: not computed
    int grid = 0;               // blocks of the persistent kernel
};
Timed time_cg(const tut::mg::CgCall& c, int repeats, const tut::mg::World* world, const Shape& shape) {
    CgShmem solver(c, shape.blocks_per_sm);
    Timed t;
    t.grid = solver.grid;
    t.full = solver.solve();
    if (shape.true_residual) t.true_residual = true_residual(c.problem, solver.gather_x());  // every rank alike
    tut::mg::time_per_iteration(solver, t, repeats, world);
    return t;
}

/// The check of the solve to convergence: converged, the residual it carries within the
/// tolerance, and the true residual when it was computed (the same verdict on every rank:
/// its values are sums over the GPUs).
std::string verdict_of(const Timed& t) {
    const double tolerance = 1e-6;
    if (!t.full.converged) return "did not converge in " + std::to_string(t.full.iterations) + " iterations";
    if (!(t.full.residual <= 1.01 * tolerance))
        return "the residual the iteration carries is " + std::to_string(t.full.residual);
    if (t.true_residual >= 0 && !(t.true_residual <= 1e-5))
        return "true residual ||b - A x|| / ||b|| = " + std::to_string(t.true_residual);
    return "";
}

}  // namespace

int main(int argc, char** argv) {
    tut::mg::CgOptions options;
    Shape shape;
    tut::Cli cli("nvshmem_cg", "CG in one persistent kernel per GPU: NVSHMEM puts and signals issued by the GPUs");
    options.add_to(cli);
    cli.add_int("blocks-per-sm", &shape.blocks_per_sm,
                "blocks of the persistent kernel per SM (0: as many as fit; more than fit: as many as fit)", 0, 8);
    cli.add_flag("true-residual", &shape.true_residual,
                 "also compute ||b - A x|| / ||b|| on the host after each solve to convergence, and check it (slow on large grids)");
    tut::add_run_options(cli, options.run);
    cli.parse_or_exit(argc, argv);
    const std::string variant = "nvshmem persistent";
    if (!options.finish(cli, "nvshmem_cg", {variant})) return tut::kUsageExitCode;

    tut::mg::Mpi mpi(argc, argv);
    const tut::mg::World& world = mpi.world();
    const int rc = tut::mg::guarded(world, "nvshmem_cg", [&] {
        if (!tut::device_has(cudaDevAttrCooperativeLaunch))
            tut::mg::skip_all(world, "the persistent kernel needs cooperative launches, which this GPU lacks");
        lesson::start_nvshmem();
        cudaStream_t stream;
        TUT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        if (world.root())
            std::printf("%d GPU(s), one process (PE) each | NVSHMEM %d.%d | one persistent kernel per GPU\n", world.size,
                        NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION);
        // The residual reported is the one the iteration carries (--true-residual adds the true one below the table).
        tut::mg::CgBench<Timed> bench(world, {"06_nvshmem", "nvshmem_cg", {variant}, false}, options, stream);
        std::vector<std::string> shapes;  // per problem: the grid (and the true residual when asked for)
        for (const tut::mg::CgScalingProblem& pb : bench.problems()) {
            const tut::mg::CgCall c = bench.call(pb, variant, nullptr);
            const Timed t = bench.time(pb, variant, [&] { return time_cg(c, options.run.repeats, &world, shape); });
            bench.check(pb.name + " (" + pb.grid.label() + ")", [&] { return verdict_of(t); });
            shapes.push_back(tut::fmt("  %s: %d blocks of %d threads (%d per SM)", pb.name.c_str(), t.grid, lesson::kThreads,
                                      t.grid / tut::sm_count()) +
                             (t.true_residual >= 0 ? tut::fmt(", true residual %.1e", t.true_residual) : std::string()));
            bench.record(pb, variant, t, /*yardstick=*/true, [&] {
                tut::mg::CgCall one = c;
                one.ranks = {0, 1, nullptr, stream};
                one.problem = pb.one_gpu;
                return time_cg(one, options.run.repeats, nullptr, shape).us_per_iter();
            });
        }
        bench.print(tut::fmt("CG in one persistent kernel per GPU on %d GPU(s): us per iteration, compute (the same "
                             "kernel with no puts and no waits) and comm (the rest)", world.size));
        if (world.root()) {
            std::printf("The persistent kernel, rank 0:\n");
            for (const std::string& line : shapes) std::printf("%s\n", line.c_str());
        }
        TUT_CUDA(cudaStreamDestroy(stream));
        return 0;
    });
    // NVSHMEM stops on every PE before MPI_Finalize (~Mpi), not from a static destructor.
    // After a failure (with one process: with several, guarded() has ended the job) its
    // state is left as it is: a finalize could wait for work that never ends.
    if (rc == 0) lesson::stop_nvshmem();
    return rc;
}
