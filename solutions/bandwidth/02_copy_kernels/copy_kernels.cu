// Bandwidth lesson 2: copy kernels. One element per thread or a grid-stride loop; 4-byte
// floats or 16-byte float4; how many blocks per SM. Each is judged against cudaMemcpy
// device-to-device of the same bytes, in the same run.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/bandwidth/02_copy_kernels/copy_kernels.cu -o copy_kernels
// Run:  ./copy_kernels --n 134217728     (--help for options; --profile for one clean launch under ncu)
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
// A float4 must sit on a 16-byte boundary: the launcher hands the first `head` floats
// (until src is 16-byte aligned) and the last n % 4 floats after the body to scalar code.
// kInFlight float4s are loaded before any is stored: more independent loads per thread.
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

// blocks_per_sm = 0: as many as fit on an SM at once (the occupancy limit).
void run_grid_stride(size_t n, const float* src, float* dst, int blocks_per_sm) {
    tut::bandwidth::require_copy(n, src, dst);
    if (n == 0) return;
    const int blocks = blocks_per_sm > 0 ? blocks_per_sm * tut::bandwidth::sm_count()
                                         : tut::bandwidth::full_grid_blocks(copy_grid_stride, kThreads,
                                                                            static_cast<long long>(n));
    copy_grid_stride<<<blocks, kThreads>>>(n, src, dst);
    TUT_LAUNCH("copy_grid_stride");
}

// blocks_per_sm = 0: one thread per float4 (the grid covers the array once);
// otherwise a grid-stride loop over blocks_per_sm x SMs blocks.
template <int kInFlight>
void run_float4(size_t n, const float* src, float* dst, int blocks_per_sm) {
    tut::bandwidth::require_copy(n, src, dst);
    if (n == 0) return;
    const long long head = float4_head(n, src, dst);
    if (head < 0) {  // misaligned relative to each other: no float4 body possible
        run_grid_stride(n, src, dst, 0);
        return;
    }
    const size_t vectors = (n - static_cast<size_t>(head)) / 4;
    const size_t one_each = std::max<size_t>(1, (vectors + kThreads - 1) / kThreads);
    const size_t blocks = blocks_per_sm > 0 ? size_t(blocks_per_sm) * tut::bandwidth::sm_count() : one_each;
    copy_float4<kInFlight><<<static_cast<unsigned>(blocks), kThreads>>>(n, static_cast<size_t>(head), src, dst);
    TUT_LAUNCH("copy_float4");
}

std::string float4_path(size_t n, const float* src, const float* dst) {
    return float4_head(n, src, dst) < 0 ? "float: src/dst misaligned" : "float4";
}

}  // namespace

namespace lesson {
std::vector<tut::bandwidth::CopyVariant> copy_variants() {
    using V = tut::bandwidth::CopyVariant;
    std::vector<V> v;
    v.push_back({"float, 1 per thread", run_one_per_thread, reinterpret_cast<const void*>(copy_one_per_thread), {}});
    v.push_back({"float, grid-stride", [](size_t n, const float* s, float* d) { run_grid_stride(n, s, d, 0); },
                 reinterpret_cast<const void*>(copy_grid_stride), {}});
    v.push_back({"float4, 1 per thread", [](size_t n, const float* s, float* d) { run_float4<1>(n, s, d, 0); },
                 reinterpret_cast<const void*>(copy_float4<1>), float4_path});
    // The blocks-per-SM sweep: 256-thread blocks, 8 of which fill an SM's 2048 threads on sm_80/sm_90.
    for (int per_sm : {1, 2, 4, 8, 16, 32})
        v.push_back({"float4, grid-stride, " + std::to_string(per_sm) + " blocks per SM",
                     [per_sm](size_t n, const float* s, float* d) { run_float4<1>(n, s, d, per_sm); },
                     reinterpret_cast<const void*>(copy_float4<1>), float4_path});
    // Fewer threads, each with 4 loads in flight: instruction-level instead of thread-level parallelism.
    v.push_back({"float4 x4 in flight, grid-stride, 2 blocks per SM",
                 [](size_t n, const float* s, float* d) { run_float4<4>(n, s, d, 2); },
                 reinterpret_cast<const void*>(copy_float4<4>), float4_path});
    return v;
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"bandwidth", "02_copy_kernels", "copy kernels against cudaMemcpy D2D"};
    return tut::bandwidth::copy_main(argc, argv, info, lesson::copy_variants());
}
#endif
