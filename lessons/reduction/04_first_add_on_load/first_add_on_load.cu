// Reduction lesson 4: the first add during the global load (half the blocks, no idle threads at step 1).
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/04_first_add_on_load/first_add_on_load.cu -o first_add_on_load
// Run:  ./first_add_on_load      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Kernel 4 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;                  // threads per block
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
    // TODO(exercise): this block covers 2 * blockDim.x elements, starting at element
    //   blockIdx.x * 2 * blockDim.x, but each thread loads only one. Also add the element
    //   blockDim.x further on (when it is inside the input) before storing into sdata[tid].
    sdata[tid] = i < count ? in[i] : T{};  // the last block overhangs the input: pad with zeros
    __syncthreads();

    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

size_t blocks_for(size_t count) { return tut::reduction::ceil_div(count, kElementsPerBlock); }

template <class T>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_first_add_on_load<T><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_first_add_on_load");
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
            reinterpret_cast<const void*>(reduce_first_add_on_load<T>)};
}

}  // namespace

namespace lesson {
tut::reduction::Variants reduction_variants() {
    return {{variant<double>()}, {variant<float>()}, {variant<int>()}, {variant<cuDoubleComplex>()}};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"reduction", "04_first_add_on_load",
                               "first add during the global load: half the blocks (Harris kernel 4)"};
    return tut::reduction::lesson_main(argc, argv, info, lesson::reduction_variants());
}
#endif
