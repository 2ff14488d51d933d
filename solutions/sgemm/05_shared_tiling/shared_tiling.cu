// SGEMM lesson 5: shared-memory tiling, square tiles of 8, 16 and 32.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/sgemm/05_shared_tiling/shared_tiling.cu -lcublas -o shared_tiling
// Run:  ./shared_tiling --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

namespace {

// A TILE x TILE block of threads computes a TILE x TILE block of C, one element per
// thread as in the naive kernel. The k loop now walks the matrices one tile at a time:
// the block copies a TILE x TILE tile of A and one of B into shared memory (each thread
// one element of each, coalesced), waits, and then every thread reads TILE values of A
// and TILE values of B from shared memory. Each element brought from global memory is
// thus used TILE times, so global traffic drops by a factor of TILE.
//
// N need not be a multiple of TILE: elements outside the matrix are loaded as zeros (they
// add nothing to the dot product) and threads outside the matrix skip the store. No thread
// may return early, because every thread must reach both __syncthreads().
template <int TILE>
__global__ void __launch_bounds__(TILE * TILE) sgemm_tiled(int n, const float* __restrict__ A,
                                                           const float* __restrict__ B, float* __restrict__ C) {
    __shared__ float As[TILE][TILE];  // A[i0 .. i0+TILE)[t .. t+TILE)
    __shared__ float Bs[TILE][TILE];  // B[t .. t+TILE)[j0 .. j0+TILE)
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int j = blockIdx.x * TILE + tx;  // j follows threadIdx.x: coalesced, as in lesson 1
    const int i = blockIdx.y * TILE + ty;
    float sum = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        As[ty][tx] = (i < n && t + tx < n) ? A[i * n + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < n && j < n) ? B[(t + ty) * n + j] : 0.0f;
        __syncthreads();  // both tiles complete before anyone reads them
#pragma unroll
        for (int k = 0; k < TILE; ++k) sum += As[ty][k] * Bs[k][tx];
        __syncthreads();  // everyone done with these tiles before the next iteration overwrites them
    }
    if (i < n && j < n) C[i * n + j] = sum;
}

template <int TILE>
void run_tiled(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    const dim3 block(TILE, TILE);
    const dim3 grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    sgemm_tiled<TILE><<<grid, block>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_tiled");
}

}  // namespace

namespace lesson {
std::vector<tut::sgemm::Variant> sgemm_variants() {
    return {{"tile=8", run_tiled<8>, reinterpret_cast<const void*>(sgemm_tiled<8>)},
            {"tile=16", run_tiled<16>, reinterpret_cast<const void*>(sgemm_tiled<16>)},
            {"tile=32", run_tiled<32>, reinterpret_cast<const void*>(sgemm_tiled<32>)}};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"sgemm", "05_shared_tiling", "shared-memory tiling: square tiles of 8, 16, 32"};
    return tut::sgemm::lesson_main(argc, argv, info, lesson::sgemm_variants());
}
#endif
