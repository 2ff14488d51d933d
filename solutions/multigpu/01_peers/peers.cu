// multigpu/01_peers: peers. Two GPUs of one machine, one process: what connects them
// (NVLink or PCIe), how one GPU is allowed into the other's memory (peer access), and
// what a byte costs to move across: cudaMemcpyPeer with the copy engines, a kernel that
// loads from the other GPU's memory, one that stores into it, and the copy staged
// through host memory that is all there is without peer access. Each is measured beside
// the link's line rate and beside cudaMemcpyPeer, in the same run.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/multigpu/01_peers/peers.cu -o peers
// Run:  ./peers --gpus 2          (one process using GPUs 0 and 1; --sweep: sizes 4 B .. 1 GiB)
//
// In this file:
//   enable_peer_access(a, b)   let GPU a read and write GPU b's memory, and b a's     (the exercise)
//   copy_kernel                16-byte loads and stores, grid-stride; run on either GPU
//   copy_by_load               the receiving GPU runs copy_kernel, loading the sender's memory   (the exercise)
//   copy_by_store              the sending GPU runs copy_kernel, storing into the receiver's memory (the exercise)
//   chase_kernel               one thread following a chain of pointers: the latency of one load
//   variants: "memcpy peer, access off", "staged through host", "memcpy peer",
//             "memcpy peer, both ways", "kernel load", "kernel store";
//             with --gpus 3 or more also "every pair" and "ring, all at once"
//
// Sources: CUDA C++ Programming Guide, "Peer-to-Peer Memory Access" and "Peer-to-Peer
// Memory Copy"; the cuda-samples p2pBandwidthLatencyTest (its matrices of bandwidth and
// latency between every pair of GPUs).
#include "tut/buffer.hpp"
#include "tut/check.hpp"
#include "tut/cli.hpp"
#include "tut/gpu.hpp"
#include "tut/lesson.hpp"
#include "tut/multigpu.hpp"
#include "tut/multigpu_peers.hpp"
#include "tut/multigpu_topology.hpp"
#include "tut/nvtx.hpp"
#include "tut/report.hpp"
#include "tut/timer.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace lesson {

using tut::mg::CopyCall;    // src, dst, bytes, a stream on each GPU, the access granted
using tut::mg::PeerAccess;  // a_to_b, b_to_a

/// Let GPU a read and write GPU b's memory, and GPU b GPU a's, where the hardware allows
/// it. Calling it again for the same pair is harmless. Leaves the current device as it was.
PeerAccess enable_peer_access(int a, int b) {
    PeerAccess access;
    int previous = 0;
    TUT_CUDA(cudaGetDevice(&previous));
    // Peer access is a property of the GPU that does the accessing: it maps the other
    // GPU's memory into its own page tables, so it is switched on from that GPU's side,
    // once per direction. A second call reports cudaErrorPeerAccessAlreadyEnabled, which
    // is no failure here, but leaves the error set: clear it, or the next checked call
    // would report it as its own.
    const int from[2] = {a, b}, to[2] = {b, a};
    bool* granted[2] = {&access.a_to_b, &access.b_to_a};
    for (int d = 0; d < 2; ++d) {
        int can = 0;
        TUT_CUDA(cudaDeviceCanAccessPeer(&can, from[d], to[d]));
        if (!can) continue;
        TUT_CUDA(cudaSetDevice(from[d]));
        const cudaError_t status = cudaDeviceEnablePeerAccess(to[d], 0);
        if (status == cudaErrorPeerAccessAlreadyEnabled) {
            cudaGetLastError();
        } else {
            TUT_CUDA(status);
        }
        *granted[d] = true;
    }
    TUT_CUDA(cudaSetDevice(previous));
    return access;
}

[[maybe_unused]] constexpr int kThreads = 256;  // threads per block of copy_kernel

/// dst[i] = src[i] for `bytes` bytes: 16 bytes per load and store where both pointers
/// allow it, the tail byte by byte. Nothing here knows which GPU a pointer lives on: with
/// peer access, a load from the other GPU's memory is an ordinary load that the memory
/// system sends across the link.
__global__ void copy_kernel(unsigned char* __restrict__ dst, const unsigned char* __restrict__ src, size_t bytes) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const bool aligned = (reinterpret_cast<uintptr_t>(dst) % 16 == 0) && (reinterpret_cast<uintptr_t>(src) % 16 == 0);
    size_t done = 0;
    if (aligned) {
        const size_t n16 = bytes / 16;
        const int4* s = reinterpret_cast<const int4*>(src);
        int4* d = reinterpret_cast<int4*>(dst);
        size_t i = first;
        // Two loads in flight per thread: a remote load waits a round trip over the link.
        for (; i + stride < n16; i += 2 * stride) {
            const int4 x = s[i], y = s[i + stride];
            d[i] = x;
            d[i + stride] = y;
        }
        for (; i < n16; i += stride) d[i] = s[i];
        done = n16 * 16;
    }
    for (size_t i = done + first; i < bytes; i += stride) dst[i] = src[i];
}

/// The receiving GPU pulls: it runs the copy, loading from the sender's memory.
void copy_by_load(const CopyCall& c) {
    if (!c.access.b_to_a) throw tut::Unsupported("kernel load: the receiving GPU has no peer access to the sender");
    if (c.bytes == 0) return;
    TUT_CUDA(cudaSetDevice(c.dst_dev));
    copy_kernel<<<c.blocks, kThreads, 0, c.dst_stream>>>(static_cast<unsigned char*>(c.dst),
                                                          static_cast<const unsigned char*>(c.src), c.bytes);
    TUT_LAUNCH("copy_kernel (load)");
}

/// The sending GPU pushes: it runs the copy, storing into the receiver's memory.
void copy_by_store(const CopyCall& c) {
    if (!c.access.a_to_b) throw tut::Unsupported("kernel store: the sending GPU has no peer access to the receiver");
    if (c.bytes == 0) return;
    TUT_CUDA(cudaSetDevice(c.src_dev));
    copy_kernel<<<c.blocks, kThreads, 0, c.src_stream>>>(static_cast<unsigned char*>(c.dst),
                                                          static_cast<const unsigned char*>(c.src), c.bytes);
    TUT_LAUNCH("copy_kernel (store)");
}

/// One thread follows next[i] `steps` times from `start`: each load needs the one before,
/// so the time per step is the latency of one load (from wherever `next` lives).
__global__ void chase_kernel(const unsigned* __restrict__ next, unsigned start, int steps, unsigned* out) {
    unsigned i = start;
    for (int s = 0; s < steps; ++s) i = __ldcg(next + i);  // .cg: from L2 (or across the link), not L1
    *out = i;
}

}  // namespace lesson

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {

using tut::mg::CopyCall;

/// cudaMemcpyPeerAsync: the copy engines move the bytes; with peer access on, straight
/// across the link, else the driver stages them through host memory.
void memcpy_peer(const CopyCall& c) {
    TUT_CUDA(cudaMemcpyPeerAsync(c.dst, c.dst_dev, c.src, c.src_dev, c.bytes, c.src_stream));
}

/// Staged through host memory by hand, as without peer access: chunks of 4 MiB go
/// GPU -> pinned host on the sender's stream and pinned host -> GPU on the receiver's,
/// two chunks in flight (double buffering), each hand-over ordered by an event.
struct Staging {
    static constexpr size_t kChunk = size_t(4) << 20;
    unsigned char* host[2] = {nullptr, nullptr};
    cudaEvent_t down[2], up[2];  // "chunk k is in host buffer k%2", "host buffer k%2 is free again"
    size_t issued = 0;           // chunks staged so far, over every call
    Staging(int s, int d) {
        for (int k = 0; k < 2; ++k) {
            TUT_CUDA(cudaMallocHost(&host[k], kChunk));
            TUT_CUDA(cudaSetDevice(s));
            TUT_CUDA(cudaEventCreateWithFlags(&down[k], cudaEventDisableTiming));
            TUT_CUDA(cudaSetDevice(d));
            TUT_CUDA(cudaEventCreateWithFlags(&up[k], cudaEventDisableTiming));
        }
    }
    ~Staging() {
        for (int k = 0; k < 2; ++k) {
            cudaFreeHost(host[k]);
            cudaEventDestroy(down[k]);
            cudaEventDestroy(up[k]);
        }
    }
    void copy(const CopyCall& c) {
        for (size_t off = 0; off < c.bytes; off += kChunk, ++issued) {
            const size_t n = std::min(kChunk, c.bytes - off);
            const int b = static_cast<int>(issued % 2);
            TUT_CUDA(cudaSetDevice(c.src_dev));
            if (issued >= 2) TUT_CUDA(cudaStreamWaitEvent(c.src_stream, up[b], 0));
            TUT_CUDA(cudaMemcpyAsync(host[b], static_cast<const unsigned char*>(c.src) + off, n, cudaMemcpyDeviceToHost,
                                     c.src_stream));
            TUT_CUDA(cudaEventRecord(down[b], c.src_stream));
            TUT_CUDA(cudaSetDevice(c.dst_dev));
            TUT_CUDA(cudaStreamWaitEvent(c.dst_stream, down[b], 0));
            TUT_CUDA(cudaMemcpyAsync(static_cast<unsigned char*>(c.dst) + off, host[b], n, cudaMemcpyHostToDevice,
                                     c.dst_stream));
            TUT_CUDA(cudaEventRecord(up[b], c.dst_stream));
        }
    }
};

/// Per GPU of the run: a stream, and events to start and join the sides of a copy.
struct Gpu {
    int dev = 0;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr, mark = nullptr;
    explicit Gpu(int d) : dev(d) {
        TUT_CUDA(cudaSetDevice(d));
        TUT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        TUT_CUDA(cudaEventCreate(&start));
        TUT_CUDA(cudaEventCreate(&stop));
        TUT_CUDA(cudaEventCreateWithFlags(&mark, cudaEventDisableTiming));
    }
    ~Gpu() {
        cudaSetDevice(dev);
        cudaStreamDestroy(stream);
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        cudaEventDestroy(mark);
    }
    Gpu(const Gpu&) = delete;
    Gpu& operator=(const Gpu&) = delete;
};

/// Times `work` (which enqueues on the streams of `gpus`): the start event on the first
/// GPU's stream, every other stream waits for it; after the work the first stream waits
/// for every other, and the stop event follows. `batch` calls per repeat; the median of
/// `repeats` (after `warmup` untimed ones), per call, in ms. `before_each`, if given, runs
/// before every repeat, outside the events.
double time_copies(const std::vector<Gpu*>& gpus, const std::function<void()>& work, int warmup, int repeats, int batch,
                   const std::function<void()>& before_each = {}) {
    auto once = [&]() -> double {
        if (before_each) before_each();
        Gpu& g0 = *gpus[0];
        TUT_CUDA(cudaSetDevice(g0.dev));
        TUT_CUDA(cudaEventRecord(g0.start, g0.stream));
        for (size_t i = 1; i < gpus.size(); ++i) {
            TUT_CUDA(cudaSetDevice(gpus[i]->dev));
            TUT_CUDA(cudaStreamWaitEvent(gpus[i]->stream, g0.start, 0));
        }
        for (int b = 0; b < batch; ++b) work();
        for (size_t i = 1; i < gpus.size(); ++i) {
            TUT_CUDA(cudaSetDevice(gpus[i]->dev));
            TUT_CUDA(cudaEventRecord(gpus[i]->mark, gpus[i]->stream));
            TUT_CUDA(cudaSetDevice(g0.dev));
            TUT_CUDA(cudaStreamWaitEvent(g0.stream, gpus[i]->mark, 0));
        }
        TUT_CUDA(cudaSetDevice(g0.dev));
        TUT_CUDA(cudaEventRecord(g0.stop, g0.stream));
        TUT_CUDA(cudaEventSynchronize(g0.stop));
        float ms = 0;
        TUT_CUDA(cudaEventElapsedTime(&ms, g0.start, g0.stop));
        return double(ms) / batch;
    };
    for (int i = 0; i < warmup; ++i) once();
    std::vector<double> samples;
    for (int r = 0; r < std::max(1, repeats); ++r) samples.push_back(once());
    return tut::median_of(samples);
}

/// `bytes` of a pattern that depends on the position and `seed` (xorshift).
std::vector<unsigned char> pattern(size_t bytes, uint64_t seed) {
    std::vector<unsigned char> h(bytes);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < bytes; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::memcpy(h.data() + i, &x, std::min<size_t>(8, bytes - i));
    }
    return h;
}

/// Switches peer access off in both directions, or back on where `granted` allows it.
void set_peer_access(const tut::mg::PeerAccess& granted, bool on) {
    const bool allowed[2] = {granted.a_to_b, granted.b_to_a};
    for (int d = 0; d < 2; ++d) {
        if (!allowed[d]) continue;
        TUT_CUDA(cudaSetDevice(d));
        const cudaError_t e = on ? cudaDeviceEnablePeerAccess(1 - d, 0) : cudaDeviceDisablePeerAccess(1 - d);
        if (e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorPeerAccessNotEnabled) {
            cudaGetLastError();
        } else {
            TUT_CUDA(e);
        }
    }
}

struct Way {
    std::string name;
    std::function<void(const CopyCall&)> run;
    bool peer_access = true;  ///< runs with the access enable_peer_access() granted (false: access off)
    int directions = 1;       ///< 2: bytes cross in both directions at once
};

/// The pair of GPUs and everything the variants copy between: a source on GPU 0, a
/// destination on GPU 1, and the reverse pair for "both ways".
struct Problem {
    Gpu g0{0}, g1{1};
    size_t max_bytes;
    std::vector<unsigned char> data;
    tut::DeviceBuffer<unsigned char> src, back, dst, back_src;
    Staging staging{0, 1};
    int sms = 0;
    Problem(size_t bytes, uint64_t seed) : max_bytes(bytes), data(pattern(bytes, seed)) {
        TUT_CUDA(cudaSetDevice(0));
        src = tut::DeviceBuffer<unsigned char>(data);
        back = tut::DeviceBuffer<unsigned char>(bytes);
        TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
        TUT_CUDA(cudaSetDevice(1));
        dst = tut::DeviceBuffer<unsigned char>(bytes);
        back_src = tut::DeviceBuffer<unsigned char>(data);
    }
    CopyCall call(size_t n, const tut::mg::PeerAccess& access) {
        return CopyCall{0, 1, src.get(), dst.get(), n, g0.stream, g1.stream, access, 2 * sms};
    }
    std::vector<Way> variants() {
        return {
            {"memcpy peer, access off", memcpy_peer, false, 1},
            {"staged through host", [this](const CopyCall& c) { staging.copy(c); }, false, 1},
            {"memcpy peer", memcpy_peer, true, 1},
            {"memcpy peer, both ways",
             [this](const CopyCall& c) {
                 memcpy_peer(c);
                 TUT_CUDA(cudaMemcpyPeerAsync(back.get(), 0, back_src.get(), 1, c.bytes, c.dst_stream));
             },
             true, 2},
            {"kernel load", lesson::copy_by_load, true, 1},
            {"kernel store", lesson::copy_by_store, true, 1},
        };
    }
    /// Poisons the destination, copies once, compares every byte; "" when right.
    std::string check(const Way& v, const CopyCall& c) {
        TUT_CUDA(cudaSetDevice(1));
        TUT_CUDA(cudaMemset(dst.get(), 0xFF, c.bytes));
        TUT_CUDA(cudaDeviceSynchronize());
        time_copies({&g0, &g1}, [&] { v.run(c); }, 0, 1, 1);
        std::vector<unsigned char> got(c.bytes);
        TUT_CUDA(cudaMemcpy(got.data(), dst.get(), c.bytes, cudaMemcpyDefault));
        for (size_t i = 0; i < c.bytes; ++i)
            if (got[i] != data[i]) return tut::fmt("byte %zu is %u, expected %u", i, got[i], data[i]);
        return "";
    }
    double time(const Way& v, const CopyCall& c, const tut::RunOptions& run) {
        tut::NvtxRange range("multigpu/01_peers/" + v.name);
        const int batch = c.bytes <= (size_t(1) << 20) ? 20 : 1;  // small copies in batches: launch cost spread out
        return time_copies({&g0, &g1}, [&] { v.run(c); }, run.warmup, run.repeats, batch);
    }
};

/// Why a variant cannot run with the access granted, or "".
std::string cannot_run(const Way& v, const tut::mg::PeerAccess& access) {
    if (!v.peer_access) return "";
    if (v.name == "kernel load" && !access.b_to_a) return "skipped: GPU 1 has no access to GPU 0";
    if (v.name == "kernel store" && !access.a_to_b) return "skipped: GPU 0 has no access to GPU 1";
    return "";
}

/// A random cycle through `count` slots `spacing` words apart, for the chase (next[slot] = the next slot).
std::vector<unsigned> chase_chain(size_t count, size_t spacing, unsigned seed) {
    std::vector<unsigned> order(count);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin() + 1, order.end(), std::mt19937(seed));
    std::vector<unsigned> next(count * spacing, 0);
    for (size_t i = 0; i < count; ++i)
        next[size_t(order[i]) * spacing] = static_cast<unsigned>(order[(i + 1) % count] * spacing);
    return next;
}

/// The latency of one load by a kernel on GPU 0, from its own DRAM and from GPU 1's. The
/// chain's 20000 loads touch 20000 lines, about 2.5 MB, which L2 would keep from one run to
/// the next: both GPUs' L2 is flushed before every run, so each load goes to DRAM (a peer
/// load is served by the other GPU's L2 and DRAM, across the link).
void measure_latency(Problem& p, const tut::RunOptions& run, const tut::mg::Link& link, int gpus, tut::Table& table) {
    const std::vector<unsigned> chain = chase_chain(size_t(1) << 16, 256, 7);
    const int steps = 20000;
    std::unique_ptr<tut::L2Flusher> flusher[2];
    for (int d = 0; d < 2; ++d) {
        TUT_CUDA(cudaSetDevice(d));
        flusher[d] = std::make_unique<tut::L2Flusher>();
    }
    for (int where = 0; where < 2; ++where) {
        TUT_CUDA(cudaSetDevice(where));
        tut::DeviceBuffer<unsigned> next(chain);
        TUT_CUDA(cudaSetDevice(0));
        tut::DeviceBuffer<unsigned> out(1);
        const auto flush_both = [&] {
            for (int d = 0; d < 2; ++d) {
                TUT_CUDA(cudaSetDevice(d));
                flusher[d]->flush();
                TUT_CUDA(cudaDeviceSynchronize());
            }
        };
        const double ms = time_copies({&p.g0}, [&] {
            lesson::chase_kernel<<<1, 1, 0, p.g0.stream>>>(next.get(), 0, steps, out.get());
            TUT_LAUNCH("chase_kernel");
        }, 1, std::max(3, run.repeats / 4), 1, flush_both);
        const double ns = ms * 1e6 / steps;
        const std::string name = where == 0 ? "load latency, own DRAM" : "load latency, peer DRAM";
        tut::Record r = tut::mg::make_record("01_peers", name, std::to_string(steps), gpus);
        r.value = ns;
        r.unit = "ns";
        r.time_ms = ms;
        r.extra.add("link", link.text());
        r.extra.add("progression", false);
        tut::append_record("peers", run.json, r);
        table.add_row({name, tut::fmt("%d loads, L2 flushed", steps), tut::fmt("%.0f ns per load", ns), "-", "-", "-"});
    }
}

/// With more than two GPUs: cudaMemcpyPeer between every ordered pair (one pair at a time),
/// then a ring in which every GPU sends to the next at the same time, as a ring all-reduce does.
void measure_all_pairs(int gpus, size_t bytes, const tut::RunOptions& run, const tut::mg::Link& link,
                       double memcpy_peer_gbs, tut::Table& table) {
    std::vector<std::unique_ptr<Gpu>> all;
    std::vector<tut::DeviceBuffer<unsigned char>> from, to;
    for (int d = 0; d < gpus; ++d) {
        all.push_back(std::make_unique<Gpu>(d));
        TUT_CUDA(cudaSetDevice(d));
        from.emplace_back(bytes);
        to.emplace_back(bytes);
        TUT_CUDA(cudaMemset(from.back().get(), d + 1, bytes));
    }
    for (int a = 0; a < gpus; ++a)
        for (int b = a + 1; b < gpus; ++b) lesson::enable_peer_access(a, b);
    std::vector<std::string> header{"GB/s from \\ to"};
    for (int b = 0; b < gpus; ++b) header.push_back(tut::fmt("GPU %d", b));
    tut::Table pairs(header);
    auto record = [&](const std::string& name, double ms, bool progression) {
        const double gbs = double(bytes) / (ms * 1e-3) * 1e-9;
        tut::Record r = tut::mg::make_record("01_peers", name, std::to_string(bytes), gpus);
        r.value = gbs;
        r.unit = "GB/s";
        r.time_ms = ms;
        r.peak = link.kind + " line rate, one direction";
        r.peak_value = link.line_rate_gbs;
        r.library = "cudaMemcpyPeer";
        r.library_value = memcpy_peer_gbs;
        r.extra.add("link", link.text());
        if (!progression) r.extra.add("progression", false);
        tut::append_record("peers", run.json, r);
        return gbs;
    };
    for (int a = 0; a < gpus; ++a) {
        std::vector<std::string> row{tut::fmt("GPU %d", a)};
        for (int b = 0; b < gpus; ++b) {
            if (a == b) {
                row.push_back("-");
                continue;
            }
            const double ms = time_copies({all[a].get(), all[b].get()}, [&] {
                TUT_CUDA(cudaMemcpyPeerAsync(to[b].get(), b, from[a].get(), a, bytes, all[a]->stream));
            }, run.warmup, run.repeats, 1);
            row.push_back(tut::fmt("%.0f", record(tut::fmt("pair %d->%d", a, b), ms, false)));
        }
        pairs.add_row(row);
    }
    std::printf("\ncudaMemcpyPeer between every pair of GPUs, %s, one pair at a time (GB/s):\n",
                tut::mg::bytes_text(double(bytes)).c_str());
    pairs.print();
    std::vector<Gpu*> ring;
    for (auto& g : all) ring.push_back(g.get());
    const double ms = time_copies(ring, [&] {
        for (int a = 0; a < gpus; ++a) {
            const int b = (a + 1) % gpus;
            TUT_CUDA(cudaMemcpyPeerAsync(to[b].get(), b, from[a].get(), a, bytes, all[a]->stream));
        }
    }, run.warmup, run.repeats, 1);
    const double gbs = record("ring, all at once", ms, true);  // per GPU: each sends one copy and receives one
    table.add_row({"ring, all at once", tut::mg::bytes_text(double(bytes)), tut::fmt("%.1f us", ms * 1e3),
                   tut::fmt("%.1f", gbs), tut::percent(gbs / link.line_rate_gbs), tut::percent(gbs / memcpy_peer_gbs)});
}

}  // namespace

int main(int argc, char** argv) {
    int gpus = 2;
    long long bytes = 256ll << 20;
    bool sweep = false;
    tut::RunOptions run;
    tut::Cli cli("peers", "GPU to GPU: peer access, cudaMemcpyPeer, remote loads and stores, staged copies");
    cli.add_int("gpus", &gpus, "GPUs to use (devices 0 .. gpus-1; the pair measured is 0 and 1)", 1, 64);
    cli.add_int("bytes", &bytes, "bytes per copy", 1, 4ll << 30);
    cli.add_flag("sweep", &sweep, "also cudaMemcpyPeer at 4 B .. 1 GiB, and the latency of one load");
    tut::add_run_options(cli, run);
    cli.parse_or_exit(argc, argv);
    tut::finish_run_options(run);
    const std::vector<std::string> names{"memcpy peer, access off", "staged through host", "memcpy peer",
                                         "memcpy peer, both ways", "kernel load", "kernel store"};
    if (!tut::variant_is_known("peers", run.variant, names)) return tut::kUsageExitCode;
    tut::mg::apply_safety_defaults();
    tut::require_gpu("peers");
    int devices = 0;
    TUT_CUDA(cudaGetDeviceCount(&devices));
    if (devices < 2 || gpus < 2) {
        std::printf("SKIPPED: peers measures what lies between two GPUs, and %s. Exit code %d means skipped.\n",
                    gpus < 2 ? "--gpus 1 names one" : tut::fmt("this machine has %d", devices).c_str(), tut::kSkipExitCode);
        return tut::kSkipExitCode;
    }
    if (gpus > devices) {
        std::fprintf(stderr, "peers: error: --gpus %d, but this machine has %d GPUs\n", gpus, devices);
        return tut::kUsageExitCode;
    }
    return tut::guarded_main("peers", [&] {
        const tut::mg::Link link = tut::mg::link_between(0, 1);
        std::printf("GPUs 0 and 1: %s | peer access %s, performance rank %d\n", link.text().c_str(),
                    link.peer_access ? "possible" : "impossible", link.performance_rank);
        Problem p(sweep ? std::max<size_t>(size_t(bytes), size_t(1) << 30) : size_t(bytes), uint64_t(run.seed));
        std::vector<Way> variants = p.variants();
        const tut::mg::PeerAccess access = lesson::enable_peer_access(0, 1);
        std::printf("peer access granted: GPU 0 -> 1 %s, GPU 1 -> 0 %s\n", access.a_to_b ? "on" : "OFF",
                    access.b_to_a ? "on" : "OFF");
        // The yardstick first: cudaMemcpyPeer with the access granted, at the headline size.
        const Way& yardstick = *std::find_if(variants.begin(), variants.end(), [](const Way& v) { return v.name == "memcpy peer"; });
        const double memcpy_peer_gbs = double(bytes) / (p.time(yardstick, p.call(size_t(bytes), access), run) * 1e-3) * 1e-9;

        tut::Table table({"variant", "size", "time", "GB/s", "% of line rate", "% of memcpy peer"});
        for (const Way& v : variants) {
            if (!run.variant.empty() && v.name != run.variant) continue;
            set_peer_access(access, v.peer_access);
            const bool swept = sweep && v.name == "memcpy peer";
            for (size_t n : swept ? std::vector<size_t>{4, 4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30}
                                  : std::vector<size_t>{size_t(bytes)}) {
                const CopyCall call = p.call(n, v.peer_access ? access : tut::mg::PeerAccess{});
                if (const std::string why = cannot_run(v, access); !why.empty()) {
                    table.add_row({v.name, tut::mg::bytes_text(double(n)), "-", "-", why, "-"});
                    continue;
                }
                std::string wrong;
                double ms = 0;
                try {
                    wrong = run.check() ? p.check(v, call) : "";
                    ms = p.time(v, call, run);
                } catch (const tut::Unsupported& e) {
                    table.add_row({v.name, tut::mg::bytes_text(double(n)), "-", "-", std::string("refused: ") + e.what(), "-"});
                    continue;
                }
                if (!wrong.empty()) throw tut::CudaError(v.name + " copied wrong bytes: " + wrong);
                tut::Record r = tut::mg::make_record("01_peers", v.name, std::to_string(n), gpus);
                r.value = double(n) * v.directions / (ms * 1e-3) * 1e-9;
                r.unit = "GB/s";
                r.time_ms = ms;
                r.peak = link.kind + " line rate, " + (v.directions == 2 ? "both directions" : "one direction");
                r.peak_value = link.line_rate_gbs * v.directions;
                r.library = "cudaMemcpyPeer";
                r.library_value = n == size_t(bytes) ? memcpy_peer_gbs * v.directions : NAN;
                r.checked = run.check();
                r.extra.add("link", link.text());
                tut::append_record("peers", run.json, r);
                table.add_row({v.name, tut::mg::bytes_text(double(n)), tut::fmt("%.1f us", ms * 1e3),
                               tut::fmt("%.1f", r.value), tut::percent(r.ratio_to_peak()), tut::percent(r.ratio_to_library())});
            }
        }
        set_peer_access(access, true);
        if (sweep && run.variant.empty() && access.a_to_b) measure_latency(p, run, link, gpus, table);
        if (gpus > 2 && run.variant.empty()) measure_all_pairs(gpus, size_t(bytes), run, link, memcpy_peer_gbs, table);
        std::printf("\nGPU 0 -> GPU 1 over %s; GB/s per direction unless the variant says both ways:\n", link.text().c_str());
        table.print();
        return 0;
    });
}
