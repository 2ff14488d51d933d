// CG lesson 8 (beyond the story): one persistent cooperative kernel runs the whole solve,
// with its own CSR SpMV, and grid-wide barriers (cooperative_groups::this_grid().sync())
// where lessons 5-7 ended a kernel.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/cg/08_persistent/persistent.cu -o persistent
// Run:  ./persistent --problem both     (--help for options; --lanes, --blocks-per-sm to tune)
//
// A kernel boundary is a grid-wide barrier plus a launch: every block of the next kernel
// must wait for every block of the last. With all blocks resident at once (a cooperative
// launch guarantees it, or refuses), a barrier inside one kernel does the first job
// without the second. Per iteration, three phases and three barriers:
//   A. q = A p (S lanes per row), p.q                           -> barrier
//   B. alpha; x += alpha p; r -= alpha q; z = D^-1 r; r.z, r.r  -> barrier
//   C. stop?; beta; p = z + beta p                              -> barrier
// Every thread computes alpha, beta and the stopping decision itself, from the same
// global sums read after the same barrier, so all blocks agree and leave the loop at the
// same iteration (a block that left early would leave the others waiting forever).
// (Folding C into A, forming p = z + beta p_old where the SpMV gathers it, saves a
// barrier but gathers two vectors instead of one: it measured slower on an H200.)
#include "tut/cg.hpp"

#include <cooperative_groups.h>

#include <tuple>

namespace coop = cooperative_groups;

namespace {

using tut::cg::Outcome;
using tut::cg::SolveResult;

constexpr int kBlock = 512;
enum Status : int { kRunning = 0, kConverged = 1, kNotPositiveDefinite = 2 };

// Global sums of one iteration. Two slots, used alternately: the slot for iteration
// it + 1 is zeroed at the start of iteration it. Its last readers (iteration it - 1,
// after its second barrier) have all passed the third barrier of it - 1 by then.
struct Sums {
    double pq, rz, rr;
};
struct State {
    Sums slot[2];
    Sums start;                    // r.z and r.r before the first iteration
    double rr_last, bb;
    int iterations, status, converged_at;
};

struct Args {
    tut::cg::DeviceCsr A;
    const float* b;
    const float* dinv;
    float *x, *r, *z, *p, *q;      // not __restrict__ and not const: other blocks write them
    State* state;
    double tol2;
    int max_iterations;
};

// Every block must have finished the phase before any block starts the next one.
__device__ void grid_barrier(coop::grid_group& grid) { grid.sync(); }

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// Adds the block's sums of a and b to *a_total and *b_total (one atomic each per block).
__device__ void block_add2(float a, float b, double* a_total, double* b_total) {
    __shared__ float2 warp_sums[kBlock / 32];
    a = warp_sum(a);
    b = warp_sum(b);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = make_float2(a, b);
    __syncthreads();
    if (warp == 0) {
        const float2 w = lane < kBlock / 32 ? warp_sums[lane] : make_float2(0.0f, 0.0f);
        a = warp_sum(w.x);
        b = warp_sum(w.y);
        if (lane == 0) {
            atomicAdd(a_total, double(a));
            if (b_total) atomicAdd(b_total, double(b));
        }
    }
    __syncthreads();  // warp_sums is reused by the next call
}

// Row `row` of A times p, by the kLanes lanes of a sub-warp (the result is in every lane;
// 0 for row >= n). All 32 lanes of the warp must call it together: the shuffles span the
// warp. The matrix is read once per iteration and never reused: __ldcs (evict-first)
// keeps it from pushing the vectors, which are reused, out of L2.
template <int kLanes>
__device__ float row_times(const tut::cg::DeviceCsr& A, const float* p, int row, int lane) {
    int begin = 0, end = 0;
    if (row < A.n) {
        begin = __ldcs(A.row_ptr + row);
        end = __ldcs(A.row_ptr + row + 1);
    }
    float sum = 0.0f;
    for (int k = begin + lane; k < end; k += kLanes) sum += __ldcs(A.values + k) * p[__ldcs(A.col_idx + k)];
    for (int offset = kLanes / 2; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset, kLanes);
    return sum;
}

template <int kLanes>
__global__ void __launch_bounds__(kBlock) persistent_cg(Args a) {
    coop::grid_group grid = coop::this_grid();
    const int n = a.A.n;
    const int tid = int(grid.thread_rank()), threads = int(grid.size());
    const int lane = tid % kLanes, group = tid / kLanes, groups = threads / kLanes;
    // The warp's first row: a warp keeps looping while any of its sub-warps has a row.
    const int warp_row0 = (tid / 32) * (32 / kLanes);
    State* st = a.state;

    // x = 0, r = b, z = D^-1 b, p = z; r.z and r.r.
    float rz = 0.0f, rr = 0.0f;
    for (int i = tid; i < n; i += threads) {
        const float bi = a.b[i], zi = a.dinv[i] * bi;
        a.x[i] = 0.0f;
        a.r[i] = bi;
        a.z[i] = zi;
        a.p[i] = zi;
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
        Sums* cur = &st->slot[it % 2];
        if (tid == 0) st->slot[(it + 1) % 2] = Sums{0.0, 0.0, 0.0};

        // A. q = A p and p.q (lane 0 of each sub-warp owns its row).
        float pq = 0.0f;
        for (int row = group, first = warp_row0; first < n; row += groups, first += groups) {
            const float qi = row_times<kLanes>(a.A, a.p, row, lane);
            if (lane == 0 && row < n) {
                a.q[row] = qi;
                pq += a.p[row] * qi;
            }
        }
        block_add2(pq, 0.0f, &cur->pq, nullptr);
        grid_barrier(grid);

        // B. alpha, then x, r, z and the two dots in one pass.
        const double pq_total = __ldcg(&cur->pq);
        ++it;
        if (!(pq_total > 0.0)) {  // every thread sees the same sum: all leave together
            status = kNotPositiveDefinite;
            break;
        }
        const float alpha = float(rz_old / pq_total);
        rz = rr = 0.0f;
        for (int i = tid; i < n; i += threads) {
            a.x[i] += alpha * a.p[i];
            const float ri = a.r[i] - alpha * a.q[i];
            const float zi = a.dinv[i] * ri;
            a.r[i] = ri;
            a.z[i] = zi;
            rz += ri * zi;
            rr += ri * ri;
        }
        block_add2(rz, rr, &cur->rz, &cur->rr);
        grid_barrier(grid);

        // C. stop, or beta and the new direction.
        rr_last = __ldcg(&cur->rr);
        if (rr_last <= threshold) {
            status = kConverged;
            converged_at = it;
            break;
        }
        const double rz_new = __ldcg(&cur->rz);
        const float beta = float(rz_new / rz_old);
        rz_old = rz_new;
        for (int i = tid; i < n; i += threads) a.p[i] = a.z[i] + beta * a.p[i];
        grid_barrier(grid);
    }
    if (tid == 0) {
        st->iterations = it;
        st->status = status;
        st->converged_at = converged_at;
        st->rr_last = rr_last;
        st->bb = bb;
    }
}

// Phase A's SpMV, alone, for the SpMV GB/s column.
template <int kLanes>
__global__ void __launch_bounds__(kBlock) spmv_kernel(tut::cg::DeviceCsr A, const float* p, float* q) {
    const int tid = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    const int lane = tid % kLanes, groups = threads / kLanes;
    for (int row = tid / kLanes, first = (tid / 32) * (32 / kLanes); first < A.n; row += groups, first += groups) {
        const float qi = row_times<kLanes>(A, p, row, lane);
        if (lane == 0 && row < A.n) q[row] = qi;
    }
}

// Tuning knobs (options of this lesson): 0 = choose automatically.
int g_lanes_option = 0;
int g_blocks_per_sm_option = 0;

using KernelPtr = void (*)(Args);
using SpmvPtr = void (*)(tut::cg::DeviceCsr, const float*, float*);

template <int kLanes>
std::pair<KernelPtr, SpmvPtr> kernels_for() {
    return {persistent_cg<kLanes>, spmv_kernel<kLanes>};
}

class PersistentSolver final : public tut::cg::Solver {
  public:
    PersistentSolver(const tut::cg::DeviceMatrix& A, const std::vector<float>& dinv, const tut::cg::SolveOptions& opt)
        : A_(A.view()), opt_(opt), dinv_(dinv), r_(size_t(A_.n)), z_(size_t(A_.n)), p_(size_t(A_.n)),
          q_(size_t(A_.n)), state_(1) {
        TUT_CUDA(cudaMemset(p_.get(), 0, p_.bytes()));  // spmv_once() may run before any solve
        int device = 0, sms = 0, cooperative = 0;
        TUT_CUDA(cudaGetDevice(&device));
        TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        TUT_CUDA(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
        if (!cooperative) throw tut::Unsupported("this GPU does not support cooperative launches");

        // Lanes per row: a power of two in 2..32 near an eighth of the average row length
        // (27 nonzeros per row -> 4 lanes, 7 nonzeros each: measured best on an H200, where
        // 8 lanes ran the large problem 1.5x slower and 16 lanes 2x slower).
        lanes_ = g_lanes_option;
        if (lanes_ == 0) {
            const double per_row = double(A_.nnz) / A_.n;
            lanes_ = 2;
            while (lanes_ < 32 && lanes_ * 8 < per_row) lanes_ *= 2;
        }
        switch (lanes_) {
            case 2: std::tie(kernel_, spmv_) = kernels_for<2>(); break;
            case 4: std::tie(kernel_, spmv_) = kernels_for<4>(); break;
            case 8: std::tie(kernel_, spmv_) = kernels_for<8>(); break;
            case 16: std::tie(kernel_, spmv_) = kernels_for<16>(); break;
            case 32: std::tie(kernel_, spmv_) = kernels_for<32>(); break;
            default: throw tut::Unsupported("--lanes must be 2, 4, 8, 16 or 32");
        }
        // All blocks must be resident at once: at most what the occupancy calculator allows.
        int fit = 0;
        TUT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel_, kBlock, 0));
        if (fit < 1) throw tut::Unsupported("the persistent kernel does not fit on an SM");
        // Small problems: one block per SM keeps the barriers cheap; large ones: fill the GPU.
        int per_sm = g_blocks_per_sm_option ? g_blocks_per_sm_option
                                            : (double(A_.n) * lanes_ > 4.0 * sms * kBlock ? fit : 1);
        if (per_sm > fit)
            throw tut::Unsupported("--blocks-per-sm " + std::to_string(per_sm) + ": only " + std::to_string(fit) +
                                   " blocks of the persistent kernel fit on an SM");
        blocks_ = per_sm * sms;
    }

    SolveResult solve(const float* b, float* x) override {
        Args args{A_, b, dinv_.get(), x, r_.get(), z_.get(), p_.get(), q_.get(), state_.get(),
                  opt_.tolerance * opt_.tolerance, opt_.max_iterations};
        void* params[] = {&args};
        TUT_CUDA(cudaMemsetAsync(state_.get(), 0, sizeof(State)));
        // A cooperative launch either makes every block resident at once or fails: the
        // grid-wide barrier cannot deadlock on blocks that never got an SM.
        TUT_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel_), dim3(blocks_), dim3(kBlock), params,
                                             0, nullptr));
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
        spmv_<<<blocks_, kBlock>>>(A_, p_.get(), q_.get());
        TUT_LAUNCH("spmv_kernel");
    }

  private:
    tut::cg::DeviceCsr A_;
    tut::cg::SolveOptions opt_;
    tut::DeviceBuffer<float> dinv_, r_, z_, p_, q_;
    tut::DeviceBuffer<State> state_;
    int lanes_ = 8, blocks_ = 1;
    KernelPtr kernel_ = nullptr;
    SpmvPtr spmv_ = nullptr;
};

std::unique_ptr<tut::cg::Solver> make_persistent(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                                 const tut::cg::SolveOptions& opt) {
    const std::vector<float> dinv = tut::cg::inverse_diagonal(A);
    return std::make_unique<PersistentSolver>(dA, dinv, opt);
}

}  // namespace

namespace lesson {
std::vector<tut::cg::Variant> cg_variants() { return {{"persistent cooperative kernel", make_persistent}}; }
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"cg", "08_persistent", "one persistent cooperative kernel with its own CSR SpMV"};
    return tut::cg::lesson_main(argc, argv, info, lesson::cg_variants(), [](tut::Cli& cli) {
        cli.add_int("lanes", &g_lanes_option, "lanes per matrix row in the SpMV: 2..32, a power of two (0: auto)", 0, 32);
        cli.add_int("blocks-per-sm", &g_blocks_per_sm_option, "blocks of 512 threads per SM (0: auto)", 0, 4);
    });
}
#endif
