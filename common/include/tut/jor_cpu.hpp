/// @file jor_cpu.hpp
/// @brief The JOR track's CPU solvers (the 2015 report's three CPU versions) and the
/// host's read bandwidth, the CPU's ceiling.
///
/// Three variants of one sweep, x_j <- (1 - a) x_j + a / A_jj (b_j - sum_{k != j} A_jk x_k),
/// all summing in the solver's type T (float sums in float, as the report did):
/// - `scalar`: the sum in order k = 0, 1, ..., N - 1, one addition after the other. The
///   compiler may not reorder it without -ffast-math, which this header refuses.
/// - `simd`: the same loop under `#pragma omp simd reduction(+ : sum)`, which allows
///   the compiler to keep one partial sum per vector lane and add the lanes at the end.
/// - `openmp+simd`: rows shared among all host threads (`#pragma omp parallel for`),
///   each row summed as in `simd`.
///
/// The sum leaves out the diagonal term, as the report's formula does. That matters in
/// float: A_jj x_j is by far the largest term (A_jj > S_j, the sum of the others'
/// sizes), and a running sum that included it would round every later addition at its
/// size (docs/experiments/jor.md measures how much).
///
/// Built without OpenMP, the pragmas are ignored and every variant runs the scalar loop
/// on one thread.
#pragma once

#include "jor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#if defined(__FAST_MATH__)
#error "tut/jor_cpu.hpp: the scalar JOR variant needs strict floating point; build without -ffast-math"
#endif

namespace tut::jor {

/// The CPU versions of the report.
enum class CpuVariant { scalar, simd, threads };

inline const char* cpu_variant_name(CpuVariant v) {
    switch (v) {
        case CpuVariant::scalar: return "scalar";
        case CpuVariant::simd: return "simd";
        default: return "openmp+simd";
    }
}

/// All three, in the order the baseline runs them.
inline std::vector<CpuVariant> cpu_variants() { return {CpuVariant::scalar, CpuVariant::simd, CpuVariant::threads}; }

/// Threads an OpenMP parallel region would use (1 without OpenMP).
inline int host_threads() {
#if defined(_OPENMP)
    return omp_get_max_threads();
#else
    return 1;
#endif
}

// ---------------------------------------------------------------------------------------
// One row: sum_{k != j} A_jk x_k
// ---------------------------------------------------------------------------------------

/// In order, one addition after another: the reference rounding.
template <class T>
T offdiag_sum_scalar(const T* row, const T* x, int n, int j) {
    T sum = 0;
    for (int k = 0; k < j; ++k) sum += row[k] * x[k];
    for (int k = j + 1; k < n; ++k) sum += row[k] * x[k];
    return sum;
}

/// The same sum with one partial sum per SIMD lane, added together at the end.
template <class T>
T offdiag_sum_simd(const T* row, const T* x, int n, int j) {
    T sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int k = 0; k < j; ++k) sum += row[k] * x[k];
#pragma omp simd reduction(+ : sum)
    for (int k = j + 1; k < n; ++k) sum += row[k] * x[k];
    return sum;
}

/// The new x_j from the off-diagonal sum.
template <class T>
T jor_update(T x_j, T a_jj, T b_j, T offdiag_sum, T alpha) {
    return (T(1) - alpha) * x_j + alpha / a_jj * (b_j - offdiag_sum);
}

/// Folds one new component into the sweep's statistics.
template <class T>
void account(SweepStats& s, T x_new, T x_old) {
    const double dx = std::fabs(static_cast<double>(x_new) - static_cast<double>(x_old));
    s.dx_max = std::fmax(s.dx_max, dx);
    s.dx_min = std::fmin(s.dx_min, dx);
    s.x_max = std::fmax(s.x_max, std::fabs(static_cast<double>(x_new)));
    s.finite = s.finite && std::isfinite(x_new);
}

// ---------------------------------------------------------------------------------------
// One sweep, x_new from x_old
// ---------------------------------------------------------------------------------------

template <class T>
SweepStats sweep_scalar(const T* A, const T* b, const T* x_old, T* x_new, int n, T alpha) {
    SweepStats s;
    for (int j = 0; j < n; ++j) {
        const T* row = A + static_cast<size_t>(j) * static_cast<size_t>(n);
        x_new[j] = jor_update(x_old[j], row[j], b[j], offdiag_sum_scalar(row, x_old, n, j), alpha);
        account(s, x_new[j], x_old[j]);
    }
    return s;
}

template <class T>
SweepStats sweep_simd(const T* A, const T* b, const T* x_old, T* x_new, int n, T alpha) {
    SweepStats s;
    for (int j = 0; j < n; ++j) {
        const T* row = A + static_cast<size_t>(j) * static_cast<size_t>(n);
        x_new[j] = jor_update(x_old[j], row[j], b[j], offdiag_sum_simd(row, x_old, n, j), alpha);
        account(s, x_new[j], x_old[j]);
    }
    return s;
}

/// Rows in static blocks over all threads; the statistics are combined by reductions.
template <class T>
SweepStats sweep_threads(const T* A, const T* b, const T* x_old, T* x_new, int n, T alpha) {
    double dx_max = 0.0, dx_min = std::numeric_limits<double>::infinity(), x_max = 0.0;
    int finite = 1;
#pragma omp parallel for schedule(static) reduction(max : dx_max, x_max) reduction(min : dx_min, finite)
    for (int j = 0; j < n; ++j) {
        const T* row = A + static_cast<size_t>(j) * static_cast<size_t>(n);
        const T x = jor_update(x_old[j], row[j], b[j], offdiag_sum_simd(row, x_old, n, j), alpha);
        x_new[j] = x;
        const double dx = std::fabs(static_cast<double>(x) - static_cast<double>(x_old[j]));
        dx_max = std::fmax(dx_max, dx);
        dx_min = std::fmin(dx_min, dx);
        x_max = std::fmax(x_max, std::fabs(static_cast<double>(x)));
        finite = std::min(finite, std::isfinite(x) ? 1 : 0);
    }
    SweepStats s;
    s.dx_max = dx_max;
    s.dx_min = dx_min;
    s.x_max = x_max;
    s.finite = finite != 0;
    return s;
}

/// The iteration alone, from x = 0, for timing: the caller has already called
/// require_solvable() on this system and these options. See solve_cpu().
template <class T>
SolveResult iterate_cpu(CpuVariant v, const T* A, const T* b, int n, const SolveOptions& opt, T* x) {
    std::vector<T> x_old(static_cast<size_t>(n), T(0)), x_new(static_cast<size_t>(n), T(0));
    const T alpha = static_cast<T>(opt.alpha);
    SolveResult r;
    for (int it = 1; it <= opt.max_iterations; ++it) {
        if (v == CpuVariant::scalar)
            r.last = sweep_scalar(A, b, x_old.data(), x_new.data(), n, alpha);
        else if (v == CpuVariant::simd)
            r.last = sweep_simd(A, b, x_old.data(), x_new.data(), n, alpha);
        else
            r.last = sweep_threads(A, b, x_old.data(), x_new.data(), n, alpha);
        x_old.swap(x_new);  // x_old now holds this sweep's result
        r.iterations = it;
        if (should_stop(opt.stop, opt.tolerance, r.last)) {
            r.converged = true;
            break;
        }
    }
    std::copy(x_old.begin(), x_old.end(), x);
    return r;
}

/// Solves A x = b (A row-major, n x n) from x = 0 with variant `v`; the result is in
/// `x` (n elements), the last iterate when the solve did not converge. Throws
/// Unsupported (require_solvable()) before any work for a system or options it cannot
/// solve. A diverging iteration (A not diagonally dominant) runs to max_iterations and
/// returns converged = false.
template <class T>
SolveResult solve_cpu(CpuVariant v, const T* A, const T* b, int n, const SolveOptions& opt, T* x) {
    require_solvable(A, b, n, opt);
    return iterate_cpu(v, A, b, n, opt, x);
}

// ---------------------------------------------------------------------------------------
// The host's ceiling: read bandwidth and memory
// ---------------------------------------------------------------------------------------

/// Size of the last-level cache in bytes as the C library reports it (0 if unknown).
inline long host_last_level_cache_bytes() {
    long bytes = 0;
#if defined(_SC_LEVEL3_CACHE_SIZE)
    bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
#if defined(_SC_LEVEL2_CACHE_SIZE)
    if (bytes <= 0) bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return bytes > 0 ? bytes : 0;
}

/// Memory available to a new allocation: MemAvailable from /proc/meminfo when it can be
/// read, else the physical memory; 0 when neither is known.
inline double host_available_memory_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    double kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024.0;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

/// The host's read bandwidth, GB/s: the best of `repeats` timed sums over a buffer of
/// doubles much larger than the last-level cache (4 times the cache, at least 512 MiB
/// and at most 2 GiB), read by all threads, each summing the part it also wrote first
/// (so, on a machine with several memory nodes, from its own node). `bytes_used`, if
/// given, receives the buffer size.
inline double measure_host_read_gbs(int repeats = 5, double* bytes_used = nullptr) {
    const size_t cache = static_cast<size_t>(host_last_level_cache_bytes());
    const size_t bytes = std::min<size_t>(size_t(2) << 30, std::max<size_t>(size_t(512) << 20, 4 * cache));
    const long long count = static_cast<long long>(bytes / sizeof(double));
    std::unique_ptr<double[]> data(new double[static_cast<size_t>(count)]);
    double* p = data.get();
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < count; ++i) p[i] = 1.0 + static_cast<double>(i & 7);
    double best = 0.0;
    volatile double keep = 0.0;  // the sums are used, so the loops cannot be dropped
    for (int r = 0; r < std::max(1, repeats); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        double sum = 0.0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum)
        for (long long i = 0; i < count; ++i) sum += p[i];
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        keep = sum;
        best = std::max(best, static_cast<double>(bytes) / s / 1e9);
    }
    (void)keep;
    if (bytes_used) *bytes_used = static_cast<double>(bytes);
    return best;
}

}  // namespace tut::jor
