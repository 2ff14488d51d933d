// wrong: cg/03_device_pointer_mode: update_alpha keeps computing alpha = r.z / p.q after the solve is over (no early return on the status)
// caught by: cg/03_device_pointer_mode: solves the default problem and small ones to tolerance
// kind: other
// The iterations the host runs before it looks keep moving x. On the 1x1 the first iteration
// leaves r = 0 exactly, the next p.q is 0 and the status turns to not_positive_definite; on the
// diagonal problem the next alpha is the old r.z over a tiny p.q and x blows up.
// cg/03_device_pointer_mode: device pointer mode: the host no longer waits on the loop.
// Starts from: lesson 02's Jacobi PCG. Adds: the scalars (dot products, alpha, beta) stay
// in device memory, two one-thread kernels compute alpha and beta on the GPU, and the host
// copies the state back only every k iterations (the story used 20) to see whether the
// solve is over. The price: the host learns of convergence up to k - 1 iterations late, so
// those iterations must leave x and r alone.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/cg/03_device_pointer_mode/device_pointers.cu -lcublas -lcusparse -o device_pointers
// Run:  ./device_pointers --check-every 20      (--help for options)
//
// In this file:
//   update_alpha, update_beta   one-thread kernels: the scalar steps and the stopping
//                               rule on the device (the exercise)
//   start_scalars, jacobi_apply set-up, z = D^-1 r
//   DevicePointerSolver         enqueues k iterations, then one copy back
//   variant "device pointers"
#include "tut/cg.hpp"
#include "tut/check_cublas.hpp"

namespace {

using tut::cg::SolveResult;

constexpr int kThreads = 256;  // threads per block of jacobi_apply
using tut::cg::kConverged;  // the status codes: tut/cg.hpp
using tut::cg::kNotPositiveDefinite;
using tut::cg::kRunning;

// Everything the iteration needs to know, in device memory. cuBLAS writes the dot
// products straight into it; cuBLAS and cuSPARSE read alpha, beta from it.
struct Scalars {
    float pq, rr, rz, rz_new;           // p.q, r.r, r.z (current), r.z (new)
    float alpha, minus_alpha, beta;
    float bb, threshold;                // ||b||^2 and tol^2 ||b||^2
    int iteration, status, converged_at;
};

// alpha = r.z / p.q. Once the solve is over, alpha = 0: the iterations the host runs
// before it notices leave x and r as they are. p.q <= 0 means A is not positive definite.
__global__ void update_alpha(Scalars* s) {
    s->iteration++;
    if (!(s->pq > 0.0f)) {  // also catches NaN
        s->status = kNotPositiveDefinite;
        s->alpha = s->minus_alpha = 0.0f;
        return;
    }
    s->alpha = s->rz / s->pq;
    s->minus_alpha = -s->alpha;
}

// Convergence test on ||r||^2, then beta = r.z new / old.
__global__ void update_beta(Scalars* s) {
    if (s->status != kRunning) {
        s->beta = 0.0f;
        return;
    }
    if (s->rr <= s->threshold) {
        s->status = kConverged;
        s->converged_at = s->iteration;
        s->beta = 0.0f;
        return;
    }
    s->beta = s->rz_new / s->rz;
    s->rz = s->rz_new;
}

// After the first dot products: remember ||b||^2, set the threshold, maybe already done.
__global__ void start_scalars(Scalars* s, float tol2) {
    s->bb = s->rr;
    s->threshold = tol2 * s->rr;
    s->iteration = 0;
    s->status = s->rr <= s->threshold ? kConverged : kRunning;
    s->converged_at = s->status == kConverged ? 0 : -1;
}

// z = D^-1 r, elementwise. One thread per row.
__global__ void jacobi_apply(int n, const float* __restrict__ dinv, const float* __restrict__ r, float* __restrict__ z) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = dinv[i] * r[i];
}

class DevicePointerSolver final : public tut::cg::Solver {
  public:
    DevicePointerSolver(const tut::cg::DeviceMatrix& A, const std::vector<float>& dinv, const tut::cg::SolveOptions& opt)
        : n_(A.n()), opt_(opt), dinv_(dinv), r_(size_t(n_)), z_(size_t(n_)), p_(size_t(n_)), q_(size_t(n_)),
          consts_(std::vector<float>{1.0f, 0.0f}), scalars_(1) {
        TUT_CUBLAS(cublasCreate(&cublas_));
        TUT_CUSPARSE(cusparseCreate(&cusparse_));
        // Scalars are device pointers from now on: no call returns a value to the host.
        TUT_CUBLAS(cublasSetPointerMode(cublas_, CUBLAS_POINTER_MODE_DEVICE));
        TUT_CUSPARSE(cusparseSetPointerMode(cusparse_, CUSPARSE_POINTER_MODE_DEVICE));
        spmv_ = std::make_unique<tut::cg::CusparseSpmv>(cusparse_, A.view(), p_.get(), q_.get());
    }
    ~DevicePointerSolver() override {
        spmv_.reset();
        cusparseDestroy(cusparse_);
        cublasDestroy(cublas_);
    }

    SolveResult solve(const float* b, float* x) override {
        Scalars* s = scalars_.get();
        TUT_CUDA(cudaMemsetAsync(s, 0, sizeof(Scalars)));
        TUT_CUDA(cudaMemsetAsync(x, 0, sizeof(float) * n_));
        TUT_CUBLAS(cublasScopy(cublas_, n_, b, 1, r_.get(), 1));
        TUT_CUBLAS(cublasSdot(cublas_, n_, r_.get(), 1, r_.get(), 1, &s->rr));
        precondition();
        TUT_CUBLAS(cublasScopy(cublas_, n_, z_.get(), 1, p_.get(), 1));
        TUT_CUBLAS(cublasSdot(cublas_, n_, r_.get(), 1, z_.get(), 1, &s->rz));
        start_scalars<<<1, 1>>>(s, float(opt_.tolerance * opt_.tolerance));
        TUT_LAUNCH("start_scalars");

        // Enqueue k iterations, then one copy back (the only wait) to look at the status.
        int performed = 0;
        Scalars h{};
        while (performed < opt_.max_iterations) {
            const int chunk = std::min(opt_.check_every, opt_.max_iterations - performed);
            for (int i = 0; i < chunk; ++i) iteration(x);
            performed += chunk;
            TUT_CUDA(cudaMemcpy(&h, s, sizeof(Scalars), cudaMemcpyDeviceToHost));
            if (h.status != kRunning) break;
        }
        return tut::cg::solve_result(tut::cg::outcome_of(h.status), performed, h.converged_at, h.rr, h.bb);
    }

    bool spmv_once() override {
        spmv_->run(consts_.get(), consts_.get() + 1);
        return true;
    }

  private:
    // One iteration, enqueued; nothing here waits for the GPU.
    void iteration(float* x) {
        Scalars* s = scalars_.get();
        const float* one = consts_.get();
        spmv_->run(one, consts_.get() + 1);                                          // q = A p
        TUT_CUBLAS(cublasSdot(cublas_, n_, p_.get(), 1, q_.get(), 1, &s->pq));
        update_alpha<<<1, 1>>>(s);
        TUT_LAUNCH("update_alpha");
        TUT_CUBLAS(cublasSaxpy(cublas_, n_, &s->alpha, p_.get(), 1, x, 1));          // x += alpha p
        TUT_CUBLAS(cublasSaxpy(cublas_, n_, &s->minus_alpha, q_.get(), 1, r_.get(), 1));  // r -= alpha q
        TUT_CUBLAS(cublasSdot(cublas_, n_, r_.get(), 1, r_.get(), 1, &s->rr));
        precondition();                                                              // z = D^-1 r
        TUT_CUBLAS(cublasSdot(cublas_, n_, r_.get(), 1, z_.get(), 1, &s->rz_new));
        update_beta<<<1, 1>>>(s);
        TUT_LAUNCH("update_beta");
        TUT_CUBLAS(cublasSscal(cublas_, n_, &s->beta, p_.get(), 1));                  // p = beta p
        TUT_CUBLAS(cublasSaxpy(cublas_, n_, one, z_.get(), 1, p_.get(), 1));          //   + z
    }
    void precondition() {
        jacobi_apply<<<(n_ + kThreads - 1) / kThreads, kThreads>>>(n_, dinv_.get(), r_.get(), z_.get());
        TUT_LAUNCH("jacobi_apply");
    }

    int n_;
    tut::cg::SolveOptions opt_;
    tut::DeviceBuffer<float> dinv_, r_, z_, p_, q_;
    tut::DeviceBuffer<float> consts_;  // 1 and 0, for the device-pointer alpha/beta of SpMV and axpy
    tut::DeviceBuffer<Scalars> scalars_;
    cublasHandle_t cublas_ = nullptr;
    cusparseHandle_t cusparse_ = nullptr;
    std::unique_ptr<tut::cg::CusparseSpmv> spmv_;
};

std::unique_ptr<tut::cg::Solver> make_device_pointers(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                                      const tut::cg::SolveOptions& opt) {
    const std::vector<float> dinv = tut::cg::inverse_diagonal(A);
    return std::make_unique<DevicePointerSolver>(dA, dinv, opt);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::cg::Variant> variants() { return {{"device pointers", make_device_pointers}}; }
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"cg", "03_device_pointer_mode",
                               "device pointer mode: scalars stay on the GPU, residual checked every k iterations"};
    const std::vector<tut::cg::Variant> variants = lesson::variants();
    tut::cg::Options options(lesson, tut::cg::Preconditioner::jacobi);  // --problem, --matrix, --tol, ...
    options.cli.add_int("check-every", &options.check_every, "look at the residual every k iterations", 1, 100000);
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
