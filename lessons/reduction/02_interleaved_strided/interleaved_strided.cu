// Reduction lesson 2: interleaved addressing with a strided index (no divergence, bank conflicts).
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/02_interleaved_strided/interleaved_strided.cu -o interleaved_strided
// Run:  ./interleaved_strided      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Kernel 2 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;  // threads per block = elements each block reduces

// The same tree as lesson 1 (at step s, element 2s*k += element 2s*k + s), but the
// work goes to threads 0, 1, 2, ... instead of to threads 0, 2s, 4s, ...:
//   s = 1:  thread 0: 0 += 1,  thread 1: 2 += 3,  thread 2: 4 += 5, ...
//   s = 2:  thread 0: 0 += 2,  thread 1: 4 += 6, ...
// The working threads are now contiguous, so whole warps either work or skip: no
// divergence until fewer than 32 threads are left. But thread k touches element 2s*k,
// a stride of 2s elements, and shared memory serves such strides in several passes.
template <class T>
__global__ void reduce_interleaved_strided(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    __shared__ T sdata[kThreads];  // launched with blockDim.x == kThreads
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    sdata[tid] = i < count ? in[i] : T{};  // the last block overhangs the input: pad with zeros
    __syncthreads();

    // TODO(exercise): the tree of lesson 1 (s = 1, 2, 4, ... while s < blockDim.x, with a
    //   __syncthreads() after every step), but give step s's additions to threads 0, 1, 2, ...:
    //   thread tid works on index = 2 * s * tid, if that index is inside the block, adding
    //   sdata[index + s] into sdata[index]. Compare with the picture above this kernel.
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

size_t blocks_for(size_t count) { return tut::reduction::ceil_div(count, kThreads); }

template <class T>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_interleaved_strided<T><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_interleaved_strided");
}

// n elements -> n/256 partial sums -> n/65536 -> ... -> 1: one launch per level.
template <class T>
void run_sum(const T* in, size_t n, T* out, void* workspace) {
    tut::reduction::reduce_in_passes<T>(in, n, out, workspace, blocks_for, launch_pass<T>);
}

template <class T>
size_t workspace_bytes(size_t n) {
    return tut::reduction::multi_pass_workspace_bytes<T>(n, blocks_for);
}

// Every element goes through log2(256) = 8 additions per pass.
size_t depth(size_t n) { return tut::reduction::tree_depth(n, blocks_for, kThreads); }

template <class T>
tut::reduction::Variant<T> variant() {
    return {tut::reduction::type_name<T>(), run_sum<T>, workspace_bytes<T>, depth,
            reinterpret_cast<const void*>(reduce_interleaved_strided<T>)};
}

}  // namespace

namespace lesson {
tut::reduction::Variants reduction_variants() {
    return {{variant<double>()}, {variant<float>()}, {variant<int>()}, {variant<cuDoubleComplex>()}};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"reduction", "02_interleaved_strided",
                               "interleaved addressing, strided index: no divergence, bank conflicts (Harris kernel 2)"};
    return tut::reduction::lesson_main(argc, argv, info, lesson::reduction_variants());
}
#endif
