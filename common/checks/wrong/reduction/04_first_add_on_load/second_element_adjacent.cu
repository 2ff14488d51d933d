// wrong: reduction/04_first_add_on_load: each thread's second element is in[i + 1] instead of in[i + blockDim.x]: elements are added twice and half of each block's range never
// caught by: reduction/04_first_add_on_load: double sums match
// kind: sampling
// wrong from n = 2 on (n = 31): element 1 is added twice
// reduction/04_first_add_on_load: the first addition during the global load, half the blocks.
// Starts from: lesson 3's kernel. Adds: each thread loads two elements and adds them before the tree,
// so a block covers 512 elements and no thread is idle at the tree's first step.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/04_first_add_on_load/first_add_on_load.cu -o first_add_on_load
// Run:  ./first_add_on_load      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Kernel and variants:
//   reduce_first_add_on_load<T>           512 elements -> one partial sum per 256-thread block (Harris's kernel 4)
//   "double", "float", "int", "complex"   passes of that kernel until one value is left
//
// Kernel 4 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;                    // threads per block
constexpr unsigned kElementsPerBlock = 2 * kThreads;  // each thread loads two elements
static_assert(kThreads <= 1024 && (kThreads & (kThreads - 1)) == 0,
              "the tree halves the block at every step: a power of two, at most 1024 threads");

// Lesson 3's tree, but in lesson 3 half the threads went idle after loading: the first
// step (s = 128) kept only threads 0..127 busy. Here each thread loads two elements,
// blockDim.x apart, and adds them on the way into shared memory, so a block of 256 threads
// covers 512 elements and the grid needs half as many blocks. Every thread now does an
// addition before the tree starts.
template <class T>
__global__ void reduce_first_add_on_load(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    __shared__ T sdata[kThreads];  // launched with blockDim.x == kThreads
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * (2 * blockDim.x) + tid;
    T sum = i < count ? in[i] : T{};  // the last block overhangs the input: pad with zeros
    if (i + 1 < count) sum += in[i + 1];
    sdata[tid] = sum;
    __syncthreads();

    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

// ---- Plumbing: one launch per level of the tree ------------------------------------------

size_t blocks_for(size_t count) { return tut::reduction::ceil_div(count, kElementsPerBlock); }

template <class T>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_first_add_on_load<T><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_first_add_on_load");
}

// n elements -> n/512 partial sums -> n/262144 -> ... -> 1: one launch per level, the
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
    all.f64 = {{"double", run_sum<double>, tut::kernel_of(reduce_first_add_on_load<double>, kThreads)}};
    all.f32 = {{"float", run_sum<float>, tut::kernel_of(reduce_first_add_on_load<float>, kThreads)}};
    all.i32 = {{"int", run_sum<int>, tut::kernel_of(reduce_first_add_on_load<int>, kThreads)}};
    all.c64 = {{"complex", run_sum<cuDoubleComplex>,
                tut::kernel_of(reduce_first_add_on_load<cuDoubleComplex>, kThreads)}};
    return all;
}
}  // namespace lesson

namespace {

// The longest chain of additions an element goes through, which sets this table's error
// bound (the checks set their own): 1 + log2(256) = log2(512) = 9 per pass.
template <class T>
size_t depth(const tut::reduction::Variant<T>&, size_t n) {
    return tut::reduction::tree_depth(n, kElementsPerBlock);
}
}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"reduction", "04_first_add_on_load",
                                 "first add during the global load: half the blocks (Harris kernel 4)"};
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
