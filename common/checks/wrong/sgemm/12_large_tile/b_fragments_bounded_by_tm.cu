// wrong: sgemm/12_large_tile: loads B's fragments with a loop bounded by kTM / 4, as lesson 11's kTM == kTN allowed
// caught by: sgemm/12_large_tile: matches the CPU reference at tiny sizes
// kind: other
// Only 8 of the lane's 16 values of B's row are loaded per step; the FFMAs of the other 8 columns
// read registers that were never written (or a previous step's values): columns of C are wrong.
// sgemm/12_large_tile: a 128 x 256 block tile, 8 x 16 outputs per thread.
// Starts from: lesson 11 (128 x 128 tile, 8 x 8 per thread, register-staged double buffering).
// Adds: the block tile cuBLAS's FP32 kernels use. The same 256 threads compute twice the tile,
// as 8 warps of 64 x 64 with 128 accumulators a thread: more FFMAs per shared-memory load and
// per float read from L2, paid for in registers (one block per SM). The pipeline is lesson 11's.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/12_large_tile/large_tile.cu -lcublas -o large_tile
// Run:  ./large_tile --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// Kernel and variant:
//   sgemm_large_tile   "tile=128x256"   128 x 256 x 8 tile, 8 warps of 64 x 64, 8 x 16 per thread
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"
#include "tut/sgemm_tiles.cuh"

namespace {

constexpr int kBM = 128, kBN = 256, kTileK = 8;  // block tile of C, k values per tile
constexpr int kWM = 64, kWN = 64;                // 8 warps: 2 rows x 4 columns of 64 x 64
constexpr int kTM = 8, kTN = 16;                 // outputs per thread: 128 accumulators
constexpr int kLaneRows = kWM / kTM, kLaneCols = kWN / kTN;  // 8 x 4 lanes
constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 1;  // the __launch_bounds__ minimum: 255 registers a thread
constexpr int kAStride = kBM + 4;  // transposed A tile rows, padded as in lesson 11
constexpr int kTileFloats = kTileK * (kAStride + kBN);  // one buffer: A's tile, then B's
constexpr int kLoadsA = kBM * kTileK / 4 / kThreads;    // float4 loads per thread per tile: 1
constexpr int kLoadsB = kTileK * kBN / 4 / kThreads;    // 2
// What the index arithmetic below assumes of the tiles:
static_assert(kBM * kTileK % (4 * kThreads) == 0 && kTileK * kBN % (4 * kThreads) == 0,
              "each thread loads whole float4s of A's and B's tiles");
static_assert(kTileK % 4 == 0 && kBN % 4 == 0, "a float4 of A stays within a row of the tile, one of B too");
static_assert(kAStride % 4 == 0 && kTileFloats % 4 == 0, "every row of a buffer starts on 16 bytes (float4 reads)");
static_assert(kLaneRows * kLaneCols == 32 && (kBM / kWM) * (kBN / kWN) * 32 == kThreads, "8 warps of 32 lanes");
static_assert(kWM % (4 * kLaneRows) == 0 && kWN % (4 * kLaneCols) == 0, "a lane's outputs are 4 x 4 sub-blocks");

// Lane (lr, lc) of warp (wr, wc) owns kTM / 4 x kTN / 4 sub-blocks of 4 x 4, spread over the
// warp tile as in lesson 10: one LDS.128 of the warp then reads kLaneRows float4s of A (each
// broadcast to kLaneCols lanes) or kLaneCols of B, side by side, with no bank conflict.
__device__ int row_of(int wr, int lr, int s) { return wr * kWM + s * 4 * kLaneRows + lr * 4; }
__device__ int col_of(int wc, int lc, int t) { return wc * kWN + t * 4 * kLaneCols + lc * 4; }

// acc += the kTileK outer products of one buffer (As[k][m] transposed, Bs[k][j]); the fragments
// of step k + 1 are loaded while step k is multiplied, as in lesson 11.
__device__ void multiply_tile(float (&acc)[kTM][kTN], const float* As, const float* Bs, int wr, int wc, int lr,
                              int lc) {
    float a[2][kTM], b[2][kTN];
    auto load_fragments = [&](int slot, int k) {
#pragma unroll
        for (int s = 0; s < kTM / 4; ++s)
            *reinterpret_cast<float4*>(&a[slot][4 * s]) =
                *reinterpret_cast<const float4*>(&As[k * kAStride + row_of(wr, lr, s)]);
#pragma unroll
        for (int t = 0; t < kTM / 4; ++t)
            *reinterpret_cast<float4*>(&b[slot][4 * t]) = *reinterpret_cast<const float4*>(&Bs[k * kBN + col_of(wc, lc, t)]);
    };
    load_fragments(0, 0);
#pragma unroll
    for (int k = 0; k < kTileK; ++k) {
        if (k + 1 < kTileK) load_fragments((k + 1) % 2, k + 1);
#pragma unroll
        for (int i = 0; i < kTM; ++i)
#pragma unroll
            for (int j = 0; j < kTN; ++j) acc[i][j] += a[k % 2][i] * b[k % 2][j];
    }
}

// The lane's 8 x 16 outputs, a float4 of a row at a time (store4 guards the edges).
__device__ void store_c(const float (&acc)[kTM][kTN], float* C, int n, int i0, int j0, int wr, int wc, int lr, int lc) {
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; j += 4)
            tut::sgemm::store4(C, n, i0 + row_of(wr, lr, i / 4) + i % 4, j0 + col_of(wc, lc, j / 4),
                               make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
}

// Lesson 11's pipeline at this tile: the next tile's 3 float4 per thread wait in registers while
// this one is multiplied; one barrier per tile.
__global__ void __launch_bounds__(kThreads, kBlocksPerSm) sgemm_large_tile(int n, const float* __restrict__ A,
                                                                           const float* __restrict__ B,
                                                                           float* __restrict__ C) {
    __shared__ __align__(16) float smem[2 * kTileFloats];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wr = warp / (kBN / kWN), wc = warp % (kBN / kWN);
    const int lr = lane / kLaneCols, lc = lane % kLaneCols;
    const int i0 = blockIdx.y * kBM, j0 = blockIdx.x * kBN;
    float4 ra[kLoadsA], rb[kLoadsB];
    auto load_tile = [&](int k0) {
#pragma unroll
        for (int q = 0; q < kLoadsA; ++q) {
            const int e = threadIdx.x + q * kThreads;
            ra[q] = tut::sgemm::load4(A, n, i0 + e / (kTileK / 4), k0 + (e % (kTileK / 4)) * 4);
        }
#pragma unroll
        for (int q = 0; q < kLoadsB; ++q) {
            const int e = threadIdx.x + q * kThreads;
            rb[q] = tut::sgemm::load4(B, n, k0 + e / (kBN / 4), j0 + (e % (kBN / 4)) * 4);
        }
    };
    auto store_tile = [&](float* buffer) {
#pragma unroll
        for (int q = 0; q < kLoadsA; ++q) {
            const int e = threadIdx.x + q * kThreads, m = e / (kTileK / 4), k = (e % (kTileK / 4)) * 4;
            buffer[k * kAStride + m] = ra[q].x;
            buffer[(k + 1) * kAStride + m] = ra[q].y;
            buffer[(k + 2) * kAStride + m] = ra[q].z;
            buffer[(k + 3) * kAStride + m] = ra[q].w;
        }
#pragma unroll
        for (int q = 0; q < kLoadsB; ++q) {
            const int e = threadIdx.x + q * kThreads;
            *reinterpret_cast<float4*>(&buffer[kTileK * kAStride + (e / (kBN / 4)) * kBN + (e % (kBN / 4)) * 4]) =
                rb[q];
        }
    };
    float acc[kTM][kTN] = {};
    load_tile(0);
    store_tile(smem);
    __syncthreads();
    int cur = 0;
    for (int k0 = 0; k0 < n; k0 += kTileK) {
        const bool more = k0 + kTileK < n;
        if (more) load_tile(k0 + kTileK);
        const float* buffer = smem + cur * kTileFloats;
        multiply_tile(acc, buffer, buffer + kTileK * kAStride, wr, wc, lr, lc);
        if (more) store_tile(smem + (cur ^ 1) * kTileFloats);
        __syncthreads();
        cur ^= 1;
    }
    store_c(acc, C, n, i0, j0, wr, wc, lr, lc);
}

void run_large_tile(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    const dim3 grid((n + kBN - 1) / kBN, (n + kBM - 1) / kBM);
    sgemm_large_tile<<<grid, kThreads>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_large_tile");
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    return {{"tile=128x256", run_large_tile, tut::kernel_of(sgemm_large_tile, kThreads)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "12_large_tile", "A 128 x 256 block tile, 8 x 16 outputs per thread"};
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
