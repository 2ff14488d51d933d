// Bandwidth lesson 2: copy kernels. What it takes for a kernel to move bytes as fast as
// cudaMemcpy: enough bytes in flight (16-byte accesses, enough threads or enough loads
// per thread) while every warp access stays coalesced.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/bandwidth/02_copy_kernels/copy_kernels.cu -o copy_kernels
// Run:  ./copy_kernels --n 134217728     (--help for options; --profile for one clean launch under ncu)
//
// Kernels and the variants (--variant names) that launch them:
//   copy_one_per_thread     "float, 1 per thread"
//   copy_grid_stride        "float, grid-stride"
//   copy_float4<1>          "float4, 1 per thread"; "float4, grid-stride, B blocks per SM", B = 1..32
//   copy_float4<4>          "float4 x4 in flight, grid-stride, 2 blocks per SM"
// Each is judged against cudaMemcpy device-to-device of the same bytes, in the same run.
#include "tut/bandwidth.hpp"

#include <cstdint>

namespace {

constexpr int kThreads = 256;

// One thread per element: the grid covers the array once. Simple, but every thread
// moves only 4 bytes, and n / 256 blocks must each be scheduled, run and retired.
__global__ void copy_one_per_thread(size_t n, const float* __restrict__ src, float* __restrict__ dst) {
    const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

// Grid-stride loop: a grid sized to the GPU (not to the data) walks the array; thread t
// handles t, t + stride, t + 2 stride... Consecutive threads still touch consecutive
// addresses at every step, so each warp access stays one coalesced 128-byte request.
__global__ void copy_grid_stride(size_t n, const float* __restrict__ src, float* __restrict__ dst) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += stride) dst[i] = src[i];
}

// 16-byte accesses: one float4 load and store move 4 floats, so a warp request covers
// 512 bytes and a thread keeps 4x the bytes in flight for the same instructions.
// A float4 must sit on a 16-byte boundary: the first `head` floats (until src + head is
// 16-byte aligned, as the launcher computed) and the 0-3 floats after the last whole
// float4 are copied as floats. kInFlight float4s are loaded before any is stored: more
// independent loads in flight per thread.
template <int kInFlight>
__global__ void copy_float4(size_t n, size_t head, const float* __restrict__ src, float* __restrict__ dst) {
    const size_t tid = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    const size_t vectors = (n - head) / 4;
    const float4* src4 = reinterpret_cast<const float4*>(src + head);
    float4* dst4 = reinterpret_cast<float4*>(dst + head);
    for (size_t base = tid; base < vectors; base += stride * kInFlight) {
        float4 v[kInFlight];
#pragma unroll
        for (int k = 0; k < kInFlight; ++k)
            if (base + k * stride < vectors) v[k] = src4[base + k * stride];
#pragma unroll
        for (int k = 0; k < kInFlight; ++k)
            if (base + k * stride < vectors) dst4[base + k * stride] = v[k];
    }
    // At most 3 floats before the body and 3 after it.
    const size_t tail = head + 4 * vectors;
    if (tid < head) dst[tid] = src[tid];
    if (tid < n - tail) dst[tail + tid] = src[tail + tid];
}

// Floats before src + head is 16-byte aligned, or -1 when a float4 body is impossible:
// src and dst must be equally misaligned (then one head aligns both) and 4-byte aligned.
long long float4_head(size_t n, const float* src, const float* dst) {
    const auto s = reinterpret_cast<std::uintptr_t>(src), d = reinterpret_cast<std::uintptr_t>(dst);
    if (s % 4 != 0 || s % 16 != d % 16) return -1;
    return static_cast<long long>(std::min<size_t>(n, ((16 - s % 16) % 16) / 4));
}

void run_one_per_thread(size_t n, const float* src, float* dst) {
    tut::bandwidth::require_copy(n, src, dst);
    if (n == 0) return;
    const size_t blocks = (n + kThreads - 1) / kThreads;
    copy_one_per_thread<<<static_cast<unsigned>(blocks), kThreads>>>(n, src, dst);
    TUT_LAUNCH("copy_one_per_thread");
}

// As many blocks as fit on all SMs at once (the occupancy limit).
void run_grid_stride(size_t n, const float* src, float* dst) {
    tut::bandwidth::require_copy(n, src, dst);
    if (n == 0) return;
    const int blocks = tut::bandwidth::full_grid_blocks(copy_grid_stride, kThreads, static_cast<long long>(n));
    copy_grid_stride<<<blocks, kThreads>>>(n, src, dst);
    TUT_LAUNCH("copy_grid_stride");
}

// kBlocksPerSm = 0: one thread per float4 (the grid covers the array once); otherwise a
// grid-stride loop over kBlocksPerSm x SMs blocks. Pointers that are misaligned relative
// to each other cannot share a float4 body: they take the float grid-stride kernel.
template <int kInFlight, int kBlocksPerSm>
void run_float4(size_t n, const float* src, float* dst) {
    tut::bandwidth::require_copy(n, src, dst);
    if (n == 0) return;
    const long long head = float4_head(n, src, dst);
    if (head < 0) {
        run_grid_stride(n, src, dst);
        return;
    }
    const size_t vectors = (n - static_cast<size_t>(head)) / 4;
    const size_t one_each = std::max<size_t>(1, (vectors + kThreads - 1) / kThreads);
    const size_t blocks = kBlocksPerSm > 0 ? size_t(kBlocksPerSm) * tut::bandwidth::sm_count() : one_each;
    copy_float4<kInFlight><<<static_cast<unsigned>(blocks), kThreads>>>(n, static_cast<size_t>(head), src, dst);
    TUT_LAUNCH("copy_float4");
}

std::string float4_path(size_t n, const float* src, const float* dst) {
    return float4_head(n, src, dst) < 0 ? "float: src/dst misaligned" : "float4";
}

}  // namespace

namespace lesson {
std::vector<tut::bandwidth::CopyVariant> copy_variants() {
    using tut::bandwidth::copy_variant;
    // The blocks-per-SM sweep: 256-thread blocks, 8 of which fill an SM's 2048 threads on sm_80/sm_90.
    // The last variant: fewer threads, each with 4 loads in flight (instruction-level instead of
    // thread-level parallelism).
    return {copy_variant("float, 1 per thread", run_one_per_thread, copy_one_per_thread),
            copy_variant("float, grid-stride", run_grid_stride, copy_grid_stride),
            copy_variant("float4, 1 per thread", run_float4<1, 0>, copy_float4<1>, float4_path),
            copy_variant("float4, grid-stride, 1 blocks per SM", run_float4<1, 1>, copy_float4<1>, float4_path),
            copy_variant("float4, grid-stride, 2 blocks per SM", run_float4<1, 2>, copy_float4<1>, float4_path),
            copy_variant("float4, grid-stride, 4 blocks per SM", run_float4<1, 4>, copy_float4<1>, float4_path),
            copy_variant("float4, grid-stride, 8 blocks per SM", run_float4<1, 8>, copy_float4<1>, float4_path),
            copy_variant("float4, grid-stride, 16 blocks per SM", run_float4<1, 16>, copy_float4<1>, float4_path),
            copy_variant("float4, grid-stride, 32 blocks per SM", run_float4<1, 32>, copy_float4<1>, float4_path),
            copy_variant("float4 x4 in flight, grid-stride, 2 blocks per SM", run_float4<4, 2>, copy_float4<4>,
                         float4_path)};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo info{"bandwidth", "02_copy_kernels", "copy kernels against cudaMemcpy D2D"};
    return tut::bandwidth::copy_main(argc, argv, info, lesson::copy_variants());
}
