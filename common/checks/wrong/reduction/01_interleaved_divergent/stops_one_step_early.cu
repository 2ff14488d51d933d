// wrong: reduction/01_interleaved_divergent: the loop runs while s < blockDim.x / 2, so the last step (sdata[0] += sdata[128]) never happens
// caught by: reduction/01_interleaved_divergent: double sums match
// kind: stopping-test
// each block sums only its first 128 elements: right up to n = 128, wrong at n = 1000003
// reduction/01_interleaved_divergent: a tree per block in shared memory, in passes until one value is left.
// Starts from: nothing; the track's baseline (Harris's kernel 1). Each block of 256 threads adds its 256
// elements with a binary tree in shared memory (interleaved addressing, a divergent branch); the same
// kernel then sums the blocks' partial sums, and again, until one value is left.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/01_interleaved_divergent/interleaved_divergent.cu -o interleaved_divergent
// Run:  ./interleaved_divergent      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Kernel and variants:
//   reduce_interleaved_divergent<T>       256 elements -> one partial sum per block (Harris's kernel 1)
//   "double", "float", "int", "complex"   passes of that kernel until one value is left
//
// Kernel 1 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;  // threads per block = elements each block reduces
static_assert(kThreads <= 1024 && (kThreads & (kThreads - 1)) == 0,
              "the tree halves the block at every step: a power of two, at most 1024 threads");

// Each block copies its kThreads elements into shared memory and adds them with a
// binary tree. At step s, every thread whose index is a multiple of 2s adds the value
// s places to its right:
//   s = 1:  0 += 1,  2 += 3,  4 += 5, ...
//   s = 2:  0 += 2,  4 += 6, ...
//   s = 4:  0 += 4, ...
// After log2(kThreads) steps the block's sum is in sdata[0]. __syncthreads() between
// steps: a step reads what other threads (other warps) wrote in the step before.
template <class T>
__global__ void reduce_interleaved_divergent(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    __shared__ T sdata[kThreads];  // launched with blockDim.x == kThreads
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    sdata[tid] = i < count ? in[i] : T{};  // the last block overhangs the input: pad with zeros
    __syncthreads();

    for (unsigned s = 1; s < blockDim.x / 2; s *= 2) {
        // Divergent: within a warp only the threads with tid % (2s) == 0 add, the others
        // idle through the same instructions; and % is a slow integer operation.
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

// ---- Plumbing: one launch per level of the tree ------------------------------------------

size_t blocks_for(size_t count) { return tut::reduction::ceil_div(count, kThreads); }

template <class T>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_interleaved_divergent<T><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_interleaved_divergent");
}

// n elements -> n/256 partial sums -> n/65536 -> ... -> 1: one launch per level, the
// partial sums in scratch from the workspace.
template <class T>
void run_sum(const T* in, size_t n, T* out, tut::reduction::Workspace& workspace) {
    tut::reduction::reduce_in_passes(in, n, out, workspace, blocks_for, launch_pass<T>);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
tut::reduction::Variants variants() {
    tut::reduction::Variants all;
    all.f64 = {{"double", run_sum<double>, tut::kernel_of(reduce_interleaved_divergent<double>, kThreads)}};
    all.f32 = {{"float", run_sum<float>, tut::kernel_of(reduce_interleaved_divergent<float>, kThreads)}};
    all.i32 = {{"int", run_sum<int>, tut::kernel_of(reduce_interleaved_divergent<int>, kThreads)}};
    all.c64 = {{"complex", run_sum<cuDoubleComplex>,
                tut::kernel_of(reduce_interleaved_divergent<cuDoubleComplex>, kThreads)}};
    return all;
}
}  // namespace lesson

namespace {

// The longest chain of additions an element goes through, which sets this table's error
// bound (the checks set their own): log2(256) = 8 per pass.
template <class T>
size_t depth(const tut::reduction::Variant<T>&, size_t n) {
    return tut::reduction::tree_depth(n, kThreads);
}
}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"reduction", "01_interleaved_divergent",
                                 "shared-memory tree, interleaved addressing, divergent branch (Harris kernel 1)"};
    const tut::reduction::Variants variants = lesson::variants();
    tut::reduction::Options options(lesson);  // --n (2^26), --type (double), --reruns (10), and every lesson's options
    options.parse(argc, argv, variants);
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        // One table per type that --type selects: its input, reference and CUB (the Problem), then its variants.
        tut::reduction::for_each_type(bench, options, variants, [&](auto& problem, const auto& of_type) {
            tut::Table table = problem.table();
            for (const auto& v : of_type) {
                if (!bench.runs(v)) continue;
                const size_t d = depth(v, options.n);
                const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(v.run, d); });
                const tut::Timing timing = bench.time(v.name, [&] { problem.run(v.run); }, problem.timing());
                const tut::reduction::Reruns reruns = problem.rerun(v.run);  // --reruns runs, compared bit for bit
                table.add_row(bench.record(problem.result(v, timing, verdict, d, reruns)));
            }
            table.add_row(problem.library_row());
            table.print();
        });
        return bench.exit_code();
    });
}
