// Device versions of tut::fill_uniform<float>() and tut::compare() for the checks
// (device_compare.hpp says why and what matches the host versions).
#include "device_compare.hpp"

#include "tut/buffer.hpp"
#include "tut/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace tut_checks {
namespace {

constexpr int kThreads = 256;

int blocks_for(size_t count) {
    return static_cast<int>(std::max<size_t>(1, std::min<size_t>((count + kThreads - 1) / kThreads, 4096)));
}

// tut::SplitMix64's i-th output (0-based) from `seed`: its state after i + 1 steps is
// seed + (i + 1) * golden, so every element can be made independently.
__device__ uint64_t splitmix64_at(uint64_t seed, uint64_t i) {
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__global__ void fill_uniform_kernel(float* data, size_t count, uint64_t seed, double lo, double hi) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
        const double u = double(splitmix64_at(seed, i) >> 11) * (1.0 / 9007199254740992.0);
        // The host rounds the product and the sum separately: no fused multiply-add here.
        data[i] = static_cast<float>(__dadd_rn(lo, __dmul_rn(hi - lo, u)));
    }
}

__global__ void abs_kernel(const float* in, float* out, size_t count) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
        out[i] = fabsf(in[i]);
}

// What the grid adds up. Non-negative doubles order like their bit patterns, so maxima
// of them are atomicMax on the bits.
struct Tally {
    unsigned long long bad, nonfinite, first_bad, worst, worst_ratio_bits, max_abs_bits;
    double err2, ref2;
};

struct Element {
    double err, allowed, ratio;
    bool finite, bad;
};

// tut::compare()'s rule for one element.
__device__ Element judge(float got, float ref, const float* scale, size_t i, double tolerance) {
    Element e;
    const double g = got, r = ref;
    const double s = scale ? double(scale[i]) : fmax(fabs(r), 1.0);
    e.allowed = tolerance * s;
    e.finite = isfinite(g);
    e.err = e.finite ? fabs(g - r) : INFINITY;
    e.bad = !(e.err <= e.allowed);
    e.ratio = e.allowed > 0 ? e.err / e.allowed : INFINITY;
    return e;
}

__global__ void tally_kernel(const float* got, const float* ref, const float* scale, size_t count, double tolerance,
                             Tally* t) {
    unsigned long long bad = 0, nonfinite = 0, first_bad = ~0ull;
    double err2 = 0, ref2 = 0, max_abs = 0, worst_ratio = 0;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
        const Element e = judge(got[i], ref[i], scale, i, tolerance);
        const double r = ref[i];
        if (e.finite) {
            const double d = double(got[i]) - r;
            err2 += d * d;
            max_abs = fmax(max_abs, e.err);
        } else {
            ++nonfinite;
        }
        ref2 += r * r;
        if (e.bad) {
            ++bad;
            first_bad = min(first_bad, static_cast<unsigned long long>(i));
            worst_ratio = fmax(worst_ratio, e.ratio);
        }
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        bad += __shfl_xor_sync(0xffffffffu, bad, offset);
        nonfinite += __shfl_xor_sync(0xffffffffu, nonfinite, offset);
        first_bad = min(first_bad, __shfl_xor_sync(0xffffffffu, first_bad, offset));
        err2 += __shfl_xor_sync(0xffffffffu, err2, offset);
        ref2 += __shfl_xor_sync(0xffffffffu, ref2, offset);
        max_abs = fmax(max_abs, __shfl_xor_sync(0xffffffffu, max_abs, offset));
        worst_ratio = fmax(worst_ratio, __shfl_xor_sync(0xffffffffu, worst_ratio, offset));
    }
    if (threadIdx.x % 32 == 0) {
        atomicAdd(&t->bad, bad);
        atomicAdd(&t->nonfinite, nonfinite);
        atomicMin(&t->first_bad, first_bad);
        atomicAdd(&t->err2, err2);
        atomicAdd(&t->ref2, ref2);
        atomicMax(&t->max_abs_bits, static_cast<unsigned long long>(__double_as_longlong(max_abs)));
        atomicMax(&t->worst_ratio_bits, static_cast<unsigned long long>(__double_as_longlong(worst_ratio)));
    }
}

// The first failing element whose ratio is the largest (what the host loop keeps).
__global__ void worst_kernel(const float* got, const float* ref, const float* scale, size_t count, double tolerance,
                             Tally* t) {
    const double worst_ratio = __longlong_as_double(static_cast<long long>(t->worst_ratio_bits));
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
        const Element e = judge(got[i], ref[i], scale, i, tolerance);
        if (e.bad && e.ratio == worst_ratio) atomicMin(&t->worst, static_cast<unsigned long long>(i));
    }
}

double value_at(const float* p, size_t i) {
    float v = 0;
    TUT_CUDA(cudaMemcpy(&v, p + i, sizeof v, cudaMemcpyDeviceToHost));
    return v;
}

}  // namespace

void fill_uniform_on_device(float* data, size_t count, uint64_t seed, double lo, double hi) {
    if (count == 0) return;
    fill_uniform_kernel<<<blocks_for(count), kThreads>>>(data, count, seed, lo, hi);
    TUT_LAUNCH("fill_uniform_kernel");
}

void abs_on_device(const float* in, float* out, size_t count) {
    if (count == 0) return;
    abs_kernel<<<blocks_for(count), kThreads>>>(in, out, count);
    TUT_LAUNCH("abs_kernel");
}

tut::Comparison compare_on_device(const float* got, const float* ref, size_t count, double tolerance,
                                  const float* scale) {
    tut::Comparison c;
    c.count = count;
    if (count == 0) return c;
    Tally start{};
    start.first_bad = start.worst = ~0ull;
    tut::DeviceBuffer<Tally> tally(std::vector<Tally>{start});
    tally_kernel<<<blocks_for(count), kThreads>>>(got, ref, scale, count, tolerance, tally.get());
    TUT_LAUNCH("tally_kernel");
    Tally t = tally.download()[0];
    if (t.bad > 0) {
        worst_kernel<<<blocks_for(count), kThreads>>>(got, ref, scale, count, tolerance, tally.get());
        TUT_LAUNCH("worst_kernel");
        t = tally.download()[0];
        c.first_bad = t.first_bad;
        c.first_got = value_at(got, t.first_bad);
        c.first_ref = value_at(ref, t.first_bad);
        // When every failing element's ratio is NaN (a NaN or infinite reference or scale),
        // no element is the worst: worst_kernel matches none and leaves ~0. As in
        // tut::compare(), worst then stays SIZE_MAX with zero values, and the first failing
        // element, read above, is the diagnosis; ~0 is no index to read.
        if (t.worst != ~0ull) {
            c.worst = t.worst;
            c.worst_got = value_at(got, t.worst);
            c.worst_ref = value_at(ref, t.worst);
            const double s = scale ? value_at(scale, t.worst) : std::fmax(std::fabs(c.worst_ref), 1.0);
            c.worst_allowed = tolerance * s;
        }
    }
    c.bad = t.bad;
    c.nonfinite = t.nonfinite;
    double max_abs = 0;
    static_assert(sizeof max_abs == sizeof t.max_abs_bits, "double is 64 bits");
    std::memcpy(&max_abs, &t.max_abs_bits, sizeof max_abs);
    c.max_abs_error = max_abs;
    c.rel_l2_error = t.ref2 > 0 ? std::sqrt(t.err2 / t.ref2) : std::sqrt(t.err2);
    return c;
}

}  // namespace tut_checks
