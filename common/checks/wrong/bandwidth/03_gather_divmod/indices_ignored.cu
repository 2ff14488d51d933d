// wrong: bandwidth/03_gather_divmod: the element is read from source column col, the extracted column's number, instead of indices[col]
// caught by: bandwidth/03_gather_divmod: small shapes
// kind: other
// right only for the indices 0, 1, 2, ...: wrong for repeated and out-of-order indices
// bandwidth/03_gather_divmod: extracting columns, tgt = src(:, indices): the classic first version.
// Starts from: lesson 02's grid-stride copy loop. Adds: the column gather, walked as one flat
// target index j by a grid-stride loop that finds each element's column and row with / and %.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/bandwidth/03_gather_divmod/gather_divmod.cu -o gather_divmod
// Run:  ./gather_divmod            (--classic for 1000 x 20000, columns 0..9999; --help for options)
//
// Kernel and the variants (--variant names) that launch it:
//   gather_divmod   "div and mod, 64x256 (classic launch)"   64 blocks of 256 threads
//                   "div and mod, full grid"                 as many blocks as fit on the GPU
//
// Column-major: element (r, c) of the rows x cols source is src[c * rows + r]; the target
// is rows x count and its column k is source column indices[k]. Flat target index
// j = k * rows + r, so one pass over j writes tgt contiguously.
#include "tut/bandwidth.hpp"

#include <string>
#include <vector>

namespace {

constexpr int kThreads = 256;
constexpr int kClassicBlocks = 64;  // the original answer's launch: 64 blocks x 256 threads
static_assert(kThreads % 32 == 0, "blocks of whole warps: a warp's 32 consecutive j are one coalesced request");

// Each thread walks j = tid, tid + stride, ... over the rows x count target. Consecutive
// threads take consecutive j, hence (within a column) consecutive rows: the loads from
// src and the stores to tgt are coalesced. The price: the GPU has no integer divide
// instruction, so j / rows and j % rows become a sequence of about a dozen instructions
// per element (nvcc 13.0, sm_90: 27 per element in this loop against 15 in lesson 04's).
__global__ void gather_divmod(int rows, int total, const float* __restrict__ src, const int* __restrict__ indices,
                              float* __restrict__ tgt) {
    const int stride = gridDim.x * blockDim.x;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < total; j += stride) {
        const int col = j / rows;  // which extracted column
        const int row = j % rows;  // which row of it
        tgt[j] = src[col * rows + row];
    }
}

// kClassic: 64 x 256 threads as in the original answer; otherwise a grid that fills the
// GPU (as many 256-thread blocks as fit on every SM at once, lesson 02).
// Returns "": one path only (the table's path column shows "-").
template <bool kClassic>
std::string run_divmod(const tut::bandwidth::GatherInput& in, float* tgt) {
    tut::bandwidth::require_gather(in, tgt);
    if (in.count == 0) return "";
    const int total = in.rows * in.count;
    const int blocks = kClassic ? kClassicBlocks : tut::bandwidth::full_grid_blocks(gather_divmod, kThreads, total);
    gather_divmod<<<blocks, kThreads>>>(in.rows, total, in.src, in.indices, tgt);
    TUT_LAUNCH("gather_divmod");
    return "";
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::bandwidth::GatherVariant> variants() {
    return {{"div and mod, 64x256 (classic launch)", run_divmod<true>, tut::kernel_of(gather_divmod, kThreads)},
            {"div and mod, full grid", run_divmod<false>, tut::kernel_of(gather_divmod, kThreads)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"bandwidth", "03_gather_divmod",
                                 "column gather, grid-stride loop with j / rows, j % rows"};
    const std::vector<tut::bandwidth::GatherVariant> variants = lesson::variants();
    tut::bandwidth::GatherOptions options(lesson);  // --rows, --cols, --count, --order, --classic and the usual options
    options.parse(argc, argv, tut::names_of(variants));
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        tut::bandwidth::GatherProblem problem(bench, options.size);  // src, indices, cudaMemcpy D2D of the same bytes
        tut::Table table = problem.table();
        for (const tut::bandwidth::GatherVariant& v : variants) {
            if (!bench.runs(v)) continue;
            const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(v.run); });
            const tut::Timing timing = bench.time(v.name, [&] { problem.run(v.run); }, tut::bandwidth::kFlushL2);
            table.add_row(bench.record(problem.result(v, timing, verdict)));
        }
        table.add_row(problem.library_row());
        table.print();
        return bench.exit_code();
    });
}
