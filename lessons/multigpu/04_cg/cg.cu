// multigpu/04_cg: CG across GPUs. The CG track's Jacobi-preconditioned conjugate
// gradients on its 27-point diffusion matrix, the rows split between GPUs. Unlike JOR's
// dense rows, a sparse row reads only its neighbours: a GPU needs from the others just
// the entries of p its rows' columns name (its halo, found from the CSR columns), one
// plane of the grid from each neighbour. Per iteration: the halo exchange (grouped
// ncclSend/ncclRecv), the SpMV, and the two dot products summed over the GPUs
// (ncclAllReduce). Weak scaling (2.1 M rows per GPU) and strong scaling (128^3 and 256^3),
// with the one-GPU time measured in the same run. A second variant, given, sends the two
// dot products in one ncclAllReduce: the same solver in Chronopoulos and Gear's form.
//
// Build alone (from the repository root; needs MPI and NCCL):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include -ccbin mpicxx \
//        lessons/multigpu/04_cg/cg.cu -lnccl -o cg
// Run:  mpirun -np 2 ./cg                (--small: a 24 x 24 x 48 grid)
//
// In this file:
//   spmv_dot_kernel     q = A p over this GPU's rows (8 lanes per row), and its p.q
//   update_kernel       x += alpha p, r -= alpha q, z = D^-1 r, and r.r, r.z
//   direction_kernel    p = z + beta p; the stopping test, on the GPU
//   exchange_halo       pack what the neighbours need, grouped ncclSend/ncclRecv         (the exercise)
//   sum_over_gpus       the dot products' partial sums, added over the GPUs (ncclAllReduce) (the exercise)
//   merged_*            given: Chronopoulos-Gear PCG, the iteration's three sums in one call
//   variants "halo + allreduce" (the lesson), "halo + one allreduce" (given);
//   problems "weak" (128 x 128 x 128 per GPU), "128^3", "256^3"
//
// Sources: the CG track (lessons/cg: the solver, the stopping rule, b = A x*);
// NCCL's user guide, "Point-to-point communication" and "Group Calls";
// NVIDIA cuda-samples conjugateGradientMultiDeviceCG (the same solver on several GPUs);
// Chronopoulos & Gear 1989 (one reduction per CG iteration; the CG track's lesson 10).
#include "tut/buffer.hpp"
#include "tut/check.hpp"
#include "tut/cli.hpp"
#include "tut/device_facts.hpp"
#include "tut/lesson.hpp"
#include "tut/multigpu.hpp"
#include "tut/multigpu_cg.hpp"
#include "tut/multigpu_halo.hpp"
#include "tut/multigpu_mpi.hpp"
#include "tut/multigpu_nccl.hpp"
#include "tut/multigpu_solvers.hpp"
#include "tut/nvtx.hpp"
#include "tut/report.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace lesson {

constexpr int kThreads = 256;
constexpr int kLanes = 8;  // lanes of a warp that share one row of A (27 nonzeros: 4 steps each)
constexpr int kWarp = 32;

/// The sums of one iteration of the variant "halo + one allreduce" (given, below), and what
/// its next iteration needs of this one. The first three are summed over the GPUs in one call.
struct MergedSlot {
    double delta;      // (w, u), w = A u
    double rr;         // (r, r)
    double gamma;      // (r, u), u = D^-1 r
    double gamma_old;  // gamma of the iteration before
    double alpha_old;  // alpha of the iteration before
};

/// The solver's scalars, on the GPU: the iteration decides everything there, and the host
/// only looks every few iterations. The first four are sums over the GPUs (each GPU adds
/// its part, then sum_over_gpus() adds the parts): pq after the SpMV, rr and rz_new
/// (adjacent: one call) after the update, and bb with them once at the start.
struct Scalars {
    double pq;         // p . q
    double rr;         // r . r
    double rz_new;     // r . z after this iteration's update
    double bb;         // b . b
    double rz;         // r . z of the iteration before (the same on every GPU)
    double threshold;  // tol^2 b . b: stop when r . r <= it
    int done;          // 1: converged or broke down (pq <= 0); the kernels then do nothing
    int breakdown;
    int iterations;    // SpMVs performed (in "halo + one allreduce": updates of x)
    MergedSlot merged[2];  // "halo + one allreduce" only: one slot per parity of the iteration
};

template <class T>
__device__ T warp_sum(T v) {
    for (int d = kWarp / 2; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

/// The sum of v over the block, added into *out (one atomic per block).
__device__ void block_add(double v, double* out) {
    __shared__ double partial[kThreads / kWarp];
    v = warp_sum(v);
    if (threadIdx.x % kWarp == 0) partial[threadIdx.x / kWarp] = v;
    __syncthreads();
    if (threadIdx.x < kWarp) {
        v = threadIdx.x < kThreads / kWarp ? partial[threadIdx.x] : 0.0;
        v = warp_sum(v);
        if (threadIdx.x == 0) atomicAdd(out, v);
    }
    __syncthreads();
}

/// q = A p for this GPU's rows, kLanes lanes per row; returns this thread's part of p . q.
/// p has the halo after the own rows; the columns are local (multigpu_halo.hpp).
__device__ double spmv_part(int rows, const int* __restrict__ row_ptr, const int* __restrict__ col,
                            const float* __restrict__ val, const float* __restrict__ p, float* __restrict__ q) {
    // A warp takes kWarp / kLanes rows at a time; the loop runs over those groups, the same
    // number of times for every lane of the warp, so that every lane reaches every shuffle.
    const int lane = threadIdx.x % kLanes, sub = (threadIdx.x % kWarp) / kLanes;
    const int per_warp = kWarp / kLanes;
    const int warps = gridDim.x * blockDim.x / kWarp;
    double pq = 0.0;
    for (int base = (blockIdx.x * blockDim.x + threadIdx.x) / kWarp * per_warp; base < rows; base += warps * per_warp) {
        const int i = base + sub;
        float sum = 0.0f;
        if (i < rows)
            for (int k = row_ptr[i] + lane; k < row_ptr[i + 1]; k += kLanes) sum += val[k] * __ldg(p + col[k]);
        for (int d = kLanes / 2; d > 0; d /= 2) sum += __shfl_down_sync(0xffffffffu, sum, d, kLanes);
        if (lane == 0 && i < rows) {
            q[i] = sum;
            pq += double(p[i]) * double(sum);
        }
    }
    return pq;
}

/// q = A p for this GPU's rows, and p . q (this GPU's part) into s->pq.
__global__ void spmv_dot_kernel(int rows, const int* __restrict__ row_ptr, const int* __restrict__ col,
                                const float* __restrict__ val, const float* __restrict__ p, float* __restrict__ q,
                                Scalars* s, bool stop_test) {
    if (stop_test && s->done) return;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        s->iterations += 1;
        s->rz = s->rz_new;  // the previous iteration's r . z becomes the current one
        s->rr = 0.0;
        s->rz_new = 0.0;
    }
    block_add(spmv_part(rows, row_ptr, col, val, p, q), &s->pq);
}

/// alpha = rz / pq; x += alpha p; r -= alpha q; z = D^-1 r; and r . r, r . z (this GPU's parts).
__global__ void update_kernel(int rows, float* __restrict__ x, float* __restrict__ r, float* __restrict__ z,
                              const float* __restrict__ p, const float* __restrict__ q, const float* __restrict__ dinv,
                              Scalars* s, bool stop_test) {
    if (stop_test && s->done) return;
    if (stop_test && !(s->pq > 0.0)) {  // not positive definite (or NaN): stop
        if (blockIdx.x == 0 && threadIdx.x == 0) s->breakdown = s->done = 1;
        return;
    }
    const float alpha = float(s->rz / s->pq);
    double rr = 0.0, rz = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x) {
        x[i] += alpha * p[i];
        const float ri = r[i] - alpha * q[i];
        const float zi = dinv[i] * ri;
        r[i] = ri;
        z[i] = zi;
        rr += double(ri) * ri;
        rz += double(ri) * zi;
    }
    block_add(rr, &s->rr);
    block_add(rz, &s->rz_new);
}

/// The stopping test (every GPU sees the same summed r . r, so all decide alike), then
/// p = z + beta p, beta = rz_new / rz. Zeroes p . q for the next SpMV.
__global__ void direction_kernel(int rows, float* __restrict__ p, const float* __restrict__ z, Scalars* s,
                                 bool stop_test) {
    if (stop_test && s->done) return;
    if (stop_test && s->rr <= s->threshold) {
        if (blockIdx.x == 0 && threadIdx.x == 0) s->done = 1;
        return;
    }
    const float beta = float(s->rz_new / s->rz);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x) p[i] = z[i] + beta * p[i];
    if (blockIdx.x == 0 && threadIdx.x == 0) s->pq = 0.0;
}

/// send[i] = v[rows[i]]: what the neighbours need of v, gathered into one buffer.
__global__ void pack_kernel(int count, const int* __restrict__ rows, const float* __restrict__ v, float* __restrict__ send) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) send[i] = v[rows[i]];
}

/// What the halo exchange works with, on this GPU (device pointers, and the plan's lists).
struct Halo {
    const tut::mg::HaloPlan* plan;  // send_ranks/offsets, recv_ranks/offsets, rows (multigpu_halo.hpp)
    const int* send_rows;           // device copy of plan->send_rows
    float* send;                    // device buffer, plan->send_rows.size() floats
};

/// Makes v's halo (v[rows ..], after the own rows) hold the neighbours' current values of
/// the entries this GPU's rows read.
void exchange_halo(const Halo& h, float* v, const tut::mg::Ranks& ranks) {
    // TODO(exercise): make v's halo hold the neighbours' current values. After the call
    //   (on ranks.stream), v[plan.recv_place(i) + j] must be the value of global entry
    //   plan.recv_cols[plan.recv_offsets[i] + j], which rank plan.recv_ranks[i] owns, and
    //   this rank must have sent every neighbour what it needs of v (plan.send_rows, one
    //   list per destination between plan.send_offsets[i] and plan.send_offsets[i + 1]).
    //   The constraint: the rows a neighbour needs are scattered through v, and NCCL sends
    //   contiguous buffers; a rank that sends to two neighbours and receives from two must
    //   not wait for one pair before starting the other (with blocking point-to-point calls
    //   in a ring, everyone would wait for everyone).
    //   Hints: pack_kernel gathers rows into h.send. Look up ncclSend, ncclRecv and group
    //   calls (ncclGroupStart/ncclGroupEnd) in NCCL's user guide, "Point-to-point
    //   communication". Where in v does each neighbour's block belong, and does it need
    //   unpacking? Check every NCCL call with TUT_NCCL and the launch with TUT_LAUNCH.
    (void)h;
    (void)v;
    (void)ranks;
}

/// Adds `count` doubles at `values` (device) over the GPUs, in place: every GPU gets the sums.
void sum_over_gpus(double* values, int count, const tut::mg::Ranks& ranks) {
    // TODO(exercise): each GPU holds its own part of `count` sums (device memory, doubles);
    //   afterwards every GPU must hold the whole sums, in place, enqueued on ranks.stream:
    //   every GPU then takes the same decision (stop or go on, the same alpha and beta).
    //   Hints: the collective of lesson 2, in place, on ranks.nccl_comm (an ncclComm_t).
    (void)values;
    (void)count;
    (void)ranks;
}

// ---- Given, not part of the exercise: the variant "halo + one allreduce" ----
// The iteration above calls NCCL three times: the halo, then p . q (alpha needs it), then
// r . r and r . z (they need the update that alpha makes). Standard CG cannot send the two
// sums together: each depends on the other. Chronopoulos and Gear's PCG (the CG track's
// lesson 10 teaches its recurrences) rearranges the same iteration: with u = D^-1 r the SpMV
// reads u, w = A u, and s = A p follows by a recurrence, so the update needs no SpMV and
// the iteration's three sums are all known after its SpMV, ready for one call:
//   gamma = (r,u), delta = (w,u), rr = (r,r), summed together
//   stop?  beta = gamma / gamma_old;  alpha = gamma / (delta - beta gamma / alpha_old)
//   p = u + beta p;  s = w + beta s;  x += alpha p;  r -= alpha s;  u = D^-1 r
//   the halo of u; w = A u; the next three sums
// The kernels read the sums of one slot and add the next iteration's into the other (by the
// parity of the iteration): a kernel whose blocks all read a slot can neither clear it nor
// add into it, so the slot read now is cleared by the kernel after.

/// After the first sums: the threshold, and done when b (so r) is already small enough.
__global__ void merged_start_kernel(Scalars* s, double tol) {
    s->threshold = tol * tol * s->bb;
    s->rr = s->merged[0].rr;
    s->done = s->rr <= s->threshold ? 1 : 0;
}

/// Iteration `parity`, its sums in merged[parity] (summed over the GPUs): the stopping test,
/// alpha and beta, the five vector updates, and this GPU's parts of the next r . r and r . u
/// into merged[1 - parity] (with gamma and alpha for the iteration after). `first`: beta = 0.
__global__ void merged_update_kernel(int rows, float* __restrict__ x, float* __restrict__ r, float* __restrict__ u,
                                     float* __restrict__ p, float* __restrict__ sv, const float* __restrict__ w,
                                     const float* __restrict__ dinv, Scalars* s, int parity, bool first, bool stop_test) {
    if (stop_test && s->done) return;
    const MergedSlot cur = s->merged[parity];
    MergedSlot* next = &s->merged[1 - parity];
    // Every GPU sees the same sums: all decide alike, as in the kernels above.
    if (stop_test && cur.rr <= s->threshold) {
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            s->rr = cur.rr;
            s->done = 1;
        }
        return;
    }
    const double beta = first ? 0.0 : cur.gamma / cur.gamma_old;
    const double pap = first ? cur.delta : cur.delta - beta * cur.gamma / cur.alpha_old;  // (p, A p)
    if (stop_test && !(pap > 0.0)) {  // not positive definite (or NaN): stop
        if (blockIdx.x == 0 && threadIdx.x == 0) s->breakdown = s->done = 1;
        return;
    }
    const double alpha = cur.gamma / pap;
    if (blockIdx.x == 0 && threadIdx.x == 0) {  // nobody reads these in this kernel
        s->iterations += 1;
        next->gamma_old = cur.gamma;
        next->alpha_old = alpha;
        next->delta = 0.0;  // merged_spmv_kernel adds into it
    }
    const float a = float(alpha), bt = float(beta);
    double rr = 0.0, gamma = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x) {
        const float pi = u[i] + bt * p[i];
        const float si = w[i] + bt * sv[i];
        p[i] = pi;
        sv[i] = si;
        x[i] += a * pi;
        const float ri = r[i] - a * si;
        const float ui = dinv[i] * ri;
        r[i] = ri;
        u[i] = ui;
        rr += double(ri) * ri;
        gamma += double(ri) * ui;
    }
    block_add(rr, &next->rr);
    block_add(gamma, &next->gamma);
}

/// w = A u (u's halo exchanged) and this GPU's part of u . w into merged[1 - parity], the
/// slot the update of iteration `parity` filled; clears merged[parity], which it has read.
__global__ void merged_spmv_kernel(int rows, const int* __restrict__ row_ptr, const int* __restrict__ col,
                                   const float* __restrict__ val, const float* __restrict__ u, float* __restrict__ w,
                                   Scalars* s, int parity, bool stop_test) {
    if (stop_test && s->done) return;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        s->merged[parity].rr = 0.0;
        s->merged[parity].gamma = 0.0;
    }
    block_add(spmv_part(rows, row_ptr, col, val, u, w), &s->merged[1 - parity].delta);
}

}  // namespace lesson

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {

using lesson::Scalars;

/// The lesson's variants: the exercise's iteration, and the given one with one sum per iteration.
const std::vector<std::string> kVariants{"halo + allreduce", "halo + one allreduce"};
bool merged(const std::string& variant) { return variant == kVariants[1]; }

/// `variant`, when the lesson has it; a name it does not have is refused.
const std::string& known(const std::string& variant) {
    if (std::find(kVariants.begin(), kVariants.end(), variant) == kVariants.end())
        throw std::invalid_argument("cg: no variant named '" + variant + "'");
    return variant;
}
/// `c`, when its variant is the lesson's: refused before any communication.
const tut::mg::CgCall& known(const tut::mg::CgCall& c) {
    known(c.variant);
    return c;
}

/// One GPU's share of the solve as tut::mg::CgRank runs it (its rows, x and p with room for
/// the halo, the scalars, the exercise's iteration), with this file's kernels and communication.
using Rank = tut::mg::CgRank<Scalars, lesson::Halo, lesson::kThreads, lesson::block_add, lesson::spmv_dot_kernel,
                             lesson::update_kernel, lesson::direction_kernel, lesson::exchange_halo, lesson::sum_over_gpus>;

/// Rank with the vectors of "halo + one allreduce": u = D^-1 r (with room for the halo: the
/// SpMV reads it), w = A u, s = A p.
struct Cg : Rank {
    tut::DeviceBuffer<float> u, w, sv;
    int step = 0;  // "halo + one allreduce": iterations launched in this solve (their parity)

    explicit Cg(const tut::mg::CgCall& c) : Rank(known(c)) {
        u = tut::DeviceBuffer<float>(length_with_halo());
        for (auto* v : {&w, &sv}) *v = tut::DeviceBuffer<float>(size_t(std::max(rows, 1)));
    }

    /// The same system, solved the way `variant` says; a name the lesson does not have is refused.
    void use_variant(const std::string& variant) { call.variant = known(variant); }

    void start_solve(bool communicate) override {
        if (merged(call.variant)) return start_merged(communicate);
        Rank::start_solve(communicate);
    }
    void iteration(bool communicate, bool stop_test) override {
        if (merged(call.variant)) return merged_iteration(communicate, stop_test);
        Rank::iteration(communicate, stop_test);
    }

    /// "halo + one allreduce": x = p = s = 0, r = b, u = D^-1 r, w = A u (u's halo first); the
    /// first three sums in one call, b . b in another; the threshold.
    void start_merged(bool communicate) {
        const cudaStream_t s = call.ranks.stream;
        step = 0;
        TUT_CUDA(cudaMemsetAsync(x.get(), 0, x.bytes(), s));
        TUT_CUDA(cudaMemsetAsync(p.get(), 0, p.bytes(), s));
        TUT_CUDA(cudaMemsetAsync(sv.get(), 0, sv.bytes(), s));
        TUT_CUDA(cudaMemsetAsync(u.get(), 0, u.bytes(), s));
        TUT_CUDA(cudaMemsetAsync(scalars.get(), 0, sizeof(Scalars), s));
        if (rows > 0) {
            TUT_CUDA(cudaMemcpyAsync(r.get(), b.get(), size_t(rows) * sizeof(float), cudaMemcpyDeviceToDevice, s));
            // u = D^-1 r, and the sums r . r and r . u into merged[0] (gamma = r . u), b . b into bb
            lesson::Scalars* sums = scalars.get();
            tut::mg::init_kernel<lesson::block_add><<<grid, lesson::kThreads, 0, s>>>(
                rows, r.get(), u.get(), dinv.get(), b.get(), &sums->merged[0].rr, &sums->merged[0].gamma, &sums->bb);
            TUT_LAUNCH("init_kernel");
        }
        if (distributed(communicate)) lesson::exchange_halo(halo, u.get(), call.ranks);
        // As the SpMV of an iteration before the first (parity 1): its sums go to merged[0].
        lesson::merged_spmv_kernel<<<grid, lesson::kThreads, 0, s>>>(rows, row_ptr.get(), col.get(), val.get(), u.get(),
                                                                     w.get(), scalars.get(), 1, false);
        TUT_LAUNCH("merged_spmv_kernel");
        if (distributed(communicate)) {
            lesson::sum_over_gpus(&scalars.get()->merged[0].delta, 3, call.ranks);
            lesson::sum_over_gpus(&scalars.get()->bb, 1, call.ranks);
        }
        lesson::merged_start_kernel<<<1, 1, 0, s>>>(scalars.get(), call.tolerance);
        TUT_LAUNCH("merged_start_kernel");
    }

    /// "halo + one allreduce": the update (stopping test, alpha, beta, five vectors, the
    /// next r.r and r.u), the halo of u, w = A u with u.w; the three sums in one call.
    void merged_iteration(bool communicate, bool stop_test) {
        const cudaStream_t s = call.ranks.stream;
        const int parity = step % 2;
        lesson::merged_update_kernel<<<grid, lesson::kThreads, 0, s>>>(rows, x.get(), r.get(), u.get(), p.get(),
                                                                       sv.get(), w.get(), dinv.get(), scalars.get(),
                                                                       parity, step == 0, stop_test);
        TUT_LAUNCH("merged_update_kernel");
        if (distributed(communicate)) lesson::exchange_halo(halo, u.get(), call.ranks);
        lesson::merged_spmv_kernel<<<grid, lesson::kThreads, 0, s>>>(rows, row_ptr.get(), col.get(), val.get(), u.get(),
                                                                     w.get(), scalars.get(), parity, stop_test);
        TUT_LAUNCH("merged_spmv_kernel");
        if (distributed(communicate)) lesson::sum_over_gpus(&scalars.get()->merged[1 - parity].delta, 3, call.ranks);
        ++step;
    }
};

}  // namespace

namespace lesson {
/// One solve, for the checks: the problem generated, solved once (call.variant: "halo +
/// allreduce" or "halo + one allreduce"), the true residual in SolveOutcome::residual and,
/// with call.want_x, the whole x.
tut::mg::SolveOutcome cg_solve(const tut::mg::CgCall& c) {
    Cg cg(c);
    tut::mg::SolveOutcome o = cg.solve();
    o.residual = cg.true_residual();
    if (c.want_x) o.x = cg.gather_x();
    return o;
}
}  // namespace lesson

int main(int argc, char** argv) {
    tut::mg::CgOptions options;
    tut::Cli cli("cg", "Jacobi-preconditioned CG with the rows split between GPUs: halo exchange, dot products summed");
    options.add_to(cli);
    tut::add_run_options(cli, options.run);
    cli.parse_or_exit(argc, argv);
    if (!options.finish(cli, "cg", kVariants)) return tut::kUsageExitCode;

    tut::mg::Mpi mpi(argc, argv);
    const tut::mg::World& world = mpi.world();
    return tut::mg::guarded(world, "cg", [&] {
        tut::mg::Nccl nccl(world);
        cudaStream_t stream;
        TUT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        if (world.root())
            std::printf("%d GPU(s), one process each | NCCL %s | Jacobi PCG, float, tol 1e-6, b = A x*\n", world.size,
                        tut::mg::nccl_version_text().c_str());
        tut::mg::CgBench<> bench(world, {"04_cg", "cg", kVariants}, options, stream);
        // Each grid is generated once, for every variant (the system is the same; only the
        // iteration differs), and measured once per variant. The one-GPU time per iteration,
        // the yardstick of both variants, is the lesson's own variant ("halo + allreduce").
        for (const tut::mg::CgScalingProblem& pb : bench.problems()) {
            std::unique_ptr<Cg> system;  // this grid's rows on this GPU, made at its first measurement
            for (const std::string& variant : kVariants) {
                if (!bench.runs(variant)) continue;
                const tut::mg::CgCall c = bench.call(pb, variant, nccl.comm);
                const tut::mg::CgTiming t = bench.time(
                    pb, variant,
                    [&] {
                        if (!system) system = std::make_unique<Cg>(c);  // every rank together (the halo lists)
                        system->use_variant(variant);
                    },
                    [&] { return system->time(options.run.repeats, &world); });
                bench.check(pb.name + " (" + pb.grid.label() + " / " + variant + ")",
                            [&] { return tut::mg::cg_verdict(t.full); });
                bench.record(pb, variant, t, variant == kVariants[0], [&] {
                    return tut::mg::one_gpu_us_per_iter<Cg, tut::mg::Nccl>(c, pb.one_gpu, kVariants[0], options.run.repeats);
                });
            }
        }
        bench.print(tut::fmt("CG on %d GPU(s): us per iteration, split into compute (the same iterations with no "
                             "communication) and comm (the rest: halo, sums, waiting for the slowest GPU); 1 GPU: the "
                             "lesson's variant, halo + allreduce", world.size));
        TUT_CUDA(cudaStreamDestroy(stream));
        return 0;
    });
}
