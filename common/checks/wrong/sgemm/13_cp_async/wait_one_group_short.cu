// wrong: sgemm/13_cp_async: cp_async_wait<kStages - 1>: "kStages - 1 tiles in flight", so tile kt may still be pending when it is read
// caught by: sgemm/13_cp_async: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile
// kind: race
// With kStages - 1 groups pending at that point, the wait returns at once: the block multiplies
// shared memory that the copies have not reached yet (from N = 1 on).
// sgemm/13_cp_async: cp.async pipelines of 2 to 4 stages on lesson 12's 128 x 256 tile.
// Starts from: lesson 12 (the 128 x 256 tile, each tile staged global -> registers -> shared
// into two buffers). Adds: cp.async, which copies global -> shared without passing through
// registers and without store instructions, with 2, 3 or 4 tiles in flight. Lesson 12's kernel
// stays in the file as the yardstick; the lesson measures whether the copies pay.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/13_cp_async/cp_async.cu -lcublas -o cp_async
// Run:  ./cp_async --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// Kernels and variants (all 128 x 256 x 8 tiles, 256 threads):
//   sgemm_cp_async<kStages>   "cp.async 2 stages", "cp.async 3 stages", "cp.async 4 stages"
//   sgemm_register_staged     "registers 2 buffers"   lesson 12's kernel, for comparison
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
constexpr int kAStride = kBM + 4;  // transposed A tile rows, padded as in lesson 11
constexpr int kTileFloats = kTileK * (kAStride + kBN);  // one stage: A's tile, then B's
// What the index arithmetic below assumes of the tiles:
static_assert(kBM * kTileK % (4 * kThreads) == 0 && kTileK * kBN % (4 * kThreads) == 0,
              "each thread copies whole float4s of A's and B's tiles (and so whole floats)");
static_assert(kTileK % 4 == 0 && kBN % 4 == 0, "a float4 of A stays within a row of the tile, one of B too");
static_assert(kAStride % 4 == 0 && kTileFloats % 4 == 0, "every row of a stage starts on 16 bytes (float4 reads)");
static_assert(kLaneRows * kLaneCols == 32 && (kBM / kWM) * (kBN / kWN) * 32 == kThreads, "8 warps of 32 lanes");
static_assert(kWM % (4 * kLaneRows) == 0 && kWN % (4 * kLaneCols) == 0, "a lane's outputs are 4 x 4 sub-blocks");

__device__ int row_of(int wr, int lr, int s) { return wr * kWM + s * 4 * kLaneRows + lr * 4; }  // lesson 10
__device__ int col_of(int wc, int lc, int t) { return wc * kWN + t * 4 * kLaneCols + lc * 4; }

// acc += the kTileK outer products of one stage (As[k][m] transposed, Bs[k][j]); the fragments
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
        for (int t = 0; t < kTN / 4; ++t)
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

__device__ void store_c(const float (&acc)[kTM][kTN], float* C, int n, int i0, int j0, int wr, int wc, int lr, int lc) {
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; j += 4)
            tut::sgemm::store4(C, n, i0 + row_of(wr, lr, i / 4) + i % 4, j0 + col_of(wc, lc, j / 4),
                               make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
}

// Starts copying tile `kt` into `stage` (kTileFloats floats of shared memory) with cp.async.
// A's tile is stored transposed, so it cannot move in 16-byte pieces: one 4-byte copy per
// element, 8 lanes along a row's 8 k values (one 32-byte sector), 4 rows per warp; the padded
// rows put those 32 stores in 32 different banks. B's rows move 16 bytes at a time when
// N % 4 == 0 (aligned), 4 bytes otherwise. Copies from outside the matrix write zeros.
__device__ void issue_tile(float* stage, int n, const float* A, const float* B, int i0, int j0, int kt) {
    const int k0 = kt * kTileK;
    float* As = stage;
    float* Bs = stage + kTileK * kAStride;
#pragma unroll
    for (int q = 0; q < kBM * kTileK / kThreads; ++q) {
        const int e = threadIdx.x + q * kThreads, k = e % kTileK, m = e / kTileK;
        const bool inside = i0 + m < n && k0 + k < n;
        tut::sgemm::cp_async_4(&As[k * kAStride + m], inside ? A + size_t(i0 + m) * n + k0 + k : A, inside);
    }
    if (n % 4 == 0) {
#pragma unroll
        for (int q = 0; q < kTileK * kBN / 4 / kThreads; ++q) {
            const int e = threadIdx.x + q * kThreads, k = e / (kBN / 4), j = (e % (kBN / 4)) * 4;
            const bool inside = k0 + k < n && j0 + j < n;
            tut::sgemm::cp_async_16(&Bs[k * kBN + j], inside ? B + size_t(k0 + k) * n + j0 + j : B, inside);
        }
    } else {
#pragma unroll 4
        for (int q = 0; q < kTileK * kBN / kThreads; ++q) {
            const int e = threadIdx.x + q * kThreads, k = e / kBN, j = e % kBN;
            const bool inside = k0 + k < n && j0 + j < n;
            tut::sgemm::cp_async_4(&Bs[k * kBN + j], inside ? B + size_t(k0 + k) * n + j0 + j : B, inside);
        }
    }
}

// kStages tiles in shared memory; kStages - 1 of them in flight while one is multiplied.
// Iteration kt: wait until tile kt has landed (at most kStages - 2 newer groups pending),
// barrier (tile kt visible to all; everyone done with tile kt - 1), start tile kt + kStages - 1
// into the stage tile kt - 1 used, multiply tile kt. Every thread commits one group per
// iteration, empty or not, so the group count in cp_async_wait stays right at the end.
template <int kStages>
__global__ void __launch_bounds__(kThreads, 1) sgemm_cp_async(int n, const float* __restrict__ A,
                                                              const float* __restrict__ B, float* __restrict__ C) {
    extern __shared__ __align__(16) float smem[];  // kStages x kTileFloats
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wr = warp / (kBN / kWN), wc = warp % (kBN / kWN);
    const int lr = lane / kLaneCols, lc = lane % kLaneCols;
    const int i0 = blockIdx.y * kBM, j0 = blockIdx.x * kBN;
    const int tiles = (n + kTileK - 1) / kTileK;
    float acc[kTM][kTN] = {};
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < tiles) issue_tile(smem + s * kTileFloats, n, A, B, i0, j0, s);
        tut::sgemm::cp_async_commit();
    }
    for (int kt = 0; kt < tiles; ++kt) {
        tut::sgemm::cp_async_wait<kStages - 1>();
        __syncthreads();
        const int next = kt + kStages - 1;
        if (next < tiles) issue_tile(smem + (next % kStages) * kTileFloats, n, A, B, i0, j0, next);
        tut::sgemm::cp_async_commit();
        const float* stage = smem + (kt % kStages) * kTileFloats;
        multiply_tile(acc, stage, stage + kTileK * kAStride, wr, wc, lr, lc);
    }
    store_c(acc, C, n, i0, j0, wr, wc, lr, lc);
}

// Lesson 12's kernel: the next tile's 3 float4 per thread wait in registers (lesson 11's pipeline).
__global__ void __launch_bounds__(kThreads, 1) sgemm_register_staged(int n, const float* __restrict__ A,
                                                                     const float* __restrict__ B,
                                                                     float* __restrict__ C) {
    __shared__ __align__(16) float smem[2 * kTileFloats];
    constexpr int kLoadsA = kBM * kTileK / 4 / kThreads, kLoadsB = kTileK * kBN / 4 / kThreads;
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
    auto store_tile = [&](float* stage) {
#pragma unroll
        for (int q = 0; q < kLoadsA; ++q) {
            const int e = threadIdx.x + q * kThreads, m = e / (kTileK / 4), k = (e % (kTileK / 4)) * 4;
            stage[k * kAStride + m] = ra[q].x;
            stage[(k + 1) * kAStride + m] = ra[q].y;
            stage[(k + 2) * kAStride + m] = ra[q].z;
            stage[(k + 3) * kAStride + m] = ra[q].w;
        }
#pragma unroll
        for (int q = 0; q < kLoadsB; ++q) {
            const int e = threadIdx.x + q * kThreads;
            *reinterpret_cast<float4*>(&stage[kTileK * kAStride + (e / (kBN / 4)) * kBN + (e % (kBN / 4)) * 4]) = rb[q];
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
        const float* stage = smem + cur * kTileFloats;
        multiply_tile(acc, stage, stage + kTileK * kAStride, wr, wc, lr, lc);
        if (more) store_tile(smem + (cur ^ 1) * kTileFloats);
        __syncthreads();
        cur ^= 1;
    }
    store_c(acc, C, n, i0, j0, wr, wc, lr, lc);
}

template <int kStages>
constexpr size_t cp_async_smem_bytes() {
    return size_t(kStages) * kTileFloats * sizeof(float);
}

template <int kStages>
void run_cp_async(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    constexpr size_t smem = cp_async_smem_bytes<kStages>();
    tut::allow_dynamic_shared_memory(sgemm_cp_async<kStages>, smem);  // above 48 KB a kernel must ask
    const dim3 grid((n + kBN - 1) / kBN, (n + kBM - 1) / kBM);
    sgemm_cp_async<kStages><<<grid, kThreads, smem>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_cp_async");
}

void run_register_staged(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    const dim3 grid((n + kBN - 1) / kBN, (n + kBM - 1) / kBM);
    sgemm_register_staged<<<grid, kThreads>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_register_staged");
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    const tut::Needs cp_async{80, "cp.async"};  // compute capability 8.0 or newer
    return {{"cp.async 2 stages", run_cp_async<2>,
             tut::kernel_of(sgemm_cp_async<2>, kThreads, cp_async_smem_bytes<2>()), cp_async},
            {"cp.async 3 stages", run_cp_async<3>,
             tut::kernel_of(sgemm_cp_async<3>, kThreads, cp_async_smem_bytes<3>()), cp_async},
            {"cp.async 4 stages", run_cp_async<4>,
             tut::kernel_of(sgemm_cp_async<4>, kThreads, cp_async_smem_bytes<4>()), cp_async},
            {"registers 2 buffers", run_register_staged, tut::kernel_of(sgemm_register_staged, kThreads)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "13_cp_async", "cp.async pipelines on lesson 12's 128 x 256 tile"};
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
