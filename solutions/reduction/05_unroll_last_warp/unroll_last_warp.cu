// Reduction lesson 5: unrolling the last warp, correct on Volta and later (__syncwarp).
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/reduction/05_unroll_last_warp/unroll_last_warp.cu -o unroll_last_warp
// Run:  ./unroll_last_warp      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Kernel 5 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), made
// correct under independent thread scheduling (CUDA C++ Programming Guide, "Independent
// Thread Scheduling"; Lin and Grover, "Using CUDA Warp-Level Primitives", NVIDIA blog, 2018).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;                  // threads per block
constexpr unsigned kElementsPerBlock = 2 * kThreads;  // each thread loads two elements

// The last six steps of the tree (s = 32, 16, ..., 1) involve only the first warp. A
// warp needs no __syncthreads(), and once one warp is left the `if (tid < s)` tests
// only cost instructions: let all 32 lanes do every step (the extra lanes add values
// nobody reads) and synchronize with __syncwarp(), which is nearly free.
//
// Harris's 2007 version relied on the 32 lanes running in lockstep, with a `volatile`
// pointer so that every access really went to shared memory. Since Volta (sm_70), each
// lane has its own program counter and the lanes of a warp may interleave: lane 0 may
// read sdata[16] before or after lane 16 overwrites it. __syncwarp() between the reads
// and the writes of each step restores the order; the register `v` keeps each lane's
// read separate from its write.
template <class T>
__device__ void warp_reduce(T* sdata, unsigned tid) {
    T v = sdata[tid];
#pragma unroll
    for (unsigned s = 32; s > 0; s /= 2) {
        v += sdata[tid + s];
        __syncwarp();  // every lane has read step s's inputs ...
        sdata[tid] = v;
        __syncwarp();  // ... before any lane's result overwrites them, and is visible after
    }
}

// Lesson 4's kernel with the last warp unrolled.
template <class T>
__global__ void reduce_unroll_last_warp(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    __shared__ T sdata[kThreads];  // launched with blockDim.x == kThreads
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * (2 * blockDim.x) + tid;
    T sum = i < count ? in[i] : T{};  // the last block overhangs the input: pad with zeros
    if (i + blockDim.x < count) sum += in[i + blockDim.x];
    sdata[tid] = sum;
    __syncthreads();

    for (unsigned s = blockDim.x / 2; s > 32; s /= 2) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) warp_reduce(sdata, tid);
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

size_t blocks_for(size_t count) { return tut::reduction::ceil_div(count, kElementsPerBlock); }

template <class T>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_unroll_last_warp<T><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_unroll_last_warp");
}

// n elements -> n/512 partial sums -> n/262144 -> ... -> 1: one launch per level.
template <class T>
void run_sum(const T* in, size_t n, T* out, void* workspace) {
    tut::reduction::reduce_in_passes<T>(in, n, out, workspace, blocks_for, launch_pass<T>);
}

template <class T>
size_t workspace_bytes(size_t n) {
    return tut::reduction::multi_pass_workspace_bytes<T>(n, blocks_for);
}

// Every element goes through 1 + log2(256) = log2(512) = 9 additions per pass.
size_t depth(size_t n) { return tut::reduction::tree_depth(n, blocks_for, kElementsPerBlock); }

template <class T>
tut::reduction::Variant<T> variant() {
    return {tut::reduction::type_name<T>(), run_sum<T>, workspace_bytes<T>, depth,
            reinterpret_cast<const void*>(reduce_unroll_last_warp<T>)};
}

}  // namespace

namespace lesson {
tut::reduction::Variants reduction_variants() {
    return {{variant<double>()}, {variant<float>()}, {variant<int>()}, {variant<cuDoubleComplex>()}};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"reduction", "05_unroll_last_warp",
                               "the last warp unrolled, with __syncwarp (Harris kernel 5, Volta-safe)"};
    return tut::reduction::lesson_main(argc, argv, info, lesson::reduction_variants());
}
#endif
