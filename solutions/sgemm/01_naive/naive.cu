// SGEMM lesson 1: the naive kernel, one thread per element of C.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/sgemm/01_naive/naive.cu -lcublas -o naive
// Run:  ./naive --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

namespace {

constexpr int kBlock = 16;  // 16 x 16 = 256 threads per block, as in the course slides

// Thread (x, y) of the grid computes C[i][j] with j = x and i = y.
// j follows threadIdx.x, so the 32 threads of a warp (consecutive threadIdx.x) read
// 32 consecutive B[k][j] and write 32 consecutive C[i][j]: each warp access is one
// coalesced 128-byte transaction, and A[i][k] is the same address for the whole warp
// (a broadcast). Swapping i and j would make every warp access touch 32 rows.
__global__ void sgemm_naive(int n, const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;  // the last blocks overhang when n is not a multiple of 16
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += A[i * n + k] * B[k * n + j];
    C[i * n + j] = sum;
}

void run_naive(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    const dim3 block(kBlock, kBlock);
    const dim3 grid((n + kBlock - 1) / kBlock, (n + kBlock - 1) / kBlock);
    sgemm_naive<<<grid, block>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_naive");
}

}  // namespace

namespace lesson {
std::vector<tut::sgemm::Variant> sgemm_variants() {
    return {{"naive 16x16", run_naive, reinterpret_cast<const void*>(sgemm_naive)}};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"sgemm", "01_naive", "naive SGEMM, one thread per element of C"};
    return tut::sgemm::lesson_main(argc, argv, info, lesson::sgemm_variants());
}
#endif
