/// @file jor_device.cuh
/// @brief The JOR track's device code: the generator, the residual and the read-bandwidth
/// kernels behind jor_gpu.hpp, and the kernels the lessons share once their own lesson
/// has taught them.
///
/// Include from exactly one .cu per program (every JOR lesson's .cu does): it defines the
/// functions jor_gpu.hpp declares, so the checks, which are plain C++, link against them.
///
/// Shared kernels, by the lesson that teaches them:
/// - lesson 1: update_x (x_new from the off-diagonal sums) and sweep_stats (max |dx|,
///   min |dx|, max |x| of a sweep, one block), used by lessons 1-3, whose idea is the
///   product;
/// - lesson 2: warp_offdiag_sums (a warp's 16-byte, streaming pass over kRows rows), used
///   by the fused lessons 4-6 (lesson 7's exercise is its own row sum, with A stored in a
///   type of its own);
/// - lesson 4: SweepSlot and record_sweep (a sweep's convergence values by one atomicMax
///   per block and value), used by lessons 5-7, and sweep_rows (a warp per row: the sum,
///   the update, |dx| and |x|), used by lessons 5 and 6.
#pragma once

#include "jor_gpu.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

namespace tut::jor {

// ---------------------------------------------------------------------------------------
// The generator: one block per row, the row's integer sums reduced exactly
// ---------------------------------------------------------------------------------------

inline constexpr int kGeneratorThreads = 256;

template <class T>
__global__ void generate_rows(T* A, T* b, T* diagonal, double* offdiag_abs, int n, uint64_t seed, uint32_t matrix) {
    __shared__ long long abs_part[kGeneratorThreads], ax_part[kGeneratorThreads];
    const int j = blockIdx.x;
    T* row = A + size_t(j) * size_t(n);
    long long abs_sum = 0, ax = 0;
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
        if (k == j) continue;
        const int64_t q = offdiag_units(seed, matrix, j, k);
        row[k] = static_cast<T>(units_to_double(q));
        abs_sum += q < 0 ? -q : q;
        ax += q * solution_units(seed, matrix, k);
    }
    abs_part[threadIdx.x] = abs_sum;
    ax_part[threadIdx.x] = ax;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {  // integer sums: any order gives the same bits
        if (threadIdx.x < s) {
            abs_part[threadIdx.x] += abs_part[threadIdx.x + s];
            ax_part[threadIdx.x] += ax_part[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const int64_t d = diagonal_units(seed, matrix, j, abs_part[0]);
        row[j] = static_cast<T>(units_to_double(d));
        diagonal[j] = row[j];
        offdiag_abs[j] = units_to_double(abs_part[0]);
        b[j] = static_cast<T>(rhs_to_double(ax_part[0] + d * solution_units(seed, matrix, j)));
    }
}

template <class T>
void generate_on_device(DeviceSystem<T>& sys, uint64_t seed, uint32_t matrix) {
    require_size(sys.n);
    sys.seed = seed;
    sys.matrix = matrix;
    generate_rows<T><<<sys.n, kGeneratorThreads>>>(sys.A.get(), sys.b.get(), sys.diagonal.get(), sys.offdiag_abs.get(),
                                                   sys.n, seed, matrix);
    TUT_LAUNCH("generate_rows");
    sys.x_star.resize(static_cast<size_t>(sys.n));
    for (int k = 0; k < sys.n; ++k) sys.x_star[k] = units_to_double(solution_units(seed, matrix, k));
    TUT_CUDA(cudaDeviceSynchronize());
}

void generate_system(DeviceSystem<float>& sys, uint64_t seed, uint32_t matrix) { generate_on_device(sys, seed, matrix); }
void generate_system(DeviceSystem<double>& sys, uint64_t seed, uint32_t matrix) { generate_on_device(sys, seed, matrix); }

// ---------------------------------------------------------------------------------------
// The residual, in double: one warp per row
// ---------------------------------------------------------------------------------------

template <class T>
__global__ void residual_rows(const T* A, const T* b, const T* x, double* r, int n) {
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (row >= n) return;
    double s = 0.0;
    for (int k = lane; k < n; k += 32) s += double(A[size_t(row) * n + k]) * double(x[k]);
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) r[row] = double(b[row]) - s;
}

template <class T>
std::vector<double> residual_on_device(const DeviceSystem<T>& sys, const T* x) {
    DeviceBuffer<double> r(static_cast<size_t>(sys.n));
    const int threads = 256;
    const int blocks = int((size_t(sys.n) * 32 + threads - 1) / threads);
    residual_rows<T><<<blocks, threads>>>(sys.A.get(), sys.b.get(), x, r.get(), sys.n);
    TUT_LAUNCH("residual_rows");
    return r.download();
}

std::vector<double> residual(const DeviceSystem<float>& sys, const float* x) { return residual_on_device(sys, x); }
std::vector<double> residual(const DeviceSystem<double>& sys, const double* x) { return residual_on_device(sys, x); }

// ---------------------------------------------------------------------------------------
// The read bandwidth
// ---------------------------------------------------------------------------------------

/// Reads `count` float4, four independent loads per thread per step, and writes nothing
/// unless the sum is a value the data cannot give (so the compiler keeps the loads).
__global__ void read_only(const float4* __restrict__ data, size_t count, float* sink) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    float s = 0.0f;
    size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < count; i += 4 * stride) {
        const float4 a = __ldcs(data + i), b = __ldcs(data + i + stride), c = __ldcs(data + i + 2 * stride),
                     d = __ldcs(data + i + 3 * stride);
        s += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) + (d.x + d.y + d.z + d.w);
    }
    for (; i < count; i += stride) {
        const float4 a = __ldcs(data + i);
        s += a.x + a.y + a.z + a.w;
    }
    if (s == -1.0f) *sink = s;  // the buffer holds positive numbers: never taken
}

double measure_read_bandwidth_gbs() {
    int device = 0, sms = 0, threads_per_sm = 0;
    TUT_CUDA(cudaGetDevice(&device));
    TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    TUT_CUDA(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    size_t free_bytes = 0, total = 0;
    TUT_CUDA(cudaMemGetInfo(&free_bytes, &total));
    const size_t bytes = std::min(size_t(1) << 30, free_bytes / 4) / 16 * 16;  // far larger than any L2
    DeviceBuffer<float4> data(bytes / 16);
    DeviceBuffer<float> sink(1);
    TUT_CUDA(cudaMemset(data.get(), 0x3c, bytes));  // 0.0116 in every float
    const int threads = 256, blocks = sms * (threads_per_sm / threads);
    // The best of three medians: the device's read bandwidth varies by a few percent from
    // one measurement to the next, and the floor should be what the device can do.
    double best_ms = 0.0;
    for (int round = 0; round < 3; ++round) {
        // Every launch is checked (cudaGetLastError() does not wait for the GPU), so that a
        // failed one is not timed as a fast one.
        Timing t = time_gpu(
            [&] {
                read_only<<<blocks, threads>>>(data.get(), data.size(), sink.get());
                TUT_LAUNCH("read_only");
            },
            TimingOptions{3, 10, false, true});
        if (round == 0 || t.median_ms < best_ms) best_ms = t.median_ms;
    }
    return double(bytes) / (best_ms * 1e-3) / 1e9;
}

// ---------------------------------------------------------------------------------------
// Lesson 1's update and convergence kernels (used by lessons 1-3)
// ---------------------------------------------------------------------------------------

/// x_new_j = (1 - a) x_j + a / A_jj (b_j - s_j), from the off-diagonal sums s.
template <class T>
__global__ void update_x(const T* __restrict__ sums, const T* __restrict__ diagonal, const T* __restrict__ b,
                         const T* __restrict__ x_old, T* __restrict__ x_new, int n, T alpha) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) x_new[j] = (T(1) - alpha) * x_old[j] + alpha / diagonal[j] * (b[j] - sums[j]);
}

/// A sweep's values for the stopping rules (SweepStats, in device memory).
struct DeviceSweepStats {
    double dx_max, dx_min, x_max;
    int finite;
};

inline constexpr int kStatsThreads = 1024;

/// max_j |dx_j|, min_j |dx_j|, max_j |x_new_j| and whether all are finite: one block.
template <class T>
__global__ void sweep_stats(const T* __restrict__ x_old, const T* __restrict__ x_new, int n, DeviceSweepStats* out) {
    __shared__ double dmax[kStatsThreads], dmin[kStatsThreads], xmax[kStatsThreads];
    __shared__ int fin[kStatsThreads];
    double a = 0.0, b = INFINITY, c = 0.0;
    int f = 1;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        const double xn = double(x_new[j]), dx = fabs(xn - double(x_old[j]));
        a = fmax(a, dx);
        b = fmin(b, dx);
        c = fmax(c, fabs(xn));
        f = f && isfinite(xn);
    }
    const int t = threadIdx.x;
    dmax[t] = a;
    dmin[t] = b;
    xmax[t] = c;
    fin[t] = f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s) {
            dmax[t] = fmax(dmax[t], dmax[t + s]);
            dmin[t] = fmin(dmin[t], dmin[t + s]);
            xmax[t] = fmax(xmax[t], xmax[t + s]);
            fin[t] = fin[t] && fin[t + s];
        }
        __syncthreads();
    }
    if (t == 0) *out = DeviceSweepStats{dmax[0], dmin[0], xmax[0], fin[0]};
}

inline SweepStats to_host(const DeviceSweepStats& d) {
    SweepStats s;
    s.dx_max = d.dx_max;
    s.dx_min = d.dx_min;
    s.x_max = d.x_max;
    s.finite = d.finite != 0 && std::isfinite(d.dx_max) && std::isfinite(d.x_max);
    return s;
}

/// The sweep loop of lessons 1-3, the report's structure: per sweep, the product
/// (`product(x_old)`: the lesson's own kernel or cuBLAS), the update
/// (`update(x_old, x_new)`), sweep_stats, and one copy of the stats back to the host,
/// which decides whether to go on. x_old starts as x = 0; the sweeps alternate between x
/// and x_work, and the result ends in x.
template <class T, class Product, class Update>
SolveResult solve_sweep_by_sweep(int n, const SolveOptions& opt, T* x, T* x_work, DeviceSweepStats* stats,
                                 Product&& product, Update&& update) {
    T* x_old = x;
    T* x_new = x_work;
    TUT_CUDA(cudaMemset(x_old, 0, size_t(n) * sizeof(T)));
    SolveResult result;
    for (int it = 1; it <= opt.max_iterations; ++it) {
        product(static_cast<const T*>(x_old));
        update(static_cast<const T*>(x_old), x_new);
        sweep_stats<T><<<1, kStatsThreads>>>(x_old, x_new, n, stats);
        TUT_LAUNCH("sweep_stats");
        DeviceSweepStats host;
        TUT_CUDA(cudaMemcpy(&host, stats, sizeof host, cudaMemcpyDeviceToHost));  // waits for the sweep
        std::swap(x_old, x_new);
        result.iterations = it;
        result.last = to_host(host);
        if (should_stop(opt.stop, opt.tolerance, result.last)) {
            result.converged = true;
            break;
        }
    }
    if (x_old != x) TUT_CUDA(cudaMemcpy(x, x_old, size_t(n) * sizeof(T), cudaMemcpyDeviceToDevice));
    return result;
}

/// Launches update_x over n rows.
template <class T>
void launch_update_x(const DeviceSystem<T>& sys, const T* sums, const T* x_old, T* x_new, double alpha) {
    update_x<T><<<(sys.n + 255) / 256, 256>>>(sums, sys.diagonal.get(), sys.b.get(), x_old, x_new, sys.n, T(alpha));
    TUT_LAUNCH("update_x");
}

// ---------------------------------------------------------------------------------------
// Lesson 2's GEMV, as a device function (used by lessons 4-7)
// ---------------------------------------------------------------------------------------

/// The 16-byte vector of T: four floats or two doubles.
template <class T>
struct Vec16;
template <>
struct Vec16<float> {
    using type = float4;
    static constexpr int width = 4;
    __device__ static float dot(float4 a, float4 x) { return a.x * x.x + a.y * x.y + a.z * x.z + a.w * x.w; }
    __device__ static float4 drop(float4 a, int i) {  // component i set to zero
        if (i == 0) a.x = 0.0f;
        if (i == 1) a.y = 0.0f;
        if (i == 2) a.z = 0.0f;
        if (i == 3) a.w = 0.0f;
        return a;
    }
};
template <>
struct Vec16<double> {
    using type = double2;
    static constexpr int width = 2;
    __device__ static double dot(double2 a, double2 x) { return a.x * x.x + a.y * x.y; }
    __device__ static double2 drop(double2 a, int i) {
        if (i == 0) a.x = 0.0;
        if (i == 1) a.y = 0.0;
        return a;
    }
};

/// x_c ... x_(c + kWidth - 1) as T, with 16-byte loads where the widths allow. x is not
/// __restrict__ and its loads are plain (coherent) ones, so a persistent kernel sees the
/// values other blocks wrote before its grid-wide barrier.
template <class T, int kWidth>
__device__ inline void load_x(const T* x, int c, T (&out)[kWidth]) {
    if constexpr (sizeof(T) == 4 && kWidth == 4) {
        const float4 v = reinterpret_cast<const float4*>(x)[c];
        out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
    } else if constexpr (sizeof(T) == 8 && kWidth % 2 == 0) {
#pragma unroll
        for (int i = 0; i < kWidth / 2; ++i) {
            const double2 v = reinterpret_cast<const double2*>(x)[c * (kWidth / 2) + i];
            out[2 * i] = v.x, out[2 * i + 1] = v.y;
        }
    } else {
#pragma unroll
        for (int i = 0; i < kWidth; ++i) out[i] = x[c * kWidth + i];
    }
}

/// Adds a * x to sum; with kKahan, compensated (Kahan): `carry` keeps the low-order part
/// that the addition lost, and feeds it back into the next one. A helper for lesson 07's
/// row sum, the one sum of the track with a Kahan variant.
template <bool kKahan, class T>
__device__ inline void add_product(T& sum, T& carry, T a, T x) {
    if constexpr (kKahan) {
        const T y = a * x - carry;
        const T t = sum + y;
        carry = (t - sum) - y;
        sum = t;
    } else {
        sum = fma(a, x, sum);
    }
}

/// Blocks of `threads` per SM to compile a kernel for (its __launch_bounds__) when each
/// lane keeps `loads_in_flight` 16-byte loads of A in flight, 4 registers each (lesson
/// 02). One: every thread slot of the SM (2048 threads on an H100, 32 registers each).
/// More: they need registers past that budget, so half the blocks, 64 registers each.
constexpr int blocks_per_sm_for_loads(int threads, int loads_in_flight) {
    return loads_in_flight == 1 ? kMaxThreadsPerSm / threads : kMaxThreadsPerSm / threads / 2;
}

/// The fused lessons' sweep (04-06) keeps kSweepLoads steps of A in flight per lane, lesson
/// 02's finding; a kernel that calls warp_offdiag_sums or sweep_rows with it is compiled
/// for sweep_blocks_per_sm(its threads) blocks.
inline constexpr int kSweepLoads = 2;
constexpr int sweep_blocks_per_sm(int threads) { return blocks_per_sm_for_loads(threads, kSweepLoads); }

/// sum[r] = sum over k != row of A(row, k) x_k for the kRows rows first_row, first_row + 1,
/// ... (the sums of rows >= n mean nothing), by one warp; every lane returns the sums. A, x
/// and the sums are all T (float or double). The lanes take 16-byte vectors of a row in
/// turn, so a warp's loads are 512 contiguous bytes, and one load of x serves kRows rows;
/// A is read once, so its loads are streaming (__ldcs: evict first) and x stays in cache.
/// Rows whose start is not 16-byte aligned (N not a multiple of the vector width) take the
/// scalar loop. Lesson 2's kernel, as a function: kLoads steps of the rows are loaded
/// before any is used (4 registers per 16-byte load; a caller with kLoads > 1 gives its
/// kernel fewer blocks per SM and more registers).
///
/// Two choices for lesson 06's variants: kStreamA = false loads A with the default cache
/// policy instead of evict-first, so that A may stay in L2; `backwards` walks the row from
/// its end (the lanes still read 512 contiguous bytes per step), so that a sweep can start
/// where the previous one ended.
template <class T, int kRows, bool kStreamA = true, int kLoads = kSweepLoads>
__device__ void warp_offdiag_sums(const T* __restrict__ A, const T* x, int n, int first_row, T (&sum)[kRows],
                                  bool backwards = false) {
    using V = typename Vec16<T>::type;
    constexpr int kWidth = Vec16<T>::width;
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int r = 0; r < kRows; ++r) sum[r] = T(0);
    if (n % kWidth == 0) {
        const int vectors = n / kWidth;
        const V* rows[kRows];  // rows past N read row N - 1 (in bounds; their sums are never used)
#pragma unroll
        for (int r = 0; r < kRows; ++r) rows[r] = reinterpret_cast<const V*>(A + size_t(min(first_row + r, n - 1)) * size_t(n));
        // Vector c of every row, loaded as v: one load of x serves them all.
        auto add_step = [&](int c, V (&v)[kRows]) {
            T xc[kWidth];
            load_x<T, kWidth>(x, c, xc);
#pragma unroll
            for (int r = 0; r < kRows; ++r) {
                const int row = first_row + r;
                if (c == row / kWidth) v[r] = Vec16<T>::drop(v[r], row % kWidth);  // the diagonal is not in the sum
                const T* a = reinterpret_cast<const T*>(&v[r]);
#pragma unroll
                for (int e = 0; e < kWidth; ++e) sum[r] = fma(a[e], xc[e], sum[r]);
            }
        };
        auto column = [&](int i) { return backwards ? vectors - 1 - i : i; };
        auto load = [&](int r, int c) { return kStreamA ? __ldcs(rows[r] + c) : __ldg(rows[r] + c); };
        int i = lane;
        // Whole steps: the kLoads x kRows loads are issued before any value is used (lesson 02).
        for (; i + 32 * (kLoads - 1) < vectors; i += 32 * kLoads) {
            V v[kLoads][kRows];
#pragma unroll
            for (int u = 0; u < kLoads; ++u)
#pragma unroll
                for (int r = 0; r < kRows; ++r) v[u][r] = load(r, column(i + 32 * u));
#pragma unroll
            for (int u = 0; u < kLoads; ++u) add_step(column(i + 32 * u), v[u]);
        }
        for (; i < vectors; i += 32) {  // the rest, one vector at a time (kLoads > 1 only)
            V v[kRows];
#pragma unroll
            for (int r = 0; r < kRows; ++r) v[r] = load(r, column(i));
            add_step(column(i), v);
        }
    } else {
        for (int i = lane; i < n; i += 32) {
            const int k = backwards ? n - 1 - i : i;
            const T xk = x[k];
#pragma unroll
            for (int r = 0; r < kRows; ++r) {
                const int row = first_row + r;
                if (row >= n) break;
                const T* a = A + size_t(row) * size_t(n) + k;
                if (k != row) sum[r] = fma(kStreamA ? __ldcs(a) : __ldg(a), xk, sum[r]);
            }
        }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r)
        for (int o = 16; o > 0; o /= 2) sum[r] += __shfl_xor_sync(0xffffffffu, sum[r], o);
}

// ---------------------------------------------------------------------------------------
// Lesson 4's convergence values, kept on the device (used by lessons 5-7)
// ---------------------------------------------------------------------------------------

/// One sweep's max |dx| and max |x|, as the bits of non-negative doubles: for those, the
/// order of the bits is the order of the values, so atomicMax on the bits is a max of the
/// values (a NaN's bits are above infinity's: a NaN anywhere makes the slot not finite).
/// Zeroed before a solve.
struct SweepSlot {
    unsigned long long dx_max_bits, x_max_bits;
};

__device__ inline double warp_max(double v) {
    for (int o = 16; o > 0; o /= 2) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/// Folds this thread's (dx, x) into the block's maxima and adds them to `slot` with one
/// atomicMax each, from thread 0. Every thread of the block must call it. fmax would drop
/// a NaN, so a thread whose dx or x is NaN reports dx = infinity instead: the slot is then
/// not finite, and the solve does not stop on it.
__device__ inline void record_sweep(double dx, double x, SweepSlot* slot) {
    __shared__ double dx_part[32], x_part[32];
    const bool bad = !(dx == dx) || !(x == x);
    if (bad) dx = INFINITY;
    dx = warp_max(dx);
    x = warp_max(x);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    if (lane == 0) {
        dx_part[warp] = dx;
        x_part[warp] = x;
    }
    __syncthreads();
    if (warp == 0) {
        dx = lane < warps ? dx_part[lane] : 0.0;
        x = lane < warps ? x_part[lane] : 0.0;
        dx = warp_max(dx);
        x = warp_max(x);
        if (lane == 0) {
            atomicMax(&slot->dx_max_bits, static_cast<unsigned long long>(__double_as_longlong(dx)));
            atomicMax(&slot->x_max_bits, static_cast<unsigned long long>(__double_as_longlong(x)));
        }
    }
    __syncthreads();  // dx_part and x_part are reused by the next call
}

/// The slot's values for the stopping rule (host or device).
__host__ __device__ inline double slot_value(unsigned long long bits) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(bits));
#else
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
#endif
}

/// Should a solve stop after the sweep recorded in `s` (norm rule)? Not on infinity or NaN.
__host__ __device__ inline bool slot_says_stop(const SweepSlot& s, double tolerance) {
    const double dx = slot_value(s.dx_max_bits), x = slot_value(s.x_max_bits);
    return dx <= tolerance * x && x <= 1.7976931348623157e308 && dx == dx;
}

/// One sweep over the rows of this warp (warps of the whole grid take rows in turn), x_new
/// from x_old; folds |dx| and |x_new| of its rows into dx_max and x_max (lane 0's). All in
/// T (see warp_offdiag_sums for kStreamA, kLoads and backwards). Lesson 4's sweep, as a
/// function.
template <class T, bool kStreamA = true, int kLoads = kSweepLoads>
__device__ void sweep_rows(const T* __restrict__ A, const T* diagonal, const T* b, const T* x_old, T* x_new, int n,
                           T alpha, double& dx_max, double& x_max, bool backwards = false) {
    const int warps = gridDim.x * (blockDim.x / 32), warp = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int my_rows = warp < n ? (n - 1 - warp) / warps + 1 : 0;
    for (int k = 0; k < my_rows; ++k) {
        // Backwards, a warp also takes its rows last first: the sweep then begins with the
        // rows, and the ends of rows, that the previous sweep read last.
        const int row = warp + (backwards ? my_rows - 1 - k : k) * warps;
        T sum[1];
        warp_offdiag_sums<T, 1, kStreamA, kLoads>(A, x_old, n, row, sum, backwards);
        if (threadIdx.x % 32 == 0) {
            const T old = x_old[row];
            const T x = (T(1) - alpha) * old + alpha / diagonal[row] * (b[row] - sum[0]);
            x_new[row] = x;
            const double dx = fabs(double(x) - double(old));
            dx_max = dx == dx && dx_max == dx_max ? fmax(dx_max, dx) : NAN;  // a NaN sticks
            x_max = fmax(x_max, fabs(double(x)));
        }
    }
}

inline SweepStats to_host(const SweepSlot& s) {
    SweepStats r;
    r.dx_max = slot_value(s.dx_max_bits);
    r.x_max = slot_value(s.x_max_bits);
    r.dx_min = NAN;  // the fused lessons use the norm rule only
    r.finite = std::isfinite(r.dx_max) && std::isfinite(r.x_max);
    return r;
}

/// The end of a solve whose sweeps alternate between x and x_work (sweep 0 reads x and
/// writes x_work) and record one SweepSlot each (lessons 05-07): reads the last sweep's
/// slot and leaves the result in x. `iterations` is the sweeps the device counted; a count
/// outside 1 ... max_iterations means the solve never said, and it is reported as not
/// converged with 0 iterations, reading nothing. Converged means the last slot passes the
/// stopping rule.
template <class T>
SolveResult finish_alternating_solve(int iterations, int max_iterations, double tolerance, const SweepSlot* slots,
                                     T* x, const T* x_work, int n) {
    SolveResult result;
    if (iterations < 1 || iterations > max_iterations) return result;
    result.iterations = iterations;
    SweepSlot last;
    TUT_CUDA(cudaMemcpy(&last, slots + (iterations - 1), sizeof last, cudaMemcpyDeviceToHost));
    result.last = to_host(last);
    result.converged = slot_says_stop(last, tolerance);
    // After an odd number of sweeps the result is in x_work.
    if (iterations % 2) TUT_CUDA(cudaMemcpy(x, x_work, size_t(n) * sizeof(T), cudaMemcpyDeviceToDevice));
    return result;
}

}  // namespace tut::jor
