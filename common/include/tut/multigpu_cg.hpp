/// @file multigpu_cg.hpp
/// @brief The CG lessons' problem, one GPU's rows at a time: the CG track's matrix
/// (tut::cg::diffusion_27pt) and right-hand side (b = A x*, x* uniform in [0, 1)),
/// generated for rows [begin, end) only, with the same bits as the whole-matrix generator.
/// Plain C++ (the CPU tests compare it with the generator, entry by entry).
///
/// Why not generate the whole matrix on every process and keep its rows? The weak-scaling
/// problem on 4 GPUs has 8.4 M rows and 224 M nonzeros: about 2 GB of CSR and ten seconds
/// per process, every run. The track's generator is counter-based at heart: the node
/// coefficients k_i are the i-th outputs of a SplitMix64 sequence, and SplitMix64's i-th
/// output needs no earlier one (its state advances by a constant per output). So a
/// process computes the coefficients of its rows and of the planes next to them, and
/// walks its rows with the generator's own loops, in the generator's order: the same
/// doubles, rounded to the same floats. b = A x* likewise needs x* only at its rows'
/// columns, with x* the outputs of the CG track's seed ^ 0x5eedb0b sequence.
///
/// After it, for the lessons' files only (it has kernels and calls MPI): the harness the
/// CG lessons share, so that each lesson's harness keeps its variants and its main()'s loop.
#pragma once

#include "cg_matrix.hpp"
#include "multigpu.hpp"
#include "random.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tut::mg {

/// The i-th output (0-based) of SplitMix64(seed), without the ones before it.
inline SplitMix64 splitmix_at_index(uint64_t seed, uint64_t i) {
    return SplitMix64(seed + i * 0x9E3779B97F4A7C15ull);
}

/// Nonzeros of the CG track's diffusion_27pt(nx, ny, nz): along each axis a node has the
/// neighbours inside the grid, 3 n - 2 pairs in all, and the stencil is their product.
inline long long diffusion_27pt_nonzeros(int nx, int ny, int nz) {
    return (3ll * nx - 2) * (3ll * ny - 2) * (3ll * nz - 2);
}

/// Rows [begin, end) of the CG track's diffusion_27pt(nx, ny, nz, seed, decades), as CSR
/// arrays with global column indices (row_ptr from 0), the same values bit for bit.
struct CsrRows {
    long long begin = 0, end = 0;
    std::vector<int> row_ptr{0};
    std::vector<int> col_idx;
    std::vector<float> values;
};

inline CsrRows diffusion_27pt_rows(int nx, int ny, int nz, long long begin, long long end, uint64_t seed = 2024,
                                   double decades = 2.0) {
    if (nx < 1 || ny < 1 || nz < 1) throw std::invalid_argument("diffusion_27pt_rows: grid dimensions must be >= 1");
    const long long n = 1ll * nx * ny * nz;
    const long long nnz = diffusion_27pt_nonzeros(nx, ny, nz);
    if (n > INT_MAX || nnz > INT_MAX) throw std::invalid_argument("diffusion_27pt_rows: grid too large for 32-bit CSR indices");
    if (begin < 0 || end > n || begin > end) throw std::invalid_argument("diffusion_27pt_rows: rows out of range");
    CsrRows out;
    out.begin = begin;
    out.end = end;
    if (begin == end) return out;
    const long long plane = 1ll * nx * ny;
    // The coefficients of the planes this block touches: its own, and one on each side.
    const long long z_lo = std::max(0ll, begin / plane - 1), z_hi = std::min<long long>(nz - 1, (end - 1) / plane + 1);
    const long long k_first = z_lo * plane;
    std::vector<double> k(size_t((z_hi - z_lo + 1) * plane));
    for (size_t i = 0; i < k.size(); ++i) {
        SplitMix64 rng = splitmix_at_index(seed, uint64_t(k_first) + i);
        k[i] = std::pow(10.0, decades * rng.uniform());
    }
    auto coeff = [&](long long node) { return k[size_t(node - k_first)]; };
    out.row_ptr.reserve(size_t(end - begin) + 1);
    out.col_idx.reserve(size_t(end - begin) * 27);
    out.values.reserve(size_t(end - begin) * 27);
    for (long long i = begin; i < end; ++i) {
        const int z = static_cast<int>(i / plane), y = static_cast<int>((i % plane) / nx), x = static_cast<int>(i % nx);
        size_t diag_pos = 0;
        double diag = 0.0;
        for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    const int xx = x + dx, yy = y + dy, zz = z + dz;
                    const bool in_xy = xx >= 0 && xx < nx && yy >= 0 && yy < ny;
                    if (!in_xy || zz >= nz) continue;  // free faces: no flux
                    if (zz < 0) {                      // fixed face: ghost node held at 0
                        diag += coeff(i);
                        continue;
                    }
                    const long long j = xx + 1ll * nx * (yy + 1ll * ny * zz);
                    if (j == i) {
                        diag_pos = out.col_idx.size();
                        out.col_idx.push_back(static_cast<int>(i));
                        out.values.push_back(0.0f);
                        continue;
                    }
                    const double w = std::sqrt(coeff(i) * coeff(j));
                    diag += w;
                    out.col_idx.push_back(static_cast<int>(j));
                    out.values.push_back(static_cast<float>(-w));
                }
        out.values[diag_pos] = static_cast<float>(diag);
        out.row_ptr.push_back(static_cast<int>(out.col_idx.size()));
    }
    return out;
}

/// x*_j of the CG track's right-hand side: uniform in [0, 1) from seed ^ 0x5eedb0b, as float.
inline float cg_solution_entry(uint64_t seed, long long j) {
    SplitMix64 rng = splitmix_at_index(seed ^ 0x5eedb0bull, uint64_t(j));
    return static_cast<float>(rng.uniform(0.0, 1.0));
}

/// b = A x* at the rows of `rows` (the sum in double in the row's column order, as the
/// CG track's spmv_cpu, rounded once to float).
inline std::vector<float> cg_rhs_rows(const CsrRows& rows, uint64_t seed) {
    std::vector<float> b(size_t(rows.end - rows.begin));
    if (b.empty()) return b;
    // x* once for every column the rows read: the block and the planes next to it.
    const int lo = *std::min_element(rows.col_idx.begin(), rows.col_idx.end());
    const int hi = *std::max_element(rows.col_idx.begin(), rows.col_idx.end());
    std::vector<float> xs(size_t(hi - lo + 1));
    for (size_t j = 0; j < xs.size(); ++j) xs[j] = cg_solution_entry(seed, lo + static_cast<long long>(j));
    for (size_t i = 0; i < b.size(); ++i) {
        double s = 0.0;
        for (int k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k)
            s += double(rows.values[k]) * double(xs[size_t(rows.col_idx[k] - lo)]);
        b[i] = static_cast<float>(s);
    }
    return b;
}

/// 1 / A_ii of each row (Jacobi), throwing for a row without a positive diagonal.
inline std::vector<float> inverse_diagonal(const CsrRows& rows) {
    std::vector<float> d(size_t(rows.end - rows.begin));
    for (size_t i = 0; i < d.size(); ++i) {
        float a = 0.0f;
        for (int k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k)
            if (rows.col_idx[k] == rows.begin + static_cast<long long>(i)) a += rows.values[k];
        if (!(a > 0.0f))
            throw std::invalid_argument("row " + std::to_string(rows.begin + static_cast<long long>(i)) +
                                        " has no positive diagonal");
        d[i] = 1.0f / a;
    }
    return d;
}

}  // namespace tut::mg

// =======================================================================================
// The CG lessons' harness (lessons 4-6): options and problems, one rank's share of the
// system, lessons 4 and 5's solver around their own kernels, the timing, the one-GPU
// yardstick, the records and the table. It has kernels and calls MPI, so it needs nvcc
// and MPI (the lessons have both): the CPU tests' host-compiled files skip it.
// =======================================================================================
#if defined(__CUDACC__)

#include "buffer.hpp"
#include "check.hpp"
#include "cli.hpp"
#include "device_facts.hpp"
#include "gpu.hpp"
#include "lesson.hpp"
#include "multigpu_halo.hpp"
#include "multigpu_mpi.hpp"
#include "multigpu_solvers.hpp"
#include "nvtx.hpp"
#include "report.hpp"
#include "timer.hpp"

#include <cuda_runtime.h>

#include <map>
#include <utility>

namespace tut::mg {

// ---------------------------------------------------------------------------------------
// Options and problems
// ---------------------------------------------------------------------------------------

/// The CG lessons' command line: --small, --problem, --max-iterations (add_to()), then a
/// lesson's own options, then tut::add_run_options(cli, run); --repeats defaults to 3.
struct CgOptions {
    bool small = false;
    std::string problem;                ///< --problem as given
    int max_iterations = 20000;
    RunOptions run;
    std::vector<std::string> problems;  ///< --problem's names, set by finish() (none: all)

    CgOptions() { run.repeats = 3; }

    void add_to(Cli& cli) {
        cli.add_flag("small", &small, "small grids (24 x 24 x 24 per GPU, and 24 x 24 x 48): quick runs, sanitizer");
        cli.add_string("problem", &problem,
                       "only these problems, comma-separated: weak, 128^3, 256^3 (with --small: weak, 24x24x48)");
        cli.add_int("max-iterations", &max_iterations, "iterations at most", 1, 1000000);
    }

    /// After parsing, before MPI starts: false (having said why) when --variant names none of
    /// `variants`; a bad --problem prints the usage and exits with the usage code.
    bool finish(const Cli& cli, const char* program, const std::vector<std::string>& variants) {
        finish_run_options(run);
        if (!variant_is_known(program, run.variant, variants)) return false;
        problems = name_list_or_exit(cli, problem, {"weak", "128^3", "256^3", "24x24x48"}, "problem");
        return true;
    }
};

/// A row of the CG lessons' tables: the grid on all the GPUs, and what one GPU solves for
/// the baseline (a GPU's share for weak scaling, the whole grid for strong).
struct CgScalingProblem {
    std::string name;  ///< "weak", "128^3", "256^3" (with --small: "weak", "24x24x48")
    CgProblem grid;
    CgProblem one_gpu;
    Scaling scaling;
};

inline std::vector<CgScalingProblem> cg_problems(int gpus, bool small) {
    if (small) return {{"weak", {24, 24, 24 * gpus}, {24, 24, 24}, Scaling::weak},
                       {"24x24x48", {24, 24, 48}, {24, 24, 48}, Scaling::strong}};
    return {{"weak", {128, 128, 128 * gpus}, {128, 128, 128}, Scaling::weak},
            {"128^3", {128, 128, 128}, {128, 128, 128}, Scaling::strong},
            {"256^3", {256, 256, 256}, {256, 256, 256}, Scaling::strong}};
}

/// Bytes one Jacobi PCG iteration of the CG track on `grid` must move at least (its floor):
/// the matrix once and the vectors' compulsory traffic (tut::cg::floor_bytes_per_iteration).
inline double cg_floor_bytes(const CgProblem& grid) {
    return tut::cg::floor_bytes_per_iteration(grid.rows(), diffusion_27pt_nonzeros(grid.nx, grid.ny, grid.nz), true);
}

// ---------------------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------------------

/// A solve to convergence, then the time per iteration on this rank (time_per_iteration()).
struct CgTiming {
    SolveOutcome full;      ///< the solve to convergence
    double ms = 0;          ///< median of the timed solves
    int timed_iterations = 0;
    double compute_ms = 0;  ///< the same iterations, no communication
    double us_per_iter() const { return 1e3 * ms / std::max(1, timed_iterations); }
};

/// Iterations a timed solve runs at most: every iteration costs the same, so timing one
/// does not need a whole solve.
inline constexpr int kCgTimedIterations = 256;

/// Fills `t`, whose solve to convergence is done: the median of `repeats` solves stopped
/// after at most kCgTimedIterations iterations, and of as many of those iterations with no
/// communication, taken in turn, so that a drift of the clocks or the machine over the
/// measurement lands in both. `solver` has solve(), stop_after(iterations) (full solves
/// again) and compute_only(iterations). `world`: the ranks meet before each solve; null for
/// a rank alone (the one-GPU baseline).
template <class Solver>
void time_per_iteration(Solver& solver, CgTiming& t, int repeats, const World* world) {
    const int most = std::max(1, std::min(t.full.iterations, kCgTimedIterations));
    std::vector<double> times, compute;
    for (int i = 0; i < std::max(1, repeats); ++i) {
        solver.stop_after(most);
        if (world) barrier(*world);
        const SolveOutcome o = solver.solve();
        times.push_back(o.ms);
        t.timed_iterations = std::max(1, o.iterations);
        solver.compute_only(t.timed_iterations);
        if (world) barrier(*world);
        compute.push_back(solver.solve().ms);
    }
    t.ms = median_of(times);
    t.compute_ms = median_of(compute);
}

/// Lessons 4 and 5's check of a solve to convergence whose `residual` is the true one,
/// ||b - A x|| / ||b||: "" when it converged and that is at most 1e-5 (the stopping rule is
/// 1e-6 on the residual the iteration carries). The same verdict on every rank: its values
/// are sums over the GPUs.
inline std::string cg_verdict(const SolveOutcome& full) {
    if (!full.converged) return "did not converge in " + std::to_string(full.iterations) + " iterations";
    if (!(full.residual <= 1e-5)) return "true residual ||b - A x|| / ||b|| = " + std::to_string(full.residual);
    return "";
}

// ---------------------------------------------------------------------------------------
// One rank's share of the system
// ---------------------------------------------------------------------------------------

/// One rank's share of a CG lesson's system, on its GPU: its rows of the matrix (generated
/// here: no rank holds the whole matrix) with local columns and their halo plan
/// (multigpu_halo.hpp), 1 / A_ii and b. The ranks of a solve make their shares together
/// (they exchange the halo lists).
struct CgShare {
    CgCall call;
    RowPartition part;
    HaloPlan plan;
    int rows = 0;
    DeviceBuffer<int> row_ptr, col;
    DeviceBuffer<float> val, dinv, b;

    explicit CgShare(const CgCall& c) : call(c), part(c.problem.rows(), c.ranks.parts) {
        const CgProblem& pr = c.problem;
        if (pr.rows() < 1) throw Unsupported("the grid needs at least one node");
        const CsrRows mine =
            diffusion_27pt_rows(pr.nx, pr.ny, pr.nz, part.begin(c.ranks.rank), part.end(c.ranks.rank), pr.seed);
        plan = discover_halo(c.ranks.rank, part, mine.row_ptr, mine.col_idx, mine.values);
        if (c.ranks.parts > 1) exchange_halo_lists(*detail::current_world(), plan);
        rows = static_cast<int>(plan.rows);
        row_ptr = DeviceBuffer<int>(plan.row_ptr);
        col = DeviceBuffer<int>(plan.col_idx);
        val = DeviceBuffer<float>(plan.values);
        dinv = DeviceBuffer<float>(inverse_diagonal(mine));
        b = DeviceBuffer<float>(cg_rhs_rows(mine, pr.seed));
    }

    /// The whole x, whose rows of this rank are at `x` (device), on every rank (collective
    /// over the ranks of the solve).
    std::vector<double> gather_x(const float* x) const {
        std::vector<float> mine(static_cast<size_t>(rows));
        if (rows) TUT_CUDA(cudaMemcpy(mine.data(), x, mine.size() * sizeof(float), cudaMemcpyDeviceToHost));
        std::vector<float> all(static_cast<size_t>(part.n));
        if (call.ranks.parts == 1) {
            all = mine;
        } else {
            const World& w = *detail::current_world();
            collective(w, "MPI_Allgatherv of the whole x");
            std::vector<int> counts(size_t(w.size)), displs(size_t(w.size));
            for (int q = 0; q < w.size; ++q) {
                counts[q] = static_cast<int>(part.rows(q));
                displs[q] = static_cast<int>(part.begin(q));
            }
            TUT_MPI(MPI_Allgatherv(mine.data(), rows, MPI_FLOAT, all.data(), counts.data(), displs.data(), MPI_FLOAT, w.comm));
        }
        return std::vector<double>(all.begin(), all.end());
    }
};

// ---------------------------------------------------------------------------------------
// Lessons 4 and 5's solver on one rank
// ---------------------------------------------------------------------------------------

/// The start of a solve: z = D^-1 r, and this GPU's parts of r . r, r . z and b . b added
/// into *rr_sum, *rz_sum and *bb_sum (device memory; block_add adds a block's part).
template <auto block_add>
__global__ void init_kernel(int rows, const float* __restrict__ r, float* __restrict__ z, const float* __restrict__ dinv,
                            const float* __restrict__ b, double* rr_sum, double* rz_sum, double* bb_sum) {
    double rr = 0.0, rz = 0.0, bb = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x) {
        const float zi = dinv[i] * r[i];
        z[i] = zi;
        rr += double(r[i]) * r[i];
        rz += double(r[i]) * zi;
        bb += double(b[i]) * b[i];
    }
    block_add(rr, rr_sum);
    block_add(rz, rz_sum);
    block_add(bb, bb_sum);
}

namespace detail {

/// After the sums: the threshold, and done when b (so r) is already small enough.
template <class Scalars>
__global__ void finish_init_kernel(Scalars* s, double tol) {
    s->threshold = tol * tol * s->bb;
    s->done = s->rr <= s->threshold ? 1 : 0;
}

/// This GPU's parts of ||b - q||^2 and ||b||^2 (q = A x), into out[0], out[1].
template <auto block_add>
__global__ void residual_kernel(int rows, const float* __restrict__ b, const float* __restrict__ q, double* out) {
    double rr = 0.0, bb = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x) {
        const double d = double(b[i]) - double(q[i]);
        rr += d * d;
        bb += double(b[i]) * b[i];
    }
    block_add(rr, out);
    block_add(bb, out + 1);
}

}  // namespace detail

/// One rank's share of lessons 4 and 5's solve, around the lesson's own pieces: its scalars
/// (Scalars: pq, then rr, rz_new and bb side by side, threshold, done, breakdown,
/// iterations), its halo buffers (Halo: the plan, send_rows, send), its block size and
/// block_add, its kernels and its communication. A lesson derives its variants from it:
/// start_solve(), spmv(), iteration(), run_batch() and run_compute_batch() are theirs to change.
template <class Scalars, class Halo, int kThreads, auto block_add, auto spmv_dot_kernel, auto update_kernel,
          auto direction_kernel, auto exchange_halo, auto sum_over_gpus>
struct CgRank : CgShare {
    DeviceBuffer<float> x, r, z, p, q, send;  // x and p with room for the halo (the SpMV reads p through it)
    DeviceBuffer<int> send_rows;
    DeviceBuffer<Scalars> scalars, scratch;
    DeviceBuffer<double> sums;
    Scalars* host = nullptr;  // pinned
    Halo halo{};
    int grid = 0;
    cudaEvent_t start, stop;

    explicit CgRank(const CgCall& c) : CgShare(c) {
        x = DeviceBuffer<float>(length_with_halo());
        p = DeviceBuffer<float>(length_with_halo());
        for (auto* v : {&r, &z, &q}) *v = DeviceBuffer<float>(size_t(std::max(rows, 1)));
        send_rows = DeviceBuffer<int>(plan.send_rows);
        send = DeviceBuffer<float>(plan.send_rows.size());
        scalars = DeviceBuffer<Scalars>(1);
        scratch = DeviceBuffer<Scalars>(1);
        sums = DeviceBuffer<double>(2);
        TUT_CUDA(cudaMallocHost(&host, sizeof(Scalars)));
        halo = {&plan, send_rows.get(), send.get()};
        grid = 4 * sm_count();
        TUT_CUDA(cudaEventCreate(&start));
        TUT_CUDA(cudaEventCreate(&stop));
    }
    virtual ~CgRank() {
        cudaFreeHost(host);
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
    CgRank(const CgRank&) = delete;
    CgRank& operator=(const CgRank&) = delete;

    /// Elements of a vector with room for the halo after the own rows.
    size_t length_with_halo() const { return size_t(std::max<long long>(plan.local_size(), 1)); }
    bool distributed(bool communicate) const { return communicate && call.ranks.parts > 1; }

    /// x = 0, r = b, z = D^-1 r, p = z; rr, rz and bb summed over the GPUs; the threshold.
    virtual void start_solve(bool communicate) {
        const cudaStream_t s = call.ranks.stream;
        TUT_CUDA(cudaMemsetAsync(x.get(), 0, x.bytes(), s));
        TUT_CUDA(cudaMemsetAsync(p.get(), 0, p.bytes(), s));
        TUT_CUDA(cudaMemsetAsync(scalars.get(), 0, sizeof(Scalars), s));
        if (rows == 0) return finish_start(communicate);
        TUT_CUDA(cudaMemcpyAsync(r.get(), b.get(), size_t(rows) * sizeof(float), cudaMemcpyDeviceToDevice, s));
        Scalars* sums = scalars.get();
        init_kernel<block_add><<<grid, kThreads, 0, s>>>(rows, r.get(), z.get(), dinv.get(), b.get(), &sums->rr,
                                                         &sums->rz_new, &sums->bb);
        TUT_LAUNCH("init_kernel");
        TUT_CUDA(cudaMemcpyAsync(p.get(), z.get(), size_t(rows) * sizeof(float), cudaMemcpyDeviceToDevice, s));
        finish_start(communicate);
    }
    void finish_start(bool communicate) {
        if (distributed(communicate)) sum_over_gpus(&scalars.get()->rr, 3, call.ranks);
        detail::finish_init_kernel<<<1, 1, 0, call.ranks.stream>>>(scalars.get(), call.tolerance);
        TUT_LAUNCH("finish_init_kernel");
    }

    /// The halo of p, then q = A p with p . q.
    virtual void spmv(bool communicate, bool stop_test) {
        if (distributed(communicate)) exchange_halo(halo, p.get(), call.ranks);
        spmv_dot_kernel<<<grid, kThreads, 0, call.ranks.stream>>>(rows, row_ptr.get(), col.get(), val.get(), p.get(),
                                                                 q.get(), scalars.get(), stop_test);
        TUT_LAUNCH("spmv_dot_kernel");
    }

    /// One iteration: the halo of p, q = A p with p.q, its sum; the update with r.r and r.z,
    /// their sums; the stopping test and the new direction.
    virtual void iteration(bool communicate, bool stop_test) {
        const cudaStream_t s = call.ranks.stream;
        spmv(communicate, stop_test);
        if (distributed(communicate)) sum_over_gpus(&scalars.get()->pq, 1, call.ranks);
        update_kernel<<<grid, kThreads, 0, s>>>(rows, x.get(), r.get(), z.get(), p.get(), q.get(), dinv.get(),
                                                scalars.get(), stop_test);
        TUT_LAUNCH("update_kernel");
        if (distributed(communicate)) sum_over_gpus(&scalars.get()->rr, 2, call.ranks);
        direction_kernel<<<grid, kThreads, 0, s>>>(rows, p.get(), z.get(), scalars.get(), stop_test);
        TUT_LAUNCH("direction_kernel");
    }

    /// `count` iterations with communication and the stopping test, between two looks at the
    /// scalars; the second argument names the solve, for progress lines.
    virtual void run_batch(int count, const std::string& /*who*/) {
        for (int i = 0; i < count; ++i) iteration(true, true);
    }
    /// `count` iterations with neither, for the compute-only solve: a variant that launches
    /// its batches its own way in run_batch() launches these the same way.
    virtual void run_compute_batch(int count, const std::string& /*who*/) {
        for (int i = 0; i < count; ++i) iteration(false, false);
    }

    /// A whole solve, iterations in batches of 8 between looks at the scalars; or, with
    /// call.compute_only, call.fixed_iterations iterations without communication, in the same
    /// batches with the same looks: what the two solves differ in is then the communication alone.
    SolveOutcome solve() {
        const cudaStream_t s = call.ranks.stream;
        SolveOutcome out;
        const bool communicate = !call.compute_only;
        TUT_CUDA(cudaEventRecord(start, s));
        start_solve(communicate);
        const int batch = 8, most = communicate ? call.max_iterations : call.fixed_iterations;
        const std::string who = call.variant + ", " + call.problem.label() + ", rank " + std::to_string(call.ranks.rank) +
                                " of " + std::to_string(call.ranks.parts);
        for (int launched = 0; launched < most; launched += batch) {
            const int count = communicate ? batch : std::min(batch, most - launched);
            if (communicate) run_batch(count, who);
            else run_compute_batch(count, who);
            TUT_CUDA(cudaMemcpyAsync(host, scalars.get(), sizeof(Scalars), cudaMemcpyDeviceToHost, s));
            progress_detail(who + ", iterations " + std::to_string(launched + 1) + " to " +
                            std::to_string(launched + count) + " on the GPU" + (communicate ? "" : ", compute only"));
            TUT_CUDA(cudaStreamSynchronize(s));
            if (!communicate) continue;  // a fixed count: agreeing on a stop is MPI communication
            bool done = host->done != 0;
            // Every rank must stop after the same batch: one that stopped alone would leave
            // the others waiting in their next collective. A disagreement throws on every rank.
            if (distributed(true)) done = agree_on_stop(*detail::current_world(), done, launched + batch, "CG, " + who);
            if (done) break;
        }
        TUT_CUDA(cudaEventRecord(stop, s));
        TUT_CUDA(cudaMemcpyAsync(host, scalars.get(), sizeof(Scalars), cudaMemcpyDeviceToHost, s));
        TUT_CUDA(cudaStreamSynchronize(s));
        float ms = 0;
        TUT_CUDA(cudaEventElapsedTime(&ms, start, stop));
        out.ms = ms;
        out.iterations = call.compute_only ? call.fixed_iterations : host->iterations;
        out.converged = host->done && !host->breakdown;
        out.residual = host->bb > 0 ? std::sqrt(std::max(0.0, host->rr) / host->bb) : 0.0;
        return out;
    }

    /// ||b - A x|| / ||b|| in double over the whole system (x's halo exchanged first).
    double true_residual() {
        const cudaStream_t s = call.ranks.stream;
        if (distributed(true)) exchange_halo(halo, x.get(), call.ranks);
        TUT_CUDA(cudaMemsetAsync(scratch.get(), 0, sizeof(Scalars), s));
        TUT_CUDA(cudaMemsetAsync(sums.get(), 0, 2 * sizeof(double), s));
        if (rows > 0) {
            spmv_dot_kernel<<<grid, kThreads, 0, s>>>(rows, row_ptr.get(), col.get(), val.get(), x.get(), q.get(),
                                                      scratch.get(), false);
            TUT_LAUNCH("spmv_dot_kernel");
            detail::residual_kernel<block_add><<<grid, kThreads, 0, s>>>(rows, b.get(), q.get(), sums.get());
            TUT_LAUNCH("residual_kernel");
        }
        if (distributed(true)) sum_over_gpus(sums.get(), 2, call.ranks);
        double h[2];
        TUT_CUDA(cudaMemcpyAsync(h, sums.get(), sizeof h, cudaMemcpyDeviceToHost, s));
        TUT_CUDA(cudaStreamSynchronize(s));
        return h[1] > 0 ? std::sqrt(h[0] / h[1]) : std::sqrt(h[0]);
    }

    /// The whole x, on every rank.
    std::vector<double> gather_x() const { return CgShare::gather_x(x.get()); }

    /// What time_per_iteration() changes; time() restores the call.
    void stop_after(int iterations) {
        call.compute_only = false;
        call.max_iterations = iterations;
    }
    void compute_only(int iterations) {
        call.compute_only = true;
        call.fixed_iterations = iterations;
    }

    /// A solve to convergence with its true residual, then the time per iteration; the call
    /// as it was after: one system serves every variant.
    CgTiming time(int repeats, const World* world) {
        const CgCall as_given = call;
        CgTiming t;
        t.full = solve();
        t.full.residual = true_residual();
        time_per_iteration(*this, t, repeats, world);
        call = as_given;
        return t;
    }
};

/// Rank 0's one-GPU baseline in lessons 4 and 5: `variant` on `grid`, this GPU alone, on a
/// one-rank communicator (Communicator::single(): the same code path as on several GPUs).
/// Its time per iteration.
template <class Rank, class Communicator>
double one_gpu_us_per_iter(CgCall c, const CgProblem& grid, const std::string& variant, int repeats) {
    Communicator alone = Communicator::single();
    c.ranks = {0, 1, alone.comm, c.ranks.stream};
    c.problem = grid;
    c.variant = variant;
    Rank one_gpu(c);
    return one_gpu.time(repeats, nullptr).us_per_iter();
}

// ---------------------------------------------------------------------------------------
// main()'s bench: measurements, the one-GPU yardstick, records and table
// ---------------------------------------------------------------------------------------

/// What a CG lesson is called and what it reports.
struct CgLesson {
    std::string name;                   ///< "04_cg": records, NVTX ranges, progress lines
    std::string program;                ///< "cg": the program, in --json's warnings
    std::vector<std::string> variants;  ///< in the table's order; a lesson of one names it in no line
    bool true_residual = true;          ///< lessons 4, 5: the residual reported is ||b - A x|| / ||b|| (and the
                                        ///< records name one_gpu_rows); lesson 6: the iteration's own
};

/// The CG lessons' bench, on every rank: the problems --problem chose, the calls that solve
/// them, each grid's measurement (made once per grid and variant: on one GPU the weak
/// problem is 128^3), the one-GPU yardstick (once per one-GPU grid), the records and the
/// table. `Timing`: what a lesson's measurement holds (a CgTiming, or more).
template <class Timing = CgTiming>
class CgBench {
  public:
    CgBench(const World& w, CgLesson lesson, const CgOptions& options, cudaStream_t stream)
        : w_(w), lesson_(std::move(lesson)), options_(options), stream_(stream), table_(columns()) {}

    std::vector<CgScalingProblem> problems() const {
        std::vector<CgScalingProblem> out;
        for (const CgScalingProblem& pb : cg_problems(w_.size, options_.small))
            if (chosen(options_.problems, pb.name)) out.push_back(pb);
        return out;
    }
    /// Whether --variant lets `variant` run.
    bool runs(const std::string& variant) const { return options_.run.variant.empty() || variant == options_.run.variant; }

    /// The call that solves `pb` with `variant` on every rank of the job.
    CgCall call(const CgScalingProblem& pb, const std::string& variant, void* nccl_comm) const {
        CgCall c;
        c.ranks = {w_.rank, w_.size, nccl_comm, stream_};
        c.problem = pb.grid;
        c.variant = variant;
        c.max_iterations = options_.max_iterations;
        return c;
    }

    /// `variant` on `pb`, measured by measure() at the first call for its grid and variant:
    /// prepare() readies the solver, then measure() runs inside an NVTX range named
    /// track/lesson/variant/problem.
    template <class Prepare, class Measure>
    Timing time(const CgScalingProblem& pb, const std::string& variant, Prepare&& prepare, Measure&& measure) {
        const bool named = lesson_.variants.size() > 1;
        const std::string key = pb.grid.label() + (named ? " / " + variant : "");
        progress(lesson_.name + ": " + pb.name + " (" + key + ") on " + std::to_string(w_.size) + " GPU(s)");
        if (!measured_.count(key)) {
            prepare();
            NvtxRange range(std::string(kTrack) + "/" + lesson_.name + "/" + (named ? variant + "/" : "") + pb.name);
            measured_[key] = measure();
        }
        return measured_[key];
    }
    template <class Measure>
    Timing time(const CgScalingProblem& pb, const std::string& variant, Measure&& measure) {
        return time(pb, variant, [] {}, std::forward<Measure>(measure));
    }

    /// Runs `verdict` (which returns what is wrong, "" for nothing) unless --no-check or
    /// --profile; what it finds is thrown, after `what`. Every rank comes to the same verdict
    /// (it judges sums over the GPUs), so every rank throws.
    template <class Verdict>
    void check(const std::string& what, Verdict&& verdict) const {
        if (!options_.run.check()) return;
        if (const std::string wrong = verdict(); !wrong.empty()) throw CudaError(what + ": " + wrong);
    }

    /// The record and the table row of `variant` on `pb`, per iteration, with the times of
    /// the slowest rank. On one GPU a measurement that is the lesson's yardstick is its own
    /// one-GPU time; otherwise measure_one_gpu() gives it, on rank 0 alone while the others
    /// wait, once per one-GPU grid.
    template <class MeasureOneGpu>
    void record(const CgScalingProblem& pb, const std::string& variant, const CgTiming& t, bool yardstick,
                MeasureOneGpu&& measure_one_gpu) {
        const double ms = max_over_ranks(w_, t.ms);
        const double compute = max_over_ranks(w_, t.compute_ms);
        const int it = t.timed_iterations;  // timed; t.full.iterations to converge
        // Per iteration: iteration counts differ a little with the order of the sums.
        const double us = 1e3 * ms / it;
        double us1 = 0;
        if (w_.size == 1 && yardstick) {
            us1 = us;
        } else if (one_gpu_us_.count(pb.one_gpu.label())) {
            us1 = one_gpu_us_[pb.one_gpu.label()];
        } else {
            const std::string what = lesson_.name + ": the one-GPU baseline, " + pb.one_gpu.label();
            progress(what + (w_.rank == 0 ? "" : " (rank 0 alone; this rank waits for its result)"));
            if (w_.rank == 0) {
                RankLocal alone_section(what);  // no collective may start in here
                us1 = measure_one_gpu();
            }
            TUT_MPI(MPI_Bcast(&us1, 1, MPI_DOUBLE, 0, w_.comm));
        }
        one_gpu_us_[pb.one_gpu.label()] = us1;
        const double bytes = cg_floor_bytes(pb.grid) * it;
        Record r = make_record(lesson_.name, variant, pb.name, w_.size);
        r.value = bytes / (ms * 1e-3) * 1e-9;
        r.unit = "GB/s";
        r.time_ms = ms;
        // The grid's bytes in the time per iteration that perfect scaling would give (weak:
        // the one-GPU time; strong: a w-th of it), so that % of library is the efficiency.
        const double ideal_us = pb.scaling == Scaling::weak ? us1 : us1 / w_.size;
        r.library = fmt("the same lesson on 1 GPU, x %d", w_.size);
        r.library_value = cg_floor_bytes(pb.grid) / (ideal_us * 1e-6) * 1e-9;
        r.peak = fmt("DRAM peak x %d", w_.size);
        r.peak_value = device_facts(w_.device).dram_peak_gbs * w_.size;
        r.checked = options_.run.check();  // bench.check() judges the solve only then
        r.extra.add("problem", pb.grid.label());
        r.extra.add("rows", pb.grid.rows());
        if (lesson_.true_residual) r.extra.add("one_gpu_rows", double(pb.one_gpu.rows()));
        r.extra.add("iterations", t.full.iterations);
        r.extra.add("timed_iterations", it);
        r.extra.add("converged", t.full.converged);
        r.extra.add(lesson_.true_residual ? "true_residual" : "residual", t.full.residual);
        r.extra.add("us_per_iter", us);
        r.extra.add("compute_us_per_iter", 1e3 * compute / it);
        r.extra.add("comm_us_per_iter", us - 1e3 * compute / it);
        r.extra.add("one_gpu_us_per_iter", us1);
        add_scaling(r, pb.scaling, us1 * 1e-3, us * 1e-3, w_.size);  // per iteration
        if (!w_.root()) return;
        append_record(lesson_.program.c_str(), options_.run.json, r);
        std::vector<std::string> row{pb.name + " (" + pb.grid.label() + ")"};
        if (lesson_.variants.size() > 1) row.push_back(variant);
        row.insert(row.end(), {std::to_string(t.full.iterations), fmt("%.1f", ms), fmt("%.0f", us),
                               fmt("%.0f", 1e3 * compute / it), fmt("%.0f", us - 1e3 * compute / it),
                               fmt("%.1e", t.full.residual), fmt("%.0f", us1),
                               fmt("%.2fx", speedup(pb.scaling, us1, us, w_.size)), percent(r.ratio_to_library())});
        table_.add_row(row);
    }

    /// Rank 0 prints a blank line, `caption` and the table.
    void print(const std::string& caption) const {
        if (!w_.root()) return;
        std::printf("\n%s\n", caption.c_str());
        table_.print();
    }

  private:
    std::vector<std::string> columns() const {
        std::vector<std::string> c{"problem"};
        if (lesson_.variants.size() > 1) c.push_back("variant");
        for (const char* name : {"iterations", "ms", "us/iter", "compute", "comm"}) c.push_back(name);
        c.push_back(lesson_.true_residual ? "true residual" : "residual");
        for (const char* name : {"1 GPU us/iter", "speedup", "efficiency"}) c.push_back(name);
        return c;
    }

    const World& w_;
    CgLesson lesson_;
    const CgOptions& options_;
    cudaStream_t stream_;
    Table table_;
    std::map<std::string, Timing> measured_;    // per grid (and variant)
    std::map<std::string, double> one_gpu_us_;  // per one-GPU grid
};

}  // namespace tut::mg

#endif  // __CUDACC__
