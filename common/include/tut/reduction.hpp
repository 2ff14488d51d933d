/// @file reduction.hpp
/// @brief The reduction track's problem: what a variant does and the workspace it draws
/// on, the multi-pass helper, the CPU reference, the error bound, and the Problem a
/// lesson's main() checks and times its variants on.
///
/// Conventions for the whole track:
/// - A lesson sums n elements of one type: `double` (the headline: n = 2^26, 512 MiB),
///   `float`, `int` or `cuDoubleComplex` ("complex"). Inputs are random: uniform in
///   [-1, 1) for double and complex (both parts), uniform in [0, 1) for float (all
///   positive, see random_input()), whole numbers in [-1000, 1000] for int. The sum of
///   zero elements is 0.
/// - A variant is a tut::Variant whose run(in, n, out, workspace) sums the n elements at
///   `in` into the one element at `out` (device pointers) and takes any device scratch it
///   needs from `workspace` (a Workspace, which allocates only when asked for more than it
///   holds: nothing is allocated inside a timed run). run() throws tut::Unsupported,
///   before launching anything, for an input it cannot do. A lesson lists its variants
///   per element type (Variants); lessons 1-7 sum in passes with reduce_in_passes().
/// - The error bound of a sum is set by its *depth*: the longest chain of additions any
///   input element goes through on its way to the result (see allowed_error()): a tree
///   of depth log2(n) is far more accurate than a loop. The checks decide the depth they
///   judge each lesson with; a lesson's main() computes its own for its table.
/// - A lesson's main() checks and times its variants on one Problem (compiled only by
///   nvcc) per element type that --type selects (for_each_type()): one table per type,
///   each variant's bandwidth beside cub::DeviceReduce::Sum measured in the same run, the
///   theoretical DRAM bandwidth and the measured device-to-device copy bandwidth.
#pragma once

#include "bench.hpp"
#include "buffer.hpp"
#include "check.hpp"
#include "cli.hpp"
#include "lesson.hpp"
#include "nvtx.hpp"
#include "random.hpp"
#include "report.hpp"
#include "timer.hpp"

#include <cuComplex.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

/// cuDoubleComplex has cuCadd() but no operators; the track's kernels are templates
/// written with `+` and `+=`, so these let them sum complex numbers too.
__host__ __device__ inline cuDoubleComplex operator+(cuDoubleComplex a, cuDoubleComplex b) {
    return make_cuDoubleComplex(a.x + b.x, a.y + b.y);
}
/// See operator+(cuDoubleComplex, cuDoubleComplex).
__host__ __device__ inline cuDoubleComplex& operator+=(cuDoubleComplex& a, cuDoubleComplex b) {
    a.x += b.x;
    a.y += b.y;
    return a;
}

namespace tut::reduction {

/// The headline size: 2^26 elements (512 MiB of doubles, far larger than any L2).
inline constexpr size_t kDefaultN = size_t(1) << 26;
/// The largest n any lesson accepts: 2^30 elements (8 GiB of doubles). Block indices
/// and per-pass block counts stay far below the 2^31 - 1 grid limit.
inline constexpr size_t kMaxN = size_t(1) << 30;

inline size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
/// Smallest k with 2^k >= x (0 for x <= 1).
inline size_t ceil_log2(size_t x) {
    size_t k = 0;
    while ((size_t(1) << k) < x) ++k;
    return k;
}
inline size_t align_up(size_t x, size_t a) { return ceil_div(x, a) * a; }

// ---------------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------------

/// The track's name of each element type, as `--type` spells it.
template <class T>
constexpr const char* type_name() {
    if constexpr (std::is_same_v<T, double>) return "double";
    else if constexpr (std::is_same_v<T, float>) return "float";
    else if constexpr (std::is_same_v<T, int>) return "int";
    else if constexpr (std::is_same_v<T, cuDoubleComplex>) return "complex";
    else static_assert(sizeof(T) == 0, "the reduction track sums double, float, int and cuDoubleComplex");
}

/// Unit roundoff of the type's additions: 2^-53 for double and complex, 2^-24 for
/// float, 0 for int (integer addition is exact and associative, modulo 2^32).
template <class T>
double unit_roundoff() {
    if constexpr (std::is_same_v<T, float>) return std::ldexp(1.0, -24);
    else if constexpr (std::is_same_v<T, int>) return 0.0;
    else return std::ldexp(1.0, -53);
}

/// Real components of a value: 2 for complex, 1 otherwise.
template <class T>
constexpr int components() {
    return std::is_same_v<T, cuDoubleComplex> ? 2 : 1;
}
/// Component c of a value, as a double.
template <class T>
double component(const T& v, int c) {
    if constexpr (std::is_same_v<T, cuDoubleComplex>) return c == 0 ? v.x : v.y;
    else return static_cast<double>(v);
}

// ---------------------------------------------------------------------------------
// The variant and its workspace
// ---------------------------------------------------------------------------------

/// Device scratch for a variant's run: the partial sums between passes, CUB's temporary
/// storage. A run asks for what it needs with get(); the workspace allocates only when
/// asked for more than it holds, so the untimed runs (the check, the warm-ups) size it
/// and the timed runs reuse it. Memory it allocates is filled with 0xFF bytes (NaN in
/// the floating types), as is all it holds after poison(): a partial sum read before it
/// was written, or an accumulator that was not reset, shows in the result. With guard
/// zones (the checks use them), damage() finds a write outside what was asked for.
class Workspace {
  public:
    /// Holds `reserve` bytes from the start, between guard zones of `guard` bytes
    /// (rounded up to 256, so that what get() returns stays 256-byte aligned).
    explicit Workspace(size_t reserve = 0, size_t guard = 0) : guard_(align_up(guard, 256)) { grow(reserve); }

    /// `bytes` of device scratch, 256-byte aligned; null when it holds none. Valid until
    /// a later get() asks for more, so a run asks once, for all it needs.
    void* get(size_t bytes) {
        if (bytes > capacity_) grow(bytes);
        asked_ = std::max(asked_, bytes);
        return capacity_ ? buffer_.get() + guard_ : nullptr;
    }

    /// Starts counting what a run asks for: asked() is the most one get() asked for since.
    void begin_run() { asked_ = 0; }
    size_t asked() const { return asked_; }

    /// Fills all it holds, guard zones included, with 0xFF bytes.
    void poison() { buffer_.poison(); }

    /// Empty when every byte outside the most asked for (the guard zones and the rest of
    /// what it holds) still holds 0xFF; otherwise the first changed byte's offset from the
    /// start of the scratch (negative: before it).
    std::string damage() const {
        const std::vector<unsigned char> bytes = buffer_.download();
        for (size_t i = 0; i < bytes.size(); ++i) {
            if ((i >= guard_ && i < guard_ + asked_) || bytes[i] == 0xFF) continue;
            return "a write outside the " + std::to_string(asked_) + " bytes of workspace asked for: byte offset " +
                   std::to_string(static_cast<long long>(i) - static_cast<long long>(guard_));
        }
        return {};
    }

  private:
    void grow(size_t bytes) {
        buffer_ = DeviceBuffer<unsigned char>(bytes + 2 * guard_);
        capacity_ = bytes;
        buffer_.poison();
    }

    size_t guard_ = 0, capacity_ = 0, asked_ = 0;
    DeviceBuffer<unsigned char> buffer_;
};

/// What a variant does: sums the n elements at `in` into `*out` (device pointers; `out`
/// is one element), taking any scratch it needs from `workspace`. It enqueues its work
/// on the default stream and returns; it throws tut::Unsupported, before launching
/// anything, for an input it cannot do.
template <class T>
using Run = void(const T* in, size_t n, T* out, Workspace& workspace);

/// One way a lesson sums elements of type T (see tut::Variant), for example
///
///     tut::reduction::Variant<double>{"double", run_sum<double>, tut::kernel_of(reduce_sequential<double>, kThreads)}
template <class T>
using Variant = tut::Variant<Run<T>>;

/// A lesson's variants, per element type (every lesson has all four).
struct Variants {
    std::vector<Variant<double>> f64;
    std::vector<Variant<float>> f32;
    std::vector<Variant<int>> i32;
    std::vector<Variant<cuDoubleComplex>> c64;

    /// The variants of type T.
    template <class T>
    const std::vector<Variant<T>>& of() const {
        if constexpr (std::is_same_v<T, double>) return f64;
        else if constexpr (std::is_same_v<T, float>) return f32;
        else if constexpr (std::is_same_v<T, int>) return i32;
        else return c64;
    }
};

/// Throws Unsupported unless n <= kMaxN. Every variant's run() calls it first.
inline void require_count(size_t n) {
    if (n > kMaxN)
        throw Unsupported("n = " + std::to_string(n) + " is more than the track's limit of 2^30 = " +
                          std::to_string(kMaxN) + " elements");
}

/// Throws Unsupported unless the GPU has room for n elements of T, the workspace of a
/// first pass and the checks' temporaries; returns n.
template <class T>
size_t require_fits(size_t n) {
    if (auto why = device_memory_shortfall(n * sizeof(T) + n * sizeof(T) / 64 + (size_t(256) << 20)); !why.empty())
        throw Unsupported("n = " + std::to_string(n) + " elements of " + type_name<T>() + " " + why);
    return n;
}

// ---------------------------------------------------------------------------------
// Multi-pass reductions (lessons 1-7)
// ---------------------------------------------------------------------------------
//
// A block-level kernel turns `count` elements into one partial sum per block. Run
// again on the partial sums, and again, until a single value is left: the "recursive
// kernel invocation" of Harris's slides. The launches are the global synchronization
// between the levels of the tree.

/// How many blocks (so partial sums) one pass over `count` elements uses. Must return
/// 1 for count == 1 and less than `count` for count > 1.
using BlocksFor = size_t (*)(size_t count);

/// One pass: reduces `count` elements at `in` into `blocks` partial sums at `partials`.
template <class T>
using PassLauncher = void (*)(const T* in, size_t count, T* partials, size_t blocks);

/// The scratch reduce_in_passes() asks for: two arrays of partial sums the passes
/// ping-pong between (pass 1 writes A, pass 2 writes B, pass 3 writes A again, ...); the
/// last pass writes the output. B starts 256 bytes aligned after A.
template <class T>
size_t multi_pass_workspace_bytes(size_t n, BlocksFor blocks_for) {
    require_count(n);
    if (n == 0) return 0;
    const size_t first = blocks_for(n);
    if (first <= 1) return 0;
    const size_t second = blocks_for(first);
    return align_up(first * sizeof(T), 256) + (second > 1 ? second * sizeof(T) : 0);
}

/// Sums n elements with passes of `launch` until one value is left (see above), the
/// partial sums in scratch from `workspace` (multi_pass_workspace_bytes()).
template <class T>
void reduce_in_passes(const T* in, size_t n, T* out, Workspace& workspace, BlocksFor blocks_for,
                      PassLauncher<T> launch) {
    const size_t bytes = multi_pass_workspace_bytes<T>(n, blocks_for);  // (also refuses n > 2^30)
    char* scratch = static_cast<char*>(workspace.get(bytes));
    if (n == 0) {  // the empty sum; all-zero bytes are 0 in every type of the track
        TUT_CUDA(cudaMemsetAsync(out, 0, sizeof(T)));
        return;
    }
    const size_t first = blocks_for(n);
    T* const buffers[2] = {reinterpret_cast<T*>(scratch), reinterpret_cast<T*>(scratch + align_up(first * sizeof(T), 256))};
    const T* src = in;
    size_t count = n;
    for (int pass = 0;; ++pass) {
        const size_t blocks = blocks_for(count);
        if (blocks < 1 || (count > 1 && blocks >= count))
            throw std::logic_error("reduce_in_passes: blocks_for(" + std::to_string(count) + ") = " +
                                   std::to_string(blocks) + " would not shrink the problem");
        T* dst = blocks == 1 ? out : buffers[pass % 2];
        launch(src, count, dst, blocks);
        if (blocks == 1) return;
        src = dst;
        count = blocks;
    }
}

/// Depth of a multi-pass reduction: the sum over passes of `chain(count, blocks)`, the
/// additions an element goes through in a pass over `count` elements in `blocks` blocks.
/// (`blocks_for` may be any callable with BlocksFor's contract.)
template <class Blocks, class Chain>
size_t multi_pass_depth(size_t n, Blocks blocks_for, Chain chain) {
    size_t depth = 0;
    for (size_t count = n; count > 0;) {
        const size_t blocks = blocks_for(count);
        depth += chain(count, blocks);
        if (blocks <= 1 || blocks >= count) break;
        count = blocks;
    }
    return depth;
}

/// Depth of passes that each reduce blocks of `elements_per_block` (a power of two)
/// with a binary tree: log2(elements_per_block) additions per pass (lessons 1-6).
inline size_t tree_depth(size_t n, size_t elements_per_block) {
    return multi_pass_depth(
        n, [&](size_t count) { return ceil_div(count, elements_per_block); },
        [&](size_t, size_t) { return ceil_log2(elements_per_block); });
}

/// Depth of passes in which each of `threads` x blocks threads first adds its share of
/// the elements one after the other (a grid-stride loop), then the block adds its
/// threads' sums with a tree of depth log2(threads) (lesson 7).
template <class Blocks>
size_t grid_stride_depth(size_t n, Blocks blocks_for, size_t threads) {
    return multi_pass_depth(n, blocks_for, [&](size_t count, size_t blocks) {
        return ceil_div(count, blocks * threads) + ceil_log2(threads);
    });
}

/// Blocks of `threads` threads of `kernel` that fit on the whole GPU at once: the
/// SM count times the blocks per SM the occupancy calculator allows. A grid this size
/// is one full wave; a grid-stride loop then gives every thread an equal share.
/// The calculator is asked once per kernel, block size and device, and the answer
/// remembered, so a run() may call this on every launch.
inline unsigned resident_blocks(const void* kernel, unsigned threads) {
    static std::map<std::tuple<int, const void*, unsigned>, unsigned> known;
    int device = 0;
    TUT_CUDA(cudaGetDevice(&device));
    const auto key = std::make_tuple(device, kernel, threads);
    const auto found = known.find(key);
    if (found != known.end()) return found->second;
    int sms = 0, per_sm = 0;
    TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    TUT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(threads), 0));
    const unsigned blocks = static_cast<unsigned>(std::max(1, sms * per_sm));
    known[key] = blocks;
    return blocks;
}

/// The same, from the kernel itself: `resident_blocks(reduce_grid_stride<double>, 256)`.
template <class... Args>
unsigned resident_blocks(void (*kernel)(Args...), unsigned threads) {
    return resident_blocks(reinterpret_cast<const void*>(kernel), threads);
}

// ---------------------------------------------------------------------------------
// Inputs, the CPU reference and the error bound
// ---------------------------------------------------------------------------------

/// Deterministic random input (see the file comment for the ranges).
///
/// Why float's values are all positive: a correct float sum may be off by up to
/// gamma_depth * sum|x_i| (allowed_error()). With random signs, |sum| ~ sqrt(n) while
/// sum|x_i| ~ n, and float's u = 2^-24 is large enough that at n = 2^26 this allowance
/// is bigger than the sum itself for every depth above a few thousand: a result of 0
/// would pass. With no cancellation sum|x_i| = sum, so the allowance is a fraction
/// gamma_depth of the sum and a wrong result shows. double's u = 2^-53 leaves its bound
/// far below |sum| even with random signs, so double and complex keep them.
template <class T>
std::vector<T> random_input(size_t n, uint64_t seed) {
    std::vector<T> v(n);
    SplitMix64 rng(seed);
    for (T& x : v) {
        if constexpr (std::is_same_v<T, int>) x = static_cast<int>(rng.below(2001)) - 1000;
        else if constexpr (std::is_same_v<T, cuDoubleComplex>) {
            const double re = rng.uniform(-1.0, 1.0);
            x = make_cuDoubleComplex(re, rng.uniform(-1.0, 1.0));
        } else if constexpr (std::is_same_v<T, float>) x = static_cast<float>(rng.uniform(0.0, 1.0));
        else x = rng.uniform(-1.0, 1.0);
    }
    return v;
}

/// Neumaier's compensated summation (the "improved Kahan-Babuska" algorithm): the
/// rounding error of every addition is recovered exactly with TwoSum-like arithmetic
/// and added back at the end. Its error is at most 2u|s| + O(n u^2) sum|x_i| (Higham,
/// Accuracy and Stability of Numerical Algorithms, 2nd ed., sec. 4.3): independent of
/// n to first order, unlike the gamma_{n-1} sum|x_i| of a plain loop. Must not be
/// compiled with -ffast-math, which would "simplify" the compensation away.
class CompensatedSum {
  public:
    void add(double x) {
        const double t = sum_ + x;
        if (std::fabs(sum_) >= std::fabs(x)) compensation_ += (sum_ - t) + x;  // low bits of x were lost
        else compensation_ += (x - t) + sum_;                                 // low bits of sum_ were lost
        sum_ = t;
    }
    double value() const { return sum_ + compensation_; }

  private:
    double sum_ = 0, compensation_ = 0;
};

/// What a correct sum must be near: per real component, the compensated sum and the
/// sum of magnitudes that the rounding error is proportional to; for int, the exact sum.
struct Reference {
    size_t n = 0;
    int components = 1;
    bool exact = false;        ///< int: compare bit for bit
    double sum[2] = {0, 0};    ///< compensated sum of each component
    double sum_abs[2] = {0, 0};
    long long exact_sum = 0;   ///< int: the exact sum in 64 bits
};

template <class T>
Reference reference_sum(const T* x, size_t n) {
    Reference r;
    r.n = n;
    r.components = components<T>();
    if constexpr (std::is_same_v<T, int>) {
        r.exact = true;
        for (size_t i = 0; i < n; ++i) r.exact_sum += x[i];
        r.sum[0] = static_cast<double>(r.exact_sum);
        for (size_t i = 0; i < n; ++i) r.sum_abs[0] += std::abs(x[i]);
    } else {
        for (int c = 0; c < r.components; ++c) {
            CompensatedSum s;
            double abs_sum = 0;
            for (size_t i = 0; i < n; ++i) {
                const double v = component(x[i], c);
                s.add(v);
                abs_sum += std::fabs(v);
            }
            r.sum[c] = s.value();
            r.sum_abs[c] = abs_sum;
        }
    }
    return r;
}

template <class T>
Reference reference_sum(const std::vector<T>& x) {
    return reference_sum(x.data(), x.size());
}

/// gamma_k = k u / (1 - k u) (Higham, eq. 3.8); infinity when k u >= 1 (no bound).
inline double gamma(size_t k, double u) {
    const double ku = static_cast<double>(k) * u;
    return ku < 1.0 ? ku / (1.0 - ku) : std::numeric_limits<double>::infinity();
}

/// The largest |GPU result - reference| a correct summation of depth `depth` can have,
/// for one component with reference sum `sum` and sum of magnitudes `sum_abs`:
///
///     gamma_depth(u) * sum|x_i|  +  2 u_d |sum| + 2 n u_d^2 sum|x_i|
///
/// First term: whatever the order, the computed sum is sum_i x_i (1 + e_i), where
/// x_i's factor collects the roundings of the additions on its path to the result, so
/// |e_i| <= gamma_{h_i} with h_i the path length (Higham, sec. 4.2, eq. 4.4 and the
/// remark on pairwise summation). With depth = max h_i, |error| <= gamma_depth sum|x_i|.
/// A tree of depth log2(n) is thus bounded by log2(n) u sum|x|, a loop by n u sum|x|,
/// and atomics add one level per atomic to the same address (their order is arbitrary,
/// so the first value may pass through every later one).
/// Second term: the error of the compensated reference itself (u_d = 2^-53); at
/// n <= 2^30 the n u_d^2 part is below 2^-76 sum|x_i|, negligible but kept for rigour.
/// Using sum|x_i| (not |sum|) matters: random signs cancel, so |sum| ~ sqrt(n) while
/// the rounding errors scale with the magnitudes added, ~ n. The same fact can make the
/// bound useless (larger than |sum|): see random_input() and kLoosestBound.
inline double allowed_error(size_t depth, double u, double sum, double sum_abs, size_t n) {
    const double ud = std::ldexp(1.0, -53);
    return gamma(depth, u) * sum_abs + 2 * ud * std::fabs(sum) + 2 * double(n) * ud * ud * sum_abs;
}

/// The largest allowed_error() judge() accepts to work with, as a fraction of |sum|.
/// The bound is a worst case, so it is never tightened to make a check stricter; but a
/// bound near |sum| would let 0, sum/2 or the sum of half the input pass. Past this
/// fraction judge() fails the result as unjudgeable, whatever it is, so a check that
/// could not have failed says so. With 1/10, any result that is off by a tenth of the
/// sum fails (0, -sum, sum/2, a missing half, a pass of partial sums lost), while the
/// loosest bounds the track uses, for 2^30 floats CUB's depth (cub_depth()) and the
/// checks' depth of the atomic lessons, stay below it on any GPU with 16 SMs or more
/// (~0.03 there, ~0.004 on 132 SMs).
inline constexpr double kLoosestBound = 0.1;

/// Whether a GPU result is correct, and by how much.
struct Judgement {
    bool ok = false;
    bool too_loose = false;  ///< the bound was not below kLoosestBound * |sum|: no verdict possible
    double error = 0;     ///< worst |got - reference| over the components
    double allowed = 0;   ///< the matching allowed_error()
    double relative = 0;  ///< error / sum|x_i| (0 for exact matches)
    std::string text;     ///< one line for a log or a failed check
};

/// int results are exact: two's-complement addition is associative modulo 2^32, so any
/// order gives the exact sum wrapped to 32 bits, whatever the partial sums did.
inline int wrap_to_int32(long long x) { return static_cast<int>(static_cast<uint32_t>(static_cast<uint64_t>(x))); }

/// Judges `got` against the reference for a summation of depth `depth` (see
/// allowed_error()). A floating-point result fails, marked too_loose, when that bound is
/// not below kLoosestBound * |sum| of some component: the check could not have failed.
template <class T>
Judgement judge(const T& got, const Reference& ref, size_t depth) {
    Judgement v;
    char buf[400];
    if constexpr (std::is_same_v<T, int>) {
        const int want = wrap_to_int32(ref.exact_sum);
        v.ok = got == want;
        v.error = std::fabs(double(got) - double(want));
        std::snprintf(buf, sizeof buf, "n = %zu: got %d, exact sum %d%s", ref.n, got, want,
                      v.ok ? "" : " (int sums must be exact)");
        v.text = buf;
        return v;
    } else {
        v.ok = true;
        std::string text;
        for (int c = 0; c < components<T>(); ++c) {
            const double g = component(got, c);
            const double allowed = allowed_error(depth, unit_roundoff<T>(), ref.sum[c], ref.sum_abs[c], ref.n);
            const double err = std::isfinite(g) ? std::fabs(g - ref.sum[c]) : std::numeric_limits<double>::infinity();
            // Not `allowed > ...`: an infinite or NaN bound must count as too loose too.
            const bool too_loose = !(allowed <= kLoosestBound * std::fabs(ref.sum[c]));
            const bool ok = err <= allowed && !too_loose;
            v.too_loose = v.too_loose || too_loose;
            if (c == 0 || err / std::max(allowed, 1e-300) > v.error / std::max(v.allowed, 1e-300)) {
                v.error = err;
                v.allowed = allowed;
                v.relative = ref.sum_abs[c] > 0 ? err / ref.sum_abs[c] : err;
            }
            v.ok = v.ok && ok;
            const char* part = components<T>() == 1 ? "" : c == 0 ? "real part: " : "; imaginary part: ";
            std::snprintf(buf, sizeof buf,
                          "%sn = %zu: got %.17g, reference %.17g, |error| %.3g, allowed %.3g (depth %zu, sum|x| %.6g)%s",
                          part, ref.n, g, ref.sum[c], err, allowed, depth, ref.sum_abs[c],
                          ok ? "" : too_loose ? "" : " WRONG");
            text += buf;
            if (too_loose) {
                std::snprintf(buf, sizeof buf,
                              " CANNOT JUDGE: the allowed error is not below |reference| / %.0f, so even 0 or half "
                              "the sum could pass (the depth is too large for this type and n, or the input cancels)",
                              1 / kLoosestBound);
                text += buf;
            }
        }
        v.text = text;
        return v;
    }
}

/// Poisons the one-element output before a checked run: NaN for floating types, and for
/// int a pattern (-1, or 0x7F7F7F7F when -1 is the expected sum) that the sum is not.
template <class T>
void poison_output(T* out, const Reference& ref) {
    int byte = 0xFF;
    if constexpr (std::is_same_v<T, int>)
        if (wrap_to_int32(ref.exact_sum) == -1) byte = 0x7F;
    TUT_CUDA(cudaMemset(out, byte, sizeof(T)));
}

/// Bytes read by a sum of n elements of T (the one-element write is negligible).
template <class T>
double bytes_read(size_t n) {
    return static_cast<double>(n) * sizeof(T);
}
/// GB/s (1e9 bytes per second) of a sum of n elements of T taking `ms` milliseconds.
template <class T>
double gbs(size_t n, double ms) {
    return bytes_read<T>(n) / (ms * 1e-3) / 1e9;
}

/// Depth bound for cub::DeviceReduce::Sum on a GPU with `sms` multiprocessors (see
/// cub_depth()). CUB's internals are not part of its contract, so this takes only what
/// its design has kept since CUB 1.0 (dispatch_reduce.cuh, agent_reduce.cuh): a first
/// kernel splits the input evenly over a grid of blocks, each thread adding its share
/// one after another; each block adds its threads' sums (shuffle tree, then the warps'
/// sums); a second kernel, one block, adds the block sums the same way. CUB 3.0 sizes
/// that grid at 5 x (blocks per SM) x SMs of >= 256 threads; assuming only 128 threads
/// per SM leaves it a 10x margin. So a thread's share is at most n / (128 SMs), and 1024
/// + SMs generously covers its items within a tile (<= 20), both block reductions
/// (<= 5 + 32 levels each) and the second kernel's loop over the block sums (< SMs).
inline size_t cub_depth_for(size_t n, size_t sms) {
    if (n == 0) return 0;
    return ceil_div(n, 128 * std::max<size_t>(sms, 1)) + std::max<size_t>(sms, 1) + 1024;
}

/// Depth bound used for cub::DeviceReduce::Sum on the current device: cub_depth_for()
/// with its SM count.
inline size_t cub_depth(size_t n) { return cub_depth_for(n, static_cast<size_t>(sm_count())); }

}  // namespace tut::reduction

namespace lesson {
/// Defined by each reduction lesson (lessons/reduction/*/ and solutions/reduction/*/); the checks call it.
tut::reduction::Variants variants();
}  // namespace lesson

// ==== Lesson harness: options, problem, results ====
// It calls CUB, so it needs nvcc: the checks' host-compiled files skip it.
#if defined(__CUDACC__)
#include <cub/device/device_reduce.cuh>

namespace tut::reduction {

/// A reduction lesson's command line; a lesson adds its own to `cli` (lesson 08's --sweep).
struct Options {
    explicit Options(const LessonInfo& lesson)
        : cli(lesson.lesson,
              std::string(lesson.title) + "\nSums n random elements on the GPU; prints GB/s beside cub::DeviceReduce::Sum."),
          lesson(lesson) {
        cli.add_int("n", &n, "number of elements", 1, static_cast<long long>(kMaxN));
        cli.add_string("type", &type, "element type", {"double", "float", "int", "complex", "all"});
        cli.add_int("reruns", &reruns, "runs whose results are compared bit for bit (0: none)", 0, 1000);
    }
    /// Exits 0 on --help; 2 on bad input or a --variant that --type's types lack; 77 without a GPU.
    void parse(int argc, char** argv, const Variants& variants) {
        std::vector<std::string> names;
        for (const auto& of_type :
             {names_of(variants.f64), names_of(variants.f32), names_of(variants.i32), names_of(variants.c64)})
            names.insert(names.end(), of_type.begin(), of_type.end());
        parse_lesson_options(cli, run, argc, argv, lesson, names, [&] {
            if (!wants(variants.f64) && !wants(variants.f32) && !wants(variants.i32) && !wants(variants.c64))
                throw UsageError("--variant '" + run.variant + "' is not a variant of --type " + type);
        });
    }
    /// True when --type selects T and --variant is empty or one of `variants`: T's table runs.
    template <class T>
    bool wants(const std::vector<Variant<T>>& variants) const {
        if (type != "all" && type != type_name<T>()) return false;
        return run.variant.empty() || std::any_of(variants.begin(), variants.end(),
                                                  [&](const Variant<T>& v) { return v.name == run.variant; });
    }

    Cli cli;
    LessonInfo lesson;
    RunOptions run;
    size_t n = kDefaultN;
    std::string type = "double";
    int reruns = 10;
};

/// What the determinism reruns found: how many distinct bit patterns `runs` more runs gave.
struct Reruns {
    int runs = 0;         ///< 0: none were made (--reruns 0, --profile)
    int distinct = -1;    ///< -1 when none were made
    double spread = NAN;  ///< largest - smallest result, over the components
    std::string cell() const { return runs > 0 ? fmt("%d/%d", distinct, runs) : "-"; }
};

/// The ceiling every record is judged against.
inline constexpr const char* kDramPeak = "DRAM bandwidth, theoretical (2 x memory clock x bus width)";

/// One element type's sum as a lesson measures it, with cub::DeviceReduce::Sum measured
/// like its variants in the same run (not under --profile).
template <class T>
class Problem {
  public:
    Problem(Bench& bench, const Options& options, double d2d_gbs)
        : bench_(bench),
          n_(require_fits<T>(options.n)),
          reruns_(bench.run().profile ? 0 : options.reruns),
          d2d_gbs_(d2d_gbs),
          out_(1),
          // a first pass's partial sums and CUB's storage: no run grows it
          workspace_(n_ * sizeof(T) / 64 + 65536) {
        {
            std::vector<T> host = random_input<T>(n_, static_cast<uint64_t>(bench.run().seed));
            if (bench.run().check()) ref_ = reference_sum(host);
            in_ = DeviceBuffer<T>(host);
        }
        if (!bench.run().profile) measure_library();
    }
    /// The L2 flushed before each timed run (but under --profile): a small --n stays honest.
    TimingOptions timing() const { return bench_.timing({0, 0, !bench_.run().profile}); }

    /// One run on a poisoned output and workspace, judged as a sum of depth `depth`.
    template <class R>
    Verdict check(const R& run, size_t depth) {
        poison_output(out_.get(), ref_);
        workspace_.poison();
        this->run(run);
        const Judgement j = judge(out_.download()[0], ref_, depth);
        return j.ok ? passed(ref_.exact ? "ok (exact)" : fmt("ok (%.1e)", j.relative)) : failed(j.text);
    }
    /// Runs `run` once (what the bench times).
    template <class R>
    void run(const R& run) {
        workspace_.begin_run();
        run(in_.get(), n_, out_.get(), workspace_);
    }
    /// --reruns more runs of `run`, their results compared bit for bit.
    template <class R>
    Reruns rerun(const R& run) {
        if (reruns_ <= 0) return {};
        std::set<std::string> bits;
        double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
        for (int i = 0; i < reruns_; ++i) {
            this->run(run);
            const T v = out_.download()[0];
            bits.insert(std::string(reinterpret_cast<const char*>(&v), sizeof v));
            for (int c = 0; c < components<T>(); ++c) {
                lo[c] = std::min(lo[c], component(v, c));
                hi[c] = std::max(hi[c], component(v, c));
            }
        }
        Reruns r{reruns_, static_cast<int>(bits.size()), 0};
        for (int c = 0; c < components<T>(); ++c) r.spread = std::max(r.spread, hi[c] - lo[c]);
        return r;
    }
    /// Prints the problem's title and returns the table: one row per variant, then CUB's.
    Table table() const {
        const LessonInfo& l = bench_.lesson();
        std::printf("\n%s/%s: %s\n  sum of n = %zu elements of %s (%.1f MiB), median of %d runs%s\n", l.track, l.lesson,
                    l.title, n_, type_name<T>(), bytes_read<T>(n_) / 1048576.0, bench_.run().repeats,
                    bench_.run().profile ? "" : ", L2 flushed before each");
        return Table({"variant", "regs", "smem B", "time ms", "GB/s", "% CUB", "% DRAM peak", "% D2D", "speedup",
                      "distinct", "check"});
    }
    /// GB/s beside CUB's, the DRAM peak and the copy bandwidth. Types other than double are
    /// not steps of the tour's progression.
    Result result(const Variant<T>& v, const Timing& t, const Verdict& verdict, size_t depth, const Reruns& reruns) {
        Result out;
        Record& r = out.record;
        r.variant = v.name;
        r.size = std::to_string(n_);
        r.value = gbs<T>(n_, t.median_ms);
        r.unit = "GB/s";
        r.time_ms = t.median_ms;
        r.library = std::string("cub::DeviceReduce::Sum (") + type_name<T>() + ")";
        r.library_value = gbs<T>(n_, library_ms_);
        r.peak = kDramPeak;
        r.peak_value = bench_.device().dram_peak_gbs;
        r.checked = verdict.passed();
        const Resources res = resources_of(v.kernel);
        r.extra.add("type", type_name<T>()).add("elements", static_cast<long long>(n_)).add("bytes", bytes_read<T>(n_))
            .add("d2d_gbs", d2d_gbs_).add("ratio_to_d2d", r.value / d2d_gbs_).add("library_time_ms", library_ms_)
            .add("depth", static_cast<long long>(depth))
            .add("workspace_bytes", static_cast<long long>(workspace_.asked())).add("registers", res.registers)
            .add("static_shared_bytes", static_cast<int>(res.shared_bytes)).add("determinism_runs", reruns.runs)
            .add("distinct_results", reruns.distinct).add("result_spread", reruns.spread).add("check", verdict.cell);
        if (!std::is_same_v<T, double>) r.extra.add("progression", false);
        out.row = {v.name, res.registers >= 0 ? std::to_string(res.registers) : "-",
                   res.shared_bytes >= 0 ? std::to_string(res.shared_bytes) : "-", fmt("%.4f", t.median_ms),
                   fmt("%.0f", r.value), percent(r.ratio_to_library()), percent(r.ratio_to_peak()),
                   percent(r.value / d2d_gbs_), std::isfinite(previous_ms_) ? fmt("%.2fx", previous_ms_ / t.median_ms) : "-",
                   reruns.cell(), verdict.cell};
        previous_ms_ = t.median_ms;
        return out;
    }
    /// CUB's row ("-" throughout under --profile, which does not run it).
    const std::vector<std::string>& library_row() const { return library_row_; }

  private:
    /// CUB on the same input: checked (a failure is its own, not the lesson's), timed, rerun.
    void measure_library() {
        size_t bytes = 0;
        TUT_CUDA(cub::DeviceReduce::Sum(nullptr, bytes, in_.get(), out_.get(), n_));
        const auto library = [bytes](const T* in, size_t n, T* out, Workspace& workspace) {
            size_t b = bytes;
            TUT_CUDA(cub::DeviceReduce::Sum(workspace.get(b), b, in, out, n));
        };
        Verdict verdict{Verdict::State::skipped, "-", ""};
        if (bench_.run().check()) verdict = check(library, cub_depth(n_));
        if (verdict.failed())
            std::fprintf(stderr, "%s [cub::DeviceReduce::Sum]: %s\n", bench_.lesson().lesson, verdict.detail.c_str());
        library_ms_ = bench_.time(std::string("cub/") + type_name<T>(), [&] { run(library); }, timing()).median_ms;
        const double g = gbs<T>(n_, library_ms_);
        library_row_ = {"cub::DeviceReduce::Sum", "-", "-", fmt("%.4f", library_ms_), fmt("%.0f", g), "100.0%",
                        percent(g / bench_.device().dram_peak_gbs), percent(g / d2d_gbs_), "-", rerun(library).cell(),
                        verdict.cell};
    }

    Bench& bench_;
    size_t n_;
    int reruns_;
    double d2d_gbs_;
    Reference ref_;
    DeviceBuffer<T> in_;
    DeviceBuffer<T> out_;
    Workspace workspace_;
    double library_ms_ = NAN, previous_ms_ = NAN;
    std::vector<std::string> library_row_{"cub::DeviceReduce::Sum", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"};
};

/// Measures the copy bandwidth once, then calls `body(problem, variants)` for each element
/// type that --type and --variant select: one table per type.
template <class Body>
void for_each_type(Bench& bench, const Options& options, const Variants& variants, Body&& body) {
    const double d2d_gbs = bench.run().profile ? NAN : measure_d2d_bandwidth_gbs();
    if (!bench.run().profile) std::printf("Measured device-to-device cudaMemcpy: %.0f GB/s (read + write)\n", d2d_gbs);
    const auto measure = [&](auto element) {
        using T = decltype(element);
        if (!options.wants(variants.of<T>())) return;
        Problem<T> problem(bench, options, d2d_gbs);
        body(problem, variants.of<T>());
    };
    measure(double{}); measure(float{}); measure(int{}); measure(cuDoubleComplex{});
}

}  // namespace tut::reduction
#endif  // __CUDACC__
