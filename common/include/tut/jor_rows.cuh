/// @file jor_rows.cuh
/// @brief Lesson 02's row sums as a device function (warp_offdiag_sums) and lesson 04's
/// sweep of rows (sweep_rows), for the fused lessons 04-07. Lesson 02's exercise is that
/// row sum, so it does not include this header; lesson 08's row sum, with A in a storage
/// type of its own, is that lesson's exercise, and it does not include this header either.
#pragma once

#include "jor_device.cuh"

#include <cuda_runtime.h>

namespace tut::jor {

/// The fused lessons' sweep (04-07) keeps kSweepLoads steps of A in flight per lane, lesson
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
/// scalar loop. Lesson 02's kernel, as a function: kLoads steps of the rows are loaded
/// before any is used (4 registers per 16-byte load; a caller with kLoads > 1 gives its
/// kernel fewer blocks per SM and more registers).
///
/// Two choices for lesson 07's L2 policies: kStreamA = false loads A with the default cache
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

/// One sweep over the rows of this warp (warps of the whole grid take rows in turn), x_new
/// from x_old; folds |dx| and |x_new| of its rows into dx_max and x_max (lane 0's). All in
/// T (see warp_offdiag_sums for kStreamA, kLoads and backwards). Lesson 04's sweep, as a
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

}  // namespace tut::jor
