// Reduction lesson 4: the first addition during the global load. Each thread loads two
// elements and adds them before the tree: half the blocks, and no thread idle at the
// tree's first step.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/reduction/04_first_add_on_load/first_add_on_load.cu -o first_add_on_load
// Run:  ./first_add_on_load      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// In this file:
//   reduce_first_add_on_load<T>   512 elements -> one partial sum per 256-thread block (Harris's kernel 4)
//   variants "double", "float", "int", "complex": passes of that kernel until one value is left
//
// Kernel 4 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;                    // threads per block
constexpr unsigned kElementsPerBlock = 2 * kThreads;  // each thread loads two elements

// Lesson 3's tree, but in lesson 3 half the threads went idle after loading: the first
// step (s = 128) kept only threads 0..127 busy. Here each thread loads two elements,
// blockDim.x apart, and adds them on the way into shared memory, so a block of 256 threads
// covers 512 elements and the grid needs half as many blocks. Every thread now does an
// addition before the tree starts.
template <class T>
__global__ void reduce_first_add_on_load(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    __shared__ T sdata[kThreads];  // launched with blockDim.x == kThreads
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * (2 * blockDim.x) + tid;
    T sum = i < count ? in[i] : T{};  // the last block overhangs the input: pad with zeros
    if (i + blockDim.x < count) sum += in[i + blockDim.x];
    sdata[tid] = sum;
    __syncthreads();

    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

// ---- Plumbing: one launch per level of the tree ------------------------------------------

size_t blocks_for(size_t count) { return tut::reduction::ceil_div(count, kElementsPerBlock); }

template <class T>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_first_add_on_load<T><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_first_add_on_load");
}

// Every element goes through 1 + log2(256) = log2(512) = 9 additions per pass.
size_t depth(size_t n) { return tut::reduction::tree_depth(n, blocks_for, kElementsPerBlock); }

// n elements -> n/512 partial sums -> n/262144 -> ... -> 1: one launch per level.
template <class T>
tut::reduction::Variant<T> variant() {
    tut::reduction::Variant<T> v = tut::reduction::multi_pass_variant<T>(blocks_for, launch_pass<T>);
    v.name = tut::reduction::type_name<T>();
    v.depth = depth;
    v.kernel = tut::reduction::kernel_id(reduce_first_add_on_load<T>);
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
    const tut::LessonInfo info{"reduction", "04_first_add_on_load",
                               "first add during the global load: half the blocks (Harris kernel 4)"};
    return tut::reduction::lesson_main(argc, argv, info, lesson::reduction_variants());
}
