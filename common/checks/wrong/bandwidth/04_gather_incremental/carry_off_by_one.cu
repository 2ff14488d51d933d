// wrong: bandwidth/04_gather_incremental: the row carries into the next column only when row > rows, so row == rows reads row 0 of the source column after indices[col]
// caught by: bandwidth/04_gather_incremental: small shapes
// kind: edges
// with the indices 0, 1, 2, ... that is the right element by luck; reversed or random indices
// at 1000 x 50 (more elements than the classic grid's 16384 threads) show it
// bandwidth/04_gather_incremental: the column gather without a division in its loop.
// Starts from: lesson 03's kernel. Adds: incremental indices: the grid stride is split into
// whole columns and leftover rows once, then each step of the loop only adds.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/bandwidth/04_gather_incremental/gather_incremental.cu -o gather_incremental
// Run:  ./gather_incremental       (--classic for 1000 x 20000, columns 0..9999; --help for options)
//
// Kernel and the variants (--variant names) that launch it:
//   gather_incremental   "incremental, 64x256 (classic launch)"   64 blocks of 256 threads
//                        "incremental, full grid"                 as many blocks as fit on the GPU
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

// Same walk as lesson 03, but j = col * rows + row is kept as the pair (col, row), and
// each step moves the pair on by `stride` elements with additions only. A thread divides
// before its loop (its first element, and the stride), never inside it.
__global__ void gather_incremental(int rows, int total, const float* __restrict__ src,
                                   const int* __restrict__ indices, float* __restrict__ tgt) {
    const int stride = gridDim.x * blockDim.x;
    const int stride_div = stride / rows, stride_rem = stride % rows;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int col = j / rows, row = j % rows;
    for (; j < total; j += stride) {
        tgt[j] = src[indices[col] * rows + row];
        col += stride_div;
        row += stride_rem;
        if (row > rows) {  // row < rows and stride_rem < rows, so one carry is enough
            row -= rows;
            ++col;
        }
    }
}

// kClassic: 64 x 256 threads as in the original answer; otherwise a grid that fills the
// GPU (as many 256-thread blocks as fit on every SM at once, lesson 02).
// Returns "": one path only (the table's path column shows "-").
template <bool kClassic>
std::string run_incremental(const tut::bandwidth::GatherInput& in, float* tgt) {
    tut::bandwidth::require_gather(in, tgt);
    if (in.count == 0) return "";
    const int total = in.rows * in.count;
    const int blocks = kClassic ? kClassicBlocks : tut::bandwidth::full_grid_blocks(gather_incremental, kThreads, total);
    gather_incremental<<<blocks, kThreads>>>(in.rows, total, in.src, in.indices, tgt);
    TUT_LAUNCH("gather_incremental");
    return "";
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::bandwidth::GatherVariant> variants() {
    return {{"incremental, 64x256 (classic launch)", run_incremental<true>,
             tut::kernel_of(gather_incremental, kThreads)},
            {"incremental, full grid", run_incremental<false>, tut::kernel_of(gather_incremental, kThreads)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"bandwidth", "04_gather_incremental",
                                 "column gather, stride split into div/rem once, additions only"};
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
