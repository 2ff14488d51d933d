// wrong: sgemm/07_volkov_ilp: stores its kGrain outputs testing only the column: the last block row writes up to 31 rows past the end of C
// caught by: sgemm/07_volkov_ilp: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile
// kind: out-of-bounds
// When N % 32 != 0 (N = 1, 17, 33...) the rows i >= n of the last 32-row block land in the guard zone
// after C (32 rows of N floats, sgemm_check_inputs.hpp's guard_elements()).
// sgemm/07_volkov_ilp: Volkov-style instruction-level parallelism, grain = 1..16 outputs per thread.
// Starts from: lesson 05's tile=32 kernel. Adds: blocks of 32 x (32 / grain) threads, each
// thread computing `grain` outputs of one column with independent accumulators, so that each
// B value read from shared memory serves `grain` FMAs; A read four k values at a time.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/07_volkov_ilp/volkov_ilp.cu -lcublas -o volkov_ilp
// Run:  ./volkov_ilp --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// Kernel and variants:
//   sgemm_volkov<kGrain>   "grain=1", "grain=2", "grain=4", "grain=8", "grain=16"
//                          32 x (32 / grain) threads compute a 32 x 32 block of C
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

namespace {

constexpr int kTile = 32;  // a 32 x 32 block of C per thread block, 32 x 32 tiles of A and B
static_assert(kTile % 4 == 0, "A is read 4 k values at a time: a tile row is whole float4s");

// Fewer threads, more work each (V. Volkov, "Better performance at lower occupancy", GTC 2010).
// A block of 32 x (32 / kGrain) threads computes a 32 x 32 block of C: thread (tx, ty)
// computes the kGrain elements of column j = j0 + tx in rows ty + g * kRows, g = 0..kGrain-1.
// Its kGrain accumulators are independent: the FMAs of one k step can issue back to back
// without waiting for each other, so a warp keeps the FMA pipes busy with less help from
// other warps (instruction-level instead of thread-level parallelism).
//
// Reuse in registers: B[k][j] is read from shared memory once per k and used kGrain times.
// Wider shared loads: A is read 4 k values at a time as one float4 (LDS.128). All 32
// threads of a warp share ty, so that float4 is one address for the whole warp, a
// broadcast; it costs two shared-memory wavefronts (measured on an H200), half as much as
// four scalar loads. Per 4 k steps a warp then needs 2 * kGrain + 4 wavefronts for
// 4 * kGrain FMAs. The SM serves one wavefront per clock but can issue four FMA
// warp-instructions, so the larger kGrain, the fewer FMAs wait on shared memory (README).
//
// Partial tiles are zero-padded, as in lesson 05.
template <int kGrain>
__global__ void __launch_bounds__(kTile * kTile / kGrain) sgemm_volkov(int n, const float* __restrict__ A,
                                                                       const float* __restrict__ B,
                                                                       float* __restrict__ C) {
    constexpr int kRows = kTile / kGrain;             // thread rows per block = distance between a thread's outputs
    static_assert(kTile % kGrain == 0, "the block's thread rows, kGrain times over, are the tile's rows");
    __shared__ __align__(16) float As[kTile][kTile];  // 16-byte aligned rows (128 B) for the float4 reads
    __shared__ float Bs[kTile][kTile];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i0 = blockIdx.y * kTile;
    const int j = blockIdx.x * kTile + tx;
    float acc[kGrain] = {};
    for (int t = 0; t < n; t += kTile) {
#pragma unroll
        for (int g = 0; g < kGrain; ++g) {  // each thread loads kGrain elements of each tile
            const int r = ty + g * kRows;
            As[r][tx] = (i0 + r < n && t + tx < n) ? A[(i0 + r) * n + t + tx] : 0.0f;
            Bs[r][tx] = (t + r < n && j < n) ? B[(t + r) * n + j] : 0.0f;
        }
        __syncthreads();  // both tiles complete before anyone reads them
#pragma unroll
        for (int k = 0; k < kTile; k += 4) {
            float b[4];  // B[k..k+3][j]: loaded once, used by all kGrain outputs
#pragma unroll
            for (int q = 0; q < 4; ++q) b[q] = Bs[k + q][tx];
#pragma unroll
            for (int g = 0; g < kGrain; ++g) {
                const float4 a = *reinterpret_cast<const float4*>(&As[ty + g * kRows][k]);
                acc[g] += a.x * b[0];
                acc[g] += a.y * b[1];
                acc[g] += a.z * b[2];
                acc[g] += a.w * b[3];
            }
        }
        __syncthreads();  // everyone done with these tiles before the next iteration overwrites them
    }
#pragma unroll
    for (int g = 0; g < kGrain; ++g) {
        const int i = i0 + ty + g * kRows;
        if (j < n) C[i * n + j] = acc[g];
    }
}

template <int kGrain>
void run_volkov(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    const dim3 block(kTile, kTile / kGrain);  // half-height blocks for grain 2, and so on
    const dim3 grid((n + kTile - 1) / kTile, (n + kTile - 1) / kTile);
    sgemm_volkov<kGrain><<<grid, block>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_volkov");
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    return {{"grain=1", run_volkov<1>, tut::kernel_of(sgemm_volkov<1>)},
            {"grain=2", run_volkov<2>, tut::kernel_of(sgemm_volkov<2>)},
            {"grain=4", run_volkov<4>, tut::kernel_of(sgemm_volkov<4>)},
            {"grain=8", run_volkov<8>, tut::kernel_of(sgemm_volkov<8>)},
            {"grain=16", run_volkov<16>, tut::kernel_of(sgemm_volkov<16>)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "07_volkov_ilp", "Volkov-style ILP: grain = 1..16 outputs per thread"};
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
