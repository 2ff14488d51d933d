// wrong: bandwidth/01_transfers: page-aligned malloc memory locked with cudaHostRegister, then freed with std::free without cudaHostUnregister
// caught by: bandwidth/01_transfers: free_pinned releases the page-locked memory
// kind: other
// the driver keeps the freed range registered: the free_pinned case finds it still page-locked
// (a later allocation that reuses the range may also fail to register, failing the first case)
// bandwidth/01_transfers: cudaMemcpy's bandwidth, and what pinned host memory changes.
// Starts from: nothing; this is the track's first lesson. Adds: cudaMemcpy host->device,
// device->host and device->device over a range of sizes (what the retired bandwidthTest
// sample measured), from and to pageable and page-locked ("pinned") host memory.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/bandwidth/01_transfers/transfers.cu -o transfers
// Run:  ./transfers --sizes 4096,1048576,268435456     (--help for options)
//
// No kernels: the lesson's functions, which main() below checks and times:
//   allocate_pinned / free_pinned   the host buffers of the "pinned" kinds
//   transfer                        one cudaMemcpyAsync in a given direction
// Kinds (--variant names): h2d-pageable, h2d-pinned, d2h-pageable, d2h-pinned, d2d.
// Counting: a host<->device transfer of B bytes moves B bytes over the link; a
// device->device copy of B bytes reads B and writes B, so it counts 2B.
#include "tut/bandwidth.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// In namespace lesson, not an anonymous one: the checks call these functions by name.
namespace lesson {

// Page-locked ("pinned") host memory: the driver can point the GPU's copy engines at it
// directly (DMA). Pageable memory (malloc, new, std::vector) may be swapped out or moved
// by the OS at any time, so the driver first copies it, chunk by chunk, into a pinned
// staging buffer of its own and only then starts the DMA: an extra host memcpy per byte.
constexpr size_t kPage = 4096;

void* allocate_pinned(size_t bytes) {
    if (bytes == 0) return nullptr;
    const size_t size = (bytes + kPage - 1) / kPage * kPage;
    void* p = std::aligned_alloc(kPage, size);
    if (!p) return nullptr;
    TUT_CUDA(cudaHostRegister(p, size, cudaHostRegisterDefault));
    return p;
}

void free_pinned(void* p) {
    std::free(p);
}

// One copy on the default stream. The same call serves all five measurements: the
// direction and, for host memory, whether it is pinned decide how the driver moves it.
// (From pageable memory cudaMemcpyAsync returns only once the data is staged: it is not
// asynchronous with respect to the host.)
void transfer(tut::bandwidth::Direction d, void* dst, const void* src, size_t bytes) {
    using tut::bandwidth::Direction;
    const cudaMemcpyKind kind = d == Direction::HostToDevice   ? cudaMemcpyHostToDevice
                                : d == Direction::DeviceToHost ? cudaMemcpyDeviceToHost
                                                               : cudaMemcpyDeviceToDevice;
    TUT_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, nullptr));
}

}  // namespace lesson

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {

using tut::bandwidth::Direction;
using tut::bandwidth::TransferKind;

/// The five kinds at every size: two buffers of each kind of memory (pageable host, pinned
/// host from allocate_pinned, device), so a round trip can be checked without overwriting
/// its source, and a table row per size with a column per kind.
///
/// Yardsticks (the records' `library` field): pageable transfers are judged against
/// pinned ones of the same direction and size (what page-locking buys); pinned and D2D
/// transfers against themselves at the largest size of the run (how far a small
/// transfer is from the asymptote: latency, not bandwidth). Peaks: the PCIe link's
/// theoretical one-way rate for H2D and D2H, the theoretical DRAM rate for D2D.
class Transfers {
  public:
    Transfers(const tut::Bench& bench, const std::vector<long long>& sizes)
        : bench_(bench), link_peak_(tut::bandwidth::host_link_peak_gbs(bench.device().device)),
          largest_(require_fits(sizes)), pageable_a_(largest_), pageable_b_(largest_), pinned_a_(largest_),
          pinned_b_(largest_), device_a_(largest_), device_b_(largest_) {
        const std::string link = std::isfinite(link_peak_)
                                     ? tut::fmt("PCIe %.1f GB/s per direction (theoretical, from sysfs)", link_peak_)
                                     : "unknown (no PCIe link information in sysfs)";
        std::printf("Host link: %s\n", link.c_str());
        tut::SplitMix64 rng(static_cast<uint64_t>(bench.run().seed));
        for (size_t i = 0; i < largest_; i += 8) {
            const uint64_t r = rng.next();
            std::memcpy(&pageable_a_[i], &r, std::min<size_t>(8, largest_ - i));
        }
        std::memcpy(pinned_a_.get(), pageable_a_.data(), largest_);
        std::memset(pageable_b_.data(), 0, largest_);  // touch every page before timing
        std::memset(pinned_b_.get(), 0, largest_);
        page_locked_ = tut::bandwidth::is_pinned(pinned_a_.get());
        std::printf("pinned host buffers page-locked: %s\n", page_locked_ ? "yes" : "NO (pageable memory)");
    }

    /// Checks transfer() at `bytes`, exactly: pageable -> device -> device -> pinned, and
    /// pinned -> device -> pageable. Both device buffers are poisoned (0xFF) before each
    /// chain: either may already hold the source's bytes (from the first chain, or a smaller
    /// size's timing), and a transfer that wrote nothing would then pass.
    tut::Verdict check(long long bytes) {
        const size_t n = static_cast<size_t>(bytes);
        auto poison_device = [&] {
            TUT_CUDA(cudaMemset(device_a_.get(), 0xFF, n));
            TUT_CUDA(cudaMemset(device_b_.get(), 0xFF, n));
        };
        std::memset(pinned_b_.get(), 0, n);
        std::memset(pageable_b_.data(), 0, n);
        poison_device();
        lesson::transfer(Direction::HostToDevice, device_a_.get(), pageable_a_.data(), n);
        lesson::transfer(Direction::DeviceToDevice, device_b_.get(), device_a_.get(), n);
        lesson::transfer(Direction::DeviceToHost, pinned_b_.get(), device_b_.get(), n);
        TUT_CUDA(cudaDeviceSynchronize());
        bool ok = std::memcmp(pinned_b_.get(), pageable_a_.data(), n) == 0;
        poison_device();
        lesson::transfer(Direction::HostToDevice, device_b_.get(), pinned_a_.get(), n);
        lesson::transfer(Direction::DeviceToHost, pageable_b_.data(), device_b_.get(), n);
        TUT_CUDA(cudaDeviceSynchronize());
        ok = ok && std::memcmp(pageable_b_.data(), pageable_a_.data(), n) == 0;
        if (ok) return tut::passed("ok");
        return tut::failed("a round trip of " + std::to_string(bytes) + " bytes came back different");
    }

    /// L2 is flushed before each timed D2D repeat (device memory on both sides), not for
    /// transfers over the link.
    static tut::TimingOptions timing(const TransferKind& kind) {
        tut::TimingOptions t;
        t.flush_l2 = kind.direction == Direction::DeviceToDevice;
        return t;
    }

    /// One transfer() of `bytes`: H2D from host buffer a to device buffer b, D2H from
    /// device a to host buffer b, D2D from device a to device b.
    void run(const TransferKind& kind, long long bytes) {
        const Direction d = kind.direction;
        const void* from = d != Direction::HostToDevice ? device_a_.get()
                           : kind.pinned                ? pinned_a_.get()
                                                        : pageable_a_.data();
        void* to = d != Direction::DeviceToHost ? device_b_.get() : kind.pinned ? pinned_b_.get() : pageable_b_.data();
        lesson::transfer(d, to, from, static_cast<size_t>(bytes));
    }

    /// Starts the row of one size; add() fills in its kinds.
    void add_size(long long bytes, const tut::Verdict& verdict) {
        rows_.push_back({bytes, verdict, std::vector<tut::Timing>(kinds_.size())});
    }
    void add(const TransferKind& kind, const tut::Timing& t) {
        for (size_t k = 0; k < kinds_.size(); ++k)
            if (kinds_[k].name == kind.name) rows_.back().timings[k] = t;
    }

    /// One result per size and kind measured, in the table's order; after the whole run,
    /// since pinned and D2D transfers are judged against the largest size's.
    std::vector<tut::Result> results() const {
        std::vector<tut::Result> out;
        const Row& top = rows_[largest_row()];
        for (const Row& row : rows_)
            for (size_t k = 0; k < kinds_.size(); ++k) {
                if (!std::isfinite(gbs_of(row, k))) continue;
                const bool d2d = kinds_[k].direction == Direction::DeviceToDevice;
                const bool pageable = !d2d && !kinds_[k].pinned;
                tut::Result result;
                tut::Record& r = result.record;
                r.variant = kinds_[k].name;
                r.size = std::to_string(row.bytes);
                r.value = gbs_of(row, k);
                r.unit = "GB/s";
                r.time_ms = row.timings[k].median_ms;
                r.library = pageable ? "cudaMemcpy from/to pinned memory, same direction and size"
                                     : "the same transfer at " + std::to_string(top.bytes) + " bytes (the asymptote)";
                r.library_value = pageable ? gbs_of(row, k + 1) : gbs_of(top, k);  // the pinned kind follows
                r.peak = d2d ? "theoretical DRAM bandwidth (read + write)" : "theoretical PCIe bandwidth, one direction";
                r.peak_value = peak(k);
                r.checked = row.verdict.passed();
                r.extra.add("bytes", row.bytes)
                    .add("bytes_moved", tut::bandwidth::transfer_bytes_moved(kinds_[k].direction, size_t(row.bytes)))
                    .add("pinned_is_page_locked", page_locked_);
                out.push_back(result);
            }
        return out;
    }

    /// Prints the title and returns the table: GB/s per size (rows) and kind (columns).
    tut::Table table() const {
        const tut::LessonInfo& l = bench_.lesson();
        std::printf("\n%s/%s: %s  (GB/s = 1e9 bytes/s; D2D counts read + write; median of %d runs)\n", l.track,
                    l.lesson, l.title, bench_.run().repeats);
        std::vector<std::string> header = tut::names_of(kinds_);
        header.insert(header.begin(), "bytes");
        header.insert(header.end(), {"pinned/pageable H2D", "check"});
        tut::Table table(header);
        for (const Row& row : rows_) {
            std::vector<std::string> cells{std::to_string(row.bytes)};
            for (size_t k = 0; k < kinds_.size(); ++k)
                cells.push_back(std::isfinite(gbs_of(row, k)) ? tut::fmt("%.2f", gbs_of(row, k)) : "-");
            const double gain = gbs_of(row, 1) / gbs_of(row, 0);  // h2d-pinned / h2d-pageable
            cells.push_back(std::isfinite(gain) ? tut::fmt("%.2fx", gain) : "-");
            cells.push_back(row.verdict.cell);
            table.add_row(cells);
        }
        return table;
    }

    /// One line: each kind at the largest size, as a share of its peak.
    void print_summary() const {
        const Row& top = rows_[largest_row()];
        std::printf("\nAt %lld bytes:", top.bytes);
        for (size_t k = 0; k < kinds_.size(); ++k)
            if (std::isfinite(gbs_of(top, k)))
                std::printf(" %s %s of %s;", kinds_[k].name.c_str(), tut::percent(gbs_of(top, k) / peak(k)).c_str(),
                            kinds_[k].direction == Direction::DeviceToDevice ? "DRAM peak" : "PCIe peak");
        std::printf("\n");
    }

  private:
    struct Row {
        long long bytes;
        tut::Verdict verdict;
        std::vector<tut::Timing> timings;  ///< per kind; no repeats where not measured
    };

    /// The largest size, when two buffers of it fit on the device.
    static size_t require_fits(const std::vector<long long>& sizes) {
        const size_t largest = static_cast<size_t>(*std::max_element(sizes.begin(), sizes.end()));
        if (auto why = tut::device_memory_shortfall(2 * largest); !why.empty())
            throw tut::Unsupported("transfers of " + std::to_string(largest) + " bytes " + why);
        return largest;
    }
    /// GB/s of kind k in `row`; NaN where not measured.
    double gbs_of(const Row& row, size_t k) const {
        const tut::Timing& t = row.timings[k];
        const double moved =
            tut::bandwidth::transfer_bytes_moved(kinds_[k].direction, static_cast<size_t>(row.bytes));
        return t.repeats > 0 ? tut::bandwidth::gbs(moved, t.median_ms) : NAN;
    }
    /// Kind k's ceiling: the DRAM's for D2D, the PCIe link's otherwise.
    double peak(size_t k) const {
        return kinds_[k].direction == Direction::DeviceToDevice ? bench_.device().dram_peak_gbs : link_peak_;
    }
    /// The first row of the largest size: the asymptote.
    size_t largest_row() const {
        size_t top = 0;
        for (size_t s = 1; s < rows_.size(); ++s)
            if (rows_[s].bytes > rows_[top].bytes) top = s;
        return top;
    }

    const tut::Bench& bench_;
    double link_peak_;
    size_t largest_;
    bool page_locked_ = false;
    std::vector<unsigned char> pageable_a_, pageable_b_;
    tut::bandwidth::PinnedBuffer pinned_a_, pinned_b_;
    tut::DeviceBuffer<unsigned char> device_a_, device_b_;
    std::vector<TransferKind> kinds_ = tut::bandwidth::transfer_kinds();
    std::vector<Row> rows_;
};

}  // namespace

// The five kinds are not variants of one job: each times the same call, transfer(), in its
// own direction and host memory, at every size. So the loop runs over sizes and kinds, the
// round trip that checks transfer() runs once per size, and the table has a row per size
// and a column per kind.
int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"bandwidth", "01_transfers",
                                 "cudaMemcpy bandwidth: pageable vs pinned host memory, D2D"};
    const std::vector<TransferKind> kinds = tut::bandwidth::transfer_kinds();
    tut::bandwidth::Options options(lesson, "Times cudaMemcpy host->device and device->host (pageable and pinned host "
                                            "memory) and device->device over a range of sizes. Replaces the "
                                            "bandwidthTest sample.");
    std::vector<long long> sizes{4096, 65536, 1 << 20, 16 << 20, 256 << 20};
    options.cli.add_int_list("sizes", &sizes, "transfer sizes in bytes, comma-separated", 1, 1LL << 34);
    options.parse(argc, argv, tut::names_of(kinds));
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        Transfers transfers(bench, sizes);
        for (const long long bytes : sizes) {
            const tut::Verdict verdict = bench.check("round trip", [&] { return transfers.check(bytes); });
            transfers.add_size(bytes, verdict);
            for (const TransferKind& kind : kinds) {
                if (!bench.runs(kind.name)) continue;
                const tut::Timing timing = bench.time(kind.name + "/" + std::to_string(bytes),
                                                      [&] { transfers.run(kind, bytes); }, transfers.timing(kind));
                transfers.add(kind, timing);
            }
        }
        for (const tut::Result& result : transfers.results()) bench.record(result);  // beside the largest size's
        transfers.table().print();
        transfers.print_summary();
        return bench.exit_code();
    });
}
