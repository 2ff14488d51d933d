/// @file cooperative.hpp
/// @brief One kernel for a whole solve: the size of a cooperative grid, its launch (with
/// an L2 access-policy window when one is given), and the L2 set aside for such a window.
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

/// An L2 access-policy window over the first bytes of an array: as many as a window may
/// span, the share of them that the persisting carve-out can hold marked persisting (all
/// when they fit), the rest streaming; the carve-out is set aside while the object lives.
/// Empty (no bytes, nothing set aside) until set(), and on a GPU without a persisting L2
/// (before sm_80).
class PersistingL2Window {
  public:
    PersistingL2Window() = default;
    ~PersistingL2Window() {
        if (window_.num_bytes) {  // give the set-aside L2 back (no throwing from a destructor)
            (void)cudaCtxResetPersistingL2Cache();
            (void)cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
        }
    }
    PersistingL2Window(const PersistingL2Window&) = delete;
    PersistingL2Window& operator=(const PersistingL2Window&) = delete;

    void set(const void* base, size_t bytes) {
        int device = 0, max_persisting = 0, max_window = 0;
        TUT_CUDA(cudaGetDevice(&device));
        TUT_CUDA(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device));
        TUT_CUDA(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device));
        if (max_persisting <= 0 || max_window <= 0 || bytes == 0) return;
        const size_t span = std::min(bytes, size_t(max_window));
        const size_t set_aside = std::min(span, size_t(max_persisting));
        TUT_CUDA(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_aside));
        window_.base_ptr = const_cast<void*>(base);
        window_.num_bytes = span;
        window_.hitRatio = float(double(set_aside) / double(span));  // the share that persists
        window_.hitProp = cudaAccessPropertyPersisting;
        window_.missProp = cudaAccessPropertyStreaming;
    }

    /// The window for launch_cooperative() (no bytes: no window).
    const cudaAccessPolicyWindow& window() const { return window_; }

  private:
    cudaAccessPolicyWindow window_{};
};

}  // namespace tut
