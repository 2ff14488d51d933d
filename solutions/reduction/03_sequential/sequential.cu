// Reduction lesson 3: sequential addressing. Each step folds the upper half of what is
// left onto the lower half: contiguous working threads and stride-1 shared-memory
// accesses, so no divergence above 32 threads and no bank conflicts.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/reduction/03_sequential/sequential.cu -o sequential
// Run:  ./sequential      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// In this file:
//   reduce_sequential<T>   256 elements -> one partial sum per block (Harris's kernel 3)
//   variants "double", "float", "int", "complex": passes of that kernel until one value is left
//
// Kernel 3 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;  // threads per block = elements each block reduces

// A different tree: fold the upper half of the array onto the lower half, then the
// upper half of what is left, and so on:
//   s = 128:  thread k: k += k + 128   (k < 128)
//   s = 64:   thread k: k += k + 64    (k < 64)
//   ...
//   s = 1:    thread 0: 0 += 1
// Working threads are contiguous (no divergence above 32 threads), and consecutive
// threads read consecutive elements (stride 1): every shared-memory access of a warp
// is served in the minimum number of passes, with no bank conflicts.
template <class T>
__global__ void reduce_sequential(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    __shared__ T sdata[kThreads];  // launched with blockDim.x == kThreads
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    sdata[tid] = i < count ? in[i] : T{};  // the last block overhangs the input: pad with zeros
    __syncthreads();

    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

// ---- Plumbing: one launch per level of the tree ------------------------------------------

size_t blocks_for(size_t count) { return tut::reduction::ceil_div(count, kThreads); }

template <class T>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_sequential<T><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_sequential");
}

// Every element goes through log2(256) = 8 additions per pass.
size_t depth(size_t n) { return tut::reduction::tree_depth(n, blocks_for, kThreads); }

// n elements -> n/256 partial sums -> n/65536 -> ... -> 1: one launch per level.
template <class T>
tut::reduction::Variant<T> variant() {
    tut::reduction::Variant<T> v = tut::reduction::multi_pass_variant<T>(blocks_for, launch_pass<T>);
    v.name = tut::reduction::type_name<T>();
    v.depth = depth;
    v.kernel = tut::reduction::kernel_id(reduce_sequential<T>);
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
    const tut::LessonInfo info{"reduction", "03_sequential",
                               "sequential addressing: no divergence, no bank conflicts (Harris kernel 3)"};
    return tut::reduction::lesson_main(argc, argv, info, lesson::reduction_variants());
}
