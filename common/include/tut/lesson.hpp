/// @file lesson.hpp
/// @brief What every lesson's main() shares: its identity, error handling, the device banner.
#pragma once

#include "check.hpp"
#include "cli.hpp"
#include "device_facts.hpp"
#include "gpu.hpp"
#include "report.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace tut {

/// A lesson's identity, as it appears in tables, JSON records and NVTX ranges.
struct LessonInfo {
    const char* track;   ///< e.g. "sgemm"
    const char* lesson;  ///< e.g. "01_naive" (the folder name)
    const char* title;   ///< one line: what the lesson is about
};

/// Runs a lesson's body and turns errors into a message and an exit code:
/// bad input or an unsupported size -> 2, a CUDA/library failure -> 1.
/// (No GPU never gets here: require_gpu() exits 77 first.)
template <class Body>
int guarded_main(const char* program, Body&& body) {
    try {
        return body();
    } catch (const Unsupported& e) {
        std::fprintf(stderr, "%s: unsupported input: %s\n", program, e.what());
        return kUsageExitCode;
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: error: %s (see --help)\n", program, e.what());
        return kUsageExitCode;
    } catch (const CudaError& e) {
        std::fprintf(stderr, "%s: %s\n", program, e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: error: %s\n", program, e.what());
        return 1;
    }
}

/// True when `wanted` is empty or one of `names`; otherwise prints the names to choose
/// from (`context`, e.g. " for --type float", follows the name) and returns false, so the
/// lesson can exit with kUsageExitCode before any GPU work.
inline bool variant_is_known(const char* lesson, const std::string& wanted, const std::vector<std::string>& names,
                             const std::string& context = "") {
    if (wanted.empty()) return true;
    for (auto& name : names)
        if (name == wanted) return true;
    std::fprintf(stderr, "%s: error: no variant named '%s'%s; this lesson has:", lesson, wanted.c_str(), context.c_str());
    for (auto& name : names) std::fprintf(stderr, " '%s'", name.c_str());
    std::fprintf(stderr, "\n");
    return false;
}

/// The same for a list of variants (anything with a `name`).
template <class Variant>
bool variant_is_known(const char* lesson, const std::string& wanted, const std::vector<Variant>& variants) {
    std::vector<std::string> names;
    for (auto& v : variants) names.push_back(v.name);
    return variant_is_known(lesson, wanted, names);
}

/// Appends `record` to the --json file (if any), warning on stderr when that fails.
inline void append_record(const char* lesson, const std::string& json_path, const Record& record) {
    if (!append_json_line(json_path, record.json()))
        std::fprintf(stderr, "%s: warning: could not append to %s\n", lesson, json_path.c_str());
}

/// One line about the GPU and its ceilings, printed before every lesson's table.
inline void print_device_banner(const DeviceFacts& f) {
    std::printf("GPU: %s (sm_%d%d, %d SMs, %.2f GHz, L2 %.0f MiB) | CUDA %s\n", f.name.c_str(), f.cc_major, f.cc_minor,
                f.sm_count, f.clock_ghz, f.l2_bytes / 1048576.0, cuda_version_string().c_str());
    std::printf("Ceilings: FP32 peak %.0f GFLOP/s (clocks x SMs x lanes) | DRAM %.0f GB/s (theoretical)\n",
                f.fp32_peak_gflops, f.dram_peak_gbs);
}

}  // namespace tut
