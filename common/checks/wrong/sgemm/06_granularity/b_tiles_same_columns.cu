// wrong: sgemm/06_granularity: every one of the G tiles of B is filled from the thread's first column j0 (lesson 05's load, not offset by 16 g)
// caught by: sgemm/06_granularity: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile
// kind: other
// g=1 is right; for g=2 and 4 the outputs g >= 1 get column j0's sums (wrong from N = 17).
// sgemm/06_granularity: granularity, one A tile reused for G = 1, 2, 4 B tiles.
// Starts from: lesson 05's tile=16 kernel. Adds: G outputs per thread, G columns of tiles of
// B per block, so that each value a thread reads from the A tile in shared memory serves G
// FMAs (G = 1 is lesson 05's kernel).
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/06_granularity/granularity.cu -lcublas -o granularity
// Run:  ./granularity --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// Kernel and variants:
//   sgemm_granular<kG>   "g=1", "g=2", "g=4"   16 x 16 threads compute a 16 x 16G block of C
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

namespace {

constexpr int kTile = 16;  // lesson 05's tile of 16: a 16 x 16 block of threads, 16 x 16 tiles

// kG is the course slides' G (the granularity): how many tiles of B share one tile of A.
// A 16 x 16 block of threads computes a 16 x 16G block of C: thread (tx, ty) computes
// the G elements C[i][j0 + g * 16], g = 0..G-1. Per tile step the block loads one tile
// of A and G tiles of B side by side into shared memory; each thread then reads A[i][k]
// once per k and uses it for its G outputs. Per output, shared-memory reads of A and
// global loads of A fall by a factor of G; the price is G accumulators in registers and
// G - 1 more B tiles in shared memory.
//
// The G outputs of a thread are 16 columns apart, not adjacent: at every step a half-warp
// (16 consecutive tx) then still reads and writes 16 consecutive floats of a row of B or C
// (coalesced) and 16 consecutive words of a row of Bs (no bank conflict).
//
// Partial tiles are zero-padded, as in lesson 05.
template <int kG>
__global__ void __launch_bounds__(kTile * kTile) sgemm_granular(int n, const float* __restrict__ A,
                                                                const float* __restrict__ B, float* __restrict__ C) {
    __shared__ float As[kTile][kTile];      // A[i0 .. i0+16)[t .. t+16)
    __shared__ float Bs[kG][kTile][kTile];  // G tiles of B[t .. t+16), tile g at columns j0 + 16g ..
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int j0 = blockIdx.x * kTile * kG + tx;  // this thread's first column; the others follow every 16
    const int i = blockIdx.y * kTile + ty;
    float sum[kG] = {};
    for (int t = 0; t < n; t += kTile) {
        As[ty][tx] = (i < n && t + tx < n) ? A[i * n + t + tx] : 0.0f;
#pragma unroll
        for (int g = 0; g < kG; ++g) {
            Bs[g][ty][tx] = (t + ty < n && j0 < n) ? B[(t + ty) * n + j0] : 0.0f;
        }
        __syncthreads();  // all G + 1 tiles complete before anyone reads them
#pragma unroll
        for (int k = 0; k < kTile; ++k) {
            const float a = As[ty][k];  // read once, used G times
#pragma unroll
            for (int g = 0; g < kG; ++g) sum[g] += a * Bs[g][k][tx];
        }
        __syncthreads();  // everyone done with these tiles before the next iteration overwrites them
    }
#pragma unroll
    for (int g = 0; g < kG; ++g) {
        const int j = j0 + g * kTile;
        if (i < n && j < n) C[i * n + j] = sum[g];
    }
}

template <int kG>
void run_granular(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    const dim3 block(kTile, kTile);
    const dim3 grid((n + kTile * kG - 1) / (kTile * kG), (n + kTile - 1) / kTile);
    sgemm_granular<kG><<<grid, block>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_granular");
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    return {{"g=1", run_granular<1>, tut::kernel_of(sgemm_granular<1>)},
            {"g=2", run_granular<2>, tut::kernel_of(sgemm_granular<2>)},
            {"g=4", run_granular<4>, tut::kernel_of(sgemm_granular<4>)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "06_granularity", "granularity: one A tile reused for G = 1, 2, 4 B tiles"};
    const std::vector<tut::sgemm::Variant> variants = lesson::variants();
    tut::sgemm::Options options(lesson);  // --n (4096) and the options every lesson takes
    options.parse(argc, argv, tut::names_of(variants));
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        tut::sgemm::Problem problem(bench, options.n);  // A, B, the reference, cuBLAS FP32 timed beside
        tut::Table table = problem.table();
        for (const tut::sgemm::Variant& v : variants) {
            if (!bench.runs(v)) continue;
            const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(v.run); });
            const tut::Timing timing = bench.time(v.name, [&] { problem.run(v.run); });
            table.add_row(bench.record(problem.result(v, timing, verdict)));
        }
        table.add_row(problem.library_row());
        table.print();
        return bench.exit_code();
    });
}
