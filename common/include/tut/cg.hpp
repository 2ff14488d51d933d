/// @file cg.hpp
/// @brief The CG track's shared plumbing: the problems, the solver interface, the
/// cuSPARSE SpMV wrapper, and the driver every CG lesson's main() calls.
///
/// The host-side pieces (CSR type, generators, Matrix Market reader, double-precision
/// reference, bandwidth floor) are in cg_matrix.hpp, included here.
///
/// A lesson exposes one or more tut::cg::Variant: a name and a factory that, given the
/// matrix (host and device copies) and the options, builds a Solver. Building does all
/// set-up (handles, buffers, the Jacobi diagonal, graphs) and throws tut::Unsupported,
/// before launching anything, for a matrix the lesson cannot solve. Solver::solve(b, x)
/// then solves A x = b from x = 0 and returns how it ended; it is what the driver times.
///
/// The problems (see cg_matrix.hpp for the generator):
/// - default: diffusion27 on 10 x 10 x 400, 40 000 rows, 939 232 nonzeros;
/// - large:   diffusion27 on 128 x 128 x 128, 2 097 152 rows, 55 742 968 nonzeros;
/// - --matrix FILE: any symmetric Matrix Market file (e.g. SuiteSparse bcsstk36, or the
///   100-row common/checks/cg/data/spd100.mtx that the checks and sanitizer runs use).
/// The right-hand side is b = A x* with x* uniform in [0, 1) (see make_rhs()).
#pragma once

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

#include <chrono>
#include <climits>
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

/// Builds a solver for A (host copy, for checks such as the diagonal; device copy, to use).
using Factory = std::function<std::unique_ptr<Solver>(const Csr&, const DeviceMatrix&, const SolveOptions&)>;

/// One variant of a lesson. Lessons set the fields by name:
///
///     tut::cg::Variant v;
///     v.name = "fused";
///     v.make = make_fused;          // builds the solver for a matrix
///     v.uses_check_every = true;    // looks at the residual only every --check-every iterations
struct Variant {
    std::string name;               ///< short, lowercase: the table's row and --variant's value
    Factory make;
    bool preconditioned = true;     ///< Jacobi PCG (lessons 2..9) or plain CG (lesson 1)
    bool uses_check_every = false;  ///< the residual is looked at every k iterations (lessons 3-6)
};

/// What a lesson may add to the driver; both are optional.
struct LessonExtras {
    /// Adds the lesson's own options to the command line. Their values live in the
    /// lesson's main(), which hands them (by reference) to this and to its variants'
    /// factories; the driver parses them before it builds any solver.
    std::function<void(Cli&)> add_options;
    /// Runs once after the GPU check, before any problem is built: exits with
    /// kSkipExitCode and a message when this GPU or driver lacks what the lesson needs, or
    /// prints a note about what the lesson will leave out on it.
    std::function<void(const char* program)> check_device;
};

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

// ---------------------------------------------------------------------------------------
// The results other runs left: Eigen's time and lesson 1's, for the speedup columns
// ---------------------------------------------------------------------------------------

/// The tour passes the same `--share FILE` to every CG program (tut/shared_times.hpp):
/// 00_launch_queue starts the file, 00_eigen_baseline adds Eigen's time, each lesson adds
/// its own, and later lessons read Eigen's and lesson 1's from it.
using tut::append_shared_time;
using tut::read_shared_time;
using tut::SharedTime;

/// Identifies a problem across programs: matrix, tolerance and right-hand-side seed.
inline std::string problem_key(const Csr& A, double tol, long long seed) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " tol=%g seed=%lld", tol, seed);
    return A.label + buf;
}

inline std::string size_text(const Csr& A) {
    return A.label + " (" + std::to_string(A.rows) + " rows, " + std::to_string(A.nnz()) + " nnz)";
}

// ---------------------------------------------------------------------------------------
// Options shared by the lessons and the Eigen baseline
// ---------------------------------------------------------------------------------------

struct ProblemOptions {
    std::string problem = "default";  ///< default | large | both
    std::string matrix;               ///< a Matrix Market file instead
    double tolerance = 1e-6;
    int max_iterations = 10000;
    int check_every = 20;
    std::string share;
};

inline void add_problem_options(Cli& cli, ProblemOptions& p, bool with_check_every) {
    cli.add_string("problem", &p.problem,
                   "default: 10x10x400 diffusion (40 000 rows); large: 128^3 (2.1 M rows); both", {"default", "large", "both"});
    cli.add_string("matrix", &p.matrix, "solve this symmetric Matrix Market file instead (e.g. bcsstk36.mtx)");
    cli.add_real("tol", &p.tolerance, "stop when ||r|| <= tol ||b||", 1e-12, 0.5);
    cli.add_int("max-iter", &p.max_iterations, "iteration limit", 1, 1000000);
    if (with_check_every) cli.add_int("check-every", &p.check_every, "look at the residual every k iterations", 1, 100000);
    cli.add_string("share", &p.share, "file shared with the other CG programs of a tour run (Eigen's and lesson 1's times)");
}

/// The problems to run, in order. A Matrix Market file is read here (before any GPU
/// call), so a bad file is a usage error (exit 2) with the line it is on.
struct ProblemSource {
    std::string name;  ///< "default", "large" or the file path
    Csr load(long long seed) const {
        (void)seed;
        if (name == "default") return default_matrix();
        if (name == "large") return large_matrix();
        return read_matrix_market_file(name);
    }
};

inline std::vector<ProblemSource> problem_list(const ProblemOptions& p) {
    if (!p.matrix.empty()) return {{p.matrix}};
    if (p.problem == "both") return {{"default"}, {"large"}};
    return {{p.problem}};
}

/// For a lesson that needs a newer CUDA driver than the toolkit requires (lesson 07's
/// conditional graph nodes need 12.4): prints what is missing and exits with kSkipExitCode.
/// `minimum` is in cudaDriverGetVersion()'s units (12040 for 12.4).
inline void require_driver_version(const char* program, int minimum, const char* feature) {
    if (driver_version_at_least(minimum)) return;
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;  // reported as 0.0
    std::fprintf(stderr,
                 "SKIPPED: %s needs %s, which needs a CUDA driver of version %d.%d or newer; this one is %d.%d. "
                 "Exit code %d means skipped.\n",
                 program, feature, minimum / 1000, minimum % 1000 / 10, driver / 1000, driver % 1000 / 10,
                 kSkipExitCode);
    std::exit(kSkipExitCode);
}

/// Repeats for one problem: the large one costs ~100x the default per solve, so it gets
/// fewer, to keep a run within the tour's ~15 s.
inline void scale_repeats(const Csr& A, int& warmup, int& repeats) {
    if (A.nnz() > 10'000'000) {
        warmup = std::min(warmup, 1);
        repeats = std::min(repeats, 5);
    }
}

/// Wall-clock time of one call (solve() returns once the GPU is done).
template <class F>
double wall_ms(F&& f) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// ---------------------------------------------------------------------------------------
// The lesson driver
// ---------------------------------------------------------------------------------------

/// The main() of every CG lesson: parse options, build the problem(s), then for each
/// variant: build the solver, solve once and check the answer on the CPU, time the solve
/// (median of the repeats), time its SpMV alone, print the table, append JSON records.
/// `extras` adds the lesson's own options and its device check (see LessonExtras).
inline int lesson_main(int argc, char** argv, const LessonInfo& info, const std::vector<Variant>& variants,
                       const LessonExtras& extras = {}) {
    bool any_check_every = false;
    for (auto& v : variants) any_check_every |= v.uses_check_every;
    Cli cli(info.lesson, std::string(info.title) + "\nSolves A x = b with conjugate gradients in float on the GPU.");
    ProblemOptions po;
    add_problem_options(cli, po, any_check_every);
    RunOptions run;
    add_run_options(cli, run);
    if (extras.add_options) extras.add_options(cli);
    cli.parse_or_exit(argc, argv);
    finish_run_options(run);
    if (!variant_is_known(info.lesson, run.variant, variants)) return kUsageExitCode;
    // Read a Matrix Market file before touching the GPU: a bad file is bad input.
    std::unique_ptr<Csr> file_matrix;
    if (!po.matrix.empty()) {
        try {
            file_matrix = std::make_unique<Csr>(read_matrix_market_file(po.matrix));
            require_solvable(*file_matrix);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s: error: %s\n", info.lesson, e.what());
            return kUsageExitCode;
        }
    }
    require_gpu(info.lesson);
    if (extras.check_device) extras.check_device(info.lesson);

    return guarded_main(info.lesson, [&] {
        const DeviceFacts dev = device_facts();
        print_device_banner(dev);
        const double d2d_gbs = measure_d2d_bandwidth_gbs();
        std::printf("Measured device-to-device copy bandwidth: %.0f GB/s (the bandwidth floor divides by this)\n", d2d_gbs);
        SolveOptions opt;
        opt.tolerance = po.tolerance;
        opt.max_iterations = po.max_iterations;
        opt.check_every = po.check_every;

        Table table({"variant", "problem", "iters", "total ms", "us/iter", "SpMV GB/s", "% floor", "x L1/iter",
                     "x Eigen", "true resid", "check"});
        bool all_ok = true;
        for (const ProblemSource& src : problem_list(po)) {
            Csr A = file_matrix ? std::move(*file_matrix) : src.load(run.seed);
            require_solvable(A);
            const std::vector<float> b = make_rhs(A, static_cast<uint64_t>(run.seed));
            const std::string key = problem_key(A, opt.tolerance, run.seed);
            if (auto why = device_memory_shortfall(size_t(A.nnz()) * 8 + size_t(A.rows) * 4 * 12); !why.empty())
                throw Unsupported(A.label + " " + why);
            DeviceMatrix dA(A);
            DeviceBuffer<float> db(b), dx(size_t(A.rows));
            const SharedTime eigen = read_shared_time(po.share, "eigen", key);
            const SharedTime lesson1 = read_shared_time(po.share, "01_sample", key);

            std::printf("\n%s/%s: %s\n", info.track, info.lesson, info.title);
            std::printf("Problem: %s, b = A x* (x* uniform in [0,1)), tol %.0e, float\n", size_text(A).c_str(),
                        opt.tolerance);
            for (bool pre : {false, true}) {
                bool used = false;
                for (auto& v : variants) used |= v.preconditioned == pre;
                if (!used) continue;
                const double bytes = floor_bytes_per_iteration(A.rows, A.nnz(), pre);
                std::printf("Bandwidth floor (%s): %.2f MB per iteration / %.0f GB/s = %.2f us per iteration\n",
                            pre ? "Jacobi PCG" : "CG", bytes / 1e6, d2d_gbs, bytes / d2d_gbs * 1e-3);
            }
            if (std::isfinite(eigen.ms))
                std::printf("Eigen (same host, from --share): %.2f ms, %.0f iterations\n", eigen.ms, eigen.iterations);

            int warmup = run.warmup, repeats = run.repeats;
            scale_repeats(A, warmup, repeats);
            for (const Variant& v : variants) {
                if (!run.variant.empty() && v.name != run.variant) continue;
                const std::string range = std::string(info.track) + "/" + info.lesson + "/" + v.name;
                std::unique_ptr<Solver> solver = v.make(A, dA, opt);

                SolveResult result;
                SolveCheck check;
                check.verdict = "skipped";
                if (run.check()) {
                    dx.poison();
                    result = solver->solve(db.get(), dx.get());
                    check = check_solution(A, b, dx.download(), result, opt.tolerance);
                    if (!check.ok) {
                        all_ok = false;
                        std::fprintf(stderr, "%s [%s] %s: %s (solver residual %.2e, %d iterations)\n", info.lesson,
                                     v.name.c_str(), A.label.c_str(), check.verdict.c_str(), result.residual,
                                     result.iterations);
                    }
                }
                for (int i = 0; i < warmup; ++i) result = solver->solve(db.get(), dx.get());
                std::vector<double> samples;
                {
                    NvtxRange r(range);
                    const int timed = std::max(1, repeats);
                    for (int i = 0; i < timed; ++i) {
                        // The last timed solve is checked below: x is poisoned before it, so
                        // that a solve which leaves x alone cannot pass on an earlier one's x.
                        // Outside the timing, and finished before the solve starts.
                        if (run.check() && i == timed - 1) {
                            dx.poison();
                            TUT_CUDA(cudaDeviceSynchronize());
                        }
                        samples.push_back(wall_ms([&] { result = solver->solve(db.get(), dx.get()); }));
                    }
                }
                // Check the last timed solve too: a solver that leaves state behind (a counter
                // not reset, a stale flag) gets its first solve right and later ones wrong.
                if (run.check()) {
                    const SolveCheck again = check_solution(A, b, dx.download(), result, opt.tolerance);
                    if (!again.ok) {
                        all_ok = false;
                        check.ok = false;
                        check.verdict = "FAILED on repeat: " + again.verdict;
                        std::fprintf(stderr, "%s [%s] %s: the last timed solve: %s (%d iterations)\n", info.lesson,
                                     v.name.c_str(), A.label.c_str(), again.verdict.c_str(), result.iterations);
                    }
                }
                const double total_ms = median_of(samples);
                const int iters = std::max(1, result.iterations);
                const double us_per_iter = total_ms * 1e3 / iters;

                double spmv_gbs = NAN;
                if (!run.profile && solver->spmv_once()) {  // false: no SpMV of its own to time
                    NvtxRange r(range + "/spmv");
                    Timing t = time_gpu([&] { solver->spmv_once(); }, TimingOptions{3, 20, false});
                    spmv_gbs = spmv_bytes(A.rows, A.nnz()) / (t.median_ms * 1e-3) / 1e9;
                }
                const double floor_us = floor_bytes_per_iteration(A.rows, A.nnz(), v.preconditioned) / d2d_gbs * 1e-3;

                Record rec;
                rec.track = info.track;
                rec.lesson = info.lesson;
                rec.variant = v.name;
                rec.size = size_text(A);
                rec.value = 1000.0 / total_ms;
                rec.unit = "solves/s";
                rec.time_ms = total_ms;
                rec.library = "Eigen ConjugateGradient + DiagonalPreconditioner, OpenMP, all host cores";
                rec.library_value = std::isfinite(eigen.ms) ? 1000.0 / eigen.ms : NAN;
                rec.peak = "bandwidth floor: compulsory bytes per iteration x iterations / measured D2D bandwidth";
                rec.peak_value = 1e6 / (floor_us * iters);
                rec.checked = run.check() && check.ok;
                const double l1_us = std::isfinite(lesson1.ms) && lesson1.iterations > 0
                                         ? lesson1.ms * 1e3 / lesson1.iterations
                                         : NAN;
                const bool is_l1 = std::string(info.lesson) == "01_sample";
                const double per_iter_vs_l1 = is_l1 ? 1.0 : l1_us / us_per_iter;
                const double solve_vs_l1 = is_l1 ? 1.0 : lesson1.ms / total_ms;
                rec.extra.add("iterations", result.iterations)
                    .add("converged_at", result.converged_at)
                    .add("outcome", outcome_name(result.outcome))
                    .add("total_ms", total_ms)
                    .add("us_per_iter", us_per_iter)
                    .add("spmv_gbs", spmv_gbs)
                    .add("floor_us_per_iter", floor_us)
                    .add("fraction_of_floor_per_iter", floor_us / us_per_iter)
                    .add("true_relative_residual", check.true_residual)
                    .add("solver_residual", result.residual)
                    .add("speedup_over_lesson1", solve_vs_l1)
                    .add("per_iter_speedup_over_lesson1", per_iter_vs_l1)
                    .add("speedup_over_eigen", rec.ratio_to_library())
                    .add("eigen_ms", eigen.ms)
                    .add("d2d_gbs", d2d_gbs)
                    .add("check", check.verdict);
                table.add_row({v.name, A.label, std::to_string(result.iterations), fmt("%.3f", total_ms),
                               fmt("%.2f", us_per_iter), std::isfinite(spmv_gbs) ? fmt("%.0f", spmv_gbs) : "-",
                               percent(floor_us / us_per_iter),
                               std::isfinite(per_iter_vs_l1) ? fmt("%.2fx", per_iter_vs_l1) : "-",
                               std::isfinite(rec.ratio_to_library()) ? fmt("%.1fx", rec.ratio_to_library()) : "-",
                               std::isfinite(check.true_residual) ? fmt("%.1e", check.true_residual) : "-",
                               check.verdict});
                append_record(info.lesson, run.json, rec);
                // Lesson 1 records itself for the later lessons' "x L1" column; variants of
                // other lessons record under lesson/variant.
                append_shared_time(po.share, is_l1 ? "01_sample" : std::string(info.lesson) + "/" + v.name, key,
                                   total_ms, result.iterations);
            }
        }
        std::printf("\n");
        table.print();
        std::printf("iters: loop bodies run (SpMVs). %% floor: bandwidth floor per iteration / measured time per "
                    "iteration. x L1/iter: lesson 1's us/iter over this one's. x Eigen: time to solution.\n");
        return all_ok ? 0 : 1;
    });
}

}  // namespace tut::cg

namespace lesson {
/// Defined by each CG lesson (lessons/cg/*/ and solutions/cg/*/); the checks call it.
std::vector<tut::cg::Variant> cg_variants();
}  // namespace lesson
