// wrong: cg/09_streaming: each lane handles exactly one quad of its row, so a row of more than kLanes quads (32 nonzeros or so) keeps only its first kLanes
// caught by: cg/09_streaming: solves the default problem and small ones to tolerance
// kind: skips-work
// Right on the 27-point problems (at most 8 quads a row), wrong on "dense 200" (200 nonzeros a
// row) and on "spd100" (rows of up to 48).
// cg/09_streaming: the persistent kernel for a matrix streamed from memory, near the bandwidth floor.
// Starts from: lesson 08's persistent kernel (beyond the story), for a matrix too large to
// keep on chip. At 2 M rows every phase of the iteration is a stream from DRAM, and a
// stream is as fast as the bytes it keeps in flight. Adds what a kernel that never ends
// can do for such an iteration:
//   - each block owns one stretch of rows in every phase, so the vectors only it reads
//     stay on chip across the phases: its p (a copy: the other blocks gather p from
//     memory) and its q, later overwritten by z, in shared memory (64 KB per block, up to
//     8192 rows); phases B and C then touch only x, r and 1/a_ii in memory;
//   - the block's warps sweep its stretch side by side, so their gathers of p share L1 lines;
//   - the SpMV reads the matrix as aligned 16-byte quads marked "streaming" (__ldcs), two
//     rows per sub-warp, and issues the next step's loads before this step's gathers;
//   - the row pointers, read again every iteration, stay in L2 under an access-policy
//     window while the nonzeros stream past (GPUs with a persisting L2: sm_80 and newer).
// A cooperative grid must be resident all at once: two blocks of 384 threads per SM, 80
// registers each, room for the loads a step ahead without spilling.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/cg/09_streaming/streaming.cu -o streaming
// Run:  ./streaming --problem both     (--help for options; --l2-window, --blocks-per-sm to tune)
//
// In this file:
//   block_rows        the stretch of rows block b owns, the same in every phase
//   block_spmv        phase A: this block's rows of q = A p, and its share of p.q (the exercise)
//   update_x_r_z      phase B on the block's rows: x, r, z and r.z, r.r
//   update_p          phase C: p = z + beta p, on chip and in memory for the gathers
//   streaming_cg      the solve: phases A, B and C, each ended by a grid-wide barrier
//   spmv_kernel       block_spmv alone, for the SpMV column
//   StreamingSolver   sizes the grid, keeps the vectors on chip when they fit, sets the L2 window
//   variants "vectors=on-chip" (each block's p and q/z in shared memory when they fit) and
//            "vectors=memory" (in global memory, for comparison)
// Shared with lesson 08 (tut/cg_persistent.hpp): State and its three slots of sums, Args,
// block_add, finish, the cooperative launch.
#include "tut/cg.hpp"
#include "tut/cg_persistent.hpp"

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace coop = cooperative_groups;

namespace {

using namespace tut::cg::persistent;  // State, Sums, Args, block_add, finish, the launch
using tut::cg::SolveResult;

constexpr int kThreads = 384;                     // threads per block (two blocks per SM)
constexpr int kLanes = 8, kSubs = 32 / kLanes;    // 8 lanes per row, 4 sub-warps per warp,
constexpr int kRowsPerSub = 2;                    // two rows per sub-warp at a time,
constexpr int kBlockRowsOnChip = 8192;            // a block's p and q on chip up to 8192 rows
constexpr int kWarpStep = kSubs * kRowsPerSub;    // rows a warp takes at a time
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block_add adds whole warps, at most 32 of them");
static_assert(32 % kLanes == 0, "a row's sub-warp of kLanes lanes must not straddle two warps");
static_assert(kWarpStep % 4 == 0, "stretches start at a multiple of 4 rows: the float4 moves of phases B and C");
static_assert(kBlockRowsOnChip % 4 == 0, "q/z starts kBlockRowsOnChip floats into shared memory: 16-byte aligned");

// Every block must have finished the phase before any block starts the next one.
__device__ void grid_barrier(coop::grid_group& grid) { grid.sync(); }

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
constexpr int kBlockStep = kThreads / 32 * kWarpStep;
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
            if (4 * quad < end[i]) {
                load_quad(A, quad, column[i], value[i]);
            } else {
                column[i] = make_int4(0, 0, 0, 0);
                value[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            }
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
            sum[i] = lane < quads ? quad_dot(first_quad + lane, begin[i], end[i], column[i], value[i], p) : 0.0f;
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
    for (int i = 4 * int(threadIdx.x); i < count; i += 4 * kThreads) {
        const int row = rows.first + i;
        if (i + 4 <= count) {
            const float4 pi = *reinterpret_cast<const float4*>(p_own + i), qi = *reinterpret_cast<float4*>(qz_own + i);
            const float4 di = *reinterpret_cast<const float4*>(a.dinv + row);
            float4 xi = *reinterpret_cast<float4*>(a.x + row), ri = *reinterpret_cast<float4*>(a.r + row), zi;
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
    for (int i = 4 * int(threadIdx.x); i < count; i += 4 * kThreads) {
        const int row = rows.first + i;
        if (i + 4 <= count) {
            const float4 zi = *reinterpret_cast<const float4*>(qz_own + i);
            float4 pi = *reinterpret_cast<float4*>(p_own + i);
            pi.x = zi.x + beta * pi.x;
            pi.y = zi.y + beta * pi.y;
            pi.z = zi.z + beta * pi.z;
            pi.w = zi.w + beta * pi.w;
            *reinterpret_cast<float4*>(p_own + i) = pi;
            *reinterpret_cast<float4*>(a.p + row) = pi;
        } else {
            for (int k = i; k < count; ++k) a.p[row + (k - i)] = p_own[k] = qz_own[k] + beta * p_own[k];
        }
    }
}

__global__ void __launch_bounds__(kThreads, 2) streaming_cg(Args a) {
    extern __shared__ float4 on_chip[];  // p_own, then q (later z), kBlockRowsOnChip each
    coop::grid_group grid = coop::this_grid();
    // The block's rows, in shared memory rather than registers: the kernel runs at its
    // register limit, and with two more values held there the compiler schedules the SpMV
    // loop less well (docs/experiments/cg.md).
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
    for (int local = int(threadIdx.x); local < rows.count; local += kThreads) {
        const int i = rows.first + local;
        const float bi = a.b[i], zi = a.dinv[i] * bi;
        a.x[i] = 0.0f;
        a.r[i] = bi;
        a.p[i] = p_own[local] = zi;
        rz += bi * zi;
        rr += bi * bi;
    }
    block_add(rz, rr, &st->start.rz, &st->start.rr);
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
        block_add(pq, 0.0f, &cur->pq, nullptr);
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
        block_add(sums.x, sums.y, &cur->rz, &cur->rr);
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
__global__ void __launch_bounds__(kThreads, 2) spmv_kernel(tut::cg::DeviceCsr A, const float* p, float* q) {
    __shared__ BlockRows rows;
    if (threadIdx.x == 0) rows = block_rows(A.n, blockIdx.x, gridDim.x);
    __syncthreads();
    block_spmv(A, p, p + rows.first, q + rows.first, rows);
}

// ---------------------------------------------------------------------------------------
// The host side
// ---------------------------------------------------------------------------------------

// This lesson's options. They live in main() and reach the solvers through the variants
// (lesson::variants() without arguments uses the defaults).
struct StreamingOptions {
    std::string l2_window = "on";  // keep the row pointers in L2 with an access-policy window
    int blocks_per_sm = 0;         // 0: as many as fit
};

class StreamingSolver final : public tut::cg::Solver {
  public:
    StreamingSolver(const tut::cg::DeviceMatrix& A, const std::vector<float>& dinv, const tut::cg::SolveOptions& opt,
                    const StreamingOptions& options, bool vectors_on_chip)
        : A_(A.view()), opt_(opt), dinv_(dinv), r_(size_t(A_.n)), z_(size_t(A_.n)), q_(size_t(A_.n)),
          p_(size_t(A_.n)), p_next_(size_t(A_.n)), state_(1) {
        TUT_CUDA(cudaMemset(p_.get(), 0, p_.bytes()));  // spmv_once() may run before any solve
        refuse_without_cooperative_launch();
        sms_ = sm_count();
        blocks_per_sm_ = options.blocks_per_sm;
        int device = 0;
        TUT_CUDA(cudaGetDevice(&device));

        // Each block's p and q/z in shared memory if the GPU has room for them and the
        // block's stretch of rows is at most kBlockRowsOnChip long.
        const int bytes = 2 * kBlockRowsOnChip * int(sizeof(float));
        int optin = 0;
        TUT_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        if (vectors_on_chip && optin >= bytes) {
            TUT_CUDA(cudaFuncSetAttribute(streaming_cg, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
            const int blocks = blocks_for(bytes);
            int longest = 0;
            for (int b = 0; b < blocks; ++b) {
                longest = std::max(longest, block_rows(A_.n, b, blocks).count);
            }
            on_chip_ = longest <= kBlockRowsOnChip;
        }
        shared_bytes_ = on_chip_ ? bytes : 0;
        blocks_ = blocks_for(shared_bytes_);

        // Every iteration reads the whole matrix once, and the row pointers (8 MB of the
        // 454 MB at 2 M rows) with it. Marking the row pointers "persisting" sets aside that
        // much L2 for them, so that they come from L2 from the second iteration on while the
        // nonzeros stream past. (A window on the nonzeros themselves only evicts the vectors.)
        // A GPU without a persisting L2 (before sm_80) gets no window (tut::PersistingL2Window).
        if (options.l2_window == "on") l2_window_.set(A_.row_ptr, size_t(A_.n + 1) * sizeof(int));
    }
    StreamingSolver(const StreamingSolver&) = delete;
    StreamingSolver& operator=(const StreamingSolver&) = delete;

    SolveResult solve(const float* b, float* x) override {
        if (reinterpret_cast<uintptr_t>(x) % 16)
            throw std::invalid_argument("StreamingSolver::solve: x must be 16-byte aligned (as cudaMalloc gives)");
        Args a;
        a.A = A_;
        a.b = b;
        a.dinv = dinv_.get();
        a.x = x;
        a.r = r_.get();
        a.z = z_.get();
        a.q = q_.get();
        a.p = p_.get();
        a.p_next = p_next_.get();
        a.state = state_.get();
        a.tol2 = opt_.tolerance * opt_.tolerance;
        a.max_iterations = opt_.max_iterations;
        a.on_chip = on_chip_;
        return solve_cooperatively(streaming_cg, blocks_, kThreads, shared_bytes_, a, l2_window_.window());
    }

    bool spmv_once() override {
        spmv_kernel<<<blocks_, kThreads>>>(A_, p_.get(), q_.get());
        TUT_LAUNCH("spmv_kernel");
        return true;
    }

  private:
    // All blocks must be resident at once: at most what the occupancy calculator allows.
    int blocks_for(int shared_bytes) const {
        const int fit = resident_blocks_per_sm(streaming_cg, kThreads, shared_bytes);
        const int per_sm = blocks_per_sm_ ? blocks_per_sm_ : fit;
        if (per_sm > fit)
            throw tut::Unsupported("--blocks-per-sm " + std::to_string(per_sm) + ": only " + std::to_string(fit) +
                                   " blocks of the persistent kernel fit on an SM");
        return per_sm * sms_;
    }

    tut::cg::DeviceCsr A_;
    tut::cg::SolveOptions opt_;
    tut::DeviceBuffer<float> dinv_, r_, z_, q_, p_, p_next_;
    tut::DeviceBuffer<State> state_;
    int sms_ = 1, blocks_per_sm_ = 0, blocks_ = 1, on_chip_ = 0, shared_bytes_ = 0;
    tut::PersistingL2Window l2_window_;  // the row pointers kept in L2
};

// Builds the solver of one variant (its run); `options` must outlive it.
std::function<tut::cg::Make> streaming_factory(const StreamingOptions& options, bool vectors_on_chip) {
    return [&options, vectors_on_chip](const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                       const tut::cg::SolveOptions& opt) {
        const std::vector<float> dinv = tut::cg::inverse_diagonal(A);
        return std::unique_ptr<tut::cg::Solver>(
            std::make_unique<StreamingSolver>(dA, dinv, opt, options, vectors_on_chip));
    };
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
// The variants with the options of this run (`options` must outlive them: main's).
std::vector<tut::cg::Variant> variants(const StreamingOptions& options) {
    return {{"vectors=on-chip", streaming_factory(options, true)},
            {"vectors=memory", streaming_factory(options, false)}};
}
// With the default options: what the checks run.
std::vector<tut::cg::Variant> variants() {
    static const StreamingOptions defaults{};
    return variants(defaults);
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"cg", "09_streaming",
                               "the persistent kernel for a matrix streamed from memory, near the bandwidth floor"};
    StreamingOptions streaming;  // this lesson's options, filled by parse() before any solver is built
    const std::vector<tut::cg::Variant> variants = lesson::variants(streaming);
    tut::cg::Options options(lesson, tut::cg::Preconditioner::jacobi);  // --problem, --matrix, --tol, ...
    options.cli.add_string("l2-window", &streaming.l2_window,
                           "keep the row pointers in L2 with an access-policy window", {"on", "off"});
    options.cli.add_int("blocks-per-sm", &streaming.blocks_per_sm,
                        "blocks of 384 threads per SM (0: as many as fit)", 0, 2);
    options.parse(argc, argv, tut::names_of(variants));
    tut::require_cooperative_launch(lesson.lesson);  // exits 77 without cooperative launches
    if (!tut::device_has(cudaDevAttrMaxPersistingL2CacheSize))
        std::printf("Note: this GPU has no persisting L2 (compute capability 8.0 and newer have one): the row "
                    "pointers are not kept in L2, and --l2-window changes nothing.\n");
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        const double d2d_gbs = tut::cg::measure_floor_bandwidth();
        tut::Table table = tut::cg::table();
        for (const std::string& name : tut::cg::problem_names(options)) {  // default; --problem both adds large
            tut::cg::Problem problem(bench, options, name, d2d_gbs);  // A, b = A x*, Eigen's time from --share
            for (const tut::cg::Variant& v : variants) {
                if (!bench.runs(v)) continue;
                const std::unique_ptr<tut::cg::Solver> solver = problem.solver(v);  // all set-up, untimed
                const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(*solver); });
                const tut::Timing timing = problem.time(v.name, *solver);  // wall clock: the host's part counts
                const tut::Verdict again = bench.check(v.name, [&] { return problem.check_last(); });  // no stale state
                const double spmv_gbs = problem.spmv_gbs(v.name, *solver);  // its SpMV alone
                table.add_row(bench.record(problem.result(v, timing, spmv_gbs, verdict, again)));
            }
        }
        tut::cg::print(table);
        return bench.exit_code();
    });
}
