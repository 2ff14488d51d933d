/// @file depth_rules.hpp
/// @brief The depth each reduction lesson's checks judge its sums with.
///
/// A correct sum may be off by gamma_depth * sum|x_i| (tut::reduction::allowed_error()),
/// where the depth is the longest chain of additions any element goes through. The
/// checks, not the lessons, decide it: each rule below bounds the depth of the lesson's
/// algorithm for every way of writing it that the lesson leaves open (another block size,
/// another grid), so that correct work passes; and each stays far below the depth at
/// which the bound stops telling right from wrong (judge() fails a bound that is not
/// below kLoosestBound * |sum|), so that a sum that drops a block, a pass or half the
/// input fails. The rules are plain functions of n and the GPU's SM count, so the CPU
/// checks (common/checks/cpu/check_reduction.cpp) test them against models of the
/// lessons' orders without a GPU.
#pragma once

#include "tut/reduction.hpp"

#include <algorithm>
#include <cstddef>

namespace reduction_checks {

/// A depth rule: the depth a correct sum of n elements may have on a GPU of `sms` SMs.
using DepthRule = size_t (*)(size_t n, size_t sms);

/// Lessons 1-6: passes of one balanced tree per block of 2^L elements until one value is
/// left (zeros pad the last block, which changes no path). p passes cover n when
/// 2^(pL) >= n, and the first such p gives a depth pL below log2(n) + L, so at most
/// ceil(log2 n) + L - 1 (and L for n = 1: one pass). The rule allows L up to 13 (blocks
/// of 8192 elements: 1024 threads loading up to 8 each), so any block size and any
/// number of loads per thread a student may try in these lessons passes. At 2^26 floats
/// it is 38 levels: about 2.3e-6 of the sum, below the 7.6e-6 that one lost block of 512
/// elements costs.
inline size_t tree_passes_depth(size_t n, size_t /*sms*/) {
    return n == 0 ? 0 : std::max<size_t>(tut::reduction::ceil_log2(n), 1) + 12;
}

/// Lessons 7-9: a grid of about one wave walks the input, each thread adding its share
/// one element (or vector) after another; the block adds its threads' sums with a tree
/// or shuffles; the block sums meet in further passes or in atomics on the output.
/// - A thread's share is at most ceil(n / (128 SMs)) elements: a one-wave grid has at
///   least 128 threads per SM (the lessons' grids have 1024 to 2048; a block of 64
///   threads needs only two resident per SM), and a grid cut short for a small n leaves
///   each thread at most 64 elements (lesson 7's plumbing: 8).
/// - 32 levels cover the rest of a path's adds in one pass: the four-wide step's pairs
///   (2), a vector's lanes (2), the head and the tail (2), a block's tree or two rounds
///   of shuffles (up to 10 each).
/// - `combine` levels for what joins the block sums (the passes after the first, or one
///   level per atomic on the output, since in the worst order the first value passes
///   through every later add).
inline size_t grid_depth(size_t n, size_t sms, size_t combine) {
    if (n == 0) return 0;
    return tut::reduction::ceil_div(n, 128 * std::max<size_t>(sms, 1)) + 64 + 32 + combine;
}

/// Lesson 7: the block sums meet in a second pass (and a third when one block cannot
/// take them all). At most 32 blocks per SM are resident on any GPU, so there are at
/// most 32 SMs block sums, and a block of at least 64 threads gives each thread at most
/// SMs / 2 + 1 of them; SMs + 64 covers that share, the pass's tree and a third pass.
inline size_t two_pass_depth(size_t n, size_t sms) { return grid_depth(n, sms, std::max<size_t>(sms, 1) + 64); }

/// Lessons 8 and 9, one atomic per block: at most 32 resident blocks per SM, so at most
/// 32 SMs atomics on the output.
inline size_t atomic_per_block_depth(size_t n, size_t sms) {
    return grid_depth(n, sms, 32 * std::max<size_t>(sms, 1));
}

/// Lesson 8, one atomic per warp: at most 2048 resident threads, 64 warps, per SM. At
/// 2^26 floats on 132 SMs this is 12516 levels, 7.5e-4 of the sum, below the 9.5e-4 one
/// lost block of a 1056-block grid costs; on 16 SMs 2.0e-3, far below kLoosestBound.
inline size_t atomic_per_warp_depth(size_t n, size_t sms) {
    return grid_depth(n, sms, 64 * std::max<size_t>(sms, 1));
}

/// Lesson 10: cub::DeviceReduce::Sum, whose design the header's cub_depth_for() bounds.
inline size_t cub_library_depth(size_t n, size_t sms) { return tut::reduction::cub_depth_for(n, sms); }

}  // namespace reduction_checks
