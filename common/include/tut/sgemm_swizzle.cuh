/// @file sgemm_swizzle.cuh
/// @brief Lesson 14's block swizzle, for the SGEMM lessons that come after it (15 and 16).
///
/// Lesson 14 derives this mapping, and its exercise asks for it, so lesson 14 does not
/// include this header: its `tuning.cu` has its own `swizzled_block`.
#pragma once

#include <cuda_runtime.h>

namespace tut::sgemm {

/// The block of C this thread block computes, as (column block, row block), with lesson 14's
/// block swizzle: bands of `group_rows` block rows handed out column by column, so the blocks
/// that run together share panels of A and B in L2. 1 or less: the launch order unchanged.
__device__ __forceinline__ int2 swizzled_block(int group_rows) {
    if (group_rows <= 1) return make_int2(blockIdx.x, blockIdx.y);
    const int id = blockIdx.y * gridDim.x + blockIdx.x;
    const int group = id / (group_rows * gridDim.x);
    const int first_row = group * group_rows;
    const int rows = min(group_rows, gridDim.y - first_row);
    const int in_group = id % (group_rows * gridDim.x);
    return make_int2(in_group / rows, first_row + in_group % rows);
}

}  // namespace tut::sgemm
