// bandwidth/05_gather_constant: the column gather with its indices in __constant__ memory.
// Starts from: lesson 04's kernel. Adds: the stride's div/rem computed once on the host, and
// the indices in __constant__ memory (read through the read-only data cache when there are
// more than fit).
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/bandwidth/05_gather_constant/gather_constant.cu -o gather_constant
// Run:  ./gather_constant          (--classic for 1000 x 20000, columns 0..9999; --help for options)
//
// Kernel and the variants (--variant names) that launch it:
//   gather_precomputed<true>    "precomputed + const, 64x256 (classic launch)"   indices in __constant__
//                               "precomputed + const, full grid"                 (read-only cache beyond 16384)
//   gather_precomputed<false>   "precomputed + read-only cache, full grid"       indices from global memory
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

// __constant__ memory is 64 KiB per module, read through a small per-SM cache that
// serves one address per warp per cycle: ideal when a whole warp reads the same index,
// as here (32 consecutive j share a column unless the warp straddles two).
constexpr int kConstantIndices = 64 * 1024 / sizeof(int);  // 16384
static_assert(kConstantIndices * sizeof(int) <= 64 * 1024, "__constant__ memory holds 64 KiB per module");
__constant__ int c_indices[kConstantIndices];

// Lesson 04's loop with the stride's div/rem as arguments (uniform, computed on the
// host once per launch) and the index read from __constant__ (kConstant) or, when there
// are more indices than fit, from global memory through the read-only data cache: for
// a const __restrict__ pointer the compiler emits the non-coherent load (ld.global.nc)
// by itself. (The __ldg() intrinsic asks for the same load, but with nvcc 13.0 it kept
// this loop from being unrolled, and the unrolled loop keeps more loads in flight.)
template <bool kConstant>
__global__ void gather_precomputed(int rows, int total, int stride_div, int stride_rem, const float* __restrict__ src,
                                   const int* __restrict__ indices, float* __restrict__ tgt) {
    const int stride = gridDim.x * blockDim.x;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int col = j / rows, row = j % rows;
    for (; j < total; j += stride) {
        // TODO(exercise) part 1 of 2: the kernel's use of the precomputed values. Element j is
        //   tgt(row, col) = src(row, index of column col); gather it, then move (col, row) on to
        //   element j + stride.
        //   - The index: kConstant, fixed at compile time, names this kernel's path. Which memory
        //     does each path read the index from, and which copy of the indices is that?
        //   - A warp's 32 lanes read the index of their column together. How many different
        //     addresses is that, mostly, and why does that suit the constant cache (above)?
        //   - The step is lesson 04's, additions only, but the stride's whole columns and leftover
        //     rows now come in as arguments (part 2 computes them): no / or % inside this loop.
        (void)stride_div;  // unused until the TODO is done
        (void)stride_rem;
        (void)src;
        (void)c_indices;
        (void)indices;
        (void)tgt;
        (void)col;
        (void)row;
    }
}

bool fits_constant(const tut::bandwidth::GatherInput& in) { return in.count <= kConstantIndices; }

std::string index_path(const tut::bandwidth::GatherInput& in) {
    return fits_constant(in) ? "__constant__"
                             : "read-only cache: " + std::to_string(in.count) + " indices > " +
                                   std::to_string(kConstantIndices);
}

// kClassic: 64 x 256 threads as in the original answer; otherwise a grid that fills the
// GPU (as many 256-thread blocks as fit on every SM at once, lesson 02).
// kReadOnlyOnly: skip __constant__ even when the indices fit (for comparison).
// Returns the path it takes for this input (the table's path column).
template <bool kClassic, bool kReadOnlyOnly>
std::string run_precomputed(const tut::bandwidth::GatherInput& in, float* tgt) {
    tut::bandwidth::require_gather(in, tgt);
    const std::string path = kReadOnlyOnly ? "read-only cache" : index_path(in);
    if (in.count == 0) return path;
    const int total = in.rows * in.count;
    const int blocks =
        kClassic ? kClassicBlocks : tut::bandwidth::full_grid_blocks(gather_precomputed<true>, kThreads, total);
    // TODO(exercise) part 2 of 2: the host's share of the work, done once per launch, and the
    //   launch itself: gather_precomputed<true> (the __constant__ path) or <false> (the read-only
    //   cache), blocks x kThreads threads.
    //   1. The split: the kernel moves (col, row) on by the grid's stride with additions only and
    //      takes the stride's whole columns and leftover rows as arguments. What is the stride of
    //      this launch, and why is this the place to divide it?
    //   2. The table: on the __constant__ path the kernel reads c_indices, which holds whatever the
    //      last upload left there. Before that launch, fill it with this call's in.count indices.
    //      They are already in device memory (in.indices), so they need not come back through the
    //      host; the upload must be ordered before the kernel on the same stream, and every CUDA
    //      call checked (TUT_CUDA). Hint: the runtime copies into a __constant__ symbol with calls
    //      of its own (Programming Guide, "Device Memory"); one is asynchronous and takes a kind.
    //      What unit does its size count in?
    //   3. The choice: `path` above names the path this call reports. Which launches may take the
    //      __constant__ path, given what this variant asks for and what c_indices can hold?
    (void)total;  // unused until the TODO is done
    (void)blocks;
    TUT_LAUNCH("gather_precomputed");
    return path;
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::bandwidth::GatherVariant> variants() {
    return {{"precomputed + const, 64x256 (classic launch)", run_precomputed<true, false>,
             tut::kernel_of(gather_precomputed<true>, kThreads)},
            {"precomputed + read-only cache, full grid", run_precomputed<false, true>,
             tut::kernel_of(gather_precomputed<false>, kThreads)},
            {"precomputed + const, full grid", run_precomputed<false, false>,
             tut::kernel_of(gather_precomputed<true>, kThreads)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"bandwidth", "05_gather_constant",
                                 "column gather, host-computed div/rem, indices in __constant__ memory"};
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
