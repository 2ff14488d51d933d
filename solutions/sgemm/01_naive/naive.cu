// sgemm/01_naive: the naive kernel, one thread per element of C.
// Starts from: nothing; this is the track's first lesson. Adds: a kernel that computes
// C = A * B with one thread per element, mapped so that a warp's loads are coalesced.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/sgemm/01_naive/naive.cu -lcublas -o naive
// Run:  ./naive --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// Kernel and variant:
//   sgemm_naive   "naive"   one thread per element of C, blocks of 16 x 16 threads
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

namespace {

constexpr int kBlockSide = 16;  // blocks of 16 x 16 = 256 threads, as in the course slides

// One thread computes one element C[i][j]: the dot product of row i of A and column j of B.
// Which of i and j follows threadIdx.x does not change the result, only how the 32 threads
// of a warp (in blocks 16 wide, two rows of 16 consecutive threadIdx.x) touch memory; the
// README explains the choice.
__global__ void sgemm_naive(int n, const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C) {
    // j follows threadIdx.x: each half-warp (16 consecutive threadIdx.x) reads 16 consecutive
    // B[k][j], the same for both halves, and writes 16 consecutive C[i][j] (coalesced: every
    // byte of each sector used); A[i][k] is one address per half-warp (a broadcast). With i
    // from threadIdx.x, A and C would touch 16 rows per warp.
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;  // the last blocks overhang when n is not a multiple of 16
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += A[i * n + k] * B[k * n + j];
    C[i * n + j] = sum;
}

void run_naive(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    const dim3 block(kBlockSide, kBlockSide);
    const dim3 grid((n + kBlockSide - 1) / kBlockSide, (n + kBlockSide - 1) / kBlockSide);
    sgemm_naive<<<grid, block>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_naive");
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    return {{"naive", run_naive, tut::kernel_of(sgemm_naive)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "01_naive", "naive SGEMM, one thread per element of C"};
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
