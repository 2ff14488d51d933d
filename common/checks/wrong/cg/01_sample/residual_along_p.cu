// wrong: cg/01_sample: the residual is moved along p, like x (r -= alpha p), instead of along q = A p
// caught by: cg/01_sample: solves the default problem and small ones to tolerance
// kind: other
// r no longer equals b - A x: the recursive residual falls (or not) while the true one does not,
// so a solve either hits its limit or 'converges' with a true residual far above 2 tol.
// cg/01_sample: NVIDIA's conjugate-gradient sample, retold: CG driven by the host.
// Starts from: nothing; the track's first lesson. Adds: CG in float with cuBLAS for the
// vector work and cuSPARSE for A p, in host pointer mode, no preconditioner. Every
// cublasSdot returns its result to a host variable, so it waits for the GPU: host and GPU
// take turns twice per iteration, and the sample adds a cudaDeviceSynchronize on top. That
// wait, not the SpMV, is what this lesson measures.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/cg/01_sample/sample.cu -lcublas -lcusparse -o sample
// Run:  ./sample                 (--problem both adds the 2.1 M-row problem; --help for options)
//
// In this file:
//   SampleSolver::solve()   the CG loop, driven by the host (the exercise: the step along p)
//   variant "host pointers"
#include "tut/cg.hpp"
#include "tut/check_cublas.hpp"

namespace {

using tut::cg::Outcome;
using tut::cg::SolveResult;

class SampleSolver final : public tut::cg::Solver {
  public:
    SampleSolver(const tut::cg::DeviceMatrix& A, const tut::cg::SolveOptions& opt)
        : n_(A.n()), opt_(opt), r_(size_t(n_)), p_(size_t(n_)), q_(size_t(n_)) {
        TUT_CUBLAS(cublasCreate(&cublas_));
        TUT_CUSPARSE(cusparseCreate(&cusparse_));  // host pointer mode is the default for both
        spmv_ = std::make_unique<tut::cg::CusparseSpmv>(cusparse_, A.view(), p_.get(), q_.get());
    }
    ~SampleSolver() override {
        spmv_.reset();
        cusparseDestroy(cusparse_);
        cublasDestroy(cublas_);
    }

    SolveResult solve(const float* b, float* x) override {
        const float one = 1.0f, zero = 0.0f;
        SolveResult res;
        TUT_CUDA(cudaMemset(x, 0, sizeof(float) * n_));                // x0 = 0
        TUT_CUBLAS(cublasScopy(cublas_, n_, b, 1, r_.get(), 1));       // r = b - A x0 = b
        float rr = 0.0f;
        TUT_CUBLAS(cublasSdot(cublas_, n_, r_.get(), 1, r_.get(), 1, &rr));  // waits for the GPU
        const double threshold = opt_.tolerance * opt_.tolerance * double(rr);
        const double bb = rr;
        if (rr <= threshold) return tut::cg::solve_result(Outcome::converged, res.iterations, 0, rr, bb);

        float rr_old = rr;
        while (res.iterations < opt_.max_iterations) {
            // p = r on the first pass, then p = r + beta p.
            if (res.iterations == 0) {
                TUT_CUBLAS(cublasScopy(cublas_, n_, r_.get(), 1, p_.get(), 1));
            } else {
                const float beta = rr / rr_old;
                TUT_CUBLAS(cublasSscal(cublas_, n_, &beta, p_.get(), 1));
                TUT_CUBLAS(cublasSaxpy(cublas_, n_, &one, r_.get(), 1, p_.get(), 1));
            }
            spmv_->run(&one, &zero);  // q = A p
            ++res.iterations;
            float pq = 0.0f;
            TUT_CUBLAS(cublasSdot(cublas_, n_, p_.get(), 1, q_.get(), 1, &pq));  // waits
            if (!(pq > 0.0f)) return tut::cg::solve_result(Outcome::not_positive_definite, res.iterations, -1, rr, bb);
            const float alpha = rr / pq, minus_alpha = -alpha;
            TUT_CUBLAS(cublasSaxpy(cublas_, n_, &alpha, p_.get(), 1, x, 1));           // x += alpha p
            TUT_CUBLAS(cublasSaxpy(cublas_, n_, &minus_alpha, p_.get(), 1, r_.get(), 1));  // r -= alpha p
            rr_old = rr;
            TUT_CUBLAS(cublasSdot(cublas_, n_, r_.get(), 1, r_.get(), 1, &rr));  // waits
            TUT_CUDA(cudaDeviceSynchronize());  // the sample's sync at the end of every iteration
            if (rr <= threshold) return tut::cg::solve_result(Outcome::converged, res.iterations, res.iterations, rr, bb);
        }
        return tut::cg::solve_result(Outcome::max_iterations, res.iterations, -1, rr, bb);
    }

    bool spmv_once() override {
        const float one = 1.0f, zero = 0.0f;
        spmv_->run(&one, &zero);
        return true;
    }

  private:
    int n_;
    tut::cg::SolveOptions opt_;
    tut::DeviceBuffer<float> r_, p_, q_;
    cublasHandle_t cublas_ = nullptr;
    cusparseHandle_t cusparse_ = nullptr;
    std::unique_ptr<tut::cg::CusparseSpmv> spmv_;
};

std::unique_ptr<tut::cg::Solver> make_sample(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                             const tut::cg::SolveOptions& opt) {
    tut::cg::require_solvable(A);
    return std::make_unique<SampleSolver>(dA, opt);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::cg::Variant> variants() { return {{"host pointers", make_sample}}; }
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"cg", "01_sample",
                               "the CG sample: cuBLAS + cuSPARSE, host pointer mode, no preconditioner"};
    const std::vector<tut::cg::Variant> variants = lesson::variants();
    tut::cg::Options options(lesson, tut::cg::Preconditioner::none);  // plain CG, as the sample
    options.parse(argc, argv, tut::names_of(variants));
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
