// jor/08_mixed_precision: precision: float A with double sums, against float and double.
// Starts from: lesson 06's persistent loop (not lesson 07's L2 policies). Adds: A stored
// in a type of its own. A sweep's time is the bytes of A; its accuracy is the arithmetic. Here
// A is stored in S and everything else (x, b, the diagonal, the sums) in T: float/float
// and double/double as before, and the mixed variant, float A with double sums, x, b and
// diagonal, which reads the bytes of float at the accuracy of double here (the generated
// off-diagonal entries are multiples of 2^-20 below 5 in size, exact in float; the
// diagonal, which float would round, stays in double). A fourth variant keeps everything
// in float but sums each lane's products with Kahan's compensation, to show what the order
// and the rounding of the sum can and cannot change.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/jor/08_mixed_precision/mixed_precision.cu -o mixed_precision
// Run:  ./mixed_precision          (--help for options; --sizes 8192 for one size)
//
// Kernels and variants:
//   to_storage            A converted to S once, at set-up (for mixed: double to float, exact
//                         off the diagonal, which the sweep does not read from A)
//   row_sum               a warp's off-diagonal sum of one row: A read as S, products and
//                         sums in T (the exercise: where the conversions go)
//   persistent_jor        lesson 06's loop over <S, T, kKahan>, its sweep calling row_sum;
//                         row_sum keeps one 16-byte load of A in flight per lane (lesson
//                         06's sweep keeps kSweepLoads = 2), so the launch bounds ask for
//                         every warp slot: kMaxThreadsPerSm / kThreads blocks (on an H100
//                         8 blocks, at most 32 registers)
//   variants "float" (float only), "float, Kahan" (float only), "mixed" (double only: float A,
//   double everything else), "double" (double only)
// Shared: Vec16, load_x, add_product, the generator (tut/jor_device.cuh); record_sweep,
// SweepSlot and the end of the solve (tut/jor_record.cuh).
// The harness below the divider: Options, Report and Problem (tut/jor_gpu.hpp).
#include "tut/cooperative.hpp"
#include "tut/jor_device.cuh"
#include "tut/jor_gpu.hpp"
#include "tut/jor_record.cuh"

#include <cooperative_groups.h>

#include <memory>
#include <vector>

namespace coop = cooperative_groups;

namespace {

constexpr int kThreads = 256;  // 8 warps; the grid's warps take the rows in turn
static_assert(kThreads % 32 == 0, "a block is whole warps, one row at a time each");

template <class S, class T>
struct Args {
    const S* A;
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

// The off-diagonal sum of row `row` by one warp, every lane returning it: A's entries read
// as S, x read as T, every product and every addition done in T; with kKahan each lane's
// running sum compensated.
template <class S, class T, bool kKahan>
__device__ T row_sum(const S* __restrict__ A, const T* x, int n, int row) {
    // TODO(exercise): the row's sum over k != row of A(row, k) x_k, in T.
    //   The point of the lesson is where the conversions go. Constraints: A is read as S,
    //   and only as S (reading it as T would read double's bytes: the cost this lesson
    //   removes), 16 bytes per lane and step (tut::jor::Vec16<S>: 4 floats or 2 doubles),
    //   with the lanes on consecutive vectors and the streaming hint (__ldcs); x and the
    //   sum stay in T: convert each entry of A to T before its product, never the product
    //   or the sum to S. The diagonal is not in the sum (Vec16<S>::drop). When N is not a
    //   multiple of the vector width, rows do not start on a 16-byte boundary: use a scalar
    //   loop then. Hints: tut::jor::load_x<T, width>() reads x's matching elements as T;
    //   tut::jor::add_product<kKahan>(sum, carry, a, x) adds one product, compensated when
    //   kKahan (subtract the carry at the end); then add the 32 lanes' sums with shuffles
    //   so that every lane returns the total. Until this is written every sum is 0 and no
    //   solve converges to x*.
    (void)A, (void)x, (void)n, (void)row;
    return T(0);
}

template <class S, class T, bool kKahan>
__global__ void __launch_bounds__(kThreads, tut::kMaxThreadsPerSm / kThreads) persistent_jor(Args<S, T> a) {
    coop::grid_group grid = coop::this_grid();
    for (int it = 0; it < a.max_iterations; ++it) {
        const T* x_old = it % 2 ? a.x1 : a.x0;
        T* x_new = it % 2 ? a.x0 : a.x1;
        double dx = 0.0, x_abs = 0.0;
        const int warps = gridDim.x * (kThreads / 32);
        for (int row = blockIdx.x * (kThreads / 32) + threadIdx.x / 32; row < a.n; row += warps) {
            const T sum = row_sum<S, T, kKahan>(a.A, x_old, a.n, row);
            if (threadIdx.x % 32 == 0) {  // the update in T: the diagonal and b are T too
                const T old = x_old[row];
                const T x = (T(1) - a.alpha) * old + a.alpha / a.diagonal[row] * (a.b[row] - sum);
                x_new[row] = x;
                const double d = fabs(double(x) - double(old));
                dx = d == d && dx == dx ? fmax(dx, d) : NAN;  // a NaN sticks
                x_abs = fmax(x_abs, fabs(double(x)));
            }
        }
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

// A in S, converted from the system's T.
template <class S, class T>
__global__ void to_storage(const T* __restrict__ in, S* __restrict__ out, size_t count) {
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
        out[i] = static_cast<S>(in[i]);
}

template <class S, class T, bool kKahan>
class PrecisionSolver : public tut::jor::Solver<T> {
  public:
    PrecisionSolver(const tut::jor::DeviceSystem<T>& sys, const tut::jor::SolveOptions& opt)
        : sys_(sys), opt_(opt), x_work_(static_cast<size_t>(sys.n)), slots_(static_cast<size_t>(opt.max_iterations)),
          iterations_(1) {
        if constexpr (sizeof(S) != sizeof(T)) {
            A_copy_ = tut::DeviceBuffer<S>(sys.A.size());
            to_storage<S, T><<<1024, 256>>>(sys.A.get(), A_copy_.get(), sys.A.size());
            TUT_LAUNCH("to_storage");
            A_ = A_copy_.get();
        } else {
            A_ = reinterpret_cast<const S*>(sys.A.get());
        }
        const int needed = (sys.n + kThreads / 32 - 1) / (kThreads / 32);  // a warp per row
        blocks_ = tut::cooperative_grid(persistent_jor<S, T, kKahan>, kThreads, needed);
    }

    tut::jor::SolveResult solve(T* x) override {
        const int n = sys_.n;
        TUT_CUDA(cudaMemsetAsync(x, 0, size_t(n) * sizeof(T)));
        TUT_CUDA(cudaMemsetAsync(slots_.get(), 0, slots_.bytes()));
        TUT_CUDA(cudaMemsetAsync(iterations_.get(), 0, sizeof(int)));
        Args<S, T> a{A_, sys_.diagonal.get(), sys_.b.get(), x, x_work_.get(), n, T(opt_.alpha),
                  opt_.tolerance, opt_.max_iterations, slots_.get(), iterations_.get()};
        tut::launch_cooperative(persistent_jor<S, T, kKahan>, blocks_, kThreads, 0, cudaAccessPolicyWindow{}, a);
        int iterations = 0;
        TUT_CUDA(cudaMemcpy(&iterations, iterations_.get(), sizeof(int), cudaMemcpyDeviceToHost));
        return tut::jor::finish_alternating_solve(iterations, opt_.max_iterations, opt_.tolerance, slots_.get(), x,
                                                  x_work_.get(), n);
    }

    double matrix_bytes() const override { return double(sys_.n) * double(sys_.n) * sizeof(S); }

  private:
    const tut::jor::DeviceSystem<T>& sys_;
    tut::jor::SolveOptions opt_;
    tut::DeviceBuffer<T> x_work_;
    tut::DeviceBuffer<tut::jor::SweepSlot> slots_;
    tut::DeviceBuffer<int> iterations_;
    int blocks_ = 1;
    tut::DeviceBuffer<S> A_copy_;  // only when S differs from T
    const S* A_ = nullptr;
};

template <class S, class T, bool kKahan>
std::unique_ptr<tut::jor::Solver<T>> make_precision(const tut::jor::DeviceSystem<T>& sys,
                                                    const tut::jor::SolveOptions& opt) {
    tut::jor::require_options(opt);
    tut::refuse_without_cooperative_launch();
    return std::make_unique<PrecisionSolver<S, T, kKahan>>(sys, opt);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
tut::jor::Variants variants() {
    tut::jor::Variants v;
    // <S, T, kKahan>: A stored in S, everything else in T.
    v.floats = {{"float", make_precision<float, float, false>}, {"float, Kahan", make_precision<float, float, true>}};
    v.doubles = {{"mixed", make_precision<float, double, false>}, {"double", make_precision<double, double, false>}};
    return v;
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"jor", "08_mixed_precision",
                                 "precision: float A with double sums, against float and double"};
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
