// wrong: jor/02_warp_rows: every variant launches lesson 01's product: a block of 128 threads per row, 4- or 8-byte loads and a shared-memory tree
// caught by: [performance]
// kind: previous-lesson
// Solves right, at lesson 01's speed: the gate on '1 row per warp' at N = 4096 sits between
// lesson 01's share of the bandwidth floor and this lesson's.
// jor/02_warp_rows: a bandwidth-bound GEMV: a warp per rows, 16-byte streaming loads, shuffles.
// Starts from: lesson 01's solve (three kernels and a copy per sweep). Adds: a product that
// keeps more of A's bytes in flight. Lesson 01 gave each row a block of 128 threads, a
// shared-memory tree and 4- or 8-byte loads; at N = 8192 a sweep reads 256 MB of float A,
// and what limits it is how many of those bytes are in flight. Here a warp takes kRows
// rows at once: each lane loads 16 bytes of a row per step (float4, double2), so a warp's
// load is 512 contiguous bytes, one 16-byte load of x serves kRows rows, the sums are
// added across the warp with shuffles instead of shared memory, and A, read once per
// sweep, is loaded with the streaming hint (__ldcs: evict first) so x stays cached.
// kLoads steps of each row are loaded before any is used: more bytes in flight per warp,
// paid for in registers (4 per 16-byte load), so fewer blocks fit on an SM.
// The rest of the sweep is lesson 01's: update_x, sweep_stats, one copy back.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/jor/02_warp_rows/warp_rows.cu -o warp_rows
// Run:  ./warp_rows                (--help for options; --sizes 8192 --type float for one size)
//
// Kernels and variants:
//   offdiag_sums_warp_rows   warp w: the off-diagonal sums of rows kRows w ... kRows w + kRows - 1;
//                            16-byte loads when N is a multiple of the vector width, else
//                            a scalar loop (the exercise: the vector loop and the warp sum)
//   WarpRowsSolver           per sweep: the sums, update_x, sweep_stats, one copy back
//   variants "1 row per warp" (one 16-byte load in flight per lane, 32 registers, every
//            warp slot); "2 rows per warp", "4 rows per warp" and "1 row per warp, 4 loads
//            in flight" (2 or 4 loads, 64 registers, half the warp slots)
// Shared (tut/jor_device.cuh): Vec16 (the 16-byte vector of T), update_x, sweep_stats, the
// sweep loop, the generator.
// The harness below the divider: Options, Report and Problem (tut/jor_gpu.hpp).
#include "tut/jor_device.cuh"
#include "tut/jor_gpu.hpp"

#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kThreads = 256;  // 8 warps per block
constexpr int kWarps = kThreads / 32;
static_assert(kThreads % 32 == 0, "a block is whole warps: each warp takes its own rows");

// The off-diagonal sums of rows kRows w, ..., kRows w + kRows - 1 by warp w, into sums.
// The launch bounds follow a lane's 16-byte loads in flight per step, kRows x kLoads, 4
// registers each: one fits 32 registers and every warp slot of the SM; more get 64
// registers and half the blocks (tut::jor::blocks_per_sm_for_loads).
template <class T, int kRows, int kLoads>
__global__ void __launch_bounds__(kThreads, tut::jor::blocks_per_sm_for_loads(kThreads, kRows * kLoads))
    offdiag_sums_warp_rows(const T* __restrict__ A, const T* __restrict__ x, T* __restrict__ sums, int n) {
    using V = typename tut::jor::Vec16<T>::type;
    constexpr int kWidth = tut::jor::Vec16<T>::width;
    const int warp = blockIdx.x * kWarps + threadIdx.x / 32, lane = threadIdx.x % 32;
    const int first_row = warp * kRows;
    if (first_row >= n) return;  // whole warps leave: the shuffles below need all 32 lanes
    T sum[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) sum[r] = T(0);
    if (n % kWidth == 0) {  // every row starts on a 16-byte boundary
        const int vectors = n / kWidth;
        const V* xv = reinterpret_cast<const V*>(x);
        const V* rows[kRows];  // a warp's rows past N read row N - 1 (in bounds, never stored)
#pragma unroll
        for (int r = 0; r < kRows; ++r) rows[r] = reinterpret_cast<const V*>(A + size_t(min(first_row + r, n - 1)) * size_t(n));
        int c = lane;
        // Whole steps: all kRows x kLoads loads are issued before any value is used, and
        // none sits behind a branch, so they are in flight together.
        for (; c + 32 * (kLoads - 1) < vectors; c += 32 * kLoads) {
            V a[kRows][kLoads];
#pragma unroll
            for (int r = 0; r < kRows; ++r)
#pragma unroll
                for (int u = 0; u < kLoads; ++u) a[r][u] = __ldcs(rows[r] + c + 32 * u);
#pragma unroll
            for (int u = 0; u < kLoads; ++u) {
                const V xc = xv[c + 32 * u];
#pragma unroll
                for (int r = 0; r < kRows; ++r) {
                    const int row = first_row + r;
                    if (c + 32 * u == row / kWidth) a[r][u] = tut::jor::Vec16<T>::drop(a[r][u], row % kWidth);  // not the diagonal
                    sum[r] += tut::jor::Vec16<T>::dot(a[r][u], xc);
                }
            }
        }
        for (; c < vectors; c += 32) {  // the rest of the row, one vector at a time (kLoads > 1 only)
            const V xc = xv[c];
#pragma unroll
            for (int r = 0; r < kRows; ++r) {
                const int row = first_row + r;
                V a = __ldcs(rows[r] + c);
                if (c == row / kWidth) a = tut::jor::Vec16<T>::drop(a, row % kWidth);
                sum[r] += tut::jor::Vec16<T>::dot(a, xc);
            }
        }
    } else {
        for (int k = lane; k < n; k += 32) {
            const T xk = x[k];
#pragma unroll
            for (int r = 0; r < kRows; ++r) {
                const int row = first_row + r;
                if (row >= n) break;
                if (k != row) sum[r] += __ldcs(A + size_t(row) * size_t(n) + k) * xk;
            }
        }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
        for (int offset = 16; offset > 0; offset /= 2) sum[r] += __shfl_down_sync(0xffffffffu, sum[r], offset);
        if (lane == 0 && first_row + r < n) sums[first_row + r] = sum[r];
    }
}

// Lesson 01's product: block j sums row j, thread t taking columns t, t + 128, ..., then a
// shared-memory tree.
constexpr int kRowThreads = 128;
template <class T>
__global__ void offdiag_sums_block_per_row(const T* __restrict__ A, const T* __restrict__ x, T* __restrict__ sums,
                                           int n) {
    __shared__ T partial[kRowThreads];
    const int j = blockIdx.x, t = threadIdx.x;
    const size_t row_start = size_t(j) * size_t(n);
    T s = T(0);
    for (int k = t; k < n; k += kRowThreads)
        if (k != j) s += A[row_start + k] * x[k];
    partial[t] = s;
    __syncthreads();
    for (int half = kRowThreads / 2; half > 0; half /= 2) {
        if (t < half) partial[t] += partial[t + half];
        __syncthreads();
    }
    if (t == 0) sums[j] = partial[0];
}

template <class T, int kRows, int kLoads>
class WarpRowsSolver : public tut::jor::Solver<T> {
  public:
    WarpRowsSolver(const tut::jor::DeviceSystem<T>& sys, const tut::jor::SolveOptions& opt)
        : sys_(sys), opt_(opt), x_work_(static_cast<size_t>(sys.n)), sums_(static_cast<size_t>(sys.n)), stats_(1) {}

    tut::jor::SolveResult solve(T* x) override {
        return tut::jor::solve_sweep_by_sweep(
            sys_.n, opt_, x, x_work_.get(), stats_.get(), [&](const T* x_old) { launch_sums(x_old); },
            [&](const T* x_old, T* x_new) { tut::jor::launch_update_x(sys_, sums_.get(), x_old, x_new, opt_.alpha); });
    }

    double matrix_bytes() const override { return double(sys_.n) * double(sys_.n) * sizeof(T); }

    bool gemv_once() override {
        launch_sums(x_work_.get());
        return true;
    }

  private:
    void launch_sums(const T* x_old) {
        offdiag_sums_block_per_row<T><<<sys_.n, kRowThreads>>>(sys_.A.get(), x_old, sums_.get(), sys_.n);
        TUT_LAUNCH("offdiag_sums_block_per_row");
    }

    const tut::jor::DeviceSystem<T>& sys_;
    tut::jor::SolveOptions opt_;
    tut::DeviceBuffer<T> x_work_, sums_;
    tut::DeviceBuffer<tut::jor::DeviceSweepStats> stats_;
};

template <class T, int kRows, int kLoads>
std::unique_ptr<tut::jor::Solver<T>> make_warp_rows(const tut::jor::DeviceSystem<T>& sys,
                                                    const tut::jor::SolveOptions& opt) {
    tut::jor::require_options(opt);
    return std::make_unique<WarpRowsSolver<T, kRows, kLoads>>(sys, opt);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
tut::jor::Variants variants() {
    tut::jor::Variants v;
    v.floats = {{"1 row per warp", make_warp_rows<float, 1, 1>},
                {"2 rows per warp", make_warp_rows<float, 2, 1>},
                {"4 rows per warp", make_warp_rows<float, 4, 1>},
                {"1 row per warp, 4 loads in flight", make_warp_rows<float, 1, 4>}};
    v.doubles = {{"1 row per warp", make_warp_rows<double, 1, 1>},
                 {"2 rows per warp", make_warp_rows<double, 2, 1>},
                 {"4 rows per warp", make_warp_rows<double, 4, 1>},
                 {"1 row per warp, 4 loads in flight", make_warp_rows<double, 1, 4>}};
    return v;
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"jor", "02_warp_rows",
                                 "a bandwidth-bound GEMV: a warp per rows, 16-byte streaming loads, shuffles"};
    const tut::jor::Variants variants = lesson::variants();
    tut::jor::Options options(lesson);  // --sizes, --matrices, --type, --tol, --alpha, --max-iter, --share, ...
    options.parse(argc, argv, variants);
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        tut::jor::Report report(bench, options, tut::jor::measure_read_bandwidth_gbs());  // the floor's bandwidth
        // Per size, variant and matrix: check a solve, time the solves by the host clock (the
        // launches and copies of a solve are part of its cost), check the last of them.
        auto measure = [&](auto&& problem, const auto& list) {
            for (long long n : options.sizes)
                for (const auto& v : list) {
                    if (!bench.runs(v)) continue;
                    for (int m = 0; m < options.matrices; ++m) {
                        problem.set_up(v, n, m);  // matrix m of size n, generated on the GPU; v's solver
                        const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(); });
                        const tut::Timing timing = bench.time_host(v.name, [&] { problem.solve(); }, problem.timing());
                        const tut::Verdict last = bench.check(v.name, [&] { return problem.check_last(); });
                        problem.add(timing, verdict, last);  // matrix 0: also the copy of A, the GEMV alone
                    }
                }
            for (const tut::Result& r : problem.results()) report.table.add_row(bench.record(r));
        };
        if (options.runs<float>()) measure(tut::jor::Problem<float>(options, report), variants.floats);
        if (options.runs<double>()) measure(tut::jor::Problem<double>(options, report), variants.doubles);
        report.print();
        return bench.exit_code();
    });
}
