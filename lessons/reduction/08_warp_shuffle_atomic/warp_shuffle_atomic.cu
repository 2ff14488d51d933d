// Reduction lesson 8: warp shuffles instead of shared memory, and atomicAdd instead of a second pass.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/08_warp_shuffle_atomic/warp_shuffle_atomic.cu -o warp_shuffle_atomic
// Run:  ./warp_shuffle_atomic      (2^26 doubles; --type all adds float, int, complex; --sweep: blocks x threads)
//
// The shuffle reduction follows Justin Luitjens, "Faster Parallel Reductions on Kepler"
// (NVIDIA blog, 2014); the sweep repeats the experiment of the historic article (README).
#include "tut/reduction.hpp"

namespace {

constexpr unsigned kThreads = 256;  // threads per block
constexpr unsigned kWarp = 32;

// ---- Moving values between the lanes of a warp -----------------------------------
//
// __shfl_down_sync(mask, v, d) returns lane (l + d)'s v to lane l, register to register:
// no shared memory, no __syncthreads(), and the _sync mask names the lanes that take
// part, so it is correct under Volta's independent thread scheduling.
template <class T>
__device__ T shfl_down(T v, unsigned delta) {
    if constexpr (std::is_same_v<T, cuDoubleComplex>) {  // a complex number is two doubles: shuffle each
        return make_cuDoubleComplex(__shfl_down_sync(0xffffffffu, v.x, delta), __shfl_down_sync(0xffffffffu, v.y, delta));
    } else {
        return __shfl_down_sync(0xffffffffu, v, delta);
    }
}

// The shuffle instruction (SHFL) moves 32 bits per lane. Kepler-era toolkits offered
// __shfl_down for int and float only, so a double crossed the warp as two 32-bit halves,
// reassembled on arrival. Today's __shfl_down_sync(double) does exactly this for you:
// the SASS of shfl_down<double> shows two SHFL.DOWN per value. Kept here to show how.
__device__ double shfl_down_as_halves(double v, unsigned delta) {
    const int hi = __shfl_down_sync(0xffffffffu, __double2hiint(v), delta);
    const int lo = __shfl_down_sync(0xffffffffu, __double2loint(v), delta);
    return __hiloint2double(hi, lo);
}

// Five shuffle steps add the 32 lanes' values: after them, lane 0 holds the warp's sum.
//   d = 16: lane l += lane l+16;  d = 8: lane l += lane l+8;  ...  d = 1: lane 0 += lane 1
template <class T>
__device__ T warp_sum(T v) {
    // TODO(exercise): five steps, delta = 16, 8, 4, 2, 1: add shfl_down(v, delta) (the v
    //   of the lane delta places up) into v. Then lane 0 holds the sum of all 32 lanes.
    return v;
}

// ---- Adding into one global value ---------------------------------------------------
//
// atomicAdd(float*), atomicAdd(int*) exist everywhere; atomicAdd(double*) only from
// compute capability 6.0 (Pascal). Before, the double version was built from a 64-bit
// compare-and-swap: read the old value, compute old + v, and store it only if the
// word still holds old; otherwise another thread got in first, so retry with what it
// wrote. The CUDA guide's version was declared as atomicAdd(double*, double) itself,
// which collides with the built-in on sm_60 and later ("function already defined"), so
// it had to hide behind `#if __CUDA_ARCH__ < 600`. This one has its own name, compiles
// for every architecture, and atomic_add() below uses it only where nothing better exists.
__device__ double atomic_add_cas(double* address, double v) {
    unsigned long long* word = reinterpret_cast<unsigned long long*>(address);
    unsigned long long seen = *word, assumed;
    do {
        assumed = seen;
        seen = atomicCAS(word, assumed, __double_as_longlong(__longlong_as_double(assumed) + v));
    } while (seen != assumed);  // compare the bits: a NaN would never compare equal as a double
    return __longlong_as_double(assumed);
}

template <class T>
__device__ void atomic_add(T* address, T v) {
    atomicAdd(address, v);  // float, int; double on sm_60+ (see the overload below)
}
__device__ void atomic_add(double* address, double v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 600
    atomicAdd(address, v);  // one hardware instruction (RED.E.ADD.F64 when the result is unused)
#else
    atomic_add_cas(address, v);
#endif
}
// Complex: the two parts are independent sums, so two atomics do it; another thread may
// see the pair half updated, but nobody reads *out until the kernel has finished.
__device__ void atomic_add(cuDoubleComplex* address, cuDoubleComplex v) {
    atomic_add(&address->x, v.x);
    atomic_add(&address->y, v.y);
}

// ---- The kernels ---------------------------------------------------------------------

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
//
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

// Fewer atomics: the warps' sums meet in shared memory, the first warp adds them with
// one more warp_sum, and only thread 0 of the block touches *out. kOldStyle uses the
// hand-made double operations above, as code for pre-Pascal GPUs had to.
template <class T, bool kOldStyle = false>
__global__ void reduce_atomic_per_block(const T* __restrict__ in, size_t count, T* __restrict__ out) {
    __shared__ T warp_sums[1024 / kWarp];
    T sum = grid_stride_sum(in, count);
    const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    if constexpr (kOldStyle) {
        for (unsigned delta = kWarp / 2; delta > 0; delta /= 2) sum += shfl_down_as_halves(sum, delta);
    } else {
        sum = warp_sum(sum);
    }
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = lane < blockDim.x / kWarp ? warp_sums[lane] : T{};
        if constexpr (kOldStyle) {
            for (unsigned delta = kWarp / 2; delta > 0; delta /= 2) sum += shfl_down_as_halves(sum, delta);
            if (lane == 0) atomic_add_cas(out, sum);
        } else {
            sum = warp_sum(sum);
            if (lane == 0) atomic_add(out, sum);
        }
    }
}

// ---- Host side -----------------------------------------------------------------------

// One full wave of blocks (as in lesson 7), or fewer for a small n: never more blocks
// than it takes to give every thread one element.
template <auto kKernel>
unsigned grid_for(size_t n) {
    static const unsigned resident = tut::reduction::resident_blocks(reinterpret_cast<const void*>(kKernel), kThreads);
    return static_cast<unsigned>(std::min<size_t>(resident, tut::reduction::ceil_div(n, kThreads)));
}

template <class T, auto kKernel>
void run_sum(const T* in, size_t n, T* out, void*) {
    tut::reduction::require_count(n);
    TUT_CUDA(cudaMemsetAsync(out, 0, sizeof(T)));  // the atomics add into *out (and n = 0 leaves 0)
    if (n == 0) return;
    kKernel<<<grid_for<kKernel>(n), kThreads>>>(in, n, out);
    TUT_LAUNCH("reduce_atomic_*");
}

// Depth: the thread's loop (n / threads of the grid), 5 shuffle levels, then one level
// per atomic on *out (in the worst order, the first value passes through every later
// atomic): one per warp, or 5 more shuffle levels and one per block.
template <auto kKernel>
size_t depth_per_warp(size_t n) {
    if (n == 0) return 0;
    const size_t threads = size_t(grid_for<kKernel>(n)) * kThreads;
    return tut::reduction::ceil_div(n, threads) + 5 + threads / kWarp;
}
template <auto kKernel>
size_t depth_per_block(size_t n) {
    if (n == 0) return 0;
    const size_t blocks = grid_for<kKernel>(n);
    return tut::reduction::ceil_div(n, blocks * kThreads) + 10 + blocks;
}

template <class T>
std::vector<tut::reduction::Variant<T>> variants() {
    constexpr auto per_warp = reduce_atomic_per_warp<T>;
    constexpr auto per_block = reduce_atomic_per_block<T>;
    const std::string type = tut::reduction::type_name<T>();
    return {{type + ", atomic per warp", run_sum<T, per_warp>, nullptr, depth_per_warp<per_warp>,
             reinterpret_cast<const void*>(per_warp)},
            {type + ", atomic per block", run_sum<T, per_block>, nullptr, depth_per_block<per_block>,
             reinterpret_cast<const void*>(per_block)}};
}

}  // namespace

namespace lesson {
tut::reduction::Variants reduction_variants() {
    tut::reduction::Variants v{variants<double>(), variants<float>(), variants<int>(), variants<cuDoubleComplex>()};
    constexpr auto old_style = reduce_atomic_per_block<double, true>;
    v.f64.push_back({"double, atomic per block, CAS add + 2x32-bit shuffles", run_sum<double, old_style>,
                     nullptr, depth_per_block<old_style>, reinterpret_cast<const void*>(old_style)});
    return v;
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
namespace {
// --sweep: the per-warp kernel at any blocks x threads, as in the historic article.
void sweep_launch(const double* in, size_t n, double* out, unsigned threads, unsigned blocks) {
    TUT_CUDA(cudaMemsetAsync(out, 0, sizeof(double)));
    reduce_atomic_per_warp<double><<<blocks, threads>>>(in, n, out);
    TUT_LAUNCH("reduce_atomic_per_warp");
}
size_t sweep_depth(size_t n, unsigned threads, unsigned blocks) {
    const size_t all = size_t(threads) * blocks;
    return tut::reduction::ceil_div(n, all) + 5 + all / kWarp;
}
}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo info{"reduction", "08_warp_shuffle_atomic",
                               "warp shuffles and one atomicAdd per warp, then per block"};
    const tut::reduction::Sweep sweep{sweep_launch, sweep_depth, "atomic per warp (reduce_atomic_per_warp<double>)"};
    return tut::reduction::lesson_main(argc, argv, info, lesson::reduction_variants(), sweep);
}
#endif
