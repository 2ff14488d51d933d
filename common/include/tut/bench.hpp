/// @file bench.hpp
/// @brief The one lesson interface of every track: a variant, and a bench that checks it,
/// times it and records the result.
///
/// A lesson's main() shows its own check-then-time loop (llm.c's dev/cuda files do the
/// same), for example:
///
///     for (const Variant& v : variants()) {
///         if (!bench.runs(v)) continue;                                  // --variant, GPU too old
///         const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(v.run); });
///         const tut::Timing timing = bench.time(v.name, [&] { problem.run(v.run); });
///         table.add_row(bench.record(problem.result(v, timing, verdict)));
///     }
///     table.add_row(problem.library_row());
///     table.print();
///     return bench.exit_code();
///
/// The pieces, shared by every track:
/// - tut::Variant<Run>: a name, the function that does the work (`Run` is the track's
///   signature, e.g. `void(int n, const float* A, const float* B, float* C)`), and,
///   optionally, the kernel behind it (for the registers / shared memory / occupancy
///   columns) and what it needs of the GPU.
/// - tut::Bench: --variant selection, the check (skipped under --no-check and --profile;
///   a failure is printed and makes the exit code 1), the timing (CUDA events after
///   --warmup runs, median of --repeats, inside an NVTX range named track/lesson/variant),
///   and the record (one JSON line for --json, and the table row).
/// Each track's header describes its problem: the inputs, the reference and the judgement
/// (`check`), the units of work and the yardstick measured in the same run (`result`).
#pragma once

#include "check.hpp"
#include "cli.hpp"
#include "device_facts.hpp"
#include "gpu.hpp"
#include "lesson.hpp"
#include "nvtx.hpp"
#include "report.hpp"
#include "timer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tut {

// ---------------------------------------------------------------------------------------
// The variant
// ---------------------------------------------------------------------------------------

/// The kernel behind a variant and how it is launched: what the registers, shared memory
/// and occupancy columns report. A variant that calls a library leaves it empty.
struct Kernel {
    const void* handle = nullptr;     ///< what the runtime knows the kernel by (its host stub's address)
    int block_threads = 0;            ///< threads per block (0: occupancy not reported)
    size_t dynamic_shared_bytes = 0;  ///< dynamic shared memory per block
};

/// `tut::kernel_of(my_kernel<float>, 256)`: the kernel and its launch shape.
template <class... Args>
Kernel kernel_of(void (*kernel)(Args...), int block_threads = 0, size_t dynamic_shared_bytes = 0) {
    return Kernel{reinterpret_cast<const void*>(kernel), block_threads, dynamic_shared_bytes};
}

/// What a variant needs of the GPU beyond what every lesson needs.
struct Needs {
    int compute_capability = 0;  ///< oldest GPU it runs on, as major * 10 + minor (80 for sm_80); 0: any
    const char* why = "";        ///< what older GPUs lack, for the message (e.g. "TF32 tensor cores")
};

/// One way a lesson does its job: a name, the function that does it, and optionally the
/// kernel behind it and what it needs of the GPU. Every track declares its variants so:
///
///     tut::Variant<void(int, const float*, const float*, float*)> v{"tile=16", run_tiled<16>,
///                                                                  tut::kernel_of(sgemm_tiled<16>, 256)};
template <class Run>
struct Variant {
    std::string name;         ///< the table's row and --variant's value; unique within the lesson
    std::function<Run> run;   ///< does the work; throws tut::Unsupported, before launching, for input it cannot do
    Kernel kernel{};          ///< optional
    Needs needs{};            ///< optional
};

/// The names of a lesson's variants, for --variant's check.
template <class V>
std::vector<std::string> names_of(const std::vector<V>& variants) {
    std::vector<std::string> names;
    for (const V& v : variants) names.push_back(v.name);
    return names;
}

/// Lets `kernel` launch with `bytes` of dynamic shared memory: above 48 KB a kernel must ask
/// (cudaFuncAttributeMaxDynamicSharedMemorySize). Asks once per kernel, and again only for
/// more, so a launcher may call it before every launch. Lessons launch from one thread.
inline void allow_dynamic_shared_memory(const void* kernel, size_t bytes) {
    static std::map<const void*, size_t> granted;
    size_t& already = granted[kernel];
    if (bytes <= already) return;
    TUT_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    already = bytes;
}

template <class... Args>
void allow_dynamic_shared_memory(void (*kernel)(Args...), size_t bytes) {
    allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), bytes);
}

/// What a kernel uses of an SM; -1 where unknown (a library call, or no launch shape).
struct Resources {
    int registers = -1;           ///< per thread
    long long shared_bytes = -1;  ///< per block, static plus dynamic
    double occupancy = -1;        ///< resident warps per SM / the SM's maximum (occupancy calculator)
};

inline Resources resources_of(const Kernel& k) {
    Resources r;
    if (!k.handle) return r;
    cudaFuncAttributes attr{};
    TUT_CUDA(cudaFuncGetAttributes(&attr, k.handle));
    r.registers = attr.numRegs;
    r.shared_bytes = static_cast<long long>(attr.sharedSizeBytes + k.dynamic_shared_bytes);
    if (k.block_threads > 0) {
        allow_dynamic_shared_memory(k.handle, k.dynamic_shared_bytes);  // the calculator needs it too
        int blocks = 0, device = 0, max_threads = 0;
        TUT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k.handle, k.block_threads,
                                                               k.dynamic_shared_bytes));
        TUT_CUDA(cudaGetDevice(&device));
        TUT_CUDA(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
        r.occupancy = double(blocks) * k.block_threads / max_threads;
    }
    return r;
}

/// What `v` needs that a GPU of this compute capability (major * 10 + minor), whose blocks
/// may have `shared_per_block` bytes of dynamic shared memory (0: not checked), lacks;
/// empty when it runs there. The words "needs compute capability X.Y" are the ones the
/// grader (scripts/grade.py) reads as the reason for a skip.
template <class V>
std::string unmet_need(const V& v, int compute_capability, size_t shared_per_block = 0) {
    const int need = v.needs.compute_capability;
    if (compute_capability < need)
        return "needs compute capability " + std::to_string(need / 10) + "." + std::to_string(need % 10) +
               " or newer (" + v.needs.why + "); this GPU is " + std::to_string(compute_capability / 10) + "." +
               std::to_string(compute_capability % 10);
    if (shared_per_block != 0 && v.kernel.dynamic_shared_bytes > shared_per_block)
        return "needs " + std::to_string(v.kernel.dynamic_shared_bytes / 1024) +
               " KB of shared memory per block; this GPU offers " + std::to_string(shared_per_block / 1024) + " KB";
    return {};
}

// ---------------------------------------------------------------------------------------
// Starting a lesson
// ---------------------------------------------------------------------------------------

/// Parses the command line (usage and exit 0 on --help; a message, usage and exit 2 on bad
/// input), refuses a --variant the lesson does not have (exit 2), runs the lesson's own
/// test of its options (`validate`, which throws UsageError or Unsupported: exit 2), and
/// requires a GPU (exit 77 with the reason) -- in that order, so bad input is reported on
/// any machine.
inline void parse_lesson_options(Cli& cli, RunOptions& run, int argc, char** argv, const LessonInfo& lesson,
                                 const std::vector<std::string>& variant_names,
                                 const std::function<void()>& validate = {}) {
    add_run_options(cli, run);
    cli.parse_or_exit(argc, argv);
    finish_run_options(run);
    if (!variant_is_known(lesson.lesson, run.variant, variant_names)) std::exit(kUsageExitCode);
    if (validate) {
        try {
            validate();
        } catch (const std::exception& e) {  // UsageError, Unsupported
            std::fprintf(stderr, "%s: error: %s\n\n%s", lesson.lesson, e.what(), cli.usage().c_str());
            std::exit(kUsageExitCode);
        }
    }
    require_gpu(lesson.lesson);
}

// ---------------------------------------------------------------------------------------
// Checking, timing, recording
// ---------------------------------------------------------------------------------------

/// The outcome of a variant's check: the table's "check" cell, and what went wrong.
struct Verdict {
    enum class State { skipped, passed, failed };
    State state = State::skipped;
    std::string cell = "skipped";  ///< e.g. "ok (3.1e-07)", "FAILED", "skipped"
    std::string detail;            ///< one line on what was wrong, for stderr

    bool failed() const { return state == State::failed; }
    bool passed() const { return state == State::passed; }
};

inline Verdict passed(std::string cell) { return {Verdict::State::passed, std::move(cell), {}}; }
inline Verdict failed(std::string detail, std::string cell = "FAILED") {
    return {Verdict::State::failed, std::move(cell), std::move(detail)};
}

/// How Bench::time_host() repeats its work: -1 takes --warmup / --repeats.
struct HostTiming {
    int warmup = -1;
    int repeats = -1;
    std::function<void(int repeat)> before_repeat;  ///< untimed, before each timed repeat
};

/// One measured result: the JSON record and the table row that show it.
struct Result {
    Record record;
    std::vector<std::string> row;
};

/// Checks and times a lesson's variants and records the results (see the file comment).
class Bench {
  public:
    /// Prints the GPU and its ceilings. Call it after parse_lesson_options().
    Bench(const LessonInfo& lesson, const RunOptions& run) : lesson_(lesson), run_(run), device_(device_facts()) {
        print_device_banner(device_);
    }

    const LessonInfo& lesson() const { return lesson_; }
    const RunOptions& run() const { return run_; }
    const DeviceFacts& device() const { return device_; }
    /// The timing of the lesson's variants: --warmup and --repeats over `base`'s other fields.
    TimingOptions timing(TimingOptions base = {}) const {
        base.warmup = run_.warmup;
        base.repeats = run_.repeats;
        return base;
    }

    /// True when `v` is to run: --variant is empty or names it, and this GPU has what it
    /// needs (otherwise the reason is printed and it counts as skipped).
    template <class V>
    bool runs(const V& v) {
        if (!run_.variant.empty() && v.name != run_.variant) return false;
        const std::string need = unmet_need(v, device_.cc_major * 10 + device_.cc_minor,
                                            device_.shared_per_block_optin);
        if (!need.empty()) {
            std::printf("%s [%s]: skipped: %s\n", lesson_.lesson, v.name.c_str(), need.c_str());
            return false;
        }
        ++ran_;
        return true;
    }

    /// The same for a measurement that is not a variant (a transfer kind, say): --variant only.
    bool runs(const std::string& name) {
        if (!run_.variant.empty() && name != run_.variant) return false;
        ++ran_;
        return true;
    }

    /// Runs `check` (which runs the variant once on poisoned output and returns a Verdict)
    /// unless --no-check or --profile; a failure is printed on stderr and fails the run.
    template <class Check>
    Verdict check(const std::string& name, Check&& check) {
        if (!run_.check()) return Verdict{};
        Verdict v = check();
        if (v.failed()) {
            all_passed_ = false;
            std::fprintf(stderr, "%s [%s]: %s\n", lesson_.lesson, name.c_str(), v.detail.c_str());
        }
        return v;
    }

    /// Times `work` with CUDA events: `timing()`'s warm-up runs, then the median of its
    /// repeats, inside an NVTX range named track/lesson/name.
    template <class Work>
    Timing time(const std::string& name, Work&& work, TimingOptions base = {}) {
        NvtxRange range(range_name(name));
        return time_gpu(work, timing(base));
    }

    /// Times `work` by the host's wall clock (warm-up runs, then the median of the
    /// repeats): for work whose host-side cost is part of the subject (a solve paced by
    /// its launches or its polling, a pipeline from host memory). `work` must return only
    /// once the GPU has finished it. `counts` may set other warm-up and repeat counts than
    /// the command line's (a large problem), and `before_repeat(i)` runs untimed before
    /// timed repeat i (to poison an output that the last repeat must write, say).
    template <class Work>
    Timing time_host(const std::string& name, Work&& work, HostTiming counts = {}) {
        const int warmup = counts.warmup >= 0 ? counts.warmup : run_.warmup;
        const int repeats = std::max(1, counts.repeats >= 0 ? counts.repeats : run_.repeats);
        for (int i = 0; i < warmup; ++i) work();
        std::vector<double> samples;
        NvtxRange range(range_name(name));
        for (int i = 0; i < repeats; ++i) {
            if (counts.before_repeat) counts.before_repeat(i);
            const auto t0 = std::chrono::steady_clock::now();
            work();
            samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        Timing t;
        t.repeats = repeats;
        t.min_ms = *std::min_element(samples.begin(), samples.end());
        t.max_ms = *std::max_element(samples.begin(), samples.end());
        t.median_ms = median_of(samples);
        return t;
    }

    /// Appends `result`'s record, with the lesson's track and name, to the --json file and
    /// returns its table row.
    std::vector<std::string> record(const Result& result) {
        Record r = result.record;
        r.track = lesson_.track;
        r.lesson = lesson_.lesson;
        append_record(lesson_.lesson, run_.json, r);
        return result.row;
    }

    /// Marks the run failed without a check (a measurement that went wrong).
    void fail(const std::string& name, const std::string& why) {
        all_passed_ = false;
        std::fprintf(stderr, "%s [%s]: %s\n", lesson_.lesson, name.c_str(), why.c_str());
    }

    /// The program's exit code: 1 when a check failed; kSkipExitCode when no variant ran
    /// (a run that measured nothing has not succeeded); 0 otherwise.
    int exit_code() const {
        if (!all_passed_) return 1;
        if (ran_ == 0) {
            std::fflush(stdout);  // the reasons above, before this line on stderr
            std::fprintf(stderr, "%s: skipped: no selected variant runs on this GPU (the reasons are above)\n",
                         lesson_.lesson);
            return kSkipExitCode;
        }
        return 0;
    }

  private:
    std::string range_name(const std::string& name) const {
        return std::string(lesson_.track) + "/" + lesson_.lesson + "/" + name;
    }

    LessonInfo lesson_;
    RunOptions run_;
    DeviceFacts device_;
    int ran_ = 0;
    bool all_passed_ = true;
};

}  // namespace tut
