// multigpu/03_jor: JOR across GPUs. The JOR track's dense Jacobi over-relaxation, its
// rows split between GPUs: each GPU keeps its block of rows of A (never moved), sweeps
// them, and after every sweep the GPUs share the new x (each needs all of it for the
// next sweep) and agree whether to stop. Lesson 2's collectives, used: the all-gather of
// x, and the all-reduce of the stopping test's values, or both in one collective.
// Strong scaling: the same N on 1, 2, 4 GPUs; the one-GPU time is measured in the same run.
//
// Build alone (from the repository root; needs MPI and NCCL):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include -ccbin mpicxx \
//        lessons/multigpu/03_jor/jor.cu -lnccl -o jor
// Run:  mpirun -np 2 ./jor              (N = 16384 and 32768, float and double)
//
// In this file:
//   sweep_kernel   one warp per row of this GPU's block (or 2 or 4 warps of a block per
//                  row, when one warp per row would not fill the GPU several times over:
//                  sweep_warps_per_row): the row times the whole x, read block by block
//                  from the gathered vector, the new x_j and the stopping test's maxima
//   share          after a sweep: every GPU gets every block of x and the test's values  (the exercise)
//   variants "allgather + allreduce" and "one allgather", for float and double
//
// Sources: the JOR track (lessons/jor, tut/jor.hpp: the system, the stopping rule); NCCL's
// user guide, "Collective Operations" (AllGather, AllReduce, in-place operations);
// NVIDIA/multi-gpu-programming-models (the same split of a Jacobi solver's rows).
#include "tut/buffer.hpp"
#include "tut/check.hpp"
#include "tut/cli.hpp"
#include "tut/device_facts.hpp"
#include "tut/gpu.hpp"
#include "tut/jor.hpp"
#include "tut/lesson.hpp"
#include "tut/multigpu.hpp"
#include "tut/multigpu_mpi.hpp"
#include "tut/multigpu_nccl.hpp"
#include "tut/multigpu_solvers.hpp"
#include "tut/nvtx.hpp"
#include "tut/report.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace lesson {

constexpr int kThreads = 256;       // threads per block: 8 warps, 8 rows (8 / kSplit with kSplit warps per row)
constexpr int kWarp = 32;
/// Blocks per SM the sweep is compiled for (the __launch_bounds__ minimum): in float every
/// thread slot (2048 threads on an H100, at most 32 registers each), in double three
/// quarters of them (at most 40 registers), which the four loads of A in flight per lane
/// need. The same for any number of warps per row, so splitting a row keeps the occupancy.
template <class T>
constexpr int kBlocksPerSm = sizeof(T) == 4 ? tut::kMaxThreadsPerSm / kThreads : tut::kMaxThreadsPerSm / kThreads * 3 / 4;
constexpr int kMaxParts = 64;
constexpr long long kStats = 4;     // after each block of x: max |dx|, max |x|, any non-finite, (padding)

/// Where each GPU's block of rows begins (and the end), passed by value to the kernel.
struct Blocks {
    long long begin[kMaxParts + 1];
    int parts;
};

template <class T>
__device__ T warp_sum(T v) {
    for (int d = kWarp / 2; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

__device__ void atomic_max_nonnegative(float* at, float v) {
    atomicMax(reinterpret_cast<unsigned*>(at), __float_as_uint(v));  // non-negative floats order like their bits
}
__device__ void atomic_max_nonnegative(double* at, double v) {
    atomicMax(reinterpret_cast<unsigned long long*>(at), static_cast<unsigned long long>(__double_as_longlong(v)));
}

/// One sweep over this GPU's rows: x_new_j = x_j + a (b_j - A_j x) / A_jj for local row j
/// (global row rank's begin + j). x is the gathered vector: block q of x (rows
/// blocks.begin[q] ..) sits at xg + q * stride, so the row is read block by block.
/// One warp per row reads the row in steps of 4 x 32 elements, four loads of A in flight per
/// lane. With kSplit warps per row (2 or 4, in one block) warp w of the block takes row
/// w / kSplit of the block's rows and every kSplit-th step, from step w % kSplit: the row's
/// warps together read kSplit consecutive steps at a time, each warp a kSplit-th of the row,
/// and their sums meet in shared memory, in a fixed order. kSplit = 1: one warp per row, no
/// shared memory, no barrier.
/// Writes the new x_j into `x_next` (this GPU's block of the next gathered vector) and
/// raises stats[0] = max |x_new - x|, stats[1] = max |x_new|, stats[2] = 1 on a non-finite x.
template <class T, int kSplit>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm<T>) sweep_kernel(const T* __restrict__ A, const T* __restrict__ b, const T* __restrict__ xg, long long stride,
                             Blocks blocks, int rank, long long rows, long long n, T alpha, T* __restrict__ x_next,
                             T* __restrict__ stats) {
    static_assert(kSplit >= 1 && (kThreads / kWarp) % kSplit == 0, "a row's warps must be in one block");
    constexpr int kRowsPerBlock = kThreads / kWarp / kSplit;
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const int piece = warp % kSplit;
    const long long j = (long long)blockIdx.x * kRowsPerBlock + warp / kSplit;
    if (kSplit == 1 && j >= rows) return;  // with kSplit > 1 every warp must reach the barrier
    const T* row = A + j * n;
    T acc = 0;
    if (j < rows) {
        for (int q = 0; q < blocks.parts; ++q) {
            const T* a = row + blocks.begin[q];
            const T* x = xg + q * stride;
            const int len = int(blocks.begin[q + 1] - blocks.begin[q]);  // N <= 2^19 (tut::jor::kMaxN)
            int k = piece * 4 * kWarp + lane;
            T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (; k + 3 * kWarp < len; k += kSplit * 4 * kWarp) {
                // Four loads of A (and of x) in flight per lane: all issued before the first is used.
                const T a0 = a[k], a1 = a[k + kWarp], a2 = a[k + 2 * kWarp], a3 = a[k + 3 * kWarp];
                const T x0 = x[k], x1 = x[k + kWarp], x2 = x[k + 2 * kWarp], x3 = x[k + 3 * kWarp];
                s0 += a0 * x0;
                s1 += a1 * x1;
                s2 += a2 * x2;
                s3 += a3 * x3;
            }
            // The last, partial step is the one warp's whose turn it is; the others' k is past len.
            for (; k < len; k += kWarp) s0 += a[k] * x[k];
            acc += (s0 + s1) + (s2 + s3);
        }
        acc = warp_sum(acc);
    }
    if constexpr (kSplit > 1) {
        __shared__ T partial[kThreads / kWarp];
        if (lane == 0) partial[warp] = acc;
        __syncthreads();
        if (piece != 0 || j >= rows) return;
        for (int p = 1; p < kSplit; ++p) acc += partial[warp + p];
    }
    if (lane == 0) {
        const long long global = blocks.begin[rank] + j;
        const T xj = xg[rank * stride + j];
        const T xn = xj + alpha * (b[j] - acc) / row[global];
        x_next[j] = xn;
        atomic_max_nonnegative(stats + 0, fabs(xn - xj));
        atomic_max_nonnegative(stats + 1, fabs(xn));
        if (!isfinite(xn)) stats[2] = T(1);
    }
}

/// Warps that share a row in this GPU's sweep: 1 while one warp per row gives the grid at
/// least kWaves waves of the warps the GPU holds at once (so that the warps that end last
/// are a small part of the sweep); else 2, or 4, whichever first gives kWaves waves (4 at
/// most). `forced` (1, 2 or 4) overrides the choice; 0 leaves it to the rule.
constexpr int kWaves = 2;
template <class T>
int sweep_warps_per_row(long long rows, int forced) {
    if (forced != 0) {
        if (forced != 1 && forced != 2 && forced != 4) throw tut::Unsupported("warps per row: 1, 2 or 4");
        return forced;
    }
    int device = 0, sms = 0, per_sm = 0;
    TUT_CUDA(cudaGetDevice(&device));
    TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    TUT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sweep_kernel<T, 1>, kThreads, 0));
    const long long resident = 1ll * per_sm * sms * (kThreads / kWarp);  // warps the GPU holds at once
    for (int k : {1, 2})
        if (rows * k >= kWaves * resident) return k;
    return 4;
}

/// Launches the sweep over `rows` rows with `split` warps per row (1, 2 or 4) on `s`.
template <class T>
void sweep(int split, const T* A, const T* b, const T* xg, long long stride, const Blocks& blocks, int rank,
           long long rows, long long n, T alpha, T* x_next, T* stats, cudaStream_t s) {
    if (rows <= 0) return;
    auto launch = [&](auto kernel, int rows_per_block) {
        const unsigned grid = unsigned((rows + rows_per_block - 1) / rows_per_block);
        kernel<<<grid, kThreads, 0, s>>>(A, b, xg, stride, blocks, rank, rows, n, alpha, x_next, stats);
        TUT_LAUNCH("sweep_kernel");
    };
    constexpr int kWarps = kThreads / kWarp;
    switch (split) {
        case 1: return launch(sweep_kernel<T, 1>, kWarps);
        case 2: return launch(sweep_kernel<T, 2>, kWarps / 2);
        case 4: return launch(sweep_kernel<T, 4>, kWarps / 4);
        default: throw tut::Unsupported("warps per row: 1, 2 or 4");
    }
}

/// After a sweep: every GPU must hold every block of the new x (the next sweep reads all of
/// it) and the stopping test's values of every GPU. `xg_next` is the gathered vector
/// (parts blocks of `stride` elements: rows of the block, padding, then kStats values);
/// this GPU has written its own block, at rank * stride, and its values after it.
/// `stats` (3 values) is where the two-collective variant combines them.
template <class T>
void share(const tut::mg::Ranks& r, tut::mg::JorSharing sharing, T* xg_next, long long stride, T* stats) {
    // TODO(exercise): after this function every GPU must hold every GPU's block of the new
    //   x in xg_next, each at q * stride, and, for the stopping test, every GPU's three
    //   values: in one_collective mode right after each block (at q * stride + stride -
    //   kStats, where the sweep put this GPU's), in two_collectives mode as their maxima
    //   over the GPUs in `stats` (where the sweep put this GPU's own).
    //   The constraint: NCCL collectives are enqueued on r.stream like kernels, on the
    //   communicator r.nccl_comm, and every GPU must call the same ones in the same order
    //   (a GPU that calls another one, or none, leaves the others waiting forever). Every
    //   block travels as `stride` elements, whatever rows it really has.
    //   Hints: which collective makes n blocks of count elements into one array on every
    //   GPU, and can it work in place (NCCL's "In-place Operations")? What does a maximum
    //   need that a sum does not? Two collectives issued between ncclGroupStart() and
    //   ncclGroupEnd() are launched together. Check each call with TUT_NCCL.
    (void)r;
    (void)sharing;
    (void)xg_next;
    (void)stride;
    (void)stats;
}

}  // namespace lesson

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {

using lesson::kStats;

// Generates this GPU's rows of the JOR track's system on the GPU: one block per row, the
// off-diagonal entries and the row's sums in whole units of 2^-20 (exact, so the result
// is the same bits as tut::jor::make_system, in any order).
template <class T>
__global__ void generate_rows(T* A, T* b, long long first, long long rows, long long n, uint64_t seed) {
    __shared__ long long abs_sum[lesson::kThreads], ax[lesson::kThreads];
    const long long j = first + blockIdx.x;
    if (blockIdx.x >= rows) return;
    T* row = A + (long long)blockIdx.x * n;
    long long s = 0, p = 0;
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
        if (k == j) continue;
        const int64_t q = tut::jor::offdiag_units(seed, 0, j, k);
        row[k] = static_cast<T>(tut::jor::units_to_double(q));
        s += q < 0 ? -q : q;
        p += q * tut::jor::solution_units(seed, 0, k);
    }
    abs_sum[threadIdx.x] = s;
    ax[threadIdx.x] = p;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) {
            abs_sum[threadIdx.x] += abs_sum[threadIdx.x + h];
            ax[threadIdx.x] += ax[threadIdx.x + h];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const int64_t d = tut::jor::diagonal_units(seed, 0, j, abs_sum[0]);
        row[j] = static_cast<T>(tut::jor::units_to_double(d));
        b[blockIdx.x] = static_cast<T>(tut::jor::rhs_to_double(ax[0] + d * tut::jor::solution_units(seed, 0, j)));
    }
}

/// One GPU's share of a distributed JOR solve: its rows of A and b, the gathered x twice
/// (the current one, read by the sweep, and the next one it writes), the values of the
/// stopping test, the events that split compute from communication.
template <class T>
struct Jor {
    tut::mg::JorCall call;
    tut::mg::AlignedChunks part;
    lesson::Blocks blocks{};
    long long rows, stride;
    int warps_per_row = 1;  // of the sweep: lesson::sweep_warps_per_row of this GPU's rows
    tut::DeviceBuffer<T> A, b, xg[2], stats;
    T* host_stats = nullptr;  // pinned: the values of every block after a sweep
    cudaEvent_t start, begun, swept, shared, stop;  // the solve's start and end; one iteration's three marks

    explicit Jor(const tut::mg::JorCall& c)
        : call(c), part(size_t(c.n), c.ranks.parts, 4), rows(0), stride(0) {
        tut::jor::require_size(c.n);
        if (c.ranks.parts > lesson::kMaxParts) throw tut::Unsupported("at most 64 GPUs");
        blocks.parts = c.ranks.parts;
        for (int q = 0; q <= c.ranks.parts; ++q) blocks.begin[q] = q < c.ranks.parts ? part.begin(q) : c.n;
        long long longest = 0;
        for (int q = 0; q < c.ranks.parts; ++q) longest = std::max<long long>(longest, part.size(q));
        rows = part.size(c.ranks.rank);
        stride = longest + kStats;  // every block padded to the longest, kStats values after it
        const size_t element = sizeof(T);
        if (double(rows) * double(c.n) * element > 0.9 * double(tut::device_facts().global_memory_bytes))
            throw tut::Unsupported("N = " + std::to_string(c.n) + " does not fit this GPU's share");
        A = tut::DeviceBuffer<T>(size_t(std::max<long long>(rows, 1) * c.n));
        b = tut::DeviceBuffer<T>(size_t(std::max<long long>(rows, 1)));
        for (auto& x : xg) x = tut::DeviceBuffer<T>(size_t(stride * c.ranks.parts));
        stats = tut::DeviceBuffer<T>(3);
        warps_per_row = lesson::sweep_warps_per_row<T>(rows, c.warps_per_row);
        TUT_CUDA(cudaMallocHost(&host_stats, sizeof(T) * kStats * c.ranks.parts));
        if (rows > 0) {
            generate_rows<T><<<unsigned(rows), lesson::kThreads, 0, c.ranks.stream>>>(A.get(), b.get(), part.begin(c.ranks.rank),
                                                                                      rows, c.n, c.seed);
            TUT_LAUNCH("generate_rows");
        }
        for (cudaEvent_t* e : {&start, &begun, &swept, &shared, &stop}) TUT_CUDA(cudaEventCreate(e));
        TUT_CUDA(cudaStreamSynchronize(c.ranks.stream));
    }
    ~Jor() {
        cudaFreeHost(host_stats);
        for (cudaEvent_t e : {start, begun, swept, shared, stop}) cudaEventDestroy(e);
    }

    tut::mg::SolveOutcome solve() {
        const cudaStream_t s = call.ranks.stream;
        tut::mg::SolveOutcome out;
        const std::string who = "N = " + std::to_string(call.n) + ", rank " + std::to_string(call.ranks.rank) + " of " +
                                std::to_string(call.ranks.parts);
        for (auto& x : xg) TUT_CUDA(cudaMemsetAsync(x.get(), 0, x.bytes(), s));  // x = 0
        TUT_CUDA(cudaEventRecord(start, s));
        int cur = 0;
        while (out.iterations < call.max_iterations) {
            T* next = xg[1 - cur].get();
            T* mine_stats = call.sharing == tut::mg::JorSharing::one_collective
                                ? next + call.ranks.rank * stride + (stride - kStats) : stats.get();
            TUT_CUDA(cudaEventRecord(begun, s));
            TUT_CUDA(cudaMemsetAsync(mine_stats, 0, 3 * sizeof(T), s));
            lesson::sweep<T>(warps_per_row, A.get(), b.get(), xg[cur].get(), stride, blocks, call.ranks.rank, rows, call.n,
                             T(tut::jor::kAlpha), next + call.ranks.rank * stride, mine_stats, s);
            TUT_CUDA(cudaEventRecord(swept, s));
            lesson::share<T>(call.ranks, call.sharing, next, stride, stats.get());
            TUT_CUDA(cudaEventRecord(shared, s));
            // The stopping test: every GPU reads the same values, so every GPU decides the same.
            if (call.sharing == tut::mg::JorSharing::one_collective) {
                TUT_CUDA(cudaMemcpy2DAsync(host_stats, kStats * sizeof(T), next + stride - kStats, stride * sizeof(T),
                                           kStats * sizeof(T), call.ranks.parts, cudaMemcpyDeviceToHost, s));
            } else {
                TUT_CUDA(cudaMemcpyAsync(host_stats, stats.get(), 3 * sizeof(T), cudaMemcpyDeviceToHost, s));
            }
            tut::mg::progress_detail(who + ", sweep " + std::to_string(out.iterations + 1) + ": on the GPU (sweep, share())");
            TUT_CUDA(cudaStreamSynchronize(s));
            float ms = 0;
            TUT_CUDA(cudaEventElapsedTime(&ms, begun, swept));
            out.compute_ms += ms;
            TUT_CUDA(cudaEventElapsedTime(&ms, swept, shared));
            out.comm_ms += ms;
            ++out.iterations;
            cur = 1 - cur;
            const int blocks_read = call.sharing == tut::mg::JorSharing::one_collective ? call.ranks.parts : 1;
            double dx = 0, xm = 0;
            bool finite = true;
            for (int q = 0; q < blocks_read; ++q) {
                const T* v = host_stats + q * kStats;
                dx = std::max(dx, double(v[0]));
                xm = std::max(xm, double(v[1]));
                finite = finite && v[2] == T(0) && std::isfinite(double(v[0])) && std::isfinite(double(v[1]));
            }
            out.residual = xm > 0 ? dx / xm : dx;
            bool done = tut::jor::should_stop(tut::jor::StopRule::norm, call.tolerance, dx, 0.0, xm, finite);
            // Every rank must stop after the same sweep: one that stopped alone would leave the
            // others waiting in their next collective. A disagreement throws on every rank.
            if (call.ranks.parts > 1)
                done = tut::mg::agree_on_stop(*tut::mg::detail::current_world(), done, out.iterations, "JOR, " + who);
            if (done) {
                out.converged = true;
                break;
            }
        }
        TUT_CUDA(cudaEventRecord(stop, s));
        TUT_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        TUT_CUDA(cudaEventElapsedTime(&ms, start, stop));
        out.ms = ms;
        if (call.want_x) {
            std::vector<T> h(size_t(stride * call.ranks.parts));
            TUT_CUDA(cudaMemcpy(h.data(), xg[cur].get(), h.size() * sizeof(T), cudaMemcpyDeviceToHost));
            out.x.resize(size_t(call.n));
            for (int q = 0; q < call.ranks.parts; ++q)
                for (long long k = 0; k < blocks.begin[q + 1] - blocks.begin[q]; ++k)
                    out.x[size_t(blocks.begin[q] + k)] = double(h[size_t(q * stride + k)]);
        }
        return out;
    }

    Jor(const Jor&) = delete;
    Jor& operator=(const Jor&) = delete;
};

}  // namespace

namespace lesson {
/// One solve, for the checks: the system generated, solved once, the whole x returned.
tut::mg::SolveOutcome jor_solve_float(const tut::mg::JorCall& c) {
    Jor<float> jor(c);
    return jor.solve();
}
tut::mg::SolveOutcome jor_solve_double(const tut::mg::JorCall& c) {
    Jor<double> jor(c);
    return jor.solve();
}
}  // namespace lesson

namespace {

// The largest |x_j - x*_j| over the whole x (x* from the generator).
double max_error(const std::vector<double>& x, uint64_t seed) {
    double worst = 0;
    for (size_t j = 0; j < x.size(); ++j) {
        const double e = std::fabs(x[j] - tut::jor::units_to_double(tut::jor::solution_units(seed, 0, j)));
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

// Median over `repeats` solves (after one untimed) of this rank's time; the outcome of the
// median solve. The caller takes the largest over the ranks.
template <class T>
tut::mg::SolveOutcome time_solves(Jor<T>& jor, const tut::mg::World* world, int repeats) {
    jor.solve();
    std::vector<tut::mg::SolveOutcome> runs;
    for (int r = 0; r < std::max(1, repeats); ++r) {
        if (world) tut::mg::barrier(*world);
        runs.push_back(jor.solve());
    }
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.ms < b.ms; });
    return runs[runs.size() / 2];
}

// The one-GPU baseline: rank 0 alone, the whole system, the same code (one-rank NCCL
// communicator). Its time and its sweep's warps per row, on every rank.
struct OneGpu {
    double ms = 0;
    int warps_per_row = 0;
};
template <class T>
OneGpu one_gpu(const tut::mg::World& w, long long n, tut::mg::JorSharing sharing, int warps_per_row,
               const tut::RunOptions& run, cudaStream_t stream) {
    double got[2] = {0, 0};
    tut::mg::progress("03_jor: the one-GPU baseline at N = " + std::to_string(n) + " (rank 0 alone)");
    if (w.rank == 0) {
        tut::mg::RankLocal alone_section("03_jor: the one-GPU baseline at N = " + std::to_string(n));
        tut::mg::Nccl alone = tut::mg::Nccl::single();
        tut::mg::JorCall c;
        c.ranks = {0, 1, alone.comm, stream};
        c.n = n;
        c.sharing = sharing;
        c.tolerance = tut::jor::default_tolerance<T>();
        c.seed = uint64_t(run.seed);
        c.warps_per_row = warps_per_row;
        Jor<T> jor(c);
        got[0] = time_solves(jor, nullptr, run.repeats).ms;
        got[1] = jor.warps_per_row;
    }
    TUT_MPI(MPI_Bcast(got, 2, MPI_DOUBLE, 0, w.comm));
    return {got[0], int(got[1])};
}

/// One measurement of main()'s loop: an element type, a size, a way of sharing. check()
/// solves once and judges x against x* (converged, within the JOR track's error bound, on
/// every rank); time() times the solves and the one-GPU baseline. The system is generated
/// at the first call and freed after time().
struct Measured {
    tut::mg::SolveOutcome o;
    double ms = 0, compute = 0, comm = 0, one_gpu_ms = 0;  // largest over the ranks
    int warps_per_row = 0, one_gpu_warps_per_row = 0;       // of this rank's sweep; of the one-GPU sweep
};
struct Case {
    std::string variant;
    long long n = 0;
    size_t element = 0;
    std::function<std::string()> check;
    std::function<Measured()> time;
};

template <class T>
Case make_case(const tut::mg::World& w, tut::mg::Nccl& nccl, cudaStream_t stream, long long n,
               tut::mg::JorSharing sharing, int warps_per_row, const tut::RunOptions& run) {
    Case k;
    k.variant = std::string(tut::jor::type_name<T>()) + ", " + tut::mg::jor_sharing_name(sharing);
    k.n = n;
    k.element = sizeof(T);
    tut::mg::JorCall c;
    c.ranks = {w.rank, w.size, nccl.comm, stream};
    c.n = n;
    c.sharing = sharing;
    c.tolerance = tut::jor::default_tolerance<T>();
    c.seed = uint64_t(run.seed);
    c.want_x = run.check();
    c.warps_per_row = warps_per_row;
    auto jor = std::make_shared<std::unique_ptr<Jor<T>>>();
    auto system = [jor, c]() -> Jor<T>& {
        if (!*jor) *jor = std::make_unique<Jor<T>>(c);
        return **jor;
    };
    k.check = [system, c, &w, n, variant = k.variant]() {
        tut::mg::progress("03_jor: " + variant + ", N = " + std::to_string(n) + ": the checked solve");
        const tut::mg::SolveOutcome o = system().solve();
        const double err = max_error(o.x, c.seed);
        const double bound = tut::jor::error_bound(0.82, c.tolerance, n, tut::jor::kAlpha, tut::jor::unit_roundoff<T>(), 1.01);
        return tut::mg::first_message(w, !o.converged ? "did not converge"
                                         : err > bound ? tut::fmt("max |x - x*| = %.3g > %.3g", err, bound) : "");
    };
    k.time = [system, jor, &w, n, sharing, warps_per_row, &run, stream, variant = k.variant]() {
        Measured m;
        tut::mg::progress("03_jor: " + variant + ", N = " + std::to_string(n) + ": timed solves");
        {
            tut::NvtxRange range("multigpu/03_jor/" + variant);
            m.o = time_solves(system(), &w, run.repeats);
        }
        m.warps_per_row = system().warps_per_row;
        jor->reset();  // free this size's A before the one-GPU baseline takes the whole of it
        m.ms = tut::mg::max_over_ranks(w, m.o.ms);
        m.compute = tut::mg::max_over_ranks(w, m.o.compute_ms);
        m.comm = tut::mg::max_over_ranks(w, m.o.comm_ms);
        const OneGpu one = w.size == 1 ? OneGpu{m.ms, m.warps_per_row} : one_gpu<T>(w, n, sharing, warps_per_row, run, stream);
        m.one_gpu_ms = one.ms;
        m.one_gpu_warps_per_row = one.warps_per_row;
        return m;
    };
    return k;
}

/// Every measurement, in the table's order: float then double, each size, each way of sharing.
std::vector<Case> cases(const tut::mg::World& w, tut::mg::Nccl& nccl, cudaStream_t stream,
                        const std::vector<long long>& sizes, const std::string& type, int warps_per_row,
                        const tut::RunOptions& run) {
    std::vector<Case> all;
    for (long long n : sizes)
        for (auto sharing : {tut::mg::JorSharing::two_collectives, tut::mg::JorSharing::one_collective}) {
            if (type != "double") all.push_back(make_case<float>(w, nccl, stream, n, sharing, warps_per_row, run));
        }
    for (long long n : sizes)
        for (auto sharing : {tut::mg::JorSharing::two_collectives, tut::mg::JorSharing::one_collective}) {
            if (type != "float") all.push_back(make_case<double>(w, nccl, stream, n, sharing, warps_per_row, run));
        }
    return all;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<long long> sizes{16384, 32768};
    std::string type = "all";
    std::string warps = "auto";
    bool small = false;
    tut::RunOptions run;
    run.repeats = 5;
    tut::Cli cli("jor", "dense JOR with its rows split between GPUs: all-gather of x, the stopping test all-reduced");
    cli.add_int_list("sizes", &sizes, "N values", 1, tut::jor::kMaxN);
    cli.add_string("type", &type, "element type", {"float", "double", "all"});
    cli.add_string("warps-per-row", &warps, "warps per row of the sweep, on every GPU and in the one-GPU baseline (auto: "
                   "from the GPU's rows and the warps it holds at once)", {"auto", "1", "2", "4"});
    cli.add_flag("small", &small, "N = 1000 and 1001 only (quick runs, sanitizer)");
    tut::add_run_options(cli, run);
    cli.parse_or_exit(argc, argv);
    tut::finish_run_options(run);
    if (small) sizes = {1000, 1001};
    const int warps_per_row = warps == "auto" ? 0 : std::stoi(warps);
    std::vector<std::string> names;
    for (const char* t : {"float", "double"})
        for (auto sharing : {tut::mg::JorSharing::two_collectives, tut::mg::JorSharing::one_collective})
            names.push_back(std::string(t) + ", " + tut::mg::jor_sharing_name(sharing));
    if (!tut::variant_is_known("jor", run.variant, names)) return tut::kUsageExitCode;

    tut::mg::Mpi mpi(argc, argv);
    const tut::mg::World& world = mpi.world();
    return tut::mg::guarded(world, "jor", [&] {
        tut::mg::Nccl nccl(world);
        cudaStream_t stream;
        TUT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        if (world.root())
            std::printf("%d GPU(s), one process each | NCCL %s | strong scaling: N fixed, rows split\n", world.size,
                        tut::mg::nccl_version_text().c_str());
        tut::Table table({"variant", "N", "warps/row", "sweeps", "ms", "us/sweep", "compute", "comm", "GB/s", "1 GPU ms",
                          "speedup", "efficiency"});
        const double dram = tut::device_facts(world.device).dram_peak_gbs;
        for (Case& k : cases(world, nccl, stream, sizes, type, warps_per_row, run)) {
            if (!run.variant.empty() && k.variant != run.variant) continue;
            if (const std::string wrong = run.check() ? k.check() : ""; !wrong.empty())
                throw tut::CudaError(k.variant + " at N = " + std::to_string(k.n) + ": " + wrong);
            const Measured m = k.time();
            const int it = m.o.iterations;
            const double bytes = tut::jor::floor_bytes_per_iteration(k.n, k.element) * it;
            tut::Record r = tut::mg::make_record("03_jor", k.variant, std::to_string(k.n), world.size);
            r.value = bytes / (m.ms * 1e-3) * 1e-9;
            r.unit = "GB/s";
            r.time_ms = m.ms;
            r.library = tut::fmt("the same lesson on 1 GPU, x %d", world.size);
            r.library_value = world.size * bytes / (m.one_gpu_ms * 1e-3) * 1e-9;
            r.peak = tut::fmt("DRAM peak x %d", world.size);
            r.peak_value = dram * world.size;
            r.checked = run.check();
            r.extra.add("iterations", it);
            r.extra.add("us_per_iter", 1e3 * m.ms / it);
            r.extra.add("compute_us_per_iter", 1e3 * m.compute / it);
            r.extra.add("comm_us_per_iter", 1e3 * m.comm / it);
            r.extra.add("type", k.element == sizeof(float) ? "float" : "double");
            r.extra.add("warps_per_row", m.warps_per_row);
            r.extra.add("one_gpu_warps_per_row", m.one_gpu_warps_per_row);
            tut::mg::add_scaling(r, tut::mg::Scaling::strong, m.one_gpu_ms, m.ms, world.size);
            if (!world.root()) continue;
            tut::append_record("jor", run.json, r);
            table.add_row({k.variant, std::to_string(k.n),
                           tut::fmt("%d (1 GPU: %d)", m.warps_per_row, m.one_gpu_warps_per_row), std::to_string(it), tut::fmt("%.2f", m.ms),
                           tut::fmt("%.0f", 1e3 * m.ms / it), tut::fmt("%.0f", 1e3 * m.compute / it),
                           tut::fmt("%.0f", 1e3 * m.comm / it), tut::fmt("%.0f", r.value), tut::fmt("%.2f", m.one_gpu_ms),
                           tut::fmt("%.2fx", m.one_gpu_ms / m.ms), tut::percent(r.ratio_to_library())});
        }
        if (world.root()) {
            std::printf("\nJOR on %d GPU(s); us per sweep split into the sweep (compute) and the collectives (comm, "
                        "which includes waiting for the slowest GPU)\n", world.size);
            table.print();
        }
        TUT_CUDA(cudaStreamDestroy(stream));
        return 0;
    });
}
