// SGEMM lesson 4: a non 1-to-1 mapping. Each thread computes MULTI elements of a row of C.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/04_multi_output/multi_output.cu -lcublas -o multi_output
// Run:  ./multi_output --n 4096    (--help for options; --profile for one clean launch under ncu)
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

namespace {

constexpr int kBlock = 16;  // 16 x 16 = 256 threads per block, as in the course slides

// Which columns a thread's MULTI outputs are.
enum class Mapping {
    consecutive,  // the course slides' choice: thread x owns columns x*MULTI .. x*MULTI + MULTI-1
    strided,      // thread x owns columns x, x + 16, x + 32, ...: neighbouring threads, neighbouring columns
};

// Column of output m (0 <= m < MULTI) of thread x in a block whose first column is `first`.
// A block covers kBlock * MULTI columns either way; only the order inside it differs.
template <Mapping kMapping, int MULTI>
__device__ int column_of(int first, int x, int m) {
    return kMapping == Mapping::consecutive ? first + x * MULTI + m : first + m * kBlock + x;
}

// Thread (x, y) computes C[i][j] for i = y and MULTI columns j. The value A[i][k] is loaded
// once per k and used MULTI times (the hoped-for saving: MULTI times fewer A loads).
// The price depends on the mapping. At fixed m, a warp (16 x, 2 y) reads
//   consecutive: B[k][first + x*MULTI + m], 16 floats MULTI apart: the warp's request spans
//                16*MULTI floats, 2*MULTI sectors of which it uses 1/MULTI;
//   strided:     B[k][first + m*16 + x], 16 neighbouring floats: 2 sectors, all used,
// and the stores of C follow the same pattern. Registers grow with MULTI (MULTI sums) and
// the grid shrinks by MULTI, so fewer warps are there to hide latency. The tail test sits
// inside the k loop, which costs instructions (the README's "going further" moves it out).
template <int MULTI, Mapping kMapping>
__global__ void sgemm_multi(int n, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int first = blockIdx.x * kBlock * MULTI;
    if (i >= n) return;
    float sum[MULTI];
#pragma unroll
    for (int m = 0; m < MULTI; ++m) sum[m] = 0.0f;
    // TODO(exercise): this computes and stores only output m = 0; outputs 1 .. MULTI-1 stay
    //   unwritten. Make the accumulation and the store loop over m = 0 .. MULTI-1:
    //   - keep the load of a = A[i][k] outside the loop over m: one load, MULTI uses, is the point;
    //   - output m is column j = column_of<kMapping, MULTI>(first, threadIdx.x, m);
    //   - skip any j >= n, in the k loop and in the store: the last block overhangs the matrix;
    //   - put `#pragma unroll` on the loops over m: MULTI is a constant, so sum[] stays in
    //     registers (a runtime index would push it to local memory).
    for (int k = 0; k < n; ++k) {
        const float a = A[i * n + k];
        const int j = column_of<kMapping, MULTI>(first, threadIdx.x, 0);
        if (j < n) sum[0] += a * B[k * n + j];
    }
    const int j = column_of<kMapping, MULTI>(first, threadIdx.x, 0);
    if (j < n) C[i * n + j] = sum[0];
}

template <int MULTI, Mapping kMapping>
void run_multi(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    const dim3 block(kBlock, kBlock);
    const int columns_per_block = kBlock * MULTI;
    const dim3 grid((n + columns_per_block - 1) / columns_per_block, (n + kBlock - 1) / kBlock);
    sgemm_multi<MULTI, kMapping><<<grid, block>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_multi");
}

template <int MULTI, Mapping kMapping>
tut::sgemm::Variant variant(const char* name) {
    return {name, run_multi<MULTI, kMapping>, reinterpret_cast<const void*>(sgemm_multi<MULTI, kMapping>)};
}

}  // namespace

namespace lesson {
std::vector<tut::sgemm::Variant> sgemm_variants() {
    using M = Mapping;
    return {variant<1, M::consecutive>("1 per thread (lesson 1)"), variant<2, M::consecutive>("2 consecutive"),
            variant<4, M::consecutive>("4 consecutive"),          variant<8, M::consecutive>("8 consecutive"),
            variant<2, M::strided>("2 strided"),                  variant<4, M::strided>("4 strided"),
            variant<8, M::strided>("8 strided")};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"sgemm", "04_multi_output", "one thread, MULTI outputs: consecutive vs strided"};
    return tut::sgemm::lesson_main(argc, argv, info, lesson::sgemm_variants());
}
#endif
