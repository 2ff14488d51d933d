// multigpu/05_overlap: overlap. Lesson 4's CG, with the halo exchange hidden behind
// computation: the rows that read no halo entry (interior rows: all but a plane or two of
// each GPU's slab) need only this GPU's own part of p, so their SpMV runs while the halo
// travels, on another stream; the boundary rows follow once it has arrived. Then the
// iteration is captured once into a CUDA graph (NCCL's calls included) and replayed, so
// that the host no longer launches a dozen kernels and collectives per iteration.
// Measured beside lesson 4's order (sequential) in the same run, at every size.
//
// Build alone (from the repository root; needs MPI and NCCL):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include -ccbin mpicxx \
//        lessons/multigpu/05_overlap/overlap.cu -lnccl -o overlap
// Run:  mpirun -np 2 ./overlap           (--small: a 24 x 24 x 48 grid)
//
// In this file:
//   spmv_dot_kernel, update_kernel, direction_kernel, exchange_halo, sum_over_gpus   lesson 4's
//   spmv_rows_kernel    q = A p for a list of rows (interior or boundary), and their p.q
//   overlapped_spmv     the halo on the communication stream, the interior rows meanwhile,
//                       the boundary rows after it                                   (the exercise)
//   variants "sequential" (lesson 4's order), "overlap", "overlap + graph"
//
// Sources: NVIDIA/multi-gpu-programming-models (its "nccl_overlap" and "nccl_graphs"
// variants of Jacobi); the CUDA C++ Programming Guide, "Streams", "Events" and "CUDA
// Graphs"; NCCL's user guide, "Using NCCL with CUDA Graphs".
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
#include <string>
#include <vector>

namespace lesson {

constexpr int kThreads = 256;
constexpr int kLanes = 8;  // lanes of a warp that share one row of A (27 nonzeros: 4 steps each)
constexpr int kWarp = 32;

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
    int iterations;    // SpMVs performed
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

/// q = A p for this GPU's rows, kLanes lanes per row, and p . q (this GPU's part) into s->pq.
/// p has the halo after the own rows; the columns are local (multigpu_halo.hpp).
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
    block_add(pq, &s->pq);
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

/// q = A p for the `count` rows listed in `list`, kLanes lanes per row, and their p . q
/// into s->pq. `first`: this launch opens the iteration (its bookkeeping, as in
/// spmv_dot_kernel); the second launch of an iteration only adds.
__global__ void spmv_rows_kernel(const int* __restrict__ list, int count, const int* __restrict__ row_ptr,
                                 const int* __restrict__ col, const float* __restrict__ val, const float* __restrict__ p,
                                 float* __restrict__ q, Scalars* s, bool stop_test, bool first) {
    if (stop_test && s->done) return;
    if (first && blockIdx.x == 0 && threadIdx.x == 0) {
        s->iterations += 1;
        s->rz = s->rz_new;
        s->rr = 0.0;
        s->rz_new = 0.0;
    }
    const int lane = threadIdx.x % kLanes, sub = (threadIdx.x % kWarp) / kLanes;
    const int per_warp = kWarp / kLanes;
    const int warps = gridDim.x * blockDim.x / kWarp;
    double pq = 0.0;
    for (int base = (blockIdx.x * blockDim.x + threadIdx.x) / kWarp * per_warp; base < count; base += warps * per_warp) {
        const int n = base + sub;
        const int i = n < count ? list[n] : 0;
        float sum = 0.0f;
        if (n < count)
            for (int k = row_ptr[i] + lane; k < row_ptr[i + 1]; k += kLanes) sum += val[k] * __ldg(p + col[k]);
        for (int d = kLanes / 2; d > 0; d /= 2) sum += __shfl_down_sync(0xffffffffu, sum, d, kLanes);
        if (lane == 0 && n < count) {
            q[i] = sum;
            pq += double(p[i]) * double(sum);
        }
    }
    block_add(pq, &s->pq);
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
    const tut::mg::HaloPlan& plan = *h.plan;
    const ncclComm_t comm = static_cast<ncclComm_t>(ranks.nccl_comm);
    const int count = static_cast<int>(plan.send_rows.size());
    // What the others need of v, packed, one block per destination (send_offsets).
    if (count > 0) {
        pack_kernel<<<std::min(1024, (count + kThreads - 1) / kThreads), kThreads, 0, ranks.stream>>>(count, h.send_rows,
                                                                                                     v, h.send);
        TUT_LAUNCH("pack_kernel");
    }
    // Every send and receive in one group: NCCL starts them together, so no pair of GPUs
    // waits on the other's order, and each neighbour's block lands straight in its place.
    TUT_NCCL(ncclGroupStart());
    for (size_t i = 0; i < plan.send_ranks.size(); ++i)
        TUT_NCCL(ncclSend(h.send + plan.send_offsets[i], size_t(plan.send_offsets[i + 1] - plan.send_offsets[i]),
                          ncclFloat32, plan.send_ranks[i], comm, ranks.stream));
    for (size_t i = 0; i < plan.recv_ranks.size(); ++i)
        TUT_NCCL(ncclRecv(v + plan.recv_place(i), size_t(plan.recv_offsets[i + 1] - plan.recv_offsets[i]), ncclFloat32,
                          plan.recv_ranks[i], comm, ranks.stream));
    TUT_NCCL(ncclGroupEnd());
}

/// Adds `count` doubles at `values` (device) over the GPUs, in place: every GPU gets the sums.
void sum_over_gpus(double* values, int count, const tut::mg::Ranks& ranks) {
    TUT_NCCL(ncclAllReduce(values, values, size_t(count), ncclFloat64, ncclSum, static_cast<ncclComm_t>(ranks.nccl_comm),
                           ranks.stream));
}

/// What the overlapped SpMV works with: the two streams (the communication stream has the
/// higher priority: NCCL's kernels get SMs as soon as the interior SpMV's blocks free
/// them), the events that order them, the rows split into interior and boundary lists.
struct Overlap {
    cudaStream_t compute, comm;
    cudaEvent_t p_ready, halo_done;
    const int* interior;
    int interior_count;
    const int* boundary;
    int boundary_count;
    int grid;
};

/// q = A p, p's halo exchanged meanwhile. `ranks.stream` is the compute stream.
void overlapped_spmv(const Overlap& o, const Halo& h, const int* row_ptr, const int* col, const float* val, float* p,
                     float* q, Scalars* s, bool stop_test, const tut::mg::Ranks& ranks) {
    // The halo leaves once p is final: the communication stream waits for the compute
    // stream's mark, then packs and sends, and marks its own end.
    TUT_CUDA(cudaEventRecord(o.p_ready, o.compute));
    TUT_CUDA(cudaStreamWaitEvent(o.comm, o.p_ready, 0));
    tut::mg::Ranks on_comm = ranks;
    on_comm.stream = o.comm;
    exchange_halo(h, p, on_comm);
    TUT_CUDA(cudaEventRecord(o.halo_done, o.comm));
    // Meanwhile the interior rows, which read no halo entry.
    spmv_rows_kernel<<<o.grid, kThreads, 0, o.compute>>>(o.interior, o.interior_count, row_ptr, col, val, p, q, s,
                                                         stop_test, true);
    TUT_LAUNCH("spmv_rows_kernel (interior)");
    // The boundary rows only after the halo has arrived.
    TUT_CUDA(cudaStreamWaitEvent(o.compute, o.halo_done, 0));
    spmv_rows_kernel<<<o.grid, kThreads, 0, o.compute>>>(o.boundary, o.boundary_count, row_ptr, col, val, p, q, s,
                                                         stop_test, false);
    TUT_LAUNCH("spmv_rows_kernel (boundary)");
}

}  // namespace lesson

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {

/// One GPU's share of the solve as tut::mg::CgRank runs it (its rows, x and p with room for
/// the halo, the scalars, lesson 4's iteration), with this file's kernels and communication.
using Rank = tut::mg::CgRank<lesson::Scalars, lesson::Halo, lesson::kThreads, lesson::block_add, lesson::spmv_dot_kernel,
                             lesson::update_kernel, lesson::direction_kernel, lesson::exchange_halo, lesson::sum_over_gpus>;

/// Rank with the interior and boundary rows, the streams and events of the overlap, and the
/// graphs of "overlap + graph".
struct Cg : Rank {
    tut::DeviceBuffer<int> interior, boundary;
    lesson::Overlap overlap{};
    cudaGraphExec_t graph = nullptr;          // "overlap + graph": one batch of iterations, captured once
    cudaGraphExec_t compute_graph = nullptr;  // and one of the compute-only solve, of compute_graph_count
    int compute_graph_count = 0;

    explicit Cg(const tut::mg::CgCall& c) : Rank(c) {
        interior = tut::DeviceBuffer<int>(plan.interior_rows);
        boundary = tut::DeviceBuffer<int>(plan.boundary_rows);
        int least = 0, greatest = 0;
        TUT_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        overlap.compute = c.ranks.stream;
        TUT_CUDA(cudaStreamCreateWithPriority(&overlap.comm, cudaStreamNonBlocking, greatest));
        TUT_CUDA(cudaEventCreateWithFlags(&overlap.p_ready, cudaEventDisableTiming));
        TUT_CUDA(cudaEventCreateWithFlags(&overlap.halo_done, cudaEventDisableTiming));
        overlap.interior = interior.get();
        overlap.interior_count = static_cast<int>(plan.interior_rows.size());
        overlap.boundary = boundary.get();
        overlap.boundary_count = static_cast<int>(plan.boundary_rows.size());
        overlap.grid = grid;
    }
    ~Cg() override {
        if (graph) cudaGraphExecDestroy(graph);
        if (compute_graph) cudaGraphExecDestroy(compute_graph);
        cudaStreamDestroy(overlap.comm);
        cudaEventDestroy(overlap.p_ready);
        cudaEventDestroy(overlap.halo_done);
    }

    /// The same system, solved the way `variant` says (the graphs of another variant are dropped).
    void use_variant(const std::string& variant) {
        if (variant == call.variant) return;
        if (graph) TUT_CUDA(cudaGraphExecDestroy(graph));
        if (compute_graph) TUT_CUDA(cudaGraphExecDestroy(compute_graph));
        graph = compute_graph = nullptr;
        call.variant = variant;
    }

    /// "overlap" and "overlap + graph" on several GPUs: the halo travels while the interior
    /// rows are computed; otherwise lesson 4's order.
    void spmv(bool communicate, bool stop_test) override {
        if (!(distributed(communicate) && call.variant != "sequential")) return Rank::spmv(communicate, stop_test);
        lesson::overlapped_spmv(overlap, halo, row_ptr.get(), col.get(), val.get(), p.get(), q.get(), scalars.get(),
                                stop_test, call.ranks);
    }

    /// `count` iterations (`full`: with communication and the stopping test; else neither)
    /// captured into a graph: every kernel, event and NCCL call of them, across both streams.
    cudaGraphExec_t capture(int count, bool full, const std::string& who) {
        tut::mg::progress_detail(who + ": capturing a batch of iterations into a CUDA graph" +
                                 (full ? "" : ", compute only"));
        cudaGraph_t g;
        cudaGraphExec_t exec;
        TUT_CUDA(cudaStreamBeginCapture(call.ranks.stream, cudaStreamCaptureModeGlobal));
        for (int i = 0; i < count; ++i) iteration(full, full);
        TUT_CUDA(cudaStreamEndCapture(call.ranks.stream, &g));
        TUT_CUDA(cudaGraphInstantiate(&exec, g, 0));
        TUT_CUDA(cudaGraphDestroy(g));
        return exec;
    }

    /// "overlap + graph": the batch captured once, then replayed. The compute-only solve's
    /// batch is captured with it, in the solve to convergence: captured in a timed solve, the
    /// capture would be timed.
    void run_batch(int count, const std::string& who) override {
        if (call.variant != "overlap + graph") return Rank::run_batch(count, who);
        if (!graph) {
            graph = capture(count, true, who);
            compute_graph = capture(count, false, who);
            compute_graph_count = count;
        }
        TUT_CUDA(cudaGraphLaunch(graph, call.ranks.stream));
    }

    /// "overlap + graph", compute only: a graph too (launched kernel by kernel, the batch would
    /// be slower by what the graph saves, and 'comm' that much too small). A batch of another
    /// size (a solve's last) is launched kernel by kernel.
    void run_compute_batch(int count, const std::string& who) override {
        if (call.variant != "overlap + graph" || !compute_graph || count != compute_graph_count)
            return Rank::run_compute_batch(count, who);
        TUT_CUDA(cudaGraphLaunch(compute_graph, call.ranks.stream));
    }
};

}  // namespace

namespace lesson {
/// One solve, for the checks: the problem generated, solved once (call.variant: "sequential",
/// "overlap" or "overlap + graph"), the true residual in SolveOutcome::residual and, with
/// call.want_x, the whole x.
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
    tut::Cli cli("overlap", "lesson 4's CG with the halo exchange overlapped by the interior rows' SpMV, then in a CUDA graph");
    options.add_to(cli);
    tut::add_run_options(cli, options.run);
    cli.parse_or_exit(argc, argv);
    const std::vector<std::string> variants{"sequential", "overlap", "overlap + graph"};
    if (!options.finish(cli, "overlap", variants)) return tut::kUsageExitCode;

    tut::mg::Mpi mpi(argc, argv);
    const tut::mg::World& world = mpi.world();
    return tut::mg::guarded(world, "overlap", [&] {
        tut::mg::Nccl nccl(world);
        cudaStream_t stream;
        TUT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        if (world.root())
            std::printf("%d GPU(s), one process each | NCCL %s | Jacobi PCG, float, tol 1e-6, b = A x*\n", world.size,
                        tut::mg::nccl_version_text().c_str());
        tut::mg::CgBench<> bench(world, {"05_overlap", "overlap", variants}, options, stream);
        // Each grid is generated once, for every variant (the system is the same; only the
        // order of the iteration's work differs), and measured once per variant. On one GPU
        // each variant is its own yardstick; on several, the first variant run on one GPU.
        for (const tut::mg::CgScalingProblem& pb : bench.problems()) {
            std::unique_ptr<Cg> system;  // this grid's rows on this GPU, made at its first measurement
            for (const std::string& variant : variants) {
                if (!bench.runs(variant)) continue;
                const tut::mg::CgCall c = bench.call(pb, variant, nccl.comm);
                const tut::mg::CgTiming t = bench.time(
                    pb, variant,
                    [&] {
                        if (!system) system = std::make_unique<Cg>(c);  // every rank together (the halo lists)
                        system->use_variant(variant);
                    },
                    [&] { return system->time(options.run.repeats, &world); });
                bench.check(pb.name + " (" + pb.grid.label() + ")", [&] { return tut::mg::cg_verdict(t.full); });
                bench.record(pb, variant, t, /*yardstick=*/true, [&] {
                    return tut::mg::one_gpu_us_per_iter<Cg, tut::mg::Nccl>(c, pb.one_gpu, variant, options.run.repeats);
                });
            }
        }
        bench.print(tut::fmt("CG on %d GPU(s), lesson 4's order beside the overlap: us per iteration, split into "
                             "compute (the same iterations with no communication) and comm (what the overlap leaves "
                             "exposed)", world.size));
        TUT_CUDA(cudaStreamDestroy(stream));
        return 0;
    });
}
