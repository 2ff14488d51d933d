/// @file multigpu_peers.hpp
/// @brief The peers lesson's interface: what a GPU-to-GPU copy variant is given, so that the
/// lesson's main() and its checks call the variants the same way.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace tut::mg {

/// Whether each GPU of a pair may load from and store to the other's memory.
struct PeerAccess {
    bool a_to_b = false;  ///< kernels on GPU a may dereference GPU b's pointers
    bool b_to_a = false;  ///< and kernels on GPU b GPU a's
};

/// One copy of `bytes` from `src` (on GPU src_dev) to `dst` (on GPU dst_dev): a stream on
/// each GPU (whoever calls the variant starts both together and waits for both), the
/// access that was granted (a = src_dev, b = dst_dev) and the grid for copy kernels.
struct CopyCall {
    int src_dev = 0, dst_dev = 1;
    const void* src = nullptr;
    void* dst = nullptr;
    size_t bytes = 0;
    cudaStream_t src_stream = nullptr, dst_stream = nullptr;
    PeerAccess access;
    int blocks = 0;
};

}  // namespace tut::mg
