// wrong: reduction/02_interleaved_strided: the strided tree's steps run without __syncthreads() between them
// caught by: sanitizer: racecheck
// kind: race
// step s reads elements that other warps wrote in step s / 2, with no barrier between
// reduction/02_interleaved_strided: lesson 1's tree with the additions handed to threads 0, 1, 2, ...
// Starts from: lesson 1's kernel. Adds: a strided index, so whole warps work or idle and no modulo is
// left, at the price of shared-memory bank conflicts.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/02_interleaved_strided/interleaved_strided.cu -o interleaved_strided
// Run:  ./interleaved_strided      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Kernel and variants:
//   reduce_interleaved_strided<T>         256 elements -> one partial sum per block (Harris's kernel 2)
//   "double", "float", "int", "complex"   passes of that kernel until one value is left
//
// Kernel 2 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;  // threads per block = elements each block reduces
static_assert(kThreads <= 1024 && (kThreads & (kThreads - 1)) == 0,
              "the tree halves the block at every step: a power of two, at most 1024 threads");

// The same tree as lesson 1 (at step s, element 2s*k += element 2s*k + s), but the
// work goes to threads 0, 1, 2, ... instead of to threads 0, 2s, 4s, ...:
//   s = 1:  thread 0: 0 += 1,  thread 1: 2 += 3,  thread 2: 4 += 5, ...
//   s = 2:  thread 0: 0 += 2,  thread 1: 4 += 6, ...
// The working threads are now contiguous, so whole warps either work or skip: no
// divergence until fewer than 32 threads are left. But thread k touches element 2s*k,
// a stride of 2s elements, and shared memory serves such strides in several passes.
template <class T>
__global__ void reduce_interleaved_strided(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    __shared__ T sdata[kThreads];  // launched with blockDim.x == kThreads
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    sdata[tid] = i < count ? in[i] : T{};  // the last block overhangs the input: pad with zeros
    __syncthreads();

    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        const unsigned index = 2 * s * tid;
        if (index < blockDim.x) sdata[index] += sdata[index + s];
    }
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

// ---- Plumbing: one launch per level of the tree ------------------------------------------

size_t blocks_for(size_t count) { return tut::reduction::ceil_div(count, kThreads); }

template <class T>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_interleaved_strided<T><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_interleaved_strided");
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
    all.f64 = {{"double", run_sum<double>, tut::kernel_of(reduce_interleaved_strided<double>, kThreads)}};
    all.f32 = {{"float", run_sum<float>, tut::kernel_of(reduce_interleaved_strided<float>, kThreads)}};
    all.i32 = {{"int", run_sum<int>, tut::kernel_of(reduce_interleaved_strided<int>, kThreads)}};
    all.c64 = {{"complex", run_sum<cuDoubleComplex>,
                tut::kernel_of(reduce_interleaved_strided<cuDoubleComplex>, kThreads)}};
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
    const tut::LessonInfo lesson{
        "reduction", "02_interleaved_strided",
        "interleaved addressing, strided index: no divergence, bank conflicts (Harris kernel 2)"};
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
