// jor/06_persistent: one cooperative kernel for the whole solve, a barrier per sweep.
// Starts from: lesson 05's sweep (sweep_rows, record_sweep). Adds: the loop inside one
// kernel. Lesson 05 still ends a kernel after every sweep (a launch, however cheap, and a
// kernel boundary as the barrier between sweeps). A cooperative launch keeps every block
// of the grid resident at once, so a grid-wide barrier (cooperative_groups::this_grid().sync())
// can separate the sweeps inside one kernel: after it, every block reads the same slot and
// takes the same decision, stop or go on. Only the final state is copied back. The grid is
// no larger than the rows need (a warp per row), so at small N a barrier spans a few
// blocks. That pays where a sweep is short (small N). Where a sweep is the read of A
// (large N), one kernel reads A no faster than lesson 05's graph: the gain there is a few
// percent. What it sets up is a kernel that owns every sweep: lesson 07 plans its use of
// L2 across them.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/jor/06_persistent/persistent.cu -o persistent
// Run:  ./persistent               (--help for options; --sizes 8192 --type float for one size)
//
// Kernels and variants:
//   persistent_jor      the solve: per sweep, lesson 04's sweep_rows and record_sweep, the
//                       barrier, then every block's decision from the slot
//                       (the exercise: the part after the barrier)
//   PersistentSolver    grid size from the occupancy; one cooperative launch per solve
//                       (tut/cooperative.hpp: the grid, the launch)
//   variant "persistent" (A read with the evict-first hint, as in lessons 02 to 05)
// Shared: sweep_rows (tut/jor_rows.cuh), record_sweep, SweepSlot and the end of the solve
// (tut/jor_record.cuh), the generator (tut/jor_device.cuh).
// The harness below the divider: Options, Report and Problem (tut/jor_gpu.hpp).
#include "tut/cooperative.hpp"
#include "tut/jor_device.cuh"
#include "tut/jor_gpu.hpp"
#include "tut/jor_record.cuh"
#include "tut/jor_rows.cuh"

#include <cooperative_groups.h>

#include <memory>
#include <vector>

namespace coop = cooperative_groups;

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

template <class T>
__global__ void __launch_bounds__(kThreads, tut::jor::sweep_blocks_per_sm(kThreads)) persistent_jor(Args<T> a) {
    coop::grid_group grid = coop::this_grid();
    for (int it = 0; it < a.max_iterations; ++it) {
        const T* x_old = it % 2 ? a.x1 : a.x0;
        T* x_new = it % 2 ? a.x0 : a.x1;
        double dx = 0.0, x_abs = 0.0;
        tut::jor::sweep_rows<T>(a.A, a.diagonal, a.b, x_old, x_new, a.n, a.alpha, dx, x_abs);
        tut::jor::record_sweep(dx, x_abs, a.slots + it);
        grid.sync();  // every block's rows and atomics of sweep it are done and visible
        // Every thread reads the finished slot from L2 (__ldcg: not a stale L1 line) and so
        // takes the same decision: a block that left the loop alone would leave the others
        // waiting at the next barrier forever.
        tut::jor::SweepSlot s;
        s.dx_max_bits = __ldcg(&a.slots[it].dx_max_bits);
        s.x_max_bits = __ldcg(&a.slots[it].x_max_bits);
        if (tut::jor::slot_says_stop(s, a.tolerance) || it + 1 == a.max_iterations) {
            if (grid.thread_rank() == 0) *a.iterations = it + 1;
            return;
        }
    }
}

template <class T>
class PersistentSolver : public tut::jor::Solver<T> {
  public:
    PersistentSolver(const tut::jor::DeviceSystem<T>& sys, const tut::jor::SolveOptions& opt)
        : sys_(sys), opt_(opt), x_work_(static_cast<size_t>(sys.n)), slots_(static_cast<size_t>(opt.max_iterations)),
          iterations_(1) {
        const int needed = (sys.n + kThreads / 32 - 1) / (kThreads / 32);  // a warp per row
        blocks_ = tut::cooperative_grid(persistent_jor<T>, kThreads, needed);
    }

    tut::jor::SolveResult solve(T* x) override {
        const int n = sys_.n;
        TUT_CUDA(cudaMemsetAsync(x, 0, size_t(n) * sizeof(T)));
        TUT_CUDA(cudaMemsetAsync(slots_.get(), 0, slots_.bytes()));
        TUT_CUDA(cudaMemsetAsync(iterations_.get(), 0, sizeof(int)));
        Args<T> a{sys_.A.get(), sys_.diagonal.get(), sys_.b.get(), x, x_work_.get(), n, T(opt_.alpha),
                  opt_.tolerance, opt_.max_iterations, slots_.get(), iterations_.get()};
        tut::launch_cooperative(persistent_jor<T>, blocks_, kThreads, 0, cudaAccessPolicyWindow{}, a);
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
};

template <class T>
std::unique_ptr<tut::jor::Solver<T>> make_persistent(const tut::jor::DeviceSystem<T>& sys,
                                                     const tut::jor::SolveOptions& opt) {
    tut::jor::require_options(opt);
    tut::refuse_without_cooperative_launch();
    return std::make_unique<PersistentSolver<T>>(sys, opt);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
tut::jor::Variants variants() {
    tut::jor::Variants v;
    v.floats = {{"persistent", make_persistent<float>}};
    v.doubles = {{"persistent", make_persistent<double>}};
    return v;
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"jor", "06_persistent",
                                 "one cooperative kernel for the whole solve, a barrier per sweep"};
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
