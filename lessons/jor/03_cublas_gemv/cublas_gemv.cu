// jor/03_cublas_gemv: the library yardstick: cuBLAS gemv for the product of each sweep.
// Starts from: lesson 01's solve (three kernels and a copy per sweep). Adds: cuBLAS's gemv
// instead of our product kernel. cuBLAS is column-major and our A is row-major: gemv must
// compute A x from A's memory as it is, with no copy of A, so the question is what matrix
// cuBLAS sees there. gemv computes the whole product A x, diagonal included, so the update
// is rewritten from the off-diagonal sum to the full product (the residual form): the same
// iteration in exact arithmetic, not in float (the README measures the difference).
// The rest of the sweep is lesson 01's: sweep_stats and one copy back.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/jor/03_cublas_gemv/cublas_gemv.cu -lcublas -o cublas_gemv
// Run:  ./cublas_gemv              (--help for options; --sizes 8192 --type float for one size)
//
// Kernels and variants:
//   gemv                   y = A x by cublasSgemv / cublasDgemv, on A's memory as stored
//   update_from_product    JOR's update of x from y = A x (the exercise, with the gemv calls)
//   CublasSolver           per sweep: gemv, the update, sweep_stats, one copy back
//   variant "cublas"
// Shared (tut/jor_device.cuh): sweep_stats, the sweep loop, the generator.
// The harness below the divider: Options, Report and Problem (tut/jor_gpu.hpp).
#include "tut/check_cublas.hpp"
#include "tut/jor_device.cuh"
#include "tut/jor_gpu.hpp"

#include <cublas_v2.h>

#include <memory>
#include <vector>

namespace {

constexpr int kThreads = 256;  // threads per block of the update: one row each

// y = A x for row-major A (n x n), through column-major cuBLAS, without a copy of A.
void gemv(cublasHandle_t handle, int n, const float* A, const float* x, float* y) {
    // TODO(exercise): y = A x with cublasSgemv, reading A's memory as it is.
    //   cuBLAS is column-major: handed the memory of a row-major n x n matrix, which matrix
    //   does it see, with which leading dimension? Which of gemv's operations then gives A x,
    //   with each output a dot product along contiguous memory? A copy or a transpose of A
    //   would double the memory and add a pass over A every sweep: none is needed. gemv
    //   computes alpha op(A) x + beta y with alpha and beta passed by pointer (the handle's
    //   default pointer mode reads them from host memory): what must they be here? Check the
    //   call (TUT_CUBLAS). Until this is written the product is never computed.
    (void)handle, (void)n, (void)A, (void)x, (void)y;
}
void gemv(cublasHandle_t handle, int n, const double* A, const double* x, double* y) {
    // TODO(exercise), continued: the same with cublasDgemv.
    (void)handle, (void)n, (void)A, (void)x, (void)y;
}

// JOR's update of x_j from the full product y = A x, diagonal included.
template <class T>
__global__ void update_from_product(const T* __restrict__ y, const T* __restrict__ diagonal, const T* __restrict__ b,
                                    const T* __restrict__ x_old, T* __restrict__ x_new, int n, T alpha) {
    // TODO(exercise), continued: one thread per row j, x_new_j from y_j = (A x_old)_j.
    //   JOR's update is x_new_j = (1 - a) x_j + a / A_jj (b_j - sum over k != j of A_jk x_k),
    //   and gemv gives the whole row's sum, A_jj x_j included. Rewrite the update so that it
    //   needs only y_j (no second pass over A, no subtraction of A_jj x_j after the fact): in
    //   exact arithmetic the same map. The grid is rounded up to whole blocks.
    (void)y, (void)diagonal, (void)b, (void)x_old, (void)x_new, (void)n, (void)alpha;
}

template <class T>
class CublasSolver : public tut::jor::Solver<T> {
  public:
    CublasSolver(const tut::jor::DeviceSystem<T>& sys, const tut::jor::SolveOptions& opt)
        : sys_(sys), opt_(opt), x_work_(static_cast<size_t>(sys.n)), y_(static_cast<size_t>(sys.n)), stats_(1) {
        TUT_CUBLAS(cublasCreate(&handle_));
    }
    ~CublasSolver() override { cublasDestroy(handle_); }

    tut::jor::SolveResult solve(T* x) override {
        const int n = sys_.n;
        return tut::jor::solve_sweep_by_sweep(
            n, opt_, x, x_work_.get(), stats_.get(),
            [&](const T* x_old) {
                // TODO(exercise), continued: the sweep's product, y_ = A x_old.
                (void)x_old;
            },
            [&](const T* x_old, T* x_new) {
                // TODO(exercise), continued: the sweep's update, x_new from y_, one thread per
                //   row (kThreads per block), on the default stream, the launch checked
                //   (TUT_LAUNCH).
                (void)x_old, (void)x_new, (void)kThreads;
            });
    }

    double matrix_bytes() const override { return double(sys_.n) * double(sys_.n) * sizeof(T); }

    bool gemv_once() override {
        gemv(handle_, sys_.n, sys_.A.get(), x_work_.get(), y_.get());
        return true;
    }

  private:
    const tut::jor::DeviceSystem<T>& sys_;
    tut::jor::SolveOptions opt_;
    cublasHandle_t handle_ = nullptr;
    tut::DeviceBuffer<T> x_work_, y_;
    tut::DeviceBuffer<tut::jor::DeviceSweepStats> stats_;
};

template <class T>
std::unique_ptr<tut::jor::Solver<T>> make_cublas(const tut::jor::DeviceSystem<T>& sys,
                                                 const tut::jor::SolveOptions& opt) {
    tut::jor::require_options(opt);
    return std::make_unique<CublasSolver<T>>(sys, opt);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
tut::jor::Variants variants() {
    tut::jor::Variants v;
    v.floats = {{"cublas", make_cublas<float>}};
    v.doubles = {{"cublas", make_cublas<double>}};
    return v;
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"jor", "03_cublas_gemv",
                                 "the library: cuBLAS gemv for the product of each sweep"};
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
