/// @file device_facts.hpp
/// @brief What the GPU is and what it could do at best: the ceilings lessons print beside results.
///
/// - FP32 peak = SMs x FP32 lanes per SM x 2 (an FMA is two flops) x boost clock.
///   The lanes per SM are not in cudaDeviceProp; they come from the CUDA C++
///   Programming Guide's "arithmetic instructions" throughput table (per compute capability).
/// - Theoretical DRAM bandwidth = 2 (double data rate) x memory clock x bus width.
/// - Measured D2D bandwidth: a large cudaMemcpy device-to-device, counting every byte
///   twice (it is read once and written once). This, not the datasheet, is the honest
///   ceiling for a memory-bound kernel on the same GPU in the same run.
#pragma once

#include "check.hpp"
#include "timer.hpp"

#include <cstdio>
#include <string>

namespace tut {

struct DeviceFacts {
    std::string name;
    int device = 0;
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    double clock_ghz = 0;          ///< peak SM clock
    double memory_clock_ghz = 0;   ///< peak memory clock
    int memory_bus_bits = 0;
    size_t l2_bytes = 0;
    size_t global_memory_bytes = 0;
    size_t shared_per_block_optin = 0;
    int fp32_lanes_per_sm = 0;
    double fp32_peak_gflops = 0;   ///< 0 when the lanes per SM are unknown for this architecture
    double tf32_peak_gflops = 0;   ///< dense TF32 tensor-core peak from clocks; 0 without TF32 or when unknown
    double dram_peak_gbs = 0;      ///< theoretical, from clocks; 0 when the driver does not report them
};

/// FP32 lanes (FMA units) per SM by compute capability: the "32-bit floating-point add,
/// multiply, multiply-add" results per clock per SM of the Programming Guide's
/// throughput table; 0 when unknown.
inline int fp32_lanes_per_sm(int major, int minor) {
    switch (major) {
        case 5: return 128;                     // Maxwell
        case 6: return minor == 0 ? 64 : 128;   // Pascal: P100 (6.0) 64; 6.1, 6.2 128
        case 7: return 64;                      // Volta (7.0, 7.2), Turing (7.5)
        case 8: return minor == 0 ? 64 : 128;   // A100 (8.0) 64; 8.6, 8.7 (Orin), 8.9 (Ada) 128
        case 9: return 128;                     // Hopper (H100, H200)
        case 10: case 11: case 12: return 128;  // Blackwell: 10.0, 10.3, 11.0 (Thor), 12.x (RTX 50)
        default: return 0;
    }
}

/// Dense TF32 tensor-core flops per clock per SM (FP32 accumulation) by compute capability,
/// from NVIDIA's datasheet peaks divided by SMs x boost clock; 0 without TF32 or when unknown.
/// A100 (8.0): 156 TFLOP/s = 108 SMs x 1.41 GHz x 1024. GeForce Ampere/Ada and RTX 50 (8.6,
/// 8.9, 12.0) run TF32 with FP32 accumulation at a quarter of that per SM: 256. Hopper (9.0):
/// 495 TFLOP/s = 132 x 1.83 GHz x 2048, reached only through wgmma. Blackwell (10.0): 4096.
/// The TF32 peak below uses the same clock as the FP32 peak (cudaDevAttrClockRate, 1.98 GHz
/// on an H100 SXM: 535 TFLOP/s), so the two peaks are in the ratio of their flops per clock;
/// NVIDIA quotes tensor rates at a lower clock, and a sustained TF32 GEMM runs lower still.
inline int tf32_flops_per_sm_clock(int major, int minor) {
    if (major == 8) return minor == 0 ? 1024 : 256;
    if (major == 9) return 2048;
    if (major == 10) return 4096;
    if (major == 12) return 256;
    return 0;
}

inline DeviceFacts device_facts(int device = -1) {
    if (device < 0) TUT_CUDA(cudaGetDevice(&device));
    DeviceFacts f;
    f.device = device;
    cudaDeviceProp prop{};
    TUT_CUDA(cudaGetDeviceProperties(&prop, device));
    f.name = prop.name;
    f.cc_major = prop.major;
    f.cc_minor = prop.minor;
    f.sm_count = prop.multiProcessorCount;
    f.l2_bytes = prop.l2CacheSize;
    f.global_memory_bytes = prop.totalGlobalMem;
    f.shared_per_block_optin = prop.sharedMemPerBlockOptin;
    int clock_khz = 0, mem_clock_khz = 0, bus_bits = 0;
    // Clock rates left cudaDeviceProp in CUDA 13; the attributes remain.
    TUT_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
    TUT_CUDA(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device));
    TUT_CUDA(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
    f.clock_ghz = clock_khz * 1e-6;
    f.memory_clock_ghz = mem_clock_khz * 1e-6;
    f.memory_bus_bits = bus_bits;
    f.fp32_lanes_per_sm = fp32_lanes_per_sm(f.cc_major, f.cc_minor);
    f.fp32_peak_gflops = f.sm_count * f.fp32_lanes_per_sm * 2.0 * f.clock_ghz;
    f.tf32_peak_gflops = f.sm_count * double(tf32_flops_per_sm_clock(f.cc_major, f.cc_minor)) * f.clock_ghz;
    f.dram_peak_gbs = 2.0 * f.memory_clock_ghz * bus_bits / 8.0;
    return f;
}

/// Measures device-to-device cudaMemcpy bandwidth in GB/s (1e9 bytes/s), counting
/// read + write bytes, with a buffer far larger than L2 so DRAM is what is measured.
inline double measure_d2d_bandwidth_gbs(size_t bytes = size_t(1) << 30, int repeats = 10) {
    void *src = nullptr, *dst = nullptr;
    TUT_CUDA(cudaMalloc(&src, bytes));
    TUT_CUDA(cudaMalloc(&dst, bytes));
    TUT_CUDA(cudaMemset(src, 1, bytes));
    Timing t = time_gpu([&] { TUT_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); },
                        TimingOptions{2, repeats, false});
    TUT_CUDA(cudaFree(src));
    TUT_CUDA(cudaFree(dst));
    return 2.0 * bytes / (t.median_ms * 1e-3) / 1e9;
}

/// CUDA runtime and driver versions as "13.0 (driver 13.0)".
inline std::string cuda_version_string() {
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%d.%d (driver %d.%d)", runtime / 1000, (runtime % 1000) / 10, driver / 1000,
                  (driver % 1000) / 10);
    return buf;
}

}  // namespace tut
