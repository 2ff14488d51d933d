/// @file jor.hpp
/// @brief The JOR track's problem: the generator, validation, stopping rules, error
/// measures and the bandwidth floor. Plain C++ that a CUDA kernel can call too.
///
/// JOR (Jacobi over-relaxation) solves A x = b for a dense, strictly diagonally
/// dominant A, from x = 0, one sweep at a time:
///
///     x_j <- (1 - a) x_j + a / A_jj (b_j - sum_{k != j} A_jk x_k),    a = 0.9
///
/// Every sweep reads all of A once: it is a dense matrix-vector product, bound by the
/// bytes of A (see floor_bytes_per_iteration()).
///
/// **The problems.** Sizes N = 1 .. kMaxN, float or double, matrices 0, 1, ... of a seed.
/// Every number the generator makes is a whole multiple of 2^-20 (kUnit):
/// - off-diagonal entries A_jk uniform in [-5, 5];
/// - the diagonal A_jj = S_j + m_j, where S_j = sum_{k != j} |A_jk| is the row's
///   absolute off-diagonal sum and the margin m_j is uniform in [1/4, 1) x (S_j + 1)
///   (margin_units()). Strict dominance (m_j > 0) makes JOR converge for any a in
///   (0, 1]; the margin sets the guaranteed rate: S_j / A_jj < 4/5, so one sweep
///   shrinks the error (max norm) at least by q = (1 - a) + a 4/5 = 0.82 for a = 0.9
///   (contraction_factor() computes q for a stored matrix). A margin proportional to
///   S_j keeps that bound independent of N; a fixed margin would let it creep to 1 as
///   N grows (S_j grows like 2.5 N). The random signs of A_jk make the actual rate far
///   better than the bound: close to 1 - a for large N.
/// - the solution x*_j uniform in [-1, 1], and b = A x*.
///
/// **Why whole multiples of 2^-20.** The entries are integers q times 2^-20 with
/// |q| < 2^23, so float and double hold them exactly (the float and double problems are
/// the same matrix, apart from the rounding of the diagonal in float). The row sums S_j
/// and b = A x* are computed in 64-bit integers, exactly, so they do not depend on the
/// order of summation: a GPU that sums a row in parallel gets the same bits as the CPU.
/// b is then rounded once to double, and from there to the solver's type.
///
/// **Counter-based.** Each number is the hash of (seed, matrix, stream, row, column):
/// splitmix_at(key, i), the i-th output of splitmix64 started at `key`, computed
/// directly. So entry (j, k) of matrix m is computable alone, on the host or on the
/// device, in any order, and always gives the same bits. The host generator here is
/// make_system(); a device generator calls the same TUT_HOST_DEVICE functions.
///
/// **Stopping rules.** StopRule::norm, ||x_new - x_old||_inf <= tol ||x_new||_inf, is the
/// one every lesson uses. StopRule::min, min_j |x_new_j - x_old_j| < tol, is the 2015
/// report's rule, kept to show what it does: it is not a norm, so a single component
/// that happens to settle stops the whole solve early.
#pragma once

#include "check.hpp"  // tut::Unsupported
#include "report.hpp"  // tut::fmt
#include "shared_times.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

/// Marks a function callable from host and device code under nvcc; empty for a plain
/// C++ compiler.
#ifndef TUT_HOST_DEVICE
#if defined(__CUDACC__)
#define TUT_HOST_DEVICE __host__ __device__
#else
#define TUT_HOST_DEVICE
#endif
#endif

namespace tut::jor {

// ---------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------

inline constexpr double kAlpha = 0.9;               ///< the relaxation factor a (the report's)
inline constexpr uint64_t kSeed = 2015;             ///< default seed of the problems
inline constexpr int kMatrices = 10;                ///< matrices per size (the report's)
inline constexpr int kGridBits = 20;                ///< generated numbers are whole multiples of 2^-kGridBits
inline constexpr double kUnit = 1.0 / (1 << kGridBits);  ///< 2^-20
inline constexpr int64_t kEntryUnits = 5ll << kGridBits;     ///< |A_jk| <= 5 (off the diagonal)
inline constexpr int64_t kSolutionUnits = 1ll << kGridBits;  ///< |x*_j| <= 1
/// Largest N: b = A x* stays exact in 64-bit integers up to N = 559 240 (the row's
/// terms sum to at most (15 N + 1) 2^40 in magnitude, below 2^63); 2^19 leaves room. No
/// single memory holds a float system that large (1 TiB), so memory refuses first.
inline constexpr long long kMaxN = 1ll << 19;

/// Where a generated number comes from: each stream is an independent splitmix64 sequence.
enum class Stream : uint32_t { entries = 0, margins = 1, solution = 2 };

/// How a solve decides it is done (see the file comment).
enum class StopRule { norm, min };

inline const char* stop_rule_name(StopRule r) { return r == StopRule::norm ? "norm" : "min"; }

/// "float" or "double".
template <class T>
const char* type_name() {
    return sizeof(T) == sizeof(float) ? "float" : "double";
}

/// Default tolerance: the report's, 1e-6 for float and 1e-8 for double.
template <class T>
double default_tolerance() {
    return sizeof(T) == sizeof(float) ? 1e-6 : 1e-8;
}

/// The size as records and tables write it: "8192 float".
template <class T>
std::string size_text(long long n) {
    return std::to_string(n) + " " + type_name<T>();
}

// ---------------------------------------------------------------------------------------
// The counter-based generator (host and device)
// ---------------------------------------------------------------------------------------

/// splitmix64's output function (Steele, Lea, Flood 2014): a bijection of 64-bit words
/// that mixes every input bit into every output bit.
TUT_HOST_DEVICE inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/// The index-th output (0-based) of splitmix64 started at `key`, without the ones before
/// it: splitmix64 adds the constant 0x9E3779B97F4A7C15 to its state per output, so the
/// state of output i is key + (i + 1) times that constant.
TUT_HOST_DEVICE inline uint64_t splitmix_at(uint64_t key, uint64_t index) {
    return mix64(key + (index + 1) * 0x9E3779B97F4A7C15ull);
}

/// The key of one stream of one matrix: two levels of splitmix_at(), seed then matrix.
TUT_HOST_DEVICE inline uint64_t stream_key(uint64_t seed, uint32_t matrix, Stream stream) {
    return splitmix_at(splitmix_at(seed, matrix), static_cast<uint32_t>(stream));
}

/// A whole number uniform in [-half, half] from the top 32 bits of `h` (multiply-shift:
/// the 32-bit fraction times the range, no division). half < 2^31.
TUT_HOST_DEVICE inline int64_t uniform_units(uint64_t h, int64_t half) {
    const uint64_t range = 2 * static_cast<uint64_t>(half) + 1;
    return static_cast<int64_t>(((h >> 32) * range) >> 32) - half;
}

/// A_jk (j != k) of matrix `matrix`, in units of 2^-20: uniform in [-5, 5].
TUT_HOST_DEVICE inline int64_t offdiag_units(uint64_t seed, uint32_t matrix, uint64_t j, uint64_t k) {
    const uint64_t row_key = splitmix_at(stream_key(seed, matrix, Stream::entries), j);
    return uniform_units(splitmix_at(row_key, k), kEntryUnits);
}

/// The margin m_j, in units, given the row's absolute off-diagonal sum S_j in units:
/// (S_j + 1) times a fraction (256 + 3 r) / 1024, r uniform in 0..255, so the fraction
/// is in [1/4, 1). Integer arithmetic: exact and the same everywhere. At least 2^18
/// units (1/4), so the diagonal always exceeds S_j.
TUT_HOST_DEVICE inline int64_t margin_units(uint64_t seed, uint32_t matrix, uint64_t j, int64_t offdiag_sum_units) {
    const uint64_t r = splitmix_at(stream_key(seed, matrix, Stream::margins), j) >> 56;  // 0..255
    const uint64_t t = static_cast<uint64_t>(offdiag_sum_units) + (1ull << kGridBits);  // S_j + 1
    return static_cast<int64_t>(((t >> 8) * (256 + 3 * r)) >> 2);
}

/// A_jj in units: S_j + m_j.
TUT_HOST_DEVICE inline int64_t diagonal_units(uint64_t seed, uint32_t matrix, uint64_t j, int64_t offdiag_sum_units) {
    return offdiag_sum_units + margin_units(seed, matrix, j, offdiag_sum_units);
}

/// x*_j in units: uniform in [-1, 1].
TUT_HOST_DEVICE inline int64_t solution_units(uint64_t seed, uint32_t matrix, uint64_t j) {
    return uniform_units(splitmix_at(stream_key(seed, matrix, Stream::solution), j), kSolutionUnits);
}

/// A value in units as a double: q 2^-20, rounded once (exact for |q| < 2^53).
TUT_HOST_DEVICE inline double units_to_double(int64_t q) { return static_cast<double>(q) * kUnit; }

/// b_j = sum_k A_jk x*_k from units (2^-20 times 2^-20 = 2^-40 per unit of the sum):
/// rounded once to double.
TUT_HOST_DEVICE inline double rhs_to_double(int64_t q40) { return static_cast<double>(q40) * (kUnit * kUnit); }

// ---------------------------------------------------------------------------------------
// Validation: every refusal happens before any work, with a message that says why
// ---------------------------------------------------------------------------------------

/// A number for a message: "0.9", "1e-06", "nan".
inline std::string number_text(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

/// How a solve is run.
struct SolveOptions {
    double alpha = kAlpha;          ///< relaxation factor, in (0, 1]
    double tolerance = 1e-8;        ///< see StopRule; must be positive and finite
    int max_iterations = 1000;      ///< sweeps at most; >= 1
    StopRule stop = StopRule::norm;
};

/// Throws Unsupported unless 1 <= n <= kMaxN.
inline void require_size(long long n) {
    if (n < 1) throw Unsupported("N = " + std::to_string(n) + ": the system needs at least one unknown (N >= 1)");
    if (n > kMaxN)
        throw Unsupported("N = " + std::to_string(n) + " is larger than the generator supports (N <= " +
                          std::to_string(kMaxN) + ", where b = A x* stays exact in 64-bit integers)");
}

/// Bytes a solve of size n in elements of `element_bytes` needs: A, b, x* (double), and
/// three vectors of the type (x, the new x, the result).
inline double system_bytes(long long n, size_t element_bytes) {
    const double e = static_cast<double>(element_bytes), nn = static_cast<double>(n);
    return nn * nn * e + nn * (4.0 * e + 8.0);
}

/// Throws Unsupported when a system of size n does not fit `capacity_bytes` of `where`
/// ("host memory", "device memory"); a capacity <= 0 means unknown and passes.
inline void require_fits(long long n, size_t element_bytes, double capacity_bytes, const std::string& where) {
    require_size(n);
    const double need = system_bytes(n, element_bytes);
    if (capacity_bytes > 0 && need > capacity_bytes) {
        throw Unsupported("N = " + std::to_string(n) + " (" + (element_bytes == sizeof(float) ? "float" : "double") +
                          ") needs " + std::to_string(static_cast<long long>(need / (1 << 20))) + " MiB, more than the " +
                          std::to_string(static_cast<long long>(capacity_bytes / (1 << 20))) + " MiB of " + where +
                          " available");
    }
}

/// Throws Unsupported for a relaxation factor outside (0, 1], a tolerance that is not
/// positive and finite, or fewer than one iteration.
inline void require_options(const SolveOptions& opt) {
    if (!(opt.alpha > 0.0 && opt.alpha <= 1.0))  // also refuses NaN
        throw Unsupported("relaxation factor a = " + number_text(opt.alpha) +
                          ": JOR needs 0 < a <= 1 (a = 0 never moves; a > 1 is over-relaxation, which "
                          "diagonal dominance does not make convergent)");
    if (!(opt.tolerance > 0.0 && std::isfinite(opt.tolerance)))
        throw Unsupported("tolerance " + number_text(opt.tolerance) + ": must be positive and finite");
    if (opt.max_iterations < 1)
        throw Unsupported("max iterations " + std::to_string(opt.max_iterations) + ": must be at least 1");
}

/// Throws Unsupported when A or b holds a NaN or an infinity, or A has a zero on its
/// diagonal (the sweep divides by A_jj). One pass over A: the cost of one sweep.
template <class T>
void require_finite_system(const T* A, const T* b, long long n) {
    require_size(n);
    for (long long j = 0; j < n; ++j) {
        const T* row = A + static_cast<size_t>(j) * static_cast<size_t>(n);
        for (long long k = 0; k < n; ++k)
            if (!std::isfinite(row[k]))
                throw Unsupported("A(" + std::to_string(j) + ", " + std::to_string(k) + ") is not finite (" +
                                  number_text(static_cast<double>(row[k])) + ")");
        if (row[j] == T(0))
            throw Unsupported("A(" + std::to_string(j) + ", " + std::to_string(j) +
                              ") is zero: JOR divides by the diagonal");
        if (!std::isfinite(b[j]))
            throw Unsupported("b(" + std::to_string(j) + ") is not finite (" + number_text(static_cast<double>(b[j])) + ")");
    }
}

/// Everything a solver checks before it starts: the options, then the system.
template <class T>
void require_solvable(const T* A, const T* b, long long n, const SolveOptions& opt) {
    require_options(opt);
    require_finite_system(A, b, n);
}

// ---------------------------------------------------------------------------------------
// The host generator
// ---------------------------------------------------------------------------------------

/// One generated system, row-major, in the solver's type T.
template <class T>
struct System {
    int n = 0;
    uint64_t seed = kSeed;
    uint32_t matrix = 0;
    std::vector<T> A;              ///< n x n, row-major: A[j * n + k]
    std::vector<T> b;              ///< A x*, computed exactly, rounded once to double, then to T
    std::vector<double> x_star;    ///< the exact solution (exact in float and double)
};

/// Generates matrix `matrix` of size n from `seed` (see the file comment). Rows are
/// independent, so with OpenMP they are generated in parallel; the result is the same
/// bits either way.
template <class T>
System<T> make_system(long long n, uint64_t seed = kSeed, uint32_t matrix = 0) {
    require_size(n);
    System<T> s;
    s.n = static_cast<int>(n);
    s.seed = seed;
    s.matrix = matrix;
    // require_size() has refused n < 1; the max says so to the compiler, which otherwise
    // warns about the vectors of a constant negative n in the checks of that refusal.
    const size_t nn = static_cast<size_t>(std::max<long long>(n, 1));
    s.A.resize(nn * nn);
    s.b.resize(nn);
    s.x_star.resize(nn);
    std::vector<int64_t> xq(nn);
    for (size_t k = 0; k < nn; ++k) {
        xq[k] = solution_units(seed, matrix, k);
        s.x_star[k] = units_to_double(xq[k]);
    }
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
    for (long long jj = 0; jj < n; ++jj) {
        const size_t j = static_cast<size_t>(jj);
        T* row = s.A.data() + j * nn;
        int64_t offdiag_sum = 0, ax = 0;
        for (size_t k = 0; k < nn; ++k) {
            if (k == j) continue;
            const int64_t q = offdiag_units(seed, matrix, j, k);
            row[k] = static_cast<T>(units_to_double(q));  // exact: |q| < 2^23
            offdiag_sum += q < 0 ? -q : q;
            ax += q * xq[k];
        }
        const int64_t d = diagonal_units(seed, matrix, j, offdiag_sum);
        row[j] = static_cast<T>(units_to_double(d));  // exact in double; rounded to nearest in float
        ax += d * xq[j];
        s.b[j] = static_cast<T>(rhs_to_double(ax));
    }
    return s;
}

// ---------------------------------------------------------------------------------------
// Stopping rules
// ---------------------------------------------------------------------------------------

/// What one sweep measured, for the stopping rule: max_j |dx_j|, min_j |dx_j|,
/// max_j |x_new_j|, and whether every new x_j is finite.
struct SweepStats {
    double dx_max = 0.0;
    double dx_min = std::numeric_limits<double>::infinity();
    double x_max = 0.0;
    bool finite = true;
};

/// The stopping test after a sweep. A sweep that produced a NaN or an infinity never
/// stops a solve (a diverging iteration runs to the limit and is reported as not
/// converged).
TUT_HOST_DEVICE inline bool should_stop(StopRule rule, double tolerance, double dx_max, double dx_min, double x_max,
                                        bool finite) {
    if (!finite) return false;
    return rule == StopRule::norm ? dx_max <= tolerance * x_max : dx_min < tolerance;
}

inline bool should_stop(StopRule rule, double tolerance, const SweepStats& s) {
    return should_stop(rule, tolerance, s.dx_max, s.dx_min, s.x_max, s.finite);
}

/// How a solve ended.
struct SolveResult {
    bool converged = false;  ///< the stopping rule held (false: stopped at max_iterations)
    int iterations = 0;      ///< sweeps performed
    SweepStats last;         ///< what the last sweep measured
};

// ---------------------------------------------------------------------------------------
// Errors and residuals (host, in double)
// ---------------------------------------------------------------------------------------

/// Root-mean-square error of x against x*.
template <class T>
double rmse(const T* x, const std::vector<double>& x_star) {
    double sum = 0.0;
    for (size_t j = 0; j < x_star.size(); ++j) {
        const double e = static_cast<double>(x[j]) - x_star[j];
        sum += e * e;
    }
    return x_star.empty() ? 0.0 : std::sqrt(sum / static_cast<double>(x_star.size()));
}

/// Largest |x_j - x*_j| (NaN when some x_j is NaN).
template <class T>
double max_error(const T* x, const std::vector<double>& x_star) {
    double worst = 0.0;
    for (size_t j = 0; j < x_star.size(); ++j) {
        const double e = std::fabs(static_cast<double>(x[j]) - x_star[j]);
        if (!(e <= worst)) worst = e;  // a NaN sticks
    }
    return worst;
}

/// Relative residual ||b - A x||_2 / ||b||_2, in double (A, b and x as stored). Rows
/// in parallel with OpenMP (the last bits then depend on the thread count).
template <class T>
double relative_residual(const T* A, const T* b, const T* x, long long n) {
    double r2 = 0.0, b2 = 0.0;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) reduction(+ : r2, b2)
#endif
    for (long long j = 0; j < n; ++j) {
        const T* row = A + static_cast<size_t>(j) * static_cast<size_t>(n);
        double ax = 0.0;
        for (long long k = 0; k < n; ++k) ax += static_cast<double>(row[k]) * static_cast<double>(x[k]);
        const double r = static_cast<double>(b[j]) - ax;
        r2 += r * r;
        b2 += static_cast<double>(b[j]) * static_cast<double>(b[j]);
    }
    return b2 > 0.0 ? std::sqrt(r2 / b2) : std::sqrt(r2);
}

/// q = ||I - a D^-1 A||_inf = (1 - a) + a max_j S_j / |A_jj|, in double: the factor by
/// which one exact sweep shrinks the error in the max norm, at least. Below 1 for a
/// strictly diagonally dominant A and 0 < a <= 1; at most 0.82 for the generated
/// matrices with a = 0.9.
template <class T>
double contraction_factor(const T* A, long long n, double alpha) {
    double worst = 0.0;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) reduction(max : worst)
#endif
    for (long long j = 0; j < n; ++j) {
        const T* row = A + static_cast<size_t>(j) * static_cast<size_t>(n);
        double off = 0.0;
        for (long long k = 0; k < n; ++k)
            if (k != j) off += std::fabs(static_cast<double>(row[k]));
        worst = std::fmax(worst, off / std::fabs(static_cast<double>(row[j])));
    }
    return (1.0 - alpha) + alpha * worst;
}

/// Unit roundoff u of T: 2^-24 for float, 2^-53 for double.
template <class T>
constexpr double unit_roundoff() {
    return std::numeric_limits<T>::epsilon() / 2;
}

/// An upper bound on ||x - x*||_inf after a solve stopped by StopRule::norm, for any
/// order of summation:
///
///     ||x - x*|| <= (q tol ||x|| + rho) / (1 - q)
///
/// where q is contraction_factor() and rho bounds the rounding error one sweep adds to
/// each x_j. Why: with e_k = x_k - x*, a computed sweep is e_(k+1) = G e_k + d_k with
/// ||G|| = q and ||d_k|| <= rho; writing e_k = e_(k+1) - (x_(k+1) - x_k) gives
/// ||e_(k+1)|| <= q ||e_(k+1)|| + q ||x_(k+1) - x_k|| + rho, and the rule stopped with
/// ||x_(k+1) - x_k|| <= tol ||x_(k+1)||. For rho: the sum of N - 1 products carries an
/// error of at most gamma S_j ||x|| in any order (gamma = (N-1) u / (1 - (N-1) u),
/// Higham, Accuracy and Stability of Numerical Algorithms, 3.1), which a / A_jj turns
/// into at most a gamma ||x||; rounding b (stored in T, |b_j| <= (S_j + A_jj) ||x*||),
/// the diagonal, a / A_jj and the three operations of the update add a few u ||x||
/// more, counted generously as 8 u. `x_norm` is the larger of ||x|| and ||x*||.
/// The bound is worst case; real errors are far smaller (rounding errors mostly
/// cancel: about sqrt(N) u instead of N u).
inline double error_bound(double q, double tolerance, long long n, double alpha, double u, double x_norm) {
    if (!(q < 1.0)) return std::numeric_limits<double>::infinity();
    const double nu = static_cast<double>(n > 1 ? n - 1 : 0) * u;
    const double gamma = nu < 1.0 ? nu / (1.0 - nu) : std::numeric_limits<double>::infinity();
    const double rho = (alpha * gamma + 8.0 * u) * x_norm;
    return (q * tolerance * x_norm + rho) / (1.0 - q);
}

// ---------------------------------------------------------------------------------------
// The bandwidth floor
// ---------------------------------------------------------------------------------------

/// Bytes one sweep must move at least: A once (N^2 elements, diagonal included), x and
/// b read and the new x written (x's N reads per row assumed to hit in cache).
inline double floor_bytes_per_iteration(long long n, size_t element_bytes) {
    const double nn = static_cast<double>(n), e = static_cast<double>(element_bytes);
    return nn * nn * e + 3.0 * nn * e;
}

/// The floor in microseconds per sweep at a measured bandwidth (GB/s, 10^9 bytes/s).
inline double floor_us_per_iteration(long long n, size_t element_bytes, double gbs) {
    return floor_bytes_per_iteration(n, element_bytes) / (gbs * 1e3);
}

// ---------------------------------------------------------------------------------------
// Summaries over the matrices of a size
// ---------------------------------------------------------------------------------------

/// Mean and sample standard deviation (NaN for no values, std 0 for one).
struct MeanStd {
    double mean = std::numeric_limits<double>::quiet_NaN(), std = std::numeric_limits<double>::quiet_NaN();
};

inline MeanStd mean_std(const std::vector<double>& v) {
    MeanStd r;
    if (v.empty()) return r;
    double sum = 0.0;
    for (double x : v) sum += x;
    r.mean = sum / static_cast<double>(v.size());
    double sq = 0.0;
    for (double x : v) sq += (x - r.mean) * (x - r.mean);
    r.std = v.size() > 1 ? std::sqrt(sq / static_cast<double>(v.size() - 1)) : 0.0;
    return r;
}

// ---------------------------------------------------------------------------------------
// Times shared between the programs of a tour run
// ---------------------------------------------------------------------------------------

/// The tour passes the same `--share FILE` to every JOR program (tut/shared_times.hpp):
/// the CPU baseline appends its mean time to solution per variant and problem
/// ("cpu/simd", problem_key(), ms, iterations), and the CUDA lessons read them for their
/// speedup and crossover columns.
using tut::append_shared_time;
using tut::read_shared_time;

/// A problem's name in the shared file: the size and type, and everything else that sets the
/// work of a solve, so that a lesson run with other options than the baseline finds no time
/// rather than one for other work: "8192 float a=0.9 tol=1e-06 max=1000 matrices=10 seed=2015".
template <class T>
std::string problem_key(long long n, const SolveOptions& opt, int matrices, long long seed) {
    return size_text<T>(n) + fmt(" a=%.9g tol=%.9g max=%d matrices=%d seed=%lld", opt.alpha, opt.tolerance,
                                 opt.max_iterations, matrices, seed);
}

/// The CPU baseline's times for one problem (problem_key()), from the shared file.
struct CpuTimes {
    double scalar_ms = std::numeric_limits<double>::quiet_NaN();
    double best_openmp_ms = std::numeric_limits<double>::quiet_NaN();  ///< the faster of simd and openmp+simd
    double best_ms = std::numeric_limits<double>::quiet_NaN();         ///< the fastest CPU version
};

inline CpuTimes read_cpu_times(const std::string& path, const std::string& key) {
    CpuTimes c;
    c.scalar_ms = read_shared_time(path, "cpu/scalar", key).ms;
    const double simd = read_shared_time(path, "cpu/simd", key).ms;
    const double threads = read_shared_time(path, "cpu/openmp+simd", key).ms;
    c.best_openmp_ms = std::fmin(simd, threads);  // fmin ignores one NaN
    c.best_ms = std::fmin(c.scalar_ms, c.best_openmp_ms);
    return c;
}

}  // namespace tut::jor
