// wrong: reduction/06_complete_unroll: no __syncthreads() after the last fold (128 -> 64), since warp_reduce synchronizes with __syncwarp()
// caught by: sanitizer: racecheck
// kind: race
// warp 0's warp_reduce reads sdata[32..63], written by warp 1 in that fold: __syncwarp() orders
// one warp only, so racecheck reports the hazard (the sums are usually right)
// reduction/06_complete_unroll: complete unrolling, with the block size a template parameter.
// Starts from: lesson 5's kernel. Adds: every step of the tree is decided at compile time, so the loop,
// its counter, its compare and its branch disappear.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/06_complete_unroll/complete_unroll.cu -o complete_unroll
// Run:  ./complete_unroll      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Kernel and variants:
//   reduce_complete_unroll<kThreads, T>   2 kThreads elements -> one partial sum per block (Harris's kernel 6)
//   warp_reduce(sdata, tid)               lesson 5's last warp
//   "double" (256 threads), "double, threads=128", "double, threads=512", "float", "int", "complex":
//                                         passes of that kernel until one value is left
//
// Kernel 6 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), made
// correct under independent thread scheduling (CUDA C++ Programming Guide, "Independent
// Thread Scheduling"; Lin and Grover, "Using CUDA Warp-Level Primitives", NVIDIA blog, 2018).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kHeadlineThreads = 256;  // threads per block of the headline variants (as in lessons 1-5)

template <class T>
__device__ void warp_reduce(T* sdata, unsigned tid);

// Lesson 5's kernel with the block size kThreads known to the compiler. The tree's loop
// had a bound, blockDim.x, known only at run time: a loop counter, a compare and a
// branch per step. With kThreads a template parameter, each `if (kThreads >= ...)` below
// is decided at compile time and vanishes, and what is left is straight-line code.
// Harris picks the instantiation with a switch on the block size at launch; here every
// variant is its own instantiation.
template <unsigned kThreads, class T>
__global__ void reduce_complete_unroll(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    static_assert(kThreads >= 64 && kThreads <= 1024 && (kThreads & (kThreads - 1)) == 0,
                  "a power of two from 64 (warp_reduce reads sdata[tid + 32]) to 1024");
    __shared__ T sdata[kThreads];
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * (2 * kThreads) + tid;
    T sum = i < count ? in[i] : T{};  // the last block overhangs the input: pad with zeros
    if (i + kThreads < count) sum += in[i + kThreads];
    sdata[tid] = sum;
    __syncthreads();

    if (kThreads >= 1024) {
        if (tid < 512) sdata[tid] += sdata[tid + 512];
        __syncthreads();
    }
    if (kThreads >= 512) {
        if (tid < 256) sdata[tid] += sdata[tid + 256];
        __syncthreads();
    }
    if (kThreads >= 256) {
        if (tid < 128) sdata[tid] += sdata[tid + 128];
        __syncthreads();
    }
    if (kThreads >= 128) {
        if (tid < 64) sdata[tid] += sdata[tid + 64];  // warp_reduce() synchronizes the warp itself
    }
    if (tid < 32) warp_reduce(sdata, tid);
    if (tid == 0) partials[blockIdx.x] = sdata[0];
}

// Lesson 5's last six steps (s = 32, 16, ..., 1), by the first warp alone: all 32 lanes do
// every step (the extra lanes add values nobody reads). Since Volta the lanes of a warp
// may interleave, so __syncwarp() between the reads and the writes of each step keeps the
// order, and the register `v` keeps each lane's read separate from its write.
template <class T>
__device__ void warp_reduce(T* sdata, unsigned tid) {
    T v = sdata[tid];
#pragma unroll
    for (unsigned s = 32; s > 0; s /= 2) {
        v += sdata[tid + s];
        __syncwarp();  // every lane has read step s's inputs ...
        sdata[tid] = v;
        __syncwarp();  // ... before any lane's result overwrites them, and is visible after
    }
}

// ---- Plumbing: one launch per level of the tree ------------------------------------------

template <unsigned kThreads>
size_t blocks_for(size_t count) {
    return tut::reduction::ceil_div(count, 2 * kThreads);
}

template <unsigned kThreads, class T>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_complete_unroll<kThreads, T><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_complete_unroll");
}

// n elements -> n/(2 kThreads) partial sums -> ... -> 1: one launch per level, the partial
// sums in scratch from the workspace.
template <unsigned kThreads, class T>
void run_sum(const T* in, size_t n, T* out, tut::reduction::Workspace& workspace) {
    tut::reduction::reduce_in_passes(in, n, out, workspace, blocks_for<kThreads>, launch_pass<kThreads, T>);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {
// One block size of the kernel.
template <unsigned kThreads, class T>
tut::reduction::Variant<T> variant(const char* name) {
    return {name, run_sum<kThreads, T>, tut::kernel_of(reduce_complete_unroll<kThreads, T>, kThreads)};
}
}  // namespace

namespace lesson {
// The headline variant of each type has 256 threads, as in lessons 1-5; for double the
// template also gives 128- and 512-thread blocks for free (the README compares them).
tut::reduction::Variants variants() {
    tut::reduction::Variants all;
    all.f64 = {variant<kHeadlineThreads, double>("double"), variant<128, double>("double, threads=128"),
               variant<512, double>("double, threads=512")};
    all.f32 = {variant<kHeadlineThreads, float>("float")};
    all.i32 = {variant<kHeadlineThreads, int>("int")};
    all.c64 = {variant<kHeadlineThreads, cuDoubleComplex>("complex")};
    return all;
}
}  // namespace lesson

namespace {

// The longest chain of additions an element goes through, which sets this table's error
// bound (the checks set their own): log2(2 x threads) per pass, for the threads per block
// of the variant's kernel.
template <class T>
size_t depth(const tut::reduction::Variant<T>& v, size_t n) {
    return tut::reduction::tree_depth(n, 2 * size_t(v.kernel.block_threads));
}
}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"reduction", "06_complete_unroll",
                                 "complete unrolling with a template block size (Harris kernel 6)"};
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
