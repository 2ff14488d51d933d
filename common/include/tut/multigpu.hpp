/// @file multigpu.hpp
/// @brief The multigpu track's plain C++ pieces: how rows are split between GPUs, the
/// yardsticks of scaling (speedup, parallel efficiency, nccl-tests' bus bandwidth), the
/// safety defaults every program sets, and the records' common fields.
///
/// No CUDA, MPI or NCCL here: the CPU tests (common/checks/multigpu/check_cpu.cpp) use it
/// as it is. The parts that talk to the GPUs and to the other processes are in
/// multigpu_mpi.hpp (processes, devices, timing across ranks), multigpu_nccl.hpp,
/// multigpu_ipc.hpp, multigpu_nvshmem.hpp and multigpu_topology.hpp; the halo of a
/// distributed sparse matrix is in multigpu_halo.hpp.
#pragma once

#include "cli.hpp"
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace tut::mg {

/// The track's name in records and NVTX ranges.
inline constexpr const char* kTrack = "multigpu";

// ---------------------------------------------------------------------------------------
// Splitting rows between GPUs
// ---------------------------------------------------------------------------------------

/// `n` rows split into `parts` contiguous blocks as evenly as possible: block r holds rows
/// [begin(r), end(r)); the first n % parts blocks hold one row more than the others. With
/// fewer rows than parts, the last blocks are empty. Every row has exactly one owner.
struct RowPartition {
    long long n = 0;
    int parts = 1;

    RowPartition() = default;
    RowPartition(long long rows, int p) : n(rows), parts(p) {
        if (rows < 0) throw std::invalid_argument("RowPartition: negative row count " + std::to_string(rows));
        if (p < 1) throw std::invalid_argument("RowPartition: needs at least one part, got " + std::to_string(p));
    }
    long long base() const { return n / parts; }      ///< rows of a short block
    long long extra() const { return n % parts; }     ///< blocks with one row more
    long long begin(int r) const { return r * base() + std::min<long long>(r, extra()); }
    long long end(int r) const { return begin(r) + rows(r); }
    long long rows(int r) const { return base() + (r < extra() ? 1 : 0); }
    long long max_rows() const { return base() + (extra() ? 1 : 0); }
    /// The block that holds `row` (0 <= row < n).
    int owner(long long row) const {
        const long long long_rows = extra() * (base() + 1);  // rows in the longer blocks
        if (row < long_rows) return static_cast<int>(row / (base() + 1));
        return static_cast<int>(extra() + (row - long_rows) / base());
    }
};

/// `count` elements split into `parts` chunks whose boundaries fall on multiples of
/// `align` elements (so that 16-byte vector loads stay inside a chunk): chunk c is
/// [begin(c), end(c)). The last chunks may be shorter, or empty for a small count.
struct AlignedChunks {
    size_t count = 0, align = 1;
    int parts = 1;
    AlignedChunks(size_t n, int p, size_t a = 1) : count(n), align(a ? a : 1), parts(p) {
        if (p < 1) throw std::invalid_argument("AlignedChunks: needs at least one part");
    }
    size_t units() const { return (count + align - 1) / align; }
    size_t begin(int c) const {
        const RowPartition u(static_cast<long long>(units()), parts);
        return std::min(count, static_cast<size_t>(u.begin(c)) * align);
    }
    size_t end(int c) const {
        const RowPartition u(static_cast<long long>(units()), parts);
        return std::min(count, static_cast<size_t>(u.end(c)) * align);
    }
    size_t size(int c) const { return end(c) - begin(c); }
};

// ---------------------------------------------------------------------------------------
// Yardsticks
// ---------------------------------------------------------------------------------------

/// nccl-tests' bus bandwidth factor of an all-reduce on n ranks: busbw = algbw * 2(n-1)/n,
/// where algbw = bytes / time. It is the bandwidth each GPU's link must sustain in the
/// best algorithm, so it can be held against the link's line rate whatever n is. 0 for
/// n = 1 (nothing crosses a link).
inline double allreduce_bus_factor(int n) { return n > 1 ? 2.0 * (n - 1) / n : 0.0; }
/// The same for an all-gather (each rank receives the n - 1 blocks it lacks): (n-1)/n.
inline double allgather_bus_factor(int n) { return n > 1 ? double(n - 1) / n : 0.0; }

/// Bus bandwidth in GB/s (10^9 bytes per second) of an all-reduce of `bytes` in `ms`.
inline double allreduce_busbw_gbs(double bytes, double ms, int n) {
    return ms > 0 ? bytes / (ms * 1e-3) * 1e-9 * allreduce_bus_factor(n) : NAN;
}

/// How a lesson scales: `strong` keeps the whole problem and splits it, `weak` keeps each
/// GPU's share and grows the problem with the GPUs.
enum class Scaling { strong, weak };
inline const char* scaling_name(Scaling s) { return s == Scaling::strong ? "strong" : "weak"; }

/// Speedup of `gpus` GPUs over one: t1 / tg for strong scaling, gpus * t1 / tg for weak
/// (work grows with the GPUs). NaN when a time is missing.
inline double speedup(Scaling s, double t1_ms, double tg_ms, int gpus) {
    if (!(t1_ms > 0) || !(tg_ms > 0)) return NAN;
    return s == Scaling::strong ? t1_ms / tg_ms : gpus * t1_ms / tg_ms;
}
/// Parallel efficiency: speedup / gpus (1 = perfect): t1 / (gpus * tg) strong, t1 / tg weak.
inline double parallel_efficiency(Scaling s, double t1_ms, double tg_ms, int gpus) {
    return speedup(s, t1_ms, tg_ms, gpus) / gpus;
}

// ---------------------------------------------------------------------------------------
// Safety defaults
// ---------------------------------------------------------------------------------------

/// NVLink multicast (NVLS: NVLink SHARP, the cuMulticast* objects of an NVSwitch) stays off
/// in every program of the track: on a shared host a multicast object that is not torn
/// down cleanly can leave the GPUs unusable until the machine is reset. The scripts set
/// these variables too (and mpirun -x passes them on); a program sets any that is unset.
/// No code in the track calls cuMulticastCreate.
struct SafetyVariable {
    const char* name;
    const char* value;
};
inline constexpr SafetyVariable kSafetyVariables[] = {
    {"NCCL_NVLS_ENABLE", "0"},
    {"NVSHMEM_DISABLE_NVLS", "1"},
    {"TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"},
};

/// Sets every safety variable that is unset (before NCCL or NVSHMEM is initialised), and
/// warns, once, about one set to another value.
inline void apply_safety_defaults(bool warn = true) {
    for (const SafetyVariable& v : kSafetyVariables) {
        const char* now = std::getenv(v.name);
        if (!now || !*now) {
            setenv(v.name, v.value, 1);
        } else if (warn && std::strcmp(now, v.value) != 0) {
            std::fprintf(stderr,
                         "warning: %s=%s (the track's default is %s: NVLink multicast off; see "
                         "lessons/multigpu/README.md)\n",
                         v.name, now, v.value);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------

/// The names of a comma-separated option value ("weak,128^3"), each one of `choices`, in
/// the order given, without repeats; "" gives none (the caller's "all"). Throws UsageError
/// naming --`option` for a name that is not a choice, or an empty one.
inline std::vector<std::string> name_list(const std::string& text, const std::vector<std::string>& choices,
                                          const std::string& option) {
    std::vector<std::string> names;
    if (text.empty()) return names;
    size_t at = 0;
    while (true) {
        const size_t comma = text.find(',', at);
        const std::string name = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        if (name.empty()) throw UsageError("--" + option + ": an empty name in '" + text + "'");
        if (std::find(choices.begin(), choices.end(), name) == choices.end()) {
            std::string all;
            for (const std::string& c : choices) all += (all.empty() ? "" : ", ") + c;
            throw UsageError("--" + option + ": '" + name + "' is not one of: " + all);
        }
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    return names;
}

/// name_list() for main(), after the options are parsed: bad input prints the error and
/// the usage and exits with the usage code (2), as Cli::parse_or_exit does.
inline std::vector<std::string> name_list_or_exit(const Cli& cli, const std::string& text,
                                                  const std::vector<std::string>& choices, const std::string& option) {
    try {
        return name_list(text, choices, option);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: error: %s\n\n%s", cli.program().c_str(), e.what(), cli.usage().c_str());
        std::exit(kUsageExitCode);
    }
}

/// True when `names` is empty (all) or holds `name`.
inline bool chosen(const std::vector<std::string>& names, const std::string& name) {
    return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
}

// ---------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------

/// A record of this track with its common fields: track, lesson, variant, size and
/// extra.gpus (the GPU count it was measured on).
inline Record make_record(const std::string& lesson, const std::string& variant, const std::string& size, int gpus) {
    Record r;
    r.track = kTrack;
    r.lesson = lesson;
    r.variant = variant;
    r.size = size;
    r.extra.add("gpus", gpus);
    return r;
}

/// Adds what a scaling lesson reports: the scaling kind, the time on one GPU (same run),
/// the speedup and the parallel efficiency.
inline void add_scaling(Record& r, Scaling s, double t1_ms, double tg_ms, int gpus) {
    r.extra.add("scaling", scaling_name(s));
    r.extra.add("one_gpu_ms", t1_ms);
    r.extra.add("speedup", speedup(s, t1_ms, tg_ms, gpus));
    r.extra.add("parallel_efficiency", parallel_efficiency(s, t1_ms, tg_ms, gpus));
}

/// Bytes in a human unit for sizes in tables: "4 KiB", "256 MiB", "1 GiB", "1000 B".
inline std::string bytes_text(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && bytes >= 1024 && std::fmod(bytes, 1024.0) == 0) {
        bytes /= 1024;
        ++u;
    }
    return fmt("%.0f %s", bytes, units[u]);
}

}  // namespace tut::mg
