// wrong: sgemm/11_double_buffering: stores the next tile into the buffer just multiplied (cur) instead of the other one, then flips cur
// caught by: sgemm/11_double_buffering: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile
// kind: other
// From the second tile on the kernel multiplies a buffer nobody wrote (wrong phase): wrong from N = 9.
// sgemm/11_double_buffering: the next tile on its way while this one is multiplied.
// Starts from: lesson 10's "warp 32x64" kernel. Adds: two shared-memory buffers; each
// iteration first issues the global loads of the next tile into registers, multiplies the
// current tile, then stores the next tile into the other buffer: one barrier per tile instead
// of two, and the loads' latency hidden behind a tile of FFMAs. The fragments of A and B are
// double-buffered in registers the same way (k + 1 is loaded while k is multiplied).
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/11_double_buffering/double_buffering.cu -lcublas -o double_buffering
// Run:  ./double_buffering --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// Kernel and variant:
//   sgemm_double_buffered   "2 buffers"  128 x 128 block tile, 8 warps of 32 x 64, 8 x 8 per thread
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"
#include "tut/sgemm_tiles.cuh"

namespace {

constexpr int kBM = 128, kBN = 128, kTileK = 8;  // as in lessons 09 and 10
constexpr int kTM = 8, kTN = 8;
constexpr int kWM = 32, kWN = 64;                // lesson 10's warp tile
constexpr int kLaneRows = kWM / kTM, kLaneCols = kWN / kTN;
constexpr int kThreads = 256;
constexpr int kLoadsA = kBM * kTileK / 4 / kThreads;  // float4 loads per thread per tile: 1
constexpr int kLoadsB = kTileK * kBN / 4 / kThreads;  // 1
constexpr int kPadA = 4;  // As rows of kBM + 4 floats: the 2 k groups of a warp's transposed stores hit different banks
// What the index arithmetic below assumes of the tiles:
static_assert(kBM * kTileK % (4 * kThreads) == 0 && kTileK * kBN % (4 * kThreads) == 0,
              "each thread loads whole float4s of A's and B's tiles");
static_assert(kTileK % 4 == 0 && kBN % 4 == 0, "a float4 of A stays within a row of the tile, one of B too");
static_assert((kBM / kWM) * (kBN / kWN) * 32 == kThreads, "one warp per warp tile");
static_assert(kWM % (4 * kLaneRows) == 0 && kWN % (4 * kLaneCols) == 0 && kLaneRows * kLaneCols == 32,
              "a warp tile is 32 lanes of kTM x kTN, as groups of 4 x 4");

__device__ int row_of(int wr, int lr, int s) { return wr * kWM + s * 4 * kLaneRows + lr * 4; }  // lesson 10
__device__ int col_of(int wc, int lc, int t) { return wc * kWN + t * 4 * kLaneCols + lc * 4; }

// A thread's share of one tile, held in registers between the global load and the shared store.
struct TileInRegisters {
    float4 a[kLoadsA], b[kLoadsB];
};

__device__ void load_tile(TileInRegisters& r, int n, const float* A, const float* B, int i0, int j0, int k0) {
#pragma unroll
    for (int q = 0; q < kLoadsA; ++q) {
        const int e = threadIdx.x + q * kThreads, m = e / (kTileK / 4), k = (e % (kTileK / 4)) * 4;
        r.a[q] = tut::sgemm::load4(A, n, i0 + m, k0 + k);
    }
#pragma unroll
    for (int q = 0; q < kLoadsB; ++q) {
        const int e = threadIdx.x + q * kThreads, k = e / (kBN / 4), j = (e % (kBN / 4)) * 4;
        r.b[q] = tut::sgemm::load4(B, n, k0 + k, j0 + j);
    }
}

__device__ void store_tile(const TileInRegisters& r, float (*As)[kBM + kPadA], float (*Bs)[kBN]) {
#pragma unroll
    for (int q = 0; q < kLoadsA; ++q) {
        const int e = threadIdx.x + q * kThreads, m = e / (kTileK / 4), k = (e % (kTileK / 4)) * 4;
        As[k][m] = r.a[q].x;
        As[k + 1][m] = r.a[q].y;
        As[k + 2][m] = r.a[q].z;
        As[k + 3][m] = r.a[q].w;
    }
#pragma unroll
    for (int q = 0; q < kLoadsB; ++q) {
        const int e = threadIdx.x + q * kThreads, k = e / (kBN / 4), j = (e % (kBN / 4)) * 4;
        *reinterpret_cast<float4*>(&Bs[k][j]) = r.b[q];
    }
}

// The fragments of step k: this lane's 8 values of A's column and 8 of B's row (lesson 10).
__device__ void load_fragments(float (&a)[kTM], float (&b)[kTN], const float (*As)[kBM + kPadA],
                               const float (*Bs)[kBN], int k, int wr, int wc, int lr, int lc) {
#pragma unroll
    for (int s = 0; s < kTM / 4; ++s)
        *reinterpret_cast<float4*>(&a[4 * s]) = *reinterpret_cast<const float4*>(&As[k][row_of(wr, lr, s)]);
#pragma unroll
    for (int t = 0; t < kTN / 4; ++t)
        *reinterpret_cast<float4*>(&b[4 * t]) = *reinterpret_cast<const float4*>(&Bs[k][col_of(wc, lc, t)]);
}

__global__ void __launch_bounds__(kThreads, 2) sgemm_double_buffered(int n, const float* __restrict__ A,
                                                                     const float* __restrict__ B,
                                                                     float* __restrict__ C) {
    __shared__ __align__(16) float As[2][kTileK][kBM + kPadA];
    __shared__ __align__(16) float Bs[2][kTileK][kBN];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wr = warp / (kBN / kWN), wc = warp % (kBN / kWN);
    const int lr = lane / kLaneCols, lc = lane % kLaneCols;
    const int i0 = blockIdx.y * kBM, j0 = blockIdx.x * kBN;
    float acc[kTM][kTN] = {};
    float a[2][kTM], b[2][kTN];  // fragments of steps k (slot k % 2) and k + 1
    TileInRegisters next;

    load_tile(next, n, A, B, i0, j0, 0);
    store_tile(next, As[0], Bs[0]);
    __syncthreads();
    int cur = 0;
    for (int k0 = 0; k0 < n; k0 += kTileK) {
        const bool more = k0 + kTileK < n;
        if (more) load_tile(next, n, A, B, i0, j0, k0 + kTileK);  // in flight during the FFMAs below
        load_fragments(a[0], b[0], As[cur], Bs[cur], 0, wr, wc, lr, lc);
#pragma unroll
        for (int k = 0; k < kTileK; ++k) {
            if (k + 1 < kTileK) load_fragments(a[(k + 1) % 2], b[(k + 1) % 2], As[cur], Bs[cur], k + 1, wr, wc, lr, lc);
#pragma unroll
            for (int i = 0; i < kTM; ++i)
#pragma unroll
                for (int j = 0; j < kTN; ++j) acc[i][j] += a[k % 2][i] * b[k % 2][j];
        }
        // The other buffer was last read in the previous iteration, before its barrier: free.
        if (more) store_tile(next, As[cur], Bs[cur]);
        __syncthreads();  // the next tile is complete, and everyone is done reading this one
        cur ^= 1;
    }
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; j += 4)
            tut::sgemm::store4(C, n, i0 + row_of(wr, lr, i / 4) + i % 4, j0 + col_of(wc, lc, j / 4),
                               make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
}

void run_double_buffered(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    const dim3 grid((n + kBN - 1) / kBN, (n + kBM - 1) / kBM);
    sgemm_double_buffered<<<grid, kThreads>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_double_buffered");
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    return {{"2 buffers", run_double_buffered, tut::kernel_of(sgemm_double_buffered, kThreads)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "11_double_buffering", "Double buffering: load the next tile during this one"};
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
