// Bandwidth lesson 3: extracting columns, tgt = src(:, indices), the classic first version:
// a grid-stride loop that finds each element's column and row with / and %.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/bandwidth/03_gather_divmod/gather_divmod.cu -o gather_divmod
// Run:  ./gather_divmod            (--classic for 1000 x 20000, columns 0..9999; --help for options)
//
// Column-major: element (r, c) of the rows x cols source is src[c * rows + r]; the target
// is rows x count and its column k is source column indices[k]. Flat target index
// j = k * rows + r, so one pass over j writes tgt contiguously.
#include "tut/bandwidth.hpp"

namespace {

constexpr int kThreads = 256;
constexpr int kClassicBlocks = 64;  // the original answer's launch: 64 blocks x 256 threads

// Each thread walks j = tid, tid + stride, ... over the rows x count target. Consecutive
// threads take consecutive j, hence (within a column) consecutive rows: the loads from
// src and the stores to tgt are coalesced. The price: an integer division and a modulo
// per element, which the GPU has no instruction for (a few dozen instructions each).
__global__ void gather_divmod(int rows, int total, const float* __restrict__ src, const int* __restrict__ indices,
                              float* __restrict__ tgt) {
    // TODO(exercise): a grid-stride loop over the target's flat index j in 0..total-1
    //   (total = rows * count): start at this thread's global index, step by the number
    //   of threads in the grid. For each j find the extracted column (j / rows) and the
    //   row (j % rows), then copy: tgt[j] = src[indices[column] * rows + row].
    (void)rows, (void)total, (void)src, (void)indices, (void)tgt;
}

// kClassic: 64 x 256 threads as in the original answer; otherwise a grid that fills the
// GPU (as many 256-thread blocks as fit on every SM at once, lesson 02).
template <bool kClassic>
void run_divmod(const tut::bandwidth::GatherInput& in, float* tgt) {
    tut::bandwidth::require_gather(in, tgt);
    if (in.count == 0) return;
    const int total = in.rows * in.count;
    const int blocks = kClassic ? kClassicBlocks : tut::bandwidth::full_grid_blocks(gather_divmod, kThreads, total);
    gather_divmod<<<blocks, kThreads>>>(in.rows, total, in.src, in.indices, tgt);
    TUT_LAUNCH("gather_divmod");
}

}  // namespace

namespace lesson {
std::vector<tut::bandwidth::GatherVariant> gather_variants() {
    const void* kernel = reinterpret_cast<const void*>(gather_divmod);
    return {{"div and mod, 64x256 (classic launch)", run_divmod<true>, kernel, nullptr},
            {"div and mod, full grid", run_divmod<false>, kernel, nullptr}};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"bandwidth", "03_gather_divmod", "column gather, grid-stride loop with j / rows, j % rows"};
    return tut::bandwidth::gather_main(argc, argv, info, lesson::gather_variants());
}
#endif
