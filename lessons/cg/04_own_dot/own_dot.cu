// cg/04_own_dot: our own dot-product kernel in place of cublasSdot.
// Starts from: lesson 03's device-pointer loop. Adds: a one-launch dot product: a
// grid-stride loop, a sum over the block, and one atomicAdd per block into the result.
// cublasSdot in device pointer mode is two launches (per-block partial sums, then a final
// reduction) written for any length, stride and type; three dots per iteration, so six
// launches become three. The result accumulates, so it must start at zero: the kernel that
// consumes a dot product (update_alpha, update_beta) zeroes it.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/cg/04_own_dot/own_dot.cu -lcublas -lcusparse -o own_dot
// Run:  ./own_dot               (--help for options)
//
// In this file:
//   dot_kernel                  *result += x . y, one launch (the exercise)
//   block_sum                   the sum over a block, valid in thread 0
//   update_alpha, update_beta   lesson 03's scalar kernels, now also zeroing the sums they read
//   OwnDotSolver                lesson 03's loop with dot_kernel for cublasSdot, or, for
//                               the baseline, with lesson 03's cublasSdot (DotBy)
//   variants "cuBLAS dot" (the baseline, lesson 03's iteration, timed in the same run: the
//            table's first row), "own dot" (the lesson)
#include "tut/cg.hpp"
#include "tut/check_cublas.hpp"

namespace {

using tut::cg::SolveResult;

constexpr int kThreads = 256;  // threads per block of every kernel launched here
using tut::cg::kConverged;  // the status codes: tut/cg.hpp
using tut::cg::kNotPositiveDefinite;
using tut::cg::kRunning;
constexpr int kDotBlocksPerSm = 8;  // enough blocks to fill the GPU; few enough atomics
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block_sum adds whole warps, at most 32 of them");

// Sum of v over the block; the result is valid in thread 0. blockDim.x: a multiple of 32.
__device__ float block_sum(float v) {
    __shared__ float warp_sums[32];
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < int(blockDim.x / 32) ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    }
    return v;
}

// *result += x . y. *result must be zero (or a partial sum) before the launch.
__global__ void dot_kernel(int n, const float* __restrict__ x, const float* __restrict__ y, float* result) {
    float sum = 0.0f;
    // TODO(exercise): *result += x . y in this one launch.
    //   The host fixes the grid (at most kDotBlocksPerSm blocks per SM: on a large vector
    //   far fewer threads than elements), and every block adds into the same float.
    //   Constraints: each product must be counted exactly once, whatever n and the grid
    //   size; the partial sums must reach *result without a second kernel, and not with
    //   one atomic per element (tens of thousands of atomics on one address serialise).
    //   Hints: first let each thread add up its share of the products in `sum`, with
    //   neighbouring threads reading neighbouring elements at every step. block_sum()
    //   then adds up the block's threads (the next line). *result is zero when the kernel
    //   starts: update_alpha and update_beta zero the sums they consume.
    sum = block_sum(sum);  // the block's total, in thread 0
    // TODO(exercise), continued: hand the block's total to *result, once per block.
    //   Until both parts are written, every dot product is 0, ||b|| looks like 0, and the
    //   solver stops at once with x = 0.
}

// Everything the iteration needs to know, in device memory. Our dot kernel accumulates
// into pq, rr and rz_new (each zeroed by the kernel that consumes it); cuBLAS and
// cuSPARSE read alpha, beta from it.
struct Scalars {
    float pq, rr, rz, rz_new;           // p.q, r.r, r.z (current), r.z (new)
    float alpha, minus_alpha, beta;
    float bb, threshold;                // ||b||^2 and tol^2 ||b||^2
    float rr_last;                      // the last ||r||^2, kept for the host (rr is zeroed)
    int iteration, status, converged_at;
};

__global__ void jacobi_apply(int n, const float* __restrict__ dinv, const float* __restrict__ r, float* __restrict__ z) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = dinv[i] * r[i];
}

// After the first dot products: remember ||b||^2, set the threshold, maybe already done.
__global__ void start_scalars(Scalars* s, float tol2) {
    s->bb = s->rr_last = s->rr;
    s->threshold = tol2 * s->rr;
    s->iteration = 0;
    s->status = s->rr <= s->threshold ? kConverged : kRunning;
    s->converged_at = s->status == kConverged ? 0 : -1;
    s->rr = 0.0f;  // ready for the first iteration's dot
}

// alpha = r.z / p.q. Once the solve is over, alpha = 0: the iterations the host runs
// before it notices leave x and r as they are. p.q <= 0 means A is not positive definite.
__global__ void update_alpha(Scalars* s) {
    const float pq = s->pq;
    s->pq = 0.0f;  // ready for the next iteration's dot
    if (s->status != kRunning) {
        s->alpha = s->minus_alpha = 0.0f;
        return;
    }
    s->iteration++;
    if (!(pq > 0.0f)) {  // also catches NaN
        s->status = kNotPositiveDefinite;
        s->alpha = s->minus_alpha = 0.0f;
        return;
    }
    s->alpha = s->rz / pq;
    s->minus_alpha = -s->alpha;
}

// Convergence test on ||r||^2, then beta = r.z new / old.
__global__ void update_beta(Scalars* s) {
    const float rr = s->rr, rz_new = s->rz_new;
    s->rr = s->rz_new = 0.0f;  // ready for the next iteration's dots
    if (s->status != kRunning) {
        s->beta = 0.0f;
        return;
    }
    s->rr_last = rr;
    if (rr <= s->threshold) {
        s->status = kConverged;
        s->converged_at = s->iteration;
        s->beta = 0.0f;
        return;
    }
    s->beta = rz_new / s->rz;
    s->rz = rz_new;
}

// What computes the dot products: our kernel (the lesson), or cublasSdot in device pointer
// mode as in lesson 03 (the baseline variant, timed in the same run).
enum class DotBy { own_kernel, cublas };

class OwnDotSolver final : public tut::cg::Solver {
  public:
    OwnDotSolver(const tut::cg::DeviceMatrix& A, const std::vector<float>& dinv, const tut::cg::SolveOptions& opt,
                 DotBy dot_by)
        : n_(A.n()), dot_by_(dot_by), opt_(opt), dinv_(dinv), r_(size_t(n_)), z_(size_t(n_)), p_(size_t(n_)),
          q_(size_t(n_)), consts_(std::vector<float>{1.0f, 0.0f}), scalars_(1) {
        int device = 0, sms = 0;
        TUT_CUDA(cudaGetDevice(&device));
        TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        dot_blocks_ = std::max(1, std::min((n_ + kThreads - 1) / kThreads, kDotBlocksPerSm * sms));
        TUT_CUBLAS(cublasCreate(&cublas_));
        TUT_CUSPARSE(cusparseCreate(&cusparse_));
        // Scalars are device pointers from now on: no call returns a value to the host.
        TUT_CUBLAS(cublasSetPointerMode(cublas_, CUBLAS_POINTER_MODE_DEVICE));
        TUT_CUSPARSE(cusparseSetPointerMode(cusparse_, CUSPARSE_POINTER_MODE_DEVICE));
        spmv_ = std::make_unique<tut::cg::CusparseSpmv>(cusparse_, A.view(), p_.get(), q_.get());
    }
    ~OwnDotSolver() override {
        spmv_.reset();
        cusparseDestroy(cusparse_);
        cublasDestroy(cublas_);
    }

    SolveResult solve(const float* b, float* x) override {
        Scalars* s = scalars_.get();
        TUT_CUDA(cudaMemsetAsync(s, 0, sizeof(Scalars)));
        TUT_CUDA(cudaMemsetAsync(x, 0, sizeof(float) * n_));
        TUT_CUBLAS(cublasScopy(cublas_, n_, b, 1, r_.get(), 1));
        dot(r_.get(), r_.get(), &s->rr);
        precondition();
        TUT_CUBLAS(cublasScopy(cublas_, n_, z_.get(), 1, p_.get(), 1));
        dot(r_.get(), z_.get(), &s->rz);
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
        return tut::cg::solve_result(tut::cg::outcome_of(h.status), performed, h.converged_at, h.rr_last, h.bb);
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
        dot(p_.get(), q_.get(), &s->pq);
        update_alpha<<<1, 1>>>(s);
        TUT_LAUNCH("update_alpha");
        TUT_CUBLAS(cublasSaxpy(cublas_, n_, &s->alpha, p_.get(), 1, x, 1));          // x += alpha p
        TUT_CUBLAS(cublasSaxpy(cublas_, n_, &s->minus_alpha, q_.get(), 1, r_.get(), 1));  // r -= alpha q
        dot(r_.get(), r_.get(), &s->rr);
        precondition();                                                              // z = D^-1 r
        dot(r_.get(), z_.get(), &s->rz_new);
        update_beta<<<1, 1>>>(s);
        TUT_LAUNCH("update_beta");
        TUT_CUBLAS(cublasSscal(cublas_, n_, &s->beta, p_.get(), 1));                  // p = beta p
        TUT_CUBLAS(cublasSaxpy(cublas_, n_, one, z_.get(), 1, p_.get(), 1));          //   + z
    }
    void precondition() {
        jacobi_apply<<<(n_ + kThreads - 1) / kThreads, kThreads>>>(n_, dinv_.get(), r_.get(), z_.get());
        TUT_LAUNCH("jacobi_apply");
    }
    void dot(const float* a, const float* b, float* result) {
        if (dot_by_ == DotBy::cublas) {  // the baseline: two launches; *result is overwritten, not added to
            TUT_CUBLAS(cublasSdot(cublas_, n_, a, 1, b, 1, result));
            return;
        }
        dot_kernel<<<dot_blocks_, kThreads>>>(n_, a, b, result);
        TUT_LAUNCH("dot_kernel");
    }

    int n_;
    int dot_blocks_ = 1;
    DotBy dot_by_;
    tut::cg::SolveOptions opt_;
    tut::DeviceBuffer<float> dinv_, r_, z_, p_, q_;
    tut::DeviceBuffer<float> consts_;  // 1 and 0, for the device-pointer alpha/beta of SpMV and axpy
    tut::DeviceBuffer<Scalars> scalars_;
    cublasHandle_t cublas_ = nullptr;
    cusparseHandle_t cusparse_ = nullptr;
    std::unique_ptr<tut::cg::CusparseSpmv> spmv_;
};

std::unique_ptr<tut::cg::Solver> make_own_dot(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                              const tut::cg::SolveOptions& opt) {
    const std::vector<float> dinv = tut::cg::inverse_diagonal(A);
    return std::make_unique<OwnDotSolver>(dA, dinv, opt, DotBy::own_kernel);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {

// The baseline: lesson 03's iteration, the same loop with cublasSdot (device pointer mode,
// two launches) for every dot product. The scalar kernels' zeroing of the sums does no
// harm there: cublasSdot overwrites its result.
std::unique_ptr<tut::cg::Solver> make_cublas_dot(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                                 const tut::cg::SolveOptions& opt) {
    const std::vector<float> dinv = tut::cg::inverse_diagonal(A);
    return std::make_unique<OwnDotSolver>(dA, dinv, opt, DotBy::cublas);
}

}  // namespace

namespace lesson {
std::vector<tut::cg::Variant> variants() {
    return {{"cuBLAS dot", make_cublas_dot},  // the baseline, lesson 03's iteration
            {"own dot", make_own_dot}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"cg", "04_own_dot", "our own dot-product kernel instead of cublasSdot"};
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
