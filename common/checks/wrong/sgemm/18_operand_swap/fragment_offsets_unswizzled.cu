// wrong: sgemm/18_operand_swap: the fragment offsets use the chunk's index as its position: the 128-byte swizzle (chunk ^ row) is forgotten
// caught by: sgemm/18_operand_swap: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile
// kind: other
// sgemm/18_operand_swap: no transpose pass: compute C^T = B^T A^T, with B's tile as wgmma's register operand (TF32).
// Starts from: lesson 17 (wgmma with both operands from shared memory, TMA, an mbarrier pipeline,
// and a pre-pass that transposes B, because wgmma reads TF32 from shared memory only K-major).
// Adds, on compute capability 9.0 (H100, H200):
//   - the operands swapped: the kernel computes C^T = B^T A^T. wgmma's shared-memory operand is
//     now A^T, whose K-major layout is row-major A as it is; its other operand, B^T, may come
//     from registers, and registers can be filled from B's row-major tile in any order: the
//     consumer warps load them with 8-byte shared loads. No pass over B, none over A.
//   - a column map: which C column each row of wgmma's register operand stands for, chosen so
//     that one 8-byte load fills two of a thread's registers and a half-warp's loads hit 32
//     different banks; the epilogue writes the transposed accumulators by the same map.
//   - a producer warpgroup that gives most of its registers to the consumers (setmaxnreg):
//     128 accumulators and two k-tiles of fragments a thread need more than an even share.
//   - TMA rounds both operands to TF32 on their way to shared memory (tensor maps of type
//     TFLOAT32). Only for N % 4 != 0 are A and B first copied into rows padded to 16 bytes.
//
// Build alone (from the repository root; the kernel needs the sm_90a target):
//   nvcc -O3 -std=c++17 -arch=sm_90a -Icommon/include lessons/sgemm/18_operand_swap/operand_swap.cu -lcublas -o operand_swap
// Run:  ./operand_swap --n 4096 --sweep   (--help for options; on a GPU other than 9.0 it exits 77, skipped)
//
// Kernels and variants:
//   sgemm_operand_swap   "operand swap 256x128x32 4 stages"   1 producer warpgroup + 2 consumer warpgroups,
//                                                             each 256 rows x 64 columns of C (384 threads, 1 block/SM)
//   pad_copy             only for N % 4 != 0 (or A, B not 16-byte aligned): A and B with rows padded
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

#include <cuda.h>          // CUtensorMap and its enums (types only: no -lcuda)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <cstdint>

// ------------------------------------------------------------------ PTX wrappers
// One or a few PTX instructions each, defined after the kernels (lesson 17 introduced most of them).
// Shared-memory addresses are the 32-bit ones PTX takes. The kernel's body is compiled only where the
// sm_90a features exist (__CUDA_ARCH_FEAT_SM90_ALL); any other device pass gets a stub.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TUT_SM90A 1
#endif
__device__ __forceinline__ uint32_t smem_u32(const void* p);
// mbarriers: a phase completes when all expected arrivals came and all announced bytes landed,
// and then the barrier's phase parity flips (0, 1, 0, ...)
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t arrivals);
__device__ __forceinline__ void mbar_arrive(uint32_t bar);
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes);  // arrive, + bytes to land
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity);  // until that phase has completed
// TMA: the box at (inner coordinate c0, row c1) of `map`'s matrix to dst; its bytes land on bar
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1);
__device__ __forceinline__ uint2 lds64(uint32_t addr);  // 8 bytes from shared memory
// wgmma: descriptor of a K-major, 128-byte-swizzled tile; d += A B (64 x 8 x 256) with A from registers;
// fence before the first wgmma that reads registers written by other instructions, commit a group,
// wait until at most N groups are running
__device__ __forceinline__ uint64_t make_desc_sw128(uint32_t smem_addr);
__device__ __forceinline__ void wgmma_rs_m64n256k8_tf32(float (&d)[128], const uint32_t (&a)[4], uint64_t desc_b);
__device__ __forceinline__ void wgmma_fence();
__device__ __forceinline__ void wgmma_commit();
template <int N>
__device__ __forceinline__ void wgmma_wait();
__device__ __forceinline__ void reg_fence(float& r);  // keeps uses of r after the last wgmma_wait
// Registers of this warpgroup's threads: give some back to the SM's pool, or take from it.
template <int N>
__device__ __forceinline__ void setmaxnreg_dec();
template <int N>
__device__ __forceinline__ void setmaxnreg_inc();

namespace {

constexpr int kBM = 256;  // rows of C per block: wgmma's N (the swapped product's columns)
constexpr int kBN = 128;  // columns of C per block: two consumer warpgroups of 64 (wgmma's M)
constexpr int kBK = 32;   // k per stage: 32 floats = 128 bytes, one row of the 128-byte swizzle
constexpr int kStages = 4;
constexpr int kKK = kBK / 8;                      // k8 blocks of a stage: one wgmma each
constexpr int kABytes = kBM * kBK * 4;            // 32 KiB: A's box, 256 rows of 128 bytes
constexpr int kBBoxBytes = kBK * 32 * 4;          // 4 KiB: one box of B, 32 rows of k x 32 columns
constexpr int kBBoxes = kBN / 32;                 // B's tile: 4 boxes side by side
constexpr int kStageBytes = kABytes + kBBoxes * kBBoxBytes;  // 48 KiB
constexpr int kConsumerThreads = 256;             // two warpgroups
constexpr int kThreads = kConsumerThreads + 128;  // + the producer warpgroup (one thread issues the copies)
// At launch every thread gets 65536 / 384 -> 168 registers (__launch_bounds__). The producer warpgroup
// keeps 40 and the consumers take the rest: 128 accumulators, 2 x 16 fragment registers, addresses.
constexpr int kLaunchRegs = 168;
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;
constexpr int kSmemBytes = kStages * kStageBytes + 1024 + 2 * kStages * 8;  // stages, alignment, barriers
// What the kernel's boxes, descriptors, fragments and epilogue assume:
static_assert(kBK * 4 == 128, "a row of every box is one 128-byte row of the swizzle, as the descriptor says");
static_assert(kKK == 4, "a stage is 4 k8 blocks: 4 wgmmas, one commit group");
static_assert(kBM == 256, "wgmma's N is 256 rows of C: 128 accumulators a thread");
static_assert(kBN == 2 * 64 && kConsumerThreads == 2 * 128, "two consumer warpgroups of 64 columns of C each");
static_assert(kBBoxes == 4, "a warpgroup's 64 columns are two B boxes of 32, one per pair of warps");
static_assert(kABytes % 1024 == 0 && kStageBytes % 1024 == 0, "every box starts on the 1 KiB the swizzle needs");
static_assert(kProducerRegs * 128 + kConsumerRegs * kConsumerThreads == kLaunchRegs * kThreads,
              "setmaxnreg moves registers between warpgroups; the block's total stays what it launched with");
static_assert(kLaunchRegs * kThreads <= 65536, "one block per SM: the register file");
static_assert(kProducerRegs % 8 == 0 && kConsumerRegs % 8 == 0 && kConsumerRegs <= 256,
              "setmaxnreg counts multiples of 8, at most 256");
static_assert(kSmemBytes <= 227 * 1024, "the shared memory one block may have");

#ifdef TUT_SM90A  // device code of the kernel's body, which exists only in the sm_90a pass
// ------------------------------------------------------------------ B^T's fragments
// Warpgroup wg computes D = C^T for C columns n0 + 64 wg .. + 63 (wgmma's M = 64) and all 256 rows of
// the tile (wgmma's N). Its register operand is B^T: row m of it, k = 0..7 of a k8 block, is B(k, column)
// for the C column that row m stands for. The rows may stand for the 64 columns in any order, as long as
// the epilogue stores by the same map. The map chosen: the two rows a thread holds for each k, m = 16 w + g
// and m + 8 (warp w, lane 4 g + t; see below), are two neighbouring columns, so one 8-byte load reads
// both. Warps 2p and 2p + 1 of a warpgroup share B box 2 wg + p (32 columns: 8 chunks of 16 bytes):
//   chunk(w, g) = 2 (w % 2) + g / 4 + 4 ((g % 4) / 2),
//   column of row 16 w + g + 8 h = n0 + 64 wg + 32 (w / 2) + 4 chunk(w, g) + 2 (g % 2) + h   (h = 0, 1).
// A half-warp (g = 0..3 or 4..7, t = 0..3) then reads chunks {c, c + 4} XOR t: 8 different 16-byte chunks,
// two lanes each: all 32 banks, no conflict.
__device__ __forceinline__ int fragment_chunk(int warp, int g) { return 2 * (warp % 2) + g / 4 + 4 * ((g % 4) / 2); }

// Where this thread's two 8-byte loads of k8 block 0 lie in a stage's B tile (byte offsets).
struct FragmentOffsets {
    uint32_t lo;  // row k = t: a[0], a[1]
    uint32_t hi;  // row k = t + 4: a[2], a[3]
};

// wgmma's register operand (.tf32, m64nNk8; the layout of mma.sync.m16n8k8's A, one 16-row slab per
// warp): warp w of the warpgroup, lane 4 g + t holds
//   a[0] = A(16 w + g, k = t)    a[1] = A(16 w + g + 8, k = t)
//   a[2] = A(16 w + g, k = t + 4)  a[3] = A(16 w + g + 8, k = t + 4)
// B's tile in a stage, as TMA wrote it: 4 boxes of 32 rows (k) x 32 columns, each row 128 bytes, with
// the 128-byte swizzle: 16-byte chunk c of row r lies at chunk position c XOR (r mod 8).
__device__ __forceinline__ FragmentOffsets fragment_offsets(int wg, int warp, int lane) {
    const int g = lane / 4, t = lane % 4;
    const int chunk = fragment_chunk(warp, g);  // the column map: this thread's chunk of its B box
    const uint32_t box = (2 * wg + warp / 2) * kBBoxBytes;
    const uint32_t half = (g % 2) * 8;  // columns 2 (g % 2) and + 1: the first or second 8 bytes of the chunk
    return {box + t * 128 + (chunk << 4) + half, box + (t + 4) * 128 + (chunk << 4) + half};
}

// The fragments of one k-tile: f[kk] for its k8 blocks kk = 0..3, from the stage's B tile at b_tile.
// Block kk is 8 rows (1024 bytes) further down every box, with the same swizzle (rows t and t + 4
// mod 8 again).
__device__ __forceinline__ void load_fragments(uint32_t (&f)[kKK][4], uint32_t b_tile, FragmentOffsets off) {
#pragma unroll
    for (int kk = 0; kk < kKK; ++kk) {
        const uint2 lo = lds64(b_tile + kk * 1024 + off.lo);
        const uint2 hi = lds64(b_tile + kk * 1024 + off.hi);
        f[kk][0] = lo.x;  // (m = g,     k = t)
        f[kk][1] = lo.y;  // (m = g + 8, k = t): the next column
        f[kk][2] = hi.x;  // (m = g,     k = t + 4)
        f[kk][3] = hi.y;  // (m = g + 8, k = t + 4)
    }
}

// ------------------------------------------------------------------ the epilogue
// wgmma's accumulator layout: warp w, lane 4 g + t holds d[4 i + 2 h + v] = D(16 w + g + 8 h, 8 i + 2 t + v),
// i = 0..31. D is C^T: its row 16 w + g + 8 h is a C column (the map above), its column j is C row m0 + j.
// So a thread holds, for each of its 64 rows of C, two neighbouring columns: an 8-byte store where N is
// even (and C 8-byte aligned). Rows and columns beyond N are not stored.
__device__ __forceinline__ void store_tile(const float (&d)[128], float* __restrict__ C, int n, int m0, int n0,
                                           int wg, int warp, int lane) {
    const int g = lane / 4, t = lane % 4;
    const bool pairs = n % 2 == 0 && reinterpret_cast<uintptr_t>(C) % 8 == 0;
    const int col = n0 + 64 * wg + 32 * (warp / 2) + 4 * fragment_chunk(warp, g) + 2 * (g % 2);  // (h = 1: + 1)
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
// One block computes the 256 x 128 tile of C at (m0, n0). Shared memory: kStages stages of
// [A box: 256 rows x 32 k][B: 4 boxes of 32 k x 32 columns], then the full and empty barriers.
// Threads 0-255 are two consumer warpgroups; threads 256-383 the producer warpgroup, whose thread 256
// issues every TMA copy (the others only give their registers back). Edges need no code in the loop:
// TMA writes zeros for the parts of a box outside the matrix, and the epilogue's stores are guarded.
__global__ void __launch_bounds__(kThreads, 1)
    sgemm_operand_swap(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                       float* __restrict__ C, int n, int tiles_m, int tiles_n) {
#ifndef TUT_SM90A
    __trap();  // not the sm_90a pass: the launcher never gets here (it refuses other GPUs)
#else
    constexpr int kConsumerWarps = kConsumerThreads / 32;  // arrivals that release a stage
    constexpr int kGroupRows = 8;                           // block swizzle: bands of 8 block rows (2048 rows of C)
    extern __shared__ unsigned char smem_raw[];
    const uint32_t stages = (smem_u32(smem_raw) + 1023u) & ~1023u;  // the swizzle needs 1 KiB alignment
    const uint32_t bars = stages + kStages * kStageBytes;
    auto full_bar = [&](int s) { return bars + 8 * s; };               // TMA bytes of stage s landed
    auto empty_bar = [&](int s) { return bars + 8 * (kStages + s); };  // consumers done with stage s

    // Block swizzle (lesson 14): bands of kGroupRows block rows, handed out column by column.
    const int band = blockIdx.x / (kGroupRows * tiles_n);
    const int first_row = band * kGroupRows;
    const int rows = min(kGroupRows, tiles_m - first_row);
    const int in_band = blockIdx.x - band * kGroupRows * tiles_n;
    const int m0 = (first_row + in_band % rows) * kBM;
    const int n0 = (in_band / rows) * kBN;
    const int k_tiles = (n + kBK - 1) / kBK;

    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbar_init(full_bar(s), 1);                // the producer's arrive.expect_tx
            mbar_init(empty_bar(s), kConsumerWarps);  // lane 0 of every consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // visible to TMA
        asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&map_a)) : "memory");
        asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&map_b)) : "memory");
    }
    __syncthreads();  // the only block-wide barrier: from here on, the mbarriers order everything

    // Each branch ends on its own: code after setmaxnreg that both shared would get the smaller budget.
    if (threadIdx.x >= kConsumerThreads) {
        // ------------------------------------------------------------------ producer
        setmaxnreg_dec<kProducerRegs>();
        if (threadIdx.x == kConsumerThreads) {
            // k-tile kt goes to stage s = kt % kStages, in round kt / kStages of that stage. Round 0
            // finds the stage empty; round r waits for phase r - 1 of its empty barrier.
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int s = kt % kStages;
                if (kt >= kStages) mbar_wait(empty_bar(s), ((kt / kStages) + 1) & 1);
                const uint32_t a_tile = stages + s * kStageBytes, b_tile = a_tile + kABytes;
                mbar_arrive_expect_tx(full_bar(s), kStageBytes);  // zero-filled bytes count too
                tma_load_2d(a_tile, &map_a, full_bar(s), kt * kBK, m0);  // A: 32 k x 256 rows of C
#pragma unroll
                for (int b = 0; b < kBBoxes; ++b)  // B: 32 k x 32 columns, four times
                    tma_load_2d(b_tile + b * kBBoxBytes, &map_b, full_bar(s), n0 + 32 * b, kt * kBK);
            }
        }
        return;
    } else {
        // ------------------------------------------------------------------ consumers
        setmaxnreg_inc<kConsumerRegs>();
        const int wg = threadIdx.x / 128;  // C columns n0 + 64 wg ..
        const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
        const FragmentOffsets off = fragment_offsets(wg, warp, lane);
        auto a_tile = [&](int s) { return stages + s * kStageBytes; };
        auto b_tile = [&](int s) { return stages + s * kStageBytes + kABytes; };
        auto release = [&](int s) {
            if (lane == 0) mbar_arrive(empty_bar(s));
        };

        float d[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) d[i] = 0.0f;
#pragma unroll
        for (int i = 0; i < 128; ++i) reg_fence(d[i]);

        // Two k-tiles of fragments: `cur` feeds this k-tile's wgmmas while `next` is loaded for the next
        // one, once the group that last read it has completed.
        uint32_t frag0[kKK][4], frag1[kKK][4];
        // K-tile kt: fence (orders the fragment loads before the wgmmas that read them), 4 wgmmas, one
        // commit group, then wait until at most this group runs: k-tile kt - 1's group is done, so its
        // stage goes back to the producer and its fragment registers may be refilled for kt + 1. One
        // group stays in flight while the warps load, so the tensor cores always have the next wgmmas.
        auto k_tile = [&](uint32_t(&cur)[kKK][4], uint32_t(&next)[kKK][4], int kt) {
            const uint64_t desc = make_desc_sw128(a_tile(kt % kStages));  // A^T: wgmma's B operand
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < kKK; ++kk)  // 8 floats of k = 32 bytes = 2 units of the address field
                wgmma_rs_m64n256k8_tf32(d, cur[kk], desc + 2 * kk);
            wgmma_commit();
            wgmma_wait<1>();
            if (kt > 0) release((kt - 1) % kStages);
            if (kt + 1 < k_tiles) {
                const int s = (kt + 1) % kStages;
                mbar_wait(full_bar(s), ((kt + 1) / kStages) & 1);
                load_fragments(next, b_tile(s), off);
            }
        };

        mbar_wait(full_bar(0), 0);
        load_fragments(frag0, b_tile(0), off);
        int kt = 0;
#pragma unroll 1
        for (; kt + 2 <= k_tiles; kt += 2) {  // two k-tiles a trip: every fragment index is a constant
            k_tile(frag0, frag1, kt);
            k_tile(frag1, frag0, kt + 1);
        }
        if (kt < k_tiles) k_tile(frag0, frag1, kt);  // an odd number of k-tiles: the last one
        wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < 128; ++i) reg_fence(d[i]);
        release((k_tiles - 1) % kStages);  // the last k-tile's stage (no producer waits for it)

        store_tile(d, C, n, m0, n0, wg, warp, lane);
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
// Raised by a wait that gave up. A wait of seconds is a bug (a lost arrival, a wrong byte count, a
// wrong parity): after 2^31 cycles (about a second) the waiting thread raises this flag and returns,
// and from then on every wait returns once it has lasted 2^20 cycles (under a millisecond; a healthy
// wait is microseconds). The kernel ends, with a wrong C that the checks report, instead of hanging.
// The flag stays raised for the rest of the program. Not __trap(): a trap reachable from both the
// producer's and the consumers' code makes ptxas fit the consumers into the launch's 168 registers
// instead of setmaxnreg's 232 (spills, serialized wgmmas).
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
// Coordinates in elements; the box's size, swizzle and zero fill are the tensor map's.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}
__device__ __forceinline__ uint2 lds64(uint32_t addr) {
    uint2 v;
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(addr) : "memory");
    return v;
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

// Shared-memory matrix descriptor of a K-major tile written by TMA with the 128-byte swizzle (lesson
// 17): rows of 128 bytes (32 floats of k), 8-row atoms of 1024 bytes stacked along N (stride byte
// offset 1024), leading byte offset unused for a swizzled K-major tile, swizzle mode 1 (128 bytes) in
// bits 62-63. Addresses are in 16-byte units. The k8 block kk of a stage is the same descriptor with
// its start address 32 kk bytes further (the hardware applies the swizzle to the addresses it forms).
__device__ __forceinline__ uint64_t make_desc_sw128(uint32_t smem_addr) {
    uint64_t desc = 0;
    desc |= static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4);  // bits  0-13: start address >> 4
    desc |= static_cast<uint64_t>(1) << 16;                     // bits 16-29: leading byte offset >> 4
    desc |= static_cast<uint64_t>(1024 >> 4) << 32;             // bits 32-45: stride byte offset >> 4
    desc |= static_cast<uint64_t>(1) << 62;                     // bits 62-63: 128-byte swizzle
    return desc;
}

// d (64 x 256, FP32, 128 registers a thread) += A (64 x 8, TF32, four registers a[0..3] a thread) *
// B (8 x 256, TF32, the K-major shared-memory tile named by desc_b). Always accumulates (scale-d = 1);
// imm-scale-a, -b = 1 (not negated). The tensor cores read the top 19 bits of each value (sign,
// exponent, 10 mantissa bits); TMA rounded them to TF32 on the way in.
__device__ __forceinline__ void wgmma_rs_m64n256k8_tf32(float (&d)[128], const uint32_t (&a)[4], uint64_t desc_b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"  // scale-d: d = A B + (p ? d : 0)
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

// A tensor map of an n x n row-major matrix with row pitch ld floats, copied in boxes of 32 columns
// (128 bytes) x box_rows rows, with the 128-byte swizzle and zero fill outside the matrix. Element type
// TFLOAT32: TMA rounds each float to TF32 on its way to shared memory.
CUtensorMap make_tensor_map(const float* matrix, int n, int ld, int box_rows) {
    CUtensorMap map;
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(n), static_cast<cuuint64_t>(n)};  // inner first
    const cuuint64_t row_pitch[1] = {static_cast<cuuint64_t>(ld) * sizeof(float)};
    const cuuint32_t box[2] = {32, static_cast<cuuint32_t>(box_rows)};
    const cuuint32_t element_strides[2] = {1, 1};
    const CUresult r = tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, 2, const_cast<float*>(matrix),
                                            dims, row_pitch, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) throw tut::CudaError("cuTensorMapEncodeTiled failed with CUresult " + std::to_string(r));
    return map;
}

// What the launcher keeps between calls: the padded copies (N % 4 != 0) and the tensor maps. A map holds
// an address, not data, so it is encoded again only when n or an address changes.
struct Scratch {
    int n = 0;
    const float* A = nullptr;
    const float* B = nullptr;
    tut::DeviceBuffer<float> a_padded, b_padded;  // rows of pitch ld, when A and B cannot be tensor maps as they are
    CUtensorMap map_a{}, map_b{};
};

void run_operand_swap(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    static const int cc = tut::compute_capability();
    if (cc != 90)
        throw tut::Unsupported("the kernel is sm_90a code: it needs a compute capability 9.0 GPU (H100, H200)");
    tut::allow_dynamic_shared_memory(sgemm_operand_swap, kSmemBytes);  // 193 KiB: far above the 48 KiB without asking

    static Scratch scratch;  // freed at exit with the program
    // A tensor map's row pitch must be a multiple of 16 bytes and its address 16-byte aligned: else
    // both matrices go through copies with rows padded to a multiple of 4 floats.
    const bool pad = n % 4 != 0 || reinterpret_cast<uintptr_t>(A) % 16 != 0 || reinterpret_cast<uintptr_t>(B) % 16 != 0;
    const int ld = pad ? (n + 3) / 4 * 4 : n;
    if (scratch.n != n || scratch.A != A || scratch.B != B) {
        scratch.n = n;
        scratch.A = A;
        scratch.B = B;
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
        scratch.map_a = make_tensor_map(a_source, n, ld, kBM);  // boxes of 32 k x 256 rows of C
        scratch.map_b = make_tensor_map(b_source, n, ld, kBK);  // boxes of 32 columns x 32 k
    }
    if (pad) {
        pad_copy<<<dim3((n + 255) / 256, n), 256>>>(A, scratch.a_padded.get(), n, ld);
        TUT_LAUNCH("pad_copy");
        pad_copy<<<dim3((n + 255) / 256, n), 256>>>(B, scratch.b_padded.get(), n, ld);
        TUT_LAUNCH("pad_copy");
    }
    const int tiles_m = (n + kBM - 1) / kBM, tiles_n = (n + kBN - 1) / kBN;
    sgemm_operand_swap<<<tiles_m * tiles_n, kThreads, kSmemBytes>>>(scratch.map_a, scratch.map_b, C, n, tiles_m,
                                                                   tiles_n);
    TUT_LAUNCH("sgemm_operand_swap");
}

constexpr const char* kVariantName = "operand swap 256x128x32 4 stages";

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    return {{kVariantName, run_operand_swap, tut::kernel_of(sgemm_operand_swap, kThreads, kSmemBytes),
             tut::Needs{90, "wgmma and TMA (sm_90a code)"}}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "18_operand_swap", "TF32 on Hopper without a transpose: C^T = B^T A^T"};
    const std::vector<tut::sgemm::Variant> variants = lesson::variants();
    const tut::sgemm::Arithmetic tf32 = tut::sgemm::Arithmetic::tf32;  // the variants' inputs and the yardstick's
    tut::sgemm::Options options(lesson);  // --n (4096) and the options every lesson takes
    bool sweep = false;  // the tour passes it
    options.cli.add_flag("sweep", &sweep, std::string("after the table, time '") + kVariantName +
                                              "' against cuBLAS at N = 1024 .. 8192 (multiples of the tile and not)");
    options.parse(argc, argv, tut::names_of(variants));
    // sm_90a code runs on compute capability 9.0 alone, not even on later GPUs: elsewhere the
    // lesson says so and exits with the skip code, before any work.
    if (const int cc = tut::compute_capability(); cc != 90) {
        std::fprintf(stderr, "%s: skipped: needs a compute capability 9.0 GPU (wgmma and TMA, sm_90a code: H100, "
                     "H200); this GPU is %d.%d\n", lesson.lesson, cc / 10, cc % 10);
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
        if (sweep) tut::sgemm::size_sweep(bench, variants, kVariantName, tf32);
        return bench.exit_code();
    });
}
