// wrong: bandwidth/06_gather_2d: the kPerThread loads and stores test only the loop's base < rows_v, so base + step runs past the column
// caught by: bandwidth/06_gather_2d: small shapes
// kind: out-of-bounds
// the 1-per-thread variants are right; '2D, float4, 2 per thread' at 1 x 1 writes tgt[32], in the
// guard zone after the output
// bandwidth/06_gather_2d: the column gather with a 2D launch and 16-byte accesses.
// Starts from: lesson 05's gather and yardstick, and lesson 02's float4 accesses. Adds: one
// row of blocks per extracted column, so no thread ever divides, 16-byte accesses when every
// column starts on a 16-byte boundary, and several loads in flight per thread.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/bandwidth/06_gather_2d/gather_2d.cu -o gather_2d
// Run:  ./gather_2d                (--classic for 1000 x 20000, columns 0..9999; --help for options)
//
// Kernel gather_2d<V, kPerThread> and the variants (--variant names):
//   "2D, float"                              V = float,  1 per thread, blocks of 128 threads
//   "2D, float4"                             V = float4, 1 per thread (float where not aligned), 128 threads
//   "2D, float4, 2 per thread"               V = float4, 2 loads in flight per thread, 128 threads
//   "2D, float4, 2 per thread, large blocks" the same kernel in the fewest blocks of up to 1024
//                                            threads that cover a column evenly
//
// Column-major: element (r, c) of the rows x cols source is src[c * rows + r]; the target
// is rows x count and its column k is source column indices[k].
#include "tut/bandwidth.hpp"

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace {

constexpr int kThreads = 128;           // threads per block of the first three variants
constexpr int kMaxBlockThreads = 1024;  // the hardware's limit on threads per block
constexpr int kMaxGridY = 65535;        // the hardware's limit on gridDim.y
static_assert(kThreads % 32 == 0 && kThreads <= kMaxBlockThreads,
              "the 2D launch's blocks are one row of whole warps, within the hardware's limit");

// blockIdx.y picks the extracted column k, so the column is known without dividing:
// the block reads indices[k] once (the same address for all its threads) and copies
// that column, its threads on consecutive rows. V is float or float4 (then rows_v =
// rows / 4 and every column must start on a 16-byte boundary). Each thread loads
// kPerThread values, blockDim.x apart, before storing any: more bytes in flight.
// The loops only matter beyond the grid limits (count > 65535 or a huge column).
template <class V, int kPerThread>
__global__ void gather_2d(int rows_v, int count, const V* __restrict__ src, const int* __restrict__ indices,
                          V* __restrict__ tgt) {
    for (int k = blockIdx.y; k < count; k += gridDim.y) {
        const V* from = src + indices[k] * rows_v;
        V* to = tgt + k * rows_v;
        const int step = blockDim.x, chunk = step * kPerThread;
        for (int base = blockIdx.x * chunk + threadIdx.x; base < rows_v; base += gridDim.x * chunk) {
            V v[kPerThread];
#pragma unroll
            for (int u = 0; u < kPerThread; ++u) v[u] = from[base + u * step];  // base < rows_v: in the column
#pragma unroll
            for (int u = 0; u < kPerThread; ++u) to[base + u * step] = v[u];
        }
    }
}

// float4 needs every column to start on a 16-byte boundary. Column c starts c * rows * 4
// bytes after the base pointer, a multiple of 16 for every c exactly when rows % 4 == 0;
// and the base pointers themselves must be 16-byte aligned (cudaMalloc gives 256; an
// offset pointer may not).
bool can_use_float4(const tut::bandwidth::GatherInput& in, const float* tgt) {
    return in.rows % 4 == 0 && reinterpret_cast<std::uintptr_t>(in.src) % 16 == 0 &&
           reinterpret_cast<std::uintptr_t>(tgt) % 16 == 0;
}

// The block size: kBlockThreads threads for long columns, or, with 0, large blocks:
// the fewest blocks of at most 1024 threads that cover a column, made just wide enough
// to share it evenly (2 blocks of 640 threads for 2500 float4s). Short columns get
// narrower blocks (whole warps), so few threads idle.
template <int kPerThread, int kBlockThreads>
int threads_per_block(int rows_v) {
    static_assert(kPerThread >= 1, "each thread loads at least one value");
    static_assert(kBlockThreads == 0 || (kBlockThreads % 32 == 0 && kBlockThreads <= kMaxBlockThreads),
                  "blocks of whole warps, at most 1024 threads (0: large blocks)");
    int wanted = kBlockThreads;
    if (kBlockThreads == 0) {
        const int blocks = (rows_v + kMaxBlockThreads * kPerThread - 1) / (kMaxBlockThreads * kPerThread);
        wanted = (rows_v + blocks * kPerThread - 1) / (blocks * kPerThread);
    }
    return std::min((wanted + 31) / 32 * 32, (rows_v + 31) / 32 * 32);
}

template <class V, int kPerThread, int kBlockThreads>
void launch_2d(const tut::bandwidth::GatherInput& in, float* tgt) {
    static_assert(std::is_same_v<V, float> || std::is_same_v<V, float4>, "values are floats or float4s");
    const int rows_v = in.rows / static_cast<int>(sizeof(V) / sizeof(float));
    const int threads = threads_per_block<kPerThread, kBlockThreads>(rows_v);
    const int chunk = threads * kPerThread;
    const dim3 grid((rows_v + chunk - 1) / chunk, std::min(in.count, kMaxGridY));
    gather_2d<V, kPerThread><<<grid, threads>>>(rows_v, in.count, reinterpret_cast<const V*>(in.src), in.indices,
                                                reinterpret_cast<V*>(tgt));
    TUT_LAUNCH("gather_2d");
}

// kVector: float4 where can_use_float4 allows, float otherwise. Returns the path it takes
// for this input (the table's path column).
template <bool kVector, int kPerThread, int kBlockThreads>
std::string run_2d(const tut::bandwidth::GatherInput& in, float* tgt) {
    tut::bandwidth::require_gather(in, tgt);
    const bool vector = kVector && can_use_float4(in, tgt);
    if (in.count > 0) {
        if (vector)
            launch_2d<float4, kPerThread, kBlockThreads>(in, tgt);
        else
            launch_2d<float, kPerThread, kBlockThreads>(in, tgt);
    }
    if (!kVector) return "float";
    if (vector) return "float4";
    return in.rows % 4 != 0 ? "float: rows % 4 != 0" : "float: pointer not 16-byte aligned";
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::bandwidth::GatherVariant> variants() {
    return {{"2D, float", run_2d<false, 1, kThreads>, tut::kernel_of(gather_2d<float, 1>, kThreads)},
            {"2D, float4", run_2d<true, 1, kThreads>, tut::kernel_of(gather_2d<float4, 1>, kThreads)},
            {"2D, float4, 2 per thread", run_2d<true, 2, kThreads>, tut::kernel_of(gather_2d<float4, 2>, kThreads)},
            {"2D, float4, 2 per thread, large blocks", run_2d<true, 2, 0>, tut::kernel_of(gather_2d<float4, 2>)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"bandwidth", "06_gather_2d",
                                 "column gather, 2D launch (no division), float4 accesses"};
    const std::vector<tut::bandwidth::GatherVariant> variants = lesson::variants();
    tut::bandwidth::GatherOptions options(lesson);  // --rows, --cols, --count, --order, --classic and the usual options
    options.parse(argc, argv, tut::names_of(variants));
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        tut::bandwidth::GatherProblem problem(bench, options.size);  // src, indices, cudaMemcpy D2D of the same bytes
        tut::Table table = problem.table();
        for (const tut::bandwidth::GatherVariant& v : variants) {
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
