/// @file timer.hpp
/// @brief GPU timing with CUDA events: warm-up, repeats, median, optional L2 flush.
///
/// Usage:
///
///     tut::TimingOptions opt{.warmup = 3, .repeats = 20, .flush_l2 = true};
///     tut::Timing t = tut::time_gpu([&] { my_kernel<<<g, b>>>(...); }, opt);
///     printf("%.3f ms\n", t.median_ms);
///
/// The callable is run `warmup` times untimed (module load, cuBLAS handle set-up and
/// clock ramp stay out of the numbers), then `repeats` times, each between its own
/// pair of events; the median of those is reported. With `flush_l2`, a buffer twice
/// the L2 size is read before every timed repeat (outside the events), so a kernel that
/// streams from DRAM is not credited with a warm cache (see L2Flusher).
///
/// With `hold_launch`, every timed repeat is queued behind a short wait on the stream
/// (a host function that returns after kHoldMicroseconds), so the start event, the work
/// and the stop event are all submitted before the GPU reaches them. Without it, an idle
/// GPU takes the start timestamp at once and then waits for the host to submit the
/// kernel: a few microseconds of host launch latency, 5-8% of a 60 us kernel. Use it for
/// a single short kernel whose bandwidth is the question; never for work whose host-side
/// cost is the subject (a solve paced by its launches would get those microseconds free).
#pragma once

#include "check.hpp"
#include "gpu.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

namespace tut {

struct TimingOptions {
    int warmup = 3;         ///< untimed runs first
    int repeats = 20;       ///< timed runs; the median is reported
    bool flush_l2 = false;  ///< evict L2 before each timed run
    bool hold_launch = false;  ///< queue each timed run behind a short wait (see the file comment)
};

inline constexpr double kHoldMicroseconds = 50.0;

/// Runs on the driver's callback thread: busy-waits kHoldMicroseconds, which holds the
/// stream while the host submits the timed work behind it.
inline void CUDART_CB hold_stream(void*) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(kHoldMicroseconds);
    while (std::chrono::steady_clock::now() < until) {
    }
}

struct Timing {
    double median_ms = 0, min_ms = 0, max_ms = 0;
    int repeats = 0;
};

#if defined(__CUDACC__)
namespace detail {
/// Reads `count` int4s; the never-true store keeps the loads from being optimised away.
/// Static: each translation unit that includes this header gets its own copy.
static __global__ void read_to_evict_l2(const int4* __restrict__ data, size_t count, int* sink) {
    int mix = 0;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
        const int4 v = __ldcg(data + i);
        mix ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (mix == 0x7fffffff) *sink = mix;  // the buffer holds zeros: never true
}
}  // namespace detail
#endif

/// Evicts L2 by reading a device buffer twice its size that nothing writes after set-up.
/// Reading, not overwriting: a memset leaves L2 full of dirty lines, and the timed work
/// that follows pays for their write-back (on an H100, 3-10% of a 100-450 us stream).
/// Reading also drains the previous run's own dirty lines (its output) here, outside the
/// events, and leaves L2 holding only clean lines of this buffer.
class L2Flusher {
  public:
    L2Flusher() {
        int device = 0, l2_bytes = 0;
        TUT_CUDA(cudaGetDevice(&device));
        TUT_CUDA(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
        bytes_ = 2 * static_cast<size_t>(l2_bytes > 0 ? l2_bytes : (8 << 20));
        blocks_ = 4 * std::max(sm_count(), 1);
        TUT_CUDA(cudaMalloc(&buffer_, bytes_ + sizeof(int)));
        TUT_CUDA(cudaMemset(buffer_, 0, bytes_ + sizeof(int)));
        TUT_CUDA(cudaDeviceSynchronize());
    }
    ~L2Flusher() { cudaFree(buffer_); }
    L2Flusher(const L2Flusher&) = delete;
    L2Flusher& operator=(const L2Flusher&) = delete;
    void flush(cudaStream_t stream = nullptr) {
#if defined(__CUDACC__)
        detail::read_to_evict_l2<<<blocks_, 512, 0, stream>>>(static_cast<const int4*>(buffer_), bytes_ / sizeof(int4),
                                                             reinterpret_cast<int*>(static_cast<char*>(buffer_) + bytes_));
        TUT_LAUNCH("read_to_evict_l2");
#else
        // A translation unit that nvcc did not compile cannot launch the kernel; no
        // program times DRAM-bound work from one, so the plain overwrite is enough here.
        TUT_CUDA(cudaMemsetAsync(buffer_, 0, bytes_, stream));
#endif
    }

  private:
    void* buffer_ = nullptr;
    size_t bytes_ = 0;
    int blocks_ = 0;
};

/// Median of a vector of samples (by value: the input is sorted in the copy).
inline double median_of(std::vector<double> samples) {
    if (samples.empty()) return 0.0;
    std::sort(samples.begin(), samples.end());
    size_t mid = samples.size() / 2;
    return samples.size() % 2 ? samples[mid] : 0.5 * (samples[mid - 1] + samples[mid]);
}

/// Times `work` (which enqueues GPU work on `stream`) with CUDA events. See the file comment.
template <class Work>
Timing time_gpu(Work&& work, const TimingOptions& opt = {}, cudaStream_t stream = nullptr) {
    for (int i = 0; i < opt.warmup; ++i) work();
    TUT_CUDA(cudaStreamSynchronize(stream));

    std::unique_ptr<L2Flusher> flusher;
    if (opt.flush_l2) flusher = std::make_unique<L2Flusher>();
    cudaEvent_t start, stop;
    TUT_CUDA(cudaEventCreate(&start));
    TUT_CUDA(cudaEventCreate(&stop));
    std::vector<double> samples;
    int repeats = std::max(1, opt.repeats);
    for (int i = 0; i < repeats; ++i) {
        if (opt.hold_launch) TUT_CUDA(cudaLaunchHostFunc(stream, hold_stream, nullptr));
        if (flusher) flusher->flush(stream);
        TUT_CUDA(cudaEventRecord(start, stream));
        work();
        TUT_CUDA(cudaEventRecord(stop, stream));
        TUT_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        TUT_CUDA(cudaEventElapsedTime(&ms, start, stop));
        samples.push_back(ms);
    }
    TUT_CUDA(cudaEventDestroy(start));
    TUT_CUDA(cudaEventDestroy(stop));

    Timing t;
    t.repeats = repeats;
    t.min_ms = *std::min_element(samples.begin(), samples.end());
    t.max_ms = *std::max_element(samples.begin(), samples.end());
    t.median_ms = median_of(samples);
    return t;
}

}  // namespace tut
