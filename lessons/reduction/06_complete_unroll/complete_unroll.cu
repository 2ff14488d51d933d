// Reduction lesson 6: complete unrolling, with the block size as a template parameter.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/06_complete_unroll/complete_unroll.cu -o complete_unroll
// Run:  ./complete_unroll      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Kernel 6 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), made
// correct under independent thread scheduling (CUDA C++ Programming Guide, "Independent
// Thread Scheduling"; Lin and Grover, "Using CUDA Warp-Level Primitives", NVIDIA blog, 2018).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;  // threads per block of the headline variant

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

// Lesson 5's kernel with the block size kBlock known to the compiler. The tree's loop
// had a bound, blockDim.x, known only at run time: a loop counter, a compare and a
// branch per step. With kBlock a template parameter, each `if (kBlock >= ...)` below is
// decided at compile time and vanishes, and what is left is straight-line code.
// Harris picks the instantiation with a switch on the block size at launch; here every
// variant is its own instantiation.
template <unsigned kBlock, class T>
__global__ void reduce_complete_unroll(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    static_assert(kBlock >= 64 && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0,
                  "a power of two from 64 (warp_reduce reads sdata[tid + 32]) to 1024");
    __shared__ T sdata[kBlock];
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * (2 * kBlock) + tid;
    T sum = i < count ? in[i] : T{};  // the last block overhangs the input: pad with zeros
    if (i + kBlock < count) sum += in[i + kBlock];
    sdata[tid] = sum;
    __syncthreads();

    // TODO(exercise): lesson 5's loop `for (s = blockDim.x / 2; s > 32; s /= 2)`, written
    //   out step by step for s = 512, 256, 128, 64. Guard each step with a test on kBlock
    //   (e.g. `if (kBlock >= 512) { ... }`) so that the compiler keeps only the steps this
    //   block size needs; inside, `if (tid < s)` add sdata[tid + s], then __syncthreads().
    if (tid < 32) warp_reduce(sdata, tid);
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

template <unsigned kBlock>
size_t blocks_for(size_t count) {
    return tut::reduction::ceil_div(count, 2 * kBlock);
}

template <unsigned kBlock, class T>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_complete_unroll<kBlock, T><<<static_cast<unsigned>(blocks), kBlock>>>(in, count, partials);
    TUT_LAUNCH("reduce_complete_unroll");
}

// n elements -> n/(2 kBlock) partial sums -> ... -> 1: one launch per level.
template <unsigned kBlock, class T>
void run_sum(const T* in, size_t n, T* out, void* workspace) {
    tut::reduction::reduce_in_passes<T>(in, n, out, workspace, blocks_for<kBlock>, launch_pass<kBlock, T>);
}

template <unsigned kBlock, class T>
size_t workspace_bytes(size_t n) {
    return tut::reduction::multi_pass_workspace_bytes<T>(n, blocks_for<kBlock>);
}

// Every element goes through log2(2 kBlock) additions per pass.
template <unsigned kBlock>
size_t depth(size_t n) {
    return tut::reduction::tree_depth(n, blocks_for<kBlock>, 2 * kBlock);
}

template <class T, unsigned kBlock = kThreads>
tut::reduction::Variant<T> variant(const std::string& name = tut::reduction::type_name<T>()) {
    return {name, run_sum<kBlock, T>, workspace_bytes<kBlock, T>, depth<kBlock>,
            reinterpret_cast<const void*>(reduce_complete_unroll<kBlock, T>)};
}

}  // namespace

namespace lesson {
// The headline variant of each type has 256 threads, as in lessons 1-5; for double the
// template also gives 128- and 512-thread blocks for free (the README compares them).
tut::reduction::Variants reduction_variants() {
    return {{variant<double>(), variant<double, 128>("double, 128 threads"), variant<double, 512>("double, 512 threads")},
            {variant<float>()},
            {variant<int>()},
            {variant<cuDoubleComplex>()}};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"reduction", "06_complete_unroll",
                               "complete unrolling with a template block size (Harris kernel 6)"};
    return tut::reduction::lesson_main(argc, argv, info, lesson::reduction_variants());
}
#endif
