/// @file sgemm_tiles.cuh
/// @brief Device plumbing of the SGEMM lessons from 09 on: edge-safe 16-byte loads and
/// stores of row-major matrices, and `cp.async` wrappers. (Lesson 14's block swizzle, for
/// the lessons after it, is in sgemm_swizzle.cuh.)
///
/// Every lesson handles any N in 1..8192. Two things break at sizes that are not
/// multiples of the tile: a tile hangs over the matrix's edge (its outside part must read
/// as zeros and must not be written), and when N % 4 != 0 a row no longer starts on a
/// 16-byte boundary, so a float4 load of four neighbours is misaligned. load4() and
/// store4() take care of both: 16-byte accesses when N % 4 == 0 (the 4 elements are then
/// all inside or all outside the matrix), element by element otherwise.
#pragma once

#include <cuda_runtime.h>

namespace tut::sgemm {

/// M[row][col .. col+3] of an n x n row-major matrix, zeros outside it. `col` is a multiple of 4.
__device__ __forceinline__ float4 load4(const float* __restrict__ M, int n, int row, int col) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (row >= n || col >= n) return v;
    const float* p = M + size_t(row) * n + col;
    if (n % 4 == 0) return *reinterpret_cast<const float4*>(p);  // 16-byte aligned, all 4 inside
    v.x = p[0];
    if (col + 1 < n) v.y = p[1];
    if (col + 2 < n) v.z = p[2];
    if (col + 3 < n) v.w = p[3];
    return v;
}

/// Writes M[row][col .. col+3] = v, only the elements inside the matrix. `col` is a multiple of 4.
__device__ __forceinline__ void store4(float* __restrict__ M, int n, int row, int col, float4 v) {
    if (row >= n || col >= n) return;
    float* p = M + size_t(row) * n + col;
    if (n % 4 == 0) {
        *reinterpret_cast<float4*>(p) = v;
        return;
    }
    p[0] = v.x;
    if (col + 1 < n) p[1] = v.y;
    if (col + 2 < n) p[2] = v.z;
    if (col + 3 < n) p[3] = v.w;
}

// cp.async (compute capability 8.0+): a copy from global to shared memory that bypasses the
// registers and completes asynchronously. `src_bytes` < the copy's size zero-fills the rest,
// which is how an edge tile reads zeros. On older GPUs (the lessons skip those variants) a
// plain synchronous copy keeps the code compiling and correct.

/// Copies 4 bytes (valid) or writes 4 zero bytes (not valid) to shared memory.
__device__ __forceinline__ void cp_async_4(float* smem, const float* gmem, bool valid) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 4 : 0));
#else
    *smem = valid ? *gmem : 0.0f;
#endif
}

/// Copies 16 bytes (valid) or writes 16 zero bytes; both addresses 16-byte aligned.
__device__ __forceinline__ void cp_async_16(float* smem, const float* gmem, bool valid) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 16 : 0));
#else
    *reinterpret_cast<float4*>(smem) = valid ? *reinterpret_cast<const float4*>(gmem) : make_float4(0, 0, 0, 0);
#endif
}

/// Closes the group of copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

/// Waits until at most `kPending` committed groups are still in flight (this thread's copies only).
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
#endif
}

}  // namespace tut::sgemm
