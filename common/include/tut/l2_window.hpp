/// @file l2_window.hpp
/// @brief The L2 set aside for persisting accesses, and an access-policy window over an
/// array, for a kernel launched with tut::launch_cooperative() (cooperative.hpp).
///
/// JOR lesson 07 writes this itself (its exercise), so no JOR lesson includes this header;
/// CG's streaming lesson uses it for the row pointers it keeps in L2.
#pragma once

#include "check.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

namespace tut {

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
