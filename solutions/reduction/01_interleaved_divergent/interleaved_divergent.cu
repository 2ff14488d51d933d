// Reduction lesson 1: the baseline. Each block of 256 threads adds its 256 elements with a
// binary tree in shared memory (interleaved addressing, a divergent branch); the same
// kernel then sums the blocks' partial sums, and again, until one value is left.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/reduction/01_interleaved_divergent/interleaved_divergent.cu -o interleaved_divergent
// Run:  ./interleaved_divergent      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// In this file:
//   reduce_interleaved_divergent<T>   256 elements -> one partial sum per block (Harris's kernel 1)
//   variants "double", "float", "int", "complex": passes of that kernel until one value is left
//
// Kernel 1 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;  // threads per block = elements each block reduces

// Each block copies its kThreads elements into shared memory and adds them with a
// binary tree. At step s, every thread whose index is a multiple of 2s adds the value
// s places to its right:
//   s = 1:  0 += 1,  2 += 3,  4 += 5, ...
//   s = 2:  0 += 2,  4 += 6, ...
//   s = 4:  0 += 4, ...
// After log2(kThreads) steps the block's sum is in sdata[0]. __syncthreads() between
// steps: a step reads what other threads (other warps) wrote in the step before.
template <class T>
__global__ void reduce_interleaved_divergent(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    __shared__ T sdata[kThreads];  // launched with blockDim.x == kThreads
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    sdata[tid] = i < count ? in[i] : T{};  // the last block overhangs the input: pad with zeros
    __syncthreads();

    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        // Divergent: within a warp only the threads with tid % (2s) == 0 add, the others
        // idle through the same instructions; and % is a slow integer operation.
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

// ---- Plumbing: one launch per level of the tree ------------------------------------------

size_t blocks_for(size_t count) { return tut::reduction::ceil_div(count, kThreads); }

template <class T>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_interleaved_divergent<T><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_interleaved_divergent");
}

// Every element goes through log2(256) = 8 additions per pass.
size_t depth(size_t n) { return tut::reduction::tree_depth(n, blocks_for, kThreads); }

// n elements -> n/256 partial sums -> n/65536 -> ... -> 1: one launch per level.
template <class T>
tut::reduction::Variant<T> variant() {
    tut::reduction::Variant<T> v = tut::reduction::multi_pass_variant<T>(blocks_for, launch_pass<T>);
    v.name = tut::reduction::type_name<T>();
    v.depth = depth;
    v.kernel = tut::reduction::kernel_id(reduce_interleaved_divergent<T>);
    return v;
}

}  // namespace

namespace lesson {
tut::reduction::Variants reduction_variants() {
    tut::reduction::Variants all;
    all.f64 = {variant<double>()};
    all.f32 = {variant<float>()};
    all.i32 = {variant<int>()};
    all.c64 = {variant<cuDoubleComplex>()};
    return all;
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo info{"reduction", "01_interleaved_divergent",
                               "shared-memory tree, interleaved addressing, divergent branch (Harris kernel 1)"};
    return tut::reduction::lesson_main(argc, argv, info, lesson::reduction_variants());
}
