// Reduction lesson 2: lesson 1's tree with the additions given to threads 0, 1, 2, ...
// (a strided index): whole warps work or idle, no modulo, but shared-memory bank conflicts.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/02_interleaved_strided/interleaved_strided.cu -o interleaved_strided
// Run:  ./interleaved_strided      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// In this file:
//   reduce_interleaved_strided<T>   256 elements -> one partial sum per block (Harris's kernel 2)
//   variants "double", "float", "int", "complex": passes of that kernel until one value is left
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

    // TODO(exercise): the tree of lesson 1 (the same pairs, in the same order of steps),
    //   with the work of step s handed to threads 0, 1, 2, ... as drawn above.
    //   What makes it hard: thread k no longer works on "its" element; it must find the
    //   pair it owns at step s from k and s alone, and at every step fewer pairs are left
    //   than threads. The barrier rule of lesson 1 still holds.
    //   Hints: where does the k-th pair of step s start? Which threads have no pair left?
    //   Draw steps s = 1 and s = 2 for 8 threads before you write anything.
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

// ---- Plumbing: one launch per level of the tree ------------------------------------------

size_t blocks_for(size_t count) { return tut::reduction::ceil_div(count, kThreads); }

template <class T>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_interleaved_strided<T><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_interleaved_strided");
}

// Every element goes through log2(256) = 8 additions per pass.
size_t depth(size_t n) { return tut::reduction::tree_depth(n, blocks_for, kThreads); }

// n elements -> n/256 partial sums -> n/65536 -> ... -> 1: one launch per level.
template <class T>
tut::reduction::Variant<T> variant() {
    tut::reduction::Variant<T> v = tut::reduction::multi_pass_variant<T>(blocks_for, launch_pass<T>);
    v.name = tut::reduction::type_name<T>();
    v.depth = depth;
    v.kernel = tut::reduction::kernel_id(reduce_interleaved_strided<T>);
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
    const tut::LessonInfo info{"reduction", "02_interleaved_strided",
                               "interleaved addressing, strided index: no divergence, bank conflicts (Harris kernel 2)"};
    return tut::reduction::lesson_main(argc, argv, info, lesson::reduction_variants());
}
