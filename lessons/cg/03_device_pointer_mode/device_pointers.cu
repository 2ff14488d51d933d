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
//   HostPointerSolver           below the divider: lesson 02's loop as it was (host pointer
//                               mode, the host waits for every dot product), the baseline
//   variants "host pointers" (the baseline, timed in the same run: the table's first row),
//            "device pointers" (the lesson)
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
    // TODO(exercise): alpha on the device. One thread runs this kernel, after the dot
    //   product that left p.q in s->pq and before the two axpys, which read s->alpha and
    //   s->minus_alpha from device memory when they run.
    //   Constraint: the host looks only every k iterations, so this kernel keeps being
    //   launched after the solve is over; those late iterations must leave x and r exactly
    //   as they are. Nothing else looks at p.q either: this is where an iteration is counted
    //   and where a matrix that is not positive definite (p.Ap <= 0) must end the solve.
    //   Hints: decide on the status first. A NaN fails every comparison, so phrase the test
    //   for definiteness so that NaN lands on the failing side. Until this is written,
    //   alpha stays 0, nothing moves, and every solve runs to its iteration limit.
}

// Convergence test on ||r||^2, then beta = r.z new / old.
__global__ void update_beta(Scalars* s) {
    // TODO(exercise): the stopping test and beta, on the device, once the new r.r
    //   (s->rr) and the new r.z (s->rz_new) are in.
    //   Constraint: the late iterations after the solve is over still form p from z and
    //   beta p, and x += alpha p leaves x alone only while p stays finite (0 times NaN or
    //   infinity is NaN); by then r.z may be 0. The host sees convergence up to k - 1
    //   iterations late, so the iteration at which ||r||^2 first met s->threshold has to
    //   be written down here, when it happens.
    //   Hint: beta needs r.z twice, old and new; which of the two must the next
    //   iteration's alpha find in s->rz?
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

namespace {

using tut::cg::Outcome;

// The baseline: lesson 02's solver as it was. cuBLAS and cuSPARSE stay in host pointer mode,
// so each of the three dot products of an iteration returns its value to a host float, and
// the host waits for it; it looks at r.r every iteration. It runs in the same program so
// that the table and the checks' speed case compare the two loops in one run.
class HostPointerSolver final : public tut::cg::Solver {
  public:
    HostPointerSolver(const tut::cg::DeviceMatrix& A, const std::vector<float>& dinv, const tut::cg::SolveOptions& opt)
        : n_(A.n()), opt_(opt), dinv_(dinv), r_(size_t(n_)), z_(size_t(n_)), p_(size_t(n_)), q_(size_t(n_)) {
        TUT_CUDA(cudaMemset(z_.get(), 0, z_.bytes()));
        TUT_CUBLAS(cublasCreate(&cublas_));
        TUT_CUSPARSE(cusparseCreate(&cusparse_));
        spmv_ = std::make_unique<tut::cg::CusparseSpmv>(cusparse_, A.view(), p_.get(), q_.get());
    }
    ~HostPointerSolver() override {
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

        // Eigen's order, as in lesson 02: q = A p; alpha = r.z / p.q; x += alpha p;
        // r -= alpha q; stop if ||r|| small; z = D^-1 r; beta = r.z new / old; p = z + beta p.
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
            const float rz_old = rz;
            TUT_CUBLAS(cublasSdot(cublas_, n_, r_.get(), 1, z_.get(), 1, &rz));  // waits
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

std::unique_ptr<tut::cg::Solver> make_host_pointers(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                                    const tut::cg::SolveOptions& opt) {
    const std::vector<float> dinv = tut::cg::inverse_diagonal(A);
    return std::make_unique<HostPointerSolver>(dA, dinv, opt);
}

}  // namespace

namespace lesson {
std::vector<tut::cg::Variant> variants() {
    return {{"host pointers", make_host_pointers},  // the baseline, lesson 02's loop
            {"device pointers", make_device_pointers}};
}
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
