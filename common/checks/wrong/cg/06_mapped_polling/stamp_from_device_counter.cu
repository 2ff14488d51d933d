// wrong: cg/06_mapped_polling: publish() stamps the state with the GPU's iteration count (s->iteration) instead of the host's stamp
// caught by: cg/06_mapped_polling: solves the default problem and small ones to tolerance
// kind: other
// The counts agree until the solve is over; then s->iteration stops while the host still enqueues.
// poll=every-iteration passes, but poll=every-k waits for a stamp that never comes: after 5 s
// wait_for() throws and the solve fails.
// cg/06_mapped_polling: poll the residual in pinned, mapped host memory instead of copying it back.
// Starts from: lesson 05's three fused kernels. Adds: a way for the host to learn how an
// iteration ended without any CUDA call: the last kernel of every iteration writes the
// state (stamp, status, ||r||^2) into page-locked host memory mapped into the GPU's address
// space (cudaHostAllocMapped), and the host reads it there. The GPU writes the payload,
// then __threadfence_system(), then the stamp; the host reads the stamp, then (acquire
// fence) the payload. Without the fence the host could see a new stamp next to an old
// residual.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/cg/06_mapped_polling/mapped_polling.cu -o mapped_polling
// Run:  ./mapped_polling          (--help for options)
//
// In this file:
//   publish()               one thread writes the state to host memory, stamp last (the exercise)
//   update_p_and_publish    lesson 05's update_p, then publish()
//   PollingSolver           three ways to use it (the variants):
//     poll=every-iteration  wait for each iteration's stamp before enqueuing the next
//                           (as in the story: the GPU idles while the host looks)
//     poll=every-k          enqueue k iterations, wait for the last stamp (lesson 05 with a
//                           spin on host memory in place of a cudaMemcpy)
//     poll=run-ahead        keep enqueuing, peek at the stamp without waiting, stop as soon
//                           as it says the solve is over; never more than k in flight
// Lesson 05's kernels (spmv_pq_alpha, update_x_r_z, start) come from tut/cg_fused_update.hpp.
#include "tut/cg.hpp"
#include "tut/cg_fused_update.hpp"

#include <atomic>
#include <chrono>

namespace {

using namespace tut::cg::fused;  // lesson 05: Scalars, start, spmv_pq_alpha, update_x_r_z, ...
using tut::cg::SolveResult;

// What the GPU tells the host after every iteration, in mapped host memory.
struct Published {
    float rr, bb;                       // ||r||^2 after the iteration, ||b||^2
    int status, iteration, converged_at;
    int stamp;                          // written last: the host's number for the iteration
};

// Writes the state to host memory; `stamp` last, so that a host that sees the new stamp
// also sees the payload that goes with it.
__device__ void publish(Published* host, const Scalars* s, int stamp) {
    host->rr = s->rr_last;
    host->bb = s->bb;
    host->status = s->status;
    host->iteration = s->iteration;
    host->converged_at = s->converged_at;
    __threadfence_system();  // the payload reaches the host before the stamp does
    *reinterpret_cast<volatile int*>(&host->stamp) = s->iteration;
}

// p = z + beta p (lesson 05's update_p); then one thread publishes the state the
// iteration ended in.
__global__ void update_p_and_publish(int n, const float* __restrict__ z, float* __restrict__ p, const Scalars* s,
                                     Published* host, int stamp) {
    const float beta = s->beta;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = z[i] + beta * p[i];
    if (blockIdx.x == 0 && threadIdx.x == 0) publish(host, s, stamp);
}

enum class Polling { every_iteration, every_k, run_ahead };

class PollingSolver final : public tut::cg::Solver {
  public:
    PollingSolver(const tut::cg::DeviceMatrix& A, const std::vector<float>& dinv, const tut::cg::SolveOptions& opt,
                  Polling polling)
        : n_(A.n()), opt_(opt), polling_(polling), grid_(fused_grid(A.n())), dinv_(dinv), r_(size_t(n_)),
          z_(size_t(n_)), p_(size_t(n_)), q_(size_t(n_)), A_(A.view()), scalars_(1) {
        // Page-locked host memory the GPU can write directly (over PCIe or NVLink-C2C).
        TUT_CUDA(cudaHostAlloc(&host_, sizeof(Published), cudaHostAllocMapped));
        TUT_CUDA(cudaHostGetDevicePointer(&host_on_device_, host_, 0));
    }
    ~PollingSolver() override { cudaFreeHost(host_); }
    PollingSolver(const PollingSolver&) = delete;
    PollingSolver& operator=(const PollingSolver&) = delete;

    SolveResult solve(const float* b, float* x) override {
        Scalars* s = scalars_.get();
        TUT_CUDA(cudaMemsetAsync(s, 0, sizeof(Scalars)));
        start<<<grid_.blocks, kThreads>>>(n_, b, dinv_.get(), x, r_.get(), z_.get(), p_.get(), s,
                                          float(opt_.tolerance * opt_.tolerance));
        TUT_LAUNCH("start");

        // Forget the last solve: until iteration 1 is published the host must see "running"
        // (a stale "converged" here would end the next solve after one iteration).
        volatile Published* fresh = host_;
        fresh->status = kRunning;
        fresh->rr = fresh->bb = 0.0f;
        fresh->iteration = 0;
        fresh->converged_at = -1;
        fresh->stamp = 0;

        // Iterations are numbered 1, 2, ... by the host (the stamp); `seen` is the state of
        // the latest iteration the host has read.
        int enqueued = 0;
        Published seen{};
        const int k = opt_.check_every;
        while (enqueued < opt_.max_iterations) {
            iteration(x, ++enqueued);
            if (polling_ == Polling::every_iteration) {
                seen = wait_for(enqueued);
            } else if (polling_ == Polling::every_k) {
                if (enqueued % k != 0) continue;
                seen = wait_for(enqueued);
            } else {  // run ahead: look without waiting; wait only to keep <= k in flight
                seen = peek();
                if (enqueued - seen.stamp >= k) seen = wait_for(enqueued - k + 1);
            }
            if (seen.status != kRunning) break;
        }
        if (seen.stamp != enqueued) seen = wait_for(enqueued);  // the queue must be drained anyway
        TUT_CUDA(cudaDeviceSynchronize());
        return tut::cg::solve_result(tut::cg::outcome_of(seen.status), enqueued, seen.converged_at, seen.rr, seen.bb);
    }

    // The fused SpMV kernel alone. After a solve the status is no longer "running", so
    // it leaves the solver's scalars as they were (alpha 0, p.q reset).
    bool spmv_once() override {
        spmv_pq_alpha<<<grid_.spmv_blocks, kThreads>>>(A_, p_.get(), q_.get(), scalars_.get());
        TUT_LAUNCH("spmv_pq_alpha");
        return true;
    }

  private:
    // The latest published state, without waiting. Reading the stamp, then an acquire
    // fence, then the payload: the mirror image of publish().
    Published peek() const {
        Published p;
        p.stamp = *reinterpret_cast<volatile const int*>(&host_->stamp);
        std::atomic_thread_fence(std::memory_order_acquire);
        const volatile Published* v = host_;
        p.rr = v->rr;
        p.bb = v->bb;
        p.status = v->status;
        p.iteration = v->iteration;
        p.converged_at = v->converged_at;
        return p;
    }

    // Spins until iteration `stamp` has been published. Gives up after 5 s (an iteration
    // takes microseconds to a millisecond), so a kernel that never publishes cannot hang us.
    Published wait_for(int stamp) const {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        for (;;) {
            Published p = peek();
            if (p.stamp >= stamp) return p;
            if (std::chrono::steady_clock::now() > deadline)
                throw std::runtime_error("waited 5 s for iteration " + std::to_string(stamp) +
                                         " to appear in mapped host memory (last seen: " + std::to_string(p.stamp) +
                                         "): does the GPU publish it?");
        }
    }

    // Three kernels, enqueued; nothing here waits for the GPU.
    void iteration(float* x, int stamp) {
        Scalars* s = scalars_.get();
        spmv_pq_alpha<<<grid_.spmv_blocks, kThreads>>>(A_, p_.get(), q_.get(), s);
        TUT_LAUNCH("spmv_pq_alpha");
        update_x_r_z<<<grid_.blocks, kThreads>>>(n_, p_.get(), q_.get(), dinv_.get(), x, r_.get(), z_.get(), s);
        TUT_LAUNCH("update_x_r_z");
        update_p_and_publish<<<grid_.blocks, kThreads>>>(n_, z_.get(), p_.get(), s, host_on_device_, stamp);
        TUT_LAUNCH("update_p_and_publish");
    }

    int n_;
    tut::cg::SolveOptions opt_;
    Polling polling_;
    FusedGrid grid_;
    Published* host_ = nullptr;            // the host's view of the mapped memory
    Published* host_on_device_ = nullptr;  // the GPU's view of the same memory
    tut::DeviceBuffer<float> dinv_, r_, z_, p_, q_;
    tut::cg::DeviceCsr A_;
    tut::DeviceBuffer<Scalars> scalars_;
};

// Builds the solver of one polling policy (a variant's run).
std::function<tut::cg::Make> polling_factory(Polling polling) {
    return [polling](const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA, const tut::cg::SolveOptions& opt) {
        const std::vector<float> dinv = tut::cg::inverse_diagonal(A);
        return std::unique_ptr<tut::cg::Solver>(std::make_unique<PollingSolver>(dA, dinv, opt, polling));
    };
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::cg::Variant> variants() {
    return {{"poll=every-iteration", polling_factory(Polling::every_iteration)},
            {"poll=every-k", polling_factory(Polling::every_k)},
            {"poll=run-ahead", polling_factory(Polling::run_ahead)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"cg", "06_mapped_polling", "polling the residual in pinned mapped host memory"};
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
