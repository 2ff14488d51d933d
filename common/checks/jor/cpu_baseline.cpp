// jor/00_cpu_baseline: the 2015 report's three CPU versions of a dense JOR solve, the CUDA lessons' yardstick.
// The JOR track's CPU baseline: the report's scalar, SIMD and OpenMP versions of a dense
// Jacobi over-relaxation solve, in float and double, on the track's generated systems,
// with the host's read bandwidth measured in the same run as the CPU's ceiling.
//
// Build alone (from the repository root; one line; CUDA for its headers only):
//   g++ -O3 -std=c++17 -fopenmp -Icommon/include -I/usr/local/cuda/include
//       common/checks/jor/cpu_baseline.cpp -o cpu_baseline
// Run:  build/checks/jor/cpu_baseline [--sizes 128,256,...] [--matrices 10] [--type both]
//                                     [--stop norm|min] [--tol X] [--alpha 0.9] [--json FILE]
//
// Variants (tut/jor_cpu.hpp): scalar (strict floating point, one thread), simd (omp simd
// reduction, one thread), openmp+simd (rows over all host threads). Built only when CMake
// finds OpenMP (common/checks/jor/lessons.cmake).
//
// Per type and size it generates --matrices systems (tut/jor.hpp: counter-based, the
// same bits as a GPU generator would make), times one solve per matrix and variant from
// x = 0, and reports the mean time to solution with its standard deviation over the
// matrices, the iterations, the time per iteration, the share of the bandwidth floor
// (bytes of A per iteration / measured read bandwidth), the speedup over scalar, and
// the error against the known solution x* (RMSE and max, mean and std) and the relative
// residual. With the norm rule, every solve is checked against the error bound of
// tut::jor::error_bound(); the program exits 1 if one fails, 2 on bad input.
//
// JSON records (--json): track jor, lesson 00_cpu_baseline, one per type, size and
// variant; value in solves/s; library = the best OpenMP version at the same size and
// type; peak = the bandwidth floor. Only the largest size of the run counts for the
// track's progression (smaller sizes are marked "progression": false), so a table that
// picks a lesson's fastest record does not pick N = 128.
#include "tut/cli.hpp"
#include "tut/jor.hpp"
#include "tut/jor_cpu.hpp"
#include "tut/report.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

using namespace tut::jor;

struct Options {
    std::vector<long long> sizes{128, 256, 512, 1024, 2048, 4096, 8192};
    int matrices = kMatrices;
    std::string type = "both";
    std::string stop = "norm";
    std::string tol_text;  // empty: the type's default
    double alpha = kAlpha;
    int max_iterations = 1000;
    int threads = 0;
    long long seed = static_cast<long long>(kSeed);
    std::string variant = "all";
    std::string json;
    std::string share;
    bool fresh_share = false;
};

double max_of(const std::vector<double>& v) {
    double m = 0.0;
    for (double x : v)
        if (!(x <= m)) m = x;  // a NaN sticks
    return m;
}

// Everything measured for one variant at one type and size, one entry per matrix.
struct Runs {
    CpuVariant variant = CpuVariant::scalar;
    std::vector<double> ms, iterations, rmse, max_error, residual, bound, q;
    int not_converged = 0, above_bound = 0;
};

double tolerance_for(const Options& o, double type_default) {
    return o.tol_text.empty() ? type_default : tut::parse_real(o.tol_text, 1e-300, 1.0, "--tol");
}

SolveOptions solve_options(const Options& o, double tolerance) {
    SolveOptions s;
    s.alpha = o.alpha;
    s.tolerance = tolerance;
    s.max_iterations = o.max_iterations;
    s.stop = o.stop == "min" ? StopRule::min : StopRule::norm;
    return s;
}

std::vector<CpuVariant> chosen_variants(const Options& o) {
    std::vector<CpuVariant> out;
    for (CpuVariant v : cpu_variants())
        if (o.variant == "all" || o.variant == cpu_variant_name(v)) out.push_back(v);
    return out;
}

std::string check_text(const Runs& r, StopRule rule, int matrices) {
    if (r.not_converged) return std::to_string(r.not_converged) + "/" + std::to_string(matrices) + " NOT CONVERGED";
    if (rule == StopRule::min) return "stopped (min rule: no bound)";
    if (r.above_bound) return std::to_string(r.above_bound) + "/" + std::to_string(matrices) + " ERROR ABOVE BOUND";
    return "ok";
}

// Runs one type over all sizes; returns false when a check failed.
template <class T>
bool run_type(const Options& o, double read_gbs) {
    const SolveOptions opt = solve_options(o, tolerance_for(o, default_tolerance<T>()));
    const std::vector<CpuVariant> variants = chosen_variants(o);
    const long long largest = *std::max_element(o.sizes.begin(), o.sizes.end());
    std::printf("\n%s: a = %g, %s rule, tolerance %g, at most %d iterations, %d matrices per size, seed %lld\n",
                type_name<T>(), opt.alpha, stop_rule_name(opt.stop), opt.tolerance, opt.max_iterations, o.matrices,
                o.seed);
    tut::Table table({"N", "variant", "ms", "std", "iters", "us/iter", "% floor", "x scalar", "RMSE", "std", "max err",
                      "std", "rel resid", "check"});
    bool all_ok = true;
    for (long long n : o.sizes) {
        std::vector<Runs> runs(variants.size());
        for (size_t v = 0; v < variants.size(); ++v) runs[v].variant = variants[v];
        std::vector<T> x(static_cast<size_t>(n));
        double generate_s = 0.0;
        for (int m = 0; m < o.matrices; ++m) {
            const auto g0 = std::chrono::steady_clock::now();
            const System<T> sys = make_system<T>(n, static_cast<uint64_t>(o.seed), static_cast<uint32_t>(m));
            generate_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - g0).count();
            require_solvable(sys.A.data(), sys.b.data(), n, opt);  // before any timed work
            const double q = contraction_factor(sys.A.data(), n, opt.alpha);
            double x_star_norm = 0.0;
            for (double v : sys.x_star) x_star_norm = std::max(x_star_norm, std::fabs(v));
            for (Runs& r : runs) {
                std::fill(x.begin(), x.end(), static_cast<T>(NAN));
                const auto t0 = std::chrono::steady_clock::now();
                const SolveResult res = iterate_cpu(r.variant, sys.A.data(), sys.b.data(), static_cast<int>(n), opt,
                                                    x.data());
                const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                const double bound = error_bound(q, opt.tolerance, n, opt.alpha, unit_roundoff<T>(),
                                                 std::max(res.last.x_max, x_star_norm));
                const double err = max_error(x.data(), sys.x_star);
                r.ms.push_back(ms);
                r.iterations.push_back(res.iterations);
                r.rmse.push_back(rmse(x.data(), sys.x_star));
                r.max_error.push_back(err);
                r.residual.push_back(relative_residual(sys.A.data(), sys.b.data(), x.data(), n));
                r.bound.push_back(bound);
                r.q.push_back(q);
                if (!res.converged) ++r.not_converged;
                if (!(err <= bound)) ++r.above_bound;
            }
        }
        std::printf("N = %lld: %d matrices generated in %.2f s\n", n, o.matrices, generate_s);

        // Summaries, the scalar and best-OpenMP references, then rows and records.
        double scalar_ms = NAN, best_omp_rate = NAN;
        for (const Runs& r : runs) {
            const double ms = mean_std(r.ms).mean;
            if (r.variant == CpuVariant::scalar) scalar_ms = ms;
            else if (!(1000.0 / ms <= best_omp_rate)) best_omp_rate = 1000.0 / ms;
        }
        const double floor_us = floor_us_per_iteration(n, sizeof(T), read_gbs);
        for (const Runs& r : runs) {
            const MeanStd ms = mean_std(r.ms), it = mean_std(r.iterations), e2 = mean_std(r.rmse),
                          emax = mean_std(r.max_error);
            const double us_per_iter = ms.mean * 1e3 / it.mean;
            const double fraction = floor_us / us_per_iter;
            const double speedup = scalar_ms / ms.mean;
            const bool ok = r.not_converged == 0 && (opt.stop == StopRule::min || r.above_bound == 0);
            all_ok = all_ok && ok;
            const std::string check = check_text(r, opt.stop, o.matrices);
            table.add_row({std::to_string(n), cpu_variant_name(r.variant), tut::fmt("%.4g", ms.mean),
                           tut::fmt("%.2g", ms.std), tut::fmt("%.1f", it.mean), tut::fmt("%.4g", us_per_iter),
                           tut::percent(fraction), std::isfinite(speedup) ? tut::fmt("%.2fx", speedup) : "-",
                           tut::fmt("%.2e", e2.mean), tut::fmt("%.1e", e2.std), tut::fmt("%.2e", emax.mean),
                           tut::fmt("%.1e", emax.std), tut::fmt("%.1e", max_of(r.residual)), check});

            tut::Record rec;
            rec.track = "jor";
            rec.lesson = "00_cpu_baseline";
            rec.variant = cpu_variant_name(r.variant);
            rec.size = size_text<T>(n);
            rec.value = 1000.0 / ms.mean;
            rec.unit = "solves/s";
            rec.time_ms = ms.mean;
            rec.library = "best OpenMP CPU version (simd or openmp+simd), same size and type";
            rec.library_value = best_omp_rate;
            rec.peak = "bandwidth floor: bytes of A and vectors per iteration x iterations / measured host read bandwidth";
            rec.peak_value = 1e6 / (floor_us * it.mean);
            rec.checked = ok && opt.stop == StopRule::norm;
            rec.extra.add("type", type_name<T>())
                .add("n", n)
                .add("matrices", o.matrices)
                .add("iterations", it.mean)
                .add("iterations_min", *std::min_element(r.iterations.begin(), r.iterations.end()))
                .add("iterations_max", *std::max_element(r.iterations.begin(), r.iterations.end()))
                .add("time_ms_std", ms.std)
                .add("us_per_iter", us_per_iter)
                .add("floor_us_per_iter", floor_us)
                .add("fraction_of_floor_per_iter", fraction)
                .add("host_read_gbs", read_gbs)
                .add("speedup_over_scalar", speedup)
                .add("speedup_over_best_openmp", (1000.0 / ms.mean) / best_omp_rate)
                .add("rmse", e2.mean)
                .add("rmse_std", e2.std)
                .add("max_error", emax.mean)
                .add("max_error_std", emax.std)
                .add("relative_residual", max_of(r.residual))
                .add("error_bound", max_of(r.bound))
                .add("contraction_factor", max_of(r.q))
                .add("not_converged", r.not_converged)
                .add("threads", r.variant == CpuVariant::threads ? host_threads() : 1)
                .add("stop", stop_rule_name(opt.stop))
                .add("tolerance", opt.tolerance)
                .add("alpha", opt.alpha)
                .add("seed", o.seed)
                .add("check", check);
            if (n != largest) rec.extra.add("progression", false);
            if (opt.stop == StopRule::norm)
                append_shared_time(o.share, std::string("cpu/") + cpu_variant_name(r.variant),
                                   problem_key<T>(n, opt, o.matrices, o.seed), ms.mean, it.mean);
            if (!tut::append_json_line(o.json, rec.json()))
                throw std::runtime_error("cannot append to the JSON file '" + o.json + "'");
        }
    }
    table.print();
    return all_ok;
}

[[noreturn]] void usage_error(const tut::Cli& cli, const std::string& message) {
    std::fprintf(stderr, "%s: error: %s\n\n%s", cli.program().c_str(), message.c_str(), cli.usage().c_str());
    std::exit(tut::kUsageExitCode);
}

}  // namespace

int main(int argc, char** argv) {
    tut::Cli cli("00_cpu_baseline",
                 "CPU baseline of the JOR track: dense Jacobi over-relaxation, scalar, SIMD and OpenMP + SIMD, "
                 "on generated strictly diagonally dominant systems (see tut/jor.hpp).");
    Options o;
    cli.add_int_list("sizes", &o.sizes, "comma-separated sizes N", 1, kMaxN);
    cli.add_int("matrices", &o.matrices, "matrices per size (0, 1, ... of the seed)", 1, 1000);
    cli.add_string("type", &o.type, "element type", {"float", "double", "both"});
    cli.add_string("stop", &o.stop,
                   "stopping rule: norm, ||dx||_inf <= tol ||x||_inf; min, min_j |dx_j| < tol (the 2015 report's)",
                   {"norm", "min"});
    cli.add_string("tol", &o.tol_text, "tolerance of the stopping rule [default: 1e-6 for float, 1e-8 for double]");
    cli.add_real("alpha", &o.alpha, "relaxation factor a, 0 < a <= 1", 0.0, 1.0);
    cli.add_int("max-iter", &o.max_iterations, "iterations at most", 1, 10000000);
    cli.add_int("threads", &o.threads, "OpenMP threads for openmp+simd and the bandwidth (0: all cores)", 0, 4096);
    cli.add_int("seed", &o.seed, "seed of the generated systems", 0, (1ll << 62));
    cli.add_string("variant", &o.variant, "run only this variant", {"scalar", "simd", "openmp+simd", "all"});
    cli.add_string("json", &o.json, "append one JSON record per type, size and variant to this file");
    cli.add_string("share", &o.share, "append the mean times to this file, for the CUDA lessons of a tour run");
    cli.add_flag("fresh-share", &o.fresh_share, "empty the --share file first (the tour's first JOR program)");
    cli.parse_or_exit(argc, argv);

    // Everything the run would refuse is refused here, before any work: the options,
    // the tolerance, and every size against the memory this host has.
    const bool run_float = o.type != "double", run_double = o.type != "float";
    try {
        if (run_float) require_options(solve_options(o, tolerance_for(o, default_tolerance<float>())));
        if (run_double) require_options(solve_options(o, tolerance_for(o, default_tolerance<double>())));
        const double memory = host_available_memory_bytes();
        for (long long n : o.sizes) require_fits(n, run_double ? sizeof(double) : sizeof(float), memory, "host memory");
    } catch (const tut::UsageError& e) {
        usage_error(cli, e.what());
    } catch (const tut::Unsupported& e) {
        usage_error(cli, e.what());
    }

    if (o.fresh_share && !o.share.empty()) {
        if (std::FILE* f = std::fopen(o.share.c_str(), "w")) std::fclose(f);
    }
    try {
#if defined(_OPENMP)
        if (o.threads > 0) omp_set_num_threads(o.threads);
#else
        std::printf("Built without OpenMP: every variant runs on one thread.\n");
#endif
        double buffer_bytes = 0.0;
        const double read_gbs = measure_host_read_gbs(5, &buffer_bytes);
        std::printf("Host: %d OpenMP threads, last-level cache %.0f MiB; read bandwidth %.1f GB/s "
                    "(best of 5 sums over %.0f MiB, all threads)\n",
                    host_threads(), static_cast<double>(host_last_level_cache_bytes()) / 1048576.0, read_gbs, buffer_bytes / 1048576.0);
        bool ok = true;
        if (run_float) ok = run_type<float>(o, read_gbs) && ok;
        if (run_double) ok = run_type<double>(o, read_gbs) && ok;
        std::printf("\nms: mean time to solution over the matrices (std: their standard deviation); iters: mean "
                    "sweeps; %% floor: bandwidth floor per iteration (bytes of A and vectors / %.1f GB/s) / measured "
                    "time per iteration; RMSE, max err: against x* (mean and std over the matrices); rel resid: "
                    "largest ||b - Ax|| / ||b||; check: every solve converged%s.\n",
                    read_gbs, o.stop == "norm" ? " within tut::jor::error_bound()" : "");
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "00_cpu_baseline: error: %s\n", e.what());
        return 1;
    }
}
