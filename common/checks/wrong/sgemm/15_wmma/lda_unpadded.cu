// wrong: sgemm/15_wmma: loads the A fragments with leading dimension kBK (the tile's width) instead of the padded row kLDA
// caught by: sgemm/15_wmma: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile
// kind: other
// sgemm/15_wmma: TF32 tensor cores through the WMMA API (nvcuda::wmma).
// Starts from: lesson 14 (FP32 on the CUDA cores, about nine tenths of FP32 cuBLAS) and lesson 08
// (cuBLAS with TF32 tensor cores, seven times faster). Adds: the tensor cores in our own kernel. A
// warp, not a thread, now owns a tile of C: wmma::fragment objects hold 16 x 16 blocks of it
// spread over the warp's registers in a layout the API does not reveal; load_matrix_sync,
// mma_sync and store_matrix_sync move and multiply them. Inputs are rounded to TF32 (10 mantissa
// bits), products are accumulated in FP32. The tiles reach shared memory as in lesson 13 (cp.async,
// two stages).
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/15_wmma/wmma.cu -lcublas -o wmma
// Run:  ./wmma --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// Kernel and variant (TF32 tensor cores: compute capability 8.0 or newer):
//   sgemm_wmma<kAligned>   "wmma 128x128x32"   block tile 128 x 128 x 32, 8 warps of 64 x 32
//                          (4 x 2 fragments of 16 x 16), m16n16k8 TF32, 2 cp.async stages
// The yardstick of this lesson and the next ones is cuBLAS with TF32 tensor cores.
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"
#include "tut/sgemm_tiles.cuh"
#include "tut/sgemm_swizzle.cuh"

#include <mma.h>

namespace {

constexpr int kBM = 128, kBN = 128, kBK = 32;     // block tile of C, k values per tile
constexpr int kWarpsM = 2, kWarpsN = 4, kThreads = kWarpsM * kWarpsN * 32;
constexpr int kWM = kBM / kWarpsM, kWN = kBN / kWarpsN;  // warp tile: 64 x 32
constexpr int kFragM = kWM / 16, kFragN = kWN / 16;      // 4 x 2 accumulator fragments a warp
static_assert(kFragM * 16 == kWM && kFragN * 16 == kWN, "a warp tile is a whole number of 16 x 16 fragments");
// Rows padded by 4 floats (36 and 132), as in lesson 11: consecutive rows start 4 banks apart
// instead of in the same bank. A multiple of 4 floats, as load_matrix_sync requires.
constexpr int kLDA = kBK + 4, kLDB = kBN + 4;
constexpr int kAStage = kBM * kLDA, kBStage = kBK * kLDB;                    // floats
constexpr size_t kSmemBytes = 2 * size_t(kAStage + kBStage) * sizeof(float);  // 70,656 bytes
static_assert(size_t(8) * kWM * kWN * sizeof(float) <= kSmemBytes, "the edge epilogue's staging must fit");
// What the copies below assume of the tiles (16-byte copies: a thread's chunk of A rows and of B
// rows, the same chunk every kThreads / chunks-per-row rows; 4-byte copies: whole elements):
static_assert(kThreads % (kBK / 4) == 0 && kBM % (kThreads / (kBK / 4)) == 0, "16-byte copies of A: whole rows");
static_assert(kThreads % (kBN / 4) == 0 && kBK % (kThreads / (kBN / 4)) == 0, "16-byte copies of B: whole rows");
static_assert(kBM * kBK % kThreads == 0 && kBK * kBN % kThreads == 0, "4-byte copies: the same count per thread");
static_assert(kBK % 8 == 0 && kLDA % 4 == 0 && kLDB % 4 == 0, "whole k = 8 steps; load_matrix_sync's strides");

// Two blocks per SM (at most 128 registers a thread): while one waits at its barrier, the
// other feeds the tensor cores. kAligned: N % 4 == 0, so rows start on 16-byte boundaries.
template <bool kAligned>
__global__ void __launch_bounds__(kThreads, 2) sgemm_wmma(int n, const float* __restrict__ A,
                                                          const float* __restrict__ B, float* __restrict__ C) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800  // TF32 fragments exist from sm_80 on
    using namespace nvcuda;
    extern __shared__ __align__(128) float smem[];  // [2][kBM][kLDA] of A, then [2][kBK][kLDB] of B
    const int tid = threadIdx.x, warp = tid / 32;
    const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
    const int2 block = tut::sgemm::swizzled_block(8);
    const int row0 = block.y * kBM, col0 = block.x * kBN;
    const int tiles = (n + kBK - 1) / kBK;

    // Tile kt into stage `stage`. 16-byte copies when N % 4 == 0 (a thread copies chunk tid % 8
    // of A rows tid / 8 + 32 i, and chunk tid % 32 of B rows tid / 32 + 8 i), else 4-byte ones.
    // Copies from outside the matrix write zeros (lesson 13).
    auto load_tile = [&](int stage, int kt) {
        const int k0 = kt * kBK;
        float* As = smem + stage * kAStage;
        float* Bs = smem + 2 * kAStage + stage * kBStage;
        if constexpr (kAligned) {
            constexpr int kRowsA = kThreads / (kBK / 4), kRowsB = kThreads / (kBN / 4);
            const int ar = tid / (kBK / 4), ac = 4 * (tid % (kBK / 4));
            const int br = tid / (kBN / 4), bc = 4 * (tid % (kBN / 4));
#pragma unroll
            for (int i = 0; i < kBM / kRowsA; ++i) {
                const int r = ar + i * kRowsA;
                const bool ok = row0 + r < n && k0 + ac < n;
                tut::sgemm::cp_async_16(&As[r * kLDA + ac], ok ? A + size_t(row0 + r) * n + k0 + ac : A, ok);
            }
#pragma unroll
            for (int i = 0; i < kBK / kRowsB; ++i) {
                const int r = br + i * kRowsB;
                const bool ok = k0 + r < n && col0 + bc < n;
                tut::sgemm::cp_async_16(&Bs[r * kLDB + bc], ok ? B + size_t(k0 + r) * n + col0 + bc : B, ok);
            }
        } else {
#pragma unroll 4
            for (int i = 0; i < kBM * kBK / kThreads; ++i) {
                const int e = tid + i * kThreads, r = e / kBK, k = e % kBK;
                const bool ok = row0 + r < n && k0 + k < n;
                tut::sgemm::cp_async_4(&As[r * kLDA + k], ok ? A + size_t(row0 + r) * n + k0 + k : A, ok);
            }
#pragma unroll 4
            for (int i = 0; i < kBK * kBN / kThreads; ++i) {
                const int e = tid + i * kThreads, r = e / kBN, c = e % kBN;
                const bool ok = k0 + r < n && col0 + c < n;
                tut::sgemm::cp_async_4(&Bs[r * kLDB + c], ok ? B + size_t(k0 + r) * n + col0 + c : B, ok);
            }
        }
    };

    // The warp's 64 x 32 of C: 4 x 2 accumulators of 16 x 16, 8 floats per lane each.
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[kFragM][kFragN];
#pragma unroll
    for (int i = 0; i < kFragM; ++i)
#pragma unroll
        for (int j = 0; j < kFragN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    // Lesson 13's pipeline with two stages: tile kt + 1 is copied while tile kt is multiplied.
    load_tile(0, 0);
    tut::sgemm::cp_async_commit();
    for (int kt = 0; kt < tiles; ++kt) {
        const int stage = kt % 2;
        tut::sgemm::cp_async_wait<0>();
        __syncthreads();  // tile kt visible to all; everyone done with tile kt - 1's stage
        if (kt + 1 < tiles) load_tile(stage ^ 1, kt + 1);
        tut::sgemm::cp_async_commit();
        const float* As = smem + stage * kAStage + warp_m * kWM * kLDA;       // the warp's 64 rows of A
        const float* Bs = smem + 2 * kAStage + stage * kBStage + warp_n * kWN;  // its 32 columns of B
        // Four steps of k = 8. Each fragment is read from shared memory and rounded to TF32
        // element by element: the rounding does not depend on where an element sits, so it
        // works without knowing the layout. Not unrolled: with 128 registers the compiler would
        // hoist the next steps' loads and spill; the other block on the SM hides the latency.
#pragma unroll 1
        for (int ks = 0; ks < kBK / 8; ++ks) {
            wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b[kFragN];
#pragma unroll
            for (int j = 0; j < kFragN; ++j) {
                wmma::load_matrix_sync(b[j], Bs + ks * 8 * kLDB + j * 16, kLDB);
#pragma unroll
                for (int e = 0; e < b[j].num_elements; ++e) b[j].x[e] = wmma::__float_to_tf32(b[j].x[e]);
            }
#pragma unroll
            for (int i = 0; i < kFragM; ++i) {  // one A fragment at a time: fewer live registers
                wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
                wmma::load_matrix_sync(a, As + i * 16 * kLDA + ks * 8, kBK);
#pragma unroll
                for (int e = 0; e < a.num_elements; ++e) a.x[e] = wmma::__float_to_tf32(a.x[e]);
#pragma unroll
                for (int j = 0; j < kFragN; ++j) wmma::mma_sync(acc[i][j], a, b[j], acc[i][j]);
            }
        }
    }

    // store_matrix_sync writes a whole 16 x 16 fragment; it cannot leave out the elements
    // outside C. A block wholly inside C (and N % 4 == 0, as the store's row stride requires)
    // stores straight to C; an edge block stages each warp's 64 x 32 in shared memory first.
    const int r_w = row0 + warp_m * kWM, c_w = col0 + warp_n * kWN;
    if (kAligned && row0 + kBM <= n && col0 + kBN <= n) {
#pragma unroll
        for (int i = 0; i < kFragM; ++i)
#pragma unroll
            for (int j = 0; j < kFragN; ++j)
                wmma::store_matrix_sync(C + size_t(r_w + 16 * i) * n + c_w + 16 * j, acc[i][j], n, wmma::mem_row_major);
        return;
    }
    __syncthreads();  // every warp is done with the pipeline's shared memory
    float* staging = smem + warp * kWM * kWN;
#pragma unroll
    for (int i = 0; i < kFragM; ++i)
#pragma unroll
        for (int j = 0; j < kFragN; ++j)
            wmma::store_matrix_sync(staging + 16 * i * kWN + 16 * j, acc[i][j], kWN, wmma::mem_row_major);
    __syncwarp();  // the lanes read what other lanes stored
    for (int e = tid % 32; e < kWM * kWN; e += 32) {
        const int r = r_w + e / kWN, c = c_w + e % kWN;
        if (r < n && c < n) C[size_t(r) * n + c] = staging[e];
    }
#endif  // no TF32 tensor cores before sm_80: the lesson and the checks skip the variant there
}

template <bool kAligned>
void launch_wmma(int n, const float* A, const float* B, float* C) {
    tut::allow_dynamic_shared_memory(sgemm_wmma<kAligned>, kSmemBytes);  // above 48 KB a kernel must ask
    const dim3 grid((n + kBN - 1) / kBN, (n + kBM - 1) / kBM);
    sgemm_wmma<kAligned><<<grid, kThreads, kSmemBytes>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_wmma");
}

void run_wmma(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    if (n % 4 == 0)
        launch_wmma<true>(n, A, B, C);
    else
        launch_wmma<false>(n, A, B, C);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    return {{"wmma 128x128x32", run_wmma, tut::kernel_of(sgemm_wmma<true>, kThreads, kSmemBytes),
             tut::Needs{80, "TF32 tensor cores"}}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "15_wmma", "TF32 tensor cores through the WMMA API"};
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
