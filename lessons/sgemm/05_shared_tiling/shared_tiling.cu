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
        // TODO(exercise): one step of the tiled product, for the tile of A that starts at
        //   column t and the tile of B that starts at row t: add this thread's products over
        //   k = t .. t + kTile - 1 to `sum`.
        //   - Loading: the block's kTile x kTile threads copy the two tiles together, one
        //     element of each per thread. Choose which element so that a warp (consecutive
        //     tx) reads consecutive addresses of A and of B, as lesson 01's warps did.
        //   - Edges: when n is not a multiple of kTile the last tiles stick out of the
        //     matrix. What value, stored there, leaves every dot product unchanged?
        //   - Order: shared memory is written by some threads and read by others. No thread
        //     may read a tile before all of it is written, and none may start overwriting it
        //     (next step) while others still read it. That is two waits per step, for the
        //     whole block; this is also why no thread may return early from this kernel.
        //   - Then every thread reads its row of the A tile and its column of the B tile from
        //     shared memory: kTile products, no global memory access.
        (void)As;  // unused until the TODO is done
        (void)Bs;
        (void)A;
        (void)B;
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
