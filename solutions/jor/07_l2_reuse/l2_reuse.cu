// jor/07_l2_reuse: keep part of A in L2 from one sweep to the next.
// Starts from: lesson 06's persistent kernel. Adds: a plan for L2 across the sweeps. Every
// sweep reads all of A in the same order; where A is larger than L2, a cache that evicts the
// least recently used lines has lost the start of A by the time the next sweep wants it, so
// every sweep reads all of A from DRAM. A kernel that owns every sweep can do better, two
// ways: set a share of L2 aside for A (an access-policy window: cudaLimitPersistingL2CacheSize
// and a window with hitRatio = carve-out / window bytes, so that the lines that persist fit),
// or turn round (odd sweeps walk A backwards, starting on the lines the previous sweep read
// last). Both load A with the default cache policy: the evict-first hint of lessons 02 to 06
// would hand L2 exactly the lines the next sweep wants.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/jor/07_l2_reuse/l2_reuse.cu -o l2_reuse
// Run:  ./l2_reuse                 (--help for options; --sizes 4096 --type float for one size)
//
// Kernels and variants:
//   lesson::plan_l2_window  the window over A and the L2 it sets aside (the exercise)
//   persistent_jor          lesson 06's loop; per policy, how each sweep reads A
//                           (the exercise: the load policy and the direction of each sweep)
//   PersistentSolver        sets the carve-out aside while it lives, launches with the window
//                           (the exercise: set aside, launch with it, give it back)
//   variants "persistent" (lesson 06's: A with the evict-first hint, no plan), "L2 window",
//   "alternating direction"
// Shared: sweep_rows (tut/jor_rows.cuh), record_sweep, SweepSlot and the end of the solve
// (tut/jor_record.cuh), the generator (tut/jor_device.cuh), the launch (tut/cooperative.hpp),
// the plan's types (tut/jor_l2_plan.hpp).
// The harness below the divider: Options, Report and Problem (tut/jor_gpu.hpp).
#include "tut/cooperative.hpp"
#include "tut/jor_device.cuh"
#include "tut/jor_gpu.hpp"
#include "tut/jor_l2_plan.hpp"
#include "tut/jor_record.cuh"
#include "tut/jor_rows.cuh"

#include <cooperative_groups.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace coop = cooperative_groups;

namespace lesson {

// A window over the first bytes of the `bytes` at `base`: as many as a window may span; the
// share of them that the carve-out can hold marked persisting, so that the persisting lines
// fit it and stay from sweep to sweep (all of them where they fit), the rest streaming past.
tut::jor::L2Plan plan_l2_window(const void* base, size_t bytes, const tut::jor::L2Limits& limits) {
    tut::jor::L2Plan plan;
    if (limits.max_persisting == 0 || limits.max_window == 0 || bytes == 0) return plan;
    const size_t span = std::min(bytes, limits.max_window);
    plan.set_aside = std::min(span, limits.max_persisting);
    plan.window.base_ptr = const_cast<void*>(base);
    plan.window.num_bytes = span;
    // Which accesses get the persisting property is the hardware's choice; the ratio says how
    // many. Ratio 1 on a window larger than the carve-out would have its lines evict each other.
    plan.window.hitRatio = float(double(plan.set_aside) / double(span));
    plan.window.hitProp = cudaAccessPropertyPersisting;
    plan.window.missProp = cudaAccessPropertyStreaming;
    return plan;
}

}  // namespace lesson

namespace {

constexpr int kThreads = 256;  // 8 warps; the grid's warps take the rows in turn
static_assert(kThreads % 32 == 0, "a block is whole warps, one row at a time each");

template <class T>
struct Args {
    const T* A;
    const T* diagonal;
    const T* b;
    T* x0;  // sweep it reads x0 and writes x1 when it is even, the other way round when odd
    T* x1;
    int n;
    T alpha;
    double tolerance;
    int max_iterations;
    tut::jor::SweepSlot* slots;  // one per sweep, zeroed before the launch
    int* iterations;             // written once, by thread 0 of the grid
};

// How the sweeps read A: lesson 06's way (stream: the evict-first hint), under an L2
// access-policy window (window), or every other sweep walking A backwards (alternate).
enum class Policy { stream, window, alternate };

template <class T, Policy kPolicy>
__global__ void __launch_bounds__(kThreads, tut::jor::sweep_blocks_per_sm(kThreads)) persistent_jor(Args<T> a) {
    coop::grid_group grid = coop::this_grid();
    for (int it = 0; it < a.max_iterations; ++it) {
        const T* x_old = it % 2 ? a.x1 : a.x0;
        T* x_new = it % 2 ? a.x0 : a.x1;
        double dx = 0.0, x_abs = 0.0;
        // Evict-first only where nothing is meant to stay: under the window the hint would
        // contradict it, and turning round needs the last lines read to be the last evicted.
        constexpr bool kStreamA = kPolicy == Policy::stream;
        // Odd sweeps turn round, so every sweep starts where its predecessor ended.
        const bool backwards = kPolicy == Policy::alternate && it % 2 == 1;
        tut::jor::sweep_rows<T, kStreamA>(a.A, a.diagonal, a.b, x_old, x_new, a.n, a.alpha, dx, x_abs, backwards);
        tut::jor::record_sweep(dx, x_abs, a.slots + it);
        grid.sync();  // every block's rows and atomics of sweep it are done and visible
        // Lesson 06's decision: every thread reads the finished slot from L2 and decides alike.
        tut::jor::SweepSlot s;
        s.dx_max_bits = __ldcg(&a.slots[it].dx_max_bits);
        s.x_max_bits = __ldcg(&a.slots[it].x_max_bits);
        if (tut::jor::slot_says_stop(s, a.tolerance) || it + 1 == a.max_iterations) {
            if (grid.thread_rank() == 0) *a.iterations = it + 1;
            return;
        }
    }
}

// The GPU's limits for plan_l2_window.
tut::jor::L2Limits l2_limits() {
    int device = 0, max_persisting = 0, max_window = 0;
    TUT_CUDA(cudaGetDevice(&device));
    TUT_CUDA(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device));
    TUT_CUDA(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device));
    return {size_t(std::max(max_persisting, 0)), size_t(std::max(max_window, 0))};
}

template <class T, Policy kPolicy>
class PersistentSolver : public tut::jor::Solver<T> {
  public:
    PersistentSolver(const tut::jor::DeviceSystem<T>& sys, const tut::jor::SolveOptions& opt)
        : sys_(sys), opt_(opt), x_work_(static_cast<size_t>(sys.n)), slots_(static_cast<size_t>(opt.max_iterations)),
          iterations_(1) {
        const int needed = (sys.n + kThreads / 32 - 1) / (kThreads / 32);  // a warp per row
        blocks_ = tut::cooperative_grid(persistent_jor<T, kPolicy>, kThreads, needed);
        if (kPolicy == Policy::window) {
            plan_ = lesson::plan_l2_window(sys_.A.get(), sys_.A.bytes(), l2_limits());
            // The carve-out is taken from the L2 everything else uses, for as long as this
            // solver lives.
            if (plan_.set_aside) TUT_CUDA(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, plan_.set_aside));
        }
    }
    ~PersistentSolver() override {
        if (plan_.set_aside) {  // give the set-aside L2 back (no throwing from a destructor)
            (void)cudaCtxResetPersistingL2Cache();
            (void)cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
        }
    }
    PersistentSolver(const PersistentSolver&) = delete;
    PersistentSolver& operator=(const PersistentSolver&) = delete;

    tut::jor::SolveResult solve(T* x) override {
        const int n = sys_.n;
        TUT_CUDA(cudaMemsetAsync(x, 0, size_t(n) * sizeof(T)));
        TUT_CUDA(cudaMemsetAsync(slots_.get(), 0, slots_.bytes()));
        TUT_CUDA(cudaMemsetAsync(iterations_.get(), 0, sizeof(int)));
        Args<T> a{sys_.A.get(), sys_.diagonal.get(), sys_.b.get(), x, x_work_.get(), n, T(opt_.alpha),
                  opt_.tolerance, opt_.max_iterations, slots_.get(), iterations_.get()};
        tut::launch_cooperative(persistent_jor<T, kPolicy>, blocks_, kThreads, 0, plan_.window, a);
        int iterations = 0;
        TUT_CUDA(cudaMemcpy(&iterations, iterations_.get(), sizeof(int), cudaMemcpyDeviceToHost));
        return tut::jor::finish_alternating_solve(iterations, opt_.max_iterations, opt_.tolerance, slots_.get(), x,
                                                  x_work_.get(), n);
    }

    double matrix_bytes() const override { return double(sys_.n) * double(sys_.n) * sizeof(T); }

  private:
    const tut::jor::DeviceSystem<T>& sys_;
    tut::jor::SolveOptions opt_;
    tut::DeviceBuffer<T> x_work_;
    tut::DeviceBuffer<tut::jor::SweepSlot> slots_;
    tut::DeviceBuffer<int> iterations_;
    int blocks_ = 1;
    tut::jor::L2Plan plan_;  // empty but for the window policy
};

template <class T, Policy kPolicy>
std::unique_ptr<tut::jor::Solver<T>> make_persistent(const tut::jor::DeviceSystem<T>& sys,
                                                     const tut::jor::SolveOptions& opt) {
    tut::jor::require_options(opt);
    tut::refuse_without_cooperative_launch();
    return std::make_unique<PersistentSolver<T, kPolicy>>(sys, opt);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
tut::jor::Variants variants() {
    tut::jor::Variants v;
    v.floats = {{"persistent", make_persistent<float, Policy::stream>},
                {"L2 window", make_persistent<float, Policy::window>},
                {"alternating direction", make_persistent<float, Policy::alternate>}};
    v.doubles = {{"persistent", make_persistent<double, Policy::stream>},
                 {"L2 window", make_persistent<double, Policy::window>},
                 {"alternating direction", make_persistent<double, Policy::alternate>}};
    return v;
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"jor", "07_l2_reuse", "keep part of A in L2 from one sweep to the next"};
    const tut::jor::Variants variants = lesson::variants();
    tut::jor::Options options(lesson);  // --sizes, --matrices, --type, --tol, --alpha, --max-iter, --share, ...
    options.parse(argc, argv, variants);
    tut::require_cooperative_launch(lesson.lesson);  // exits 77 on a GPU that cannot launch cooperatively
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
