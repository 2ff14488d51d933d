// sgemm/14_tuning: finishing and tuning, to within a few percent of cuBLAS with plain FFMA.
// Starts from: lesson 12's "tile=128x256" kernel (128 x 256 x 8 tile). Adds: the tile's
// depth as a parameter (16 k per tile: half the barriers), a block swizzle (blocks that run
// together share panels of A and B in L2), C written back through shared memory as an option,
// and a sweep over these choices: each variant below is one point of it. Then, given, the kernel
// the sweep leads to at depth 32 (B by cp.async, the last tile peeled); `--sweep` times it
// against cuBLAS from N = 1024 to 8192.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/14_tuning/tuning.cu -lcublas -o tuning
// Run:  ./tuning --n 4096 --sweep      (--help for options; --profile for one clean launch under ncu)
//
// Kernels and variants (256 threads; name = block tile M x N x K, swizzle group, C path):
//   sgemm_tuned<...>   "128x256x8"                lesson 12's kernel
//                      "128x256x16"               deeper tile
//                      "128x256x16 swizzle 8"     + block swizzle
//                      "128x256x16 swizzle 16"
//                      "128x256x16 swizzle 8 C staged"   + C through shared memory
//                      "256x128x16 swizzle 8"     the transposed shape (16 x 8 per thread)
//                      "128x128x8 swizzle 8"      lesson 11's shape, 2 blocks per SM
//   sgemm_deep<Deep>   "128x256x32 B by cp.async, last tile peeled"   given: depth 32, B by cp.async,
//                                                 the last tile peeled (the sweep's pick; sm_80 or newer)
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"
#include "tut/sgemm_tiles.cuh"

#include <string>
#include <type_traits>

namespace {

constexpr int kThreads = 256;  // 8 warps

// The block of C this thread block computes, as (column block, row block). The hardware
// starts blocks in blockIdx order, row by row: the ~130 blocks running at once span every
// column of blocks and as many rows as that takes, so they share A's row panels in L2 but
// together read all of B. Numbered instead in groups of `group_rows` block rows, walking
// down a group's columns first, the blocks that run together cover a patch group_rows rows
// tall and only as many columns as the wave needs: less of B per wave, when the grid is
// wider than the wave is tall. 1: no swizzle.
__device__ int2 swizzled_block(int group_rows) {
    // TODO(exercise) part 1 of 2: the block swizzle. Return the tile of C this block computes,
    //   as (column block, row block), from the block's place in launch order (blockIdx.y *
    //   gridDim.x + blockIdx.x; CUDA promises no order, but in practice blocks start in that one).
    //   - group_rows <= 1 keeps the plain mapping: tile (blockIdx.x, blockIdx.y).
    //   - Otherwise the grid's block rows form bands of group_rows rows, handed out one band
    //     after the other; inside a band, consecutive launch numbers go down a column of the
    //     band before moving to the next column. The blocks resident at once then cover a patch
    //     group_rows tall and a few columns wide instead of a few whole rows.
    //   - gridDim.y need not be a multiple of group_rows: the last band is shorter, and its
    //     columns are only as tall as the band (count them with the band's real height).
    //   - The result must be a permutation of the grid: each tile exactly once. A tile computed
    //     twice is harmless in itself, but then another tile is never written and keeps the NaN
    //     the checks fill C with. Try a 3 x 5 grid with group_rows = 2 on paper.
    (void)group_rows;
    return make_int2(0, 0);  // every block computes tile (0, 0): wrong until the TODO is done
}

// One point of the sweep: block tile kBM x kBN x kTileK, warp tile kWM x kWN, kTM x kTN
// outputs per thread (lesson 10's layout), swizzle group height, and the C path.
template <int kBM_, int kBN_, int kTileK_, int kWM_, int kWN_, int kTM_, int kTN_, int kSwizzle_, bool kStageC_>
struct Config {
    static constexpr int kBM = kBM_, kBN = kBN_, kTileK = kTileK_, kWM = kWM_, kWN = kWN_, kTM = kTM_, kTN = kTN_;
    static constexpr int kSwizzle = kSwizzle_;
    static constexpr bool kStageC = kStageC_;
    static constexpr int kLaneRows = kWM / kTM, kLaneCols = kWN / kTN;
    static_assert(kLaneRows * kLaneCols == 32 && (kBM / kWM) * (kBN / kWN) * 32 == kThreads, "8 warps of 32 lanes");
    static_assert(kBM % kWM == 0 && kBN % kWN == 0 && kWM % (4 * kLaneRows) == 0 && kWN % (4 * kLaneCols) == 0,
                  "warp tiles cover the block tile; a lane's outputs are 4 x 4 sub-blocks");
    static_assert(kTileK % 4 == 0 && kBN % 4 == 0, "a float4 of A stays within a row of the tile, one of B too");
    static constexpr int kAStride = kBM + 4;  // transposed A rows, padded (lesson 11)
    static constexpr int kStageFloats = kTileK * (kAStride + kBN);
    static constexpr int kLoadsA = kBM * kTileK / 4 / kThreads, kLoadsB = kTileK * kBN / 4 / kThreads;
    static_assert(kBM * kTileK % (4 * kThreads) == 0 && kTileK * kBN % (4 * kThreads) == 0,
                  "each thread loads whole float4s of A's and B's tiles");
    static constexpr int kCStride = kWN + 4;  // a warp's staging row for C
    static_assert(kAStride % 4 == 0 && kStageFloats % 4 == 0 && kCStride % 4 == 0,
                  "every row in shared memory starts on 16 bytes (float4 reads and writes)");
    static constexpr size_t kSmemBytes =
        sizeof(float) * (kStageC && 8 * kLaneRows * kCStride > 2 * kStageFloats ? 8 * kLaneRows * kCStride
                                                                                 : 2 * kStageFloats);
    // 128 accumulators need about 230 registers: one block per SM; 64 fit in 128, two blocks.
    static constexpr int kMinBlocks = kTM * kTN > 64 ? 1 : 2;
    __device__ static int row(int wr, int lr, int s) { return wr * kWM + s * 4 * kLaneRows + lr * 4; }
    __device__ static int col(int wc, int lc, int t) { return wc * kWN + t * 4 * kLaneCols + lc * 4; }
};

// Lesson 12's register-staged pipeline, parameterised. Two stages of kStageFloats floats in
// dynamic shared memory (kTileK = 16 needs 49 KB at 128 x 256: beyond the 48 KB of static).
template <class K>
__global__ void __launch_bounds__(kThreads, K::kMinBlocks) sgemm_tuned(int n, const float* __restrict__ A,
                                                                       const float* __restrict__ B,
                                                                       float* __restrict__ C) {
    extern __shared__ __align__(16) float smem[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wr = warp / (K::kBN / K::kWN), wc = warp % (K::kBN / K::kWN);
    const int lr = lane / K::kLaneCols, lc = lane % K::kLaneCols;
    const int2 block = swizzled_block(K::kSwizzle);
    const int i0 = block.y * K::kBM, j0 = block.x * K::kBN;

    float4 ra[K::kLoadsA], rb[K::kLoadsB];
    auto load_tile = [&](int k0) {
#pragma unroll
        for (int q = 0; q < K::kLoadsA; ++q) {
            const int e = threadIdx.x + q * kThreads;
            ra[q] = tut::sgemm::load4(A, n, i0 + e / (K::kTileK / 4), k0 + (e % (K::kTileK / 4)) * 4);
        }
#pragma unroll
        for (int q = 0; q < K::kLoadsB; ++q) {
            const int e = threadIdx.x + q * kThreads;
            rb[q] = tut::sgemm::load4(B, n, k0 + e / (K::kBN / 4), j0 + (e % (K::kBN / 4)) * 4);
        }
    };
    auto store_tile = [&](float* stage) {
#pragma unroll
        for (int q = 0; q < K::kLoadsA; ++q) {
            const int e = threadIdx.x + q * kThreads, m = e / (K::kTileK / 4), k = (e % (K::kTileK / 4)) * 4;
            stage[k * K::kAStride + m] = ra[q].x;
            stage[(k + 1) * K::kAStride + m] = ra[q].y;
            stage[(k + 2) * K::kAStride + m] = ra[q].z;
            stage[(k + 3) * K::kAStride + m] = ra[q].w;
        }
#pragma unroll
        for (int q = 0; q < K::kLoadsB; ++q) {
            const int e = threadIdx.x + q * kThreads;
            *reinterpret_cast<float4*>(
                &stage[K::kTileK * K::kAStride + (e / (K::kBN / 4)) * K::kBN + (e % (K::kBN / 4)) * 4]) = rb[q];
        }
    };

    float acc[K::kTM][K::kTN] = {};
    float a[2][K::kTM], b[2][K::kTN];
    auto load_fragments = [&](const float* stage, int slot, int k) {
        const float* As = stage;
        const float* Bs = stage + K::kTileK * K::kAStride;
#pragma unroll
        for (int s = 0; s < K::kTM / 4; ++s)
            *reinterpret_cast<float4*>(&a[slot][4 * s]) =
                *reinterpret_cast<const float4*>(&As[k * K::kAStride + K::row(wr, lr, s)]);
#pragma unroll
        for (int t = 0; t < K::kTN / 4; ++t)
            *reinterpret_cast<float4*>(&b[slot][4 * t]) =
                *reinterpret_cast<const float4*>(&Bs[k * K::kBN + K::col(wc, lc, t)]);
    };

    load_tile(0);
    store_tile(smem);
    __syncthreads();
    int cur = 0;
    for (int k0 = 0; k0 < n; k0 += K::kTileK) {
        const bool more = k0 + K::kTileK < n;
        if (more) load_tile(k0 + K::kTileK);
        const float* stage = smem + cur * K::kStageFloats;
        load_fragments(stage, 0, 0);
#pragma unroll
        for (int k = 0; k < K::kTileK; ++k) {
            if (k + 1 < K::kTileK) load_fragments(stage, (k + 1) % 2, k + 1);
#pragma unroll
            for (int i = 0; i < K::kTM; ++i)
#pragma unroll
                for (int j = 0; j < K::kTN; ++j) acc[i][j] += a[k % 2][i] * b[k % 2][j];
        }
        if (more) store_tile(smem + (cur ^ 1) * K::kStageFloats);
        __syncthreads();
        cur ^= 1;
    }

    if (!K::kStageC) {
#pragma unroll
        for (int i = 0; i < K::kTM; ++i)
#pragma unroll
            for (int j = 0; j < K::kTN; j += 4)
                tut::sgemm::store4(C, n, i0 + K::row(wr, lr, i / 4) + i % 4, j0 + K::col(wc, lc, j / 4),
                                   make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
        return;
    }
    // C through shared memory: one row per lane row at a time (kLaneRows rows of the warp tile,
    // kWN wide) goes to the warp's own staging area, then the warp writes whole rows of kWN
    // floats: 16-byte stores, 256 contiguous bytes per row instead of 64. The loop's last
    // barrier has passed, so the pipeline's shared memory is free.
    float* staging = smem + warp * K::kLaneRows * K::kCStride;
    // TODO(exercise) part 2 of 2: the staged write-back described above, for each of the kTM
    //   rows i of a thread's outputs. Goal: each warp-wide store to C covers whole rows of the
    //   warp tile (consecutive lanes, consecutive float4s), where the direct path above writes
    //   64 bytes in each of kLaneRows rows per store.
    //   - A lane's pieces of row i belong in the staging row of its lane row, at the columns they
    //     have inside the warp tile (K::col() counts from the block tile's edge, not the warp's).
    //   - Reading back, staging row r holds part of the row of C that lane row r computes (K::row()).
    //   - Lanes read what other lanes wrote, and since Volta the lanes of a warp are not kept in
    //     lock-step: order all writes before any read, and all reads before the next i
    //     overwrites the rows. The rows are this warp's alone: no block-wide barrier is needed.
    //   - Overhanging tiles: write only inside the matrix (tut::sgemm::store4 sees to it).
    (void)staging;
}

template <class K>
void run_tuned(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    tut::allow_dynamic_shared_memory(sgemm_tuned<K>, K::kSmemBytes);  // above 48 KB a kernel must ask
    const dim3 grid((n + K::kBN - 1) / K::kBN, (n + K::kBM - 1) / K::kBM);
    sgemm_tuned<K><<<grid, kThreads, K::kSmemBytes>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_tuned");
}

//                 tile M   N    K  warp M  N  thread M N  swizzle C staged
using Lesson12 = Config<128, 256, 8, 64, 64, 8, 16, 1, false>;
using Deeper = Config<128, 256, 16, 64, 64, 8, 16, 1, false>;
using Swizzled = Config<128, 256, 16, 64, 64, 8, 16, 8, false>;
using Swizzled16 = Config<128, 256, 16, 64, 64, 8, 16, 16, false>;
using StagedC = Config<128, 256, 16, 64, 64, 8, 16, 8, true>;
using Tall = Config<256, 128, 16, 64, 64, 16, 8, 8, false>;
using Small = Config<128, 128, 8, 32, 64, 8, 8, 8, false>;

// ---- Given (not part of the exercise): where the sweep's last point leads. ----
// Depth 32, B by cp.async, the last tile peeled. The same block tile, warp tile and 8 x 16
// outputs per thread, in a pipeline rebuilt for depth 32:
//   - B's tile goes global -> shared by 16-byte cp.async: no staging registers for B (at depth
//     32 they would be 8 float4 a thread) and no store instructions for it. A, stored
//     transposed, still goes through registers (4 float4 a thread): a warp loads 16 rows x 32
//     bytes, so each of its transposed 4-byte stores hits 32 different banks, and the stores
//     are spread over the last k steps of the tile instead of bunched before the barrier.
//   - One barrier per 32 k (half as many as at depth 16), placed before the tile's last k step:
//     right after it each thread loads the next tile's first fragments while the last step's
//     FFMAs, already in registers, run.
//   - The last tile is its own copy of the loop body (peeled), so the main loop has no "is there
//     a next tile" tests around the loads, stores and barrier.
//   - The loop over a tile's 32 k steps is unrolled 8 at a time (4096 FFMAs fully unrolled would
//     crowd the instruction cache); the 8 x 16 FFMAs of a step go column by column.
// Any N: a block whose tile lies inside the matrix, with N a multiple of the depth, runs the
// body without a single bounds test; every other block (the last block row and column, or all
// of them when N % 32 != 0) runs the same body with its loads and stores guarded. The choice is
// made once per block, so interior blocks pay nothing for the edges.
struct Deep : Config<128, 256, 32, 64, 64, 8, 16, 1, false> {
    static constexpr int kUnroll = 8;                     // k steps per unrolled block of code
    static constexpr int kBRows = kThreads / (kBN / 4);  // rows of B's tile one round of copies covers
    static_assert(kBM == 16 * (kThreads / 32), "A's map: each warp loads 16 rows of A's tile");
    static_assert(kTileK == 8 * kLoadsA, "A's map: a lane's float4s of A are 8 k apart and cover the tile's depth");
    static_assert(kThreads % (kBN / 4) == 0 && kLoadsB * kBRows == kTileK, "B's map: whole rows of B's tile per round");
    static_assert(kTileK % kUnroll == 0 && kUnroll % 2 == 0,
                  "fragment slots alternate inside an unrolled block, and the next tile starts in slot 0");
    static_assert(kLoadsA <= kUnroll, "A's stores are spread over the steps of the last unrolled block");
    static_assert(kSwizzle == 1 && !kStageC, "blocks take their tiles in launch order; C is written directly");
};

// A 16-byte cp.async without the zero-fill operand (the interior path: always in bounds).
__device__ __forceinline__ void copy16_async(float* smem, const float* gmem) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
#else
    *reinterpret_cast<float4*>(smem) = *reinterpret_cast<const float4*>(gmem);
#endif
}

// One block's 128 x 256 tile of C. kEdge = false: the tile and its k range lie inside the matrix
// and N % 32 == 0 (16-byte aligned rows, whole tiles of k); true: every access is guarded.
template <class K, bool kEdge>
__device__ __forceinline__ void deep_block(int n, const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int i0, int j0) {
    extern __shared__ __align__(16) float smem[];  // 2 stages of kStageFloats
    constexpr int kBK = K::kTileK, kU = K::kUnroll;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wr = warp / (K::kBN / K::kWN), wc = warp % (K::kBN / K::kWN);
    const int lr = lane / K::kLaneCols, lc = lane % K::kLaneCols;
    const int tiles = (n + kBK - 1) / kBK;

    // A: row mA of the tile, k = kA + 8q .. +3 for q < kLoadsA (two lanes per row, 16 bytes each).
    const int mA = warp * 16 + lane / 2, kA = (lane % 2) * 4;
    // B: row kB + q * kBRows of the tile, columns jB .. jB + 3.
    const int kB = threadIdx.x / (K::kBN / 4), jB = (threadIdx.x % (K::kBN / 4)) * 4;
    const float* gA = A + size_t(i0 + mA) * n + kA;  // interior path: advanced one tile at a time
    const float* gB = B + size_t(kB) * n + j0 + jB;
    int kNextA = 0, kNextB = 0;                       // edge path: k0 of the next tile to load
    const int sA = kA * K::kAStride + mA, sB = kBK * K::kAStride + kB * K::kBN + jB;  // offsets in a stage

    // B's tile by cp.async into stage st (the caller commits the group).
    auto issue_b = [&](float* st) {
#pragma unroll
        for (int q = 0; q < K::kLoadsB; ++q) {
            float* dst = st + sB + q * K::kBRows * K::kBN;
            if constexpr (!kEdge) {
                copy16_async(dst, gB + size_t(q) * K::kBRows * n);
            } else {
                const int k = kNextB + kB + q * K::kBRows, j = j0 + jB;
                if (n % 4 == 0) {  // all 4 columns inside or all outside; outside: 16 zero bytes
                    const bool inside = k < n && j < n;
                    tut::sgemm::cp_async_16(dst, inside ? B + size_t(k) * n + j : B, inside);
                } else {  // rows not 16-byte aligned: 4 bytes at a time
#pragma unroll
                    for (int c = 0; c < 4; ++c) {
                        const bool inside = k < n && j + c < n;
                        tut::sgemm::cp_async_4(dst + c, inside ? B + size_t(k) * n + j + c : B, inside);
                    }
                }
            }
        }
        gB += size_t(kBK) * n;
        kNextB += kBK;
    };
    // A's next tile into registers; stored transposed later (store_a).
    float4 ra[K::kLoadsA];
    auto load_a = [&] {
#pragma unroll
        for (int q = 0; q < K::kLoadsA; ++q) {
            if constexpr (!kEdge)
                ra[q] = __ldg(reinterpret_cast<const float4*>(gA + 8 * q));
            else
                ra[q] = tut::sgemm::load4(A, n, i0 + mA, kNextA + kA + 8 * q);  // zeros outside
        }
        gA += kBK;
        kNextA += kBK;
    };
    auto store_a = [&](float* st, int q) {
        float* p = st + sA + 8 * q * K::kAStride;
        p[0] = ra[q].x;
        p[K::kAStride] = ra[q].y;
        p[2 * K::kAStride] = ra[q].z;
        p[3 * K::kAStride] = ra[q].w;
    };

    float acc[K::kTM][K::kTN];
#pragma unroll
    for (int i = 0; i < K::kTM; ++i)
#pragma unroll
        for (int j = 0; j < K::kTN; ++j) acc[i][j] = 0.0f;
    float a[2][K::kTM], b[2][K::kTN];
    auto load_fragments = [&](int slot, const float* st, int k) {
#pragma unroll
        for (int s = 0; s < K::kTM / 4; ++s)
            *reinterpret_cast<float4*>(&a[slot][4 * s]) =
                *reinterpret_cast<const float4*>(&st[k * K::kAStride + K::row(wr, lr, s)]);
#pragma unroll
        for (int t = 0; t < K::kTN / 4; ++t)
            *reinterpret_cast<float4*>(&b[slot][4 * t]) =
                *reinterpret_cast<const float4*>(&st[kBK * K::kAStride + k * K::kBN + K::col(wc, lc, t)]);
    };
    auto multiply = [&](int slot) {  // column by column: consecutive FFMAs share b[j]
#pragma unroll
        for (int j = 0; j < K::kTN; ++j)
#pragma unroll
            for (int i = 0; i < K::kTM; ++i) acc[i][j] = fmaf(a[slot][i], b[slot][j], acc[i][j]);
    };

    // Prologue: tile 0 into stage 0, and its first fragments.
    issue_b(smem);
    tut::sgemm::cp_async_commit();
    load_a();
#pragma unroll
    for (int q = 0; q < K::kLoadsA; ++q) store_a(smem, q);
    tut::sgemm::cp_async_wait<0>();
    __syncthreads();
    load_fragments(0, smem, 0);

    int cur = 0;
    // One tile of kBK k steps from stage cur. Not the last: first start the next tile (B by
    // cp.async into the other stage, which everyone finished reading before the previous
    // barrier; A into registers), store A's registers during the last unrolled block, wait for
    // this thread's copies, barrier before the last step, and load the next tile's first
    // fragments under that step's FFMAs. The last tile (kLast) does none of that.
    auto one_tile = [&](auto last) {
        constexpr bool kLast = decltype(last)::value;
        const float* st = smem + cur * K::kStageFloats;
        float* next = smem + (cur ^ 1) * K::kStageFloats;
        if constexpr (!kLast) {
            issue_b(next);
            tut::sgemm::cp_async_commit();
            load_a();
        }
#pragma unroll 1
        for (int k0 = 0; k0 < kBK - kU; k0 += kU) {
#pragma unroll
            for (int u = 0; u < kU; ++u) {
                load_fragments((u + 1) % 2, st, k0 + u + 1);
                multiply(u % 2);
            }
        }
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            if constexpr (!kLast) {
#pragma unroll
                for (int q = 0; q < K::kLoadsA; ++q)
                    if (q == u) store_a(next, q);  // one part of A's tile per step
            }
            if (u + 1 < kU) {
                load_fragments((u + 1) % 2, st, kBK - kU + u + 1);
            } else if constexpr (!kLast) {
                tut::sgemm::cp_async_wait<0>();
                __syncthreads();
                load_fragments(0, next, 0);
            }
            multiply(u % 2);
        }
        cur ^= 1;
    };
    for (int t = 0; t + 1 < tiles; ++t) one_tile(std::false_type{});
    one_tile(std::true_type{});

#pragma unroll
    for (int i = 0; i < K::kTM; ++i)
#pragma unroll
        for (int j = 0; j < K::kTN; j += 4) {
            const int row = i0 + K::row(wr, lr, i / 4) + i % 4, col = j0 + K::col(wc, lc, j / 4);
            const float4 v = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
            if constexpr (!kEdge)
                *reinterpret_cast<float4*>(&C[size_t(row) * n + col]) = v;
            else
                tut::sgemm::store4(C, n, row, col, v);  // only the elements inside the matrix
        }
}

template <class K>
__global__ void __launch_bounds__(kThreads, K::kMinBlocks) sgemm_deep(int n, const float* __restrict__ A,
                                                                     const float* __restrict__ B,
                                                                     float* __restrict__ C) {
    const int i0 = blockIdx.y * K::kBM, j0 = blockIdx.x * K::kBN;
    if (n % K::kTileK == 0 && i0 + K::kBM <= n && j0 + K::kBN <= n)
        deep_block<K, false>(n, A, B, C, i0, j0);  // interior: no bounds tests
    else
        deep_block<K, true>(n, A, B, C, i0, j0);  // the matrix's edge, or N % 32 != 0
}

template <class K>
void run_deep(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    int device = 0, optin = 0;
    TUT_CUDA(cudaGetDevice(&device));
    TUT_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (size_t(optin) < K::kSmemBytes)
        throw tut::Unsupported("sgemm_deep needs " + std::to_string(K::kSmemBytes) +
                               " bytes of shared memory per block; this GPU offers " + std::to_string(optin));
    tut::allow_dynamic_shared_memory(sgemm_deep<K>, K::kSmemBytes);  // 99,328 bytes: above 48 KB a kernel must ask
    const dim3 grid((n + K::kBN - 1) / K::kBN, (n + K::kBM - 1) / K::kBM);
    sgemm_deep<K><<<grid, kThreads, K::kSmemBytes>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_deep");
}

// The variant that --sweep follows across sizes: one of the names below.
constexpr const char* kChosen = "128x256x32 B by cp.async, last tile peeled";

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
// One point of the sweep each: the kernel of one Config, its block and its shared memory.
std::vector<tut::sgemm::Variant> variants() {
    return {{"128x256x8", run_tuned<Lesson12>, tut::kernel_of(sgemm_tuned<Lesson12>, kThreads, Lesson12::kSmemBytes)},
            {"128x256x16", run_tuned<Deeper>, tut::kernel_of(sgemm_tuned<Deeper>, kThreads, Deeper::kSmemBytes)},
            {"128x256x16 swizzle 8", run_tuned<Swizzled>,
             tut::kernel_of(sgemm_tuned<Swizzled>, kThreads, Swizzled::kSmemBytes)},
            {"128x256x16 swizzle 16", run_tuned<Swizzled16>,
             tut::kernel_of(sgemm_tuned<Swizzled16>, kThreads, Swizzled16::kSmemBytes)},
            {"128x256x16 swizzle 8 C staged", run_tuned<StagedC>,
             tut::kernel_of(sgemm_tuned<StagedC>, kThreads, StagedC::kSmemBytes)},
            {"256x128x16 swizzle 8", run_tuned<Tall>, tut::kernel_of(sgemm_tuned<Tall>, kThreads, Tall::kSmemBytes)},
            {"128x128x8 swizzle 8", run_tuned<Small>, tut::kernel_of(sgemm_tuned<Small>, kThreads, Small::kSmemBytes)},
            {"128x256x32 B by cp.async, last tile peeled", run_deep<Deep>,
             tut::kernel_of(sgemm_deep<Deep>, kThreads, Deep::kSmemBytes), tut::Needs{80, "cp.async"}}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "14_tuning", "Finishing and tuning: tile depth, block swizzle, C path"};
    const std::vector<tut::sgemm::Variant> variants = lesson::variants();
    tut::sgemm::Options options(lesson);  // --n (4096) and the options every lesson takes
    bool sweep = false;  // the tour passes it
    options.cli.add_flag("sweep", &sweep, std::string("after the table, time '") + kChosen +
                                              "' against cuBLAS at N = 1024 .. 8192 (multiples of the tile and not)");
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
        if (sweep) tut::sgemm::size_sweep(bench, variants, kChosen, tut::sgemm::Arithmetic::fp32);
        return bench.exit_code();
    });
}
