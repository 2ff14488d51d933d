// wrong: sgemm/19_persistent_cluster: the producer waits on empty_bar with parity (it / kStages) & 1, the phase of this round's own release
// caught by: sgemm/19_persistent_cluster: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile
// kind: other
// Round 1 waits for a release that needs round 1's data: a deadlock as soon as a block walks more than
// 4 k-tiles (N = 257 in this case). mbar_wait gives up after 2^31 cycles and from then on after 2^20,
// and so do the consumers' waits on the full barriers: they read stages whose copies have not landed,
// and C comes out wrong (and slowly) rather than hanging.
// sgemm/19_persistent_cluster: lesson 18's main loop, scheduled: persistent blocks, clusters sharing A, TMA stores.
// Starts from: lesson 18 (C^T = B^T A^T with B from registers, one 256 x 128 tile per block, a grid of
// all tiles). Adds, on compute capability 9.0 (H100, H200), one step per variant:
//   - persistent blocks: as many blocks as fit at once (one per SM), each walking a list of tiles. The
//     stage ring and its barrier phases run on from tile to tile, so the producer loads the next tile's
//     first stages while the consumers finish and store the last one.
//   - a cluster of 2: two blocks on neighbouring SMs take the two column tiles of one 256-row band, and
//     each loads half of their common A tile with a TMA multicast into both; a stage is free again
//     only when the consumers of both blocks have released it.
//   - TMA stores: the epilogue writes C through shared memory and TMA stores of whole 128-byte lines,
//     which run on while the consumers start the next tile.
//   - the split of the last wave: the tiles of the last, partial wave are cut along k into pieces at the
//     same k for every tile, so that every SM has work until the end; the last piece of a tile adds
//     the others' partial tiles (through a workspace and flags in global memory) and stores C.
//
// Build alone (from the repository root; the kernel needs the sm_90a target):
//   nvcc -O3 -std=c++17 -arch=sm_90a -Icommon/include lessons/sgemm/19_persistent_cluster/persistent_cluster.cu -lcublas -o persistent_cluster
// Run:  ./persistent_cluster --sweep   (N = 8192 by default; --help for options; other GPUs than 9.0: exit 77)
//
// Kernels and variants (one kernel, sgemm_persistent<cluster, split, TMA stores>; 384 threads, 1 block/SM):
//   "persistent"                                             <1, no, no>
//   "persistent, cluster of 2"                               <2, no, no>
//   "persistent, cluster of 2, TMA stores"                   <2, no, yes>
//   "persistent, cluster of 2, TMA stores, split last wave"  <2, yes, yes>
//   pad_copy   only for N % 4 != 0 (or A, B not 16-byte aligned): A and B with rows padded
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

#include <cuda.h>          // CUtensorMap and its enums (types only: no -lcuda)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <algorithm>
#include <cmath>
#include <cstdint>

// ------------------------------------------------------------------ PTX wrappers
// One or a few PTX instructions each, defined after the kernel (lessons 17 and 18 introduced most of
// them). Shared-memory addresses are the 32-bit ones PTX takes. The kernel's body is compiled only where
// the sm_90a features exist (__CUDA_ARCH_FEAT_SM90_ALL); any other device pass gets a stub.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TUT_SM90A 1
#endif
__device__ __forceinline__ uint32_t smem_u32(const void* p);
// mbarriers (lesson 17); a wait gives up after about a second instead of hanging (see its definition)
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t arrivals);
__device__ __forceinline__ void mbar_arrive(uint32_t bar);
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes);
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity);
// Arrive on the barrier at the same shared-memory offset in block `rank` of this cluster (itself included).
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank);
// TMA loads: the box at (inner coordinate c0, row c1) to dst; its bytes land on bar. The multicast form
// writes the same box to the same offset in every block of `mask` and counts the bytes that land in a
// block on that block's barrier at offset bar.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1);
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0,
                                                      int c1, uint16_t mask);
// TMA stores: a box of shared memory to the box at (c0, c1) of `map`'s matrix, in a bulk group; commit
// the group; wait until every committed group has read its shared memory; until all are complete.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, uint32_t src, int c0, int c1);
__device__ __forceinline__ void bulk_commit();
__device__ __forceinline__ void bulk_wait_read0();
__device__ __forceinline__ void bulk_wait0();
// Makes this thread's shared-memory writes visible to the async proxy (TMA) before a barrier.
__device__ __forceinline__ void fence_proxy_async_smem();
__device__ __forceinline__ void sts64(uint32_t addr, float a, float b);
__device__ __forceinline__ uint2 lds64(uint32_t addr);
__device__ __forceinline__ void named_bar_sync(int id, int threads);  // a barrier of `threads` threads
// Clusters: this block's rank in its cluster; a barrier of every thread of the cluster.
__device__ __forceinline__ uint32_t cluster_ctarank();
__device__ __forceinline__ void cluster_sync_all();
// The split's flags: a load that acquires, a store that releases, at GPU scope; a wait for a value.
__device__ __forceinline__ int ld_acquire_gpu(const int* p);
__device__ __forceinline__ void st_release_gpu(int* p, int v);
__device__ __forceinline__ void wait_flag(const int* p, int v);
// wgmma with A from registers (lesson 18), its fence, groups and waits; the shared-memory descriptor
__device__ __forceinline__ uint64_t make_desc_sw128(uint32_t smem_addr);
__device__ __forceinline__ void wgmma_rs_m64n256k8_tf32(float (&d)[128], const uint32_t (&a)[4], uint64_t desc_b);
__device__ __forceinline__ void wgmma_fence();
__device__ __forceinline__ void wgmma_commit();
template <int N>
__device__ __forceinline__ void wgmma_wait();
__device__ __forceinline__ void reg_fence(float& r);
template <int N>
__device__ __forceinline__ void setmaxnreg_dec();
template <int N>
__device__ __forceinline__ void setmaxnreg_inc();

namespace {

// Lesson 18's tile, stages and warpgroups, unchanged.
constexpr int kBM = 256;  // rows of C per tile: wgmma's N
constexpr int kBN = 128;  // columns of C per tile: two consumer warpgroups of 64 (wgmma's M)
constexpr int kBK = 32;   // k per stage: one 128-byte row of the swizzle
constexpr int kStages = 4;
constexpr int kKK = kBK / 8;
constexpr int kABytes = kBM * kBK * 4;                       // 32 KiB
constexpr int kBBoxBytes = kBK * 32 * 4;                     // 4 KiB: 32 k x 32 columns of B
constexpr int kBBoxes = kBN / 32;
constexpr int kStageBytes = kABytes + kBBoxes * kBBoxBytes;  // 48 KiB
constexpr int kConsumerThreads = 256;
constexpr int kThreads = kConsumerThreads + 128;
constexpr int kLaunchRegs = 168;  // 65536 / 384, what every thread gets at launch
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;
// TMA stores: per consumer warpgroup two 8 KiB buffers, each 32 rows x 64 columns of C (two boxes of 32 x 32).
constexpr int kEpiBufferBytes = 32 * 64 * 4;
constexpr int kEpiBytes = 2 * 2 * kEpiBufferBytes;
constexpr int smem_bytes(bool tma_stores) {
    return kStages * kStageBytes + (tma_stores ? kEpiBytes : 0) + 1024 + 2 * kStages * 8;  // + alignment, barriers
}
static_assert(kBK * 4 == 128, "a row of every box is one 128-byte row of the swizzle, as the descriptor says");
static_assert(kKK == 4 && kBM == 256 && kBN == 2 * 64 && kBBoxes == 4,
              "lesson 18's tile: a stage is 4 wgmmas of m64n256k8 a warpgroup");
static_assert(kConsumerThreads == 2 * 128, "two consumer warpgroups");
static_assert(kABytes % 1024 == 0 && kStageBytes % 1024 == 0 && kEpiBufferBytes % 1024 == 0,
              "every box starts on the 1 KiB the swizzle needs");
static_assert(kBM % 32 == 0 && kEpiBufferBytes == 2 * 32 * 32 * 4,
              "the TMA-store epilogue goes 32 rows at a time, two boxes of 32 x 32 per warpgroup");
static_assert(kProducerRegs * 128 + kConsumerRegs * kConsumerThreads == kLaunchRegs * kThreads &&
                  kLaunchRegs * kThreads <= 65536,
              "setmaxnreg moves registers between warpgroups within what the block launched with");
static_assert(smem_bytes(true) <= 227 * 1024, "the shared memory one block may have, TMA-store buffers included");

// Runtime arguments besides the tensor maps.
struct Params {
    float* C;         // row-major n x n
    float* partials;  // the split's workspace: a 256 x 128 partial tile per (split tile, piece but the last, block)
    int* flags;       // one per partial tile: = epoch once it is written
    int n, tiles_m, tiles_n;
    int whole_tiles, split_tiles, split;  // the list (TileSchedule); split 1: whole tiles only
    int epoch;                            // this launch's number: flags of earlier launches never match it
    int tma_store;                        // C through TMA stores (n % 4 == 0, C 16-byte aligned); else direct
};

#ifdef TUT_SM90A  // device code of the kernel's body, which exists only in the sm_90a pass
// ------------------------------------------------------------------ the tile schedule
// The work of the whole grid is one list. Its first whole_tiles entries are whole tiles (0, 1, ...); then,
// when the last wave is split, the pieces of the remaining split_tiles tiles, piece by piece: entry
// whole_tiles + q * split_tiles + st is piece q of tile whole_tiles + st, the k-tiles
// [q K / split, (q + 1) K / split) of it (K = k_tiles). Cluster c (a block, without clusters) of P takes
// entries c, c + P, c + 2 P, ...: the same tiles, round by round, as the waves of lesson 18's grid.
// Cutting every split tile at the same k keeps the pieces that run at the same time on the same k-slices
// of A and B, which they then find in L2. Piece split - 1 of a tile (its "owner") adds the other pieces'
// partial tiles and stores C; it never waits for a piece that comes after it in the list, and every block
// is resident, so no wait can deadlock.
struct WorkItem {
    int tile;    // which tile (numbered as in tile_origin)
    int kb, ke;  // its k-tiles [kb, ke)
    int piece;   // -1: the whole tile; else which k-piece
    int st;      // for a piece: which of the split tiles (its partial tiles' slots)
};

struct TileSchedule {
    int entry;        // this cluster's next entry of the list
    int clusters;     // P: how many walk the list
    int k_tiles;      // K
    int whole_tiles;  // entries 0 .. whole_tiles - 1 are whole tiles
    int split_tiles;  // the tiles after them, each cut into `split` pieces
    int split;

    __device__ TileSchedule(int cluster, int clusters_, int k_tiles_, int whole_tiles_, int split_tiles_, int split_)
        : entry(cluster),
          clusters(clusters_),
          k_tiles(k_tiles_),
          whole_tiles(whole_tiles_),
          split_tiles(split_tiles_),
          split(split_) {}

    // The next work item of this cluster into w; false when its part of the list is done.
    __device__ bool next(WorkItem& w) {
        if (entry >= whole_tiles + split * split_tiles) return false;
        if (entry < whole_tiles) {
            w = WorkItem{entry, 0, k_tiles, -1, 0};
        } else {
            const int q = (entry - whole_tiles) / split_tiles;  // the piece ...
            const int st = (entry - whole_tiles) % split_tiles;  // ... of this split tile
            w = WorkItem{whole_tiles + st, q * k_tiles / split, (q + 1) * k_tiles / split, q, st};
        }
        entry += clusters;
        return true;
    }
};

// The split's workspace: one 256 x 128 partial tile per (split tile, piece but the last, block of the
// cluster), 32 float4 per consumer thread, in register order.
constexpr size_t kSlotFloat4s = size_t(kBM) * kBN / 4;

// ------------------------------------------------------------------ lesson 18: B^T's fragments and the epilogue
// Warp w, lane 4 g + t of warpgroup wg: the rows 16 w + g (+ 8) of wgmma's register operand stand for two
// neighbouring C columns n0 + 64 wg + 32 (w / 2) + 4 chunk + 2 (g % 2) (+ 1) in B box 2 wg + w / 2.
__device__ __forceinline__ int fragment_chunk(int warp, int g) { return 2 * (warp % 2) + g / 4 + 4 * ((g % 4) / 2); }

struct FragmentOffsets {
    uint32_t lo;  // row k = t: a[0], a[1]
    uint32_t hi;  // row k = t + 4: a[2], a[3]
};

__device__ __forceinline__ FragmentOffsets fragment_offsets(int wg, int warp, int lane) {
    const int g = lane / 4, t = lane % 4;
    const int chunk = fragment_chunk(warp, g);
    const uint32_t box = (2 * wg + warp / 2) * kBBoxBytes;
    const uint32_t half = (g % 2) * 8;
    return {box + t * 128 + ((chunk ^ t) << 4) + half, box + (t + 4) * 128 + ((chunk ^ (t + 4)) << 4) + half};
}

__device__ __forceinline__ void load_fragments(uint32_t (&f)[kKK][4], uint32_t b_tile, FragmentOffsets off) {
#pragma unroll
    for (int kk = 0; kk < kKK; ++kk) {
        const uint2 lo = lds64(b_tile + kk * 1024 + off.lo);
        const uint2 hi = lds64(b_tile + kk * 1024 + off.hi);
        f[kk][0] = lo.x;
        f[kk][1] = lo.y;
        f[kk][2] = hi.x;
        f[kk][3] = hi.y;
    }
}

// Direct stores: d[4 i + 2 h + v] = C(m0 + 8 i + 2 t + v, column of row 16 w + g + 8 h).
__device__ __forceinline__ void store_tile(const float (&d)[128], float* __restrict__ C, int n, int m0, int n0,
                                           int wg, int warp, int lane) {
    const int g = lane / 4, t = lane % 4;
    const bool pairs = n % 2 == 0 && reinterpret_cast<uintptr_t>(C) % 8 == 0;
    const int col = n0 + 64 * wg + 32 * (warp / 2) + 4 * fragment_chunk(warp, g) + 2 * (g % 2);
#pragma unroll
    for (int i = 0; i < kBM / 8; ++i)
#pragma unroll
        for (int v = 0; v < 2; ++v) {
            const int row = m0 + 8 * i + 2 * t + v;
            if (row >= n) continue;
            float* ptr = C + static_cast<size_t>(row) * n + col;
            if (pairs && col + 1 < n) {
                *reinterpret_cast<float2*>(ptr) = make_float2(d[4 * i + v], d[4 * i + 2 + v]);
            } else {
                if (col < n) ptr[0] = d[4 * i + v];
                if (col + 1 < n) ptr[1] = d[4 * i + 2 + v];
            }
        }
}
#endif  // TUT_SM90A

// ------------------------------------------------------------------ the kernel
// gridDim.x / kCluster clusters (blocks, without clusters) walk the tile list; each work item is a
// 256 x 128 tile of C (or a piece of one) at (m0, n0), computed as in lesson 18. Threads 0-255: the
// consumer warpgroups; threads 256-383: the producer warpgroup, whose thread 256 issues every TMA load.
// Shared memory: kStages stages of [A: 256 rows x 32 k][B: 4 boxes of 32 k x 32 columns], then (TMA
// stores) 2 x 16 KiB of staging for C, then the full and empty barriers. The stage ring runs on across
// work items: k-tile number `it` of this block's whole walk uses stage it % kStages, in round it / kStages.
template <int kCluster, bool kSplit, bool kTmaStore>
__global__ void __launch_bounds__(kThreads, 1)
    sgemm_persistent(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                     const __grid_constant__ CUtensorMap map_c, const Params p) {
#ifndef TUT_SM90A
    __trap();  // not the sm_90a pass: the launcher never gets here (it refuses other GPUs)
#else
    static_assert(kCluster == 1 || kCluster == 2, "a cluster of 1 or 2 blocks along C's columns");
    static_assert(!kSplit || kCluster == 2, "the split is built on the cluster variant");
    constexpr int kGroupRows = 8;  // tile order: bands of 8 tile rows, column by column (lesson 14)
    extern __shared__ unsigned char smem_raw[];
    const uint32_t stages = (smem_u32(smem_raw) + 1023u) & ~1023u;  // swizzle atoms: 1 KiB alignment
    const uint32_t epi_smem = stages + kStages * kStageBytes;       // TMA stores: 2 x 16 KiB, 1 KiB aligned
    const uint32_t bars = epi_smem + (kTmaStore ? kEpiBytes : 0);
    auto full_bar = [&](uint32_t s) { return bars + 8 * s; };
    auto empty_bar = [&](uint32_t s) { return bars + 8 * (kStages + s); };

    // A cluster's kCluster blocks take neighbouring column tiles of one 256-row band: they share A's tile.
    const int rank = kCluster > 1 ? static_cast<int>(cluster_ctarank()) : 0;
    const int cluster = blockIdx.x / kCluster, clusters = gridDim.x / kCluster;
    const int cols_of_clusters = (p.tiles_n + kCluster - 1) / kCluster;
    const int k_tiles = (p.n + kBK - 1) / kBK;
    // Every thread that walks the list builds it from the same values: the producer and the consumers
    // of a block, and the blocks of a cluster, meet the same items in the same order.
    auto make_schedule = [&]() {
        return TileSchedule(cluster, clusters, k_tiles, p.whole_tiles, p.split_tiles, p.split);
    };
    auto tile_origin = [&](int tile, int& m0, int& n0) {
        const int band = tile / (kGroupRows * cols_of_clusters);
        const int first_row = band * kGroupRows;
        const int rows = min(kGroupRows, p.tiles_m - first_row);
        const int in_band = tile - band * kGroupRows * cols_of_clusters;
        m0 = (first_row + in_band % rows) * kBM;
        n0 = ((in_band / rows) * kCluster + rank) * kBN;  // may be >= n (odd tiles_n): loads zeros, stores nothing
    };

    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbar_init(full_bar(s), 1);               // the producer's arrive.expect_tx
            mbar_init(empty_bar(s), 8 * kCluster);  // every consumer warp of every block of the cluster
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&map_a)) : "memory");
        asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&map_b)) : "memory");
        if (kTmaStore && p.tma_store)
            asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&map_c)) : "memory");
    }
    __syncthreads();
    if constexpr (kCluster > 1) cluster_sync_all();  // the peer's barriers exist before any multicast or remote arrive

    // Each branch ends on its own: code after setmaxnreg that both shared would get the smaller budget.
    if (threadIdx.x >= kConsumerThreads) {
        // ------------------------------------------------------------------ producer
        setmaxnreg_dec<kProducerRegs>();
        if (threadIdx.x == kConsumerThreads) {
            // K-tile kt of the tile at (m0, n0) into stage s, announced on the stage's full barrier: every
            // byte that lands in this block's stage counts, the peer's multicast half of A included.
            auto load_stage = [&](uint32_t s, int kt, int m0, int n0) {
                const uint32_t a_tile = stages + s * kStageBytes, b_tile = a_tile + kABytes;
                mbar_arrive_expect_tx(full_bar(s), kStageBytes);
                if constexpr (kCluster == 1) {
                    tma_load_2d(a_tile, &map_a, full_bar(s), kt * kBK, m0);
                } else {  // this block's half of A's rows, into the same place in both blocks
                    constexpr int kRowsPerRank = kBM / kCluster;
                    tma_load_2d_multicast(a_tile + rank * (kABytes / kCluster), &map_a, full_bar(s), kt * kBK,
                                          m0 + rank * kRowsPerRank, static_cast<uint16_t>((1u << kCluster) - 1));
                }
#pragma unroll
                for (int b = 0; b < kBBoxes; ++b)
                    tma_load_2d(b_tile + b * kBBoxBytes, &map_b, full_bar(s), n0 + 32 * b, kt * kBK);
            };
            TileSchedule schedule = make_schedule();
            WorkItem w;
            uint32_t it = 0;  // k-tiles issued so far, over all items: the ring does not restart per tile
            while (schedule.next(w)) {
                int m0, n0;
                tile_origin(w.tile, m0, n0);
                for (int kt = w.kb; kt < w.ke; ++kt, ++it) {
                    const uint32_t s = it % kStages;
                    if (it >= kStages) mbar_wait(empty_bar(s), (it / kStages) & 1);
                    load_stage(s, kt, m0, n0);
                }
            }
        }
        if constexpr (kCluster > 1) cluster_sync_all();  // no block leaves while its peer may still use its barriers
        return;
    } else {
        // ------------------------------------------------------------------ consumers
        setmaxnreg_inc<kConsumerRegs>();
        const int wg = threadIdx.x / 128;
        const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
        const int g = lane / 4, t = lane % 4;
        const FragmentOffsets off = fragment_offsets(wg, warp, lane);
        auto a_tile = [&](uint32_t s) { return stages + s * kStageBytes; };
        auto b_tile = [&](uint32_t s) { return stages + s * kStageBytes + kABytes; };
        // A stage is released to the producers of every block of the cluster: their multicasts refill it.
        auto release = [&](uint32_t s) {
            if constexpr (kCluster == 1) {
                if (lane == 0) mbar_arrive(empty_bar(s));
            } else {
                if (lane < kCluster) mbar_arrive_cluster(empty_bar(s), lane);  // lane r -> block r, itself included
            }
        };

        TileSchedule schedule = make_schedule();
        WorkItem w;
        uint32_t it_base = 0;  // k-tiles consumed before this item
#pragma unroll 1
        while (schedule.next(w)) {
            int m0, n0;
            tile_origin(w.tile, m0, n0);
            const int nk = w.ke - w.kb;  // k-tiles of this item
            auto stage_of = [&](int kt) { return (it_base + kt) % kStages; };  // kt: 0 .. nk - 1 of this item
            auto parity_of = [&](int kt) { return ((it_base + kt) / kStages) & 1; };

            // Lesson 18's main loop, on the ring's running count.
            float d[128];
#pragma unroll
            for (int i = 0; i < 128; ++i) d[i] = 0.0f;
#pragma unroll
            for (int i = 0; i < 128; ++i) reg_fence(d[i]);
            uint32_t frag0[kKK][4], frag1[kKK][4];
            auto k_tile = [&](uint32_t(&cur)[kKK][4], uint32_t(&next)[kKK][4], int kt) {
                const uint64_t desc = make_desc_sw128(a_tile(stage_of(kt)));
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < kKK; ++kk) wgmma_rs_m64n256k8_tf32(d, cur[kk], desc + 2 * kk);
                wgmma_commit();
                wgmma_wait<1>();
                if (kt > 0) release(stage_of(kt - 1));
                if (kt + 1 < nk) {
                    mbar_wait(full_bar(stage_of(kt + 1)), parity_of(kt + 1));
                    load_fragments(next, b_tile(stage_of(kt + 1)), off);
                }
            };
            mbar_wait(full_bar(stage_of(0)), parity_of(0));
            load_fragments(frag0, b_tile(stage_of(0)), off);
            int kt = 0;
#pragma unroll 1
            for (; kt + 2 <= nk; kt += 2) {
                k_tile(frag0, frag1, kt);
                k_tile(frag1, frag0, kt + 1);
            }
            if (kt < nk) k_tile(frag0, frag1, kt);
            wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < 128; ++i) reg_fence(d[i]);
            release(stage_of(nk - 1));
            it_base += nk;

            // ------------------------------------------------------------------ epilogue
            // 0: a whole tile; 1: a piece, whose partial tile goes to the workspace; 2: a tile's last piece,
            // which adds the others' partial tiles and stores C.
            int kind = 0;
            if constexpr (kSplit) kind = w.piece < 0 ? 0 : (w.piece < p.split - 1 ? 1 : 2);
            auto slot_of = [&](int piece) {  // the partial tile of (split tile w.st, piece, this block)
                return (static_cast<size_t>(w.st) * (p.split - 1) + piece) * kCluster + rank;
            };
            if (kind == 1) {
                // In register order (every store a whole coalesced line of 256 threads), then the flag.
                const size_t slot = slot_of(w.piece);
                float4* dst = reinterpret_cast<float4*>(p.partials) + slot * kSlotFloat4s + threadIdx.x;
#pragma unroll
                for (int i = 0; i < 32; ++i)
                    __stcg(dst + i * 256, make_float4(d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]));
                named_bar_sync(1, kConsumerThreads);  // all 256 threads' stores, before thread 0's release
                if (threadIdx.x == 0) {
                    __threadfence();
                    st_release_gpu(p.flags + slot, p.epoch);
                }
                continue;
            }
            if (kind == 2) {
                // Pieces 0 .. split - 2 of this tile, in order (the same sum every run).
#pragma unroll 1
                for (int q = 0; q < p.split - 1; ++q) {
                    const size_t slot = slot_of(q);
                    if (threadIdx.x == 0) wait_flag(p.flags + slot, p.epoch);
                    named_bar_sync(1, kConsumerThreads);
                    const float4* src = reinterpret_cast<const float4*>(p.partials) + slot * kSlotFloat4s + threadIdx.x;
                    // In 4 batches of 8 loads: all 32 in flight at once would need 128 registers beside the
                    // accumulators, and the spills reach into the main loop.
#pragma unroll
                    for (int i0 = 0; i0 < 32; i0 += 8) {
                        float4 v[8];
#pragma unroll
                        for (int i = 0; i < 8; ++i) v[i] = __ldcg(src + (i0 + i) * 256);
#pragma unroll
                        for (int i = 0; i < 8; ++i) {
                            d[4 * (i0 + i)] += v[i].x;
                            d[4 * (i0 + i) + 1] += v[i].y;
                            d[4 * (i0 + i) + 2] += v[i].z;
                            d[4 * (i0 + i) + 3] += v[i].w;
                        }
                        asm volatile("" ::: "memory");
                    }
                }
            }
            if (!kTmaStore || !p.tma_store) {
                store_tile(d, p.C, p.n, m0, n0, wg, warp, lane);
                continue;
            }
            // TMA stores, 32 rows of the warpgroup's 64 columns at a time, through two alternating 8 KiB
            // buffers, each two boxes of 32 rows x 32 columns (128-byte rows in the 128-byte swizzle:
            // chunk j of row r at chunk j ^ (r % 8)). Per chunk of rows: write the buffer, make the writes
            // visible to TMA (fence.proxy.async), the leader waits until the previous chunk's store has
            // read the other buffer (the next chunk writes it), a barrier of the warpgroup, and the leader
            // stores this chunk. The stores run on while the warpgroup goes on, into the next tile.
            const uint32_t ebuf = epi_smem + wg * 2 * kEpiBufferBytes;
            const int chunk = fragment_chunk(warp, g);
            const uint32_t t_base = ebuf + (warp / 2) * 4096 + (g % 2) * 8;
            const uint32_t off0 = (2 * t) * 128 + ((chunk ^ (2 * t)) << 4);          // row 2 t (v = 0)
            const uint32_t off1 = (2 * t + 1) * 128 + ((chunk ^ (2 * t + 1)) << 4);  // row 2 t + 1 (v = 1)
            const bool leader = threadIdx.x % 128 == 0;
            const int colw = n0 + 64 * wg;
#pragma unroll
            for (int c = 0; c < kBM / 32; ++c) {
                const uint32_t buf = t_base + (c % 2) * kEpiBufferBytes;
#pragma unroll
                for (int ii = 0; ii < 4; ++ii) {  // i = 4 c + ii: rows 8 ii + 2 t + v of the chunk
                    sts64(buf + ii * 1024 + off0, d[16 * c + 4 * ii + 0], d[16 * c + 4 * ii + 2]);
                    sts64(buf + ii * 1024 + off1, d[16 * c + 4 * ii + 1], d[16 * c + 4 * ii + 3]);
                }
                fence_proxy_async_smem();
                if (leader) bulk_wait_read0();
                named_bar_sync(2 + wg, 128);
                if (leader) {
                    const int row0 = m0 + 32 * c;
                    if (row0 < p.n) {
                        const uint32_t src = ebuf + (c % 2) * kEpiBufferBytes;
                        if (colw < p.n) tma_store_2d(&map_c, src, colw, row0);
                        if (colw + 32 < p.n) tma_store_2d(&map_c, src + 4096, colw + 32, row0);
                    }
                    bulk_commit();
                }
            }
        }
        // TMA stores still in flight read this block's shared memory: complete them before it leaves.
        if constexpr (kTmaStore)
            if (threadIdx.x % 128 == 0) bulk_wait0();
        if constexpr (kCluster > 1) cluster_sync_all();  // no block leaves while its peer may still arrive on it
        return;
    }
#endif  // TUT_SM90A
}

// ------------------------------------------------------------------ pre-pass (N % 4 != 0 only)
// dst[i * ld + j] = src[i * n + j]: rows padded to ld (a tensor map's row pitch must be a multiple of
// 16 bytes). One block row per matrix row.
__global__ void pad_copy(const float* __restrict__ src, float* __restrict__ dst, int n, int ld) {
    const int row = blockIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < n) dst[static_cast<size_t>(row) * ld + col] = src[static_cast<size_t>(row) * n + col];
}

}  // namespace

// ------------------------------------------------------------------ PTX wrappers: definitions
// Raised by a wait that gave up (lesson 18): after 2^31 cycles (about a second) a wait raises it and
// returns, and from then on every wait returns once it has lasted 2^20 cycles, so a broken pipeline ends
// with a wrong C instead of a hang. Not __trap(): a trap reachable from both the producer's and the
// consumers' code makes ptxas fit the consumers into 168 registers instead of setmaxnreg's 232.
__device__ unsigned int g_wait_gave_up;
#ifdef TUT_SM90A
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrivals) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// Default semantics (release at CTA scope), as CUTLASS's ClusterBarrier::arrive(cta_id): this thread's
// earlier reads of the stage, and the wgmmas it waited for, come before it. Not .release.cluster, which
// ptxas compiles to MEMBAR.ALL.CTA + MEMBAR.ALL.GPU before every arrive: two GPU-scope memory barriers per
// consumer warp and k-tile, which made the cluster kernel three times slower.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
    asm volatile(
        "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar),
        "r"(rank)
        : "memory");
}
// Default semantics (acquire at CTA scope) for the waits too: .acquire.cluster made ptxas add CCTL.IVALL
// (invalidate all of L1) after every successful wait.
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    return done != 0;
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    if (mbar_try_wait(bar, parity)) return;
    const long long start = clock64();
    while (!mbar_try_wait(bar, parity)) {
        const long long waited = clock64() - start;
        if (waited > (1ll << 20)) {
            if (*static_cast<volatile unsigned int*>(&g_wait_gave_up)) return;
            if (waited > (1ll << 31)) {
                atomicExch(&g_wait_gave_up, 1u);
                return;
            }
        }
    }
}
__device__ __forceinline__ int ld_acquire_gpu(const int* p) {
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release_gpu(int* p, int v) {
    asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// Until *p == v, giving up as mbar_wait does (a partial tile that never comes is a bug too).
__device__ __forceinline__ void wait_flag(const int* p, int v) {
    if (ld_acquire_gpu(p) == v) return;
    const long long start = clock64();
    while (ld_acquire_gpu(p) != v) {
        const long long waited = clock64() - start;
        if (waited > (1ll << 20)) {
            if (*static_cast<volatile unsigned int*>(&g_wait_gave_up)) return;
            if (waited > (1ll << 31)) {
                atomicExch(&g_wait_gave_up, 2u);
                return;
            }
        }
    }
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0,
                                                      int c1, uint16_t mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
        "[%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
        : "memory");
}
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, uint32_t src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(src), "r"(c0), "r"(c1)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read0() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait0() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async_smem() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void sts64(uint32_t addr, float a, float b) {
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(a), "f"(b) : "memory");
}
__device__ __forceinline__ uint2 lds64(uint32_t addr) {
    uint2 v;
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(addr) : "memory");
    return v;
}
__device__ __forceinline__ void named_bar_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ uint32_t cluster_ctarank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void cluster_sync_all() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ void reg_fence(float& r) { asm volatile("" : "+f"(r)::"memory"); }
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}
// Lesson 17's descriptor of a K-major tile in the 128-byte swizzle (start address, stride byte offset
// 1024, swizzle mode 1, in 16-byte units).
__device__ __forceinline__ uint64_t make_desc_sw128(uint32_t smem_addr) {
    uint64_t desc = 0;
    desc |= static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4);
    desc |= static_cast<uint64_t>(1) << 16;
    desc |= static_cast<uint64_t>(1024 >> 4) << 32;
    desc |= static_cast<uint64_t>(1) << 62;
    return desc;
}
// Lesson 18's wgmma: d (64 x 256) += A (64 x 8, registers) * B (8 x 256, shared memory by descriptor).
__device__ __forceinline__ void wgmma_rs_m64n256k8_tf32(float (&d)[128], const uint32_t (&a)[4], uint64_t desc_b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
        "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "
        "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "
        "%59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, "
        "%78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, "
        "%97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, "
        "%114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "{%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
          "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
          "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
          "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
          "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
          "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),
          "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),
          "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),
          "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]),
          "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]),
          "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]),
          "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "n"(1));
}
#endif  // TUT_SM90A

namespace {

// ------------------------------------------------------------------ host side
// The driver's cuTensorMapEncodeTiled, found through the runtime (so no -lcuda).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult found{};
        TUT_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !fn)
            throw tut::CudaError("cuTensorMapEncodeTiled: not found in the CUDA driver");
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
    }();
    return encode;
}

// A tensor map of an n x n row-major matrix with row pitch ld floats, in boxes of 32 columns (128 bytes)
// x box_rows rows, 128-byte swizzle, zero fill outside the matrix. TFLOAT32 (the operands): TMA rounds each
// float to TF32 on its way to shared memory; FLOAT32 (C): the values as they are.
CUtensorMap make_tensor_map(const float* matrix, int n, int ld, int box_rows, CUtensorMapDataType type) {
    CUtensorMap map;
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(n), static_cast<cuuint64_t>(n)};  // inner first
    const cuuint64_t row_pitch[1] = {static_cast<cuuint64_t>(ld) * sizeof(float)};
    const cuuint32_t box[2] = {32, static_cast<cuuint32_t>(box_rows)};
    const cuuint32_t element_strides[2] = {1, 1};
    const CUresult r = tensor_map_encoder()(&map, type, 2, const_cast<float*>(matrix), dims, row_pitch, box,
                                            element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) throw tut::CudaError("cuTensorMapEncodeTiled failed with CUresult " + std::to_string(r));
    return map;
}

// Which tiles the last wave's split cuts, and into how many k-pieces. P clusters, `tiles` cluster tiles of
// K k-tiles. The last T = tiles % P (+ P) tiles are cut into s pieces: every cluster first does
// (tiles - T) / P whole tiles, then ceil(s T / P) rounds of pieces. Cost in k-tile times: a whole tile
// K + e, a piece K / s + e (e: its epilogue, about 3 k-tiles with TMA stores, 7 without), and 3 per
// partial tile an owner adds; no cut: ceil(tiles / P) (K + e). A cut is kept only where it saves
// half a percent. N = 8192 on 132 SMs: 1024 tiles for 66 clusters, the last wave half full: thirds, two
// rounds of them. N = 4096: 256 tiles, 0.88 of a last wave: no cut saves anything.
void choose_split(int tiles, int P, int K, bool tma_stores, int& whole_tiles, int& split) {
    whole_tiles = tiles;
    split = 1;
    if (tiles <= P || tiles % P == 0) return;
    const double e = tma_stores ? 3.0 : 7.0, r = 3.0;
    double best = std::ceil(double(tiles) / P) * (K + e);
    for (int j = 0; j <= 1; ++j)
        for (int s = 2; s <= 4; ++s) {
            const int T = tiles % P + j * P;
            if (T > tiles || K < 4 * s) continue;
            const double cost = double((tiles - T) / P) * (K + e) + std::ceil(double(s) * T / P) * (double(K) / s + e) +
                                (s - 1) * r;
            if (cost < 0.995 * best) {
                best = cost;
                whole_tiles = tiles - T;
                split = s;
            }
        }
}

// What a launcher keeps between calls: the padded copies (N % 4 != 0), the tensor maps (encoded again only
// when n or an address changes), the split's workspace and flags, and the launch count.
struct Scratch {
    int n = 0;
    const float* A = nullptr;
    const float* B = nullptr;
    float* C = nullptr;
    tut::DeviceBuffer<float> a_padded, b_padded;
    CUtensorMap map_a{}, map_b{}, map_c{};
    bool tma_store = false;
    tut::DeviceBuffer<float> partials;
    tut::DeviceBuffer<int> flags;
    int epoch = 0;
};

// How many clusters of `cluster` blocks of this kernel fit on the GPU at once: the persistent grid.
template <class Kernel>
int resident_clusters(Kernel kernel, int cluster, int smem) {
    if (cluster == 1) {
        int per_sm = 0;
        TUT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem));
        return per_sm * tut::sm_count();
    }
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(cluster * tut::sm_count());
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = smem;
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = cluster;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    int clusters = 0;
    TUT_CUDA(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    return clusters;
}

template <int kCluster, bool kSplit, bool kTmaStore>
void run_persistent(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    static const int cc = tut::compute_capability();
    if (cc != 90)
        throw tut::Unsupported("the kernel is sm_90a code: it needs a compute capability 9.0 GPU (H100, H200)");
    auto kernel = sgemm_persistent<kCluster, kSplit, kTmaStore>;
    constexpr int kSmem = smem_bytes(kTmaStore);
    tut::allow_dynamic_shared_memory(kernel, kSmem);
    static const int resident = resident_clusters(kernel, kCluster, kSmem);
    if (resident < 1) throw tut::Unsupported("no cluster of this kernel fits on this GPU");

    static Scratch scratch;  // one per variant, freed at exit with the program
    const bool pad = n % 4 != 0 || reinterpret_cast<uintptr_t>(A) % 16 != 0 || reinterpret_cast<uintptr_t>(B) % 16 != 0;
    const int ld = pad ? (n + 3) / 4 * 4 : n;
    if (scratch.n != n || scratch.A != A || scratch.B != B || scratch.C != C) {
        scratch.n = n;
        scratch.A = A;
        scratch.B = B;
        scratch.C = C;
        const float* a_source = A;
        const float* b_source = B;
        if (pad) {
            const size_t need = static_cast<size_t>(n) * ld;
            if (scratch.a_padded.size() < need) {
                scratch.a_padded = tut::DeviceBuffer<float>(need);
                scratch.b_padded = tut::DeviceBuffer<float>(need);
            }
            a_source = scratch.a_padded.get();
            b_source = scratch.b_padded.get();
        }
        // A: boxes of 32 k x the rows one block of the cluster loads; B: 32 columns x 32 k.
        scratch.map_a = make_tensor_map(a_source, n, ld, kBM / kCluster, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32);
        scratch.map_b = make_tensor_map(b_source, n, ld, kBK, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32);
        // C: boxes of 32 columns x 32 rows; a tensor map needs rows of a multiple of 16 bytes and a
        // 16-byte aligned C, else the epilogue stores directly.
        scratch.tma_store = kTmaStore && n % 4 == 0 && reinterpret_cast<uintptr_t>(C) % 16 == 0;
        if (scratch.tma_store) scratch.map_c = make_tensor_map(C, n, n, 32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
    }
    if (pad) {
        pad_copy<<<dim3((n + 255) / 256, n), 256>>>(A, scratch.a_padded.get(), n, ld);
        TUT_LAUNCH("pad_copy");
        pad_copy<<<dim3((n + 255) / 256, n), 256>>>(B, scratch.b_padded.get(), n, ld);
        TUT_LAUNCH("pad_copy");
    }

    Params p{};
    p.C = C;
    p.n = n;
    p.tiles_m = (n + kBM - 1) / kBM;
    p.tiles_n = (n + kBN - 1) / kBN;
    const int tiles = p.tiles_m * ((p.tiles_n + kCluster - 1) / kCluster);  // a cluster's column tiles count as one
    const int clusters = std::min(tiles, resident);
    const int k_tiles = (n + kBK - 1) / kBK;
    p.whole_tiles = tiles;
    p.split = 1;
    if (kSplit) choose_split(tiles, clusters, k_tiles, scratch.tma_store, p.whole_tiles, p.split);
    p.split_tiles = tiles - p.whole_tiles;
    const size_t slots = static_cast<size_t>(p.split_tiles) * (p.split - 1) * kCluster;
    if (slots > scratch.flags.size()) {
        scratch.partials = tut::DeviceBuffer<float>(slots * kBM * kBN);
        scratch.flags = tut::DeviceBuffer<int>(slots);
        TUT_CUDA(cudaMemset(scratch.flags.get(), 0, scratch.flags.bytes()));
    }
    p.partials = scratch.partials.get();
    p.flags = scratch.flags.get();
    p.epoch = ++scratch.epoch;
    p.tma_store = scratch.tma_store ? 1 : 0;

    cudaLaunchConfig_t config{};
    config.gridDim = dim3(clusters * kCluster);
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = kSmem;
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = kCluster;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = kCluster > 1 ? 1 : 0;
    static const CUtensorMap no_map{};  // never read without TMA stores
    TUT_CUDA(cudaLaunchKernelEx(&config, kernel, scratch.map_a, scratch.map_b,
                                scratch.tma_store ? scratch.map_c : no_map, p));
}

template <int kCluster, bool kSplit, bool kTmaStore>
tut::Kernel kernel_of_variant() {
    return tut::kernel_of(sgemm_persistent<kCluster, kSplit, kTmaStore>, kThreads, smem_bytes(kTmaStore));
}

constexpr const char* kSweepVariant = "persistent, cluster of 2, TMA stores, split last wave";

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    const tut::Needs hopper{90, "wgmma, TMA and clusters (sm_90a code)"};
    return {
        {"persistent", run_persistent<1, false, false>, kernel_of_variant<1, false, false>(), hopper},
        {"persistent, cluster of 2", run_persistent<2, false, false>, kernel_of_variant<2, false, false>(), hopper},
        {"persistent, cluster of 2, TMA stores", run_persistent<2, false, true>, kernel_of_variant<2, false, true>(),
         hopper},
        {kSweepVariant, run_persistent<2, true, true>, kernel_of_variant<2, true, true>(), hopper},
    };
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "19_persistent_cluster",
                                 "TF32 on Hopper: persistent blocks, clusters of 2, TMA stores"};
    const std::vector<tut::sgemm::Variant> variants = lesson::variants();
    const tut::sgemm::Arithmetic tf32 = tut::sgemm::Arithmetic::tf32;  // the variants' inputs and the yardstick's
    tut::sgemm::Options options(lesson, 8192);  // --n: 8192, where the last wave is half full
    bool sweep = false;  // the tour passes it
    options.cli.add_flag("sweep", &sweep, std::string("after the table, time '") + kSweepVariant +
                                              "' against cuBLAS at N = 1024 .. 8192 (multiples of the tile and not)");
    options.parse(argc, argv, tut::names_of(variants));
    // sm_90a code runs on compute capability 9.0 alone: elsewhere the lesson says so and exits with the
    // skip code, before any work.
    if (const int cc = tut::compute_capability(); cc != 90) {
        std::fprintf(stderr, "%s: skipped: needs a compute capability 9.0 GPU (wgmma, TMA and clusters, sm_90a "
                     "code: H100, H200); this GPU is %d.%d\n", lesson.lesson, cc / 10, cc % 10);
        return tut::kSkipExitCode;
    }
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        tut::sgemm::Problem problem(bench, options.n, tf32);  // A, B, the reference; the yardstick: cuBLAS TF32
        tut::Table table = problem.table();
        for (const tut::sgemm::Variant& v : variants) {
            if (!bench.runs(v)) continue;
            const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(v.run, tf32); });
            const tut::Timing timing = bench.time(v.name, [&] { problem.run(v.run); });
            table.add_row(bench.record(problem.result(v, timing, verdict, tf32)));
        }
        table.add_row(problem.library_row());
        table.print();
        if (sweep) tut::sgemm::size_sweep(bench, variants, kSweepVariant, tf32);
        return bench.exit_code();
    });
}
