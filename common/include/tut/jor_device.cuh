/// @file jor_device.cuh
/// @brief The JOR track's device code that every lesson includes: the generator, the
/// residual and the read-bandwidth kernels behind jor_gpu.hpp, lesson 01's update and
/// convergence kernels, and the small tools the lessons' kernels use.
///
/// Everything here is a template, inline or static, so any number of translation units
/// may include it (a lesson's .cu, the checks' device code).
///
/// The kernels the later lessons share once their own lesson has taught them live in
/// headers that only those later lessons include, so that no header an exercise includes
/// holds the code its TODO asks for:
/// - jor_slot.cuh (lessons 04-08): SweepSlot, a sweep's convergence values on the device,
///   and warp_max;
/// - jor_rows.cuh (lessons 04-07): lesson 02's row sums as a function (warp_offdiag_sums)
///   and lesson 04's sweep of rows (sweep_rows);
/// - jor_record.cuh (lessons 05-08): lesson 04's block reduction into the slot
///   (record_sweep) and the end of a solve whose sweeps alternate between two x arrays.
/// For the same reason the reductions of this header's own kernels are CUB's: the
/// lessons write theirs.
#pragma once

#include "jor_gpu.hpp"

#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace tut::jor {

// ---------------------------------------------------------------------------------------
// The generator: one block per row, the row's integer sums reduced exactly
// ---------------------------------------------------------------------------------------

inline constexpr int kGeneratorThreads = 256;

template <class T>
__global__ void generate_rows(T* A, T* b, T* diagonal, double* offdiag_abs, int n, uint64_t seed, uint32_t matrix) {
    using BlockSum = cub::BlockReduce<long long, kGeneratorThreads>;
    __shared__ typename BlockSum::TempStorage temp;
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
    // Integer sums: any order gives the same bits. Thread 0 holds them.
    const long long abs_total = BlockSum(temp).Sum(abs_sum);
    __syncthreads();  // temp is used again
    const long long ax_total = BlockSum(temp).Sum(ax);
    if (threadIdx.x == 0) {
        const int64_t d = diagonal_units(seed, matrix, j, abs_total);
        row[j] = static_cast<T>(units_to_double(d));
        diagonal[j] = row[j];
        offdiag_abs[j] = units_to_double(abs_total);
        b[j] = static_cast<T>(rhs_to_double(ax_total + d * solution_units(seed, matrix, j)));
    }
}

template <class T>
void generate_system(DeviceSystem<T>& sys, uint64_t seed, uint32_t matrix) {
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

// ---------------------------------------------------------------------------------------
// The residual, in double: one warp per row
// ---------------------------------------------------------------------------------------

inline constexpr int kResidualThreads = 256;

template <class T>
__global__ void residual_rows(const T* A, const T* b, const T* x, double* r, int n) {
    using WarpSum = cub::WarpReduce<double>;
    __shared__ typename WarpSum::TempStorage temp[kResidualThreads / 32];
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (row >= n) return;  // the whole warp: its row is past the end
    double s = 0.0;
    for (int k = lane; k < n; k += 32) s += double(A[size_t(row) * n + k]) * double(x[k]);
    s = WarpSum(temp[threadIdx.x / 32]).Sum(s);  // in lane 0
    if (lane == 0) r[row] = double(b[row]) - s;
}

template <class T>
std::vector<double> residual(const DeviceSystem<T>& sys, const T* x) {
    DeviceBuffer<double> r(static_cast<size_t>(sys.n));
    const int blocks = int((size_t(sys.n) * 32 + kResidualThreads - 1) / kResidualThreads);
    residual_rows<T><<<blocks, kResidualThreads>>>(sys.A.get(), sys.b.get(), x, r.get(), sys.n);
    TUT_LAUNCH("residual_rows");
    return r.download();
}

// ---------------------------------------------------------------------------------------
// The read bandwidth
// ---------------------------------------------------------------------------------------

/// Reads `count` float4, four independent loads per thread per step, and writes nothing
/// unless the sum is a value the data cannot give (so the compiler keeps the loads).
/// Static: each translation unit that includes this header gets its own copy.
static __global__ void read_only(const float4* __restrict__ data, size_t count, float* sink) {
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

/// The device's read bandwidth in GB/s: a kernel that only reads a buffer far larger than
/// L2 (16-byte loads, several in flight per thread), the best of three medians. It is the
/// ceiling of a sweep, which reads A and writes almost nothing. The buffer is freed
/// before it returns.
inline double measure_read_bandwidth_gbs() {
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
// Lesson 01's update and convergence kernels (used by lessons 01-03)
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

/// Two threads' DeviceSweepStats as one: the larger maxima, the smaller minimum, both finite.
struct CombineSweepStats {
    __device__ DeviceSweepStats operator()(const DeviceSweepStats& a, const DeviceSweepStats& b) const {
        return DeviceSweepStats{fmax(a.dx_max, b.dx_max), fmin(a.dx_min, b.dx_min), fmax(a.x_max, b.x_max),
                                a.finite && b.finite};
    }
};

inline constexpr int kStatsThreads = 1024;

/// max_j |dx_j|, min_j |dx_j|, max_j |x_new_j| and whether all are finite: one block of
/// kStatsThreads threads.
template <class T>
__global__ void sweep_stats(const T* __restrict__ x_old, const T* __restrict__ x_new, int n, DeviceSweepStats* out) {
    using BlockStats = cub::BlockReduce<DeviceSweepStats, kStatsThreads>;
    __shared__ typename BlockStats::TempStorage temp;
    DeviceSweepStats s{0.0, INFINITY, 0.0, 1};
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        const double xn = double(x_new[j]), dx = fabs(xn - double(x_old[j]));
        s.dx_max = fmax(s.dx_max, dx);
        s.dx_min = fmin(s.dx_min, dx);
        s.x_max = fmax(s.x_max, fabs(xn));
        s.finite = s.finite && isfinite(xn);
    }
    const DeviceSweepStats total = BlockStats(temp).Reduce(s, CombineSweepStats{});  // in thread 0
    if (threadIdx.x == 0) *out = total;
}

inline SweepStats to_host(const DeviceSweepStats& d) {
    SweepStats s;
    s.dx_max = d.dx_max;
    s.dx_min = d.dx_min;
    s.x_max = d.x_max;
    s.finite = d.finite != 0 && std::isfinite(d.dx_max) && std::isfinite(d.x_max);
    return s;
}

/// The sweep loop of lessons 01-03, the report's structure: per sweep, the product
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
// Tools of the lessons' kernels
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
/// that the addition lost, and feeds it back into the next one. A helper for lesson 08's
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

}  // namespace tut::jor
