// Reduction lesson 10: cub::DeviceReduce::Sum, the library a user should call.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/10_cub/cub.cu -o cub
// Run:  ./cub      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// CUB ships with the CUDA toolkit (header-only, part of CCCL): nothing to link.
#include "tut/reduction.hpp"

#include <cub/device/device_reduce.cuh>

namespace {

// CUB's device-wide algorithms take their scratch memory from the caller, in two calls
// of the same function:
//   1. with d_temp_storage == nullptr, it only writes the bytes it needs into temp_bytes;
//   2. with the storage, it runs (on the given stream; here the default one).
// The track's Variant interface is built the same way: workspace_bytes(n), then run().
// Allocate once and reuse: cudaMalloc synchronizes the device and costs far more than
// the sum of a few MB.
template <class T>
size_t workspace_bytes(size_t n) {
    tut::reduction::require_count(n);
    // TODO(exercise): ask cub::DeviceReduce::Sum how many bytes of temporary storage it
    //   needs for n elements: call it with d_temp_storage = nullptr, a size_t temp_bytes
    //   it writes into, typed null pointers for d_in (const T*) and d_out (T*), and n.
    //   Check its cudaError_t with TUT_CUDA. Return temp_bytes.
    return 0;
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
    // TODO(exercise): call cub::DeviceReduce::Sum again, now with the workspace, the
    //   temp_bytes it holds, in, out and n; check it with TUT_CUDA.
    (void)workspace, (void)temp_bytes, (void)in;
    TUT_CUDA(cudaMemsetAsync(out, 0, sizeof(T)));  // placeholder: remove it
}

template <class T>
tut::reduction::Variant<T> variant() {
    return {std::string("cub::DeviceReduce::Sum ") + tut::reduction::type_name<T>(), run_sum<T>, workspace_bytes<T>,
            tut::reduction::cub_depth, nullptr};
}

}  // namespace

namespace lesson {
tut::reduction::Variants reduction_variants() {
    return {{variant<double>()}, {variant<float>()}, {variant<int>()}, {variant<cuDoubleComplex>()}};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"reduction", "10_cub", "cub::DeviceReduce::Sum: temporary storage, determinism"};
    return tut::reduction::lesson_main(argc, argv, info, lesson::reduction_variants());
}
#endif
