// Reduction lesson 10: cub::DeviceReduce::Sum, the library a user should call: its
// two-call convention for temporary storage, and its run-to-run determinism.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/reduction/10_cub/cub.cu -o cub
// Run:  ./cub      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// In this file:
//   workspace_bytes<T>(n)   how much temporary storage CUB needs for n elements
//   run_sum<T>(...)         the reduction itself, in that storage
//   variants "cub::DeviceReduce::Sum double", "... float", "... int", "... complex"
//
// CUB ships with the CUDA toolkit (header-only, part of CCCL): nothing to link.
#include "tut/reduction.hpp"

#include <cub/device/device_reduce.cuh>

namespace {

// CUB's device-wide algorithms take their scratch memory from the caller, and are called
// twice: once to say how much they need, once to run (on the given stream; here the
// default one). The track's Variant interface is built the same way: workspace_bytes(n),
// then run(). Allocate once and reuse: cudaMalloc synchronizes the device and costs far
// more than the sum of a few MB.
template <class T>
size_t workspace_bytes(size_t n) {
    tut::reduction::require_count(n);
    size_t temp_bytes = 0;
    TUT_CUDA(cub::DeviceReduce::Sum(nullptr, temp_bytes, static_cast<const T*>(nullptr), static_cast<T*>(nullptr), n));
    return temp_bytes;
}

// Sum() with cuda::std::plus<> and the initial value T{} (zero; for cuDoubleComplex the
// operator+ of tut/reduction.hpp). CUB returns launch errors as a cudaError_t.
// Determinism: CUB documents that DeviceReduce "provides run-to-run determinism for
// pseudo-associative reduction (e.g. addition of floating point types) on the same
// GPU device": a fixed tree with no atomics, so the same input gives the same bits on
// every run (not necessarily across GPU generations, whose tile sizes differ).
template <class T>
void run_sum(const T* in, size_t n, T* out, void* workspace) {
    size_t temp_bytes = workspace_bytes<T>(n);  // (also refuses n > 2^30)
    TUT_CUDA(cub::DeviceReduce::Sum(workspace, temp_bytes, in, out, n));
}

template <class T>
tut::reduction::Variant<T> variant() {
    tut::reduction::Variant<T> v;
    v.name = std::string("cub::DeviceReduce::Sum ") + tut::reduction::type_name<T>();
    v.run = run_sum<T>;
    v.workspace_bytes = workspace_bytes<T>;
    v.depth = tut::reduction::cub_depth;
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
    const tut::LessonInfo info{"reduction", "10_cub", "cub::DeviceReduce::Sum: temporary storage, determinism"};
    return tut::reduction::lesson_main(argc, argv, info, lesson::reduction_variants());
}
