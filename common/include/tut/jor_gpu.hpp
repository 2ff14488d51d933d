/// @file jor_gpu.hpp
/// @brief The JOR track's GPU plumbing: the system on the device, the solver interface,
/// checking a solve, and the driver every CUDA lesson's main() calls. Host code only
/// (the checks include it); the kernels it calls are in jor_device.cuh, which every JOR
/// lesson's .cu includes.
///
/// A lesson exposes one or more tut::jor::Variant: a name and a factory per element type
/// (float, double) that, given the system on the device and the options, builds a
/// Solver. Building does all set-up (buffers, handles, converted copies, occupancy) and
/// throws tut::Unsupported before launching anything for what the lesson cannot solve.
/// Solver::solve(x) then solves A x = b from x = 0 and returns how it ended, after the
/// GPU has finished: it is what the driver times.
///
/// **The problems are generated on the device** (generate_system(), jor_device.cuh): one
/// block per row calls the counter-based functions of jor.hpp and sums the row's integer
/// units exactly, so A and b are the same bits as the host's make_system() gives (the
/// checks compare them), in milliseconds instead of seconds at N = 8192.
#pragma once

#include "buffer.hpp"
#include "check.hpp"
#include "cli.hpp"
#include "device_facts.hpp"
#include "gpu.hpp"
#include "jor.hpp"
#include "lesson.hpp"
#include "report.hpp"
#include "timer.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
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

/// Fills `sys` (already sized) with matrix `matrix` of `seed` (jor_device.cuh), and its x*.
void generate_system(DeviceSystem<float>& sys, uint64_t seed, uint32_t matrix);
void generate_system(DeviceSystem<double>& sys, uint64_t seed, uint32_t matrix);

/// r = b - A x on the device, accumulated in double, copied back (jor_device.cuh).
std::vector<double> residual(const DeviceSystem<float>& sys, const float* x);
std::vector<double> residual(const DeviceSystem<double>& sys, const double* x);

/// The device's read bandwidth in GB/s: a kernel that only reads a buffer far larger than
/// L2 (16-byte loads, several in flight per thread), the best of three medians (jor_device.cuh).
/// It is the ceiling of a sweep, which reads A and writes almost nothing.
double measure_read_bandwidth_gbs();

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

template <class T>
using Factory = std::function<std::unique_ptr<Solver<T>>(const DeviceSystem<T>&, const SolveOptions&)>;

/// One variant of a lesson; a variant without a factory for a type does not run in it.
///
///     tut::jor::Variant v;
///     v.name = "warp per row";
///     v.make_float = make_solver<float>;
///     v.make_double = make_solver<double>;
struct Variant {
    std::string name;  ///< short: the table's row and --variant's value
    Factory<float> make_float;
    Factory<double> make_double;
    StopRule stop = StopRule::norm;  ///< StopRule::min only for lesson 1's reproduction of the report
};

template <class T>
const Factory<T>& factory(const Variant& v);
template <>
inline const Factory<float>& factory<float>(const Variant& v) {
    return v.make_float;
}
template <>
inline const Factory<double>& factory<double>(const Variant& v) {
    return v.make_double;
}

/// What a lesson may add to the driver; both are optional (as in the CG track).
struct LessonExtras {
    std::function<void(Cli&)> add_options;              ///< the lesson's own options
    std::function<void(const char* program)> check_device;  ///< exits 77 when the GPU lacks a feature
};

// ---------------------------------------------------------------------------------------
// Checking a solve
// ---------------------------------------------------------------------------------------

/// What the driver and the checks hold a solve to.
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

// ---------------------------------------------------------------------------------------
// The driver
// ---------------------------------------------------------------------------------------

/// The lessons' options (the CPU baseline's, less --stop: the min rule is a variant of
/// lesson 1, and --threads: the GPU has no threads to choose).
struct ProblemOptions {
    std::vector<long long> sizes{128, 256, 512, 1024, 2048, 4096, 8192};
    int matrices = kMatrices;
    std::string type = "both";
    std::string tol_text;  ///< empty: the type's default (default_tolerance())
    double alpha = kAlpha;
    int max_iterations = 1000;
    std::string share;
};

inline void add_problem_options(Cli& cli, ProblemOptions& p) {
    cli.add_int_list("sizes", &p.sizes, "comma-separated sizes N", 1, kMaxN);
    cli.add_int("matrices", &p.matrices, "matrices per size (0, 1, ... of the seed)", 1, 1000);
    cli.add_string("type", &p.type, "element type", {"float", "double", "both"});
    cli.add_string("tol", &p.tol_text,
                   "stop when ||dx||_inf <= tol ||x||_inf [default: 1e-6 for float, 1e-8 for double]");
    cli.add_real("alpha", &p.alpha, "relaxation factor a, 0 < a <= 1", 0.0, 1.0);
    cli.add_int("max-iter", &p.max_iterations, "iterations at most", 1, 10000000);
    cli.add_string("share", &p.share, "file shared with the CPU baseline of a tour run (its times, for the speedups)");
}

template <class T>
SolveOptions solve_options(const ProblemOptions& p, StopRule stop) {
    SolveOptions s;
    s.alpha = p.alpha;
    s.tolerance = p.tol_text.empty() ? default_tolerance<T>() : parse_real(p.tol_text, 1e-300, 1.0, "--tol");
    s.max_iterations = p.max_iterations;
    s.stop = stop;
    return s;
}

/// Milliseconds of a host-to-device copy of `bytes` from pinned memory (median of 5).
inline double copy_ms(const void* pinned, void* device, size_t bytes) {
    Timing t = time_gpu([&] { TUT_CUDA(cudaMemcpyAsync(device, pinned, bytes, cudaMemcpyHostToDevice)); },
                        TimingOptions{1, 5, false});
    return t.median_ms;
}

namespace detail {

/// Everything measured for one variant at one size and type.
struct Runs {
    std::vector<double> ms, iterations, rmse, max_error, residual;
    int failed = 0;
    std::string verdict = "ok";
    double matrix_bytes = NAN, copy_ms = NAN, gemv_gbs = NAN;
    bool ran = false;
};

struct Row {
    Record rec;
    std::vector<std::string> cells;
    double ms = NAN, best_cpu_ms = NAN;
    long long n = 0;
    std::string variant;
};

template <class T>
bool run_type(const LessonInfo& info, const ProblemOptions& po, const RunOptions& run,
              const std::vector<Variant>& variants, double read_gbs, Table& table) {
    const long long largest = *std::max_element(po.sizes.begin(), po.sizes.end());
    bool all_ok = true;
    std::vector<Row> rows;
    for (long long n : po.sizes) {
        DeviceSystem<T> sys(static_cast<int>(n));
        DeviceBuffer<T> x(static_cast<size_t>(n));
        T* pinned = nullptr;  // A, copied back once, for the copy-included time
        TUT_CUDA(cudaMallocHost(&pinned, sys.A.bytes()));
        std::vector<Runs> runs(variants.size());
        try {
            for (int m = 0; m < po.matrices; ++m) {
                generate_system(sys, static_cast<uint64_t>(run.seed), static_cast<uint32_t>(m));
                if (m == 0) TUT_CUDA(cudaMemcpy(pinned, sys.A.get(), sys.A.bytes(), cudaMemcpyDeviceToHost));
                const double q = contraction_factor(sys, po.alpha);
                for (size_t v = 0; v < variants.size(); ++v) {
                    const Variant& var = variants[v];
                    if (!factory<T>(var) || (!run.variant.empty() && run.variant != var.name)) continue;
                    const SolveOptions opt = solve_options<T>(po, var.stop);
                    Runs& r = runs[v];
                    r.ran = true;
                    std::unique_ptr<Solver<T>> solver = factory<T>(var)(sys, opt);
                    SolveResult res;
                    SolveCheck c;
                    if (run.check()) {
                        x.poison();
                        res = solver->solve(x.get());
                        c = check_solution(sys, x.download(), res, opt, q);
                    }
                    const int checked_iterations = res.iterations;
                    for (int i = 0; i < run.warmup; ++i) res = solver->solve(x.get());
                    std::vector<double> samples;
                    // The same system must take the same sweeps every time: a repeat's count
                    // that differs (0 included) is kept here.
                    std::optional<int> repeat_iterations_differ;
                    const int timed = std::max(1, run.repeats);
                    for (int i = 0; i < timed; ++i) {
                        // The last timed solve is checked below: x is poisoned before it, so
                        // that a solve which leaves x alone cannot pass on an earlier one's x.
                        // Outside the timing, and finished before the solve starts.
                        if (run.check() && i == timed - 1) {
                            x.poison();
                            TUT_CUDA(cudaDeviceSynchronize());
                        }
                        const auto t0 = std::chrono::steady_clock::now();
                        res = solver->solve(x.get());
                        samples.push_back(
                            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
                        if (run.check() && res.iterations != checked_iterations) repeat_iterations_differ = res.iterations;
                    }
                    if (repeat_iterations_differ && c.ok) {
                        c.ok = false;
                        c.verdict = "FAILED: a repeat took " + std::to_string(*repeat_iterations_differ) +
                                    " iterations, the checked solve " + std::to_string(checked_iterations);
                    }
                    // The last timed solve is checked too: state left behind by one solve
                    // (a counter, a flag) would show only in the next.
                    if (run.check()) {
                        const SolveCheck again = check_solution(sys, x.download(), res, opt, q);
                        if (c.ok && !again.ok) c.verdict = "FAILED on repeat: " + again.verdict;
                        c.ok = c.ok && again.ok;
                        r.residual.push_back(relative_residual(sys, x.get()));
                    }
                    if (run.check() && !c.ok) {
                        ++r.failed;
                        r.verdict = c.verdict;
                        std::fprintf(stderr, "%s [%s] N = %lld %s matrix %d: %s (%d iterations)\n", info.lesson,
                                     var.name.c_str(), n, type_name<T>(), m, c.verdict.c_str(), res.iterations);
                    } else if (run.check() && c.verdict != "ok") {
                        r.verdict = c.verdict;
                    }
                    if (!run.check()) r.verdict = "skipped";
                    r.ms.push_back(median_of(samples));
                    r.iterations.push_back(res.iterations);
                    r.rmse.push_back(c.rmse);
                    r.max_error.push_back(c.max_error);
                    if (m == 0) {
                        r.matrix_bytes = solver->matrix_bytes();
                        r.copy_ms = copy_ms(pinned, sys.A.get(), std::min<size_t>(sys.A.bytes(), size_t(r.matrix_bytes)));
                        if (!run.profile && solver->gemv_once()) {
                            // No L2 flush: the flusher's memset leaves L2 full of dirty lines whose
                            // write-back would compete with the reads. A larger than L2 evicts
                            // itself between runs; a smaller one is read from L2 (above 100%).
                            // Held launches: the host's launch latency is not the kernel's
                            // bandwidth, and the read yardstick is timed the same way.
                            Timing t = time_gpu([&] { solver->gemv_once(); }, TimingOptions{2, 10, false, true});
                            const double bytes = r.matrix_bytes + 2.0 * double(n) * sizeof(T);
                            r.gemv_gbs = bytes / (t.median_ms * 1e-3) / 1e9;
                        }
                    }
                }
            }
        } catch (...) {
            cudaFreeHost(pinned);
            throw;
        }
        TUT_CUDA(cudaFreeHost(pinned));

        const CpuTimes cpu = read_cpu_times(po.share, size_text<T>(n));
        for (size_t v = 0; v < variants.size(); ++v) {
            const Runs& r = runs[v];
            if (!r.ran) continue;
            all_ok = all_ok && r.failed == 0;
            const MeanStd ms = mean_std(r.ms), it = mean_std(r.iterations), e2 = mean_std(r.rmse),
                          emax = mean_std(r.max_error);
            const double us_per_iter = ms.mean * 1e3 / it.mean;
            const double floor_us = (r.matrix_bytes + 3.0 * double(n) * sizeof(T)) / (read_gbs * 1e3);
            const double gemv_fraction = r.gemv_gbs / read_gbs;
            double resid = 0.0;
            for (double x : r.residual) resid = std::fmax(resid, x);
            Row row;
            row.n = n;
            row.variant = variants[v].name;
            row.ms = ms.mean;
            row.best_cpu_ms = cpu.best_ms;
            Record& rec = row.rec;
            rec.track = info.track;
            rec.lesson = info.lesson;
            rec.variant = variants[v].name;
            rec.size = size_text<T>(n);
            rec.value = 1000.0 / ms.mean;
            rec.unit = "solves/s";
            rec.time_ms = ms.mean;
            rec.library = "best OpenMP CPU version (simd or openmp+simd, all host cores), A resident on the GPU";
            rec.library_value = 1000.0 / cpu.best_openmp_ms;
            rec.peak = "bandwidth floor: bytes of A and vectors per iteration x iterations / measured device read "
                       "bandwidth";
            rec.peak_value = 1e6 / (floor_us * it.mean);
            rec.checked = run.check() && r.failed == 0;
            rec.extra.add("type", type_name<T>())
                .add("n", n)
                .add("matrices", po.matrices)
                .add("iterations", it.mean)
                .add("time_ms_std", ms.std)
                .add("copy_ms", r.copy_ms)
                .add("copy_included_ms", ms.mean + r.copy_ms)
                .add("us_per_iter", us_per_iter)
                .add("floor_us_per_iter", floor_us)
                .add("fraction_of_floor_per_iter", floor_us / us_per_iter)
                .add("matrix_bytes", r.matrix_bytes)
                .add("read_gbs", read_gbs)
                .add("cpu_scalar_ms", cpu.scalar_ms)
                .add("cpu_best_openmp_ms", cpu.best_openmp_ms)
                .add("speedup_over_scalar", cpu.scalar_ms / ms.mean)
                .add("speedup_over_best_openmp", cpu.best_openmp_ms / ms.mean)
                .add("rmse", e2.mean)
                .add("rmse_std", e2.std)
                .add("max_error", emax.mean)
                .add("max_error_std", emax.std)
                .add("relative_residual", resid)
                .add("stop", stop_rule_name(variants[v].stop))
                .add("tolerance", solve_options<T>(po, variants[v].stop).tolerance)
                .add("alpha", po.alpha)
                .add("check", r.verdict);
            if (std::isfinite(r.gemv_gbs)) rec.extra.add("gemv_gbs", r.gemv_gbs).add("gemv_read_fraction", gemv_fraction);
            if (n != largest) rec.extra.add("progression", false);
            auto ratio = [](double v) { return std::isfinite(v) ? fmt("%.1fx", v) : std::string("-"); };
            row.cells = {std::to_string(n),
                         type_name<T>(),
                         variants[v].name,
                         fmt("%.4g", ms.mean),
                         fmt("%.2g", ms.std),
                         fmt("%.4g", ms.mean + r.copy_ms),
                         fmt("%.1f", it.mean),
                         fmt("%.4g", us_per_iter),
                         percent(floor_us / us_per_iter),
                         std::isfinite(r.gemv_gbs) ? percent(gemv_fraction) : "-",
                         ratio(cpu.scalar_ms / ms.mean),
                         ratio(cpu.best_openmp_ms / ms.mean),
                         fmt("%.1e (%.0e)", e2.mean, e2.std),
                         fmt("%.1e (%.0e)", emax.mean, emax.std),
                         run.check() ? fmt("%.0e", resid) : "-",
                         r.verdict};
            rows.push_back(std::move(row));
        }
    }
    // The crossover of each variant: the smallest N of the run from which on it beats the
    // fastest CPU version at every larger N of the run (-1: it never does, or no CPU times).
    for (Row& row : rows) {
        long long crossover = -1;
        for (long long n : po.sizes) {
            bool wins_from_here = true, any = false;
            for (const Row& o : rows)
                if (o.variant == row.variant && o.n >= n) {
                    any = true;
                    wins_from_here = wins_from_here && o.ms < o.best_cpu_ms;
                }
            if (any && wins_from_here && (crossover < 0 || n < crossover)) crossover = n;
        }
        row.rec.extra.add("crossover_n", crossover);
        table.add_row(row.cells);
        append_record(info.lesson, run.json, row.rec);
    }
    return all_ok;
}

}  // namespace detail

/// The main() of every CUDA lesson of the track: parse options, refuse what cannot run
/// (before any GPU work), measure the device's read bandwidth, then per type, size and
/// matrix: generate the system on the device, and per variant build the solver, solve
/// once into a poisoned x and check it, time warm-up + repeated solves (median per
/// matrix; mean and std over the matrices in the table), time the copy of A and the
/// GEMV alone; print the table and append one JSON record per variant, type and size.
inline int lesson_main(int argc, char** argv, const LessonInfo& info, const std::vector<Variant>& variants,
                       const LessonExtras& extras = {}) {
    Cli cli(info.lesson, std::string(info.title) +
                             "\nSolves dense, strictly diagonally dominant A x = b by Jacobi over-relaxation on the GPU.");
    ProblemOptions po;
    RunOptions run;
    run.warmup = 1;
    run.repeats = 5;
    run.seed = static_cast<long long>(kSeed);
    add_problem_options(cli, po);
    add_run_options(cli, run);
    if (extras.add_options) extras.add_options(cli);
    cli.parse_or_exit(argc, argv);
    finish_run_options(run);
    if (!variant_is_known(info.lesson, run.variant, variants)) return kUsageExitCode;
    const bool run_float = po.type != "double", run_double = po.type != "float";
    try {
        if (run_float) require_options(solve_options<float>(po, StopRule::norm));
        if (run_double) require_options(solve_options<double>(po, StopRule::norm));
        for (long long n : po.sizes) require_size(n);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: error: %s\n\n%s", info.lesson, e.what(), cli.usage().c_str());
        return kUsageExitCode;
    }
    require_gpu(info.lesson);
    if (extras.check_device) extras.check_device(info.lesson);

    return guarded_main(info.lesson, [&] {
        // Every size must fit before any work: A, b, the diagonal and the work vectors,
        // with room for a solver's copies (the mixed-precision lesson keeps A in float too).
        for (long long n : po.sizes) require_fits_device(n, run_double ? sizeof(double) : sizeof(float));

        const DeviceFacts dev = device_facts();
        print_device_banner(dev);
        const double read_gbs = measure_read_bandwidth_gbs();
        std::printf("Measured device read bandwidth: %.0f GB/s (the bandwidth floor divides by this)\n", read_gbs);
        std::printf("\n%s/%s: %s\n", info.track, info.lesson, info.title);
        std::printf("Systems: generated on the device, %d per size, seed %lld, a = %g; x* uniform in [-1, 1], "
                    "b = A x*\n",
                    po.matrices, run.seed, po.alpha);
        Table table({"N", "type", "variant", "ms", "std", "+copy ms", "iters", "us/iter", "% floor", "GEMV % read",
                     "x scalar", "x OpenMP", "RMSE (std)", "max err (std)", "resid", "check"});
        bool ok = true;
        if (run_float) ok = detail::run_type<float>(info, po, run, variants, read_gbs, table) && ok;
        if (run_double) ok = detail::run_type<double>(info, po, run, variants, read_gbs, table) && ok;
        std::printf("\n");
        table.print();
        std::printf("ms: mean time to solution over the matrices, A resident on the GPU (std: over the matrices); "
                    "+copy ms: with the copy of A from pinned host memory. %% floor: bandwidth floor per iteration "
                    "(bytes of A and vectors / %.0f GB/s) / measured time per iteration. GEMV %% read: the "
                    "matrix-vector kernel alone, as a share of the read bandwidth. x scalar, x OpenMP: speedup "
                    "over the CPU baseline's scalar and best OpenMP versions (from --share). RMSE, max err: "
                    "against x*. resid: largest ||b - Ax|| / ||b||.\n",
                    read_gbs);
        return ok ? 0 : 1;
    });
}

}  // namespace tut::jor

namespace lesson {
/// Defined by each JOR lesson (lessons/jor/*/ and solutions/jor/*/); the checks call it.
std::vector<tut::jor::Variant> jor_variants();
}  // namespace lesson
