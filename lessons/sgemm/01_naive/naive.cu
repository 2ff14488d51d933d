// sgemm/01_naive: the naive kernel, one thread per element of C.
// Starts from: nothing; this is the track's first lesson. Adds: a kernel that computes
// C = A * B with one thread per element, mapped so that a warp's loads are coalesced.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/01_naive/naive.cu -lcublas -o naive
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
    // TODO(exercise): make this thread compute one element C[i][j] (the dot product of
    //   row i of A and column j of B) and store it.
    //   - Which element: the grid has one thread per element, in blocks of kBlockSide x
    //     kBlockSide threads. You choose whether the column j follows the x or the y index
    //     of the thread. Both give the right answer; one is several times faster. A warp
    //     is two rows of 16 threads with consecutive threadIdx.x, and memory serves a warp's
    //     load in 32-byte sectors: choose so that each half-warp's loads of B and stores of
    //     C are 16 neighbouring floats of one row (the README's "coalescing" section).
    //   - The last blocks overhang the matrix when n is not a multiple of kBlockSide: a
    //     thread outside the matrix must read and write nothing.
    //   - Registers are the fastest storage: keep the running sum in one and write C once.
    //   Row-major: element (r, c) of an n x n matrix M is M[r * n + c].
    (void)n;  // unused until the TODO is done
    (void)A;
    (void)B;
    (void)C;
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
