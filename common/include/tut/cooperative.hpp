/// @file cooperative.hpp
/// @brief One kernel for a whole solve: the size of a cooperative grid, and its launch (with
/// an L2 access-policy window when one is given).
///
/// A cooperative launch starts every block of the grid at once or fails, which is what a
/// grid-wide barrier (cooperative_groups::this_grid().sync()) needs: a barrier cannot wait
/// for a block that never got an SM. So the grid may be at most the blocks that fit on one
/// SM (the occupancy calculator's answer) times the SMs. The persistent lessons of the JOR
/// and CG tracks use these; tut::require_cooperative_launch() (gpu.hpp) says whether the
/// GPU can launch cooperatively at all.
#pragma once

#include "check.hpp"
#include "gpu.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <utility>

namespace tut {

/// Blocks of `threads` threads (and `shared_bytes` of dynamic shared memory) of `kernel`
/// that can be resident on one SM at once. Throws Unsupported for none.
template <class... Params>
int resident_blocks_per_sm(void (*kernel)(Params...), int threads, size_t shared_bytes = 0) {
    int fit = 0;
    TUT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, threads, shared_bytes));
    if (fit < 1) throw Unsupported("the persistent kernel does not fit on an SM");
    return fit;
}

/// The largest grid of `kernel` that a cooperative launch accepts, and no more than
/// `needed` blocks (a small problem needs fewer, and a barrier over fewer blocks is cheaper).
template <class... Params>
int cooperative_grid(void (*kernel)(Params...), int threads, int needed, size_t shared_bytes = 0) {
    return std::max(1, std::min(resident_blocks_per_sm(kernel, threads, shared_bytes) * sm_count(), needed));
}

/// kernel<<<blocks, threads, shared_bytes>>>(args...) as a cooperative launch on the default
/// stream, with the access-policy window `window` when it has bytes.
template <class... Params, class... Actual>
void launch_cooperative(void (*kernel)(Params...), int blocks, int threads, size_t shared_bytes,
                        const cudaAccessPolicyWindow& window, Actual&&... args) {
    cudaLaunchAttribute attributes[2] = {};
    attributes[0].id = cudaLaunchAttributeCooperative;
    attributes[0].val.cooperative = 1;
    attributes[1].id = cudaLaunchAttributeAccessPolicyWindow;
    attributes[1].val.accessPolicyWindow = window;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = shared_bytes;
    config.attrs = attributes;
    config.numAttrs = window.num_bytes ? 2 : 1;
    TUT_CUDA(cudaLaunchKernelEx(&config, kernel, std::forward<Actual>(args)...));
}

}  // namespace tut
