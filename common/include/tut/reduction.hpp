/// @file reduction.hpp
/// @brief The reduction track's shared plumbing: the variant interface, multi-pass
/// helpers, the CPU reference, the error bound, and the driver every lesson's main() calls.
///
/// Conventions for the whole track:
/// - A lesson sums n elements of one type: `double` (the headline: n = 2^26, 512 MiB),
///   `float`, `int` or `cuDoubleComplex` ("complex"). Inputs are random: uniform in
///   [-1, 1) for double and complex (both parts), uniform in [0, 1) for float (all
///   positive, see random_input()), whole numbers in [-1000, 1000] for int. The sum of
///   zero elements is 0.
/// - A lesson exposes each kernel as a `tut::reduction::Variant` of one type, whose
///   fields it sets by name: a name and `run(in, n, out, workspace)` taking device
///   pointers; `out` is one element. Like CUB, a variant says how much device scratch it
///   needs (`workspace_bytes(n)`) and the caller provides it, so nothing is allocated
///   inside a timed run. run() throws tut::Unsupported, before launching anything, for an
///   input it cannot do. Lessons 1-7 get run() and workspace_bytes() from
///   multi_pass_variant().
/// - A variant also states its *depth*: the longest chain of additions any input
///   element goes through on its way to the result. The error bound is set by it
///   (see allowed_error()): a tree of depth log2(n) is far more accurate than a loop.
/// - The lesson driver (lesson_main(), compiled only by nvcc) prints each variant's
///   bandwidth beside cub::DeviceReduce::Sum measured in the same run, the theoretical
///   DRAM bandwidth and the measured device-to-device copy bandwidth.
#pragma once

#include "buffer.hpp"
#include "check.hpp"
#include "lesson.hpp"
#include "nvtx.hpp"
#include "random.hpp"
#include "report.hpp"
#include "timer.hpp"

#include <cuComplex.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
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
// The variant interface
// ---------------------------------------------------------------------------------

/// One kernel of a lesson, for one element type `T`. A lesson sets the fields by name:
///
///     tut::reduction::Variant<double> v;
///     v.name = "double, atomic per warp";
///     v.run = run_per_warp<double>;
///     v.depth = depth_per_warp<double>;
///     v.kernel = tut::reduction::kernel_id(reduce_atomic_per_warp<double>);
template <class T>
struct Variant {
    std::string name;  ///< e.g. "double" or "double2"; unique within the lesson
    /// Sums n elements at `in` into `*out` (device pointers). Enqueues work on the
    /// default stream and returns; throws tut::Unsupported before launching for an
    /// input it cannot handle. `workspace` holds workspace_bytes(n) bytes (may be null if 0).
    std::function<void(const T* in, size_t n, T* out, void* workspace)> run;
    /// Device scratch run() needs for n elements (partial sums), in bytes; empty means none.
    std::function<size_t(size_t n)> workspace_bytes;
    /// Longest chain of additions an input element goes through (see allowed_error());
    /// empty means n, the chain of a plain loop.
    std::function<size_t(size_t n)> depth;
    /// The main kernel, for the registers / shared memory columns (optional): kernel_id(kernel).
    const void* kernel = nullptr;
};

/// All variants of a lesson, by element type. A lesson leaves a type empty when it does not support it.
struct Variants {
    std::vector<Variant<double>> f64;
    std::vector<Variant<float>> f32;
    std::vector<Variant<int>> i32;
    std::vector<Variant<cuDoubleComplex>> c64;

    /// A copy of the variants of type T.
    template <class T>
    std::vector<Variant<T>> of() const {
        if constexpr (std::is_same_v<T, double>) return f64;
        else if constexpr (std::is_same_v<T, float>) return f32;
        else if constexpr (std::is_same_v<T, int>) return i32;
        else return c64;
    }
};

/// The handle the CUDA runtime knows a kernel by (cudaFuncGetAttributes, the occupancy
/// calculator), from the kernel itself: `kernel_id(reduce_sequential<double>)`.
template <class... Args>
const void* kernel_id(void (*kernel)(Args...)) {
    return reinterpret_cast<const void*>(kernel);
}

/// Throws Unsupported unless n <= kMaxN. Every variant's run() calls it first.
inline void require_count(size_t n) {
    if (n > kMaxN)
        throw Unsupported("n = " + std::to_string(n) + " is more than the track's limit of 2^30 = " +
                          std::to_string(kMaxN) + " elements");
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

/// Scratch for reduce_in_passes(): two arrays of partial sums the passes ping-pong
/// between (pass 1 writes A, pass 2 writes B, pass 3 writes A again, ...); the last
/// pass writes the output. A is 256-byte aligned, as cudaMalloc returns it.
template <class T>
size_t multi_pass_workspace_bytes(size_t n, BlocksFor blocks_for) {
    require_count(n);
    if (n == 0) return 0;
    const size_t first = blocks_for(n);
    if (first <= 1) return 0;
    const size_t second = blocks_for(first);
    return align_up(first * sizeof(T), 256) + (second > 1 ? second * sizeof(T) : 0);
}

/// Sums n elements with passes of `launch` until one value is left (see above).
template <class T>
void reduce_in_passes(const T* in, size_t n, T* out, void* workspace, BlocksFor blocks_for, PassLauncher<T> launch) {
    require_count(n);
    if (n == 0) {  // the empty sum; all-zero bytes are 0 in every type of the track
        TUT_CUDA(cudaMemsetAsync(out, 0, sizeof(T)));
        return;
    }
    const size_t first = blocks_for(n);
    char* scratch = static_cast<char*>(workspace);
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
template <class Chain>
size_t multi_pass_depth(size_t n, BlocksFor blocks_for, Chain chain) {
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
inline size_t tree_depth(size_t n, BlocksFor blocks_for, size_t elements_per_block) {
    return multi_pass_depth(n, blocks_for, [&](size_t, size_t) { return ceil_log2(elements_per_block); });
}

/// Depth of passes in which each of `threads` x blocks threads first adds its share of
/// the elements one after the other (a grid-stride loop), then the block adds its
/// threads' sums with a tree of depth log2(threads) (lesson 7).
inline size_t grid_stride_depth(size_t n, BlocksFor blocks_for, size_t threads) {
    return multi_pass_depth(n, blocks_for, [&](size_t count, size_t blocks) {
        return ceil_div(count, blocks * threads) + ceil_log2(threads);
    });
}

/// The run() and workspace_bytes() of a multi-pass reduction (lessons 1-7): passes of
/// `launch_pass`, each over the previous pass's partial sums, until one value is left
/// (reduce_in_passes()), in the scratch they need (multi_pass_workspace_bytes()). The
/// lesson adds the name, the depth and the kernel.
template <class T>
Variant<T> multi_pass_variant(BlocksFor blocks_for, PassLauncher<T> launch_pass) {
    Variant<T> v;
    v.run = [blocks_for, launch_pass](const T* in, size_t n, T* out, void* workspace) {
        reduce_in_passes<T>(in, n, out, workspace, blocks_for, launch_pass);
    };
    v.workspace_bytes = [blocks_for](size_t n) { return multi_pass_workspace_bytes<T>(n, blocks_for); };
    return v;
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
/// loosest bound the lessons use, CUB's depth (cub_depth()) for 2^30 floats, stays
/// below it on any GPU with 16 SMs or more (~0.03 there, ~0.004 on 132 SMs).
inline constexpr double kLoosestBound = 0.1;

/// Whether a GPU result is correct, and by how much.
struct Verdict {
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
Verdict judge(const T& got, const Reference& ref, size_t depth) {
    Verdict v;
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

/// An optional block x grid sweep of one `double` kernel, run with --sweep (lesson 8).
/// The lesson sets the fields by name.
struct Sweep {
    /// Sums n doubles at `in` into `*out` with `blocks` blocks of `threads` threads,
    /// including whatever zeroing of *out it needs.
    std::function<void(const double* in, size_t n, double* out, unsigned threads, unsigned blocks)> launch;
    /// Depth of that summation, for the check.
    std::function<size_t(size_t n, unsigned threads, unsigned blocks)> depth;
    std::string what;  ///< which kernel, for the table's title
};

}  // namespace tut::reduction

namespace lesson {
/// Defined by each reduction lesson (lessons/reduction/*/ and solutions/reduction/*/); the checks call it.
tut::reduction::Variants reduction_variants();
}  // namespace lesson

// ---------------------------------------------------------------------------------
// The lesson driver: needs nvcc (it calls CUB), and only a lesson's main() uses it, so
// the checks' host-compiled files skip it.
// ---------------------------------------------------------------------------------
#if defined(__CUDACC__)
#include <cub/device/device_reduce.cuh>

namespace tut::reduction {

/// cub::DeviceReduce::Sum with its temporary storage allocated once: the library
/// baseline every lesson is measured against.
template <class T>
class CubSum {
  public:
    explicit CubSum(size_t n) : n_(n) {
        TUT_CUDA(cub::DeviceReduce::Sum(nullptr, bytes_, static_cast<const T*>(nullptr), static_cast<T*>(nullptr), n_));
        temp_ = DeviceBuffer<unsigned char>(bytes_);
    }
    void operator()(const T* in, T* out) {
        size_t bytes = bytes_;
        TUT_CUDA(cub::DeviceReduce::Sum(temp_.get(), bytes, in, out, n_));
    }

  private:
    size_t n_ = 0, bytes_ = 0;
    DeviceBuffer<unsigned char> temp_;
};

/// Runs `work` `runs` times, reading the one-element result back after each, and
/// counts the distinct bit patterns: 1 means run-to-run identical.
template <class T, class Work>
std::pair<int, double> distinct_results(Work&& work, const T* out, int runs) {
    std::vector<T> seen;
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int r = 0; r < runs; ++r) {
        work();
        T v{};
        TUT_CUDA(cudaMemcpy(&v, out, sizeof(T), cudaMemcpyDeviceToHost));
        bool fresh = true;
        for (const T& s : seen) fresh = fresh && std::memcmp(&s, &v, sizeof(T)) != 0;
        if (fresh) seen.push_back(v);
        for (int c = 0; c < components<T>(); ++c) {
            lo[c] = std::min(lo[c], component(v, c));
            hi[c] = std::max(hi[c], component(v, c));
        }
    }
    double spread = 0;
    for (int c = 0; c < components<T>(); ++c) spread = std::max(spread, hi[c] - lo[c]);
    return {static_cast<int>(seen.size()), runs > 0 ? spread : NAN};
}

/// What every type's table shares.
struct DriverContext {
    const LessonInfo& info;
    size_t n;
    const RunOptions& run;
    int determinism_runs;
    const DeviceFacts& dev;
    double d2d_gbs;
};

/// Registers and static shared memory of a kernel, or {-1, -1} if unknown.
inline std::pair<int, int> kernel_resources(const void* kernel) {
    if (!kernel) return {-1, -1};
    cudaFuncAttributes attr{};
    TUT_CUDA(cudaFuncGetAttributes(&attr, kernel));
    return {attr.numRegs, static_cast<int>(attr.sharedSizeBytes)};
}

/// Measures, checks and prints every variant of one type. Returns false when a check failed.
template <class T>
bool run_type(const DriverContext& ctx, const std::vector<Variant<T>>& variants) {
    const size_t n = ctx.n;
    const RunOptions& run = ctx.run;
    std::vector<const Variant<T>*> chosen;
    for (const Variant<T>& v : variants)
        if (run.variant.empty() || v.name == run.variant) chosen.push_back(&v);
    if (chosen.empty()) {
        if (variants.empty())
            std::printf("\n%s/%s: no %s variant in this lesson (see its README)\n", ctx.info.track, ctx.info.lesson,
                        type_name<T>());
        return true;
    }
    if (auto why = device_memory_shortfall(n * sizeof(T) + n * sizeof(T) / 64 + (size_t(256) << 20)); !why.empty())
        throw Unsupported("n = " + std::to_string(n) + " elements of " + type_name<T>() + " " + why);

    Reference ref;
    DeviceBuffer<T> in;
    {
        std::vector<T> host = random_input<T>(n, static_cast<uint64_t>(run.seed));
        if (run.check()) ref = reference_sum(host);
        in = DeviceBuffer<T>(host);
    }
    DeviceBuffer<T> out(1);
    // The input is far larger than L2 at the default size; flushing keeps small --n honest too.
    const TimingOptions timing{run.warmup, run.repeats, !run.profile};
    const int det_runs = run.profile ? 0 : ctx.determinism_runs;
    const std::string prefix = std::string(ctx.info.track) + "/" + ctx.info.lesson + "/";

    double library_gbs = NAN, library_ms = NAN;
    std::string library_verdict = "-", library_distinct = "-";
    if (!run.profile) {
        CubSum<T> cub(n);
        if (run.check()) {
            poison_output(out.get(), ref);
            cub(in.get(), out.get());
            T got{};
            TUT_CUDA(cudaMemcpy(&got, out.get(), sizeof(T), cudaMemcpyDeviceToHost));
            const Verdict v = judge(got, ref, cub_depth(n));
            library_verdict = v.ok ? (ref.exact ? "ok (exact)" : fmt("ok (%.1e)", v.relative)) : "FAILED";
            if (!v.ok) std::fprintf(stderr, "%s [cub::DeviceReduce::Sum]: %s\n", ctx.info.lesson, v.text.c_str());
        }
        NvtxRange range(prefix + "cub/" + type_name<T>());
        const Timing t = time_gpu([&] { cub(in.get(), out.get()); }, timing);
        library_ms = t.median_ms;
        library_gbs = gbs<T>(n, t.median_ms);
        if (det_runs > 0) {
            auto [distinct, spread] = distinct_results<T>([&] { cub(in.get(), out.get()); }, out.get(), det_runs);
            library_distinct = fmt("%d/%d", distinct, det_runs);
            (void)spread;
        }
    }

    std::printf("\n%s/%s: %s\n  sum of n = %zu elements of %s (%.1f MiB), median of %d runs%s\n", ctx.info.track,
                ctx.info.lesson, ctx.info.title, n, type_name<T>(), bytes_read<T>(n) / 1048576.0, run.repeats,
                timing.flush_l2 ? ", L2 flushed before each" : "");
    Table table({"variant", "regs", "smem B", "time ms", "GB/s", "% CUB", "% DRAM peak", "% D2D", "speedup",
                 "distinct", "check"});
    bool all_ok = true;
    double previous_ms = NAN;
    for (const Variant<T>* vp : chosen) {
        const Variant<T>& v = *vp;
        const size_t ws_bytes = v.workspace_bytes ? v.workspace_bytes(n) : 0;
        DeviceBuffer<unsigned char> workspace(ws_bytes);
        auto once = [&] { v.run(in.get(), n, out.get(), workspace.get()); };
        const size_t depth = v.depth ? v.depth(n) : n;
        std::string verdict = "skipped";
        if (run.check()) {
            poison_output(out.get(), ref);
            workspace.poison();
            once();
            T got{};
            TUT_CUDA(cudaMemcpy(&got, out.get(), sizeof(T), cudaMemcpyDeviceToHost));
            const Verdict c = judge(got, ref, depth);
            verdict = c.ok ? (ref.exact ? "ok (exact)" : fmt("ok (%.1e)", c.relative)) : "FAILED";
            if (!c.ok) {
                all_ok = false;
                std::fprintf(stderr, "%s [%s]: %s\n", ctx.info.lesson, v.name.c_str(), c.text.c_str());
            }
        }
        Timing t;
        {
            NvtxRange range(prefix + v.name);
            t = time_gpu(once, timing);
        }
        int distinct = 0;
        double spread = NAN;
        if (det_runs > 0) std::tie(distinct, spread) = distinct_results<T>(once, out.get(), det_runs);

        auto [regs, smem] = kernel_resources(v.kernel);
        Record r;
        r.track = ctx.info.track;
        r.lesson = ctx.info.lesson;
        r.variant = v.name;
        r.size = std::to_string(n);
        r.value = gbs<T>(n, t.median_ms);
        r.unit = "GB/s";
        r.time_ms = t.median_ms;
        r.library = std::string("cub::DeviceReduce::Sum (") + type_name<T>() + ")";
        r.library_value = library_gbs;
        r.peak = "DRAM bandwidth, theoretical (2 x memory clock x bus width)";
        r.peak_value = ctx.dev.dram_peak_gbs;
        r.checked = run.check() && verdict != "FAILED";
        const double ratio_d2d = ctx.d2d_gbs > 0 ? r.value / ctx.d2d_gbs : NAN;
        r.extra.add("type", type_name<T>())
            .add("elements", static_cast<long long>(n))
            .add("bytes", bytes_read<T>(n))
            .add("d2d_gbs", ctx.d2d_gbs)
            .add("ratio_to_d2d", ratio_d2d)
            .add("library_time_ms", library_ms)
            .add("depth", static_cast<long long>(depth))
            .add("workspace_bytes", static_cast<long long>(ws_bytes))
            .add("registers", regs)
            .add("static_shared_bytes", smem)
            .add("determinism_runs", det_runs)
            .add("distinct_results", det_runs > 0 ? distinct : -1)
            .add("result_spread", spread)
            .add("check", verdict);
        // The track's progression (the tour's table and plots) follows the double
        // headline; the other types are measured beside it.
        if (!std::is_same_v<T, double>) r.extra.add("progression", false);
        table.add_row({v.name, regs >= 0 ? std::to_string(regs) : "-", smem >= 0 ? std::to_string(smem) : "-",
                       fmt("%.4f", t.median_ms), fmt("%.0f", r.value), percent(r.ratio_to_library()),
                       percent(r.ratio_to_peak()), percent(ratio_d2d),
                       std::isfinite(previous_ms) ? fmt("%.2fx", previous_ms / t.median_ms) : "-",
                       det_runs > 0 ? fmt("%d/%d", distinct, det_runs) : "-", verdict});
        previous_ms = t.median_ms;
        append_record(ctx.info.lesson, run.json, r);
    }
    if (std::isfinite(library_gbs))
        table.add_row({"cub::DeviceReduce::Sum", "-", "-", fmt("%.4f", library_ms), fmt("%.0f", library_gbs),
                       "100.0%", percent(library_gbs / ctx.dev.dram_peak_gbs),
                       percent(ctx.d2d_gbs > 0 ? library_gbs / ctx.d2d_gbs : NAN), "-", library_distinct,
                       library_verdict});
    table.print();
    return all_ok;
}

/// --sweep: times the lesson's sweep kernel on n doubles for threads 128..1024 per block
/// and blocks from 128 doubling up to one thread per element, and prints a blocks x
/// threads table of milliseconds (the historic article's experiment).
inline bool run_sweep(const DriverContext& ctx, const Sweep& sweep) {
    const size_t n = ctx.n;
    const RunOptions& run = ctx.run;
    std::vector<double> host = random_input<double>(n, static_cast<uint64_t>(run.seed));
    const Reference ref = reference_sum(host);
    DeviceBuffer<double> in(host);
    host = {};
    DeviceBuffer<double> out(1);
    const TimingOptions timing{std::min(run.warmup, 1), std::min(run.repeats, 5), true};
    const unsigned thread_counts[] = {128, 256, 512, 1024};
    std::map<std::pair<unsigned, unsigned>, double> ms;  // (blocks, threads) -> median ms
    std::vector<unsigned> block_counts;
    for (size_t b = 128; b <= std::max<size_t>(128, ceil_div(n, 128)) && b <= (size_t(1) << 24); b *= 2)
        block_counts.push_back(static_cast<unsigned>(b));
    bool all_ok = true;
    double best_ms = INFINITY;
    unsigned best_t = 0, best_b = 0;
    for (unsigned threads : thread_counts)
        for (unsigned blocks : block_counts) {
            if (size_t(blocks) > std::max<size_t>(128, ceil_div(n, threads))) continue;  // past one thread per element
            auto once = [&] { sweep.launch(in.get(), n, out.get(), threads, blocks); };
            poison_output(out.get(), ref);
            once();
            double got = 0;
            TUT_CUDA(cudaMemcpy(&got, out.get(), sizeof(double), cudaMemcpyDeviceToHost));
            const Verdict v = judge(got, ref, sweep.depth(n, threads, blocks));
            if (!v.ok) {
                all_ok = false;
                std::fprintf(stderr, "%s sweep %u x %u: %s\n", ctx.info.lesson, blocks, threads, v.text.c_str());
            }
            const Timing t = time_gpu(once, timing);
            ms[{blocks, threads}] = t.median_ms;
            if (t.median_ms < best_ms) {
                best_ms = t.median_ms;
                best_t = threads;
                best_b = blocks;
            }
            Record r;
            r.track = ctx.info.track;
            r.lesson = ctx.info.lesson;
            r.variant = fmt("sweep %u blocks x %u threads", blocks, threads);
            r.size = std::to_string(n);
            r.value = gbs<double>(n, t.median_ms);
            r.unit = "GB/s";
            r.time_ms = t.median_ms;
            r.peak = "DRAM bandwidth, theoretical (2 x memory clock x bus width)";
            r.peak_value = ctx.dev.dram_peak_gbs;
            r.checked = v.ok;
            r.extra.add("type", "double").add("sweep", true).add("threads", int(threads)).add("blocks", int(blocks));
            append_record(ctx.info.lesson, run.json, r);
        }
    std::printf("\n%s/%s --sweep: %s, n = %zu doubles, time in ms (median of %d, L2 flushed)\n", ctx.info.track,
                ctx.info.lesson, sweep.what.c_str(), n, timing.repeats);
    Table table({"blocks", "128 thr", "256 thr", "512 thr", "1024 thr"});
    for (unsigned blocks : block_counts) {
        std::vector<std::string> row{std::to_string(blocks)};
        for (unsigned threads : thread_counts) {
            auto it = ms.find({blocks, threads});
            row.push_back(it == ms.end() ? "" : fmt("%.3f%s", it->second, blocks == best_b && threads == best_t ? "*" : ""));
        }
        table.add_row(row);
    }
    table.print();
    std::printf("best (*): %u blocks x %u threads, %.3f ms = %.0f GB/s\n", best_b, best_t, best_ms,
                gbs<double>(n, best_ms));
    return all_ok;
}

/// The main() of every reduction lesson: parse options, then for each chosen type run
/// CUB and each variant, check, time, print the table and append JSON records.
inline int lesson_main(int argc, char** argv, const LessonInfo& info, const Variants& variants,
                       const Sweep& sweep = {}) {
    Cli cli(info.lesson, std::string(info.title) +
                             "\nSums n random elements on the GPU; prints GB/s beside cub::DeviceReduce::Sum.");
    size_t n = kDefaultN;
    std::string type = "double";
    int determinism_runs = 10;
    bool do_sweep = false;
    cli.add_int("n", &n, "number of elements", 1, static_cast<long long>(kMaxN));
    cli.add_string("type", &type, "element type", {"double", "float", "int", "complex", "all"});
    cli.add_int("reruns", &determinism_runs,
                "runs whose results are compared bit for bit (0: none)", 0, 1000);
    if (sweep.launch)
        cli.add_flag("sweep", &do_sweep, "also time a blocks x threads sweep of the kernel on doubles");
    RunOptions run;
    add_run_options(cli, run);
    cli.parse_or_exit(argc, argv);
    finish_run_options(run);

    auto selected = [&](const char* name) { return type == "all" || type == name; };
    std::vector<std::string> names;
    auto collect = [&](const char* tname, const auto& list) {
        if (selected(tname))
            for (auto& v : list) names.push_back(v.name);
    };
    collect("double", variants.f64);
    collect("float", variants.f32);
    collect("int", variants.i32);
    collect("complex", variants.c64);
    if (!variant_is_known(info.lesson, run.variant, names, " for --type " + type)) return kUsageExitCode;
    if (names.empty()) {
        std::fprintf(stderr, "%s: error: this lesson has no %s variant (see its README)\n", info.lesson, type.c_str());
        return kUsageExitCode;
    }
    require_gpu(info.lesson);

    return guarded_main(info.lesson, [&] {
        const DeviceFacts dev = device_facts();
        print_device_banner(dev);
        const double d2d = run.profile ? NAN : measure_d2d_bandwidth_gbs();
        if (!run.profile) std::printf("Measured device-to-device cudaMemcpy: %.0f GB/s (read + write)\n", d2d);
        const DriverContext ctx{info, n, run, determinism_runs, dev, d2d};
        bool ok = true;
        if (selected("double")) ok = run_type<double>(ctx, variants.f64) && ok;
        if (selected("float")) ok = run_type<float>(ctx, variants.f32) && ok;
        if (selected("int")) ok = run_type<int>(ctx, variants.i32) && ok;
        if (selected("complex")) ok = run_type<cuDoubleComplex>(ctx, variants.c64) && ok;
        if (do_sweep) ok = run_sweep(ctx, sweep) && ok;
        return ok ? 0 : 1;
    });
}

}  // namespace tut::reduction
#endif  // __CUDACC__
