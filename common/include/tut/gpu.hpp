/// @file gpu.hpp
/// @brief GPU detection and the "skipped" exit code.
///
/// Programs and checks that need a GPU call tut::require_gpu() first. With no usable
/// GPU it prints one clear line to stderr and exits with tut::kSkipExitCode (77), the
/// code CTest (SKIP_RETURN_CODE), Automake and the grader read as "skipped".
#pragma once

#include "check.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tut {

/// Exit code meaning "skipped: this needs a GPU and there is none".
inline constexpr int kSkipExitCode = 77;

/// Threads one SM holds on the architecture being compiled, for __launch_bounds__'s
/// minimum blocks per SM: 2048 on sm_80, sm_90 and sm_100, 1536 on sm_86, sm_87, sm_89 and
/// sm_120, 1024 on sm_75 (ptxas ignores, with a warning, a minimum it cannot meet). The
/// host pass sees 2048.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
inline constexpr int kMaxThreadsPerSm = 1024;
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1200)
inline constexpr int kMaxThreadsPerSm = 1536;
#else
inline constexpr int kMaxThreadsPerSm = 2048;
#endif

/// True when at least one CUDA device can be used. On false, `why` (if given) says why.
inline bool gpu_available(std::string* why = nullptr) {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
        if (why)
            *why = status != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status)
                                         : "no CUDA device present";
        cudaGetLastError();  // clear the sticky error so later calls are not confused by it
        return false;
    }
    return true;
}

/// Exits with kSkipExitCode and a clear message when no GPU is usable.
inline void require_gpu(const char* program) {
    std::string why;
    if (!gpu_available(&why)) {
        std::fprintf(stderr, "SKIPPED: %s needs a CUDA GPU and none is usable here (%s). Exit code %d means skipped.\n",
                     program, why.c_str(), kSkipExitCode);
        std::exit(kSkipExitCode);
    }
}

// The queries below answer "no" (0, false, empty) when the runtime call fails. They clear
// the error it left (cudaGetLastError()), so that the next checked launch (TUT_LAUNCH) does
// not report the failed query as its own.

/// The current device's SMs (a checked query: throws without a device).
inline int sm_count() {
    int device = 0, sms = 0;
    TUT_CUDA(cudaGetDevice(&device));
    TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
}

/// Reads `attribute` of the current device into `value`; false (and the error cleared)
/// when there is no device to ask.
inline bool read_device_attribute(cudaDeviceAttr attribute, int& value) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&value, attribute, device) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return true;
}

/// The current device's compute capability as major * 10 + minor (90 for sm_90); 0 when
/// it cannot be read.
inline int compute_capability() {
    int major = 0, minor = 0;
    if (!read_device_attribute(cudaDevAttrComputeCapabilityMajor, major) ||
        !read_device_attribute(cudaDevAttrComputeCapabilityMinor, minor))
        return 0;
    return major * 10 + minor;
}

/// True when the current device reports a non-zero value for `attribute`
/// (cudaDevAttrCooperativeLaunch, cudaDevAttrMaxPersistingL2CacheSize, ...).
inline bool device_has(cudaDeviceAttr attribute) {
    int value = 0;
    return read_device_attribute(attribute, value) && value != 0;
}

/// For a lesson that cannot run at all below compute capability `minimum` (e.g. 80 for
/// cp.async, 90 for wgmma): prints what is missing and exits with kSkipExitCode.
inline void require_compute_capability(const char* program, int minimum, const char* feature) {
    const int cc = compute_capability();
    if (cc >= minimum) return;
    std::fprintf(stderr,
                 "SKIPPED: %s needs %s (compute capability %d.%d or newer); this GPU is %d.%d. Exit code %d means "
                 "skipped.\n",
                 program, feature, minimum / 10, minimum % 10, cc / 10, cc % 10, kSkipExitCode);
    std::exit(kSkipExitCode);
}

/// Throws tut::Unsupported-like error text when `bytes` more device memory will not fit.
/// Returns an empty string when it fits, else a message naming both numbers. When free
/// memory cannot be read it returns empty too: the allocation then reports the problem.
inline std::string device_memory_shortfall(size_t bytes) {
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
        cudaGetLastError();
        return {};
    }
    // Leave 5% headroom for the library workspaces and the context.
    if (bytes <= free_bytes - free_bytes / 20) return {};
    char buf[200];
    std::snprintf(buf, sizeof buf, "needs %.2f GiB of device memory but only %.2f GiB of %.2f GiB is free",
                  bytes / 1073741824.0, free_bytes / 1073741824.0, total_bytes / 1073741824.0);
    return buf;
}

/// True when the CUDA driver is at least `minimum`, in cudaDriverGetVersion()'s units
/// (12040 for 12.4): for features newer than the toolkit requires, such as conditional
/// graph nodes.
inline bool driver_version_at_least(int minimum) {
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return driver >= minimum;
}

/// For main() (LessonExtras::check_device): exits with kSkipExitCode and a message when
/// the GPU cannot launch cooperatively (a grid-wide barrier needs every block resident).
inline void require_cooperative_launch(const char* program) {
    if (device_has(cudaDevAttrCooperativeLaunch)) return;
    std::fprintf(stderr,
                 "SKIPPED: %s needs cooperative launches (cudaDevAttrCooperativeLaunch), which this GPU or its "
                 "driver mode does not offer. Exit code %d means skipped.\n",
                 program, kSkipExitCode);
    std::exit(kSkipExitCode);
}

/// For a solver: throws Unsupported when the GPU cannot launch cooperatively.
inline void refuse_without_cooperative_launch() {
    if (!device_has(cudaDevAttrCooperativeLaunch))
        throw Unsupported("this GPU does not support cooperative launches");
}

}  // namespace tut
