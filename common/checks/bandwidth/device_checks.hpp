/// @file device_checks.hpp
/// @brief Checking multi-GiB copies and gathers on the device (bandwidth checks).
///
/// At 2^30 floats, building the source on the host, uploading it, downloading the
/// result and comparing it on the host takes seconds per variant. Instead the source
/// is written on the device from each element's index (pattern_value), and a checking
/// kernel compares the output with what it must be, bitwise, poisoned guard zones
/// included; only a summary comes back: how many elements are wrong and the first one.
/// Defined in device_checks.cu (compiled by nvcc, linked into the bandwidth checks).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace bandwidth_checks {

/// The value of element i of every patterned source: a whole number below 2^24, so
/// exact in float. Two elements less than 16777213 apart always differ (the multiplier
/// is invertible modulo that prime), so a value copied from the wrong place shows.
__host__ __device__ inline float pattern_value(uint64_t i) {
    return static_cast<float>((i * 2654435761ull + 12345ull) % 16777213ull);
}

/// What a device comparison found.
struct DeviceVerdict {
    unsigned long long wrong = 0;  ///< elements that differ bitwise from what they must be
    long long first = -1;          ///< the smallest such index (into the checked region), -1 if none
    float found = 0;               ///< what that element holds
};

/// p[i] = pattern_value(first + i) for i < n (p a device pointer). Synchronous.
void fill_pattern(float* p, size_t n, uint64_t first);

/// Checks a copy's output on the device. `out` (device) holds `region` floats: those in
/// [begin, begin + n) must be pattern_value(src_first + i - begin), every other one
/// poison (all bits set).
DeviceVerdict verify_copy(const float* out, size_t region, size_t begin, size_t n, uint64_t src_first);

/// Checks a gather's output on the device, for a source whose element (r, c) is
/// pattern_value(c * rows + r). `out` (device) holds `region` floats: out[begin + k * rows
/// + r] must be pattern_value(indices[k] * rows + r) for k < count and r < rows
/// (`indices` a device array of count column numbers), every other float poison.
DeviceVerdict verify_gather(const float* out, size_t region, size_t begin, long long rows, const int* indices,
                            long long count);

}  // namespace bandwidth_checks
