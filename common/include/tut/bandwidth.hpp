/// @file bandwidth.hpp
/// @brief The bandwidth track: byte accounting, the copy and column-gather variants, the
/// CPU gather reference, and what lessons 02-06 measure their variants against. Lesson 01's
/// transfers and lesson 02's copy problem live in those lessons' own harness.
///
/// **Counting bytes.** A result in GB/s is bytes moved / time, with 1 GB = 1e9 bytes.
/// Every byte a kernel reads from DRAM and every byte it writes count once, so a copy
/// of B bytes moves 2B (read B, write B): the convention of the old `bandwidthTest`
/// sample and of the theoretical DRAM figure, which is shared by reads and writes.
/// A host <-> device transfer of B bytes counts B: the link carries each byte once.
/// A gather of `count` columns of `rows` floats moves 2 x rows x count x 4 bytes; the
/// 4 x count bytes of indices it also reads (1/rows of the traffic) are not counted.
///
/// **The yardstick.** A copy-like kernel is judged against `cudaMemcpy`
/// device-to-device of the same number of bytes, timed in the same run with L2
/// flushed, and against the theoretical DRAM bandwidth (tut::DeviceFacts). AgainstMemcpy
/// (GatherProblem, lesson 02's CopyProblem) prints both ratios and writes them to the
/// JSON records.
///
/// **The gather.** `tgt = src(:, indices)` (MATLAB notation): `src` is a column-major
/// rows x cols float matrix (element (r, c) at `src[c * rows + r]`), `indices` holds
/// `count` column numbers in 0..cols-1 (repeats and any order allowed), `tgt` is
/// rows x count and column k of `tgt` is column indices[k] of `src`.
#pragma once

#include "bench.hpp"
#include "buffer.hpp"
#include "check.hpp"
#include "cli.hpp"
#include "device_facts.hpp"
#include "gpu.hpp"
#include "lesson.hpp"
#include "nvtx.hpp"
#include "random.hpp"
#include "report.hpp"
#include "timer.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tut::bandwidth {

// ---------------------------------------------------------------------------------
// Byte accounting
// ---------------------------------------------------------------------------------

/// The three kinds of cudaMemcpy lesson 01 measures.
enum class Direction { HostToDevice, DeviceToHost, DeviceToDevice };

/// Bytes a transfer of `payload` bytes moves: D2D reads and writes device memory
/// (2 x payload); H2D and D2H carry each byte over the link once (payload).
inline double transfer_bytes_moved(Direction d, size_t payload) {
    return (d == Direction::DeviceToDevice ? 2.0 : 1.0) * static_cast<double>(payload);
}

/// Bytes a copy of `elements` floats moves: each is read once and written once.
inline double copy_bytes_moved(size_t elements) { return 2.0 * sizeof(float) * static_cast<double>(elements); }

/// Bytes a gather of `count` columns of `rows` floats moves (read + write; the
/// indices, 1/rows of the traffic, are left out).
inline double gather_bytes_moved(long long rows, long long count) {
    return 2.0 * sizeof(float) * static_cast<double>(rows) * static_cast<double>(count);
}

/// GB/s (1e9 bytes per second) for `bytes` moved in `ms` milliseconds.
inline double gbs(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : NAN; }

// ---------------------------------------------------------------------------------
// The host link's theoretical bandwidth (lesson 01's peak for H2D and D2H)
// ---------------------------------------------------------------------------------

/// Theoretical one-direction PCIe bandwidth in GB/s from the Linux sysfs texts
/// `max_link_speed` (e.g. "32.0 GT/s PCIe") and `max_link_width` (e.g. "16"):
/// GT/s x lanes x line-code efficiency / 8 bits. PCIe 1.x and 2.x use 8b/10b (0.8),
/// 3.0 to 5.0 use 128b/130b, 6.0 FLIT mode carries 242 payload bytes in 256.
/// Packet headers cost another ~5-15% that no datasheet figure includes.
/// NaN when either text does not parse.
inline double pcie_peak_gbs(const std::string& speed_text, const std::string& width_text) {
    char* end = nullptr;
    const double gts = std::strtod(speed_text.c_str(), &end);
    if (end == speed_text.c_str() || !(gts > 0)) return NAN;
    const long lanes = std::strtol(width_text.c_str(), &end, 10);
    if (end == width_text.c_str() || lanes <= 0) return NAN;
    const double efficiency = gts <= 5.0 ? 0.8 : gts < 64.0 ? 128.0 / 130.0 : 242.0 / 256.0;
    return gts * static_cast<double>(lanes) * efficiency / 8.0;
}

/// The GPU's PCIe link (its maximum speed and width, read from sysfs), in GB/s one
/// way; NaN when unknown (not Linux, no sysfs, or not a PCIe device).
inline double host_link_peak_gbs(int device) {
    char bus_id[64] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) {
        cudaGetLastError();
        return NAN;
    }
    std::string id = bus_id;
    for (auto& ch : id) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    auto read_line = [&](const char* leaf) {
        std::ifstream in("/sys/bus/pci/devices/" + id + "/" + leaf);
        std::string line;
        std::getline(in, line);
        return line;
    };
    return pcie_peak_gbs(read_line("max_link_speed"), read_line("max_link_width"));
}

// ---------------------------------------------------------------------------------
// Shared launch arithmetic
// ---------------------------------------------------------------------------------

/// Number of SMs of the current device (lessons call it as tut::bandwidth::sm_count()).
using tut::sm_count;

/// Blocks for a grid-stride loop that fills the GPU: SMs x the blocks of `threads`
/// threads that fit on one SM at once (occupancy API), but no more blocks than
/// `work_items` needs at one item per thread (at least 1).
template <class Kernel>
int full_grid_blocks(Kernel kernel, int threads, long long work_items) {
    int per_sm = 0;
    TUT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(kernel), threads, 0));
    const long long needed = std::max(1LL, (work_items + threads - 1) / threads);
    return static_cast<int>(std::min<long long>(needed, static_cast<long long>(std::max(per_sm, 1)) * sm_count()));
}

// ---------------------------------------------------------------------------------
// Copies (lesson 02)
// ---------------------------------------------------------------------------------

/// Largest copy (in floats) the lessons claim: 4 GiB per buffer. Indices are 64-bit.
inline constexpr size_t kMaxCopyElements = size_t(1) << 30;

/// Throws Unsupported for a copy the lessons do not do: more than kMaxCopyElements,
/// or null pointers with work to do. n = 0 is a valid no-op.
inline void require_copy(size_t n, const float* src, const float* dst) {
    if (n > kMaxCopyElements)
        throw Unsupported("copy of " + std::to_string(n) + " floats: at most " + std::to_string(kMaxCopyElements) +
                          " are supported");
    if (n > 0 && (!src || !dst)) throw Unsupported("copy of " + std::to_string(n) + " floats from or to a null pointer");
}

/// Copies n floats from src to dst (device pointers, any 4-byte alignment) and returns
/// the code path it took for these pointers, e.g. "float4" or "float: src/dst
/// misaligned" (the table's path column), or "" when it has one path only. Throws
/// Unsupported (before launching) for what require_copy refuses.
using CopyRun = std::string(size_t n, const float* src, float* dst);

/// One way lesson 02 copies (see tut::Variant).
using CopyVariant = Variant<CopyRun>;

/// Index of the first element where two arrays differ bitwise, or -1 when equal.
/// Bitwise, so a NaN from the poison never compares equal to anything.
inline long long first_difference(const float* got, const float* want, size_t count) {
    if (count == 0 || std::memcmp(got, want, count * sizeof(float)) == 0) return -1;
    for (size_t i = 0; i < count; ++i)
        if (std::memcmp(got + i, want + i, sizeof(float)) != 0) return static_cast<long long>(i);
    return -1;
}

// ---------------------------------------------------------------------------------
// Column gather (lessons 03-06)
// ---------------------------------------------------------------------------------

/// Largest matrices the gather lessons claim: rows x cols and rows x count at most
/// 2^30 floats (4 GiB) each. Every element offset then fits a 32-bit int, and so does
/// j + stride in a grid-stride loop (stride < 2^30), as the classic kernels assume.
inline constexpr long long kMaxGatherElements = 1LL << 30;

/// The input of one gather, device pointers plus what the host knows about the indices.
/// Build it with make_gather_input(), which scans the host copy of the indices once, so
/// a launcher can refuse a bad index in O(1) before it launches anything.
struct GatherInput {
    int rows = 0, cols = 0;            ///< src is rows x cols, column-major
    const float* src = nullptr;        ///< device
    int count = 0;                     ///< number of extracted columns
    const int* indices = nullptr;      ///< device, count column numbers
    long long bad_position = -1;       ///< position of the first index outside 0..cols-1, -1 if none
    long long bad_value = 0;           ///< that index
    long long elements() const { return static_cast<long long>(rows) * count; }
};

/// Builds a GatherInput; `host_indices` must hold the same values as `device_indices`.
inline GatherInput make_gather_input(long long rows, long long cols, const float* src,
                                     const std::vector<int>& host_indices, const int* device_indices) {
    GatherInput in;
    const long long int_max = 0x7fffffffLL;
    in.rows = static_cast<int>(std::clamp(rows, -1LL, int_max));
    in.cols = static_cast<int>(std::clamp(cols, -1LL, int_max));
    in.src = src;
    in.count = static_cast<int>(std::min<long long>(static_cast<long long>(host_indices.size()), int_max));
    in.indices = device_indices;
    for (size_t k = 0; k < host_indices.size(); ++k)
        if (host_indices[k] < 0 || host_indices[k] >= cols) {
            in.bad_position = static_cast<long long>(k);
            in.bad_value = host_indices[k];
            break;
        }
    if (rows != in.rows || cols != in.cols || host_indices.size() > static_cast<size_t>(int_max)) {
        in.rows = in.cols = -1;  // beyond int: refused by require_gather as too large
    }
    return in;
}

/// Throws Unsupported, with a message that says why, for a gather the lessons must not
/// launch: an empty matrix, an index outside 0..cols-1, sizes beyond
/// kMaxGatherElements, or missing pointers. Runs in O(1): every launcher calls it first.
inline void require_gather(const GatherInput& in, const float* dst) {
    const std::string shape = std::to_string(in.rows) + " x " + std::to_string(in.cols);
    if (in.rows < 0 || in.cols < 0 || in.count < 0)
        throw Unsupported("gather: sizes must be whole numbers that fit an int (rows " + std::to_string(in.rows) +
                          ", cols " + std::to_string(in.cols) + ", count " + std::to_string(in.count) + ")");
    if (in.rows == 0 || in.cols == 0)
        throw Unsupported("gather: the source matrix is empty (" + shape + "); it needs at least one row and one column");
    if (in.bad_position >= 0)
        throw Unsupported("gather: index " + std::to_string(in.bad_value) + " at position " +
                          std::to_string(in.bad_position) + " is out of range: the source has " +
                          std::to_string(in.cols) + " columns, valid indices are 0.." + std::to_string(in.cols - 1));
    if (static_cast<long long>(in.rows) * in.cols > kMaxGatherElements)
        throw Unsupported("gather: the source " + shape + " has more than 2^30 elements, the most these lessons claim");
    if (in.elements() > kMaxGatherElements)
        throw Unsupported("gather: the target " + std::to_string(in.rows) + " x " + std::to_string(in.count) +
                          " has more than 2^30 elements, the most these lessons claim");
    if (!in.src) throw Unsupported("gather: the source pointer is null");
    if (in.count > 0 && (!in.indices || !dst)) throw Unsupported("gather: the index or target pointer is null");
}

/// The CPU reference: tgt = src(:, indices), column-major, exact (it only moves floats).
/// Refuses what require_gather refuses.
inline std::vector<float> gather_cpu(int rows, int cols, const std::vector<float>& src, const std::vector<int>& indices) {
    GatherInput in = make_gather_input(rows, cols, src.data(), indices, indices.data());
    require_gather(in, reinterpret_cast<const float*>(src.data()));
    if (src.size() != static_cast<size_t>(rows) * cols)
        throw std::invalid_argument("gather_cpu: src holds " + std::to_string(src.size()) + " floats, not rows x cols");
    std::vector<float> tgt(static_cast<size_t>(rows) * indices.size());
    for (size_t k = 0; k < indices.size(); ++k)
        std::copy_n(src.begin() + static_cast<size_t>(indices[k]) * rows, rows, tgt.begin() + k * rows);
    return tgt;
}

/// Compares a gather result with src(:, indices) without building the reference:
/// the flat index of the first wrong element (bitwise), or -1 when all are right.
inline long long first_gather_mismatch(int rows, const float* src, const std::vector<int>& indices, const float* got) {
    for (size_t k = 0; k < indices.size(); ++k) {
        const long long at = first_difference(got + k * rows, src + static_cast<size_t>(indices[k]) * rows, rows);
        if (at >= 0) return static_cast<long long>(k) * rows + at;
    }
    return -1;
}

/// Computes tgt = src(:, indices) into dst (rows x count, column-major, device) and
/// returns the path it chose for this input, e.g. "__constant__" or "read-only cache:
/// 20000 indices > 16384" (the table's path column), or "" when it has one path only.
/// Throws Unsupported (before launching) for what require_gather refuses.
using GatherRun = std::string(const GatherInput& in, float* dst);

/// One way lessons 03-06 gather (see tut::Variant).
using GatherVariant = Variant<GatherRun>;

/// How the lesson's default input picks its indices.
enum class IndexOrder { Random, Sequential };

/// `count` column numbers: 0..count-1 (the classic case), or random: distinct when
/// count <= cols (a random sample, in random order), with repeats otherwise.
inline std::vector<int> make_indices(int count, int cols, IndexOrder order, uint64_t seed) {
    std::vector<int> idx;
    if (order == IndexOrder::Sequential) {
        idx.resize(static_cast<size_t>(count));
        std::iota(idx.begin(), idx.end(), 0);
        return idx;
    }
    SplitMix64 rng(seed);
    if (count > cols) {
        idx.resize(static_cast<size_t>(count));
        for (auto& x : idx) x = static_cast<int>(rng.below(static_cast<uint64_t>(cols)));
        return idx;
    }
    std::vector<int> all(static_cast<size_t>(cols));
    std::iota(all.begin(), all.end(), 0);
    for (int k = 0; k < count; ++k) {  // partial Fisher-Yates: the first `count` of a random permutation
        const size_t pick = static_cast<size_t>(k) + rng.below(static_cast<uint64_t>(cols - k));
        std::swap(all[static_cast<size_t>(k)], all[pick]);
    }
    all.resize(static_cast<size_t>(count));
    return all;
}

}  // namespace tut::bandwidth

namespace lesson {
/// Lesson 01: page-locked host memory of `bytes` bytes (nullptr for 0), and its release.
void* allocate_pinned(size_t bytes);
void free_pinned(void* p);
/// Lesson 01: one cudaMemcpyAsync of `bytes` bytes in direction `d` on the default stream.
void transfer(tut::bandwidth::Direction d, void* dst, const void* src, size_t bytes);
}  // namespace lesson

namespace tut::bandwidth {

// ---------------------------------------------------------------------------------
// Transfers (lesson 01): the kinds and buffers its checks use too; its table and
// records are in its own harness
// ---------------------------------------------------------------------------------

/// One of lesson 01's five measurements, chosen with --variant as a variant is: one
/// cudaMemcpyAsync (the lesson's transfer()) in a direction, from or to pageable or
/// pinned host memory. Data rather than a tut::Variant: every kind runs the same call.
struct TransferKind {
    std::string name;  ///< e.g. "h2d-pinned"
    Direction direction;
    bool pinned;       ///< host side page-locked (meaningless for D2D)
};

/// The five kinds, in the table's order: each pageable kind is followed by its pinned one.
inline std::vector<TransferKind> transfer_kinds() {
    return {{"h2d-pageable", Direction::HostToDevice, false},
            {"h2d-pinned", Direction::HostToDevice, true},
            {"d2h-pageable", Direction::DeviceToHost, false},
            {"d2h-pinned", Direction::DeviceToHost, true},
            {"d2d", Direction::DeviceToDevice, false}};
}

/// Host memory from lesson::allocate_pinned, freed with lesson::free_pinned.
class PinnedBuffer {
  public:
    explicit PinnedBuffer(size_t bytes) : data_(lesson::allocate_pinned(bytes)) {
        if (bytes && !data_) throw std::runtime_error("allocate_pinned returned null for " + std::to_string(bytes) + " bytes");
    }
    ~PinnedBuffer() {
        if (data_) lesson::free_pinned(data_);
    }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    unsigned char* get() { return static_cast<unsigned char*>(data_); }

  private:
    void* data_ = nullptr;
};

/// True when `p` is page-locked host memory the CUDA driver knows about
/// (cudaMallocHost, cudaHostAlloc or cudaHostRegister).
inline bool is_pinned(const void* p) {
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return attr.type == cudaMemoryTypeHost;
}

// ==== Lesson harness: options, problem, results ====

/// The options every lesson takes; a lesson with options of its own adds them to `cli`.
struct Options {
    Options(const LessonInfo& lesson, const std::string& what)
        : cli(lesson.lesson, std::string(lesson.title) + "\n" + what), lesson(lesson) {}
    /// Exits 0 on --help, 2 on bad input or an unknown --variant, 77 without a GPU.
    void parse(int argc, char** argv, const std::vector<std::string>& variant_names) {
        parse_lesson_options(cli, run, argc, argv, lesson, variant_names);
    }
    Cli cli;
    LessonInfo lesson;
    RunOptions run;
};

/// A gather's size; the default (10000 x 32768 floats, 16384 random columns) moves 1.3 GB.
struct GatherSize {
    int rows = 10000, cols = 32768, count = 16384;
    IndexOrder order = IndexOrder::Random;
};

/// The gather lessons' command line: --rows, --cols, --count, --order, --classic.
struct GatherOptions : Options {
    explicit GatherOptions(const LessonInfo& lesson)
        : Options(lesson, "Extracts columns: tgt = src(:, indices), src a rows x cols column-major float matrix.") {
        cli.add_int("rows", &size.rows, "rows of the source (and target) matrix", 1, kMaxGatherElements);
        cli.add_int("cols", &size.cols, "columns of the source matrix", 1, kMaxGatherElements);
        cli.add_int("count", &size.count, "columns to extract", 1, kMaxGatherElements);
        cli.add_string("order", &order, "indices: random (distinct while count <= cols) or sequential (0..count-1)",
                       {"random", "sequential"});
        cli.add_flag("classic", &classic,
                     "the classic question's size: 1000 x 20000, columns 0..9999 (overrides the above)");
    }
    /// As Options::parse, with --classic, --order and the size limits (exit 2).
    void parse(int argc, char** argv, const std::vector<std::string>& variant_names) {
        parse_lesson_options(cli, run, argc, argv, lesson, variant_names, [this] {
            if (classic)
                size = {1000, 20000, 10000, IndexOrder::Sequential};  // 80 MB moved
            else
                size.order = order == "sequential" ? IndexOrder::Sequential : IndexOrder::Random;
            if (static_cast<long long>(size.rows) * size.cols > kMaxGatherElements ||
                static_cast<long long>(size.rows) * size.count > kMaxGatherElements)
                throw UsageError("rows x cols and rows x count must be at most 2^30 = 1073741824 elements");
            if (size.order == IndexOrder::Sequential && size.count > size.cols)
                throw UsageError("--order sequential needs --count <= --cols (indices 0..count-1)");
        });
    }

    GatherSize size;
    std::string order = "random";
    bool classic = false;
};

/// Lessons 02-06 time with L2 flushed before every repeat: the bytes come from DRAM.
inline constexpr TimingOptions kFlushL2{3, 20, true, false};

/// What lessons 02-06 share: a run moves `moved` bytes into the target, judged against
/// cudaMemcpy D2D of the same bytes in the same run and the theoretical DRAM bandwidth.
class AgainstMemcpy {
  public:
    /// Prints the problem's title and returns the lesson's table.
    Table table() const {
        const LessonInfo& l = bench_.lesson();
        std::printf("\n%s/%s: %s%s", l.track, l.lesson, l.title, about_.c_str());
        return Table({"variant", "path", "regs", "time ms", "GB/s", "% memcpy", "% DRAM peak", "speedup", "check"});
    }
    /// The yardstick's row ("-" throughout under --profile, which does not run it).
    std::vector<std::string> library_row() const {
        if (!std::isfinite(library_gbs_)) return {"cudaMemcpy D2D (yardstick)", "-", "-", "-", "-", "-", "-", "-", "-"};
        return {"cudaMemcpy D2D (yardstick)", "-", "-", fmt("%.3f", moved_ / (library_gbs_ * 1e9) * 1e3),
                fmt("%.0f", library_gbs_), "100.0%", percent(library_gbs_ / bench_.device().dram_peak_gbs), "-", "-"};
    }

  protected:
    AgainstMemcpy(Bench& bench, double moved) : bench_(bench), moved_(moved) {}

    /// Times cudaMemcpy D2D from `src` to the target as the variants are (not under --profile).
    void time_memcpy(const float* src) {
        if (bench_.run().profile) return;
        auto copy = [&] {
            TUT_CUDA(cudaMemcpyAsync(dst_.get(), src, dst_.size() * sizeof(float), cudaMemcpyDeviceToDevice));
        };
        library_gbs_ = gbs(moved_, bench_.time("cudaMemcpy", copy, kFlushL2).median_ms);
    }
    /// One run of `run` (which returns its path) on the poisoned target; what the target holds.
    template <class Run>
    std::vector<float> run_poisoned(Run&& run) {
        dst_.poison();
        path_ = run();
        TUT_CUDA(cudaDeviceSynchronize());
        return dst_.download();
    }
    /// `v`'s record (`extra` holds the problem's own fields, first) and table row.
    template <class V>
    Result result_of(const V& v, const Timing& t, const Verdict& verdict, const std::string& size, JsonObject extra) {
        const std::string path = path_.empty() ? "-" : path_;
        path_.clear();
        const int regs = resources_of(v.kernel).registers;
        Result out;
        Record& r = out.record;
        r.variant = v.name;
        r.size = size;
        r.value = gbs(moved_, t.median_ms);
        r.unit = "GB/s";
        r.time_ms = t.median_ms;
        r.library = "cudaMemcpy D2D, same bytes";
        r.library_value = library_gbs_;
        r.peak = "theoretical DRAM bandwidth";
        r.peak_value = bench_.device().dram_peak_gbs;
        r.checked = verdict.passed();
        r.extra = std::move(extra);
        r.extra.add("bytes_moved", moved_).add("path", path).add("registers", regs).add("check", verdict.cell);
        out.row = {v.name, path, regs >= 0 ? std::to_string(regs) : "-", fmt("%.3f", t.median_ms), fmt("%.0f", r.value),
                   percent(r.ratio_to_library()), percent(r.ratio_to_peak()),
                   std::isfinite(previous_ms_) ? fmt("%.2fx", previous_ms_ / t.median_ms) : "-", verdict.cell};
        previous_ms_ = t.median_ms;
        return out;
    }

    Bench& bench_;
    double moved_;
    DeviceBuffer<float> dst_;  ///< the target, allocated by the problem once it fits
    std::string path_;         ///< what the variant's run last reported
    std::string about_;        ///< the problem's size, after the title
    double library_gbs_ = NAN, previous_ms_ = NAN;
};

/// One gather as lessons 03-06 measure it, beside cudaMemcpy D2D of the same bytes (from
/// copies of the source end to end when the gather reads more than it holds).
class GatherProblem : public AgainstMemcpy {
  public:
    GatherProblem(Bench& bench, const GatherSize& size)
        : AgainstMemcpy(bench, gather_bytes_moved(size.rows, size.count)), size_(size) {
        const size_t src_count = static_cast<size_t>(size.rows) * size.cols;
        const size_t dst_count = static_cast<size_t>(size.rows) * size.count;
        const bool needs_yard = size.count > size.cols;  // then src is smaller than the bytes moved
        if (auto why = device_memory_shortfall((src_count + dst_count * (needs_yard ? 2 : 1)) * sizeof(float));
            !why.empty())
            throw Unsupported("this size " + why);
        host_src_ = random_vector<float>(src_count, static_cast<uint64_t>(bench.run().seed));
        host_idx_ = make_indices(size.count, size.cols, size.order, static_cast<uint64_t>(bench.run().seed) + 1);
        src_ = DeviceBuffer<float>(host_src_);
        dst_ = DeviceBuffer<float>(dst_count);
        idx_ = DeviceBuffer<int>(host_idx_);
        in_ = make_gather_input(size.rows, size.cols, src_.get(), host_idx_, idx_.get());
        DeviceBuffer<float> yard(needs_yard && !bench.run().profile ? dst_count : 0);  // --profile times no yardstick
        for (size_t done = 0; done < yard.size(); done += src_count)
            TUT_CUDA(cudaMemcpy(yard.get() + done, src_.get(), std::min(src_count, dst_count - done) * sizeof(float),
                                cudaMemcpyDeviceToDevice));
        time_memcpy(needs_yard ? yard.get() : src_.get());
        about_ = fmt("\n  src %d x %d column-major float, %d %s indices; %.1f MB moved (read + write) = %.1fx L2; "
                     "median of %d runs, L2 flushed\n",
                     size.rows, size.cols, size.count,
                     size.order == IndexOrder::Random ? "random" : "sequential (0..count-1)", moved_ / 1e6,
                     moved_ / double(bench.device().l2_bytes), bench.run().repeats);
    }
    /// Runs `run` once on a poisoned target and requires exactly src(:, indices).
    Verdict check(const std::function<GatherRun>& run) {
        const std::vector<float> got = run_poisoned([&] { return run(in_, dst_.get()); });
        const long long bad = first_gather_mismatch(size_.rows, host_src_.data(), host_idx_, got.data());
        if (bad < 0) return passed("ok");
        return failed(
            fmt("first wrong element: row %lld of extracted column %lld", bad % size_.rows, bad / size_.rows));
    }
    /// Runs `run` once (what the bench times).
    void run(const std::function<GatherRun>& run) { path_ = run(in_, dst_.get()); }

    /// GB/s beside cudaMemcpy's and the DRAM peak; the path taken, the registers.
    Result result(const GatherVariant& v, const Timing& t, const Verdict& verdict) {
        const char* order = size_.order == IndexOrder::Random ? "random" : "sequential";
        JsonObject extra;
        extra.add("rows", size_.rows).add("cols", size_.cols).add("count", size_.count).add("order", order);
        return result_of(v, t, verdict, fmt("%dx%d->%d %s", size_.rows, size_.cols, size_.count, order), extra);
    }

  private:
    GatherSize size_;
    std::vector<float> host_src_;
    std::vector<int> host_idx_;
    DeviceBuffer<float> src_;
    DeviceBuffer<int> idx_;
    GatherInput in_;
};

}  // namespace tut::bandwidth
