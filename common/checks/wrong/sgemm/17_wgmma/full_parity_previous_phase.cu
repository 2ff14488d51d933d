// wrong: sgemm/17_wgmma: the consumers wait on full_bar with the producer's parity (kt / kStages - 1) & 1: the phase before
// caught by: sgemm/17_wgmma: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile
// kind: race
// A wait for the parity of the preceding phase returns at once: wgmma reads every stage before its
// TMA copies have landed (stale shared memory from N = 1 on).
// sgemm/17_wgmma: Hopper's own GEMM machinery: wgmma, TMA and an mbarrier pipeline (TF32).
// Starts from: lesson 16 (mma.sync m16n8k8: every warp loads its own fragments from shared
// memory, a cp.async pipeline that every thread waits on at a barrier). Adds, on compute
// capability 9.0 (H100, H200):
//   - wgmma.mma_async: a warpgroup (4 warps) multiplies 64 x 8 by 8 x 256 in one instruction,
//     reading both operands from shared memory through 64-bit descriptors; it runs
//     asynchronously (fence, commit a group, wait for groups) while the warps go on.
//   - TMA (cp.async.bulk.tensor): one thread copies a whole 2-D box of A or B to shared memory,
//     laid out in the 128-byte swizzle wgmma reads, zeros outside the matrix, and rounded to
//     TF32 on the way (tensor maps of element type TFLOAT32).
//   - mbarriers instead of __syncthreads: a 4-stage pipeline between one producer warp and two
//     consumer warpgroups. A stage's "full" barrier counts the bytes TMA has landed, its
//     "empty" barrier the consumer warps that are done with it.
//   - a pre-pass: wgmma reads TF32 operands from shared memory only K-major (k contiguous), and
//     row-major B is not, so B is transposed (and rounded to TF32) first. Every timing counts it.
//
// Build alone (from the repository root; the kernel needs the sm_90a target, the "a" for
// architecture-specific instructions such as wgmma):
//   nvcc -O3 -std=c++17 -arch=sm_90a -Icommon/include lessons/sgemm/17_wgmma/wgmma.cu -lcublas -o wgmma
// Run:  ./wgmma --n 4096 --sweep   (--help for options; on a GPU other than 9.0 it exits 77, skipped)
//
// Kernels and variants:
//   sgemm_wgmma            "wgmma 128x256x32 4 stages"   1 producer warp + 2 consumer warpgroups,
//                                                        each 64 x 256 of C (288 threads, 1 block/SM)
//   transpose_round_tf32   the pre-pass: Bt = tf32(B^T), part of the variant's time
//   pad_copy               only for N % 4 != 0 (or A not 16-byte aligned): A with rows padded
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

#include <cuda.h>          // CUtensorMap and its enums (types only: no -lcuda)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <cstdint>

// ------------------------------------------------------------------ PTX wrappers
// One or a few PTX instructions each, defined after the kernels. Shared-memory addresses are the
// 32-bit ones PTX takes. The kernel's body is compiled only where the sm_90a features exist
// (__CUDA_ARCH_FEAT_SM90_ALL); any other device pass (sm_90 without "a", older GPUs) gets a stub.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TUT_SM90A 1
#endif
__device__ __forceinline__ uint32_t smem_u32(const void* p);
// mbarriers (64-bit objects in shared memory; a phase completes when all expected arrivals came
// and all announced bytes landed, and then the barrier's phase parity flips: 0, 1, 0, ...)
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t arrivals);
__device__ __forceinline__ void mbar_arrive(uint32_t bar);
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes);  // arrive, + bytes to land
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity);  // until that phase has completed
// TMA: the box at (inner coordinate c0, row c1) of `map`'s matrix to dst; its bytes land on bar
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1);
// wgmma: descriptor of a K-major, 128-byte-swizzled tile at smem_addr; d += A B (64 x 8 x 256);
// fence before touching d with wgmma, commit a group, wait until at most N groups are running
__device__ __forceinline__ uint64_t make_desc_sw128(uint32_t smem_addr);
__device__ __forceinline__ void wgmma_m64n256k8_tf32(float (&d)[128], uint64_t desc_a, uint64_t desc_b);
__device__ __forceinline__ void wgmma_fence();
__device__ __forceinline__ void wgmma_commit();
template <int N>
__device__ __forceinline__ void wgmma_wait();
__device__ __forceinline__ void reg_fence(float& r);  // keeps uses of r after the last wgmma_wait

namespace {

constexpr int kBM = 128;  // rows of C per block: two consumer warpgroups of 64
constexpr int kBN = 256;  // columns of C per block: one wgmma's N
constexpr int kBK = 32;   // k per stage: 32 floats = 128 bytes, one row of the 128-byte swizzle
constexpr int kStages = 4;
constexpr int kABytes = kBM * kBK * 4;             // 16 KiB: A's box, 128 rows of 128 bytes
constexpr int kBBytes = kBN * kBK * 4;             // 32 KiB: Bt's box, 256 rows of 128 bytes
constexpr int kStageBytes = kABytes + kBBytes;     // 48 KiB
constexpr int kConsumerThreads = 256;              // two warpgroups
constexpr int kThreads = kConsumerThreads + 32;    // + the producer warp
constexpr int kSmemBytes = kStages * kStageBytes + 2 * kStages * 8 + 1024;  // stages, barriers, alignment
// What the kernel's boxes, descriptors and epilogue assume:
static_assert(kBK * 4 == 128, "a row of a box is one 128-byte row of the swizzle, as the descriptors say");
static_assert(kBM == 2 * 64 && kConsumerThreads == 2 * 128, "two consumer warpgroups of 64 rows of C each");
static_assert(kBN == 256 && kBK % 8 == 0, "a stage is kBK / 8 wgmmas of m64n256k8");
static_assert(kStageBytes % 1024 == 0, "every stage starts on the 1 KiB the 128-byte swizzle needs");

// ------------------------------------------------------------------ the kernel
// One block computes the 128 x 256 tile of C at (m0, n0). Shared memory: kStages stages of
// [A box: 128 rows x 32 k][Bt box: 256 rows x 32 k], then the full and empty barriers.
// Threads 0-255 are two consumer warpgroups (warpgroup wg owns rows m0 + 64 wg .. + 63, all 256
// columns: 128 accumulators a thread); warp 8 is the producer, whose thread 256 issues every TMA copy.
// Edges need no code in the loop: TMA writes zeros for the parts of a box outside the N x N matrix
// (rows, columns and k beyond N), and the epilogue's stores are guarded.
__global__ void __launch_bounds__(kThreads, 1)
    sgemm_wgmma(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_bt,
                float* __restrict__ C, int n, int tiles_m, int tiles_n) {
#ifndef TUT_SM90A
    __trap();  // not the sm_90a pass: the launcher never gets here (it refuses other GPUs)
#else
    constexpr int kConsumerWarps = kConsumerThreads / 32;  // arrivals that release a stage
    constexpr int kGroupRows = 16;                          // block swizzle: bands of 16 block rows
    extern __shared__ unsigned char smem_raw[];
    // Stage s: A's box at stages + s * kStageBytes, Bt's box kABytes after it; then the barriers.
    const uint32_t stages = (smem_u32(smem_raw) + 1023u) & ~1023u;  // the swizzle needs 1 KiB alignment
    const uint32_t bars = stages + kStages * kStageBytes;
    auto full_bar = [&](int s) { return bars + 8 * s; };               // TMA bytes of stage s landed
    auto empty_bar = [&](int s) { return bars + 8 * (kStages + s); };  // consumers done with stage s

    // Block swizzle (lesson 14): bands of kGroupRows block rows, handed out column by column.
    const int band = blockIdx.x / (kGroupRows * tiles_n);
    const int first_row = band * kGroupRows;
    const int rows = min(kGroupRows, tiles_m - first_row);
    const int in_band = blockIdx.x % (kGroupRows * tiles_n);
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
        asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&map_bt)) : "memory");
    }
    __syncthreads();  // the only block-wide barrier: from here on, the mbarriers order everything

    if (threadIdx.x >= kConsumerThreads) {  // the producer warp
        if (threadIdx.x == kConsumerThreads) {
            // k-tile kt goes to stage s = kt % kStages, in round kt / kStages of that stage. Round 0
            // finds the stage empty; round r waits for phase r - 1 of its empty barrier.
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int s = kt % kStages;
                if (kt >= kStages) mbar_wait(empty_bar(s), (kt / kStages - 1) & 1);
                const uint32_t a_box = stages + s * kStageBytes, b_box = a_box + kABytes;
                mbar_arrive_expect_tx(full_bar(s), kStageBytes);  // zero-filled bytes count too
                tma_load_2d(a_box, &map_a, full_bar(s), kt * kBK, m0);
                tma_load_2d(b_box, &map_bt, full_bar(s), kt * kBK, n0);
            }
        }
        return;
    }

    const int wg = threadIdx.x / 128;  // consumer warpgroup: rows m0 + 64 wg ..
    const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.0f;

    // Each k-tile: wait for its stage, issue 4 wgmmas (k = 8 each) as one group, then wait until
    // at most this group is running, which means the previous k-tile's group is done: only then
    // is the previous stage free for the producer. One group stays in flight across iterations,
    // so the tensor cores have the next wgmmas while this warpgroup waits and releases.
#pragma unroll 1
    for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % kStages;
        mbar_wait(full_bar(s), (kt / kStages - 1) & 1);
        const uint32_t a_box = stages + s * kStageBytes, b_box = a_box + kABytes;
        const uint64_t desc_a = make_desc_sw128(a_box + wg * 64 * 128);  // this warpgroup's 64 rows
        const uint64_t desc_b = make_desc_sw128(b_box);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBK / 8; ++kk)  // 8 floats of k = 32 bytes = 2 units of the address field
            wgmma_m64n256k8_tf32(d, desc_a + 2 * kk, desc_b + 2 * kk);
        wgmma_commit();
        wgmma_wait<1>();
        if (kt > 0 && lane == 0) mbar_arrive(empty_bar((kt - 1) % kStages));
    }
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < 128; ++i) reg_fence(d[i]);

    // Epilogue. wgmma's accumulator layout: thread (warp w, lane 4g + t) holds d[4i + 2h + v] =
    // C(row m0 + 64 wg + 16 w + g + 8 h, column n0 + 8 i + 2 t + v). Pairs of columns: 8-byte stores.
    const int g = lane / 4, t = lane % 4;
    const bool pairs = n % 2 == 0 && reinterpret_cast<uintptr_t>(C) % 8 == 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int row = m0 + 64 * wg + 16 * warp + g + 8 * h;
        if (row >= n) continue;
        float* c_row = C + static_cast<size_t>(row) * n;
#pragma unroll
        for (int i = 0; i < 32; ++i) {
            const int col = n0 + 8 * i + 2 * t;
            if (pairs && col + 1 < n) {
                *reinterpret_cast<float2*>(c_row + col) = make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
            } else {
                if (col < n) c_row[col] = d[4 * i + 2 * h];
                if (col + 1 < n) c_row[col + 1] = d[4 * i + 2 * h + 1];
            }
        }
    }
#endif  // TUT_SM90A
}

// ------------------------------------------------------------------ pre-passes
// x rounded to the nearest TF32 value (ties away from zero), low 13 bits cleared, so that the
// result is an ordinary float equal to its TF32 value.
__device__ __forceinline__ float to_tf32(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r & 0xFFFFE000u);
#else
    return x;  // no TF32 before sm_80; never runs (the launcher refuses every GPU but 9.0)
#endif
}

// Bt[j * ld + k] = tf32(B[k * n + j]): B transposed to K-major, through a 32 x 33 shared tile so
// that both the reads and the writes are coalesced. Blocks of 32 x 8 threads.
__global__ void transpose_round_tf32(const float* __restrict__ B, float* __restrict__ Bt, int n, int ld) {
    __shared__ float tile[32][33];
    const int j0 = blockIdx.x * 32, k0 = blockIdx.y * 32;
#pragma unroll
    for (int r = 0; r < 32; r += 8) {
        const int k = k0 + threadIdx.y + r, j = j0 + threadIdx.x;
        if (k < n && j < n) tile[threadIdx.y + r][threadIdx.x] = B[static_cast<size_t>(k) * n + j];
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < 32; r += 8) {
        const int j = j0 + threadIdx.y + r, k = k0 + threadIdx.x;
        if (j < n && k < n) Bt[static_cast<size_t>(j) * ld + k] = to_tf32(tile[threadIdx.x][threadIdx.y + r]);
    }
}

// dst[i * ld + j] = src[i * n + j]: A with its rows padded to ld (a tensor map's row pitch must be
// a multiple of 16 bytes). One block row per matrix row.
__global__ void pad_copy(const float* __restrict__ src, float* __restrict__ dst, int n, int ld) {
    const int row = blockIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < n) dst[static_cast<size_t>(row) * ld + col] = src[static_cast<size_t>(row) * n + col];
}

}  // namespace

// ------------------------------------------------------------------ PTX wrappers: definitions
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
// A wait of seconds is a bug (a lost arrival, a wrong byte count): trap, so that the host sees
// an error ("unspecified launch failure") instead of a hang.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    if (mbar_try_wait(bar, parity)) return;
    const long long start = clock64();
    while (!mbar_try_wait(bar, parity))
        if (clock64() - start > (1ll << 32)) __trap();
}
// Coordinates in elements; the box's size, swizzle and zero fill are the tensor map's.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ void reg_fence(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// Shared-memory matrix descriptor of a K-major tile written by TMA with the 128-byte swizzle:
// rows of 128 bytes (32 floats of k), 8-row atoms of 1024 bytes stacked along M or N (stride
// byte offset 1024), leading byte offset unused for a swizzled K-major tile, swizzle mode 1
// (128 bytes) in bits 62-63. Addresses are in 16-byte units.
__device__ __forceinline__ uint64_t make_desc_sw128(uint32_t smem_addr) {
    uint64_t desc = 0;
    desc |= static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4);  // bits  0-13: start address >> 4
    desc |= static_cast<uint64_t>(1) << 16;                     // bits 16-29: leading byte offset >> 4
    desc |= static_cast<uint64_t>(1024 >> 4) << 32;             // bits 32-45: stride byte offset >> 4
    desc |= static_cast<uint64_t>(1) << 62;                     // bits 62-63: 128-byte swizzle
    return desc;
}

// d (64 x 256, FP32, 128 registers a thread) += A (64 x 8, TF32) * B (8 x 256, TF32), both from
// shared memory by descriptor; B's descriptor describes the K-major Bt tile (256 rows of k). The
// operands' types say .tf32: the tensor cores read the top 19 bits of each float (sign, exponent,
// 10 mantissa bits) and ignore the rest, which is why the inputs are rounded before they get here.
__device__ __forceinline__ void wgmma_m64n256k8_tf32(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
    asm volatile(
        "{\n.reg .pred scale_d;\nsetp.ne.b32 scale_d, %130, 0;\n"  // scale-d: d = A B + (scale_d ? d : 0)
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "
        "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, "
        "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, "
        "%67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, "
        "%89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, "
        "%109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "
        "%127}, %128, %129, scale_d, 1, 1;\n"  // then imm-scale-a, -b: 1, A and B not negated
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]),
          "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]),
          "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]),
          "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(desc_a), "l"(desc_b), "r"(1));
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

// A tensor map of an n x n row-major matrix with row pitch ld floats, copied in boxes of
// kBK (inner, k) x box_rows, with the 128-byte swizzle and zero fill outside the matrix. Element
// type TFLOAT32: TMA rounds each float to TF32 on its way to shared memory.
CUtensorMap make_tensor_map(const float* matrix, int n, int ld, int box_rows) {
    CUtensorMap map;
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(n), static_cast<cuuint64_t>(n)};  // inner first
    const cuuint64_t row_pitch[1] = {static_cast<cuuint64_t>(ld) * sizeof(float)};
    const cuuint32_t box[2] = {kBK, static_cast<cuuint32_t>(box_rows)};
    const cuuint32_t element_strides[2] = {1, 1};
    const CUresult r = tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, 2, const_cast<float*>(matrix),
                                            dims, row_pitch, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) throw tut::CudaError("cuTensorMapEncodeTiled failed with CUresult " + std::to_string(r));
    return map;
}

// What the launcher keeps between calls: the scratch matrices and the tensor maps that point at
// them. A map holds an address, not data, so it is encoded again only when n or an address changes.
struct Scratch {
    int n = 0;
    tut::DeviceBuffer<float> bt;        // B transposed and rounded, n rows of pitch ld
    tut::DeviceBuffer<float> a_padded;  // A with rows of pitch ld, when A itself cannot be a tensor map
    CUtensorMap map_bt{}, map_a{};
    const float* map_a_source = nullptr;  // the matrix map_a describes
};

void run_wgmma(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    static const int cc = tut::compute_capability();
    if (cc != 90)
        throw tut::Unsupported("the wgmma kernel is sm_90a code: it needs a compute capability 9.0 GPU (H100, H200)");
    tut::allow_dynamic_shared_memory(sgemm_wgmma, kSmemBytes);  // 193 KiB: far above the 48 KiB without asking

    static Scratch scratch;  // freed at exit with the program
    const int ld = (n + 3) / 4 * 4;  // row pitch: a multiple of 16 bytes
    if (scratch.n != n) {
        scratch = Scratch{};
        scratch.n = n;
        scratch.bt = tut::DeviceBuffer<float>(static_cast<size_t>(n) * ld);
        scratch.map_bt = make_tensor_map(scratch.bt.get(), n, ld, kBN);
    }
    // A can be read in place when its rows start on 16-byte boundaries; else a padded copy.
    const float* a_source = A;
    if (ld != n || reinterpret_cast<uintptr_t>(A) % 16 != 0) {
        if (scratch.a_padded.size() == 0) scratch.a_padded = tut::DeviceBuffer<float>(static_cast<size_t>(n) * ld);
        pad_copy<<<dim3((n + 255) / 256, n), 256>>>(A, scratch.a_padded.get(), n, ld);
        TUT_LAUNCH("pad_copy");
        a_source = scratch.a_padded.get();
    }
    if (scratch.map_a_source != a_source) {
        scratch.map_a = make_tensor_map(a_source, n, a_source == A ? n : ld, kBM);
        scratch.map_a_source = a_source;
    }

    transpose_round_tf32<<<dim3((n + 31) / 32, (n + 31) / 32), dim3(32, 8)>>>(B, scratch.bt.get(), n, ld);
    TUT_LAUNCH("transpose_round_tf32");
    const int tiles_m = (n + kBM - 1) / kBM, tiles_n = (n + kBN - 1) / kBN;
    sgemm_wgmma<<<tiles_m * tiles_n, kThreads, kSmemBytes>>>(scratch.map_a, scratch.map_bt, C, n, tiles_m, tiles_n);
    TUT_LAUNCH("sgemm_wgmma");
}

constexpr const char* kVariantName = "wgmma 128x256x32 4 stages";

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    return {{kVariantName, run_wgmma, tut::kernel_of(sgemm_wgmma, kThreads, kSmemBytes),
             tut::Needs{90, "wgmma and TMA (sm_90a code)"}}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "17_wgmma", "TF32 on Hopper: wgmma, TMA and an mbarrier pipeline"};
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
