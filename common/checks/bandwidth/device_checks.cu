// The device side of the bandwidth checks (see device_checks.hpp): a patterned source
// written from each element's index, and checking kernels that compare an output region
// bitwise with what it must hold and return only a summary.
#include "device_checks.hpp"

#include "tut/buffer.hpp"
#include "tut/check.hpp"

#include <algorithm>

namespace bandwidth_checks {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kPoisonBits = 0xFFFFFFFFu;  // what DeviceBuffer::poison() writes: a NaN

// What the checking kernels add up: wrong elements and the smallest wrong index.
struct Tally {
    unsigned long long wrong;
    unsigned long long first;
};

// Blocks for a grid-stride loop over n elements: enough to fill the GPU, no more than needed.
int blocks_for(size_t n) {
    int device = 0, sms = 0;
    TUT_CUDA(cudaGetDevice(&device));
    TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const size_t needed = std::max<size_t>(1, (n + kThreads - 1) / kThreads);
    return static_cast<int>(std::min<size_t>(needed, size_t(sms) * 8));
}

__global__ void fill_pattern_kernel(float* p, size_t n, uint64_t first) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += stride) p[i] = pattern_value(first + i);
}

// Adds each thread's count and first wrong index to the tally, one pair of atomics per
// warp. Every thread of the block calls it (blocks are whole warps).
__device__ void add_to_tally(Tally* tally, unsigned long long wrong, unsigned long long first) {
    for (int offset = 16; offset > 0; offset /= 2) {
        wrong += __shfl_down_sync(0xFFFFFFFFu, wrong, offset);
        const unsigned long long other = __shfl_down_sync(0xFFFFFFFFu, first, offset);
        if (other < first) first = other;
    }
    if (threadIdx.x % 32 == 0 && wrong > 0) {
        atomicAdd(&tally->wrong, wrong);
        atomicMin(&tally->first, first);
    }
}

// out[i] for i in [begin, begin + n) must be pattern_value(src_first + i - begin);
// every other float of the region must still be poison.
__global__ void verify_copy_kernel(const float* out, size_t region, size_t begin, size_t n, uint64_t src_first,
                                   Tally* tally) {
    unsigned long long wrong = 0, first = ~0ull;
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < region; i += stride) {
        const bool inside = i >= begin && i - begin < n;
        const unsigned want = inside ? __float_as_uint(pattern_value(src_first + (i - begin))) : kPoisonBits;
        if (__float_as_uint(out[i]) != want) {
            if (wrong == 0) first = i;  // i only grows: the thread's first is its smallest
            ++wrong;
        }
    }
    add_to_tally(tally, wrong, first);
}

// out[begin + k * rows + r] must be pattern_value(indices[k] * rows + r); every other
// float of the region must still be poison.
__global__ void verify_gather_kernel(const float* out, size_t region, size_t begin, long long rows,
                                     const int* indices, long long count, Tally* tally) {
    unsigned long long wrong = 0, first = ~0ull;
    const size_t target = size_t(rows) * size_t(count);
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < region; i += stride) {
        unsigned want = kPoisonBits;
        if (i >= begin && i - begin < target) {
            const size_t t = i - begin;
            const size_t k = t / size_t(rows), r = t - k * size_t(rows);
            want = __float_as_uint(pattern_value(uint64_t(indices[k]) * uint64_t(rows) + r));
        }
        if (__float_as_uint(out[i]) != want) {
            if (wrong == 0) first = i;
            ++wrong;
        }
    }
    add_to_tally(tally, wrong, first);
}

// A zeroed tally (first = "none") on the device.
tut::DeviceBuffer<Tally> new_tally() {
    tut::DeviceBuffer<Tally> tally(1);
    const Tally start{0, ~0ull};
    TUT_CUDA(cudaMemcpy(tally.get(), &start, sizeof start, cudaMemcpyHostToDevice));
    return tally;
}

// Waits for the checking kernel and reads its tally (and the first wrong element) back.
DeviceVerdict read_verdict(const float* out, const tut::DeviceBuffer<Tally>& tally) {
    TUT_CUDA(cudaDeviceSynchronize());
    Tally t{};
    TUT_CUDA(cudaMemcpy(&t, tally.get(), sizeof t, cudaMemcpyDeviceToHost));
    DeviceVerdict v;
    v.wrong = t.wrong;
    if (t.wrong > 0) {
        v.first = static_cast<long long>(t.first);
        TUT_CUDA(cudaMemcpy(&v.found, out + t.first, sizeof(float), cudaMemcpyDeviceToHost));
    }
    return v;
}

}  // namespace

void fill_pattern(float* p, size_t n, uint64_t first) {
    if (n == 0) return;
    fill_pattern_kernel<<<blocks_for(n), kThreads>>>(p, n, first);
    TUT_LAUNCH("fill_pattern_kernel");
    TUT_CUDA(cudaDeviceSynchronize());
}

DeviceVerdict verify_copy(const float* out, size_t region, size_t begin, size_t n, uint64_t src_first) {
    if (region == 0) return {};
    tut::DeviceBuffer<Tally> tally = new_tally();
    verify_copy_kernel<<<blocks_for(region), kThreads>>>(out, region, begin, n, src_first, tally.get());
    TUT_LAUNCH("verify_copy_kernel");
    return read_verdict(out, tally);
}

DeviceVerdict verify_gather(const float* out, size_t region, size_t begin, long long rows, const int* indices,
                            long long count) {
    if (region == 0) return {};
    tut::DeviceBuffer<Tally> tally = new_tally();
    verify_gather_kernel<<<blocks_for(region), kThreads>>>(out, region, begin, rows, indices, count, tally.get());
    TUT_LAUNCH("verify_gather_kernel");
    return read_verdict(out, tally);
}

}  // namespace bandwidth_checks
