// wrong: reduction/05_unroll_last_warp: lesson 4's loop kept down to s = 1 with a __syncthreads() per step, no unrolled last warp: correct, without this lesson's idea
// caught by: [performance]
// kind: previous-lesson
// the [performance] case times 'float' as a share of a device copy's bandwidth: on an H100 the
// solution reaches about 67%, lesson 4's loop 52%, the gate is 59%
// reduction/05_unroll_last_warp: the last warp's six steps unrolled, ordered with __syncwarp.
// Starts from: lesson 4's kernel. Adds: the tree's last six steps involve only the first warp: no
// __syncthreads() and no `if (tid < s)` there, but explicit warp barriers (__syncwarp), which correct
// code needs since Volta's independent thread scheduling.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/05_unroll_last_warp/unroll_last_warp.cu -o unroll_last_warp
// Run:  ./unroll_last_warp      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Kernel and variants:
//   warp_reduce(sdata, tid)               the first warp adds sdata[0..63] into sdata[0]
//   reduce_unroll_last_warp<T>            512 elements -> one partial sum per 256-thread block (Harris's kernel 5)
//   "double", "float", "int", "complex"   passes of that kernel until one value is left
//
// Kernel 5 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), made
// correct under independent thread scheduling (CUDA C++ Programming Guide, "Independent
// Thread Scheduling"; Lin and Grover, "Using CUDA Warp-Level Primitives", NVIDIA blog, 2018).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;                    // threads per block
constexpr unsigned kElementsPerBlock = 2 * kThreads;  // each thread loads two elements
static_assert(kThreads >= 64 && kThreads <= 1024 && (kThreads & (kThreads - 1)) == 0,
              "a power of two from 64 (warp_reduce reads sdata[tid + 32]) to 1024");

// The last six steps of the tree (s = 32, 16, ..., 1) involve only the first warp. A
// warp needs no __syncthreads(), and once one warp is left the `if (tid < s)` tests
// only cost instructions: let all 32 lanes do every step (the extra lanes add values
// nobody reads) and synchronize with __syncwarp(), which is nearly free.
//
// Harris's 2007 version relied on the 32 lanes running in lockstep, with a `volatile`
// pointer so that every access really went to shared memory. Since Volta (sm_70), each
// lane has its own program counter and the lanes of a warp may interleave: lane 0 may
// read sdata[16] before or after lane 16 overwrites it. The order of each step's reads
// and writes must therefore be made explicit.
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

// Lesson 4's kernel with the last warp unrolled.
template <class T>
__global__ void reduce_unroll_last_warp(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    __shared__ T sdata[kThreads];  // launched with blockDim.x == kThreads
    const unsigned tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * (2 * blockDim.x) + tid;
    T sum = i < count ? in[i] : T{};  // the last block overhangs the input: pad with zeros
    if (i + blockDim.x < count) sum += in[i + blockDim.x];
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
    reduce_unroll_last_warp<T><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_unroll_last_warp");
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
    all.f64 = {{"double", run_sum<double>, tut::kernel_of(reduce_unroll_last_warp<double>, kThreads)}};
    all.f32 = {{"float", run_sum<float>, tut::kernel_of(reduce_unroll_last_warp<float>, kThreads)}};
    all.i32 = {{"int", run_sum<int>, tut::kernel_of(reduce_unroll_last_warp<int>, kThreads)}};
    all.c64 = {{"complex", run_sum<cuDoubleComplex>,
                tut::kernel_of(reduce_unroll_last_warp<cuDoubleComplex>, kThreads)}};
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
    const tut::LessonInfo lesson{"reduction", "05_unroll_last_warp",
                                 "the last warp unrolled, with __syncwarp (Harris kernel 5, Volta-safe)"};
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
