/// @file cg.hpp
/// @brief The CG track's problem description: the solver interface, the cuSPARSE SpMV
/// wrapper, the check of a solve, and the problem a lesson measures (tut::cg::Problem).
///
/// The host-side pieces (CSR type, generators, Matrix Market reader, double-precision
/// reference, bandwidth floor) are in cg_matrix.hpp, included here.
///
/// A lesson's variant (tut::cg::Variant) is a name and a function that, given the matrix
/// (host and device copies) and the solve's options, builds a Solver. Building does all
/// set-up (handles, buffers, the Jacobi diagonal, graphs) and throws tut::Unsupported,
/// before launching anything, for a matrix the lesson cannot solve. Solver::solve(b, x)
/// then solves A x = b from x = 0 and returns how it ended; it is what a lesson times.
/// Each lesson's main() shows its own check-then-time loop over the problems and variants.
///
/// The problems (see cg_matrix.hpp for the generator):
/// - default: diffusion27 on 10 x 10 x 400, 40 000 rows, 939 232 nonzeros;
/// - large:   diffusion27 on 128 x 128 x 128, 2 097 152 rows, 55 742 968 nonzeros;
/// - --matrix FILE: any symmetric Matrix Market file (e.g. SuiteSparse bcsstk36, or the
///   100-row common/checks/cg/data/spd100.mtx that the checks and sanitizer runs use).
/// The right-hand side is b = A x* with x* uniform in [0, 1) (see make_rhs()).
#pragma once

#include "bench.hpp"
#include "buffer.hpp"
#include "cg_matrix.hpp"
#include "check.hpp"
#include "check_cusparse.hpp"
#include "cli.hpp"
#include "device_facts.hpp"
#include "gpu.hpp"
#include "lesson.hpp"
#include "nvtx.hpp"
#include "report.hpp"
#include "shared_times.hpp"
#include "timer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tut::cg {

/// The right-hand side for A: b = A x*, x* uniform in [0, 1) from `seed`, rounded to float.
///
/// Why not b = 1 (the obvious choice)? On the
/// default bar, fixed at one end, b = 1 makes the solution grow like z^2 along the bar,
/// so ||A|| ||x|| / ||b|| is huge and float cannot represent b - A x to better than
/// about 0.1 relative: measured on the CPU in float, CG then stops (on its recursive
/// residual) after 1492 iterations with a true residual of 0.13. With b = A x*, float CG
/// behaves like double CG (781 vs 798 iterations, Jacobi PCG 454 vs 454) and reaches a
/// true residual of about 1.2e-6 at tol = 1e-6.
inline std::vector<float> make_rhs(const Csr& A, uint64_t seed) {
    std::vector<float> xs = random_vector<float>(size_t(A.cols), seed ^ 0x5eedb0bull, 0.0, 1.0);
    std::vector<double> ax(size_t(A.rows));
    spmv_cpu(A, xs.data(), ax.data());
    return std::vector<float>(ax.begin(), ax.end());
}

/// The matrix of a problem (see the file comment): "default", "large", or a Matrix Market file.
inline Csr load_matrix(const std::string& name) {
    if (name == "default") return default_matrix();
    if (name == "large") return large_matrix();
    return read_matrix_market_file(name);
}

/// The most rows, and the most nonzeros, the track's solvers take: 2^30, about 500 times
/// the large problem (2 097 152 rows, 55 742 968 nonzeros). The kernels index with int,
/// and an index must stay below INT_MAX after its last step: a grid-stride loop's
/// i += gridDim.x * blockDim.x (every grid is either capped at a few blocks per SM or just
/// covers the n rows, so its stride is at most n rounded up to a block, and i + stride <
/// 2^31), or a row's k + 32 past its last nonzero in an SpMV.
inline constexpr int kMaxRows = 1 << 30;
inline constexpr long long kMaxNonzeros = 1ll << 30;

/// Throws Unsupported unless A is square, non-empty, well formed and within kMaxRows and
/// kMaxNonzeros.
inline void require_solvable(const Csr& A) {
    if (A.rows < 1 || A.rows != A.cols)
        throw Unsupported("CG needs a square, non-empty matrix; got " + std::to_string(A.rows) + " x " +
                          std::to_string(A.cols));
    if (A.rows > kMaxRows)
        throw Unsupported("the matrix has " + std::to_string(A.rows) +
                          " rows; the solvers' 32-bit indices take at most " + std::to_string(kMaxRows));
    if (A.nnz() > kMaxNonzeros)
        throw Unsupported("the matrix has " + std::to_string(A.nnz()) +
                          " nonzeros; the solvers' 32-bit indices take at most " + std::to_string(kMaxNonzeros));
    if (int(A.row_ptr.size()) != A.rows + 1) throw Unsupported("malformed CSR: row_ptr must have rows + 1 entries");
}

/// 1 / a_ii for every row: the Jacobi preconditioner. Throws Unsupported naming the first
/// row whose diagonal is zero, missing or negative (Jacobi divides by it; and a symmetric
/// positive definite matrix has a positive diagonal, so such a matrix cannot be SPD).
inline std::vector<float> inverse_diagonal(const Csr& A) {
    require_solvable(A);
    float d = 0.0f;
    const int bad = first_nonpositive_diagonal(A, &d);
    if (bad >= 0)
        throw Unsupported("row " + std::to_string(bad) + " has " +
                          (d == 0.0f ? std::string("a zero (or missing) diagonal entry")
                                     : "a negative diagonal entry (" + std::to_string(d) + ")") +
                          ": the Jacobi preconditioner needs a positive diagonal");
    std::vector<float> dinv(size_t(A.rows));
    for (int i = 0; i < A.rows; ++i)
        for (int k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
            if (A.col_idx[k] == i) dinv[i] = 1.0f / A.values[k];
    return dinv;
}

/// Device pointers of a CSR matrix (not owning).
struct DeviceCsr {
    int n = 0;
    int nnz = 0;
    const int* row_ptr = nullptr;
    const int* col_idx = nullptr;
    const float* values = nullptr;
};

/// A CSR matrix in device memory.
class DeviceMatrix {
  public:
    explicit DeviceMatrix(const Csr& A)
        : n_(A.rows), nnz_(static_cast<int>(A.nnz())), row_ptr_(A.row_ptr), col_idx_(A.col_idx), values_(A.values) {}
    DeviceCsr view() const { return {n_, nnz_, row_ptr_.get(), col_idx_.get(), values_.get()}; }
    int n() const { return n_; }
    int nnz() const { return nnz_; }

  private:
    int n_, nnz_;
    DeviceBuffer<int> row_ptr_, col_idx_;
    DeviceBuffer<float> values_;
};

struct SolveOptions {
    double tolerance = 1e-6;   ///< stop when ||r|| <= tolerance ||b||
    int max_iterations = 10000;
    int check_every = 20;      ///< lessons that look at the residual only every k iterations
};

/// How a solve ended. `iterations` counts loop bodies run (SpMVs), including the ones a
/// lesson that checks only every k iterations runs past convergence; `converged_at` is
/// the iteration at which the residual first met the tolerance (-1 if it never did).
struct SolveResult {
    Outcome outcome = Outcome::max_iterations;
    int iterations = 0;
    int converged_at = -1;
    double residual = NAN;  ///< final ||r|| / ||b|| as the iteration carries it (not the true residual)
};

/// A solve's result from how it ended, its loop bodies, the iteration at which it
/// converged (-1 if it did not), and the last ||r||^2 and ||b||^2 it computed.
inline SolveResult solve_result(Outcome outcome, int iterations, int converged_at, double rr, double bb) {
    SolveResult res;
    res.outcome = outcome;
    res.iterations = iterations;
    res.converged_at = converged_at;
    res.residual = bb > 0 ? std::sqrt(rr / bb) : 0.0;
    return res;
}

/// Where a solve stands, as the solvers that keep their scalars on the device (lessons 3-9)
/// record it there.
enum Status : int { kRunning = 0, kConverged = 1, kNotPositiveDefinite = 2 };

/// How a solve ended, from the status its device-side scalars hold at the end.
inline Outcome outcome_of(int status) {
    if (status == kConverged) return Outcome::converged;
    if (status == kNotPositiveDefinite) return Outcome::not_positive_definite;
    return Outcome::max_iterations;
}

/// One lesson's solver, set up for one matrix. See the file comment.
class Solver {
  public:
    virtual ~Solver() = default;
    /// Solves A x = b from x = 0; b and x are device arrays of n floats. Returns after the
    /// GPU has finished (the result is known on the host).
    virtual SolveResult solve(const float* b, float* x) = 0;
    /// Enqueues one product with this solver's own SpMV on its own work vectors (after a
    /// solve they hold non-zero data), for the "SpMV GB/s" column, and returns true. Not
    /// synchronized. A solver whose SpMV lives inside a larger kernel (lesson 08) has none
    /// to time alone: it keeps this default, which enqueues nothing and returns false.
    virtual bool spmv_once() { return false; }
};

/// Builds a solver for A (host copy, for checks such as the diagonal; device copy, to use);
/// throws tut::Unsupported, before launching anything, for a matrix it cannot solve.
using Make = std::unique_ptr<Solver>(const Csr& A, const DeviceMatrix& dA, const SolveOptions& opt);

/// One way of solving that a lesson checks and times (see tut::Variant):
///
///     tut::cg::Variant{"fused", make_fused}
using Variant = tut::Variant<Make>;

/// What a lesson's solvers compute: plain CG (lesson 01, as NVIDIA's sample) or Jacobi PCG
/// (lessons 02 on). The bandwidth floor counts one more vector for z = D^-1 r.
enum class Preconditioner { none, jacobi };

}  // namespace tut::cg

namespace lesson {
/// Defined by each CG lesson (lessons/cg/*/ and solutions/cg/*/); the checks call it.
std::vector<tut::cg::Variant> variants();
}  // namespace lesson

namespace tut::cg {

/// y = A x with cuSPARSE's generic SpMV API (cusparseSpMV), the only CSR SpMV left since
/// the legacy cusparseScsrmv was removed in CUDA 11. Descriptors are created once for a
/// fixed x and y. The handle's pointer mode (host or device) is the caller's choice; alpha
/// and beta follow it. Set TUT_CG_SPMV_ALG=1 or 2 to pick CUSPARSE_SPMV_CSR_ALG1 or ALG2
/// instead of the default algorithm (for experiments; results are the same up to rounding).
class CusparseSpmv {
  public:
    CusparseSpmv(cusparseHandle_t handle, const DeviceCsr& A, const float* x, float* y) : handle_(handle) {
        TUT_CUSPARSE(cusparseCreateConstCsr(&mat_, A.n, A.n, A.nnz, A.row_ptr, A.col_idx, A.values, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
        TUT_CUSPARSE(cusparseCreateConstDnVec(&x_, A.n, x, CUDA_R_32F));
        TUT_CUSPARSE(cusparseCreateDnVec(&y_, A.n, y, CUDA_R_32F));
        if (const char* a = std::getenv("TUT_CG_SPMV_ALG")) {
            if (std::string(a) == "1") alg_ = CUSPARSE_SPMV_CSR_ALG1;
            if (std::string(a) == "2") alg_ = CUSPARSE_SPMV_CSR_ALG2;
        }
        // The buffer size query needs alpha and beta in the handle's pointer mode.
        cusparsePointerMode_t mode;
        TUT_CUSPARSE(cusparseGetPointerMode(handle_, &mode));
        const float one = 1.0f, zero = 0.0f;
        DeviceBuffer<float> d_consts(std::vector<float>{1.0f, 0.0f});
        const float* a_ptr = mode == CUSPARSE_POINTER_MODE_HOST ? &one : d_consts.get();
        const float* b_ptr = mode == CUSPARSE_POINTER_MODE_HOST ? &zero : d_consts.get() + 1;
        size_t bytes = 0;
        TUT_CUSPARSE(cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, a_ptr, mat_, x_, b_ptr, y_,
                                             CUDA_R_32F, alg_, &bytes));
        buffer_ = DeviceBuffer<char>(bytes);
    }
    ~CusparseSpmv() {
        cusparseDestroySpMat(mat_);
        cusparseDestroyDnVec(x_);
        cusparseDestroyDnVec(y_);
    }
    CusparseSpmv(const CusparseSpmv&) = delete;
    CusparseSpmv& operator=(const CusparseSpmv&) = delete;

    /// y = alpha A x + beta y (alpha, beta: host or device pointers, per the handle's pointer mode).
    void run(const float* alpha, const float* beta) {
        TUT_CUSPARSE(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, mat_, x_, beta, y_, CUDA_R_32F,
                                  alg_, buffer_.get()));
    }

  private:
    cusparseHandle_t handle_;
    cusparseConstSpMatDescr_t mat_ = nullptr;
    cusparseConstDnVecDescr_t x_ = nullptr;
    cusparseDnVecDescr_t y_ = nullptr;
    cusparseSpMVAlg_t alg_ = CUSPARSE_SPMV_ALG_DEFAULT;
    DeviceBuffer<char> buffer_;
};

// ---------------------------------------------------------------------------------------
// Checking a solve
// ---------------------------------------------------------------------------------------

/// What the driver and the checks hold a solve to.
struct SolveCheck {
    bool converged = false;
    double true_residual = NAN;   ///< ||b - A x|| / ||b|| on the CPU in double
    double allowed = NAN;         ///< the true residual the check accepts
    double float_limit = NAN;     ///< u ||(|A| |x| + |b|)|| / ||b||: float cannot do much better
    bool ok = false;
    std::string verdict;          ///< "ok (1.2e-06)", "FAILED: ..."
};

/// The true residual must be within 2 tol. The iteration stops on the residual it
/// carries (<= tol); rounding makes that drift from b - A x by a few units of
/// u ||(|A||x| + |b|)|| / ||b|| (Greenbaum, SIAM J. Matrix Anal. Appl. 18(3), 1997), which
/// for the track's problems is ~1e-7: measured 1.2e-6 at tol 1e-6 on both. When that
/// float limit itself exceeds tol (an ill-conditioned Matrix Market matrix), no float
/// solver can meet it: a true residual within 100x the limit is then reported as "float
/// limit" instead of failing.
inline SolveCheck check_solution(const Csr& A, const std::vector<float>& b, const std::vector<float>& x,
                                 const SolveResult& r, double tol) {
    SolveCheck c;
    c.converged = r.outcome == Outcome::converged;
    c.true_residual = true_relative_residual(A, b, x);
    double scale2 = 0.0, bb = 0.0;
    for (int i = 0; i < A.rows; ++i) {
        double s = std::fabs(double(b[i]));
        for (int k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) s += std::fabs(double(A.values[k]) * x[A.col_idx[k]]);
        scale2 += s * s;
        bb += double(b[i]) * b[i];
    }
    c.float_limit = std::ldexp(1.0, -24) * std::sqrt(scale2 / (bb > 0 ? bb : 1.0));
    c.allowed = 2.0 * tol;
    c.ok = c.converged && c.true_residual <= c.allowed;
    char buf[200];
    if (!c.converged)
        std::snprintf(buf, sizeof buf, "FAILED: %s", outcome_name(r.outcome));
    else if (c.ok)
        std::snprintf(buf, sizeof buf, "ok (%.1e)", c.true_residual);
    else if (10.0 * c.float_limit > tol && c.true_residual <= 100.0 * c.float_limit) {
        std::snprintf(buf, sizeof buf, "float limit (%.1e; float cannot beat ~%.0e here)", c.true_residual,
                      10.0 * c.float_limit);
        c.ok = true;
    } else
        std::snprintf(buf, sizeof buf, "FAILED: true residual %.2e > %.1e", c.true_residual, c.allowed);
    c.verdict = buf;
    return c;
}


// ==== Lesson harness: options, problem, results ====

/// A problem's name in the --share file: matrix, tolerance and right-hand-side seed.
inline std::string problem_key(const Csr& A, double tol, long long seed) {
    return A.label + fmt(" tol=%g seed=%lld", tol, seed);
}

inline std::string size_text(const Csr& A) {
    return A.label + " (" + std::to_string(A.rows) + " rows, " + std::to_string(A.nnz()) + " nnz)";
}

/// The options the lessons share with the Eigen baseline (common/checks/cg/eigen_baseline.cpp).
struct ProblemOptions {
    std::string problem = "default";  ///< default | large | both
    std::string matrix;               ///< a Matrix Market file instead
    double tolerance = 1e-6;
    int max_iterations = 10000;
    std::string share;
};

inline void add_problem_options(Cli& cli, ProblemOptions& p) {
    cli.add_string("problem", &p.problem,
                   "default: 10x10x400 diffusion (40 000 rows); large: 128^3 (2.1 M rows); both", {"default", "large", "both"});
    cli.add_string("matrix", &p.matrix, "solve this symmetric Matrix Market file instead (e.g. bcsstk36.mtx)");
    cli.add_real("tol", &p.tolerance, "stop when ||r|| <= tol ||b||", 1e-12, 0.5);
    cli.add_int("max-iter", &p.max_iterations, "iteration limit", 1, 1000000);
    cli.add_string("share", &p.share, "file shared with the other CG programs of a tour run (Eigen's and lesson 1's times)");
}

inline std::vector<std::string> problem_names(const ProblemOptions& p) {
    if (!p.matrix.empty()) return {p.matrix};
    if (p.problem == "both") return {"default", "large"};
    return {p.problem};
}

/// A CG lesson's command line; a lesson adds its own to `cli` (03-07: --check-every). A bad --matrix exits 2.
struct Options : ProblemOptions {
    Options(const LessonInfo& lesson, Preconditioner preconditioner)
        : cli(lesson.lesson,
              std::string(lesson.title) + "\nSolves A x = b with conjugate gradients in float on the GPU."),
          lesson(lesson), preconditioner(preconditioner) {
        add_problem_options(cli, *this);
    }
    void parse(int argc, char** argv, const std::vector<std::string>& variant_names) {
        parse_lesson_options(cli, run, argc, argv, lesson, variant_names, [&] {
            if (!matrix.empty()) require_solvable(file_matrix = read_matrix_market_file(matrix));
        });
    }
    Cli cli;
    LessonInfo lesson;
    RunOptions run;
    Preconditioner preconditioner;
    int check_every = 20;
    Csr file_matrix;  ///< --matrix's matrix, read by parse()
};

/// The device-to-device copy bandwidth that the bandwidth floor divides by, once per run.
inline double measure_floor_bandwidth() {
    const double gbs = measure_d2d_bandwidth_gbs();
    std::printf("Measured device-to-device copy bandwidth: %.0f GB/s (the bandwidth floor divides by this)\n", gbs);
    return gbs;
}

inline Table table() {
    return Table({"variant", "problem", "iters", "total ms", "us/iter", "SpMV GB/s", "% floor", "x L1/iter", "x Eigen",
                  "true resid", "check"});
}

inline void print(const Table& table) {
    std::printf("\n");
    table.print();
    std::printf("iters: loop bodies run (SpMVs). %% floor: bandwidth floor per iteration / measured time per "
                "iteration. x L1/iter: lesson 1's us/iter over this one's. x Eigen: time to solution.\n");
}

/// One CG problem as a lesson measures it: A, b = A x*, x, the floor, and Eigen's and lesson 01's times (--share).
class Problem {
  public:
    /// `name`: one of problem_names(options); the --matrix file's matrix is the one options.parse() read.
    Problem(Bench& bench, Options& options, const std::string& name, double d2d_gbs)
        : bench_(bench), A_(fits(name == options.matrix ? std::move(options.file_matrix) : load_matrix(name))),
          b_(make_rhs(A_, static_cast<uint64_t>(bench.run().seed))), share_(options.share),
          key_(problem_key(A_, options.tolerance, bench.run().seed)), dA_(A_), db_(b_), dx_(size_t(A_.rows)),
          eigen_(read_shared_time(share_, "eigen", key_)), lesson1_(read_shared_time(share_, "01_sample", key_)),
          opt_{options.tolerance, options.max_iterations, options.check_every}, d2d_gbs_(d2d_gbs) {
        const bool jacobi = options.preconditioner == Preconditioner::jacobi;
        const double bytes = floor_bytes_per_iteration(A_.rows, A_.nnz(), jacobi);
        floor_us_ = bytes / d2d_gbs_ * 1e-3;
        std::printf("\n%s/%s: %s\nProblem: %s, b = A x* (x* uniform in [0,1)), tol %.0e, float\n"
                    "Bandwidth floor (%s): %.2f MB per iteration / %.0f GB/s = %.2f us per iteration\n",
                    bench.lesson().track, bench.lesson().lesson, bench.lesson().title, size_text(A_).c_str(),
                    opt_.tolerance, jacobi ? "Jacobi PCG" : "CG", bytes / 1e6, d2d_gbs_, floor_us_);
        if (std::isfinite(eigen_.ms))
            std::printf("Eigen (same host, from --share): %.2f ms, %.0f iterations\n", eigen_.ms, eigen_.iterations);
    }
    /// v's solver for this matrix (`v.run` does all the set-up, untimed); starts v's row.
    std::unique_ptr<Solver> solver(const Variant& v) {
        first_residual_ = NAN;
        return v.run(A_, dA_, opt_);
    }
    /// Solves once into a poisoned x, held to check_solution(): ||b - A x|| / ||b|| (CPU, double) within 2 tol.
    Verdict check(Solver& solver) {
        dx_.poison();
        last_ = solver.solve(db_.get(), dx_.get());
        const SolveCheck c = check_solution(A_, b_, dx_.download(), last_, opt_.tolerance);
        first_residual_ = c.true_residual;
        if (c.ok) return passed(c.verdict);
        return failed(A_.label + ": " + c.verdict + fmt(" (solver residual %.2e, %d iterations)", last_.residual,
                                                        last_.iterations), c.verdict);
    }
    /// By the wall clock (launches and waits count); 1 warm-up and 5 repeats at most above 10 M nonzeros. Unless
    /// --no-check, x is poisoned before the last repeat.
    Timing time(const std::string& name, Solver& solver) {
        const RunOptions& run = bench_.run();
        const bool large = A_.nnz() > 10'000'000;
        const int repeats = std::max(1, large ? std::min(run.repeats, 5) : run.repeats);
        auto poison_last = [&](int repeat) {
            if (!run.check() || repeat != repeats - 1) return;
            dx_.poison();
            TUT_CUDA(cudaDeviceSynchronize());  // finished before the solve starts
        };
        return bench_.time_host(name, [&] { last_ = solver.solve(db_.get(), dx_.get()); },
                                HostTiming{large ? std::min(run.warmup, 1) : run.warmup, repeats, poison_last});
    }
    /// The last timed solve, held to the same rule: a solver that leaves state behind fails here.
    Verdict check_last() const {
        const SolveCheck c = check_solution(A_, b_, dx_.download(), last_, opt_.tolerance);
        if (c.ok) return passed(c.verdict);
        return failed(A_.label + ": the last timed solve: " + c.verdict + fmt(" (%d iterations)", last_.iterations),
                      "FAILED on repeat: " + c.verdict);
    }
    /// The solver's SpMV alone in GB/s (CUDA events, 20 repeats); NaN under --profile or without one (lesson 08).
    double spmv_gbs(const std::string& name, Solver& solver) {
        if (bench_.run().profile || !solver.spmv_once()) return NAN;
        NvtxRange range(std::string(bench_.lesson().track) + "/" + bench_.lesson().lesson + "/" + name + "/spmv");
        const Timing t = time_gpu([&] { solver.spmv_once(); }, TimingOptions{3, 20, false});
        return spmv_bytes(A_.rows, A_.nnz()) / (t.median_ms * 1e-3) / 1e9;
    }
    /// Solves/s beside Eigen's and the floor's; leaves the time in --share (lesson 01's as "01_sample").
    Result result(const Variant& v, const Timing& timing, double spmv_gbs, const Verdict& first, const Verdict& last) {
        const int iters = last_.iterations;
        const double ms = timing.median_ms, us_per_iter = ms * 1e3 / std::max(1, iters);
        const std::string lesson = bench_.lesson().lesson, cell = last.failed() ? last.cell : first.cell;
        const bool is_l1 = lesson == "01_sample";
        const double per_iter_vs_l1 = is_l1 ? 1.0 : lesson1_.ms * 1e3 / lesson1_.iterations / us_per_iter;
        Record r;
        r.variant = v.name;
        r.size = size_text(A_);
        r.value = 1000.0 / ms;
        r.unit = "solves/s";
        r.time_ms = ms;
        r.library = "Eigen ConjugateGradient + DiagonalPreconditioner, OpenMP, all host cores";
        r.library_value = std::isfinite(eigen_.ms) ? 1000.0 / eigen_.ms : NAN;
        r.peak = "bandwidth floor: compulsory bytes per iteration x iterations / measured D2D bandwidth";
        r.peak_value = 1e6 / (floor_us_ * std::max(1, iters));
        r.checked = first.passed() && last.passed();
        r.extra.add("iterations", iters).add("converged_at", last_.converged_at);
        r.extra.add("outcome", outcome_name(last_.outcome)).add("total_ms", ms).add("us_per_iter", us_per_iter);
        r.extra.add("spmv_gbs", spmv_gbs);
        r.extra.add("floor_us_per_iter", floor_us_).add("fraction_of_floor_per_iter", floor_us_ / us_per_iter);
        r.extra.add("true_relative_residual", first_residual_).add("solver_residual", last_.residual);
        r.extra.add("speedup_over_lesson1", is_l1 ? 1.0 : lesson1_.ms / ms);
        r.extra.add("per_iter_speedup_over_lesson1", per_iter_vs_l1).add("speedup_over_eigen", r.ratio_to_library());
        r.extra.add("eigen_ms", eigen_.ms).add("d2d_gbs", d2d_gbs_).add("check", cell);
        append_shared_time(share_, is_l1 ? "01_sample" : lesson + "/" + v.name, key_, ms, iters);
        auto shown = [](double x, const char* format) { return std::isfinite(x) ? fmt(format, x) : std::string("-"); };
        return {r, {v.name, A_.label, std::to_string(iters), fmt("%.3f", ms), fmt("%.2f", us_per_iter),
                    shown(spmv_gbs, "%.0f"), percent(floor_us_ / us_per_iter), shown(per_iter_vs_l1, "%.2fx"),
                    shown(r.ratio_to_library(), "%.1fx"), shown(first_residual_, "%.1e"), cell}};
    }

  private:
    static Csr fits(Csr A) {  // a matrix whose solve fits in device memory, or a clear refusal
        if (auto why = device_memory_shortfall(size_t(A.nnz()) * 8 + size_t(A.rows) * 4 * 12); !why.empty())
            throw Unsupported(A.label + " " + why);
        return A;
    }

    Bench& bench_;
    Csr A_;
    std::vector<float> b_;
    std::string share_, key_;
    DeviceMatrix dA_;
    DeviceBuffer<float> db_, dx_;
    SharedTime eigen_, lesson1_;
    SolveOptions opt_;
    double d2d_gbs_, floor_us_ = NAN, first_residual_ = NAN;  // first_residual_: the true residual check() found
    SolveResult last_;  // the latest solve's (the last timed one, after time())
};

}  // namespace tut::cg
