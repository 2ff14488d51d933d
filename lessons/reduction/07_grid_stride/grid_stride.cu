// Reduction lesson 7: many elements per thread with a grid-stride loop; the grid sized from the SM count.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/07_grid_stride/grid_stride.cu -o grid_stride
// Run:  ./grid_stride      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Kernel 7 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), made
// correct under independent thread scheduling (CUDA C++ Programming Guide, "Independent
// Thread Scheduling"; Lin and Grover, "Using CUDA Warp-Level Primitives", NVIDIA blog, 2018).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;     // threads per block
constexpr size_t kMinPerThread = 8;   // fewer elements per thread than this: use fewer blocks

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

// This thread's share of the input: elements t, t + stride, t + 2 stride, ... where t is
// the thread's index in the grid and stride the number of threads in the grid. Four
// steps at a time: the four loads are independent, so they are all in flight at once
// instead of each waiting for the previous one. By Little's law the GPU needs bandwidth
// x latency bytes in flight, over 20 KB per SM on an H200; one 8-byte load per thread,
// 2048 threads per SM, is 16 KB (README).
// (kFourPerStep = false: one element per step, for the README's comparison.)
template <bool kFourPerStep, class T>
__device__ T grid_stride_sum(const T* __restrict__ in, size_t count) {
    // TODO(exercise): return the sum of this thread's elements t, t + stride, t + 2 stride,
    //   ... below count, where t = blockIdx.x * blockDim.x + threadIdx.x and stride is the
    //   number of threads in the grid (gridDim.x * blockDim.x). Use size_t for indices.
    //   First make it right with a simple loop. Then, `if constexpr (kFourPerStep)`, take
    //   four elements per step first (four independent loads, added as (a + b) + (c + d))
    //   while all four are below count; the simple loop finishes the last few. The README
    //   compares the two variants.
    (void)in, (void)count;
    return T{};
}

// Lesson 6's kernel, but the grid no longer grows with n. A fixed number of blocks,
// as many as the GPU holds at once, walks over the whole input: thread t of the grid
// adds elements t, t + stride, t + 2 stride, ... (stride = all threads of the grid) in a
// register, so a warp still reads 32 consecutive elements per step (coalesced). Only
// then does the block add its threads' sums with the tree. For 2^26 elements that is
// ~250 additions per thread for one tree, instead of one tree per 512 elements; the
// tree, the block start-up and the partial-sum write are paid once per ~64K elements.
// Harris's kernel 7 keeps the first add of lesson 4 inside the loop (two loads per
// step, kBlock apart) and accumulates in shared memory; a register is cheaper.
template <unsigned kBlock, class T, bool kFourPerStep = true>
__global__ void reduce_grid_stride(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    static_assert(kBlock >= 64 && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0,
                  "a power of two from 64 (warp_reduce reads sdata[tid + 32]) to 1024");
    __shared__ T sdata[kBlock];
    const unsigned tid = threadIdx.x;
    sdata[tid] = grid_stride_sum<kFourPerStep>(in, count);
    __syncthreads();

    if (kBlock >= 1024) {
        if (tid < 512) sdata[tid] += sdata[tid + 512];
        __syncthreads();
    }
    if (kBlock >= 512) {
        if (tid < 256) sdata[tid] += sdata[tid + 256];
        __syncthreads();
    }
    if (kBlock >= 256) {
        if (tid < 128) sdata[tid] += sdata[tid + 128];
        __syncthreads();
    }
    if (kBlock >= 128) {
        if (tid < 64) sdata[tid] += sdata[tid + 64];
        __syncthreads();
    }
    if (tid < 32) warp_reduce(sdata, tid);
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

// As many blocks as fit on the GPU at once (SMs x blocks per SM, from the occupancy
// calculator), but no more than leave each thread kMinPerThread elements: the second
// pass, over the first pass's ~1000 partial sums, runs in a single block.
template <unsigned kBlock, class T, bool kFourPerStep = true>
size_t blocks_for(size_t count) {
    static const size_t resident = tut::reduction::resident_blocks(
        reinterpret_cast<const void*>(reduce_grid_stride<kBlock, T, kFourPerStep>), kBlock);
    return std::min(resident, tut::reduction::ceil_div(count, kBlock * kMinPerThread));
}

template <unsigned kBlock, class T, bool kFourPerStep = true>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_grid_stride<kBlock, T, kFourPerStep><<<static_cast<unsigned>(blocks), kBlock>>>(in, count, partials);
    TUT_LAUNCH("reduce_grid_stride");
}

// n elements -> one partial sum per block of a full-GPU grid -> 1: two launches.
template <unsigned kBlock, class T, bool kFourPerStep = true>
void run_sum(const T* in, size_t n, T* out, void* workspace) {
    tut::reduction::reduce_in_passes<T>(in, n, out, workspace, blocks_for<kBlock, T, kFourPerStep>,
                                        launch_pass<kBlock, T, kFourPerStep>);
}

template <unsigned kBlock, class T, bool kFourPerStep = true>
size_t workspace_bytes(size_t n) {
    return tut::reduction::multi_pass_workspace_bytes<T>(n, blocks_for<kBlock, T, kFourPerStep>);
}

// Per pass, an element goes through its thread's loop (count / threads of the grid
// additions) and then the block's tree (log2 kBlock).
template <unsigned kBlock, class T, bool kFourPerStep = true>
size_t depth(size_t n) {
    return tut::reduction::grid_stride_depth(n, blocks_for<kBlock, T, kFourPerStep>, kBlock);
}

template <class T, bool kFourPerStep = true>
tut::reduction::Variant<T> variant(const std::string& name = tut::reduction::type_name<T>()) {
    return {name, run_sum<kThreads, T, kFourPerStep>, workspace_bytes<kThreads, T, kFourPerStep>,
            depth<kThreads, T, kFourPerStep>, reinterpret_cast<const void*>(reduce_grid_stride<kThreads, T, kFourPerStep>)};
}

}  // namespace

namespace lesson {
tut::reduction::Variants reduction_variants() {
    return {{variant<double>(), variant<double, false>("double, one load per step")},
            {variant<float>()},
            {variant<int>()},
            {variant<cuDoubleComplex>()}};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"reduction", "07_grid_stride",
                               "many elements per thread: grid-stride loop, grid from the SM count (Harris kernel 7)"};
    return tut::reduction::lesson_main(argc, argv, info, lesson::reduction_variants());
}
#endif
