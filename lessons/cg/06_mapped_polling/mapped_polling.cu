// CG lesson 6: poll the residual in pinned, mapped host memory instead of copying it back.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/cg/06_mapped_polling/mapped_polling.cu -o mapped_polling
// Run:  ./mapped_polling          (--help for options)
//
// Lesson 5 learns the residual with a cudaMemcpy every k iterations: a full stop of the
// queue each time, and up to k - 1 iterations run past convergence. Here the last kernel
// of every iteration writes the state (stamp, status, ||r||^2) into page-locked host
// memory mapped into the GPU's address space (cudaHostAllocMapped), and the host reads it
// there without any CUDA call. Three ways to use that:
//   - poll every iteration: wait for each iteration's stamp before enqueuing the next
//     (the story's version: the GPU idles while the host sees the value and launches);
//   - poll every k: enqueue k iterations, wait for the last one's stamp (lesson 5 with a
//     spin on host memory instead of a cudaMemcpy);
//   - run ahead: keep enqueuing, peek at the stamp without waiting, stop as soon as it
//     says the solve is over; never more than k iterations in flight.
// The memory ordering: the GPU writes the payload, then __threadfence_system(), then the
// stamp; the host reads the stamp, then (acquire fence) the payload. Without the fence the
// host could see a new stamp next to an old residual.
#include "tut/cg.hpp"

#include <atomic>
#include <chrono>

namespace {

using tut::cg::Outcome;
using tut::cg::SolveResult;

constexpr int kBlock = 256;
constexpr int kBlocksPerSm = 8;
enum Status : int { kRunning = 0, kConverged = 1, kNotPositiveDefinite = 2 };

struct Scalars {
    float pq, rr, rz, rz_new;           // dot products being accumulated / their results
    float alpha, beta;
    float bb, threshold;
    float rr_last;
    int iteration, status, converged_at;
    unsigned blocks_done;               // for the last-block pattern; back to 0 after each use
};

// What the GPU tells the host after every iteration, in mapped host memory.
struct Published {
    float rr, bb;                       // ||r||^2 after the iteration, ||b||^2
    int status, iteration, converged_at;
    int stamp;                          // written last: the host's number for the iteration
};

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// Sums a and b over the block (two reductions for the price of one __syncthreads pair).
// The results are valid in thread 0.
__device__ void block_sum2(float& a, float& b) {
    __shared__ float2 warp_sums[32];
    a = warp_sum(a);
    b = warp_sum(b);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = make_float2(a, b);
    __syncthreads();
    if (warp == 0) {
        const float2 w = lane < int(blockDim.x / 32) ? warp_sums[lane] : make_float2(0.0f, 0.0f);
        a = warp_sum(w.x);
        b = warp_sum(w.y);
    }
}

// Called by thread 0 of every block after its atomicAdds; true in exactly one block, the
// last to get here, which then sees every block's contribution. The __threadfence
// orders this block's atomicAdds before its count.
__device__ bool last_block(unsigned* blocks_done) {
    __threadfence();
    const unsigned ticket = atomicAdd(blocks_done, 1u);
    const bool last = ticket == gridDim.x - 1;
    if (last) *blocks_done = 0;  // everyone has counted: reset for the next use
    return last;
}

// Before the loop: x = 0, r = b, z = D^-1 r, p = z, r.z and r.r; the last block sets the
// threshold. *s must be zero.
__global__ void start(int n, const float* __restrict__ b, const float* __restrict__ dinv, float* __restrict__ x,
                      float* __restrict__ r, float* __restrict__ z, float* __restrict__ p, Scalars* s, float tol2) {
    float rz = 0.0f, rr = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float ri = b[i], zi = dinv[i] * ri;
        x[i] = 0.0f;
        r[i] = ri;
        z[i] = zi;
        p[i] = zi;
        rz += ri * zi;
        rr += ri * ri;
    }
    block_sum2(rz, rr);
    if (threadIdx.x == 0) {
        atomicAdd(&s->rz, rz);
        atomicAdd(&s->rr, rr);
        if (last_block(&s->blocks_done)) {
            const float bb = __ldcg(&s->rr);
            s->bb = s->rr_last = bb;
            s->threshold = tol2 * bb;
            s->status = bb <= s->threshold ? kConverged : kRunning;
            s->converged_at = s->status == kConverged ? 0 : -1;
            s->rr = 0.0f;
        }
    }
}

// q = A p with our own CSR SpMV, p.q in the same pass, and the last block computes alpha
// (0 once the solve is over) and flags p.q <= 0. A sub-warp of kLanes lanes takes a row:
// lane l adds nonzeros l, l + kLanes, ..., loading kUnroll of them before using any, so
// that independent loads are in flight together. Whole warps loop together (the width-
// kLanes shuffles need all 32 lanes). The matrix is read through the read-only path
// (__ldg): it does not change during the kernel.
constexpr int kLanes = 8, kUnroll = 4;

__global__ void __launch_bounds__(kBlock, kBlocksPerSm)
    spmv_pq_alpha(tut::cg::DeviceCsr A, const float* __restrict__ p, float* __restrict__ q, Scalars* s) {
    const int tid = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    const int lane = tid % kLanes, groups = threads / kLanes;
    float pq = 0.0f, unused = 0.0f;
    for (int row = tid / kLanes, first = (tid / 32) * (32 / kLanes); first < A.n; row += groups, first += groups) {
        int begin = 0, end = 0;
        if (row < A.n) {
            begin = __ldg(A.row_ptr + row);
            end = __ldg(A.row_ptr + row + 1);
        }
        float sum = 0.0f;
        for (int base = begin + lane; base < end; base += kLanes * kUnroll) {
            float value[kUnroll];
            int column[kUnroll];
#pragma unroll
            for (int j = 0; j < kUnroll; ++j) {
                const int k = base + j * kLanes;
                value[j] = k < end ? __ldg(A.values + k) : 0.0f;
                column[j] = k < end ? __ldg(A.col_idx + k) : 0;
            }
#pragma unroll
            for (int j = 0; j < kUnroll; ++j) sum += value[j] * p[column[j]];
        }
        for (int offset = kLanes / 2; offset > 0; offset >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, offset, kLanes);
        if (lane == 0 && row < A.n) {
            q[row] = sum;
            pq += p[row] * sum;
        }
    }
    block_sum2(pq, unused);
    if (threadIdx.x == 0) {
        atomicAdd(&s->pq, pq);
        if (last_block(&s->blocks_done)) {
            const float total = __ldcg(&s->pq);
            s->pq = 0.0f;
            s->alpha = 0.0f;
            if (s->status == kRunning) {
                s->iteration++;
                if (total > 0.0f)
                    s->alpha = s->rz / total;
                else
                    s->status = kNotPositiveDefinite;  // also NaN
            }
        }
    }
}

// x += alpha p; r -= alpha q; z = D^-1 r; r.z and r.r. The last block tests convergence
// and computes beta (0 once the solve is over).
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
    block_sum2(rz, rr);
    if (threadIdx.x == 0) {
        atomicAdd(&s->rz_new, rz);
        atomicAdd(&s->rr, rr);
        if (last_block(&s->blocks_done)) {
            const float rz_new = __ldcg(&s->rz_new), rr_total = __ldcg(&s->rr);
            s->rz_new = s->rr = 0.0f;
            s->beta = 0.0f;
            if (s->status == kRunning) {
                s->rr_last = rr_total;
                if (rr_total <= s->threshold) {
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

// Writes the state to host memory; `stamp` last, so that a host that sees the new stamp
// also sees the payload that goes with it.
__device__ void publish(Published* host, const Scalars* s, int stamp) {
    // TODO(exercise): tell the host how the iteration ended, through mapped memory.
    //   1. the payload: host->rr (= s->rr_last), bb, status, iteration, converged_at;
    //   2. a fence that makes those writes visible to the host (not just to the GPU)
    //      before anything written after it: which __threadfence*() is that?
    //   3. the stamp, last, through a volatile pointer so the store is not deferred.
    // Until this is written the host waits for a stamp that never comes (5 s, then an error).
    (void)host, (void)s, (void)stamp;
}

// p = z + beta p; one thread publishes the state the iteration ended in.
__global__ void update_p(int n, const float* __restrict__ z, float* __restrict__ p, const Scalars* s,
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
        : n_(A.n()), opt_(opt), polling_(polling), dinv_(dinv), r_(size_t(n_)), z_(size_t(n_)), p_(size_t(n_)),
          q_(size_t(n_)), A_(A.view()), scalars_(1) {
        // Page-locked host memory the GPU can write directly (over PCIe or NVLink-C2C).
        TUT_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&host_), sizeof(Published), cudaHostAllocMapped));
        TUT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&host_on_device_), host_, 0));
        int device = 0, sms = 0;
        TUT_CUDA(cudaGetDevice(&device));
        TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        blocks_ = std::max(1, std::min((n_ + kBlock - 1) / kBlock, kBlocksPerSm * sms));
        spmv_blocks_ = std::max(1, std::min(int((int64_t(n_) * kLanes + kBlock - 1) / kBlock), kBlocksPerSm * sms));
    }
    ~PollingSolver() override {
        cudaFreeHost(host_);
    }

    SolveResult solve(const float* b, float* x) override {
        Scalars* s = scalars_.get();
        TUT_CUDA(cudaMemsetAsync(s, 0, sizeof(Scalars)));
        start<<<blocks_, kBlock>>>(n_, b, dinv_.get(), x, r_.get(), z_.get(), p_.get(), s,
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
        SolveResult res;
        res.iterations = enqueued;
        res.converged_at = seen.converged_at;
        res.outcome = seen.status == kConverged             ? Outcome::converged
                      : seen.status == kNotPositiveDefinite ? Outcome::not_positive_definite
                                                            : Outcome::max_iterations;
        res.residual = seen.bb > 0 ? std::sqrt(double(seen.rr) / seen.bb) : 0.0;
        return res;
    }

    // The fused SpMV kernel alone. After a solve the status is no longer "running", so
    // it leaves the solver's scalars as they were (alpha 0, p.q reset).
    void spmv_once() override {
        spmv_pq_alpha<<<spmv_blocks_, kBlock>>>(A_, p_.get(), q_.get(), scalars_.get());
        TUT_LAUNCH("spmv_pq_alpha");
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
        spmv_pq_alpha<<<spmv_blocks_, kBlock>>>(A_, p_.get(), q_.get(), s);
        TUT_LAUNCH("spmv_pq_alpha");
        update_x_r_z<<<blocks_, kBlock>>>(n_, p_.get(), q_.get(), dinv_.get(), x, r_.get(), z_.get(), s);
        TUT_LAUNCH("update_x_r_z");
        update_p<<<blocks_, kBlock>>>(n_, z_.get(), p_.get(), s, host_on_device_, stamp);
        TUT_LAUNCH("update_p");
    }

    int n_;
    int blocks_ = 1, spmv_blocks_ = 1;
    tut::cg::DeviceCsr A_;
    tut::cg::SolveOptions opt_;
    Polling polling_;
    Published* host_ = nullptr;            // the host's view of the mapped memory
    Published* host_on_device_ = nullptr;  // the GPU's view of the same memory
    tut::DeviceBuffer<float> dinv_, r_, z_, p_, q_;
    tut::DeviceBuffer<Scalars> scalars_;
};

template <Polling polling>
std::unique_ptr<tut::cg::Solver> make_polling(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                              const tut::cg::SolveOptions& opt) {
    const std::vector<float> dinv = tut::cg::inverse_diagonal(A);
    return std::make_unique<PollingSolver>(dA, dinv, opt, polling);
}

}  // namespace

namespace lesson {
std::vector<tut::cg::Variant> cg_variants() {
    return {{"poll every iteration", make_polling<Polling::every_iteration>, true, false},
            {"poll every k", make_polling<Polling::every_k>, true, /*uses_check_every=*/true},
            {"run ahead, poll without waiting", make_polling<Polling::run_ahead>, true, true}};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"cg", "06_mapped_polling", "polling the residual in pinned mapped host memory"};
    return tut::cg::lesson_main(argc, argv, info, lesson::cg_variants());
}
#endif
