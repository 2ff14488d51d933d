// wrong: cg/02_jacobi: rz_old is taken after the new r.z has been computed, so beta = r.z / r.z = 1 every iteration
// caught by: cg/02_jacobi: solves the default problem and small ones to tolerance
// kind: other
// p = z + p is no longer A-conjugate to the earlier directions: on the default problem the
// iterations run far past the reference's (or to the limit).
// cg/02_jacobi: the Jacobi (diagonal) preconditioner, with the loop ordered like Eigen's.
// Starts from: lesson 01's host-driven loop. Adds: z = D^-1 r: each iteration scales the
// residual by the inverse diagonal and builds the next search direction from z, with r.z
// in place of r.r. On a matrix whose rows are scaled very differently (here: coefficients
// over two decades) that cuts the iterations by about 1.7x; the host still waits for every
// dot product, now one more per iteration.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/cg/02_jacobi/jacobi.cu -lcublas -lcusparse -o jacobi
// Run:  ./jacobi                 (--help for options)
//
// In this file:
//   jacobi_apply            z = D^-1 r, one thread per row
//   JacobiSolver::solve()   the preconditioned loop (the exercise: the new direction p from z)
//   variant "jacobi"
#include "tut/cg.hpp"
#include "tut/check_cublas.hpp"

namespace {

using tut::cg::Outcome;
using tut::cg::SolveResult;

constexpr int kThreads = 256;  // threads per block of jacobi_apply

// z = D^-1 r, elementwise. One thread per row.
__global__ void jacobi_apply(int n, const float* __restrict__ dinv, const float* __restrict__ r, float* __restrict__ z) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = dinv[i] * r[i];
}

class JacobiSolver final : public tut::cg::Solver {
  public:
    JacobiSolver(const tut::cg::DeviceMatrix& A, const std::vector<float>& dinv, const tut::cg::SolveOptions& opt)
        : n_(A.n()), opt_(opt), dinv_(dinv), r_(size_t(n_)), z_(size_t(n_)), p_(size_t(n_)), q_(size_t(n_)) {
        TUT_CUDA(cudaMemset(z_.get(), 0, z_.bytes()));
        TUT_CUBLAS(cublasCreate(&cublas_));
        TUT_CUSPARSE(cusparseCreate(&cusparse_));
        spmv_ = std::make_unique<tut::cg::CusparseSpmv>(cusparse_, A.view(), p_.get(), q_.get());
    }
    ~JacobiSolver() override {
        spmv_.reset();
        cusparseDestroy(cusparse_);
        cublasDestroy(cublas_);
    }

    SolveResult solve(const float* b, float* x) override {
        const float one = 1.0f, zero = 0.0f;
        SolveResult res;
        TUT_CUDA(cudaMemset(x, 0, sizeof(float) * n_));           // x0 = 0
        TUT_CUBLAS(cublasScopy(cublas_, n_, b, 1, r_.get(), 1));  // r = b
        float rr = 0.0f, rz = 0.0f;
        TUT_CUBLAS(cublasSdot(cublas_, n_, r_.get(), 1, r_.get(), 1, &rr));
        const double threshold = opt_.tolerance * opt_.tolerance * double(rr);
        const double bb = rr;
        if (rr <= threshold) return tut::cg::solve_result(Outcome::converged, res.iterations, 0, rr, bb);
        precondition();                                                       // z = D^-1 r
        TUT_CUBLAS(cublasScopy(cublas_, n_, z_.get(), 1, p_.get(), 1));       // p = z
        TUT_CUBLAS(cublasSdot(cublas_, n_, r_.get(), 1, z_.get(), 1, &rz));   // waits

        // Eigen's order: q = A p; alpha = r.z / p.q; x += alpha p; r -= alpha q; stop if
        // ||r|| small; z = D^-1 r; beta = r.z new / old; p = z + beta p.
        while (res.iterations < opt_.max_iterations) {
            spmv_->run(&one, &zero);  // q = A p
            ++res.iterations;
            float pq = 0.0f;
            TUT_CUBLAS(cublasSdot(cublas_, n_, p_.get(), 1, q_.get(), 1, &pq));  // waits
            if (!(pq > 0.0f)) return tut::cg::solve_result(Outcome::not_positive_definite, res.iterations, -1, rr, bb);
            const float alpha = rz / pq, minus_alpha = -alpha;
            TUT_CUBLAS(cublasSaxpy(cublas_, n_, &alpha, p_.get(), 1, x, 1));
            TUT_CUBLAS(cublasSaxpy(cublas_, n_, &minus_alpha, q_.get(), 1, r_.get(), 1));
            TUT_CUBLAS(cublasSdot(cublas_, n_, r_.get(), 1, r_.get(), 1, &rr));  // waits
            if (rr <= threshold) return tut::cg::solve_result(Outcome::converged, res.iterations, res.iterations, rr, bb);
            precondition();
            TUT_CUBLAS(cublasSdot(cublas_, n_, r_.get(), 1, z_.get(), 1, &rz));  // waits
            const float rz_old = rz;
            const float beta = rz / rz_old;
            TUT_CUBLAS(cublasSscal(cublas_, n_, &beta, p_.get(), 1));                   // p = beta p
            TUT_CUBLAS(cublasSaxpy(cublas_, n_, &one, z_.get(), 1, p_.get(), 1));       //   + z
            TUT_CUDA(cudaDeviceSynchronize());  // as in the sample
        }
        return tut::cg::solve_result(Outcome::max_iterations, res.iterations, -1, rr, bb);
    }

    bool spmv_once() override {
        const float one = 1.0f, zero = 0.0f;
        spmv_->run(&one, &zero);
        return true;
    }

  private:
    void precondition() {
        jacobi_apply<<<(n_ + kThreads - 1) / kThreads, kThreads>>>(n_, dinv_.get(), r_.get(), z_.get());
        TUT_LAUNCH("jacobi_apply");
    }

    int n_;
    tut::cg::SolveOptions opt_;
    tut::DeviceBuffer<float> dinv_, r_, z_, p_, q_;
    cublasHandle_t cublas_ = nullptr;
    cusparseHandle_t cusparse_ = nullptr;
    std::unique_ptr<tut::cg::CusparseSpmv> spmv_;
};

std::unique_ptr<tut::cg::Solver> make_jacobi(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                             const tut::cg::SolveOptions& opt) {
    // Refuses a zero, missing or negative diagonal (tut::Unsupported) before any launch.
    const std::vector<float> dinv = tut::cg::inverse_diagonal(A);
    return std::make_unique<JacobiSolver>(dA, dinv, opt);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::cg::Variant> variants() { return {{"jacobi", make_jacobi}}; }
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"cg", "02_jacobi", "Jacobi-preconditioned CG, loop ordered like Eigen's"};
    const std::vector<tut::cg::Variant> variants = lesson::variants();
    tut::cg::Options options(lesson, tut::cg::Preconditioner::jacobi);  // --problem, --matrix, --tol, ...
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
