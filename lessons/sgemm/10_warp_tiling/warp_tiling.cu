// sgemm/10_warp_tiling: warp tiling, so that a warp's shared-memory reads are conflict-free.
// Starts from: lesson 09's "thread 8x8" kernel (128 x 128 block tile, 8 x 8 outputs per thread).
// Adds: the block tile is split into warp tiles, and a thread's 8 x 8 outputs into 2 x 2
// sub-blocks of 4 x 4 spread over its warp tile, so that the float4 loads of a warp touch
// 4 or 8 neighbouring float4s (no bank conflict) instead of 16 at a 32-byte stride.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/10_warp_tiling/warp_tiling.cu -lcublas -o warp_tiling
// Run:  ./warp_tiling --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// Kernel and variants:
//   sgemm_warp_tiled<kWM, kWN>   "warp 32x64"  8 warps of 32 x 64 outputs (lanes 4 x 8)
//                                "warp 64x32"  8 warps of 64 x 32 outputs (lanes 8 x 4)
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"
#include "tut/sgemm_tiles.cuh"

namespace {

constexpr int kBM = 128, kBN = 128, kTileK = 8;  // block tile of C and k values per tile, as in lesson 09
constexpr int kTM = 8, kTN = 8;                  // outputs per thread, as in lesson 09
constexpr int kThreads = 256;
static_assert(kTileK % 4 == 0, "a float4 of A is 4 k values of one row of the tile");
static_assert(kTM % 4 == 0 && kTN % 4 == 0, "a thread's outputs are sub-blocks of 4 x 4");

// A warp computes a kWM x kWN tile of C with its 32 lanes arranged kLaneRows x kLaneCols.
// Lane (lr, lc) owns 2 x 2 sub-blocks of 4 x 4 outputs, spread over the warp tile so that the
// lanes' sub-blocks interleave (row() and col() place them). So at one k, the float4 that
// a lane reads from A's row of As is one of kLaneRows neighbours (the lanes of one lr read the
// same one: a broadcast), and from B's row of Bs one of kLaneCols neighbours: no two lanes
// ask one bank for different words. A 16-byte load still takes several wavefronts (measured
// on an H100: 2 for A, 4 for B, 3 on average), but none for bank conflicts. In lesson 09 the
// 16 float4s of B's row were 32 bytes apart: 8 wavefronts, half of them conflicts (5 on average).
template <int kWM, int kWN>
struct WarpTile {
    static constexpr int kLaneRows = kWM / kTM, kLaneCols = kWN / kTN;
    static_assert(kWM % kTM == 0 && kWN % kTN == 0, "a warp tile is whole threads' tiles of kTM x kTN");
    static_assert(kLaneRows * kLaneCols == 32, "a warp has 32 lanes");
    static_assert(kBM % kWM == 0 && kBN % kWN == 0 && (kBM / kWM) * (kBN / kWN) * 32 == kThreads,
                  "the warp tiles cover the block tile, one warp each");
    // First row (of the block tile) of sub-block s of lane row lr in warp row wr; columns likewise.
    // TODO(exercise) part 1 of 2: the warp tile's layout, here and in col(). Lane (lr, lc) owns
    //   sub-blocks (s, t), s and t in {0, 1}; row(wr, lr, s) is the first of the 4 rows of
    //   sub-block row s, col(wc, lc, t) the first of the 4 columns of sub-block column t, both
    //   counted in the block tile (warp (wr, wc) owns rows wr * kWM .. and columns wc * kWN ..).
    //   - Correctness: the fragment loads (part 2) and the store of C both go through these two
    //     functions, so C is right whenever the 4 sub-blocks of each of the 32 lanes cover the
    //     warp's kWM x kWN tile exactly once. The checks see nothing more; the profiler sees the rest.
    //   - Speed: at one k, every lane reads a float4 of Bs at col(wc, lc, t) and one of As at
    //     row(wr, lr, s). Shared memory serves an LDS.128 eight lanes at a time (lanes 0-7, 8-15,
    //     ...), 32 banks of 4 bytes; in lesson 09 eight neighbouring lanes read float4s 32 bytes
    //     apart, so they fell in pairs on the same four banks at different addresses (a bank
    //     conflict: one more wavefront). Which lanes of such a group share lr and which share lc
    //     (see lr and lc in the kernel)? Which spacing of their float4s leaves no two in the same
    //     banks, and where must a lane's second sub-block start so that it overlaps no lane's first?
    __device__ static int row(int wr, int lr, int s) {
        (void)wr;  // unused until the TODO is done
        (void)lr;
        (void)s;
        return 0;
    }
    __device__ static int col(int wc, int lc, int t) {
        (void)wc;  // unused until the TODO is done
        (void)lc;
        (void)t;
        return 0;
    }
};

// 2 blocks per SM: 128 registers at most. With no bound at all nvcc 13.0 takes 168, and only
// one block of 256 threads fits an SM's 64 K registers.
template <int kWM, int kWN>
__global__ void __launch_bounds__(kThreads, 2) sgemm_warp_tiled(int n, const float* __restrict__ A,
                                                                const float* __restrict__ B,
                                                                float* __restrict__ C) {
    using W = WarpTile<kWM, kWN>;
    __shared__ __align__(16) float As[kTileK][kBM];  // transposed, as in lesson 09
    __shared__ __align__(16) float Bs[kTileK][kBN];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wr = warp / (kBN / kWN), wc = warp % (kBN / kWN);          // this warp's tile in the block
    const int lr = lane / W::kLaneCols, lc = lane % W::kLaneCols;        // this lane's place in the warp tile
    const int i0 = blockIdx.y * kBM, j0 = blockIdx.x * kBN;
    float acc[kTM][kTN] = {};
    for (int k0 = 0; k0 < n; k0 += kTileK) {
#pragma unroll
        for (int e = tid; e < kBM * kTileK / 4; e += kThreads) {
            const int m = e / (kTileK / 4), k = (e % (kTileK / 4)) * 4;
            const float4 a = tut::sgemm::load4(A, n, i0 + m, k0 + k);
            As[k][m] = a.x;
            As[k + 1][m] = a.y;
            As[k + 2][m] = a.z;
            As[k + 3][m] = a.w;
        }
#pragma unroll
        for (int e = tid; e < kTileK * kBN / 4; e += kThreads) {
            const int k = e / (kBN / 4), j = (e % (kBN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[k][j]) = tut::sgemm::load4(B, n, k0 + k, j0 + j);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kTileK; ++k) {
            // TODO(exercise) part 2 of 2: step k of the warp tile's outer product. This lane's
            //   acc[i][j] is the output the store below names: row W::row(wr, lr, i / 4) + i % 4 and
            //   column W::col(wc, lc, j / 4) + j % 4 of the block tile. At this k it needs A's value
            //   of that row (in As, stored transposed as in lesson 09) and B's value of that column
            //   (in Bs). Bring this lane's kTM values of A and kTN values of B into registers, then
            //   do the kTM x kTN multiply-adds from registers.
            //   - The lane's rows are not 8 consecutive ones any more, nor its columns: which float4s
            //     of As[k] and of Bs[k] hold them, and which of the lane's values does each fill?
            //   - Read 16 bytes at a time (LDS.128): four adjacent floats from a 16-byte boundary. What
            //     must row() and col() return for that, and along which index of As is A adjacent?
            //   - The fragments and the kTM x kTN accumulators stay in registers only if every index
            //     into them is known at compile time once the loops are unrolled; otherwise they go to
            //     local memory (nvcc -Xptxas -v: stack frame, spill stores).
        }
        __syncthreads();
    }
    // acc[i][j]: row W::row(wr, lr, i / 4) + i % 4, column W::col(wc, lc, j / 4) + j % 4.
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; j += 4)
            tut::sgemm::store4(C, n, i0 + W::row(wr, lr, i / 4) + i % 4, j0 + W::col(wc, lc, j / 4),
                               make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
}

template <int kWM, int kWN>
void run_warp_tiled(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    const dim3 grid((n + kBN - 1) / kBN, (n + kBM - 1) / kBM);
    sgemm_warp_tiled<kWM, kWN><<<grid, kThreads>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_warp_tiled");
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    return {{"warp 32x64", run_warp_tiled<32, 64>, tut::kernel_of(sgemm_warp_tiled<32, 64>, kThreads)},
            {"warp 64x32", run_warp_tiled<64, 32>, tut::kernel_of(sgemm_warp_tiled<64, 32>, kThreads)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "10_warp_tiling", "Warp tiling: conflict-free shared-memory reads"};
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
