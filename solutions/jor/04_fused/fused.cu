// jor/04_fused: one kernel per sweep: the sum, the update and the convergence values.
// Starts from: lesson 02's warp-per-row loads. Adds: the fused sweep. Lessons 01-03 launch
// three kernels per sweep and write the sums out only for the next kernel to read them
// back: at small N the launches, not the bytes, are the time. Here the warp that sums a
// row also updates x_j and folds |dx_j| and |x_j| into its block's maxima; one atomicMax
// per block and value adds those into the sweep's slot (SweepSlot: the bits of
// non-negative doubles order like the values). x is double-buffered: the sweep reads
// x_old and writes x_new, so no block sees a half-updated x. The host still copies the
// slot back after each sweep.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/jor/04_fused/fused.cu -o fused
// Run:  ./fused                    (--help for options; --sizes 8192 --type float for one size)
//
// Kernels and variants:
//   block_maxima_to_slot   the block's max |dx| and max |x| into the sweep's slot, one
//                          atomicMax per value (the exercise)
//   fused_sweep     warp per row: the row's sum (lesson 02's warp_offdiag_sums), x_new, then
//                   block_maxima_to_slot
//   FusedSolver     per sweep: one launch, one 16-byte copy back
//   variants "three launches" (lesson 02's sweep, the baseline, in the harness: per sweep
//            offdiag_sums_warp_rows, update_x, sweep_stats and a copy back) and "fused"
// Shared: warp_offdiag_sums (tut/jor_rows.cuh), warp_max and SweepSlot (tut/jor_slot.cuh),
// update_x, sweep_stats, lessons 01-03's sweep loop and the generator (tut/jor_device.cuh).
// The harness below the divider: the baseline, Options, Report and Problem (tut/jor_gpu.hpp).
#include "tut/jor_device.cuh"
#include "tut/jor_gpu.hpp"
#include "tut/jor_rows.cuh"
#include "tut/jor_slot.cuh"

#include <memory>
#include <utility>
#include <vector>

namespace {

constexpr int kThreads = 256;  // 8 warps, one row each; on an H100 4 blocks (32 warps) per SM
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "a block is whole warps, one row each, at most 32 of them");

// The block's largest dx and x into *slot: a warp reduction by shuffles, the warps' results
// through shared memory, then one atomicMax per value from thread 0 (on the bits: see
// tut::jor::SweepSlot). Every thread of the block calls it.
__device__ void block_maxima_to_slot(double dx, double x_abs, tut::jor::SweepSlot* slot) {
    __shared__ double dx_part[kThreads / 32], x_part[kThreads / 32];
    if (!(dx == dx) || !(x_abs == x_abs)) dx = INFINITY;  // fmax drops a NaN: keep it as "not finite"
    dx = tut::jor::warp_max(dx);
    x_abs = tut::jor::warp_max(x_abs);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
        dx_part[warp] = dx;
        x_part[warp] = x_abs;
    }
    __syncthreads();
    if (warp == 0) {
        dx = tut::jor::warp_max(lane < kThreads / 32 ? dx_part[lane] : 0.0);
        x_abs = tut::jor::warp_max(lane < kThreads / 32 ? x_part[lane] : 0.0);
        if (lane == 0) {
            atomicMax(&slot->dx_max_bits, static_cast<unsigned long long>(__double_as_longlong(dx)));
            atomicMax(&slot->x_max_bits, static_cast<unsigned long long>(__double_as_longlong(x_abs)));
        }
    }
}

// One sweep: warp w updates row w; the block's maxima go to *slot.
template <class T>
__global__ void __launch_bounds__(kThreads, tut::jor::sweep_blocks_per_sm(kThreads))
    fused_sweep(const T* __restrict__ A, const T* __restrict__ diagonal, const T* __restrict__ b, const T* x_old,
                T* x_new, int n, T alpha, tut::jor::SweepSlot* slot) {
    const int row = blockIdx.x * (kThreads / 32) + threadIdx.x / 32;
    double dx = 0.0, x_abs = 0.0;
    if (row < n) {  // the same for the whole warp: its shuffles need all 32 lanes
        T sum[1];
        tut::jor::warp_offdiag_sums<T, 1>(A, x_old, n, row, sum);
        if (threadIdx.x % 32 == 0) {
            const T x = (T(1) - alpha) * x_old[row] + alpha / diagonal[row] * (b[row] - sum[0]);
            x_new[row] = x;
            dx = fabs(double(x) - double(x_old[row]));
            x_abs = fabs(double(x));
        }
    }
    block_maxima_to_slot(dx, x_abs, slot);  // every thread of the block, rows or not
}

template <class T>
class FusedSolver : public tut::jor::Solver<T> {
  public:
    FusedSolver(const tut::jor::DeviceSystem<T>& sys, const tut::jor::SolveOptions& opt)
        : sys_(sys), opt_(opt), x_work_(static_cast<size_t>(sys.n)),
          slots_(static_cast<size_t>(opt.max_iterations)) {}

    tut::jor::SolveResult solve(T* x) override {
        const int n = sys_.n, blocks = (n + kThreads / 32 - 1) / (kThreads / 32);
        T* x_old = x;
        T* x_new = x_work_.get();
        TUT_CUDA(cudaMemset(x_old, 0, size_t(n) * sizeof(T)));
        TUT_CUDA(cudaMemset(slots_.get(), 0, slots_.bytes()));  // every sweep's maxima start at 0
        tut::jor::SolveResult result;
        for (int it = 0; it < opt_.max_iterations; ++it) {
            fused_sweep<T><<<blocks, kThreads>>>(sys_.A.get(), sys_.diagonal.get(), sys_.b.get(), x_old, x_new, n,
                                                 T(opt_.alpha), slots_.get() + it);
            TUT_LAUNCH("fused_sweep");
            tut::jor::SweepSlot slot;
            TUT_CUDA(cudaMemcpy(&slot, slots_.get() + it, sizeof slot, cudaMemcpyDeviceToHost));
            std::swap(x_old, x_new);
            result.iterations = it + 1;
            result.last = tut::jor::to_host(slot);
            if (tut::jor::slot_says_stop(slot, opt_.tolerance)) {
                result.converged = true;
                break;
            }
        }
        if (x_old != x) TUT_CUDA(cudaMemcpy(x, x_old, size_t(n) * sizeof(T), cudaMemcpyDeviceToDevice));
        return result;
    }

    double matrix_bytes() const override { return double(sys_.n) * double(sys_.n) * sizeof(T); }

  private:
    const tut::jor::DeviceSystem<T>& sys_;
    tut::jor::SolveOptions opt_;
    tut::DeviceBuffer<T> x_work_;
    tut::DeviceBuffer<tut::jor::SweepSlot> slots_;
};

template <class T>
std::unique_ptr<tut::jor::Solver<T>> make_fused(const tut::jor::DeviceSystem<T>& sys, const tut::jor::SolveOptions& opt) {
    tut::jor::require_options(opt);
    return std::make_unique<FusedSolver<T>>(sys, opt);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {

// The baseline, "three launches": lesson 02's sweep at this lesson's sizes, timed in the same
// run. Warp w writes row w's sum to memory (lesson 02's loads, as warp_offdiag_sums), then
// update_x reads the sums back, sweep_stats (one block) reduces x_old and x_new, and the host
// copies the stats back and decides (tut::jor::solve_sweep_by_sweep, lessons 01-03's loop).
template <class T>
__global__ void __launch_bounds__(kThreads, tut::jor::sweep_blocks_per_sm(kThreads))
    offdiag_sums_warp_rows(const T* __restrict__ A, const T* __restrict__ x, T* __restrict__ sums, int n) {
    const int row = blockIdx.x * (kThreads / 32) + threadIdx.x / 32;
    if (row >= n) return;  // whole warps leave: the row's shuffles need all 32 lanes
    T sum[1];
    tut::jor::warp_offdiag_sums<T, 1>(A, x, n, row, sum);
    if (threadIdx.x % 32 == 0) sums[row] = sum[0];
}

template <class T>
class ThreeLaunchSolver : public tut::jor::Solver<T> {
  public:
    ThreeLaunchSolver(const tut::jor::DeviceSystem<T>& sys, const tut::jor::SolveOptions& opt)
        : sys_(sys), opt_(opt), x_work_(static_cast<size_t>(sys.n)), sums_(static_cast<size_t>(sys.n)), stats_(1) {}

    tut::jor::SolveResult solve(T* x) override {
        const int n = sys_.n, blocks = (n + kThreads / 32 - 1) / (kThreads / 32);
        return tut::jor::solve_sweep_by_sweep(
            n, opt_, x, x_work_.get(), stats_.get(),
            [&](const T* x_old) {
                offdiag_sums_warp_rows<T><<<blocks, kThreads>>>(sys_.A.get(), x_old, sums_.get(), n);
                TUT_LAUNCH("offdiag_sums_warp_rows");
            },
            [&](const T* x_old, T* x_new) { tut::jor::launch_update_x(sys_, sums_.get(), x_old, x_new, opt_.alpha); });
    }

    double matrix_bytes() const override { return double(sys_.n) * double(sys_.n) * sizeof(T); }

  private:
    const tut::jor::DeviceSystem<T>& sys_;
    tut::jor::SolveOptions opt_;
    tut::DeviceBuffer<T> x_work_, sums_;
    tut::DeviceBuffer<tut::jor::DeviceSweepStats> stats_;
};

template <class T>
std::unique_ptr<tut::jor::Solver<T>> make_three_launches(const tut::jor::DeviceSystem<T>& sys,
                                                         const tut::jor::SolveOptions& opt) {
    tut::jor::require_options(opt);
    return std::make_unique<ThreeLaunchSolver<T>>(sys, opt);
}

}  // namespace

namespace lesson {
// The baseline first: the table shows the previous lesson's approach, then the lesson's.
tut::jor::Variants variants() {
    tut::jor::Variants v;
    v.floats = {{"three launches", make_three_launches<float>}, {"fused", make_fused<float>}};
    v.doubles = {{"three launches", make_three_launches<double>}, {"fused", make_fused<double>}};
    return v;
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"jor", "04_fused",
                                 "one kernel per sweep: the sum, the update and the convergence values"};
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
