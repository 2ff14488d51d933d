// Bandwidth lesson 1: how fast bytes cross the host link and device memory, measured
// with cudaMemcpy over a range of sizes (what the retired bandwidthTest sample did), and
// what page-locked ("pinned") host memory changes.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/bandwidth/01_transfers/transfers.cu -o transfers
// Run:  ./transfers --sizes 4096,1048576,268435456     (--help for options)
//
// No kernels: the lesson's functions, which the driver in tut/bandwidth.hpp calls:
//   allocate_pinned / free_pinned   the host buffers of the "pinned" variants
//   transfer                        one cudaMemcpyAsync in a given direction
// Variants (--variant names): h2d-pageable, h2d-pinned, d2h-pageable, d2h-pinned, d2d.
// Counting: a host<->device transfer of B bytes moves B bytes over the link; a
// device->device copy of B bytes reads B and writes B, so it counts 2B.
#include "tut/bandwidth.hpp"

#include <cstdlib>

namespace lesson {

// Page-locked ("pinned") host memory: the driver can point the GPU's copy engines at it
// directly (DMA). Pageable memory (malloc, new, std::vector) may be swapped out or moved
// by the OS at any time, so the driver first copies it, chunk by chunk, into a pinned
// staging buffer of its own and only then starts the DMA: an extra host memcpy per byte.
void* allocate_pinned(size_t bytes) {
    if (bytes == 0) return nullptr;
    void* p = nullptr;
    TUT_CUDA(cudaMallocHost(&p, bytes));
    return p;
}

void free_pinned(void* p) {
    if (p) TUT_CUDA(cudaFreeHost(p));
}

// One copy on the default stream. The same call serves all five measurements: the
// direction and, for host memory, whether it is pinned decide how the driver moves it.
// (From pageable memory cudaMemcpyAsync returns only once the data is staged: it is not
// asynchronous with respect to the host.)
void transfer(tut::bandwidth::Direction d, void* dst, const void* src, size_t bytes) {
    using tut::bandwidth::Direction;
    const cudaMemcpyKind kind = d == Direction::HostToDevice   ? cudaMemcpyHostToDevice
                                : d == Direction::DeviceToHost ? cudaMemcpyDeviceToHost
                                                               : cudaMemcpyDeviceToDevice;
    TUT_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, nullptr));
}

}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo info{"bandwidth", "01_transfers", "cudaMemcpy bandwidth: pageable vs pinned host memory, D2D"};
    return tut::bandwidth::transfers_main(argc, argv, info);
}
