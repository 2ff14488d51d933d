// wrong: reduction/09_vectorized: the elements after the last whole vector are never added
// caught by: reduction/09_vectorized: double sums match
// kind: edges
// 'double2' gives 0 at n = 1 (no whole vector); the sizes that are not multiples of 2 or 4 fail too
// reduction/09_vectorized: vectorized loads, with an unaligned head and a tail.
// Starts from: lesson 8's atomic-per-block kernel. Adds: lesson 7's loop runs over 16- or 32-byte
// vectors (double2, double4_32a, float4, ...) instead of single elements, and the elements before the
// first aligned address and after the last whole vector are added one by one.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/09_vectorized/vectorized.cu -o vectorized
// Run:  ./vectorized      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Kernel and variants:
//   Pack<T, kWidth>                               the vector type of kWidth elements, and the sum of its lanes
//   grid_stride_sum<T, kWidth>(in, count, head)   this thread's share: head, whole vectors, tail
//   reduce_vectorized<T, kWidth>                  that loop, block_sum (lesson 8), one atomicAdd per block
//   "double", "double2", "double4_32a", "float", "float2", "float4", "int", "int2", "int4", "complex",
//   "complex x2" (two complex numbers per 32-byte load)
#include "tut/reduction.hpp"

#include <cstdint>

namespace {

constexpr unsigned kThreads = 256;  // threads per block
constexpr unsigned kWarp = 32;      // lanes per warp
static_assert(kThreads % kWarp == 0 && kThreads <= 1024, "block_sum takes whole warps, at most 32 of them");

// ---- Vector types --------------------------------------------------------------------------
//
// Pack<T, W>::type carries W elements of T in one load instruction (8, 16 or 32 bytes);
// Pack<T, W>::sum adds its lanes. A vector load needs an address that is a multiple of
// its size: cudaMalloc gives 256-byte alignment, but `in + 1` does not, hence the head.
// CUDA 13 deprecates double4 (its alignment was 16 bytes, not 32, so it never was a
// single 32-byte load) in favour of double4_16a (two 16-byte loads, explicitly) and
// double4_32a (32-byte aligned: one 256-bit load where the hardware has one, sm_100;
// two 128-bit loads on sm_90, see the README for the SASS).
template <class T, int W>
struct Pack;
template <class T>
struct Pack<T, 1> {
    using type = T;
    __device__ static T sum(const T& v) { return v; }
};
template <>
struct Pack<double, 2> {
    using type = double2;
    __device__ static double sum(const double2& v) { return v.x + v.y; }
};
template <>
struct Pack<double, 4> {
    using type = double4_32a;
    __device__ static double sum(const double4_32a& v) { return (v.x + v.y) + (v.z + v.w); }
};
template <>
struct Pack<float, 2> {
    using type = float2;
    __device__ static float sum(const float2& v) { return v.x + v.y; }
};
template <>
struct Pack<float, 4> {
    using type = float4;
    __device__ static float sum(const float4& v) { return (v.x + v.y) + (v.z + v.w); }
};
template <>
struct Pack<int, 2> {
    using type = int2;
    __device__ static int sum(const int2& v) { return v.x + v.y; }
};
template <>
struct Pack<int, 4> {
    using type = int4;
    __device__ static int sum(const int4& v) { return (v.x + v.y) + (v.z + v.w); }
};
template <>
struct Pack<cuDoubleComplex, 2> {  // a cuDoubleComplex is already 16 bytes: 2 per 32-byte load
    using type = double4_32a;
    __device__ static cuDoubleComplex sum(const double4_32a& v) { return make_cuDoubleComplex(v.x + v.z, v.y + v.w); }
};

// ---- The loop over vectors -----------------------------------------------------------------
//
// Lesson 7's loop over vectors instead of elements. The input splits into three parts:
//   in[0, head)            scalars before the first address that is a multiple of sizeof(V)
//   head + [0, vectors*W)  whole vectors, read with one wide load each
//   the rest (< W)         scalars after the last whole vector
// head and the rest are each fewer than W elements: the first threads of the grid add
// one each.
template <class T, int kWidth>
__device__ T grid_stride_sum(const T* __restrict__ in, size_t count, size_t head) {
    using P = Pack<T, kWidth>;
    using V = typename P::type;
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    const size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const V* __restrict__ body = reinterpret_cast<const V*>(in + head);
    const size_t vectors = (count - head) / kWidth;
    T sum{};
    size_t i = t;
    for (; i + 3 * stride < vectors; i += 4 * stride) {
        const V a = body[i], b = body[i + stride], c = body[i + 2 * stride], d = body[i + 3 * stride];
        sum += (P::sum(a) + P::sum(b)) + (P::sum(c) + P::sum(d));
    }
    for (; i < vectors; i += stride) sum += P::sum(body[i]);
    if (t < head) sum += in[t];
    return sum;
}

// ---- Lesson 8's block sum and atomics --------------------------------------------------------

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
#pragma unroll
    for (unsigned delta = kWarp / 2; delta > 0; delta /= 2) v += shfl_down(v, delta);
    return v;
}

// The sum of v over the thread block, valid in thread 0 (blockDim.x a multiple of 32, at most 1024).
template <class T>
__device__ T block_sum(T v) {
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

// float, int, double (sm_60+); complex: one atomic per part (lesson 8).
template <class T>
__device__ void atomic_add(T* address, T v) {
    atomicAdd(address, v);
}
__device__ void atomic_add(cuDoubleComplex* address, cuDoubleComplex v) {
    atomicAdd(&address->x, v.x);
    atomicAdd(&address->y, v.y);
}

// ---- The kernel --------------------------------------------------------------------------------

// Lesson 8's atomic-per-block kernel over vectors.
template <class T, int kWidth>
__global__ void reduce_vectorized(const T* __restrict__ in, size_t count, size_t head, T* __restrict__ out) {
    T sum = grid_stride_sum<T, kWidth>(in, count, head);
    sum = block_sum(sum);
    if (threadIdx.x == 0) atomic_add(out, sum);
}

// ---- Host side ---------------------------------------------------------------------------------

// One full wave of blocks, or fewer for a small n: never more threads than vectors.
template <class T, int kWidth>
unsigned grid_for(size_t n) {
    const unsigned resident = tut::reduction::resident_blocks(reduce_vectorized<T, kWidth>, kThreads);
    return static_cast<unsigned>(std::min<size_t>(resident, std::max<size_t>(1, tut::reduction::ceil_div(n / kWidth, kThreads))));
}

template <class T, int kWidth>
void run_sum(const T* in, size_t n, T* out, tut::reduction::Workspace&) {  // no scratch
    tut::reduction::require_count(n);
    using V = typename Pack<T, kWidth>::type;
    const uintptr_t address = reinterpret_cast<uintptr_t>(in);
    if (address % alignof(T) != 0)
        throw tut::Unsupported(std::string("the input address is not a multiple of the ") + tut::reduction::type_name<T>() +
                               " alignment (" + std::to_string(alignof(T)) + " bytes)");
    // Elements before the first address that is a multiple of sizeof(V).
    const size_t head = std::min(n, (sizeof(V) - address % sizeof(V)) % sizeof(V) / sizeof(T));
    TUT_CUDA(cudaMemsetAsync(out, 0, sizeof(T)));  // the atomics add into *out (and n = 0 leaves 0)
    if (n == 0) return;
    reduce_vectorized<T, kWidth><<<grid_for<T, kWidth>(n), kThreads>>>(in, n, head, out);
    TUT_LAUNCH("reduce_vectorized");
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {
// The kernel of one vector width.
template <class T, int kWidth>
tut::reduction::Variant<T> variant(const char* name) {
    return {name, run_sum<T, kWidth>, tut::kernel_of(reduce_vectorized<T, kWidth>, kThreads)};
}
}  // namespace

namespace lesson {
tut::reduction::Variants variants() {
    tut::reduction::Variants all;
    all.f64 = {variant<double, 1>("double"), variant<double, 2>("double2"), variant<double, 4>("double4_32a")};
    all.f32 = {variant<float, 1>("float"), variant<float, 2>("float2"), variant<float, 4>("float4")};
    all.i32 = {variant<int, 1>("int"), variant<int, 2>("int2"), variant<int, 4>("int4")};
    all.c64 = {variant<cuDoubleComplex, 1>("complex"), variant<cuDoubleComplex, 2>("complex x2")};
    return all;
}
}  // namespace lesson

namespace {

// The longest chain of additions an element goes through, which sets this table's error
// bound (the checks set their own): the lanes of a vector (log2 W), the thread's loop (at
// most n / threads steps, +2 for the (a + b) + (c + d) of the first step), head and tail
// (2), 2 x 5 shuffle levels and one per atomic (one per block).
template <class T, int kWidth>
size_t width_depth(size_t n) {
    if (n == 0) return 0;
    const size_t blocks = grid_for<T, kWidth>(n);
    return tut::reduction::ceil_log2(kWidth) + tut::reduction::ceil_div(n, blocks * kThreads) + 2 + 2 + 10 + blocks;
}

// Each variant's vector width, as variants() lists them.
template <class T>
size_t depth(const tut::reduction::Variant<T>& v, size_t n) {
    static const std::map<std::string, size_t (*)(size_t)> by_name{
        {"double", width_depth<double, 1>}, {"double2", width_depth<double, 2>},
        {"double4_32a", width_depth<double, 4>}, {"float", width_depth<float, 1>},
        {"float2", width_depth<float, 2>}, {"float4", width_depth<float, 4>},
        {"int", width_depth<int, 1>}, {"int2", width_depth<int, 2>},
        {"int4", width_depth<int, 4>}, {"complex", width_depth<cuDoubleComplex, 1>},
        {"complex x2", width_depth<cuDoubleComplex, 2>}};
    return by_name.at(v.name)(n);
}
}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"reduction", "09_vectorized",
                                 "vectorized loads (double2, double4_32a), aligned head and tail"};
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
