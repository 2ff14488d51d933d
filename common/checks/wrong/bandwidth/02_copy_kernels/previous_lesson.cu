// wrong: bandwidth/02_copy_kernels: kInFlight ignored: each thread loads and stores one float4 at a time, so only one load is in flight: correct, without the lesson's last step
// caught by: [performance]
// kind: previous-lesson
// the [performance] case times 'float4 x4 in flight, grid-stride, 2 blocks per SM' against cudaMemcpy:
// it falls to what 'float4, grid-stride, 2 blocks per SM' reaches (about 80% on an H100; solution 96%,
// gate 88%)
// bandwidth/02_copy_kernels: copy kernels that keep enough bytes in flight to match cudaMemcpy.
// Starts from: lesson 01's device-to-device cudaMemcpy, now the yardstick. Adds: kernels that
// copy, and what it takes for one to move bytes as fast as cudaMemcpy: enough bytes in flight
// (16-byte accesses, enough threads or enough loads per thread) while every warp access stays
// coalesced.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/bandwidth/02_copy_kernels/copy_kernels.cu -o copy_kernels
// Run:  ./copy_kernels --n 134217728     (--help for options; --profile for one clean launch under ncu)
//
// Kernels and the variants (--variant names) that launch them:
//   copy_one_per_thread     "float, 1 per thread"
//   copy_grid_stride        "float, grid-stride"
//   copy_float4<1>          "float4, 1 per thread"; "float4, grid-stride, B blocks per SM", B = 1..32
//   copy_float4<4>          "float4 x4 in flight, grid-stride, 2 blocks per SM"
// Each is judged against cudaMemcpy device-to-device of the same bytes, in the same run.
#include "tut/bandwidth.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int kThreads = 256;
static_assert(kThreads % 32 == 0, "blocks of whole warps: every warp access is one coalesced request");
static_assert(kThreads >= 4, "one block has threads enough for the <= 3 floats before the float4s and the <= 3 after");
static_assert(sizeof(float4) == 4 * sizeof(float) && alignof(float4) == 16,
              "a float4 is 4 floats on a 16-byte boundary (float4_head below counts on it)");

// One thread per element: the grid covers the array once. Simple, but every thread
// moves only 4 bytes, and n / 256 blocks must each be scheduled, run and retired.
__global__ void copy_one_per_thread(size_t n, const float* __restrict__ src, float* __restrict__ dst) {
    const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

// Grid-stride loop: a grid sized to the GPU (not to the data) walks the array; thread t
// handles t, t + stride, t + 2 stride... Consecutive threads still touch consecutive
// addresses at every step, so each warp access stays one coalesced 128-byte request.
__global__ void copy_grid_stride(size_t n, const float* __restrict__ src, float* __restrict__ dst) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += stride) dst[i] = src[i];
}

// 16-byte accesses: one float4 load and store move 4 floats, so a warp request covers
// 512 bytes and a thread keeps 4x the bytes in flight for the same instructions.
// A float4 must sit on a 16-byte boundary: the first `head` floats (until src + head is
// 16-byte aligned, as the launcher computed) and the 0-3 floats after the last whole
// float4 are copied as floats. kInFlight float4s are loaded before any is stored: more
// independent loads in flight per thread.
template <int kInFlight>
__global__ void copy_float4(size_t n, size_t head, const float* __restrict__ src, float* __restrict__ dst) {
    const size_t tid = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    const size_t vectors = (n - head) / 4;
    const float4* src4 = reinterpret_cast<const float4*>(src + head);
    float4* dst4 = reinterpret_cast<float4*>(dst + head);
    for (size_t base = tid; base < vectors; base += stride) dst4[base] = src4[base];  // one float4 at a time
    // At most 3 floats before the body and 3 after it.
    const size_t tail = head + 4 * vectors;
    if (tid < head) dst[tid] = src[tid];
    if (tid < n - tail) dst[tail + tid] = src[tail + tid];
}

// Floats before src + head is 16-byte aligned, or -1 when a float4 body is impossible:
// src and dst must be equally misaligned (then one head aligns both) and 4-byte aligned.
long long float4_head(size_t n, const float* src, const float* dst) {
    const auto s = reinterpret_cast<std::uintptr_t>(src), d = reinterpret_cast<std::uintptr_t>(dst);
    if (s % 4 != 0 || s % 16 != d % 16) return -1;
    return static_cast<long long>(std::min<size_t>(n, ((16 - s % 16) % 16) / 4));
}

// Each launcher returns the path it took for these pointers (the table's path column):
// "" where it has one path only.
std::string run_one_per_thread(size_t n, const float* src, float* dst) {
    tut::bandwidth::require_copy(n, src, dst);
    if (n == 0) return "";
    const size_t blocks = (n + kThreads - 1) / kThreads;
    copy_one_per_thread<<<static_cast<unsigned>(blocks), kThreads>>>(n, src, dst);
    TUT_LAUNCH("copy_one_per_thread");
    return "";
}

// As many blocks as fit on all SMs at once (the occupancy limit).
std::string run_grid_stride(size_t n, const float* src, float* dst) {
    tut::bandwidth::require_copy(n, src, dst);
    if (n == 0) return "";
    const int blocks = tut::bandwidth::full_grid_blocks(copy_grid_stride, kThreads, static_cast<long long>(n));
    copy_grid_stride<<<blocks, kThreads>>>(n, src, dst);
    TUT_LAUNCH("copy_grid_stride");
    return "";
}

// kBlocksPerSm = 0: one thread per float4 (the grid covers the array once); otherwise a
// grid-stride loop over kBlocksPerSm x SMs blocks. Pointers that are misaligned relative
// to each other cannot share a float4 body: they take the float grid-stride kernel.
template <int kInFlight, int kBlocksPerSm>
std::string run_float4(size_t n, const float* src, float* dst) {
    static_assert(kInFlight >= 1, "each thread has at least one float4 in flight");
    static_assert(kBlocksPerSm >= 0, "0 blocks per SM: one thread per float4");
    tut::bandwidth::require_copy(n, src, dst);
    const long long head = float4_head(n, src, dst);
    if (head < 0) {
        run_grid_stride(n, src, dst);
        return "float: src/dst misaligned";
    }
    if (n == 0) return "float4";
    const size_t vectors = (n - static_cast<size_t>(head)) / 4;
    const size_t one_each = std::max<size_t>(1, (vectors + kThreads - 1) / kThreads);
    const size_t blocks = kBlocksPerSm > 0 ? size_t(kBlocksPerSm) * tut::bandwidth::sm_count() : one_each;
    copy_float4<kInFlight><<<static_cast<unsigned>(blocks), kThreads>>>(n, static_cast<size_t>(head), src, dst);
    TUT_LAUNCH("copy_float4");
    return "float4";
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
// The blocks-per-SM sweep: 256-thread blocks, 8 of which fill an SM's 2048 threads on sm_80/sm_90.
// The last variant: fewer threads, each with 4 loads in flight (instruction-level instead of
// thread-level parallelism).
std::vector<tut::bandwidth::CopyVariant> variants() {
    return {{"float, 1 per thread", run_one_per_thread, tut::kernel_of(copy_one_per_thread, kThreads)},
            {"float, grid-stride", run_grid_stride, tut::kernel_of(copy_grid_stride, kThreads)},
            {"float4, 1 per thread", run_float4<1, 0>, tut::kernel_of(copy_float4<1>, kThreads)},
            {"float4, grid-stride, 1 blocks per SM", run_float4<1, 1>, tut::kernel_of(copy_float4<1>, kThreads)},
            {"float4, grid-stride, 2 blocks per SM", run_float4<1, 2>, tut::kernel_of(copy_float4<1>, kThreads)},
            {"float4, grid-stride, 4 blocks per SM", run_float4<1, 4>, tut::kernel_of(copy_float4<1>, kThreads)},
            {"float4, grid-stride, 8 blocks per SM", run_float4<1, 8>, tut::kernel_of(copy_float4<1>, kThreads)},
            {"float4, grid-stride, 16 blocks per SM", run_float4<1, 16>, tut::kernel_of(copy_float4<1>, kThreads)},
            {"float4, grid-stride, 32 blocks per SM", run_float4<1, 32>, tut::kernel_of(copy_float4<1>, kThreads)},
            {"float4 x4 in flight, grid-stride, 2 blocks per SM", run_float4<4, 2>,
             tut::kernel_of(copy_float4<4>, kThreads)}};
}
}  // namespace lesson

namespace {

/// One copy as this lesson measures it: n random floats on the GPU, the target, and
/// cudaMemcpy D2D of the same bytes timed in the same run.
class CopyProblem : public tut::bandwidth::AgainstMemcpy {
  public:
    CopyProblem(tut::Bench& bench, long long n)
        : AgainstMemcpy(bench, tut::bandwidth::copy_bytes_moved(static_cast<size_t>(n))), n_(n) {
        const size_t count = static_cast<size_t>(n);
        if (auto why = tut::device_memory_shortfall(2 * count * sizeof(float)); !why.empty())
            throw tut::Unsupported("N = " + std::to_string(n) + " " + why);
        host_ = tut::random_vector<float>(count, static_cast<uint64_t>(bench.run().seed));
        src_ = tut::DeviceBuffer<float>(host_);
        dst_ = tut::DeviceBuffer<float>(count);
        time_memcpy(src_.get());
        about_ = tut::fmt("  (N = %lld floats, %.1f MB moved = %.1fx L2, median of %d runs, L2 flushed)\n", n,
                          moved_ / 1e6, moved_ / double(bench.device().l2_bytes), bench.run().repeats);
    }

    /// Runs `run` once on a poisoned target and requires an exact copy of the source.
    tut::Verdict check(const std::function<tut::bandwidth::CopyRun>& run) {
        const std::vector<float> got = run_poisoned([&] { return run(host_.size(), src_.get(), dst_.get()); });
        const long long bad = tut::bandwidth::first_difference(got.data(), host_.data(), host_.size());
        if (bad < 0) return tut::passed("ok");
        return tut::failed(tut::fmt("element %lld is %g, expected %g", bad, double(got[static_cast<size_t>(bad)]),
                                    double(host_[static_cast<size_t>(bad)])));
    }

    /// Runs `run` once (what the bench times).
    void run(const std::function<tut::bandwidth::CopyRun>& run) { path_ = run(host_.size(), src_.get(), dst_.get()); }

    /// GB/s beside cudaMemcpy's and the DRAM peak; the path taken, the registers.
    tut::Result result(const tut::bandwidth::CopyVariant& v, const tut::Timing& t, const tut::Verdict& verdict) {
        tut::JsonObject extra;
        extra.add("floats", n_);
        return result_of(v, t, verdict, std::to_string(n_), extra);
    }

  private:
    long long n_;
    std::vector<float> host_;
    tut::DeviceBuffer<float> src_;
};

}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"bandwidth", "02_copy_kernels", "copy kernels against cudaMemcpy D2D"};
    const std::vector<tut::bandwidth::CopyVariant> variants = lesson::variants();
    tut::bandwidth::Options options(lesson, "Copies N floats device to device with each kernel.");
    long long n = 1LL << 27;
    options.cli.add_int("n", &n, "number of floats to copy (default: 512 MiB, many times any L2)", 1,
                        static_cast<long long>(tut::bandwidth::kMaxCopyElements));
    options.parse(argc, argv, tut::names_of(variants));
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        CopyProblem problem(bench, n);
        tut::Table table = problem.table();
        for (const tut::bandwidth::CopyVariant& v : variants) {
            if (!bench.runs(v)) continue;
            const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(v.run); });
            const tut::Timing timing = bench.time(v.name, [&] { problem.run(v.run); }, tut::bandwidth::kFlushL2);
            table.add_row(bench.record(problem.result(v, timing, verdict)));
        }
        table.add_row(problem.library_row());
        table.print();
        return bench.exit_code();
    });
}
