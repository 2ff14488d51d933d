// docs/experiments/bandwidth_writeback.cu: where a timed copy's writes go.
// The bandwidth lessons flush L2 before each timed run (TimingOptions::flush_l2), so the run
// reads from DRAM. Its writes land in L2, and those that are still there when the stop event
// fires reach DRAM later, during the next run's flush, outside the events. For a copy much
// larger than L2 that is a small share; for one that fits in L2 it is most of the writes.
// This program times cudaMemcpy device to device three ways, in GB/s of read + write bytes:
//   as timed      the lessons' way: flush, start, copy, stop (median of 20 after 3)
//   + write-back  flush, start, copy, flush, stop, less the time of flush, start, flush, stop:
//                 the copy with its dirty lines written back
//   held          as timed, with the launch held (TimingOptions::hold_launch)
// Build: nvcc -O3 -std=c++17 -arch=native -Icommon/include docs/experiments/bandwidth_writeback.cu -o bandwidth_writeback
#include "tut/buffer.hpp"
#include "tut/check.hpp"
#include "tut/timer.hpp"

#include <cstdio>
#include <vector>

namespace {

/// Median ms of `repeats` runs of: flush, start event, work(), [flush], stop event.
template <class Work>
double time_with_flush_inside(tut::L2Flusher& flusher, Work&& work, bool flush_inside, int repeats) {
    cudaEvent_t start, stop;
    TUT_CUDA(cudaEventCreate(&start));
    TUT_CUDA(cudaEventCreate(&stop));
    std::vector<double> samples;
    for (int i = -3; i < repeats; ++i) {  // i < 0: warm-up
        flusher.flush();
        TUT_CUDA(cudaEventRecord(start));
        work();
        if (flush_inside) flusher.flush();
        TUT_CUDA(cudaEventRecord(stop));
        TUT_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        TUT_CUDA(cudaEventElapsedTime(&ms, start, stop));
        if (i >= 0) samples.push_back(ms);
    }
    TUT_CUDA(cudaEventDestroy(start));
    TUT_CUDA(cudaEventDestroy(stop));
    return tut::median_of(samples);
}

}  // namespace

int main() {
    int device = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        std::printf("SKIPPED: no CUDA GPU\n");
        return 77;
    }
    std::printf("%s, L2 %d MB\n", prop.name, prop.l2CacheSize >> 20);
    std::printf("%12s %14s %16s %10s\n", "bytes", "as timed GB/s", "+ write-back GB/s", "held GB/s");
    tut::L2Flusher flusher;
    for (size_t mb : {16, 64, 256, 1024}) {
        const size_t bytes = mb << 20;
        tut::DeviceBuffer<char> src(bytes), dst(bytes);
        TUT_CUDA(cudaMemset(src.get(), 1, bytes));
        TUT_CUDA(cudaMemset(dst.get(), 0, bytes));
        auto copy = [&] { TUT_CUDA(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice)); };
        const double as_timed = tut::time_gpu(copy, tut::TimingOptions{3, 20, true, false}).median_ms;
        const double held = tut::time_gpu(copy, tut::TimingOptions{3, 20, true, true}).median_ms;
        const double with_flush = time_with_flush_inside(flusher, copy, true, 20);
        const double flush_alone = time_with_flush_inside(flusher, [] {}, true, 20);
        auto gbs = [&](double ms) { return 2.0 * bytes / (ms * 1e-3) * 1e-9; };
        std::printf("%12zu %14.0f %16.0f %10.0f\n", bytes, gbs(as_timed), gbs(with_flush - flush_alone), gbs(held));
    }
    return 0;
}
