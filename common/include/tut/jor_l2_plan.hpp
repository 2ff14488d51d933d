/// @file jor_l2_plan.hpp
/// @brief The shapes of JOR lesson 07's L2 plan: what the GPU allows, and what the lesson
/// sets aside and launches with. The plan itself, lesson::plan_l2_window(), is the lesson's
/// exercise; its checks call it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace tut::jor {

/// What the GPU allows (cudaDevAttrMaxPersistingL2CacheSize, cudaDevAttrMaxAccessPolicyWindowSize):
/// 0 for either on a GPU without a persisting L2 (before sm_80).
struct L2Limits {
    size_t max_persisting = 0;  ///< the most L2 that may be set aside for persisting lines
    size_t max_window = 0;      ///< the most bytes one access-policy window may span
};

/// The L2 to set aside (cudaLimitPersistingL2CacheSize) and the window to launch with.
struct L2Plan {
    size_t set_aside = 0;
    cudaAccessPolicyWindow window{};  ///< num_bytes 0: no window
};

}  // namespace tut::jor

namespace lesson {
/// Defined by JOR lesson 07: the window over the `bytes` at `base` and the L2 it sets aside.
tut::jor::L2Plan plan_l2_window(const void* base, size_t bytes, const tut::jor::L2Limits& limits);
}  // namespace lesson
