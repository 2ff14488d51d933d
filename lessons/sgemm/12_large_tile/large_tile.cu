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
constexpr int kBlocksPerSm = 2;  // the __launch_bounds__ minimum, lesson 11's: see the TODO in multiply_tile
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

// acc += the kTileK outer products of one buffer: As[k * kAStride + m] is A(i0 + m, k0 + k) (A's tile,
// transposed and padded as in lesson 11), Bs[k * kBN + j] is B(k0 + k, j0 + j).
__device__ void multiply_tile(float (&acc)[kTM][kTN], const float* As, const float* Bs, int wr, int wc, int lr,
                              int lc) {
    // TODO(exercise): one thread's share of the 128 x 256 tile: 8 rows x 16 columns of C, lane
    //   (lr, lc) of the 8 x 4 lanes of warp (wr, wc), whose warp tile is 64 x 64. multiply_tile
    //   and store_c below must agree on which 128 outputs acc[i][j] are.
    //   - Lesson 10 spread a lane's outputs over its warp tile as 4 x 4 sub-blocks. With 16
    //     columns a lane there are 4 sub-blocks across: where must they lie so that one LDS.128
    //     of the warp reads a few float4s side by side (each broadcast to several lanes) rather
    //     than float4s 64 bytes apart, which fall in the same banks?
    //   - Per step k a thread now reads 2 float4s of A and 4 of B for 128 FFMAs. Count FFMAs per
    //     shared load here and in lesson 11: that ratio is why the tile grew. Load step k + 1's
    //     fragments before step k's FFMAs, as in lesson 11, and keep every register index a
    //     compile-time constant.
    //   - Registers: 128 accumulators, 2 x (8 + 16) fragment values, the next tile's 3 float4s,
    //     addresses. kBlocksPerSm (above) is lesson 11's 2, which tells the compiler to fit
    //     256 x 2 threads in the SM's 64 K registers. What does that leave a thread, and what
    //     does the compiler do with the rest? Which value does this tile need?
    (void)acc;  // unused until the TODO is done
    (void)As;
    (void)Bs;
    (void)wr;
    (void)wc;
    (void)lr;
    (void)lc;
}

// The lane's 8 x 16 outputs to C, wherever multiply_tile put them; tut::sgemm::store4 writes a
// float4 of a row and leaves out what lies outside the N x N matrix.
__device__ void store_c(const float (&acc)[kTM][kTN], float* C, int n, int i0, int j0, int wr, int wc, int lr, int lc) {
    // TODO(exercise): the same layout as multiply_tile's; the rows and columns past N are
    //   store4's business, the 16-byte alignment of a row's start (N % 4) too.
    (void)acc;  // unused until the TODO is done
    (void)C;
    (void)n;
    (void)i0;
    (void)j0;
    (void)wr;
    (void)wc;
    (void)lr;
    (void)lc;
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
