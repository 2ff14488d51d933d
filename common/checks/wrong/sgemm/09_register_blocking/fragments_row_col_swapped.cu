// wrong: sgemm/09_register_blocking: loads the A fragment at the thread's column index tc and the B fragment at its row index tr
// caught by: sgemm/09_register_blocking: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile
// kind: other
// Each thread computes the transposed position of its block of outputs but stores it at its own.
// sgemm/09_register_blocking: register blocking in two dimensions, a TM x TN tile of C per thread.
// Starts from: lesson 07 (grain outputs of one column per thread). Adds: each thread computes
// a TM x TN block of C from a column of TM values of A and a row of TN values of B held in
// registers (an outer product per k), A's tile stored transposed in shared memory so that
// both are read with 16-byte loads.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/09_register_blocking/register_blocking.cu -lcublas -o register_blocking
// Run:  ./register_blocking --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// Kernel and variants:
//   sgemm_register_blocked<kTM, kTN>   "thread 4x4"  16 x 16 threads, a 64 x 64 block of C
//                                      "thread 8x8"  16 x 16 threads, a 128 x 128 block of C
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"
#include "tut/sgemm_tiles.cuh"

namespace {

constexpr int kThreadRows = 16, kThreadCols = 16;  // 256 threads in a 16 x 16 grid
constexpr int kThreads = kThreadRows * kThreadCols;
constexpr int kTileK = 8;                          // k values per shared-memory tile
static_assert(kTileK % 4 == 0, "a float4 of A is 4 k values of one row of the tile");

// Thread (tr, tc) computes rows tr*kTM .. +kTM-1 and columns tc*kTN .. +kTN-1 of the block's
// (16 kTM) x (16 kTN) block of C. Per k it loads kTM values of A (a column) and kTN values of
// B (a row) into registers and does all kTM * kTN products: kTM + kTN loads feed kTM * kTN
// FFMAs. Lesson 07 (grain 16) fed 16 FFMAs with 17 values; 8 x 8 feeds 64 FFMAs with 16.
//
// Both operands come out of shared memory as float4 (LDS.128): B's row segment is contiguous
// already; A's column segment is contiguous only if the tile is stored transposed, As[k][m],
// which the load does as it writes the tile.
template <int kTM, int kTN>
__global__ void __launch_bounds__(kThreads) sgemm_register_blocked(int n, const float* __restrict__ A,
                                                                    const float* __restrict__ B,
                                                                    float* __restrict__ C) {
    constexpr int kBM = kThreadRows * kTM, kBN = kThreadCols * kTN;  // the block's tile of C
    static_assert(kTM % 4 == 0 && kTN % 4 == 0, "kTM and kTN are multiples of 4 (see the loads of step k)");
    __shared__ __align__(16) float As[kTileK][kBM];  // transposed: As[k][m] = A[i0 + m][k0 + k]
    __shared__ __align__(16) float Bs[kTileK][kBN];
    const int tid = threadIdx.x;
    const int tr = tid / kThreadCols, tc = tid % kThreadCols;
    const int i0 = blockIdx.y * kBM, j0 = blockIdx.x * kBN;
    float acc[kTM][kTN] = {};
    for (int k0 = 0; k0 < n; k0 += kTileK) {
        // The tiles, 4 floats per load; A's 4 consecutive k values go to 4 rows of As.
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
            float a[kTM], b[kTN];  // a column of A and a row of B, in registers
#pragma unroll
            for (int i = 0; i < kTM; i += 4)
                *reinterpret_cast<float4*>(&a[i]) = *reinterpret_cast<const float4*>(&As[k][tc * kTM + i]);
#pragma unroll
            for (int j = 0; j < kTN; j += 4)
                *reinterpret_cast<float4*>(&b[j]) = *reinterpret_cast<const float4*>(&Bs[k][tr * kTN + j]);
#pragma unroll
            for (int i = 0; i < kTM; ++i)
#pragma unroll
                for (int j = 0; j < kTN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; j += 4)
            tut::sgemm::store4(C, n, i0 + tr * kTM + i, j0 + tc * kTN + j,
                               make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
}

template <int kTM, int kTN>
void run_register_blocked(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    constexpr int kBM = kThreadRows * kTM, kBN = kThreadCols * kTN;
    const dim3 grid((n + kBN - 1) / kBN, (n + kBM - 1) / kBM);
    sgemm_register_blocked<kTM, kTN><<<grid, kThreads>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_register_blocked");
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    return {{"thread 4x4", run_register_blocked<4, 4>, tut::kernel_of(sgemm_register_blocked<4, 4>, kThreads)},
            {"thread 8x8", run_register_blocked<8, 8>, tut::kernel_of(sgemm_register_blocked<8, 8>, kThreads)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "09_register_blocking", "Register blocking: a TM x TN tile of C per thread"};
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
