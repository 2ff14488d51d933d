// wrong: reduction/08_warp_shuffle_atomic: *out is zeroed on the first run only ('it starts at zero'), so later runs add onto what the output holds
// caught by: reduction/08_warp_shuffle_atomic: double sums match
// kind: not-reset
// the checks poison the output before every run: from the second run (n = 1) the sum is NaN + x
// reduction/08_warp_shuffle_atomic: warp shuffles instead of a shared-memory tree, atomics instead of a second pass.
// Starts from: lesson 7's grid-stride loop. Adds: each warp adds its 32 sums with five shuffles
// (warp_sum) and adds the result into the output with one atomic, or the warps' sums meet first
// (block_sum) and each block issues one atomic.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/08_warp_shuffle_atomic/warp_shuffle_atomic.cu -o warp_shuffle_atomic
// Run:  ./warp_shuffle_atomic      (2^26 doubles; --type all adds float, int, complex; --sweep: blocks x threads)
//
// Kernels and variants:
//   warp_sum(v), block_sum(v)       the sum over a warp (shuffles), over a block (shuffles + shared memory)
//   reduce_atomic_per_warp<T>       lesson 7's loop, warp_sum, one atomicAdd per warp
//   reduce_atomic_per_block<T>      lesson 7's loop, block_sum, one atomicAdd per block
//   reduce_atomic_per_block_cas     the per-block kernel for double as pre-Pascal GPUs needed it:
//                                   doubles shuffled as two 32-bit halves, the add built from atomicCAS
//   "<type>, atomic per warp" and "<type>, atomic per block" for double, float, int and complex, and
//   "double, atomic per block, cas"; --sweep times the per-warp kernel at many grid shapes (the
//   historic article's experiment)
//
// The shuffle reduction follows Justin Luitjens, "Faster Parallel Reductions on Kepler"
// (NVIDIA blog, 2014); atomics: CUDA C++ Programming Guide, "Atomic Functions".
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;  // threads per block
constexpr unsigned kWarp = 32;      // lanes per warp
static_assert(kThreads % kWarp == 0 && kThreads <= 1024, "block_sum takes whole warps, at most 32 of them");

// __shfl_down_sync(mask, v, d) returns lane (l + d)'s v to lane l, register to register:
// no shared memory, no __syncthreads(), and the _sync mask names the lanes that take
// part, so it is correct under Volta's independent thread scheduling. A lane l + d past
// the warp's last lane gives lane l its own v back.
template <class T>
__device__ T shfl_down(T v, unsigned delta) {
    if constexpr (std::is_same_v<T, cuDoubleComplex>) {  // a complex number is two doubles: shuffle each
        return make_cuDoubleComplex(__shfl_down_sync(0xffffffffu, v.x, delta), __shfl_down_sync(0xffffffffu, v.y, delta));
    } else {
        return __shfl_down_sync(0xffffffffu, v, delta);
    }
}

// The sum of v over the 32 lanes of the warp, valid in lane 0.
template <class T>
__device__ T warp_sum(T v) {
    // Five shuffle steps:
    //   d = 16: lane l += lane l+16;  d = 8: lane l += lane l+8;  ...  d = 1: lane 0 += lane 1
#pragma unroll
    for (unsigned delta = kWarp / 2; delta > 0; delta /= 2) v += shfl_down(v, delta);
    return v;
}

// The sum of v over the thread block, valid in thread 0 (blockDim.x a multiple of 32, at
// most 1024).
template <class T>
__device__ T block_sum(T v) {
    // Each warp adds its lanes with warp_sum; the warps' sums meet in shared memory, one
    // barrier, and the first warp adds them with one more warp_sum.
    __shared__ T warp_sums[1024 / kWarp];
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / kWarp ? warp_sums[lane] : T{};
        v = warp_sum(v);
    }
    return v;
}

// Lesson 7's loop: this thread's share of the input, four loads in flight.
template <class T>
__device__ T grid_stride_sum(const T* __restrict__ in, size_t count) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    T sum{};
    for (; i + 3 * stride < count; i += 4 * stride) {
        const T a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
        sum += (a + b) + (c + d);
    }
    for (; i < count; i += stride) sum += in[i];
    return sum;
}

// atomicAdd exists for int, float and, from compute capability 6.0 (every GPU this course
// builds for), double: one instruction, performed at the L2 cache. A complex sum is two
// independent sums, so two atomics do it; another thread may see the pair half updated,
// but nobody reads *out until the kernel has finished.
template <class T>
__device__ void atomic_add(T* address, T v) {
    atomicAdd(address, v);
}
__device__ void atomic_add(cuDoubleComplex* address, cuDoubleComplex v) {
    atomicAdd(&address->x, v.x);
    atomicAdd(&address->y, v.y);
}

// Lesson 7's grid-stride loop, then no shared-memory tree and no second pass: each warp
// adds its 32 sums with shuffles, and its lane 0 adds the result into *out with one
// atomic. *out must be zero before the launch. The order in which the atomics arrive
// changes from run to run, and floating-point addition is not associative: the last
// bits of a double (or float) sum vary between runs. An int sum does not.
template <class T>
__global__ void reduce_atomic_per_warp(const T* __restrict__ in, size_t count, T* __restrict__ out) {
    T sum = grid_stride_sum(in, count);
    sum = warp_sum(sum);
    if (threadIdx.x % kWarp == 0) atomic_add(out, sum);
}

// Fewer atomics: the warps' sums meet in shared memory (block_sum), and only thread 0 of
// the block touches *out.
template <class T>
__global__ void reduce_atomic_per_block(const T* __restrict__ in, size_t count, T* __restrict__ out) {
    T sum = grid_stride_sum(in, count);
    sum = block_sum(sum);
    if (threadIdx.x == 0) atomic_add(out, sum);
}

// ---- How code for pre-Pascal GPUs had to do it (double) ------------------------------------
//
// The shuffle instruction (SHFL) moves 32 bits per lane. Kepler-era toolkits offered
// __shfl_down for int and float only, so a double crossed the warp as two 32-bit halves,
// reassembled on arrival. Today's __shfl_down_sync(double) does exactly this for you:
// the SASS of shfl_down<double> shows two SHFL.DOWN per value.
__device__ double shfl_down_as_halves(double v, unsigned delta) {
    const int hi = __shfl_down_sync(0xffffffffu, __double2hiint(v), delta);
    const int lo = __shfl_down_sync(0xffffffffu, __double2loint(v), delta);
    return __hiloint2double(hi, lo);
}

// atomicAdd(double*) came with compute capability 6.0 (Pascal). Before, the double version
// was built from a 64-bit compare-and-swap: read the old value, compute old + v, and
// store it only if the word still holds old; otherwise another thread got in first, so
// retry with what it wrote. The CUDA guide's version was declared as atomicAdd(double*,
// double) itself, which collides with the built-in on sm_60 and later, so it had to hide
// behind `#if __CUDA_ARCH__ < 600`; this one has its own name and compiles everywhere.
__device__ double atomic_add_cas(double* address, double v) {
    unsigned long long* word = reinterpret_cast<unsigned long long*>(address);
    unsigned long long seen = *word, assumed;
    do {
        assumed = seen;
        seen = atomicCAS(word, assumed, __double_as_longlong(__longlong_as_double(assumed) + v));
    } while (seen != assumed);  // compare the bits: a NaN would never compare equal as a double
    return __longlong_as_double(assumed);
}

// reduce_atomic_per_block<double> with both hand-made operations.
__global__ void reduce_atomic_per_block_cas(const double* __restrict__ in, size_t count, double* __restrict__ out) {
    __shared__ double warp_sums[1024 / kWarp];
    double sum = grid_stride_sum(in, count);
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    for (unsigned delta = kWarp / 2; delta > 0; delta /= 2) sum += shfl_down_as_halves(sum, delta);
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = lane < blockDim.x / kWarp ? warp_sums[lane] : 0.0;
        for (unsigned delta = kWarp / 2; delta > 0; delta /= 2) sum += shfl_down_as_halves(sum, delta);
        if (lane == 0) atomic_add_cas(out, sum);
    }
}

// ---- Host side ---------------------------------------------------------------------------

// One full wave of blocks (as in lesson 7), or fewer for a small n: never more blocks
// than it takes to give every thread one element.
unsigned grid_for(const void* kernel, size_t n) {
    const unsigned resident = tut::reduction::resident_blocks(kernel, kThreads);
    return static_cast<unsigned>(std::min<size_t>(resident, tut::reduction::ceil_div(n, kThreads)));
}

// Zeroes *out (the atomics add into it, and n = 0 leaves 0), then launches `kernel`.
template <class T>
void run_atomic(void (*kernel)(const T*, size_t, T*), const T* in, size_t n, T* out) {
    tut::reduction::require_count(n);
    static bool zeroed = false;  // the atomics add into *out: clear it once
    if (!zeroed) {
        TUT_CUDA(cudaMemsetAsync(out, 0, sizeof(T)));
        zeroed = true;
    }
    if (n == 0) return;
    kernel<<<grid_for(tut::kernel_of(kernel).handle, n), kThreads>>>(in, n, out);
    TUT_LAUNCH("reduce_atomic_*");
}

// The variants' runs. The atomics need no scratch.
template <class T>
void run_per_warp(const T* in, size_t n, T* out, tut::reduction::Workspace&) {
    run_atomic(reduce_atomic_per_warp<T>, in, n, out);
}
template <class T>
void run_per_block(const T* in, size_t n, T* out, tut::reduction::Workspace&) {
    run_atomic(reduce_atomic_per_block<T>, in, n, out);
}
void run_per_block_cas(const double* in, size_t n, double* out, tut::reduction::Workspace&) {
    run_atomic(reduce_atomic_per_block_cas, in, n, out);
}

// --sweep: the per-warp kernel at any blocks x threads, as in the historic article.
void sweep_launch(const double* in, size_t n, double* out, unsigned threads, unsigned blocks) {
    TUT_CUDA(cudaMemsetAsync(out, 0, sizeof(double)));
    reduce_atomic_per_warp<double><<<blocks, threads>>>(in, n, out);
    TUT_LAUNCH("reduce_atomic_per_warp");
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {
// The two variants of one type: one atomic per warp, one per block.
template <class T>
std::vector<tut::reduction::Variant<T>> atomic_variants() {
    const std::string type = tut::reduction::type_name<T>();
    return {{type + ", atomic per warp", run_per_warp<T>, tut::kernel_of(reduce_atomic_per_warp<T>, kThreads)},
            {type + ", atomic per block", run_per_block<T>, tut::kernel_of(reduce_atomic_per_block<T>, kThreads)}};
}
}  // namespace

namespace lesson {
tut::reduction::Variants variants() {
    tut::reduction::Variants all;
    all.f64 = atomic_variants<double>();
    all.f64.push_back({"double, atomic per block, cas", run_per_block_cas,
                       tut::kernel_of(reduce_atomic_per_block_cas, kThreads)});
    all.f32 = atomic_variants<float>();
    all.i32 = atomic_variants<int>();
    all.c64 = atomic_variants<cuDoubleComplex>();
    return all;
}
}  // namespace lesson

namespace {

// The longest chain of additions an element goes through, which sets this table's error
// bound (the checks set their own): the thread's loop (n / threads of the grid), 5 shuffle
// levels, then one level per atomic on *out (in the worst order, the first value passes
// through every later atomic): one per warp, or 5 more shuffle levels and one per block.
template <class T>
size_t depth(const tut::reduction::Variant<T>& v, size_t n) {
    if (n == 0) return 0;
    const size_t blocks = grid_for(v.kernel.handle, n), threads = blocks * kThreads;
    if (v.name.find("per warp") != std::string::npos) return tut::reduction::ceil_div(n, threads) + 5 + threads / kWarp;
    return tut::reduction::ceil_div(n, threads) + 10 + blocks;
}

// The same for the sweep's launch shapes of the per-warp kernel.
size_t sweep_depth(size_t n, unsigned threads, unsigned blocks) {
    const size_t all = size_t(threads) * blocks;
    return tut::reduction::ceil_div(n, all) + 5 + all / kWarp;
}

// --sweep: the per-warp kernel on n doubles at 128 to 1024 threads per block and 128 blocks
// doubling up to one thread per element, each shape checked (a failure fails the run) and
// recorded; prints a blocks x threads table of milliseconds (the historic article's experiment).
void time_sweep(tut::Bench& bench, size_t n) {
    namespace red = tut::reduction;
    const tut::RunOptions& run = bench.run();
    std::vector<double> host = red::random_input<double>(n, static_cast<uint64_t>(run.seed));
    const red::Reference ref = red::reference_sum(host);
    tut::DeviceBuffer<double> in(host), out(1);
    host = {};
    const tut::TimingOptions timing{std::min(run.warmup, 1), std::min(run.repeats, 5), true};
    const unsigned thread_counts[] = {128, 256, 512, 1024};
    std::map<std::pair<unsigned, unsigned>, double> ms;  // (blocks, threads) -> median ms
    std::vector<unsigned> block_counts;
    for (size_t b = 128; b <= std::max<size_t>(128, red::ceil_div(n, 128)) && b <= (size_t(1) << 24); b *= 2)
        block_counts.push_back(static_cast<unsigned>(b));
    double best_ms = INFINITY;
    unsigned best_t = 0, best_b = 0;
    for (unsigned threads : thread_counts)
        for (unsigned blocks : block_counts) {
            if (size_t(blocks) > std::max<size_t>(128, red::ceil_div(n, threads))) continue;  // more threads than elements
            const auto once = [&] { sweep_launch(in.get(), n, out.get(), threads, blocks); };
            red::poison_output(out.get(), ref);
            once();
            const red::Judgement j = red::judge(out.download()[0], ref, sweep_depth(n, threads, blocks));
            const std::string name = tut::fmt("sweep %u blocks x %u threads", blocks, threads);
            if (!j.ok) bench.fail(name, j.text);
            const double t = tut::time_gpu(once, timing).median_ms;
            ms[{blocks, threads}] = t;
            if (t < best_ms) {
                best_ms = t;
                best_t = threads;
                best_b = blocks;
            }
            tut::Result res;
            tut::Record& r = res.record;
            r.variant = name;
            r.size = std::to_string(n);
            r.value = red::gbs<double>(n, t);
            r.unit = "GB/s";
            r.time_ms = t;
            r.peak = red::kDramPeak;
            r.peak_value = bench.device().dram_peak_gbs;
            r.checked = j.ok;
            r.extra.add("type", "double").add("sweep", true).add("threads", int(threads)).add("blocks", int(blocks));
            bench.record(res);
        }
    std::printf("\n%s/%s --sweep: atomic per warp (reduce_atomic_per_warp<double>), n = %zu doubles, time in ms "
                "(median of %d, L2 flushed)\n", bench.lesson().track, bench.lesson().lesson, n, timing.repeats);
    tut::Table table({"blocks", "128 thr", "256 thr", "512 thr", "1024 thr"});
    for (unsigned blocks : block_counts) {
        std::vector<std::string> row{std::to_string(blocks)};
        for (unsigned threads : thread_counts) {
            const auto it = ms.find({blocks, threads});
            const char* mark = blocks == best_b && threads == best_t ? "*" : "";
            row.push_back(it == ms.end() ? "" : tut::fmt("%.3f%s", it->second, mark));
        }
        table.add_row(row);
    }
    table.print();
    std::printf("best (*): %u blocks x %u threads, %.3f ms = %.0f GB/s\n", best_b, best_t, best_ms,
                red::gbs<double>(n, best_ms));
}
}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"reduction", "08_warp_shuffle_atomic",
                                 "warp shuffles and one atomicAdd per warp, then per block"};
    const tut::reduction::Variants variants = lesson::variants();
    tut::reduction::Options options(lesson);  // --n (2^26), --type (double), --reruns (10), and every lesson's options
    bool sweep = false;  // the lesson's own option
    options.cli.add_flag("sweep", &sweep, "also time a blocks x threads sweep of the kernel on doubles");
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
        if (sweep) time_sweep(bench, options.n);
        return bench.exit_code();
    });
}
