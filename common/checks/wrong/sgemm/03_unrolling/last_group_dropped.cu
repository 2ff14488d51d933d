// wrong: sgemm/03_unrolling: hand-unrolled loop with the test k + kUnroll < kN: the last group of kUnroll products is never added
// caught by: sgemm/03_unrolling: compile-time kernels match the CPU reference at N = 256 and 512
// kind: other
// sgemm/03_unrolling: compile-time N and an unrolled k loop.
// Starts from: lesson 01's kernel. Adds: the same kernel with N a template parameter, so the
// trip count and every address stride are constants, and the k loop unrolled by kUnroll.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/03_unrolling/unrolling.cu -lcublas -o unrolling
// Run:  ./unrolling --n 4096       (--help for options; --profile for one clean launch under ncu)
//
// Kernels and variants:
//   sgemm_unrolled<kN, kUnroll>   "unroll=1", "unroll=4", "unroll=16"   N compiled in, k loop unrolled
//   sgemm_naive                   "runtime n"                           lesson 01's kernel, for comparison
// Only N = 256, 512, 1024, 2048, 4096, 8192 are compiled in; any other N is refused.
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

#include <string>

namespace {

constexpr int kBlockSide = 16;  // blocks of 16 x 16 = 256 threads, as in the course slides

// The sizes compiled in: one kernel per size (and unroll factor). All are multiples of
// kBlockSide, so no thread falls outside the matrix and the kernel needs no bounds check.
constexpr int kSupportedN[] = {256, 512, 1024, 2048, 4096, 8192};

// Lesson 01's computation with N a template parameter. What the compiler gains:
// - the trip count is known, so `#pragma unroll kUnroll` copies the body kUnroll times with
//   no remainder loop;
// - the addresses of the unrolled loads are constant offsets from one base: A[i*N + k + u]
//   is base + 4u bytes and B[(k + u)*N + j] is base + 4uN bytes, folded into the load
//   instructions' immediate offsets. Per FMA there is less integer arithmetic, fewer
//   loop-counter updates and branches, and more independent loads in flight per thread.
// - no bounds check: every supported N is a multiple of the block side.
template <int kN, int kUnroll>
__global__ void sgemm_unrolled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
    static_assert(kN % kBlockSide == 0, "the grid must tile N exactly: the kernel has no bounds check");
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    float sum = 0.0f;
    for (int k = 0; k + kUnroll < kN; k += kUnroll) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) sum += A[i * kN + k + u] * B[(k + u) * kN + j];
    }
    C[i * kN + j] = sum;
}

// Lesson 01's kernel, N known only at run time (nvcc unrolls its k loop by 4 on its own).
__global__ void sgemm_naive(int n, const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;  // the last blocks overhang when n is not a multiple of 16
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += A[i * n + k] * B[k * n + j];
    C[i * n + j] = sum;
}

template <int kN, int kUnroll>
void launch_unrolled(const float* A, const float* B, float* C) {
    const dim3 block(kBlockSide, kBlockSide);
    const dim3 grid(kN / kBlockSide, kN / kBlockSide);
    sgemm_unrolled<kN, kUnroll><<<grid, block>>>(A, B, C);
    TUT_LAUNCH("sgemm_unrolled");
}

// Runtime n -> the kernel compiled for it. This dispatch is the price of compile-time N:
// each size is a separate kernel in the binary, and sizes not listed cannot be computed.
template <int kUnroll>
void run_unrolled(int n, const float* A, const float* B, float* C) {
    switch (n) {
        case 256: return launch_unrolled<256, kUnroll>(A, B, C);
        case 512: return launch_unrolled<512, kUnroll>(A, B, C);
        case 1024: return launch_unrolled<1024, kUnroll>(A, B, C);
        case 2048: return launch_unrolled<2048, kUnroll>(A, B, C);
        case 4096: return launch_unrolled<4096, kUnroll>(A, B, C);
        case 8192: return launch_unrolled<8192, kUnroll>(A, B, C);
        default: {
            std::string list;
            for (int s : kSupportedN) list += (list.empty() ? "" : ", ") + std::to_string(s);
            throw tut::Unsupported("N = " + std::to_string(n) + " is not compiled in: the unrolled kernels exist for N = " +
                                   list + " only (N is a template parameter)");
        }
    }
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
    // The registers column shows the N = 4096 instance of each unrolled kernel (the others differ little).
    return {{"runtime n", run_naive, tut::kernel_of(sgemm_naive)},
            {"unroll=1", run_unrolled<1>, tut::kernel_of(sgemm_unrolled<4096, 1>)},
            {"unroll=4", run_unrolled<4>, tut::kernel_of(sgemm_unrolled<4096, 4>)},
            {"unroll=16", run_unrolled<16>, tut::kernel_of(sgemm_unrolled<4096, 16>)}};
}
/// The only N the compile-time variants accept (the checks read it too).
std::vector<int> supported_sizes() { return {std::begin(kSupportedN), std::end(kSupportedN)}; }
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "03_unrolling", "compile-time N and an unrolled k loop"};
    const std::vector<tut::sgemm::Variant> variants = lesson::variants();
    // --n must be one of the sizes compiled in: any other is a usage error (exit 2)
    tut::sgemm::Options options(lesson, 4096, lesson::supported_sizes());
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
