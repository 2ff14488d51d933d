// wrong: reduction/07_grid_stride: lesson 6's grid kept: one block per 2 x 256 elements, each thread adding two, and passes until one value is left: correct, no grid-stride loop
// caught by: [performance]
// kind: previous-lesson
// the [performance] case times 'float' as a share of a device copy's bandwidth: on an H100 the
// solution reaches about 95%, lesson 6's approach 72%, the gate is 83%
// reduction/07_grid_stride: many elements per thread, a grid-stride loop over a one-wave grid.
// Starts from: lesson 6's kernel. Adds: a grid sized from the SM count (one full wave) walks the whole
// input with a grid-stride loop, four independent loads per step, before any tree; the second pass
// adds the ~1000 partial sums in one block.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/07_grid_stride/grid_stride.cu -o grid_stride
// Run:  ./grid_stride      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Kernel and variants:
//   grid_stride_sum<kFourPerStep>(in, count)   this thread's share of the input, in a register
//   reduce_grid_stride<T, kFourPerStep>         a full-GPU grid -> one partial sum per block (Harris's kernel 7)
//   warp_reduce(sdata, tid)                     lesson 5's last warp
//   "double", "double, loads=1" (one load per step, for comparison), "float", "int", "complex":
//                                               two passes (the whole input, then the partial sums)
//
// Kernel 7 of Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), made
// correct under independent thread scheduling (CUDA C++ Programming Guide, "Independent
// Thread Scheduling"; Lin and Grover, "Using CUDA Warp-Level Primitives", NVIDIA blog, 2018).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;    // threads per block
static_assert(kThreads >= 64 && kThreads <= 1024 && (kThreads & (kThreads - 1)) == 0,
              "a power of two from 64 (warp_reduce reads sdata[tid + 32]) to 1024");

// This thread's share of the input: elements t, t + stride, t + 2 stride, ... where t is
// the thread's index in the grid and stride the number of threads in the grid. Four
// steps at a time: the four loads are independent, so they are all in flight at once
// instead of each waiting for the previous one. By Little's law the GPU needs bandwidth
// x latency bytes in flight, over 20 KB per SM on an H200; one 8-byte load per thread,
// 2048 threads per SM, is 16 KB (README).
// (kFourPerStep = false: one element per step, for the README's comparison.)
template <bool kFourPerStep, class T>
__device__ T grid_stride_sum(const T* __restrict__ in, size_t count) {
    const size_t i = size_t(blockIdx.x) * (2 * blockDim.x) + threadIdx.x;  // this block's 2 x 256 elements
    T sum = i < count ? in[i] : T{};
    if (i + blockDim.x < count) sum += in[i + blockDim.x];
    return sum;
}

template <class T>
__device__ void warp_reduce(T* sdata, unsigned tid);

// Lesson 6's kernel, but the grid no longer grows with n. A fixed number of blocks,
// as many as the GPU holds at once, walks over the whole input: thread t of the grid
// adds elements t, t + stride, t + 2 stride, ... (stride = all threads of the grid) in a
// register, so a warp still reads 32 consecutive elements per step (coalesced). Only
// then does the block add its threads' sums with the tree. For 2^26 elements that is
// ~250 additions per thread for one tree, instead of one tree per 512 elements; the
// tree, the block start-up and the partial-sum write are paid once per ~64K elements.
// Harris's kernel 7 keeps the first add of lesson 4 inside the loop (two loads per
// step, kThreads apart) and accumulates in shared memory; a register is cheaper.
template <class T, bool kFourPerStep = true>
__global__ void reduce_grid_stride(const T* __restrict__ in, size_t count, T* __restrict__ partials) {
    __shared__ T sdata[kThreads];
    const unsigned tid = threadIdx.x;
    sdata[tid] = grid_stride_sum<kFourPerStep>(in, count);
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
        if (tid < 64) sdata[tid] += sdata[tid + 64];
        __syncthreads();
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

// ---- Plumbing: two passes, the first over a full-GPU grid ----------------------------------

// As many blocks as fit on the GPU at once (SMs x blocks per SM, from the occupancy
// calculator), but no more than leave each thread kMinPerThread elements: the second
// pass, over the first pass's ~1000 partial sums, runs in a single block.
template <class T, bool kFourPerStep>
size_t blocks_for(size_t count) {
    return tut::reduction::ceil_div(count, 2 * kThreads);  // one block per 512 elements, as in lesson 6
}

template <class T, bool kFourPerStep>
void launch_pass(const T* in, size_t count, T* partials, size_t blocks) {
    reduce_grid_stride<T, kFourPerStep><<<static_cast<unsigned>(blocks), kThreads>>>(in, count, partials);
    TUT_LAUNCH("reduce_grid_stride");
}

// n elements -> one partial sum per block of a full-GPU grid -> 1: two launches, the
// partial sums in scratch from the workspace.
template <class T, bool kFourPerStep>
void run_sum(const T* in, size_t n, T* out, tut::reduction::Workspace& workspace) {
    tut::reduction::reduce_in_passes(in, n, out, workspace, blocks_for<T, kFourPerStep>, launch_pass<T, kFourPerStep>);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
tut::reduction::Variants variants() {
    tut::reduction::Variants all;
    all.f64 = {{"double", run_sum<double, true>, tut::kernel_of(reduce_grid_stride<double, true>, kThreads)},
               {"double, loads=1", run_sum<double, false>,
                tut::kernel_of(reduce_grid_stride<double, false>, kThreads)}};
    all.f32 = {{"float", run_sum<float, true>, tut::kernel_of(reduce_grid_stride<float, true>, kThreads)}};
    all.i32 = {{"int", run_sum<int, true>, tut::kernel_of(reduce_grid_stride<int, true>, kThreads)}};
    all.c64 = {{"complex", run_sum<cuDoubleComplex, true>,
                tut::kernel_of(reduce_grid_stride<cuDoubleComplex, true>, kThreads)}};
    return all;
}
}  // namespace lesson

namespace {

// The longest chain of additions an element goes through, which sets this table's error
// bound (the checks set their own): per pass, its thread's loop (count / threads of the grid
// additions), then the block's tree (log2 kThreads), on the grid of the variant's kernel.
template <class T>
size_t depth(const tut::reduction::Variant<T>& v, size_t n) {
    if (v.name == "double, loads=1") return tut::reduction::grid_stride_depth(n, blocks_for<double, false>, kThreads);
    return tut::reduction::grid_stride_depth(n, blocks_for<T, true>, kThreads);
}
}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{
        "reduction", "07_grid_stride",
        "many elements per thread: grid-stride loop, grid from the SM count (Harris kernel 7)"};
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
