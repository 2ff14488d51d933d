/// @file device_compare.hpp
/// @brief Check-side helpers that keep large arrays on the GPU: random inputs generated
/// there, and tut::compare()'s element-by-element test run there.
///
/// A check at N = 8192 compares 67 M elements per run. Done on the host that means
/// downloading 256 MB and a long single-threaded loop per variant, and for the inputs
/// generating and uploading half a gigabyte; on the GPU each takes milliseconds. The
/// results are the same as the host versions': fill_uniform_on_device() writes exactly the
/// values of tut::fill_uniform<float>() (splitmix64 is a counter-based generator: element i
/// depends only on the seed and i), and compare_on_device() applies tut::compare()'s rule
/// and reports the same first and worst failing elements (the sums behind the relative L2
/// error are added in a different order, so that figure may differ in its last digits).
#pragma once

#include "tut/compare.hpp"

#include <cstddef>
#include <cstdint>

namespace tut_checks {

/// data[i] = the i-th value tut::fill_uniform<float>(data, count, seed, lo, hi) would give
/// (device pointer).
void fill_uniform_on_device(float* data, size_t count, uint64_t seed, double lo = -1.0, double hi = 1.0);

/// out[i] = |in[i]| (device pointers; in-place allowed).
void abs_on_device(const float* in, float* out, size_t count);

/// tut::compare(got, ref, count, tolerance, scale) for device arrays (scale may be null).
tut::Comparison compare_on_device(const float* got, const float* ref, size_t count, double tolerance,
                                  const float* scale = nullptr);

}  // namespace tut_checks
