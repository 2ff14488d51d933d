// wrong: sgemm/05_shared_tiling: no barrier after the products: the next iteration overwrites the tiles while slower warps still read them
// caught by: sanitizer: racecheck
// kind: race
// A write-after-read hazard on As and Bs between warps; at large N it often gives wrong elements too.
// sgemm/05_shared_tiling: shared-memory tiling, square tiles of 8, 16 and 32.
// Starts from: lesson 01's kernel (one thread per element of C), not lesson 04's. Adds: the
// block stages a tile of A and a tile of B in shared memory, and every element it brings in
// from global memory serves kTile threads.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/05_shared_tiling/shared_tiling.cu -lcublas -o shared_tiling
// Run:  ./shared_tiling --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// Kernel and variants:
//   sgemm_tiled<kTile>   "tile=8", "tile=16", "tile=32"   kTile x kTile threads, kTile x kTile tiles
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

namespace {

// A kTile x kTile block of threads computes a kTile x kTile block of C, one element per
// thread as in the naive kernel. The k loop now walks the matrices one tile at a time:
// the block copies a kTile x kTile tile of A and one of B into shared memory (each thread
// one element of each, coalesced), waits, and then every thread reads kTile values of A
// and kTile values of B from shared memory. Each element brought from global memory is
// thus used kTile times, so global traffic drops by a factor of kTile.
//
// N need not be a multiple of kTile: elements outside the matrix are loaded as zeros (they
// add nothing to the dot product) and threads outside the matrix skip the store. No thread
// may return early, because every thread must reach both __syncthreads().
template <int kTile>
__global__ void __launch_bounds__(kTile * kTile) sgemm_tiled(int n, const float* __restrict__ A,
                                                             const float* __restrict__ B, float* __restrict__ C) {
    static_assert(kTile * kTile <= 1024, "one thread per element of a tile: at most 1024 threads a block");
    __shared__ float As[kTile][kTile];  // A[i0 .. i0+kTile)[t .. t+kTile)
    __shared__ float Bs[kTile][kTile];  // B[t .. t+kTile)[j0 .. j0+kTile)
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int j = blockIdx.x * kTile + tx;  // j follows threadIdx.x: coalesced, as in lesson 01
    const int i = blockIdx.y * kTile + ty;
    float sum = 0.0f;
    for (int t = 0; t < n; t += kTile) {
        As[ty][tx] = (i < n && t + tx < n) ? A[i * n + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < n && j < n) ? B[(t + ty) * n + j] : 0.0f;
        __syncthreads();  // both tiles complete before anyone reads them
#pragma unroll
        for (int k = 0; k < kTile; ++k) sum += As[ty][k] * Bs[k][tx];
    }
    if (i < n && j < n) C[i * n + j] = sum;
}

template <int kTile>
void run_tiled(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    const dim3 block(kTile, kTile);
    const dim3 grid((n + kTile - 1) / kTile, (n + kTile - 1) / kTile);
    sgemm_tiled<kTile><<<grid, block>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_tiled");
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    return {{"tile=8", run_tiled<8>, tut::kernel_of(sgemm_tiled<8>)},
            {"tile=16", run_tiled<16>, tut::kernel_of(sgemm_tiled<16>)},
            {"tile=32", run_tiled<32>, tut::kernel_of(sgemm_tiled<32>)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "05_shared_tiling", "shared-memory tiling: square tiles of 8, 16, 32"};
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
