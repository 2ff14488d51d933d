/// @file jor_slot.cuh
/// @brief Lesson 04's convergence values on the device, for lessons 04-08: a sweep's
/// SweepSlot, read on the host or the device, and warp_max, the maximum over a warp.
///
/// Lesson 04 adds a block's values into the slot (its exercise); the later lessons take
/// that reduction from jor_record.cuh, which lesson 04 does not include.
#pragma once

#include "jor_gpu.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>

namespace tut::jor {

/// One sweep's max |dx| and max |x|, as the bits of non-negative doubles: for those, the
/// order of the bits is the order of the values, so atomicMax on the bits is a max of the
/// values (a NaN's bits are above infinity's: a NaN anywhere makes the slot not finite).
/// Zeroed before a solve.
struct SweepSlot {
    unsigned long long dx_max_bits, x_max_bits;
};

/// The largest v of the warp's 32 lanes, in every lane (shuffles: no shared memory, no
/// barrier). Every lane of the warp must call it.
__device__ inline double warp_max(double v) {
    for (int o = 16; o > 0; o /= 2) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/// The slot's values for the stopping rule (host or device).
__host__ __device__ inline double slot_value(unsigned long long bits) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(bits));
#else
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
#endif
}

/// Should a solve stop after the sweep recorded in `s` (norm rule)? Not on infinity or NaN.
__host__ __device__ inline bool slot_says_stop(const SweepSlot& s, double tolerance) {
    const double dx = slot_value(s.dx_max_bits), x = slot_value(s.x_max_bits);
    return dx <= tolerance * x && x <= 1.7976931348623157e308 && dx == dx;
}

inline SweepStats to_host(const SweepSlot& s) {
    SweepStats r;
    r.dx_max = slot_value(s.dx_max_bits);
    r.x_max = slot_value(s.x_max_bits);
    r.dx_min = NAN;  // the fused lessons use the norm rule only
    r.finite = std::isfinite(r.dx_max) && std::isfinite(r.x_max);
    return r;
}

}  // namespace tut::jor
