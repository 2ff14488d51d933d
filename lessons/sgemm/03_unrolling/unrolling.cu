// SGEMM lesson 3: unrolling. N becomes a compile-time constant and the k loop is unrolled.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/03_unrolling/unrolling.cu -lcublas -o unrolling
// Run:  ./unrolling --n 4096       (--help for options; --profile for one clean launch under ncu)
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
// Only N = 256, 512, 1024, 2048, 4096, 8192 are compiled in; any other N is refused.
#include "tut/sgemm.hpp"

#include <string>

namespace {

constexpr int kBlock = 16;  // 16 x 16 = 256 threads per block, as in the course slides

// The sizes compiled in: one kernel per size (and unroll factor). All are multiples of
// kBlock, so no thread falls outside the matrix and the kernel needs no bounds check.
constexpr int kSupportedN[] = {256, 512, 1024, 2048, 4096, 8192};

// Lesson 1's kernel, N known only at run time (nvcc unrolls its k loop by 4 on its own).
__global__ void sgemm_naive(int n, const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;  // the last blocks overhang when n is not a multiple of 16
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += A[i * n + k] * B[k * n + j];
    C[i * n + j] = sum;
}

// The same computation with N a template parameter. What the compiler gains:
// - the trip count is known, so `#pragma unroll UNROLL` copies the body UNROLL times with
//   no remainder loop;
// - the addresses of the unrolled loads are constant offsets from one base: A[i*N + k + u]
//   is base + 4u bytes and B[(k + u)*N + j] is base + 4uN bytes, folded into the load
//   instructions' immediate offsets. Per FMA there is less integer arithmetic, fewer
//   loop-counter updates and branches, and more independent loads in flight per thread.
// - no bounds check: every supported N is a multiple of the block size.
template <int N, int UNROLL>
__global__ void sgemm_unrolled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
    static_assert(N % kBlock == 0, "the grid must tile N exactly: the kernel has no bounds check");
    // TODO(exercise): the body of sgemm_naive above, with the runtime n replaced by the
    //   template parameter N:
    //   1. i and j as in sgemm_naive (j from x, i from y). No bounds check: see the comment above.
    //   2. Put `#pragma unroll UNROLL` on the line just before the k loop (the template
    //      parameter is a constant expression, which is what the pragma needs).
    //   3. Accumulate in a float register and store C[i * N + j] once.
    //   Then look at the registers column of the table, and at the README's ncu section.
    (void)A, (void)B, (void)C;
}

void run_naive(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    const dim3 block(kBlock, kBlock);
    const dim3 grid((n + kBlock - 1) / kBlock, (n + kBlock - 1) / kBlock);
    sgemm_naive<<<grid, block>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_naive");
}

std::vector<int> supported_sizes() { return {std::begin(kSupportedN), std::end(kSupportedN)}; }

template <int N, int UNROLL>
void launch_unrolled(const float* A, const float* B, float* C) {
    const dim3 block(kBlock, kBlock);
    const dim3 grid(N / kBlock, N / kBlock);
    sgemm_unrolled<N, UNROLL><<<grid, block>>>(A, B, C);
    TUT_LAUNCH("sgemm_unrolled");
}

// Runtime n -> the kernel compiled for it. This dispatch is the price of compile-time N:
// each size is a separate kernel in the binary, and sizes not listed cannot be computed.
template <int UNROLL>
void run_unrolled(int n, const float* A, const float* B, float* C) {
    switch (n) {
        case 256: return launch_unrolled<256, UNROLL>(A, B, C);
        case 512: return launch_unrolled<512, UNROLL>(A, B, C);
        case 1024: return launch_unrolled<1024, UNROLL>(A, B, C);
        case 2048: return launch_unrolled<2048, UNROLL>(A, B, C);
        case 4096: return launch_unrolled<4096, UNROLL>(A, B, C);
        case 8192: return launch_unrolled<8192, UNROLL>(A, B, C);
        default: {
            std::string list;
            for (int s : kSupportedN) list += (list.empty() ? "" : ", ") + std::to_string(s);
            throw tut::Unsupported("N = " + std::to_string(n) + " is not compiled in: the unrolled kernels exist for N = " +
                                   list + " only (N is a template parameter)");
        }
    }
}

// The kernel whose registers the table shows: the N = 4096 instance (others differ little).
template <int UNROLL>
const void* unrolled_kernel() {
    return reinterpret_cast<const void*>(sgemm_unrolled<4096, UNROLL>);
}

}  // namespace

namespace lesson {
std::vector<tut::sgemm::Variant> sgemm_variants() {
    return {{"runtime n (lesson 1)", run_naive, reinterpret_cast<const void*>(sgemm_naive)},
            {"compile-time N, unroll 1", run_unrolled<1>, unrolled_kernel<1>()},
            {"compile-time N, unroll 4", run_unrolled<4>, unrolled_kernel<4>()},
            {"compile-time N, unroll 16", run_unrolled<16>, unrolled_kernel<16>()}};
}
/// The only N the compile-time variants accept (the checks read it too).
std::vector<int> sgemm_supported_sizes() { return supported_sizes(); }
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"sgemm", "03_unrolling", "compile-time N and an unrolled k loop"};
    return tut::sgemm::lesson_main(argc, argv, info, lesson::sgemm_variants(), 4096, lesson::sgemm_supported_sizes());
}
#endif
