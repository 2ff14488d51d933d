// sgemm/16_mma_sync: TF32 tensor cores through mma.sync, with the fragments in our own hands.
// Starts from: lesson 15 (WMMA: opaque fragments, filled one 4-byte shared load per element).
// Adds: the PTX instruction mma.sync.aligned.m16n8k8 (the tensor-core operation WMMA compiles
// to), whose fragment layout the PTX ISA documents lane by lane. Knowing it, a warp fills A's
// fragments with ldmatrix (four 8 x 16-byte matrices in one instruction) and B's with 16-byte
// loads (by choosing which lane computes which column of C), from XOR-swizzled shared memory
// without bank conflicts; rounds each input to TF32 with one integer add; and keeps the tensor
// cores fed with lesson 12's 128 x 256 tile (8 warps of 64 x 64: 128 accumulators a thread)
// and a cp.async pipeline that keeps up to three tiles in flight.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/sgemm/16_mma_sync/mma_sync.cu -lcublas -o mma_sync
// Run:  ./mma_sync --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// Kernel and variants (block tile 128 x 256 x 32, 256 threads; compute capability 8.0 or newer):
//   sgemm_mma<2, ...>   "mma.sync 2 stages"   96 KB of shared memory: every GPU from sm_80 on
//   sgemm_mma<4, ...>   "mma.sync 4 stages"   192 KB: H100, H200 (an A100 has 163 KB a block)
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"
#include "tut/sgemm_tiles.cuh"
#include "tut/sgemm_swizzle.cuh"

#include <cstdint>
#include <string>

namespace {

constexpr int kBM = 128, kBN = 256, kBK = 32;    // block tile of C, k values per tile (4 steps of k = 8)
constexpr int kWarpsN = 4, kThreads = 256;       // 8 warps: 2 rows x 4 columns
constexpr int kWM = 64, kWN = 64;                // warp tile
constexpr int kMT = kWM / 16, kNT = kWN / 8;     // 4 x 8 mma tiles of 16 x 8 a warp
constexpr int kAStage = kBM * kBK, kBStage = kBK * kBN;  // floats: 16 KB + 32 KB a stage
constexpr int kCopySteps = 2;  // a tile's copies are spread over the first 2 of its 4 k steps

constexpr size_t smem_bytes(int stages) { return size_t(stages) * (kAStage + kBStage) * sizeof(float); }
// What the copies and fragment loads below assume of the tiles:
static_assert(kBK == 32, "a row of A's tile is 8 chunks of 16 bytes, stored at chunk ^ (row % 8)");
static_assert(kThreads / (kBK / 4) * 4 == kBM && kThreads / (kBN / 4) * 8 == kBK,
              "16-byte copies: each thread copies 4 chunks of A's tile and 8 of B's, a whole group of rows apart");
static_assert(4 % kCopySteps == 0 && 8 % kCopySteps == 0 && kBM * kBK % (kThreads * kCopySteps) == 0 &&
                  kBK * kBN % (kThreads * kCopySteps) == 0,
              "a tile's copies split evenly over kCopySteps k steps");
static_assert(kCopySteps < kBK / 8, "a tile's copies are issued before its last k step, where the pipeline waits");
static_assert(kWM % 16 == 0 && kWN == 8 * 8 && (kBM / kWM) * (kBN / kWN) * 32 == kThreads && kBN / kWN == kWarpsN,
              "8 warps of 64 x 64: whole m16 tiles, and 8 lane groups of 8 columns");

// ---- the instructions ----

// D (16 x 8) += A (16 x 8, row) * B (8 x 8, col), TF32 inputs, FP32 accumulators. Lane l = 4g + t
// (g = l / 4, t = l % 4) holds a0..a3 = A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4];
// b0, b1 = B[t][g], B[t+4][g]; d0..d3 = D[g][2t], D[g][2t+1], D[g+8][2t], D[g+8][2t+1].
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif  // older GPUs have no TF32 tensor cores: the lesson and the checks skip the variants there
}

// Four 8 x 8 matrices of 16-bit elements, that is four 8 x 4 matrices of 32-bit words: lanes
// 8q .. 8q + 7 give the addresses of the 8 rows (16 bytes each) of matrix q; lane l receives,
// of each matrix q, word l % 4 of row l / 4 in r[q].
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// FP32 -> TF32: the tensor core reads sign, exponent and the top 10 mantissa bits and ignores
// the low 13. Adding 0x1000 (half of the last kept bit) carries into bit 13 exactly when the
// dropped bits are at least half: round to nearest, ties away from zero, in one integer add
// (the mask clears bits the tensor core ignores anyway; ptxas drops it). The PTX reference
// for the same rounding is
//     asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
// which equals this for every finite x and for infinities, but first tests for NaN: two or
// three instructions per element instead of one. (A NaN whose payload lies only in the low
// 13 bits would become an infinity here.)
__device__ __forceinline__ uint32_t to_tf32(float x) { return (__float_as_uint(x) + 0x1000u) & 0xFFFFE000u; }

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

// A 16-byte copy that is known to be inside the matrix: no size operand, the shared address
// precomputed (tut::sgemm::cp_async_16 serves the copies that may fall outside).
__device__ __forceinline__ void cp_async_16_inside(uint32_t dst, const float* src) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
#else  // no cp.async (and no TF32 tensor cores, so the variants do not run there)
    (void)dst;
    (void)src;
#endif
}

// ---- shared memory layout (one stage) ----
// A: [128 rows][32 k], a row is 8 chunks of 16 bytes; chunk c of row r is stored at c ^ (r % 8).
//   An ldmatrix matrix is one chunk of 8 consecutive rows: 8 different chunk slots, 32 banks.
//   The A fragment of one m16n8k8 is exactly the ldmatrix.x4 of (rows 0-7, k 0-3), (rows 8-15,
//   k 0-3), (rows 0-7, k 4-7), (rows 8-15, k 4-7): a0..a3.
// B: [32 k][256 columns], as in global memory. A B fragment is a column (b0 = B[t][g]), and
//   ldmatrix's transpose works on 16-bit elements only. But which column of the warp tile lane
//   group g computes is ours to choose, if C is stored in the same order: n-tile j of the warp
//   takes warp-tile column 8g + j for its column g. Lane (g, t) then needs B[t][8g .. 8g + 7],
//   8 consecutive floats: two 16-byte loads per k row instead of 8 scalar ones. Its accumulators
//   d0, d1 of n-tile j are columns 16t + j and 16t + 8 + j: 16 consecutive columns of C per row.
//   Chunk c of k row r is stored at c ^ f(r % 4), f(t) = bit 0 of t, and bit 1 of t moved to
//   bit 2: the 8 lanes of one 16-byte load phase (two g, four t) then hit 8 different chunk slots.
__host__ __device__ constexpr int b_swizzle(int t) { return (t & 1) | ((t & 2) << 1); }

// One block's tile of C. kGuard = false: the block lies wholly inside C and N % 32 == 0 (every
// block at N = 4096), so no copy or store needs a test; kGuard = true: edge blocks and odd N.
// kAligned = false: N % 4 != 0, rows are not 16-byte aligned, so copies move 4 bytes.
template <int kStages, bool kAligned, bool kGuard>
__device__ __forceinline__ void mma_block(int n, const float* __restrict__ A, const float* __restrict__ B,
                                          float* __restrict__ C, int row0, int col0) {
    extern __shared__ __align__(128) float smem[];
    float* sA = smem;                     // [kStages][kBM][kBK]
    float* sB = smem + kStages * kAStage;  // [kStages][kBK][kBN]
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm = warp / kWarpsN, wn = warp % kWarpsN;
    const int g = lane / 4, t = lane % 4;
    const int tiles = (n + kBK - 1) / kBK;

    // ---- global -> shared: part `part` (of kCopySteps) of tile kt into stage `stage` ----
    // 16-byte copies: thread tid copies chunk tid % 8 of A rows tid / 8 + 32 i (i < 4) and chunk
    // tid % 64 of B rows tid / 64 + 4 i (i < 8). Moving down by whole groups of rows keeps r % 8
    // and r % 4, so every destination is one swizzled base plus a constant. Offsets are 32-bit
    // (N * N < 2^32).
    const int la_r = tid / 8, la_c = tid % 8, lb_r = tid / 64, lb_c = tid % 64;
    const int la_off = la_r * kBK + 4 * (la_c ^ (la_r % 8)), lb_off = lb_r * kBN + 4 * (lb_c ^ b_swizzle(lb_r % 4));
    const uint32_t la_dst = smem_addr(sA + la_off), lb_dst = smem_addr(sB + lb_off);
    const uint32_t la_src = uint32_t(row0 + la_r) * n + 4 * la_c, lb_src = uint32_t(lb_r) * n + col0 + 4 * lb_c;
    auto load_tile = [&](int stage, int kt, int part) {
        constexpr int kNA = 4 / kCopySteps, kNB = 8 / kCopySteps;  // 16-byte copies per part
        const int k0 = kt * kBK;
        if constexpr (kAligned) {
#pragma unroll
            for (int i = part * kNA; i < (part + 1) * kNA; ++i) {
                const int dst = stage * kAStage + i * 32 * kBK;  // floats from the thread's first chunk
                const uint32_t src = la_src + uint32_t(i * 32) * n + k0;
                if (!kGuard) {
                    cp_async_16_inside(la_dst + dst * sizeof(float), A + src);
                } else {  // n % 4 == 0: a chunk is all inside or all outside
                    const bool ok = k0 + 4 * la_c < n && row0 + la_r + i * 32 < n;
                    tut::sgemm::cp_async_16(sA + la_off + dst, A + (ok ? src : 0u), ok);
                }
            }
#pragma unroll
            for (int i = part * kNB; i < (part + 1) * kNB; ++i) {
                const int dst = stage * kBStage + i * 4 * kBN;
                const uint32_t src = lb_src + uint32_t(k0 + i * 4) * n;
                if (!kGuard) {
                    cp_async_16_inside(lb_dst + dst * sizeof(float), B + src);
                } else {
                    const bool ok = col0 + 4 * lb_c < n && k0 + lb_r + i * 4 < n;
                    tut::sgemm::cp_async_16(sB + lb_off + dst, B + (ok ? src : 0u), ok);
                }
            }
        } else {  // 4-byte copies, element e of the tile by thread e % 256
            constexpr int kEA = kBM * kBK / kThreads / kCopySteps, kEB = kBK * kBN / kThreads / kCopySteps;
#pragma unroll 4
            for (int i = part * kEA; i < (part + 1) * kEA; ++i) {
                const int r = (tid + i * kThreads) / kBK, k = (tid + i * kThreads) % kBK;
                const bool ok = row0 + r < n && k0 + k < n;
                float* dst = sA + stage * kAStage + r * kBK + 4 * ((k / 4) ^ (r % 8)) + k % 4;
                tut::sgemm::cp_async_4(dst, A + (ok ? uint32_t(row0 + r) * n + k0 + k : 0u), ok);
            }
#pragma unroll 4
            for (int i = part * kEB; i < (part + 1) * kEB; ++i) {
                const int r = (tid + i * kThreads) / kBN, c = (tid + i * kThreads) % kBN;
                const bool ok = k0 + r < n && col0 + c < n;
                float* dst = sB + stage * kBStage + r * kBN + 4 * ((c / 4) ^ b_swizzle(r % 4)) + c % 4;
                tut::sgemm::cp_async_4(dst, B + (ok ? uint32_t(k0 + r) * n + col0 + c : 0u), ok);
            }
        }
    };

    // ---- shared -> registers: the fragments of k step ks (k = 8 ks .. 8 ks + 7) of a stage ----
    // A: lane l gives the address of row (l % 8) + 8 ((l / 8) % 2) of its m16 tile, logical chunk
    // 2 ks + l / 16 (k 0-3 or 4-7 of the step), stored at that ^ (row % 8) = (2 ks) ^ a_x.
    const int a_row = wm * kWM + lane % 8 + 8 * ((lane / 8) % 2);
    const int a_x = (lane / 16) ^ (lane % 8);
    const uint32_t a_lane = smem_addr(sA + a_row * kBK);
    // B: lane (g, t) reads k rows 8 ks + t and 8 ks + t + 4, logical chunks 2g and 2g + 1 of its
    // warp's 64 columns.
    int b_off[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) b_off[h] = t * kBN + wn * kWN + 4 * ((2 * g + h) ^ b_swizzle(t));
    uint32_t af[2][kMT][4] = {}, bf[2][kNT][2] = {};  // two sets: step ks + 1 loads while ks multiplies
    auto load_frags = [&](int buf, int stage, int ks) {
        const uint32_t a_addr = a_lane + stage * kAStage * sizeof(float) + 16 * ((2 * ks) ^ a_x);
#pragma unroll
        for (int i = 0; i < kMT; ++i) {
            ldmatrix_x4(af[buf][i], a_addr + i * 16 * kBK * sizeof(float));
#pragma unroll
            for (int q = 0; q < 4; ++q) af[buf][i][q] = to_tf32(__uint_as_float(af[buf][i][q]));
        }
        const float* bp = sB + stage * kBStage + ks * 8 * kBN;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const float4 lo = *reinterpret_cast<const float4*>(bp + b_off[h]);            // k = 8 ks + t
            const float4 hi = *reinterpret_cast<const float4*>(bp + b_off[h] + 4 * kBN);  // k = 8 ks + t + 4
            const float l4[4] = {lo.x, lo.y, lo.z, lo.w}, h4[4] = {hi.x, hi.y, hi.z, hi.w};
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                bf[buf][4 * h + q][0] = to_tf32(l4[q]);
                bf[buf][4 * h + q][1] = to_tf32(h4[q]);
            }
        }
    };

    float acc[kMT][kNT][4] = {};

    // ---- the pipeline: kStages - 1 tiles in flight, one group of copies per tile ----
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < tiles)
#pragma unroll
            for (int part = 0; part < kCopySteps; ++part) load_tile(s, s, part);
        tut::sgemm::cp_async_commit();  // empty groups too: the wait below counts groups
    }
    tut::sgemm::cp_async_wait<kStages - 2>();
    __syncthreads();
    // Tile kt: its refill (tile kt + kStages - 1, into the stage tile kt - 1 used) is spread over
    // k steps 0 and 1; at step 3 the fragments of the tile's last step are already in registers,
    // so that is where the pipeline waits for tile kt + 1 and the block meets at its one barrier
    // per tile (after it, no warp reads tile kt's stage again). The fragments of the next step
    // load while this one multiplies (after the last tile: harmless reads of a stale stage).
    int read_stage = 0, write_stage = kStages - 1;
    load_frags(0, 0, 0);
    for (int kt = 0; kt < tiles; ++kt) {
        const bool refill = kt + kStages - 1 < tiles;
#pragma unroll
        for (int ks = 0; ks < kBK / 8; ++ks) {
            if (ks < kCopySteps && refill) load_tile(write_stage, kt + kStages - 1, ks);
            if (ks == kBK / 8 - 1) {
                tut::sgemm::cp_async_commit();
                write_stage = (write_stage + 1) % kStages;
                tut::sgemm::cp_async_wait<kStages - 2>();
                __syncthreads();
                read_stage = (read_stage + 1) % kStages;
            }
            load_frags((ks + 1) % 2, read_stage, (ks + 1) % (kBK / 8));
#pragma unroll
            for (int i = 0; i < kMT; ++i)
#pragma unroll
                for (int j = 0; j < kNT; ++j) mma_tf32(acc[i][j], af[ks % 2][i], bf[ks % 2][j][0], bf[ks % 2][j][1]);
        }
    }
    tut::sgemm::cp_async_wait<0>();  // only empty groups are left; leave none behind

    // ---- C: lane (g, t) owns rows g and g + 8 of each m16 tile, and in each of them the 16
    // consecutive columns 16 t .. 16 t + 15 of its warp tile (acc[i][j][0 or 2]: column 16 t + j,
    // acc[i][j][1 or 3]: column 16 t + 8 + j): four 16-byte stores per row. ----
#pragma unroll
    for (int i = 0; i < kMT; ++i) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int r = row0 + wm * kWM + i * 16 + g + 8 * half;
            if (kGuard && r >= n) continue;
            const int c = col0 + wn * kWN + 16 * t;
            float v[2 * kNT];
#pragma unroll
            for (int j = 0; j < kNT; ++j) {
                v[j] = acc[i][j][2 * half];
                v[kNT + j] = acc[i][j][2 * half + 1];
            }
            float* dst = C + size_t(r) * n + c;
#pragma unroll
            for (int q = 0; q < 4; ++q)
                if (kAligned) {
                    if (!kGuard || c + 4 * q < n)  // n % 4 == 0: 4 columns all inside or all outside
                        *reinterpret_cast<float4*>(dst + 4 * q) = make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
                } else {
#pragma unroll
                    for (int e = 4 * q; e < 4 * q + 4; ++e)
                        if (c + e < n) dst[e] = v[e];
                }
        }
    }
}

// 255 registers a thread (128 accumulators, two sets of fragments, addresses): one block per SM.
template <int kStages, bool kAligned>
__global__ void __launch_bounds__(kThreads, 1) sgemm_mma(int n, const float* __restrict__ A,
                                                         const float* __restrict__ B, float* __restrict__ C) {
    const int2 block = tut::sgemm::swizzled_block(8);
    const int row0 = block.y * kBM, col0 = block.x * kBN;
    if (kAligned && n % kBK == 0 && row0 + kBM <= n && col0 + kBN <= n)  // the same for the whole block
        mma_block<kStages, kAligned, false>(n, A, B, C, row0, col0);
    else
        mma_block<kStages, kAligned, true>(n, A, B, C, row0, col0);
}

template <int kStages>
void run_mma(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    constexpr size_t smem = smem_bytes(kStages);
    if (smem > tut::sgemm::max_dynamic_shared_per_block())  // the lesson and the checks skip such a variant
        throw tut::Unsupported(std::to_string(kStages) + " stages need " + std::to_string(smem / 1024) +
                               " KB of shared memory per block; this GPU offers " +
                               std::to_string(tut::sgemm::max_dynamic_shared_per_block() / 1024));
    tut::allow_dynamic_shared_memory(sgemm_mma<kStages, true>, smem);  // above 48 KB a kernel must ask
    tut::allow_dynamic_shared_memory(sgemm_mma<kStages, false>, smem);
    const dim3 grid((n + kBN - 1) / kBN, (n + kBM - 1) / kBM);
    if (n % 4 == 0)
        sgemm_mma<kStages, true><<<grid, kThreads, smem>>>(n, A, B, C);
    else
        sgemm_mma<kStages, false><<<grid, kThreads, smem>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_mma");
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
// A GPU with less shared memory per block than a variant's launch needs (an A100 for 4 stages)
// skips that variant.
std::vector<tut::sgemm::Variant> variants() {
    const tut::Needs tensor_cores{80, "TF32 tensor cores"};
    return {{"mma.sync 2 stages", run_mma<2>, tut::kernel_of(sgemm_mma<2, true>, kThreads, smem_bytes(2)),
             tensor_cores},
            {"mma.sync 4 stages", run_mma<4>, tut::kernel_of(sgemm_mma<4, true>, kThreads, smem_bytes(4)),
             tensor_cores}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "16_mma_sync", "TF32 tensor cores through mma.sync, fragments by hand"};
    const std::vector<tut::sgemm::Variant> variants = lesson::variants();
    const tut::sgemm::Arithmetic tf32 = tut::sgemm::Arithmetic::tf32;  // the variants' inputs and the yardstick's
    tut::sgemm::Options options(lesson);  // --n (4096) and the options every lesson takes
    options.parse(argc, argv, tut::names_of(variants));
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
        return bench.exit_code();
    });
}
