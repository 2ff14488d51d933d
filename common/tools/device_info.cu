// Prints the GPU's facts and ceilings as one JSON object; the tour stores it in
// results/<gpu>.json. Exits 77 (skipped) without a GPU.
//   nvcc -O3 -std=c++17 -Icommon/include common/tools/device_info.cu -o device_info
#include "tut/device_facts.hpp"
#include "tut/gpu.hpp"
#include "tut/lesson.hpp"
#include "tut/report.hpp"

#include <cstdio>
#include <ctime>

int main() {
    tut::require_gpu("device_info");
    return tut::guarded_main("device_info", [] {
        const tut::DeviceFacts f = tut::device_facts();
        char date[32];
        std::time_t now = std::time(nullptr);
        std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
        int driver = 0;
        TUT_CUDA(cudaDriverGetVersion(&driver));
        tut::JsonObject o;
        o.add("gpu", f.name).add("cuda", tut::cuda_version_string()).add("date", date);
        o.add("compute_capability", std::to_string(f.cc_major) + "." + std::to_string(f.cc_minor));
        o.add("sm_count", f.sm_count).add("clock_ghz", f.clock_ghz).add("memory_clock_ghz", f.memory_clock_ghz);
        o.add("memory_bus_bits", f.memory_bus_bits).add("l2_bytes", static_cast<long long>(f.l2_bytes));
        o.add("global_memory_bytes", static_cast<long long>(f.global_memory_bytes));
        o.add("fp32_lanes_per_sm", f.fp32_lanes_per_sm).add("fp32_peak_gflops", f.fp32_peak_gflops);
        o.add("dram_peak_gbs", f.dram_peak_gbs).add("measured_d2d_gbs", tut::measure_d2d_bandwidth_gbs());
        std::printf("%s\n", o.str().c_str());
        return 0;
    });
}
