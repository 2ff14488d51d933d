// wrong: reduction/03_sequential: the folding loop runs while s > 1, so the last fold (sdata[0] += sdata[1]) never happens
// caught by: reduction/03_sequential: double sums match
// kind: stopping-test
// every block loses the half of its sum that ends in sdata[1]: wrong from n = 2 on (n = 31)
// reduction/03_sequential: sequential addressing, the upper half of what is left folded onto the lower.
// Starts from: lesson 2's kernel. Adds: contiguous working threads and stride-1 shared-memory accesses,
// so no divergence above 32 threads and no bank conflicts.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/03_sequential/sequential.cu -o sequential
// Run:  ./sequential      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Kernel and variants:
//   reduce_sequential<T>                  256 elements -> one partial sum per block (Harris's kernel 3)
//   "double", "float", "int", "complex"   passes of that kernel until one value is left
//
// Kernel 3 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;  // threads per block = elements each block reduces
static_assert(kThreads <= 1024 && (kThreads & (kThreads - 1)) == 0,
              "the tree halves the block at every step: a power of two, at most 1024 threads");

// A different tree: fold the upper half of the array onto the lower half, then the
// upper half of what is left, and so on:
//   s = 128:  thread k: k += k + 128   (k < 128)
//   s = 64:   thread k: k += k + 64    (k < 64)
//   ...
//   s = 1:    thread 0: 0 += 1
// Working threads are contiguous (no divergence above 32 threads), and consecutive
// threads read consecutive elements (stride 1): every shared-memory access of a warp
// is served in the minimum number of passes, with no bank conflicts.
template <class T>
__global__ void reduce_sequential(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    __shared__ T sdata[kThreads];  // launched with blockDim.x == kThreads
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    sdata[tid] = i < count ? in[i] : T{};  // the last block overhangs the input: pad with zeros
    __syncthreads();

    for (unsigned s = blockDim.x / 2; s > 1; s /= 2) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

// ---- Plumbing: one launch per level of the tree ------------------------------------------

size_t blocks_for(size_t count) { return tut::reduction::ceil_div(count, kThreads); }

template <class T>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_sequential<T><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_sequential");
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
    all.f64 = {{"double", run_sum<double>, tut::kernel_of(reduce_sequential<double>, kThreads)}};
    all.f32 = {{"float", run_sum<float>, tut::kernel_of(reduce_sequential<float>, kThreads)}};
    all.i32 = {{"int", run_sum<int>, tut::kernel_of(reduce_sequential<int>, kThreads)}};
    all.c64 = {{"complex", run_sum<cuDoubleComplex>, tut::kernel_of(reduce_sequential<cuDoubleComplex>, kThreads)}};
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
    const tut::LessonInfo lesson{"reduction", "03_sequential",
                                 "sequential addressing: no divergence, no bank conflicts (Harris kernel 3)"};
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
