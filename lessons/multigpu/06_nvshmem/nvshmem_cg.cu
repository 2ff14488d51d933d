// multigpu/06_nvshmem: communication started by the GPU. Lessons 4 and 5 drive every
// iteration from the host: a dozen launches and three NCCL collectives, each a trip
// through a stream's queue. Here one persistent kernel per GPU runs the whole CG (the CG
// track's persistent-kernel idea, lesson cg/08, spread over several GPUs): the halo goes
// to the neighbours as NVSHMEM puts with a signal, issued by the kernel, while the
// interior rows are computed; the dot products are summed by every GPU putting its part
// into every other GPU's memory and waiting for their signals. No host in the loop.
// Measured per iteration against lessons 4 and 5 (the tour puts them side by side).
//
// Build alone (from the repository root; needs MPI and NVSHMEM, relocatable device code):
//   nvcc -O3 -std=c++17 -arch=native -rdc=true -Icommon/include -I$NVSHMEM_HOME/include -ccbin mpicxx \
//        lessons/multigpu/06_nvshmem/nvshmem_cg.cu -L$NVSHMEM_HOME/lib -lnvshmem_host -lnvshmem_device -o nvshmem_cg
// Run:  mpirun -np 2 ./nvshmem_cg        (--small: a 24 x 24 x 48 grid)
//
// In this file:
//   cg_persistent      the whole solve in one cooperative kernel per GPU: grid-wide
//                      barriers between phases, the host waits only for the end
//   send_halo          pack, then one put-with-signal per neighbour, issued by the GPU  (the exercise)
//   wait_halo          wait for every neighbour's signal                                 (the exercise)
//   sum_over_pes       a dot product's parts put into every GPU, summed in rank order
//   variant "nvshmem persistent"
//
// Sources: NVSHMEM documentation ("Signaling operations", "nvshmemx_collective_launch",
// "Initialization with a unique ID"); NVIDIA/multi-gpu-programming-models (its "nvshmem"
// Jacobi); cuda-samples conjugateGradientMultiDeviceCG (one cooperative launch per GPU).
#include "tut/buffer.hpp"
#include "tut/check.hpp"
#include "tut/cli.hpp"
#include "tut/device_facts.hpp"
#include "tut/lesson.hpp"
#include "tut/multigpu.hpp"
#include "tut/multigpu_cg.hpp"
#include "tut/multigpu_halo.hpp"
#include "tut/multigpu_mpi.hpp"
#include "tut/multigpu_nvshmem.hpp"
#include "tut/multigpu_solvers.hpp"
#include "tut/nvtx.hpp"
#include "tut/report.hpp"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lesson {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kLanes = 8;
constexpr int kWarp = 32;
constexpr int kMaxNeighbours = 16;

/// The GPUs this one exchanges halo with: their PE numbers and, for the destinations, where
/// this GPU's block starts in `send` and where it lands in the receiver's p.
struct Neighbours {
    int count;
    int pe[kMaxNeighbours];
    int offset[kMaxNeighbours + 1];
    long long place[kMaxNeighbours];
};

/// Everything the persistent kernel works on (passed by value).
struct Args {
    int rows, me, npes;
    bool communicate;  // false: no puts, no waits (the compute-only timing; a single GPU)
    bool stop_test;    // false: run max_iterations whatever the residual (timing)
    int max_iterations;
    double tolerance;
    const int *row_ptr, *col;
    const float *val, *dinv, *b;
    float *x, *r, *z, *q;
    float *p, *send;                    // symmetric: p's halo is written by the neighbours' puts
    const int* send_rows;
    Neighbours to, from;
    const int *interior, *boundary;
    int n_interior, n_boundary;
    uint64_t *halo_sig, *dot_sig;       // symmetric, one per PE: the last value each PE signalled
    double *partial, *out;              // symmetric: [2 slots][npes][3] parts received, [2][3] this PE's
    double* acc;                        // device: [0..3) block sums, [3..6) totals
    double* result;                     // device: iterations, converged, breakdown, r.r, b.b
};

template <class T>
__device__ T warp_sum(T v) {
    for (int d = kWarp / 2; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

/// Adds v over the block into *out (one atomic per block).
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

/// q = A p for the listed rows, kLanes lanes per row; returns this thread's part of p . q.
/// p is read with ld.global.cg: inside one kernel, L1 is not kept coherent with what
/// other SMs, and other GPUs, wrote since.
__device__ double spmv_rows(const Args& a, const int* list, int count) {
    const int lane = threadIdx.x % kLanes, sub = (threadIdx.x % kWarp) / kLanes;
    const int per_warp = kWarp / kLanes;
    const int warps = gridDim.x * blockDim.x / kWarp;
    double pq = 0.0;
    for (int base = (blockIdx.x * blockDim.x + threadIdx.x) / kWarp * per_warp; base < count; base += warps * per_warp) {
        const int n = base + sub;
        const int i = n < count ? list[n] : 0;
        float sum = 0.0f;
        if (n < count)
            for (int k = a.row_ptr[i] + lane; k < a.row_ptr[i + 1]; k += kLanes) sum += a.val[k] * __ldcg(a.p + a.col[k]);
        for (int d = kLanes / 2; d > 0; d /= 2) sum += __shfl_down_sync(0xffffffffu, sum, d, kLanes);
        if (lane == 0 && n < count) {
            a.q[i] = sum;
            pq += double(__ldcg(a.p + i)) * double(sum);
        }
    }
    return pq;
}

/// The k block sums in acc[0..k) (every block has added its part: call after a grid
/// barrier), summed over the PEs: every PE puts its k values into slot `round % 2` of
/// every PE's `partial`, with a signal, waits for every PE's signal, and adds the parts in
/// PE order, so every PE gets the same bits. Two slots suffice: a PE reuses a slot only
/// after every PE has delivered the round between, which each did after reading this slot.
/// Returns the totals in every thread.
__device__ void sum_over_pes(const Args& a, int k, double* total, unsigned long long& round, cg::grid_group& grid) {
    ++round;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const int slot = int(round % 2);
        double* mine = a.out + slot * 3;
        for (int j = 0; j < k; ++j)
            mine[j] = __longlong_as_double(atomicExch(reinterpret_cast<unsigned long long*>(a.acc + j), 0ull));
        if (a.communicate && a.npes > 1) {
            nvshmem_fence();  // this round's signals arrive after the previous round's
            for (int q = 0; q < a.npes; ++q)
                nvshmem_double_put_signal(a.partial + (slot * a.npes + a.me) * 3, mine, 3, a.dot_sig + a.me, round,
                                          NVSHMEM_SIGNAL_SET, q);
            for (int q = 0; q < a.npes; ++q) nvshmem_signal_wait_until(a.dot_sig + q, NVSHMEM_CMP_GE, round);
            for (int j = 0; j < k; ++j) {
                double s = 0.0;
                for (int q = 0; q < a.npes; ++q) s += __ldcv(a.partial + (slot * a.npes + q) * 3 + j);
                a.acc[3 + j] = s;
            }
        } else {
            for (int j = 0; j < k; ++j) a.acc[3 + j] = mine[j];
        }
    }
    grid.sync();
    for (int j = 0; j < k; ++j) total[j] = __ldcg(a.acc + 3 + j);
}

/// This iteration's p, to the neighbours: every block packs its share of what they need
/// into `send`; after a grid barrier, block d puts destination d's part straight into its
/// place in that PE's p, with a signal (the iteration number) that arrives after the data.
__device__ void send_halo(const Args& a, int it, cg::grid_group& grid) {
    // TODO(exercise): send this iteration's halo of p to the neighbours, from the GPU.
    //   Afterwards every neighbour a.to.pe[d] must receive, at a.p + a.to.place[d] in its
    //   memory, the values p[send_rows[i]] for i in [a.to.offset[d], a.to.offset[d + 1]),
    //   and a signal in its a.halo_sig[a.me] saying "iteration it is here" (it + 1: a
    //   signal starts at 0).
    //   The constraint: every block of the grid runs this; the rows are scattered through
    //   p, and a put moves a contiguous range; the signal must not arrive before the data;
    //   blocks see each other's writes only after a grid barrier (grid.sync()).
    //   Hints: pack into a.send (symmetric memory) first, read p with __ldcg (inside one
    //   kernel L1 does not see what other SMs wrote). Let block d put destination d's part:
    //   NVSHMEM's nvshmemx_float_put_signal_nbi_block (the block's threads share the copy;
    //   NVSHMEM_SIGNAL_SET). Non-blocking: what must happen before a.send is reused?
    (void)a;
    (void)it;
    (void)grid;
}

/// Until every neighbour's halo of this iteration has arrived; then every block may read
/// it. The putting blocks also complete their puts (send may be rewritten next iteration).
__device__ void wait_halo(const Args& a, int it, cg::grid_group& grid) {
    // TODO(exercise): return only when every neighbour a.from.pe[j] has signalled this
    //   iteration's halo (its a.halo_sig slot in this GPU's memory reached it + 1), and
    //   every block may then read it; the blocks that put this GPU's halo must also have
    //   completed their puts (a.send is rewritten next iteration).
    //   Hints: nvshmem_signal_wait_until (NVSHMEM_CMP_GE), nvshmem_quiet, and a grid barrier.
    //   One thread per neighbour can wait; every block must see the result.
    (void)a;
    (void)it;
    (void)grid;
}

/// The whole Jacobi-preconditioned CG, in one cooperative launch per GPU.
__global__ void __launch_bounds__(kThreads) cg_persistent(Args a) {
    cg::grid_group grid = cg::this_grid();
    const int tid = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    unsigned long long round = 0;
    double t[3];
    // x = 0, r = b, z = D^-1 r, p = z; r.r, r.z, b.b.
    double rr = 0.0, rz = 0.0, bb = 0.0;
    for (int i = tid; i < a.rows; i += threads) {
        const float bi = a.b[i], zi = a.dinv[i] * bi;
        a.x[i] = 0.0f;
        a.r[i] = bi;
        a.z[i] = zi;
        a.p[i] = zi;
        rr += double(bi) * bi;
        rz += double(bi) * zi;
        bb += double(bi) * bi;
    }
    block_add(rr, a.acc + 0);
    block_add(rz, a.acc + 1);
    block_add(bb, a.acc + 2);
    grid.sync();
    sum_over_pes(a, 3, t, round, grid);
    rr = t[0];
    rz = t[1];
    const double threshold = a.tolerance * a.tolerance * t[2];
    int it = 0;
    bool converged = a.stop_test && rr <= threshold, breakdown = false;
    while (!converged && it < a.max_iterations) {
        const bool exchange = a.communicate && (a.to.count > 0 || a.from.count > 0);
        if (exchange) send_halo(a, it, grid);
        double pq = spmv_rows(a, a.interior, a.n_interior);  // meanwhile, the rows that need no halo
        if (exchange) wait_halo(a, it, grid);
        pq += spmv_rows(a, a.boundary, a.n_boundary);
        block_add(pq, a.acc);
        grid.sync();
        sum_over_pes(a, 1, t, round, grid);
        ++it;
        if (a.stop_test && !(t[0] > 0.0)) {
            breakdown = true;
            break;
        }
        const float alpha = float(rz / t[0]);
        double rr_part = 0.0, rz_part = 0.0;
        for (int i = tid; i < a.rows; i += threads) {
            a.x[i] += alpha * a.p[i];
            const float ri = a.r[i] - alpha * __ldcg(a.q + i);
            const float zi = a.dinv[i] * ri;
            a.r[i] = ri;
            a.z[i] = zi;
            rr_part += double(ri) * ri;
            rz_part += double(ri) * zi;
        }
        block_add(rr_part, a.acc + 0);
        block_add(rz_part, a.acc + 1);
        grid.sync();
        sum_over_pes(a, 2, t, round, grid);
        rr = t[0];
        if (a.stop_test && rr <= threshold) {
            converged = true;
            break;
        }
        const float beta = float(t[1] / rz);
        rz = t[1];
        for (int i = tid; i < a.rows; i += threads) a.p[i] = a.z[i] + beta * a.p[i];
        grid.sync();  // p is whole before the next pack and SpMV read it
    }
    if (tid == 0) {
        a.result[0] = it;
        a.result[1] = converged;
        a.result[2] = breakdown;
        a.result[3] = rr;
        a.result[4] = t[2];
    }
}

}  // namespace lesson

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {

/// NVSHMEM for the whole process: started once, collectively (start_nvshmem()), and
/// stopped collectively by stop_nvshmem() before MPI_Finalize. A plain pointer, never
/// destroyed by a static destructor: at exit NVSHMEM's own state may already be gone.
tut::mg::Nvshmem*& shmem() {
    static tut::mg::Nvshmem* s = nullptr;
    return s;
}

/// One GPU's share of the solve: its rows, the halo plan, device and symmetric buffers.
struct CgShmem {
    tut::mg::CgCall call;
    tut::mg::RowPartition part;
    tut::mg::HaloPlan plan;
    tut::DeviceBuffer<int> row_ptr, col, send_rows, interior, boundary;
    tut::DeviceBuffer<float> val, dinv, b, x, r, z, q;
    tut::DeviceBuffer<double> acc, result;
    lesson::Args args{};
    int grid = 0;
    cudaEvent_t start, stop;

    explicit CgShmem(const tut::mg::CgCall& c) : call(c), part(c.problem.rows(), c.ranks.parts) {
        const tut::mg::CgProblem& pr = c.problem;
        if (pr.rows() < 1) throw tut::Unsupported("the grid needs at least one node");
        const tut::mg::CsrRows mine = tut::mg::diffusion_27pt_rows(pr.nx, pr.ny, pr.nz, part.begin(c.ranks.rank),
                                                                   part.end(c.ranks.rank), pr.seed);
        plan = tut::mg::discover_halo(c.ranks.rank, part, mine.row_ptr, mine.col_idx, mine.values);
        const tut::mg::World* world = tut::mg::detail::current_world();
        const bool distributed = c.ranks.parts > 1;
        long long p_size = plan.local_size(), send_size = static_cast<long long>(plan.send_rows.size());
        std::vector<long long> place_from(size_t(c.ranks.parts), -1);
        if (distributed) {
            tut::mg::exchange_halo_lists(*world, plan);
            send_size = static_cast<long long>(plan.send_rows.size());
            // Where each neighbour wants this rank's block: its recv_place for this rank.
            std::vector<long long> place_to(size_t(world->size), -1);
            for (size_t i = 0; i < plan.recv_ranks.size(); ++i) place_to[plan.recv_ranks[i]] = plan.recv_place(i);
            TUT_MPI(MPI_Alltoall(place_to.data(), 1, MPI_LONG_LONG, place_from.data(), 1, MPI_LONG_LONG, world->comm));
            // Symmetric objects have one size on every PE: the largest.
            p_size = static_cast<long long>(tut::mg::max_over_ranks(*world, double(p_size)));
            send_size = static_cast<long long>(tut::mg::max_over_ranks(*world, double(send_size)));
        }
        if (plan.send_ranks.size() > size_t(lesson::kMaxNeighbours) || plan.recv_ranks.size() > size_t(lesson::kMaxNeighbours))
            throw tut::Unsupported("more than 16 neighbours");
        const int rows = static_cast<int>(plan.rows);
        row_ptr = tut::DeviceBuffer<int>(plan.row_ptr);
        col = tut::DeviceBuffer<int>(plan.col_idx);
        val = tut::DeviceBuffer<float>(plan.values);
        dinv = tut::DeviceBuffer<float>(tut::mg::inverse_diagonal(mine));
        b = tut::DeviceBuffer<float>(tut::mg::cg_rhs_rows(mine, pr.seed));
        for (auto* v : {&x, &r, &z, &q}) *v = tut::DeviceBuffer<float>(size_t(std::max(rows, 1)));
        send_rows = tut::DeviceBuffer<int>(plan.send_rows);
        interior = tut::DeviceBuffer<int>(plan.interior_rows);
        boundary = tut::DeviceBuffer<int>(plan.boundary_rows);
        acc = tut::DeviceBuffer<double>(6);
        result = tut::DeviceBuffer<double>(5);
        TUT_CUDA(cudaMemset(acc.get(), 0, acc.bytes()));

        // Symmetric memory, in the same order and sizes on every PE of this solve.
        tut::mg::Nvshmem& sh = *shmem();
        sh.reset();
        const int npes = distributed ? c.ranks.parts : 1;
        args.p = sh.take<float>(size_t(std::max<long long>(p_size, 1)));
        args.send = sh.take<float>(size_t(std::max<long long>(send_size, 1)));
        args.halo_sig = sh.take<uint64_t>(size_t(c.ranks.parts));
        args.dot_sig = sh.take<uint64_t>(size_t(c.ranks.parts));
        args.partial = sh.take<double>(size_t(2 * c.ranks.parts * 3));
        args.out = sh.take<double>(6);

        args.rows = rows;
        args.me = c.ranks.rank;
        args.npes = npes;
        args.communicate = distributed && !c.compute_only;
        args.stop_test = !c.compute_only;
        args.max_iterations = c.compute_only ? c.fixed_iterations : c.max_iterations;
        args.tolerance = c.tolerance;
        args.row_ptr = row_ptr.get();
        args.col = col.get();
        args.val = val.get();
        args.dinv = dinv.get();
        args.b = b.get();
        args.x = x.get();
        args.r = r.get();
        args.z = z.get();
        args.q = q.get();
        args.send_rows = send_rows.get();
        args.to.count = static_cast<int>(plan.send_ranks.size());
        args.to.offset[0] = 0;
        for (int i = 0; i < args.to.count; ++i) {
            args.to.pe[i] = plan.send_ranks[i];
            args.to.offset[i + 1] = plan.send_offsets[i + 1];
            args.to.place[i] = place_from[size_t(plan.send_ranks[i])];
        }
        args.from.count = static_cast<int>(plan.recv_ranks.size());
        for (int i = 0; i < args.from.count; ++i) args.from.pe[i] = plan.recv_ranks[i];
        args.interior = interior.get();
        args.boundary = boundary.get();
        args.n_interior = static_cast<int>(plan.interior_rows.size());
        args.n_boundary = static_cast<int>(plan.boundary_rows.size());
        args.acc = acc.get();
        args.result = result.get();

        // A grid every block of which is resident at once (a cooperative launch's rule).
        void* params[] = {&args};
        int most = 0;
        if (distributed) {
            TUT_NVSHMEM(nvshmemx_collective_launch_query_gridsize((const void*)lesson::cg_persistent, dim3(lesson::kThreads),
                                                                  params, 0, &most));
        } else {
            int per_sm = 0;
            TUT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, lesson::cg_persistent, lesson::kThreads, 0));
            most = per_sm * tut::sm_count();
        }
        grid = std::max(1, std::min(most, 4 * tut::sm_count()));
        if (distributed) grid = static_cast<int>(tut::mg::min_over_ranks(*world, double(grid)));
        TUT_CUDA(cudaEventCreate(&start));
        TUT_CUDA(cudaEventCreate(&stop));
        TUT_CUDA(cudaDeviceSynchronize());
    }
    ~CgShmem() {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
    CgShmem(const CgShmem&) = delete;
    CgShmem& operator=(const CgShmem&) = delete;

    tut::mg::SolveOutcome solve() {
        const cudaStream_t s = call.ranks.stream;
        const bool distributed = call.ranks.parts > 1;
        // Signals start from zero on every PE before any PE's kernel can signal again.
        TUT_CUDA(cudaMemsetAsync(args.halo_sig, 0, sizeof(uint64_t) * size_t(call.ranks.parts), s));
        TUT_CUDA(cudaMemsetAsync(args.dot_sig, 0, sizeof(uint64_t) * size_t(call.ranks.parts), s));
        TUT_CUDA(cudaStreamSynchronize(s));
        if (distributed) tut::mg::barrier(*tut::mg::detail::current_world());
        void* params[] = {&args};
        TUT_CUDA(cudaEventRecord(start, s));
        if (distributed) {
            TUT_NVSHMEM(nvshmemx_collective_launch((const void*)lesson::cg_persistent, dim3(grid), dim3(lesson::kThreads),
                                                   params, 0, s));
        } else {
            TUT_CUDA(cudaLaunchCooperativeKernel((const void*)lesson::cg_persistent, dim3(grid), dim3(lesson::kThreads),
                                                 params, 0, s));
        }
        TUT_LAUNCH("cg_persistent");
        TUT_CUDA(cudaEventRecord(stop, s));
        double h[5];
        TUT_CUDA(cudaMemcpyAsync(h, result.get(), sizeof h, cudaMemcpyDeviceToHost, s));
        tut::mg::progress_detail(call.problem.label() + ", PE " + std::to_string(call.ranks.rank) + " of " +
                                 std::to_string(call.ranks.parts) + ": cg_persistent running (" +
                                 (args.communicate ? "halo puts and sums between the GPUs" : "no communication") +
                                 "), at most " + std::to_string(args.max_iterations) + " iterations");
        TUT_CUDA(cudaStreamSynchronize(s));
        float ms = 0;
        TUT_CUDA(cudaEventElapsedTime(&ms, start, stop));
        tut::mg::SolveOutcome out;
        out.ms = ms;
        out.iterations = static_cast<int>(h[0]);
        out.converged = h[1] != 0 && h[2] == 0;
        out.residual = h[4] > 0 ? std::sqrt(std::max(0.0, h[3]) / h[4]) : 0.0;
        return out;
    }

    /// ||b - A x|| / ||b|| on the host, from the whole x and the rows (the checks' sizes).
    std::vector<double> gather_x() {
        std::vector<float> mine(static_cast<size_t>(plan.rows));
        if (!mine.empty()) TUT_CUDA(cudaMemcpy(mine.data(), x.get(), mine.size() * sizeof(float), cudaMemcpyDeviceToHost));
        std::vector<float> all(static_cast<size_t>(part.n));
        if (call.ranks.parts == 1) {
            all = mine;
        } else {
            const tut::mg::World& w = *tut::mg::detail::current_world();
            tut::mg::collective(w, "MPI_Allgatherv of the whole x");
            std::vector<int> counts(size_t(w.size)), displs(size_t(w.size));
            for (int q = 0; q < w.size; ++q) {
                counts[q] = static_cast<int>(part.rows(q));
                displs[q] = static_cast<int>(part.begin(q));
            }
            TUT_MPI(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_FLOAT, all.data(), counts.data(),
                                   displs.data(), MPI_FLOAT, w.comm));
        }
        return std::vector<double>(all.begin(), all.end());
    }
};

// ||b - A x|| / ||b|| in double over the whole system, on the host, rows generated again.
double true_residual(const tut::mg::CgProblem& pr, const std::vector<double>& x) {
    const tut::mg::CsrRows all = tut::mg::diffusion_27pt_rows(pr.nx, pr.ny, pr.nz, 0, pr.rows(), pr.seed);
    const std::vector<float> b = tut::mg::cg_rhs_rows(all, pr.seed);
    double rr = 0, bb = 0;
    for (size_t i = 0; i < b.size(); ++i) {
        double ax = 0;
        for (int k = all.row_ptr[i]; k < all.row_ptr[i + 1]; ++k) ax += double(all.values[k]) * x[size_t(all.col_idx[k])];
        rr += (b[i] - ax) * (b[i] - ax);
        bb += double(b[i]) * b[i];
    }
    return bb > 0 ? std::sqrt(rr / bb) : std::sqrt(rr);
}

}  // namespace

namespace lesson {
/// Starts NVSHMEM on every rank of the job (collective; once).
void start_nvshmem() {
    if (shmem()) return;
    shmem() = new tut::mg::Nvshmem(*tut::mg::detail::current_world());
    shmem()->take<unsigned char>(1);  // the symmetric arena, allocated now by every PE together
    shmem()->reset();
}
/// Stops NVSHMEM on every rank (collective: nvshmem_finalize), before MPI_Finalize; nothing
/// when it was not started.
void stop_nvshmem() {
    delete shmem();
    shmem() = nullptr;
}
/// One solve, for the checks (call start_nvshmem() on every rank first): the whole x and,
/// in SolveOutcome::residual, the true residual (computed on the host: small problems).
tut::mg::SolveOutcome cg_solve(const tut::mg::CgCall& c) {
    start_nvshmem();
    CgShmem solver(c);
    tut::mg::SolveOutcome o = solver.solve();
    if (c.want_x) {
        o.x = solver.gather_x();
        o.residual = true_residual(c.problem, o.x);
    }
    return o;
}
}  // namespace lesson

namespace {

struct Problem {
    std::string name;
    tut::mg::CgProblem grid, one_gpu;
    tut::mg::Scaling scaling;
};

std::vector<Problem> problems(int gpus, bool small) {
    if (small) return {{"weak", {24, 24, 24 * gpus}, {24, 24, 24}, tut::mg::Scaling::weak},
                       {"24x24x48", {24, 24, 48}, {24, 24, 48}, tut::mg::Scaling::strong}};
    return {{"weak", {128, 128, 128 * gpus}, {128, 128, 128}, tut::mg::Scaling::weak},
            {"128^3", {128, 128, 128}, {128, 128, 128}, tut::mg::Scaling::strong},
            {"256^3", {256, 256, 256}, {256, 256, 256}, tut::mg::Scaling::strong}};
}

/// A solve to convergence (its iterations, whether it converged), then the time per
/// iteration on this rank: the median of `repeats` solves stopped after at most
/// kTimedIterations iterations, and the same iterations with no puts and no waits.
/// Symmetric memory is taken in the constructor: every rank of the solve makes it together.
constexpr int kTimedIterations = 256;
struct Timed {
    tut::mg::SolveOutcome full;
    double ms = 0;
    int timed_iterations = 0;
    double compute_ms = 0;
    double us_per_iter() const { return 1e3 * ms / std::max(1, timed_iterations); }
};
Timed time_cg(const tut::mg::CgCall& c, int repeats, const tut::mg::World* world) {
    CgShmem solver(c);
    Timed t;
    t.full = solver.solve();
    solver.args.max_iterations = std::max(1, std::min(t.full.iterations, kTimedIterations));
    std::vector<double> times;
    for (int i = 0; i < std::max(1, repeats); ++i) {
        if (world) tut::mg::barrier(*world);
        const tut::mg::SolveOutcome o = solver.solve();
        times.push_back(o.ms);
        t.timed_iterations = std::max(1, o.iterations);
    }
    t.ms = tut::median_of(times);
    solver.args.communicate = false;
    solver.args.stop_test = false;
    solver.args.max_iterations = t.timed_iterations;
    std::vector<double> compute;
    for (int i = 0; i < std::max(1, repeats); ++i) {
        if (world) tut::mg::barrier(*world);
        compute.push_back(solver.solve().ms);
    }
    t.compute_ms = tut::median_of(compute);
    return t;
}

/// main()'s measuring: time() solves and times (time_cg), check() judges the solve to
/// convergence (the same verdict on every rank: its values are sums over the GPUs).
struct Solver {
    int repeats;
    const tut::mg::World* world;
    double tolerance = 1e-6;
    Timed time(const tut::mg::CgCall& c) const { return time_cg(c, repeats, world); }
    std::string check(const Timed& t) const {
        if (!t.full.converged) return "did not converge in " + std::to_string(t.full.iterations) + " iterations";
        if (!(t.full.residual <= 1.01 * tolerance))
            return "the residual the iteration carries is " + std::to_string(t.full.residual);
        return "";
    }
};

}  // namespace

int main(int argc, char** argv) {
    bool small = false;
    std::string only;
    tut::RunOptions run;
    run.repeats = 3;
    int max_iterations = 20000;
    tut::Cli cli("nvshmem_cg", "CG in one persistent kernel per GPU: NVSHMEM puts and signals issued by the GPUs");
    cli.add_flag("small", &small, "small grids (24 x 24 x 24 per GPU, and 24 x 24 x 48): quick runs, sanitizer");
    cli.add_string("problem", &only, "only these problems, comma-separated: weak, 128^3, 256^3 (with --small: weak, 24x24x48)");
    cli.add_int("max-iterations", &max_iterations, "iterations at most", 1, 1000000);
    tut::add_run_options(cli, run);
    cli.parse_or_exit(argc, argv);
    tut::finish_run_options(run);
    const std::string variant = "nvshmem persistent";
    if (!tut::variant_is_known("nvshmem_cg", run.variant, std::vector<std::string>{variant})) return tut::kUsageExitCode;
    const std::vector<std::string> chosen = tut::mg::name_list_or_exit(cli, only, {"weak", "128^3", "256^3", "24x24x48"}, "problem");

    tut::mg::Mpi mpi(argc, argv);
    const tut::mg::World& world = mpi.world();
    const int rc = tut::mg::guarded(world, "nvshmem_cg", [&] {
        if (!tut::device_has(cudaDevAttrCooperativeLaunch))
            tut::mg::skip_all(world, "the persistent kernel needs cooperative launches, which this GPU lacks");
        lesson::start_nvshmem();
        cudaStream_t stream;
        TUT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        if (world.root())
            std::printf("%d GPU(s), one process (PE) each | NVSHMEM %d.%d | one persistent kernel per GPU\n", world.size,
                        NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION);
        tut::Table table({"problem", "iterations", "ms", "us/iter", "compute", "comm", "residual", "1 GPU us/iter",
                          "speedup", "efficiency"});
        const Solver solver{run.repeats, &world};
        // Per grid: its measurement in this run (on one GPU the weak problem is 128^3), and
        // the one-GPU time per iteration (weak and 128^3 share theirs): each grid is generated
        // and measured once.
        std::map<std::string, Timed> measured;
        std::map<std::string, double> one_gpu_us;
        for (const Problem& pb : problems(world.size, small)) {
            if (!tut::mg::chosen(chosen, pb.name)) continue;
            tut::mg::CgCall c;
            c.ranks = {world.rank, world.size, nullptr, stream};
            c.problem = pb.grid;
            c.variant = variant;
            c.max_iterations = max_iterations;
            tut::mg::progress("06_nvshmem: " + pb.name + " (" + pb.grid.label() + ") on " + std::to_string(world.size) +
                              " GPU(s)");
            if (!measured.count(pb.grid.label())) {
                tut::NvtxRange range("multigpu/06_nvshmem/" + pb.name);
                measured[pb.grid.label()] = solver.time(c);
            }
            const Timed t = measured[pb.grid.label()];
            if (const std::string wrong = run.check() ? solver.check(t) : ""; !wrong.empty())
                throw tut::CudaError(pb.name + " (" + pb.grid.label() + "): " + wrong);
            const double ms = tut::mg::max_over_ranks(world, t.ms);
            const double compute = tut::mg::max_over_ranks(world, t.compute_ms);
            const int it = t.timed_iterations;  // timed; t.full.iterations to converge
            const double us = 1e3 * ms / it;
            double us1 = us;
            if (world.size > 1 && one_gpu_us.count(pb.one_gpu.label())) {
                us1 = one_gpu_us[pb.one_gpu.label()];
            } else if (world.size > 1) {
                const std::string what = "06_nvshmem: the one-GPU baseline, " + pb.one_gpu.label();
                tut::mg::progress(what + (world.rank == 0 ? "" : " (rank 0 alone; this rank waits for its result)"));
                if (world.rank == 0) {
                    tut::mg::RankLocal alone_section(what);  // no collective may start in here
                    tut::mg::CgCall one = c;
                    one.ranks = {0, 1, nullptr, stream};
                    one.problem = pb.one_gpu;
                    us1 = time_cg(one, run.repeats, nullptr).us_per_iter();
                }
                TUT_MPI(MPI_Bcast(&us1, 1, MPI_DOUBLE, 0, world.comm));
                one_gpu_us[pb.one_gpu.label()] = us1;
            }
            const double bytes = tut::mg::cg_floor_bytes(pb.grid.rows(), 27 * pb.grid.rows()) * it;
            tut::Record r = tut::mg::make_record("06_nvshmem", variant, pb.name, world.size);
            r.value = bytes / (ms * 1e-3) * 1e-9;
            r.unit = "GB/s";
            r.time_ms = ms;
            r.library = tut::fmt("the same lesson on 1 GPU, x %d", world.size);
            r.library_value = world.size * tut::mg::cg_floor_bytes(pb.one_gpu.rows(), 27 * pb.one_gpu.rows()) / (us1 * 1e-6) * 1e-9;
            r.peak = tut::fmt("DRAM peak x %d", world.size);
            r.peak_value = tut::device_facts(world.device).dram_peak_gbs * world.size;
            r.checked = true;
            r.extra.add("problem", pb.grid.label());
            r.extra.add("rows", pb.grid.rows());
            r.extra.add("iterations", t.full.iterations);
            r.extra.add("timed_iterations", it);
            r.extra.add("converged", t.full.converged);
            r.extra.add("residual", t.full.residual);
            r.extra.add("us_per_iter", us);
            r.extra.add("compute_us_per_iter", 1e3 * compute / it);
            r.extra.add("comm_us_per_iter", us - 1e3 * compute / it);
            r.extra.add("one_gpu_us_per_iter", us1);
            tut::mg::add_scaling(r, pb.scaling, us1 * 1e-3, us * 1e-3, world.size);
            if (!world.root()) continue;
            tut::append_record("nvshmem_cg", run.json, r);
            table.add_row({pb.name + " (" + pb.grid.label() + ")", std::to_string(t.full.iterations), tut::fmt("%.1f", ms),
                           tut::fmt("%.0f", us), tut::fmt("%.0f", 1e3 * compute / it), tut::fmt("%.0f", us - 1e3 * compute / it),
                           tut::fmt("%.1e", t.full.residual), tut::fmt("%.0f", us1),
                           tut::fmt("%.2fx", tut::mg::speedup(pb.scaling, us1, us, world.size)),
                           tut::percent(r.ratio_to_library())});
        }
        if (world.root()) {
            std::printf("\nCG in one persistent kernel per GPU on %d GPU(s): us per iteration, compute (the same "
                        "kernel with no puts and no waits) and comm (the rest)\n", world.size);
            table.print();
        }
        TUT_CUDA(cudaStreamDestroy(stream));
        return 0;
    });
    // NVSHMEM stops on every PE before MPI_Finalize (~Mpi), not from a static destructor.
    // After a failure (with one process: with several, guarded() has ended the job) its
    // state is left as it is: a finalize could wait for work that never ends.
    if (rc == 0) lesson::stop_nvshmem();
    return rc;
}
