/// @file bandwidth.hpp
/// @brief The bandwidth track: byte accounting, the cudaMemcpy yardstick, the copy and
/// column-gather variant interfaces, the CPU gather reference and the lesson drivers.
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
/// flushed, and against the theoretical DRAM bandwidth (tut::DeviceFacts). The
/// drivers below print both ratios and write them to the JSON records.
///
/// **The gather.** `tgt = src(:, indices)` (MATLAB notation): `src` is a column-major
/// rows x cols float matrix (element (r, c) at `src[c * rows + r]`), `indices` holds
/// `count` column numbers in 0..cols-1 (repeats and any order allowed), `tgt` is
/// rows x count and column k of `tgt` is column indices[k] of `src`.
#pragma once

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
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

namespace tut::bandwidth {

// ---------------------------------------------------------------------------------
// Byte accounting
// ---------------------------------------------------------------------------------

/// The three kinds of cudaMemcpy lesson 01 measures.
enum class Direction { HostToDevice, DeviceToHost, DeviceToDevice };

inline const char* direction_name(Direction d) {
    switch (d) {
        case Direction::HostToDevice: return "H2D";
        case Direction::DeviceToHost: return "D2H";
        default: return "D2D";
    }
}

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
// Copy kernels (lesson 02)
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

/// Copies n floats from src to dst (device pointers, any 4-byte alignment). Throws
/// Unsupported (before launching) for what require_copy refuses.
using CopyLauncher = void (*)(size_t n, const float* src, float* dst);

/// Which code path a variant takes for these pointers, e.g. "float4" or "float:
/// src/dst misaligned".
using CopyPath = std::string (*)(size_t n, const float* src, const float* dst);

/// One row of lesson 02's table. Build it with copy_variant().
struct CopyVariant {
    std::string name;              ///< the --variant name, unique within the lesson
    CopyLauncher run = nullptr;    ///< checks its input, then launches
    const void* kernel = nullptr;  ///< the kernel run() launches, for the registers column
    CopyPath path = nullptr;       ///< optional: which code path run() takes
};

/// A copy variant: its name, its launcher, the kernel the launcher runs (its registers
/// are reported) and, optionally, the function that names the path it takes.
template <class Kernel>
CopyVariant copy_variant(const std::string& name, CopyLauncher run, Kernel* kernel, CopyPath path = nullptr) {
    CopyVariant v;
    v.name = name;
    v.run = run;
    v.kernel = reinterpret_cast<const void*>(kernel);
    v.path = path;
    return v;
}

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

/// Computes tgt = src(:, indices) into dst (rows x count, column-major, device).
/// Throws Unsupported (before launching) for what require_gather refuses.
using GatherLauncher = void (*)(const GatherInput& in, float* dst);

/// Which path a variant chooses at run time for this input, e.g. "__constant__" or
/// "read-only cache: 20000 indices > 16384".
using GatherPath = std::string (*)(const GatherInput& in, const float* dst);

/// One row of a gather lesson's table. Build it with gather_variant().
struct GatherVariant {
    std::string name;              ///< the --variant name, unique within the lesson
    GatherLauncher run = nullptr;  ///< checks its input, then launches
    const void* kernel = nullptr;  ///< the kernel run() launches, for the registers column
    GatherPath path = nullptr;     ///< optional: which path run() takes
};

/// A gather variant: its name, its launcher, the kernel the launcher runs (its
/// registers are reported) and, optionally, the function that names the path it takes.
template <class Kernel>
GatherVariant gather_variant(const std::string& name, GatherLauncher run, Kernel* kernel, GatherPath path = nullptr) {
    GatherVariant v;
    v.name = name;
    v.run = run;
    v.kernel = reinterpret_cast<const void*>(kernel);
    v.path = path;
    return v;
}

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

// ---------------------------------------------------------------------------------
// Driver plumbing shared by the lessons
// ---------------------------------------------------------------------------------

namespace detail {

inline int kernel_registers(const void* kernel) {
    if (!kernel) return -1;
    cudaFuncAttributes attr{};
    TUT_CUDA(cudaFuncGetAttributes(&attr, kernel));
    return attr.numRegs;
}

inline std::string megabytes(double bytes) { return fmt("%.1f MB", bytes / 1e6); }

/// Times cudaMemcpy D2D of `bytes` (L2 flushed before each repeat): the yardstick, GB/s.
inline double memcpy_d2d_gbs(void* dst, const void* src, size_t bytes, const TimingOptions& timing) {
    if (bytes == 0) return NAN;
    Timing t = time_gpu([&] { TUT_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); }, timing);
    return gbs(transfer_bytes_moved(Direction::DeviceToDevice, bytes), t.median_ms);
}

/// The results table of the copy and gather drivers: one row per variant (with its
/// speedup over the row before it), then the cudaMemcpy yardstick's row.
class VariantTable {
  public:
    void add(const std::string& name, const std::string& path, int regs, const Record& r, const std::string& verdict) {
        table_.add_row({name, path, regs >= 0 ? std::to_string(regs) : "-", fmt("%.3f", r.time_ms), fmt("%.0f", r.value),
                        percent(r.ratio_to_library()), percent(r.ratio_to_peak()),
                        std::isfinite(previous_ms_) ? fmt("%.2fx", previous_ms_ / r.time_ms) : "-", verdict});
        previous_ms_ = r.time_ms;
    }
    /// Adds the yardstick's row (when it was measured: `library_gbs` finite) and prints.
    void print(double moved_bytes, double library_gbs, double dram_peak_gbs) {
        if (std::isfinite(library_gbs))
            table_.add_row({"cudaMemcpy D2D (yardstick)", "-", "-", fmt("%.3f", moved_bytes / (library_gbs * 1e9) * 1e3),
                            fmt("%.0f", library_gbs), "100.0%", percent(library_gbs / dram_peak_gbs), "-", "-"});
        table_.print();
    }

  private:
    Table table_{{"variant", "path", "regs", "time ms", "GB/s", "% memcpy", "% DRAM peak", "speedup", "check"}};
    double previous_ms_ = NAN;
};

}  // namespace detail

// ---------------------------------------------------------------------------------
// Lesson 01's driver: host <-> device and device <-> device transfers
// ---------------------------------------------------------------------------------

/// The names of the five transfers lesson 01 times, as --variant accepts them.
struct TransferKind {
    std::string name;  ///< e.g. "h2d-pinned"
    Direction direction;
    bool pinned;       ///< host side page-locked (meaningless for D2D)
};

inline std::vector<TransferKind> transfer_kinds() {
    return {{"h2d-pageable", Direction::HostToDevice, false},
            {"h2d-pinned", Direction::HostToDevice, true},
            {"d2h-pageable", Direction::DeviceToHost, false},
            {"d2h-pinned", Direction::DeviceToHost, true},
            {"d2d", Direction::DeviceToDevice, false}};
}

}  // namespace tut::bandwidth

namespace lesson {
/// Lesson 01: page-locked host memory of `bytes` bytes (nullptr for 0), and its release.
void* allocate_pinned(size_t bytes);
void free_pinned(void* p);
/// Lesson 01: one cudaMemcpyAsync of `bytes` bytes in direction `d` on the default stream.
void transfer(tut::bandwidth::Direction d, void* dst, const void* src, size_t bytes);
/// Lesson 02: the copy kernels.
std::vector<tut::bandwidth::CopyVariant> copy_variants();
/// Lessons 03-06: the gather kernels.
std::vector<tut::bandwidth::GatherVariant> gather_variants();
}  // namespace lesson

namespace tut::bandwidth {

/// Host memory from lesson::allocate_pinned, freed with lesson::free_pinned.
class PinnedBuffer {
  public:
    explicit PinnedBuffer(size_t bytes) : data_(lesson::allocate_pinned(bytes)), bytes_(bytes) {
        if (bytes && !data_) throw std::runtime_error("allocate_pinned returned null for " + std::to_string(bytes) + " bytes");
    }
    ~PinnedBuffer() {
        if (data_) lesson::free_pinned(data_);
    }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    unsigned char* get() { return static_cast<unsigned char*>(data_); }
    size_t bytes() const { return bytes_; }

  private:
    void* data_ = nullptr;
    size_t bytes_ = 0;
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

/// The main() of lesson 01: times the five transfers at each size, checks a round trip
/// per size, prints GB/s per size and one record per transfer and size.
///
/// Yardsticks (the records' `library` field): pageable transfers are judged against
/// pinned ones of the same direction and size (what page-locking buys); pinned and D2D
/// transfers against themselves at the largest size of the run (how far a small
/// transfer is from the asymptote: latency, not bandwidth). Peaks: the PCIe link's
/// theoretical one-way rate for H2D and D2H, the theoretical DRAM rate for D2D.
inline int transfers_main(int argc, char** argv, const LessonInfo& info) {
    Cli cli(info.lesson, std::string(info.title) +
                             "\nTimes cudaMemcpy host->device and device->host (pageable and pinned host memory) and "
                             "device->device over a range of sizes. Replaces the bandwidthTest sample.");
    std::vector<long long> sizes{4096, 65536, 1 << 20, 16 << 20, 256 << 20};
    cli.add_int_list("sizes", &sizes, "transfer sizes in bytes, comma-separated", 1, 1LL << 34);
    RunOptions run;
    add_run_options(cli, run);
    cli.parse_or_exit(argc, argv);
    finish_run_options(run);
    const auto kinds = transfer_kinds();
    if (!variant_is_known(info.lesson, run.variant, kinds)) return kUsageExitCode;
    require_gpu(info.lesson);

    return guarded_main(info.lesson, [&] {
        const DeviceFacts dev = device_facts();
        print_device_banner(dev);
        const double link_peak = host_link_peak_gbs(dev.device);
        std::printf("Host link: %s\n", std::isfinite(link_peak)
                                           ? fmt("PCIe %.1f GB/s per direction (theoretical, from sysfs)", link_peak).c_str()
                                           : "unknown (no PCIe link information in sysfs)");
        const size_t largest = static_cast<size_t>(*std::max_element(sizes.begin(), sizes.end()));
        if (auto why = device_memory_shortfall(2 * largest); !why.empty())
            throw Unsupported("transfers of " + std::to_string(largest) + " bytes " + why);

        // Two buffers of each kind, so a round trip can be checked without overwriting its source.
        std::vector<unsigned char> pageable_a(largest), pageable_b(largest);
        PinnedBuffer pinned_a(largest), pinned_b(largest);
        DeviceBuffer<unsigned char> device_a(largest), device_b(largest);
        {
            SplitMix64 rng(static_cast<uint64_t>(run.seed));
            for (size_t i = 0; i < largest; i += 8) {
                const uint64_t r = rng.next();
                std::memcpy(&pageable_a[i], &r, std::min<size_t>(8, largest - i));
            }
            std::memcpy(pinned_a.get(), pageable_a.data(), largest);
            std::memset(pageable_b.data(), 0, largest);  // touch every page before timing
            std::memset(pinned_b.get(), 0, largest);
        }
        std::printf("pinned host buffers page-locked: %s\n", is_pinned(pinned_a.get()) ? "yes" : "NO (pageable memory)");

        // H2D reads host buffer a into device b; D2H reads device a into host buffer b; D2D device a into b.
        auto source_of = [&](const TransferKind& k) -> const void* {
            if (k.direction != Direction::HostToDevice) return device_a.get();
            return k.pinned ? pinned_a.get() : pageable_a.data();
        };
        auto target_of = [&](const TransferKind& k) -> void* {
            if (k.direction != Direction::DeviceToHost) return device_b.get();
            return k.pinned ? pinned_b.get() : pageable_b.data();
        };

        struct Measured {
            double gbs = NAN, ms = NAN;
        };
        std::vector<std::vector<Measured>> measured(sizes.size(), std::vector<Measured>(kinds.size()));
        std::vector<std::string> verdicts(sizes.size(), "skipped");
        bool all_ok = true;
        for (size_t s = 0; s < sizes.size(); ++s) {
            const size_t bytes = static_cast<size_t>(sizes[s]);
            if (run.check()) {
                // pageable -> device -> device -> pinned, and pinned -> device -> pageable: exact.
                // Both device buffers are poisoned (0xFF) before each chain: either may already
                // hold the source's bytes (from the first chain, or a smaller size's timing), and
                // a transfer that wrote nothing would then pass. The memsets go before the
                // copies on the same (default) stream, outside any timing.
                auto poison_device = [&] {
                    TUT_CUDA(cudaMemset(device_a.get(), 0xFF, bytes));
                    TUT_CUDA(cudaMemset(device_b.get(), 0xFF, bytes));
                };
                std::memset(pinned_b.get(), 0, bytes);
                std::memset(pageable_b.data(), 0, bytes);
                poison_device();
                lesson::transfer(Direction::HostToDevice, device_a.get(), pageable_a.data(), bytes);
                lesson::transfer(Direction::DeviceToDevice, device_b.get(), device_a.get(), bytes);
                lesson::transfer(Direction::DeviceToHost, pinned_b.get(), device_b.get(), bytes);
                TUT_CUDA(cudaDeviceSynchronize());
                bool ok = std::memcmp(pinned_b.get(), pageable_a.data(), bytes) == 0;
                poison_device();
                lesson::transfer(Direction::HostToDevice, device_b.get(), pinned_a.get(), bytes);
                lesson::transfer(Direction::DeviceToHost, pageable_b.data(), device_b.get(), bytes);
                TUT_CUDA(cudaDeviceSynchronize());
                ok = ok && std::memcmp(pageable_b.data(), pageable_a.data(), bytes) == 0;
                verdicts[s] = ok ? "ok" : "FAILED";
                if (!ok) {
                    all_ok = false;
                    std::fprintf(stderr, "%s: a round trip of %zu bytes came back different\n", info.lesson, bytes);
                }
            }
            for (size_t k = 0; k < kinds.size(); ++k) {
                if (!run.variant.empty() && kinds[k].name != run.variant) continue;
                const bool device_side = kinds[k].direction == Direction::DeviceToDevice;
                const TimingOptions timing{run.warmup, run.repeats, device_side};  // flush L2 for D2D only
                NvtxRange range(std::string(info.track) + "/" + info.lesson + "/" + kinds[k].name + "/" +
                                std::to_string(bytes));
                const void* from = source_of(kinds[k]);
                void* to = target_of(kinds[k]);
                Timing t = time_gpu([&] { lesson::transfer(kinds[k].direction, to, from, bytes); }, timing);
                measured[s][k] = {gbs(transfer_bytes_moved(kinds[k].direction, bytes), t.median_ms), t.median_ms};
            }
        }

        std::printf("\n%s/%s: %s  (GB/s = 1e9 bytes/s; D2D counts read + write; median of %d runs)\n", info.track,
                    info.lesson, info.title, run.repeats);
        std::vector<std::string> header{"bytes"};
        for (auto& k : kinds) header.push_back(k.name);
        header.push_back("pinned/pageable H2D");
        header.push_back("check");
        Table table(header);
        const size_t last = static_cast<size_t>(std::max_element(sizes.begin(), sizes.end()) - sizes.begin());
        for (size_t s = 0; s < sizes.size(); ++s) {
            std::vector<std::string> row{std::to_string(sizes[s])};
            for (size_t k = 0; k < kinds.size(); ++k)
                row.push_back(std::isfinite(measured[s][k].gbs) ? fmt("%.2f", measured[s][k].gbs) : "-");
            const double gain = measured[s][1].gbs / measured[s][0].gbs;
            row.push_back(std::isfinite(gain) ? fmt("%.2fx", gain) : "-");
            row.push_back(verdicts[s]);
            table.add_row(row);

            for (size_t k = 0; k < kinds.size(); ++k) {
                if (!std::isfinite(measured[s][k].gbs)) continue;
                const TransferKind& kind = kinds[k];
                Record r;
                r.track = info.track;
                r.lesson = info.lesson;
                r.variant = kind.name;
                r.size = std::to_string(sizes[s]);
                r.value = measured[s][k].gbs;
                r.unit = "GB/s";
                r.time_ms = measured[s][k].ms;
                if (kind.direction != Direction::DeviceToDevice && !kind.pinned) {
                    r.library = "cudaMemcpy from/to pinned memory, same direction and size";
                    r.library_value = measured[s][k + 1].gbs;  // the pinned kind follows its pageable one
                } else {
                    r.library = "the same transfer at " + std::to_string(sizes[last]) + " bytes (the asymptote)";
                    r.library_value = measured[last][k].gbs;
                }
                if (kind.direction == Direction::DeviceToDevice) {
                    r.peak = "theoretical DRAM bandwidth (read + write)";
                    r.peak_value = dev.dram_peak_gbs;
                } else {
                    r.peak = "theoretical PCIe bandwidth, one direction";
                    r.peak_value = link_peak;
                }
                r.checked = run.check() && verdicts[s] == "ok";
                r.extra.add("bytes", static_cast<long long>(sizes[s]))
                    .add("bytes_moved", transfer_bytes_moved(kind.direction, static_cast<size_t>(sizes[s])))
                    .add("pinned_is_page_locked", is_pinned(pinned_a.get()));
                append_record(info.lesson, run.json, r);
            }
        }
        table.print();
        std::printf("\nAt %lld bytes:", sizes[last]);
        for (size_t k = 0; k < kinds.size(); ++k) {
            const double peak = kinds[k].direction == Direction::DeviceToDevice ? dev.dram_peak_gbs : link_peak;
            if (std::isfinite(measured[last][k].gbs))
                std::printf(" %s %s of %s;", kinds[k].name.c_str(), percent(measured[last][k].gbs / peak).c_str(),
                            kinds[k].direction == Direction::DeviceToDevice ? "DRAM peak" : "PCIe peak");
        }
        std::printf("\n");
        return all_ok ? 0 : 1;
    });
}

// ---------------------------------------------------------------------------------
// Lesson 02's driver: copy kernels against cudaMemcpy D2D
// ---------------------------------------------------------------------------------

/// The main() of lesson 02: checks and times every copy variant on n floats and prints
/// each beside cudaMemcpy D2D of the same bytes and the theoretical DRAM bandwidth.
inline int copy_main(int argc, char** argv, const LessonInfo& info, const std::vector<CopyVariant>& variants,
                     long long default_n = 1LL << 27) {
    Cli cli(info.lesson, std::string(info.title) + "\nCopies N floats device to device with each kernel.");
    long long n = default_n;
    cli.add_int("n", &n, "number of floats to copy (default: 512 MiB, many times any L2)", 1,
                static_cast<long long>(kMaxCopyElements));
    RunOptions run;
    add_run_options(cli, run);
    cli.parse_or_exit(argc, argv);
    finish_run_options(run);
    if (!variant_is_known(info.lesson, run.variant, variants)) return kUsageExitCode;
    require_gpu(info.lesson);

    return guarded_main(info.lesson, [&] {
        const DeviceFacts dev = device_facts();
        print_device_banner(dev);
        const size_t count = static_cast<size_t>(n);
        if (auto why = device_memory_shortfall(2 * count * sizeof(float)); !why.empty())
            throw Unsupported("N = " + std::to_string(n) + " " + why);
        const std::vector<float> host = random_vector<float>(count, static_cast<uint64_t>(run.seed));
        DeviceBuffer<float> src(host), dst(count);
        const TimingOptions timing{run.warmup, run.repeats, true};
        const double moved = copy_bytes_moved(count);

        double library = NAN;
        if (!run.profile) {
            NvtxRange range(std::string(info.track) + "/" + info.lesson + "/cudaMemcpy");
            library = detail::memcpy_d2d_gbs(dst.get(), src.get(), count * sizeof(float), timing);
        }
        std::printf("\n%s/%s: %s  (N = %lld floats, %s moved = %.1fx L2, median of %d runs, L2 flushed)\n", info.track,
                    info.lesson, info.title, n, detail::megabytes(moved).c_str(), moved / double(dev.l2_bytes),
                    run.repeats);
        detail::VariantTable table;
        bool all_ok = true;
        for (const CopyVariant& v : variants) {
            if (!run.variant.empty() && v.name != run.variant) continue;
            std::string verdict = "skipped";
            if (run.check()) {
                dst.poison();
                v.run(count, src.get(), dst.get());
                TUT_CUDA(cudaDeviceSynchronize());
                const std::vector<float> got = dst.download();
                const long long bad = first_difference(got.data(), host.data(), count);
                verdict = bad < 0 ? "ok" : "FAILED";
                if (bad >= 0) {
                    all_ok = false;
                    std::fprintf(stderr, "%s [%s]: element %lld is %g, expected %g\n", info.lesson, v.name.c_str(), bad,
                                 double(got[static_cast<size_t>(bad)]), double(host[static_cast<size_t>(bad)]));
                }
            }
            Timing t;
            {
                NvtxRange range(std::string(info.track) + "/" + info.lesson + "/" + v.name);
                t = time_gpu([&] { v.run(count, src.get(), dst.get()); }, timing);
            }
            const std::string path = v.path ? v.path(count, src.get(), dst.get()) : "-";
            const int regs = detail::kernel_registers(v.kernel);
            Record r;
            r.track = info.track;
            r.lesson = info.lesson;
            r.variant = v.name;
            r.size = std::to_string(n);
            r.value = gbs(moved, t.median_ms);
            r.unit = "GB/s";
            r.time_ms = t.median_ms;
            r.library = "cudaMemcpy D2D, same bytes";
            r.library_value = library;
            r.peak = "theoretical DRAM bandwidth";
            r.peak_value = dev.dram_peak_gbs;
            r.checked = run.check() && verdict == "ok";
            r.extra.add("floats", n).add("bytes_moved", moved).add("path", path).add("registers", regs).add("check",
                                                                                                            verdict);
            table.add(v.name, path, regs, r, verdict);
            append_record(info.lesson, run.json, r);
        }
        table.print(moved, library, dev.dram_peak_gbs);
        return all_ok ? 0 : 1;
    });
}

// ---------------------------------------------------------------------------------
// Lessons 03-06's driver: the column gather against cudaMemcpy D2D
// ---------------------------------------------------------------------------------

/// Default gather size: 10000 rows x 32768 columns (1.3 GB), 16384 random columns
/// extracted (all fit lesson 05's __constant__ array): 1.3 GB moved, 20+ times L2.
struct GatherSize {
    int rows = 10000;
    int cols = 32768;
    int count = 16384;
    IndexOrder order = IndexOrder::Random;
};

/// The classic question's size: 1000 x 20000, columns 0..9999 (80 MB moved).
inline GatherSize classic_gather_size() { return {1000, 20000, 10000, IndexOrder::Sequential}; }

/// The main() of lessons 03-06: builds a random source and the indices, checks every
/// variant against src(:, indices) exactly, times it and prints it beside cudaMemcpy
/// D2D of the same bytes and the theoretical DRAM bandwidth.
inline int gather_main(int argc, char** argv, const LessonInfo& info, const std::vector<GatherVariant>& variants) {
    Cli cli(info.lesson, std::string(info.title) +
                             "\nExtracts columns: tgt = src(:, indices), src a rows x cols column-major float matrix.");
    GatherSize size;
    std::string order = "random";
    bool classic = false;
    cli.add_int("rows", &size.rows, "rows of the source (and target) matrix", 1, kMaxGatherElements);
    cli.add_int("cols", &size.cols, "columns of the source matrix", 1, kMaxGatherElements);
    cli.add_int("count", &size.count, "columns to extract", 1, kMaxGatherElements);
    cli.add_string("order", &order, "indices: random (distinct while count <= cols) or sequential (0..count-1)",
                   {"random", "sequential"});
    cli.add_flag("classic", &classic, "the classic question's size: 1000 x 20000, columns 0..9999 (overrides the above)");
    RunOptions run;
    add_run_options(cli, run);
    cli.parse_or_exit(argc, argv);
    finish_run_options(run);
    if (classic) {
        size = classic_gather_size();
    } else {
        size.order = order == "sequential" ? IndexOrder::Sequential : IndexOrder::Random;
    }
    try {
        if (static_cast<long long>(size.rows) * size.cols > kMaxGatherElements ||
            static_cast<long long>(size.rows) * size.count > kMaxGatherElements)
            throw UsageError("rows x cols and rows x count must be at most 2^30 = 1073741824 elements");
        if (size.order == IndexOrder::Sequential && size.count > size.cols)
            throw UsageError("--order sequential needs --count <= --cols (indices 0..count-1)");
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: error: %s\n\n%s", info.lesson, e.what(), cli.usage().c_str());
        return kUsageExitCode;
    }
    if (!variant_is_known(info.lesson, run.variant, variants)) return kUsageExitCode;
    require_gpu(info.lesson);

    return guarded_main(info.lesson, [&] {
        const DeviceFacts dev = device_facts();
        print_device_banner(dev);
        const size_t src_count = static_cast<size_t>(size.rows) * size.cols;
        const size_t dst_count = static_cast<size_t>(size.rows) * size.count;
        const bool needs_yard = size.count > size.cols;  // then src is smaller than the bytes moved
        if (auto why = device_memory_shortfall((src_count + dst_count * (needs_yard ? 2 : 1)) * sizeof(float));
            !why.empty())
            throw Unsupported("this size " + why);

        const std::vector<float> host_src = random_vector<float>(src_count, static_cast<uint64_t>(run.seed));
        const std::vector<int> host_idx =
            make_indices(size.count, size.cols, size.order, static_cast<uint64_t>(run.seed) + 1);
        DeviceBuffer<float> src(host_src), dst(dst_count);
        DeviceBuffer<int> idx(host_idx);
        const GatherInput in = make_gather_input(size.rows, size.cols, src.get(), host_idx, idx.get());
        const TimingOptions timing{run.warmup, run.repeats, true};
        const double moved = gather_bytes_moved(size.rows, size.count);

        double library = NAN;
        if (!run.profile) {
            // cudaMemcpy D2D of the same bytes; from src itself unless the gather reads more than src holds.
            DeviceBuffer<float> yard(needs_yard ? dst_count : 0);
            for (size_t done = 0; needs_yard && done < dst_count; done += src_count)
                TUT_CUDA(cudaMemcpy(yard.get() + done, src.get(), std::min(src_count, dst_count - done) * sizeof(float),
                                    cudaMemcpyDeviceToDevice));
            NvtxRange range(std::string(info.track) + "/" + info.lesson + "/cudaMemcpy");
            library = detail::memcpy_d2d_gbs(dst.get(), needs_yard ? yard.get() : src.get(), dst_count * sizeof(float),
                                             timing);
        }
        const std::string size_text = fmt("%dx%d->%d %s", size.rows, size.cols, size.count,
                                          size.order == IndexOrder::Random ? "random" : "sequential");
        std::printf("\n%s/%s: %s\n  src %d x %d column-major float, %d %s indices; %s moved (read + write) = %.1fx L2; "
                    "median of %d runs, L2 flushed\n",
                    info.track, info.lesson, info.title, size.rows, size.cols, size.count,
                    size.order == IndexOrder::Random ? "random" : "sequential (0..count-1)",
                    detail::megabytes(moved).c_str(), moved / double(dev.l2_bytes), run.repeats);
        detail::VariantTable table;
        bool all_ok = true;
        for (const GatherVariant& v : variants) {
            if (!run.variant.empty() && v.name != run.variant) continue;
            std::string verdict = "skipped";
            if (run.check()) {
                dst.poison();
                v.run(in, dst.get());
                TUT_CUDA(cudaDeviceSynchronize());
                const std::vector<float> got = dst.download();
                const long long bad = first_gather_mismatch(size.rows, host_src.data(), host_idx, got.data());
                verdict = bad < 0 ? "ok" : "FAILED";
                if (bad >= 0) {
                    all_ok = false;
                    std::fprintf(stderr, "%s [%s]: first wrong element: row %lld of extracted column %lld\n",
                                 info.lesson, v.name.c_str(), bad % size.rows, bad / size.rows);
                }
            }
            Timing t;
            {
                NvtxRange range(std::string(info.track) + "/" + info.lesson + "/" + v.name);
                t = time_gpu([&] { v.run(in, dst.get()); }, timing);
            }
            const std::string path = v.path ? v.path(in, dst.get()) : "-";
            const int regs = detail::kernel_registers(v.kernel);
            Record r;
            r.track = info.track;
            r.lesson = info.lesson;
            r.variant = v.name;
            r.size = size_text;
            r.value = gbs(moved, t.median_ms);
            r.unit = "GB/s";
            r.time_ms = t.median_ms;
            r.library = "cudaMemcpy D2D, same bytes";
            r.library_value = library;
            r.peak = "theoretical DRAM bandwidth";
            r.peak_value = dev.dram_peak_gbs;
            r.checked = run.check() && verdict == "ok";
            r.extra.add("rows", size.rows)
                .add("cols", size.cols)
                .add("count", size.count)
                .add("order", size.order == IndexOrder::Random ? "random" : "sequential")
                .add("bytes_moved", moved)
                .add("path", path)
                .add("registers", regs)
                .add("check", verdict);
            table.add(v.name, path, regs, r, verdict);
            append_record(info.lesson, run.json, r);
        }
        table.print(moved, library, dev.dram_peak_gbs);
        return all_ok ? 0 : 1;
    });
}

}  // namespace tut::bandwidth
