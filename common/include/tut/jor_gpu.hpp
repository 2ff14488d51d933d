/// @file jor_gpu.hpp
/// @brief The JOR track's GPU problem: the system on the device, the solver interface and
/// the variants, checking a solve, and what a lesson's main() measures (Options, Report,
/// Problem). Host code only (the checks include it); the device functions it declares are
/// defined in jor_device.cuh, which every JOR lesson's .cu includes.
///
/// A lesson's variant (tut::Variant, per element type) is a name and a function that,
/// given the system on the device and the solve's options, builds a Solver. Building does
/// all set-up (buffers, handles, converted copies, occupancy) and throws tut::Unsupported
/// before launching anything for what the lesson cannot solve. Solver::solve(x) then
/// solves A x = b from x = 0 and returns how it ended, after the GPU has finished: it is
/// what the lesson times, by the host clock (a solve's launches, copies and waits are part
/// of its time).
///
/// **The problems are generated on the device** (generate_system(), jor_device.cuh): one
/// block per row calls the counter-based functions of jor.hpp and sums the row's integer
/// units exactly, so A and b are the same bits as the host's make_system() gives (the
/// checks compare them), in milliseconds instead of seconds at N = 8192.
#pragma once

#include "bench.hpp"
#include "buffer.hpp"
#include "check.hpp"
#include "cli.hpp"
#include "gpu.hpp"
#include "jor.hpp"
#include "lesson.hpp"
#include "report.hpp"
#include "timer.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tut::jor {

// ---------------------------------------------------------------------------------------
// The system on the device
// ---------------------------------------------------------------------------------------

/// A x = b on the device, row-major, in T; the exact solution x* on the host (empty for a
/// system the caller uploaded, which has no known solution). `diagonal` holds A_jj and
/// `offdiag_abs` the row's sum of |A_jk| over k != j (in double): the contraction factor
/// and the error bound come from them without copying A back.
template <class T>
struct DeviceSystem {
    int n = 0;
    uint64_t seed = kSeed;
    uint32_t matrix = 0;
    DeviceBuffer<T> A, b, diagonal;
    DeviceBuffer<double> offdiag_abs;
    std::vector<double> x_star;

    DeviceSystem() = default;
    explicit DeviceSystem(int n_) : n(n_), A(size_t(n_) * size_t(n_)), b(size_t(n_)), diagonal(size_t(n_)),
                                    offdiag_abs(size_t(n_)) {}
};

/// Fills `sys` (already sized) with matrix `matrix` of `seed`, and its x*. Defined in
/// jor_device.cuh (T = float, double).
template <class T>
void generate_system(DeviceSystem<T>& sys, uint64_t seed, uint32_t matrix);

/// r = b - A x on the device, accumulated in double, copied back. Defined in jor_device.cuh.
template <class T>
std::vector<double> residual(const DeviceSystem<T>& sys, const T* x);

/// A system from host arrays (row-major A, b), for the checks' hand-made matrices. It is
/// refused like any input (require_finite_system()): NaN, infinity, a zero diagonal.
template <class T>
DeviceSystem<T> upload_system(const std::vector<T>& A, const std::vector<T>& b, int n) {
    require_finite_system(A.data(), b.data(), n);
    DeviceSystem<T> sys(n);
    sys.A.upload(A);
    sys.b.upload(b);
    std::vector<T> d(static_cast<size_t>(n));
    std::vector<double> off(size_t(n), 0.0);
    for (int j = 0; j < n; ++j) {
        d[j] = A[size_t(j) * n + j];
        for (int k = 0; k < n; ++k)
            if (k != j) off[j] += std::fabs(double(A[size_t(j) * n + k]));
    }
    sys.diagonal.upload(d);
    sys.offdiag_abs.upload(off);
    return sys;
}

/// q = (1 - a) + a max_j S_j / |A_jj| (see contraction_factor() in jor.hpp) from the
/// device system's row sums and diagonal.
template <class T>
double contraction_factor(const DeviceSystem<T>& sys, double alpha) {
    const std::vector<T> d = sys.diagonal.download();
    const std::vector<double> off = sys.offdiag_abs.download();
    double worst = 0.0;
    for (size_t j = 0; j < d.size(); ++j) worst = std::fmax(worst, off[j] / std::fabs(double(d[j])));
    return (1.0 - alpha) + alpha * worst;
}

/// Throws Unsupported when a system of size n in elements of `element_bytes` does not fit
/// the device's free memory, with a reserve for the solvers' own arrays (a fifth of it, and
/// 256 MiB: the mixed-precision lesson keeps a float copy of A beside the double one).
inline void require_fits_device(long long n, size_t element_bytes) {
    size_t free_bytes = 0, total_bytes = 0;
    TUT_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double usable = std::max(1.0, 0.8 * double(free_bytes) - double(256 << 20));
    require_fits(n, element_bytes, usable, "free device memory (less a reserve for the solvers' work arrays)");
}

// ---------------------------------------------------------------------------------------
// Solvers and variants
// ---------------------------------------------------------------------------------------

/// One lesson's solver, set up for one system. See the file comment.
template <class T>
class Solver {
  public:
    virtual ~Solver() = default;
    /// Solves A x = b from x = 0 into the device array x (n elements); returns once the
    /// GPU has finished. A diverging solve runs to the iteration limit and says so.
    virtual SolveResult solve(T* x) = 0;
    /// Bytes of the matrix one sweep reads (A in the solver's storage: n^2 elements of T,
    /// unless the solver keeps a converted copy).
    virtual double matrix_bytes() const = 0;
    /// Enqueues the solver's matrix-vector product alone, on its work vectors, and returns
    /// true; for the "GEMV % read" column. A solver whose product lives inside a larger
    /// kernel keeps this default, which enqueues nothing and returns false.
    virtual bool gemv_once() { return false; }
};

/// Builds a variant's solver for one system and the solve's options (set-up only: no
/// solve); throws tut::Unsupported, before launching anything, for what it cannot solve.
template <class T>
using Run = std::unique_ptr<Solver<T>>(const DeviceSystem<T>& sys, const SolveOptions& opt);

/// One variant for elements of type T:
///
///     tut::jor::Variant<float>{"warp per row", make_solver<float>}
template <class T>
using Variant = tut::Variant<Run<T>>;

/// A lesson's variants, per element type. Most variants are in both lists under the same
/// name; a variant of one type only (lesson 01's texture, lesson 08's storage types) is in
/// one.
struct Variants {
    std::vector<Variant<float>> floats;
    std::vector<Variant<double>> doubles;
};

/// The list of one type.
template <class T>
const std::vector<Variant<T>>& variants_of(const Variants& v) {
    if constexpr (sizeof(T) == sizeof(float))
        return v.floats;
    else
        return v.doubles;
}

// ---------------------------------------------------------------------------------------
// Checking a solve
// ---------------------------------------------------------------------------------------

/// What the lessons and the checks hold a solve to.
struct SolveCheck {
    bool ok = false;
    double rmse = NAN, max_error = NAN, bound = NAN;
    std::string verdict;  ///< "ok", "FAILED: ..."
};

/// A solve stopped by the norm rule must have converged with max |x - x*| within
/// error_bound() (jor.hpp: proven for any order of summation, from the contraction factor
/// and the tolerance). A solve stopped by the min rule has no such bound: it only has to
/// have stopped with finite values.
template <class T>
SolveCheck check_solution(const DeviceSystem<T>& sys, const std::vector<T>& x, const SolveResult& r,
                          const SolveOptions& opt, double q) {
    SolveCheck c;
    c.rmse = rmse(x.data(), sys.x_star);
    c.max_error = max_error(x.data(), sys.x_star);
    double x_norm = r.last.x_max;
    for (double v : sys.x_star) x_norm = std::fmax(x_norm, std::fabs(v));
    c.bound = error_bound(q, opt.tolerance, sys.n, opt.alpha, unit_roundoff<T>(), x_norm);
    if (!r.converged) {
        c.verdict = "FAILED: not converged in " + std::to_string(r.iterations) + " iterations";
    } else if (opt.stop == StopRule::min) {
        c.ok = std::isfinite(c.max_error);
        c.verdict = c.ok ? "stopped (min rule: no bound)" : "FAILED: not finite";
    } else {
        c.ok = c.max_error <= c.bound;
        c.verdict = c.ok ? "ok" : "FAILED: max error " + number_text(c.max_error) + " > bound " + number_text(c.bound);
    }
    return c;
}

/// ||b - A x||_2 / ||b||_2 in double.
template <class T>
double relative_residual(const DeviceSystem<T>& sys, const T* x) {
    const std::vector<double> r = residual(sys, x);
    const std::vector<T> b = sys.b.download();
    double rr = 0.0, bb = 0.0;
    for (size_t j = 0; j < r.size(); ++j) {
        rr += r[j] * r[j];
        bb += double(b[j]) * double(b[j]);
    }
    return bb > 0 ? std::sqrt(rr / bb) : std::sqrt(rr);
}

}  // namespace tut::jor

namespace lesson {
/// Defined by each JOR lesson (lessons/jor/*/ and solutions/jor/*/); the checks call it.
tut::jor::Variants variants();
}  // namespace lesson

// ==== Lesson harness: options, problem, results ====

namespace tut::jor {

/// A JOR lesson's command line (the CPU baseline's problem options); a lesson adds its own to `cli`.
struct Options {
    explicit Options(const LessonInfo& lesson_)
        : cli(lesson_.lesson, std::string(lesson_.title) + "\nSolves dense, strictly diagonally dominant A x = b by "
                                                           "Jacobi over-relaxation on the GPU."),
          lesson(lesson_) {
        run.warmup = 1;
        run.repeats = 5;
        run.seed = static_cast<long long>(kSeed);
        cli.add_int_list("sizes", &sizes, "comma-separated sizes N", 1, kMaxN);
        cli.add_int("matrices", &matrices, "matrices per size (0, 1, ... of the seed)", 1, 1000);
        cli.add_string("type", &type, "element type", {"float", "double", "both"});
        cli.add_string("tol", &tol, "stop when ||dx||_inf <= tol ||x||_inf [default: 1e-6 for float, 1e-8 for double]");
        cli.add_real("alpha", &alpha, "relaxation factor a, 0 < a <= 1", 0.0, 1.0);
        cli.add_int("max-iter", &max_iterations, "iterations at most", 1, 10000000);
        cli.add_string("share", &share, "file shared with the CPU baseline of a tour run (its times, for the speedups)");
    }
    /// --tol and --alpha must suit each type --type asks for, and --variant that type's list (exit 2).
    void parse(int argc, char** argv, const Variants& variants) {
        const std::vector<std::string> floats = names_of(variants.floats), doubles = names_of(variants.doubles);
        std::vector<std::string> names = floats;
        for (const std::string& name : doubles)
            if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        parse_lesson_options(cli, run, argc, argv, lesson, names, [&] {
            if (runs<float>()) require_options(solve_options<float>(StopRule::norm));
            if (runs<double>()) require_options(solve_options<double>(StopRule::norm));
            const std::vector<std::string>& typed = type == "float" ? floats : doubles;
            if (type != "both" && !variant_is_known(lesson.lesson, run.variant, typed, " for --type " + type))
                std::exit(kUsageExitCode);
        });
    }
    template <class T>
    bool runs() const { return type == "both" || type == type_name<T>(); }
    template <class T>
    SolveOptions solve_options(StopRule stop) const {
        const double tolerance = tol.empty() ? default_tolerance<T>() : parse_real(tol, 1e-300, 1.0, "--tol");
        return {alpha, tolerance, max_iterations, stop};
    }
    Cli cli;
    LessonInfo lesson;
    RunOptions run;
    std::vector<long long> sizes{128, 256, 512, 1024, 2048, 4096, 8192};
    int matrices = kMatrices, max_iterations = 1000;
    std::string type = "both", tol, share;  // tol empty: the type's default_tolerance()
    double alpha = kAlpha;
};

/// A run's frame: the sizes must fit the device; the read bandwidth and title; the table and its legend.
struct Report {
    Report(const Bench& bench, const Options& options, double read_gbs_) : read_gbs(read_gbs_) {
        const size_t element_bytes = options.runs<double>() ? sizeof(double) : sizeof(float);
        for (long long n : options.sizes) require_fits_device(n, element_bytes);
        std::printf("Measured device read bandwidth: %.0f GB/s (the bandwidth floor divides by this)\n\n%s/%s: %s\n"
                    "Systems: generated on the device, %d per size, seed %lld, a = %g; x* uniform in [-1, 1], "
                    "b = A x*\n",
                    read_gbs, bench.lesson().track, bench.lesson().lesson, bench.lesson().title, options.matrices,
                    bench.run().seed, options.alpha);
    }
    void print() const {
        std::printf("\n");
        table.print();
        std::printf("ms: mean time to solution over the matrices (std), A on the GPU; +copy ms: with A copied from "
                    "pinned memory. %% floor: (bytes of A and vectors / %.0f GB/s) / time per iteration. GEMV %% read: "
                    "the product alone / read bandwidth. x scalar, x OpenMP: speedups over the CPU baseline's "
                    "versions. RMSE, max err: against x*. resid: largest ||b - Ax|| / ||b||.\n", read_gbs);
    }
    const double read_gbs;
    Table table{{"N", "type", "variant", "ms", "std", "+copy ms", "iters", "us/iter", "% floor", "GEMV % read",
                 "x scalar", "x OpenMP", "RMSE (std)", "max err (std)", "resid", "check"}};
};

/// One element type's problems: per size, variant and matrix set_up(), check(), solve() timed with timing()'s hook,
/// check_last(), add(); then results(), a record per size and variant (the mean over the matrices of the medians).
template <class T>
class Problem {
  public:
    Problem(const Options& options, const Report& report) : options_(options), read_gbs_(report.read_gbs) {
        const size_t largest = size_t(*std::max_element(options.sizes.begin(), options.sizes.end()));
        void* pinned = nullptr;  // A on the host, for the timed copy: the largest size's
        TUT_CUDA(cudaMallocHost(&pinned, largest * largest * sizeof(T)));
        pinned_.reset(pinned);
    }
    /// Matrix `matrix` of size n and v's solver for it, stopped by `stop` (min: lesson 01's report rule).
    void set_up(const Variant<T>& v, long long n, int matrix, StopRule stop = StopRule::norm) {
        solver_.reset();  // before the system it refers to changes
        if (sys_.n != n) {
            sys_ = DeviceSystem<T>();  // the old arrays go before the new ones come
            sys_ = DeviceSystem<T>(static_cast<int>(n));
            x_ = DeviceBuffer<T>(static_cast<size_t>(n));
        }
        generate_system(sys_, static_cast<uint64_t>(options_.run.seed), static_cast<uint32_t>(matrix));
        q_ = contraction_factor(sys_, options_.alpha);
        opt_ = options_.solve_options<T>(stop);
        if (runs_.empty() || runs_.back().name != v.name || runs_.back().n != n) runs_.push_back({v.name, n, opt_});
        matrix_ = matrix;
        first_ = SolveCheck{};
        checked_ = differs_ = std::nullopt;
        solver_ = v.run(sys_, opt_);
    }
    Verdict check() {
        x_.poison();
        last_ = solver_->solve(x_.get());
        first_ = check_solution(sys_, x_.download(), last_, opt_, q_);
        if (first_.ok) checked_ = last_.iterations;
        return verdict(first_.ok, first_.verdict);
    }
    /// One solve (it returns once the GPU has finished); each must take the checked solve's sweeps.
    void solve() {
        last_ = solver_->solve(x_.get());
        if (checked_ && last_.iterations != *checked_) differs_ = last_.iterations;
    }
    /// Unless --no-check, x is poisoned (and the poison finished) before the last timed solve.
    HostTiming timing() {
        return {-1, -1, [this](int i) {
                    if (!options_.run.check() || i != std::max(1, options_.run.repeats) - 1) return;
                    x_.poison();
                    TUT_CUDA(cudaDeviceSynchronize());
                }};
    }
    /// The last timed solve, held to the same rule: what a solve leaves behind shows only in the next one.
    Verdict check_last() {
        const SolveCheck c = check_solution(sys_, x_.download(), last_, opt_, q_);
        runs_.back().residual.push_back(relative_residual(sys_, x_.get()));
        if (!checked_) return Verdict{};
        if (differs_) return verdict(false, fmt("FAILED: a repeat took %d iterations, the checked solve %d", *differs_,
                                                *checked_));
        return verdict(c.ok, c.ok ? c.verdict : "FAILED on repeat: " + c.verdict);
    }
    /// This matrix's solves; for matrix 0 also the copy of A and the product alone (held launches, no flush).
    void add(const Timing& timing, const Verdict& first, const Verdict& last) {
        Runs& r = runs_.back();
        r.ms.push_back(timing.median_ms);
        r.iterations.push_back(last_.iterations);
        r.rmse.push_back(first_.rmse);
        r.max_error.push_back(first_.max_error);
        const Verdict& v = first.failed() ? first : last;
        r.failed += v.failed();
        if (v.failed() || r.failed == 0) r.verdict = v.failed() ? v.cell : first.cell;  // the last failure, if any
        if (matrix_ != 0) return;
        r.matrix_bytes = solver_->matrix_bytes();
        const size_t bytes = std::min<size_t>(sys_.A.bytes(), size_t(r.matrix_bytes));
        TUT_CUDA(cudaMemcpy(pinned_.get(), sys_.A.get(), bytes, cudaMemcpyDeviceToHost));  // and back: it stays A
        auto copy = [&] { TUT_CUDA(cudaMemcpyAsync(sys_.A.get(), pinned_.get(), bytes, cudaMemcpyHostToDevice)); };
        r.copy_ms = time_gpu(copy, TimingOptions{1, 5, false}).median_ms;
        if (options_.run.profile || !solver_->gemv_once()) return;
        const Timing t = time_gpu([&] { solver_->gemv_once(); }, TimingOptions{2, 10, false, true});
        r.gemv_gbs = (r.matrix_bytes + 2.0 * double(sys_.n) * sizeof(T)) / (t.median_ms * 1e-3) / 1e9;
    }
    /// One record and table row per size and variant, in the order they ran.
    std::vector<Result> results() const {
        std::vector<Result> out;
        for (const Runs& r : runs_) out.push_back(result(r));
        return out;
    }

  private:
    struct Runs {  // one variant at one size, an entry per matrix
        std::string name;
        long long n = 0;
        SolveOptions opt;
        std::vector<double> ms, iterations, rmse, max_error, residual;
        int failed = 0;
        std::string verdict;
        double matrix_bytes = NAN, copy_ms = NAN, gemv_gbs = NAN;
    };
    Verdict verdict(bool ok, const std::string& cell) const {
        const std::string where = fmt("N = %d %s matrix %d (%d iterations): ", sys_.n, type_name<T>(), matrix_,
                                      last_.iterations);
        return ok ? passed(cell) : failed(where + cell, cell);
    }
    /// The smallest N from which `name` beats the fastest CPU version at every larger N of the run (-1: none).
    long long crossover(const std::string& name) const {
        long long lost = -1, found = -1;  // the largest N where it loses; the smallest above it
        for (const Runs& r : runs_)
            if (r.name == name && !(mean_std(r.ms).mean < read_cpu_times(options_.share, cpu_key(r)).best_ms))
                lost = std::max(lost, r.n);
        for (const Runs& r : runs_)
            if (r.name == name && r.n > lost && (found < 0 || r.n < found)) found = r.n;
        return found;
    }
    std::string cpu_key(const Runs& r) const {  // norm-rule times: a min-rule run is set beside the same problem's
        return problem_key<T>(r.n, r.opt, options_.matrices, options_.run.seed);
    }
    Result result(const Runs& r) const {
        const CpuTimes cpu = read_cpu_times(options_.share, cpu_key(r));
        const MeanStd ms = mean_std(r.ms), it = mean_std(r.iterations), e2 = mean_std(r.rmse),
                      emax = mean_std(r.max_error);
        const double us_per_iter = ms.mean * 1e3 / it.mean, gemv_fraction = r.gemv_gbs / read_gbs_;
        const double floor_us = (r.matrix_bytes + 3.0 * double(r.n) * sizeof(T)) / (read_gbs_ * 1e3);
        double resid = 0.0;
        for (double x : r.residual) resid = std::fmax(resid, x);
        Result out;
        Record& rec = out.record;
        rec.variant = r.name;
        rec.size = size_text<T>(r.n);
        rec.value = 1000.0 / ms.mean;
        rec.unit = "solves/s";
        rec.time_ms = ms.mean;
        rec.library = "best OpenMP CPU version (simd or openmp+simd, all host cores), A resident on the GPU";
        rec.library_value = 1000.0 / cpu.best_openmp_ms;
        rec.peak = "bandwidth floor: bytes of A and vectors per iteration x iterations / measured device read "
                   "bandwidth";
        rec.peak_value = 1e6 / (floor_us * it.mean);
        rec.checked = options_.run.check() && r.failed == 0;
        rec.extra.add("type", type_name<T>()).add("n", r.n).add("matrices", options_.matrices);
        rec.extra.add("iterations", it.mean);
        rec.extra.add("time_ms_std", ms.std).add("copy_ms", r.copy_ms).add("copy_included_ms", ms.mean + r.copy_ms);
        rec.extra.add("us_per_iter", us_per_iter).add("floor_us_per_iter", floor_us);
        rec.extra.add("fraction_of_floor_per_iter", floor_us / us_per_iter).add("matrix_bytes", r.matrix_bytes);
        rec.extra.add("read_gbs", read_gbs_).add("cpu_scalar_ms", cpu.scalar_ms);
        rec.extra.add("cpu_best_openmp_ms", cpu.best_openmp_ms).add("speedup_over_scalar", cpu.scalar_ms / ms.mean);
        rec.extra.add("speedup_over_best_openmp", cpu.best_openmp_ms / ms.mean).add("rmse", e2.mean);
        rec.extra.add("rmse_std", e2.std).add("max_error", emax.mean).add("max_error_std", emax.std);
        rec.extra.add("relative_residual", resid).add("stop", stop_rule_name(r.opt.stop));
        rec.extra.add("tolerance", r.opt.tolerance).add("alpha", options_.alpha).add("check", r.verdict);
        if (std::isfinite(r.gemv_gbs)) rec.extra.add("gemv_gbs", r.gemv_gbs).add("gemv_read_fraction", gemv_fraction);
        if (r.n != *std::max_element(options_.sizes.begin(), options_.sizes.end())) rec.extra.add("progression", false);
        rec.extra.add("crossover_n", crossover(r.name));
        auto ratio = [](double v) { return std::isfinite(v) ? fmt("%.1fx", v) : std::string("-"); };
        out.row = {std::to_string(r.n), type_name<T>(), r.name, fmt("%.4g", ms.mean), fmt("%.2g", ms.std),
                   fmt("%.4g", ms.mean + r.copy_ms), fmt("%.1f", it.mean), fmt("%.4g", us_per_iter),
                   percent(floor_us / us_per_iter), std::isfinite(r.gemv_gbs) ? percent(gemv_fraction) : "-",
                   ratio(cpu.scalar_ms / ms.mean), ratio(cpu.best_openmp_ms / ms.mean),
                   fmt("%.1e (%.0e)", e2.mean, e2.std), fmt("%.1e (%.0e)", emax.mean, emax.std),
                   options_.run.check() ? fmt("%.0e", resid) : "-", r.verdict};
        return out;
    }

    const Options& options_;
    const double read_gbs_;
    std::unique_ptr<void, cudaError_t (*)(void*)> pinned_{nullptr, cudaFreeHost};
    DeviceSystem<T> sys_;
    DeviceBuffer<T> x_;
    std::unique_ptr<Solver<T>> solver_;  // after sys_: destroyed first
    SolveOptions opt_;
    double q_ = NAN;
    int matrix_ = 0;
    SolveCheck first_;  // the checked solve's
    SolveResult last_;  // the latest solve's
    std::optional<int> checked_, differs_;  // the checked solve's sweeps (when it passed); a repeat's other count
    std::vector<Runs> runs_;
};

}  // namespace tut::jor
