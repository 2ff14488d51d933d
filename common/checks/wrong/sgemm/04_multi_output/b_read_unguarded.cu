// wrong: sgemm/04_multi_output: the tail test guards the stores of C but not the reads of B in the k loop
// caught by: sanitizer: memcheck
// kind: out-of-bounds
// The sums of columns j >= n are never stored, so C is right; but at k = n - 1 the last block reads
// up to 16 * kMulti - 1 floats past the end of B (the sanitizer runs at N = 37 and 100).
// sgemm/04_multi_output: a non 1-to-1 mapping. Each thread computes kMulti elements of a row of C.
// Starts from: lesson 01's kernel. Adds: several outputs per thread, so that each A[i][k]
// loaded serves kMulti FMAs, with the outputs either consecutive (the course slides') or
// strided (neighbouring threads, neighbouring columns).
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/04_multi_output/multi_output.cu -lcublas -o multi_output
// Run:  ./multi_output --n 4096    (--help for options; --profile for one clean launch under ncu)
//
// Kernel and variants:
//   sgemm_multi<kMulti, kMapping>   "multi=1"                    one output per thread (lesson 01's mapping)
//                                   "multi=2|4|8 consecutive"    a thread's outputs side by side
//                                   "multi=2|4|8 strided"        a thread's outputs 16 columns apart
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

namespace {

constexpr int kBlockSide = 16;  // blocks of 16 x 16 = 256 threads, as in the course slides

// Which columns a thread's kMulti outputs are.
enum class Mapping {
    consecutive,  // the course slides' choice: thread x owns columns x*kMulti .. x*kMulti + kMulti-1
    strided,      // thread x owns columns x, x + 16, x + 32, ...: neighbouring threads, neighbouring columns
};

// Column of output m (0 <= m < kMulti) of thread x in a block whose first column is `first`.
// A block covers kBlockSide * kMulti columns either way; only the order inside it differs.
template <Mapping kMapping, int kMulti>
__device__ int column_of(int first, int x, int m) {
    return kMapping == Mapping::consecutive ? first + x * kMulti + m : first + m * kBlockSide + x;
}

// Thread (x, y) computes C[i][j] for i = y and kMulti columns j. The value A[i][k] is loaded
// once per k and used kMulti times (the hoped-for saving: kMulti times fewer A loads).
// The price depends on the mapping. At fixed m, a warp (16 x, 2 y) reads
//   consecutive: B[k][first + x*kMulti + m], 16 floats kMulti apart: the warp's request spans
//                16*kMulti floats, 2*kMulti sectors of which it uses 1/kMulti;
//   strided:     B[k][first + m*16 + x], 16 neighbouring floats: 2 sectors, all used,
// and the stores of C follow the same pattern. Registers grow with kMulti (kMulti sums) and
// the grid shrinks by kMulti, so fewer warps are there to hide latency. The tail test sits
// inside the k loop, which costs instructions (the README's "going further" moves it out).
template <int kMulti, Mapping kMapping>
__global__ void sgemm_multi(int n, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int first = blockIdx.x * kBlockSide * kMulti;
    if (i >= n) return;
    float sum[kMulti];
#pragma unroll
    for (int m = 0; m < kMulti; ++m) sum[m] = 0.0f;
    for (int k = 0; k < n; ++k) {
        const float a = A[i * n + k];  // one load, kMulti uses
#pragma unroll
        for (int m = 0; m < kMulti; ++m) {
            const int j = column_of<kMapping, kMulti>(first, threadIdx.x, m);
            sum[m] += a * B[k * n + j];
        }
    }
#pragma unroll
    for (int m = 0; m < kMulti; ++m) {
        const int j = column_of<kMapping, kMulti>(first, threadIdx.x, m);
        if (j < n) C[i * n + j] = sum[m];
    }
}

template <int kMulti, Mapping kMapping>
void run_multi(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    const dim3 block(kBlockSide, kBlockSide);
    const int columns_per_block = kBlockSide * kMulti;
    const dim3 grid((n + columns_per_block - 1) / columns_per_block, (n + kBlockSide - 1) / kBlockSide);
    sgemm_multi<kMulti, kMapping><<<grid, block>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_multi");
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    return {{"multi=1", run_multi<1, Mapping::consecutive>,  // lesson 01's mapping (both mappings agree at 1)
             tut::kernel_of(sgemm_multi<1, Mapping::consecutive>)},
            {"multi=2 consecutive", run_multi<2, Mapping::consecutive>,
             tut::kernel_of(sgemm_multi<2, Mapping::consecutive>)},
            {"multi=4 consecutive", run_multi<4, Mapping::consecutive>,
             tut::kernel_of(sgemm_multi<4, Mapping::consecutive>)},
            {"multi=8 consecutive", run_multi<8, Mapping::consecutive>,
             tut::kernel_of(sgemm_multi<8, Mapping::consecutive>)},
            {"multi=2 strided", run_multi<2, Mapping::strided>, tut::kernel_of(sgemm_multi<2, Mapping::strided>)},
            {"multi=4 strided", run_multi<4, Mapping::strided>, tut::kernel_of(sgemm_multi<4, Mapping::strided>)},
            {"multi=8 strided", run_multi<8, Mapping::strided>, tut::kernel_of(sgemm_multi<8, Mapping::strided>)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "04_multi_output", "one thread, several outputs: consecutive vs strided"};
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
