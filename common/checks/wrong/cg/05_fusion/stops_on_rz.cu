// wrong: cg/05_fusion: the stopping test compares r.z (the sum beta uses) with the threshold instead of r.r
// caught by: cg/05_fusion: solves the default problem and small ones to tolerance
// kind: stopping-test
// r.z = r D^-1 r is about r.r / 300 on the default problem (diagonal entries of a few hundred):
// it stops with ||r|| about 17 tol ||b||, and the true residual (CPU, double) exceeds 2 tol.
// cg/05_fusion: kernel fusion: an iteration of three kernels of our own.
// Starts from: lesson 04's loop. Adds: three kernels per iteration, each walking its data
// once, where lesson 04 made eleven calls from the host per iteration (cusparseSpMV, three
// dots, two scalar kernels, the Jacobi kernel, two axpys, a scal and an axpy; cusparseSpMV
// alone is three kernels on the GPU, so thirteen kernels in all). At 40 000 rows each of
// those is a few microseconds of launch and ramp-up around well under a microsecond of
// memory traffic, so the iteration cost what its launches cost. Fusing work that walks the
// same rows removes launches, and the round trips through memory of values another kernel
// has just written.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/cg/05_fusion/fusion.cu -o fusion
// Run:  ./fusion --problem both     (--help for options)
//
// In this file:
//   update_x_r_z    x += alpha p, r -= alpha q, z = D^-1 r and both dots r.z, r.r in one
//                   pass; the last block to finish tests convergence and computes beta
//                   (the exercise)
//   FusedSolver     three launches per iteration, the residual looked at every k
//   variant "fused"
// In tut/cg_fused.hpp (shared with lessons 06 and 07; read spmv_pq_alpha first, it is the
// worked example of the same pattern):
//   spmv_pq_alpha   q = A p with our own SpMV, p.q as each row's q is made, and the last
//                   block computes alpha (a library SpMV cannot take a dot product along;
//                   at this size cusparseSpMV also costs more than our whole kernel)
//   update_p        p = z + beta p
//   start, block_sum, last_block, Scalars
// "The last block to finish" (an atomicAdd on a counter after a __threadfence) replaces
// the one-thread scalar kernels of lessons 03-04: the block that draws the last ticket
// knows every partial sum is in, so the scalar step needs no launch of its own.
#include "tut/cg.hpp"
#include "tut/cg_fused.hpp"

namespace {

using namespace tut::cg::fused;  // Scalars, block_sum, last_block, start, spmv_pq_alpha, update_p, ...
using tut::cg::SolveResult;

// x += alpha p; r -= alpha q; z = D^-1 r; r.z and r.r, in one pass over the rows. The last
// block tests convergence and computes beta (0 once the solve is over).
__global__ void update_x_r_z(int n, const float* __restrict__ p, const float* __restrict__ q,
                             const float* __restrict__ dinv, float* __restrict__ x, float* __restrict__ r,
                             float* __restrict__ z, Scalars* s) {
    const float alpha = s->alpha;
    float rz = 0.0f, rr = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        x[i] += alpha * p[i];
        const float ri = r[i] - alpha * q[i];
        const float zi = dinv[i] * ri;
        r[i] = ri;
        z[i] = zi;
        rz += ri * zi;
        rr += ri * ri;
    }
    block_sum(rz, rr);
    if (threadIdx.x == 0) {
        atomicAdd(&s->rz_new, rz);
        atomicAdd(&s->rr, rr);
        if (last_block(&s->blocks_done)) {
            const float rz_new = __ldcg(&s->rz_new), rr_total = __ldcg(&s->rr);
            s->rz_new = s->rr = 0.0f;
            s->beta = 0.0f;
            if (s->status == kRunning) {
                s->rr_last = rr_total;
                if (rz_new <= s->threshold) {
                    s->status = kConverged;
                    s->converged_at = s->iteration;
                } else {
                    s->beta = rz_new / s->rz;
                    s->rz = rz_new;
                }
            }
        }
    }
}

class FusedSolver final : public tut::cg::Solver {
  public:
    FusedSolver(const tut::cg::DeviceMatrix& A, const std::vector<float>& dinv, const tut::cg::SolveOptions& opt)
        : n_(A.n()), opt_(opt), grid_(fused_grid(A.n())), dinv_(dinv), r_(size_t(n_)), z_(size_t(n_)),
          p_(size_t(n_)), q_(size_t(n_)), A_(A.view()), scalars_(1) {}

    SolveResult solve(const float* b, float* x) override {
        Scalars* s = scalars_.get();
        TUT_CUDA(cudaMemsetAsync(s, 0, sizeof(Scalars)));
        start<<<grid_.blocks, kThreads>>>(n_, b, dinv_.get(), x, r_.get(), z_.get(), p_.get(), s,
                                          float(opt_.tolerance * opt_.tolerance));
        TUT_LAUNCH("start");

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
        return fused_result(h, performed);
    }

    // The fused SpMV kernel alone. After a solve the status is no longer "running", so
    // it leaves the solver's scalars as they were (alpha 0, p.q reset).
    bool spmv_once() override {
        spmv_pq_alpha<<<grid_.spmv_blocks, kThreads>>>(A_, p_.get(), q_.get(), scalars_.get());
        TUT_LAUNCH("spmv_pq_alpha");
        return true;
    }

  private:
    // Three kernels, enqueued; nothing here waits for the GPU.
    void iteration(float* x) {
        Scalars* s = scalars_.get();
        spmv_pq_alpha<<<grid_.spmv_blocks, kThreads>>>(A_, p_.get(), q_.get(), s);
        TUT_LAUNCH("spmv_pq_alpha");
        update_x_r_z<<<grid_.blocks, kThreads>>>(n_, p_.get(), q_.get(), dinv_.get(), x, r_.get(), z_.get(), s);
        TUT_LAUNCH("update_x_r_z");
        update_p<<<grid_.blocks, kThreads>>>(n_, z_.get(), p_.get(), s);
        TUT_LAUNCH("update_p");
    }

    int n_;
    tut::cg::SolveOptions opt_;
    FusedGrid grid_;
    tut::DeviceBuffer<float> dinv_, r_, z_, p_, q_;
    tut::cg::DeviceCsr A_;
    tut::DeviceBuffer<Scalars> scalars_;
};

std::unique_ptr<tut::cg::Solver> make_fused(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                            const tut::cg::SolveOptions& opt) {
    const std::vector<float> dinv = tut::cg::inverse_diagonal(A);
    return std::make_unique<FusedSolver>(dA, dinv, opt);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::cg::Variant> variants() { return {{"fused", make_fused}}; }
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"cg", "05_fusion", "kernel fusion: three kernels per iteration, the SpMV our own"};
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
