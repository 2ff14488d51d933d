// sgemm/02_unified_memory: unified memory against explicit copies, timed by the wall clock of the whole job.
// Starts from: lesson 01's kernel, unchanged. Adds: the memory around it. Each pipeline does
// the whole job a program would do: allocate its buffers, write the inputs into them on the
// host, get them to the GPU, compute, get C back, read it on the host, free everything.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/02_unified_memory/unified_memory.cu -lcublas -o unified_memory
// Run:  ./unified_memory --n 4096   (--help for options; --profile for one clean run of each pipeline)
//
// Pipelines (variants), which differ only in the memory they use:
//   "explicit pageable"   new[] on the host, cudaMalloc on the GPU, cudaMemcpy between
//   "explicit pinned"     the same with cudaMallocHost (page-locked) host buffers
//   "managed"             cudaMallocManaged: one pointer for both, pages migrate on demand
//   "managed prefetch"    the same, with prefetch_before_kernel() / prefetch_after_kernel() moving pages in bulk
// After the table: cudaMemcpy bandwidth of one matrix from pageable and from pinned memory.
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

namespace lesson {

// Migrates the pages of managed memory [p, p + bytes) to this GPU, in bulk, on the default
// stream: large DMA transfers instead of one GPU page fault (and a small migration) per page
// the kernel touches first. Pages never touched are created directly on the GPU.
void prefetch_to_gpu(const void* p, size_t bytes) {
    // TODO(exercise) part 1 of 2, the mechanism: move the pages of [p, p + bytes) to the GPU
    //   this program runs on, in bulk, ahead of whoever touches them next.
    //   - Without a prefetch, a page moves only when a warp first touches it: the warp stalls on
    //     a GPU page fault while the driver migrates a few pages. The runtime can instead move a
    //     whole range ahead of time with large DMA transfers; the README names the call, and its
    //     declaration in cuda_runtime_api.h documents every argument.
    //   - In CUDA 13 the destination is a cudaMemLocation, not a device number: which location
    //     type means a GPU, and which GPU is the current one?
    //   - The kernel is launched on the default stream after the pipeline's prefetches: the move
    //     must be ordered before it, without blocking the host.
    //   - Check every CUDA call with TUT_CUDA, as the rest of this file does.
    (void)p;  // unused until the TODO is done
    (void)bytes;
}

// Migrates them back to host memory in bulk, so the host's reads do not fault page by page.
void prefetch_to_host(const void* p, size_t bytes) {
    // TODO(exercise) part 1 of 2, continued: the same bulk move in the other direction. Which
    //   location type is host memory, and does it need an id?
    (void)p;  // unused until the TODO is done
    (void)bytes;
}

// The "managed prefetch" pipeline's moves before the kernel, in its "to GPU" stage (run_managed
// below): A and B have just been written by the host, C has not been touched yet.
void prefetch_before_kernel(const float* A, const float* B, const float* C, size_t bytes) {
    // TODO(exercise) part 2 of 2, the decisions, here and in prefetch_after_kernel(): which of
    //   the pipeline's pages move, and where. run_managed<true> calls this right before the
    //   kernel (its "to GPU" stage) and prefetch_after_kernel() right after it (its "to host"
    //   stage); then the host reads C and frees all three. Until this is done the "managed
    //   prefetch" pipeline behaves like "managed": every page moves when someone faults on it.
    //   - Where are A's pages now, and B's? Which side touches them next?
    //   - C has not been touched yet: does it have pages anywhere? When the kernel's first write
    //     reaches one of its pages, where is the page created, and what does the warp wait for?
    //   - Every page that moves crosses PCIe, in a fault or in a prefetch: move what its next
    //     user touches, and nothing else.
    (void)A;  // unused until the TODO is done
    (void)B;
    (void)C;
    (void)bytes;
}

// Its moves after the kernel, in its "to host" stage: then the host reads C and frees all three.
void prefetch_after_kernel(const float* A, const float* B, const float* C, size_t bytes) {
    // TODO(exercise) part 2 of 2, continued: after the kernel, which of the three does the host
    //   touch again before it frees them, and what would moving the others back cost?
    (void)A;  // unused until the TODO is done
    (void)B;
    (void)C;
    (void)bytes;
}

// Wall-clock milliseconds of each stage of one pipeline (below), which fills it in when asked.
struct PipelineTimes {
    double allocate = 0;  // host and device buffers
    double fill = 0;      // the host writes A and B into the pipeline's input buffers
    double to_gpu = 0;    // copies (or prefetches) of the inputs to the GPU
    double kernel = 0;    // the SGEMM kernel, page faults included for managed memory
    double to_host = 0;   // the copy (or prefetch) of C back to the host
    double read = 0;      // the host reads C out of the pipeline's output buffer
    double release = 0;   // freeing everything
    double total() const { return allocate + fill + to_gpu + kernel + to_host + read + release; }
};

}  // namespace lesson

namespace {

constexpr int kBlockSide = 16;  // blocks of 16 x 16 = 256 threads, as in the course slides

// Lesson 01's kernel, unchanged: thread (x, y) computes C[i][j] with j = x, i = y.
__global__ void sgemm_naive(int n, const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;  // the last blocks overhang when n is not a multiple of 16
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += A[i * n + k] * B[k * n + j];
    C[i * n + j] = sum;
}

void launch_naive(int n, const float* A, const float* B, float* C) {
    const dim3 block(kBlockSide, kBlockSide);
    const dim3 grid((n + kBlockSide - 1) / kBlockSide, (n + kBlockSide - 1) / kBlockSide);
    sgemm_naive<<<grid, block>>>(n, A, B, C);
    TUT_LAUNCH("sgemm_naive");
}

// Where a pipeline's host-side buffers live.
enum class Memory {
    pageable,  // plain new[]: the OS may move or swap its pages, so the GPU cannot DMA from it directly
    pinned,    // cudaMallocHost: page-locked, so the copy engines read and write it directly
    managed,   // cudaMallocManaged: one address valid on host and GPU; the driver migrates pages
};

// An n x n float matrix in one kind of memory, freed by release() (timed) or the destructor.
class HostMatrix {
  public:
    HostMatrix(Memory kind, size_t count) : kind_(kind) {
        const size_t bytes = count * sizeof(float);
        switch (kind_) {
            case Memory::pageable: data_ = new float[count]; break;  // not touched yet: no page is mapped
            case Memory::pinned: TUT_CUDA(cudaMallocHost(&data_, bytes)); break;
            case Memory::managed: TUT_CUDA(cudaMallocManaged(&data_, bytes, cudaMemAttachGlobal)); break;
        }
    }
    ~HostMatrix() {
        try {
            release();
        } catch (...) {  // a destructor must not throw; a failed free during unwinding is dropped
        }
    }
    HostMatrix(const HostMatrix&) = delete;
    HostMatrix& operator=(const HostMatrix&) = delete;
    float* get() const { return data_; }
    void release() {
        float* p = data_;
        data_ = nullptr;
        if (!p) return;
        switch (kind_) {
            case Memory::pageable: delete[] p; break;
            case Memory::pinned: TUT_CUDA(cudaFreeHost(p)); break;
            case Memory::managed: TUT_CUDA(cudaFree(p)); break;
        }
    }

  private:
    Memory kind_;
    float* data_ = nullptr;
};

// Refuses, before allocating anything, a size outside 1..8192 or three matrices that would
// not fit in the GPU's free memory. For managed memory this matters twice: asking for more
// than the GPU has free makes the driver evict and re-fetch pages, and can hang the GPU.
void require_pipeline(int n) {
    tut::sgemm::require_size(n);
    if (auto why = tut::device_memory_shortfall(3 * size_t(n) * n * sizeof(float)); !why.empty())
        throw tut::Unsupported("N = " + std::to_string(n) + ": three matrices " + why);
}

using lesson::PipelineTimes;

// Times consecutive stages with the host clock. lap() waits for all GPU work
// (cudaDeviceSynchronize) and returns the milliseconds since the previous lap() (or since
// the clock was made), so asynchronous work counts in the stage that enqueued it. A
// pipeline calls it whether or not it is timed, so it behaves the same either way.
class StageClock {
  public:
    double lap() {
        TUT_CUDA(cudaDeviceSynchronize());
        const Clock::time_point now = Clock::now();
        const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
        last_ = now;
        return ms;
    }

  private:
    using Clock = std::chrono::steady_clock;
    Clock::time_point last_ = Clock::now();
};

// Explicit copies: host buffers of `kHost` memory, device buffers from cudaMalloc, cudaMemcpy between.
template <Memory kHost>
void run_explicit(int n, const float* hA, const float* hB, float* hC, PipelineTimes* times) {
    require_pipeline(n);
    const size_t count = size_t(n) * n;
    const size_t bytes = count * sizeof(float);
    PipelineTimes stage;
    StageClock clock;

    HostMatrix A(kHost, count), B(kHost, count), C(kHost, count);
    tut::DeviceBuffer<float> dA(count), dB(count), dC(count);
    stage.allocate = clock.lap();

    std::copy(hA, hA + count, A.get());  // stands for the program producing its inputs
    std::copy(hB, hB + count, B.get());
    stage.fill = clock.lap();

    // From pageable memory the driver copies through a pinned staging buffer of its own, chunk
    // by chunk; from pinned memory the copy engine reads the buffer directly at PCIe speed.
    TUT_CUDA(cudaMemcpy(dA.get(), A.get(), bytes, cudaMemcpyHostToDevice));
    TUT_CUDA(cudaMemcpy(dB.get(), B.get(), bytes, cudaMemcpyHostToDevice));
    stage.to_gpu = clock.lap();

    launch_naive(n, dA.get(), dB.get(), dC.get());
    stage.kernel = clock.lap();

    TUT_CUDA(cudaMemcpy(C.get(), dC.get(), bytes, cudaMemcpyDeviceToHost));
    stage.to_host = clock.lap();

    std::copy(C.get(), C.get() + count, hC);  // stands for the program using its result
    stage.read = clock.lap();

    A.release();
    B.release();
    C.release();
    dA = tut::DeviceBuffer<float>();  // the moved-from temporary frees the old buffer
    dB = tut::DeviceBuffer<float>();
    dC = tut::DeviceBuffer<float>();
    stage.release = clock.lap();
    if (times) *times = stage;
}

// Managed memory needs a GPU and OS that let host and GPU touch it concurrently (Linux on
// Pascal or newer) to prefetch it; elsewhere cudaMemPrefetchAsync to the GPU fails.
void require_prefetch() {
    if (!tut::device_has(cudaDevAttrConcurrentManagedAccess))
        throw tut::Unsupported("this GPU/OS cannot prefetch managed memory (cudaDevAttrConcurrentManagedAccess = 0)");
}

// Managed memory: one pointer for host and GPU, no cudaMemcpy anywhere.
// Without prefetch the host's writes place A and B in host memory; the kernel's first touch
// of each page then faults, stalls the warps that touched it and migrates the page; C is
// created on the GPU by the kernel's writes and faults back page by page as the host reads it.
template <bool kPrefetch>
void run_managed(int n, const float* hA, const float* hB, float* hC, PipelineTimes* times) {
    require_pipeline(n);
    if (kPrefetch) require_prefetch();
    const size_t count = size_t(n) * n;
    const size_t bytes = count * sizeof(float);
    PipelineTimes stage;
    StageClock clock;

    HostMatrix A(Memory::managed, count), B(Memory::managed, count), C(Memory::managed, count);
    stage.allocate = clock.lap();

    std::copy(hA, hA + count, A.get());
    std::copy(hB, hB + count, B.get());
    stage.fill = clock.lap();

    if (kPrefetch) lesson::prefetch_before_kernel(A.get(), B.get(), C.get(), bytes);
    stage.to_gpu = clock.lap();

    launch_naive(n, A.get(), B.get(), C.get());
    stage.kernel = clock.lap();

    if (kPrefetch) lesson::prefetch_after_kernel(A.get(), B.get(), C.get(), bytes);
    stage.to_host = clock.lap();

    std::copy(C.get(), C.get() + count, hC);
    stage.read = clock.lap();

    A.release();
    B.release();
    C.release();
    stage.release = clock.lap();
    if (times) *times = stage;
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
// A pipeline computes C = A * B for n x n row-major matrices in ordinary (pageable) host
// memory, doing the whole job: allocate, fill, move, compute, move back, read, free. `times`
// (may be null) receives each stage's wall time. It throws tut::Unsupported, before
// allocating anything, for an n it cannot compute or that would not fit on the GPU.
using Pipeline = tut::Variant<void(int n, const float* A, const float* B, float* C, PipelineTimes* times)>;

std::vector<Pipeline> variants() {
    return {{"explicit pageable", run_explicit<Memory::pageable>},
            {"explicit pinned", run_explicit<Memory::pinned>},
            {"managed", run_managed<false>},
            {"managed prefetch", run_managed<true>}};
}
}  // namespace lesson

namespace {

// The pipelines' problem: A and B in host memory, the track's references, and the cuBLAS
// kernel alone as the library figure (what the arithmetic costs at best). A pipeline is
// checked on the host and timed by the host clock around the whole job (Bench::time_host);
// its stage columns are those of the median run.
class PipelineProblem {
  public:
    static constexpr const char* kSummary =
        "Computes C = A*B for N x N row-major float matrices held in host memory, timing the whole job by the "
        "wall clock.";

    PipelineProblem(const tut::Bench& bench, int n)
        : operands_(tut::sgemm::require_fits(n), static_cast<uint64_t>(bench.run().seed)), c_(size_t(n) * n) {
        peak_gflops_ = bench.device().fp32_peak_gflops;
        tut::sgemm::Cublas fp32;  // the reference of the checks, and the library figure
        if (!bench.run().profile) {
            tut::DeviceBuffer<float> dC(size_t(n) * n);
            tut::NvtxRange range(std::string(bench.lesson().track) + "/" + bench.lesson().lesson + "/cublas");
            library_ms_ = tut::time_gpu([&] { fp32.sgemm(n, operands_.dA.get(), operands_.dB.get(), dC.get()); },
                                        tut::TimingOptions{3, 10, false})
                              .median_ms;
        }
        if (bench.run().check()) operands_.prepare_reference(fp32);
        title_ = tut::fmt("\n%s/%s: %s  (N = %d, wall clock, median of %d runs)\n", bench.lesson().track,
                          bench.lesson().lesson, bench.lesson().title, n, bench.run().repeats);
    }

    // Runs the pipeline once on NaN-filled host C and compares C with the reference.
    template <class R>
    tut::Verdict check(const R& run) {
        std::fill(c_.begin(), c_.end(), std::numeric_limits<float>::quiet_NaN());
        run(operands_.n, operands_.A.data(), operands_.B.data(), c_.data(), nullptr);
        const tut::Comparison cmp = operands_.check(c_.data(), 0.0);
        if (cmp.ok()) return tut::passed(tut::fmt("ok (%.1e)", cmp.rel_l2_error));
        return tut::failed("N=" + std::to_string(operands_.n) + ": " + cmp.describe());
    }

    // Runs the pipeline once (what the bench times), keeping its stage times.
    template <class R>
    void run(const R& run) {
        samples_.emplace_back();
        run(operands_.n, operands_.A.data(), operands_.B.data(), c_.data(), &samples_.back());
    }

    // Prints the problem's title and returns the lesson's table.
    tut::Table table() const {
        std::fputs(title_.c_str(), stdout);
        return tut::Table({"pipeline", "alloc", "fill", "to GPU", "kernel", "to host", "read", "free", "wall ms",
                           "GFLOP/s", "vs first", "check"});
    }

    // The row and record of `v`'s last timing: the stage times of its median run (by total
    // wall time) and the total beside the cuBLAS kernel alone.
    template <class V>
    tut::Result result(const V& v, const tut::Timing& t, const tut::Verdict& verdict) {
        // The timed runs are the last t.repeats; the warm-up runs came before them.
        std::vector<PipelineTimes> timed(samples_.end() - std::min<size_t>(samples_.size(), t.repeats), samples_.end());
        samples_.clear();
        std::sort(timed.begin(), timed.end(),
                  [](const PipelineTimes& a, const PipelineTimes& b) { return a.total() < b.total(); });
        const PipelineTimes m = timed[timed.size() / 2];
        const double wall_ms = m.total();
        if (!std::isfinite(first_ms_)) first_ms_ = wall_ms;
        tut::Result out;
        tut::Record& r = out.record;
        r.variant = v.name;
        r.size = std::to_string(operands_.n);
        r.value = tut::sgemm::gflops(operands_.n, wall_ms);
        r.unit = "GFLOP/s";
        r.time_ms = wall_ms;
        r.library = "cublasSgemm FP32 (pedantic), kernel only";
        r.library_value = tut::sgemm::gflops(operands_.n, library_ms_);
        r.peak = "FP32 peak from clocks";
        r.peak_value = peak_gflops_;
        r.checked = verdict.passed();
        r.extra.add("progression", false);  // the whole pipeline's wall time, not a kernel's
        r.extra.add("timing", "host wall clock of the whole pipeline (allocate, fill, copy in, kernel, copy out, read, "
                              "free)")
            .add("allocate_ms", m.allocate)
            .add("fill_ms", m.fill)
            .add("to_gpu_ms", m.to_gpu)
            .add("kernel_ms", m.kernel)
            .add("to_host_ms", m.to_host)
            .add("read_ms", m.read)
            .add("free_ms", m.release)
            .add("check", verdict.cell);
        auto ms = [](double x) { return tut::fmt("%.2f", x); };
        out.row = {v.name, ms(m.allocate), ms(m.fill), ms(m.to_gpu), ms(m.kernel), ms(m.to_host), ms(m.read),
                   ms(m.release), ms(wall_ms), tut::fmt("%.0f", r.value), tut::fmt("%.2fx", first_ms_ / wall_ms),
                   verdict.cell};
        return out;
    }

    // The row of a pipeline this GPU or OS cannot run.
    std::vector<std::string> unsupported_row(const std::string& name) const {
        return {name, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "unsupported"};
    }

    // The cuBLAS kernel alone ("-" under --profile, which does not time it).
    std::vector<std::string> library_row() const {
        const bool timed = std::isfinite(library_ms_);
        return {"cuBLAS kernel alone", "-", "-", "-", timed ? tut::fmt("%.2f", library_ms_) : "-", "-", "-", "-", "-",
                timed ? tut::fmt("%.0f", tut::sgemm::gflops(operands_.n, library_ms_)) : "-", "-", "-"};
    }

  private:
    tut::sgemm::Operands operands_;
    std::vector<float> c_;
    double peak_gflops_ = NAN, library_ms_ = NAN, first_ms_ = NAN;
    std::vector<PipelineTimes> samples_;
    std::string title_;
};

// After the pipelines' table: host <-> device copy bandwidth of one matrix, pageable against
// pinned host memory, one record each. GiB/s = 2^30 bytes/s (the course slides' unit);
// GB/s = 10^9 bytes/s (PCIe's and the tour's).
void report_copy_bandwidth(tut::Bench& bench, int n) {
    const size_t count = size_t(n) * n;
    const size_t bytes = count * sizeof(float);
    tut::DeviceBuffer<float> device(count);
    HostMatrix pageable(Memory::pageable, count), pinned(Memory::pinned, count);
    std::fill(pageable.get(), pageable.get() + count, 1.0f);  // touch every page first: no first-touch faults timed
    std::fill(pinned.get(), pinned.get() + count, 1.0f);
    TUT_CUDA(cudaMemset(device.get(), 0, bytes));
    const tut::TimingOptions timing{bench.run().warmup, std::max(bench.run().repeats, 10), false};

    std::printf("\nCopy bandwidth, one matrix (%.1f MiB), cudaMemcpy, median of %d:\n", bytes / 1048576.0,
                timing.repeats);
    tut::Table table({"direction", "host memory", "time ms", "GiB/s", "GB/s", "% of pinned"});
    for (const bool to_host : {true, false}) {
        const std::string direction = to_host ? "device to host" : "host to device";
        double ms[2] = {0, 0};  // pageable, pinned
        for (const Memory memory : {Memory::pageable, Memory::pinned}) {
            const bool is_pinned = memory == Memory::pinned;
            float* host = is_pinned ? pinned.get() : pageable.get();
            tut::NvtxRange range("sgemm/02_unified_memory/copy " + direction + (is_pinned ? ", pinned" : ", pageable"));
            ms[is_pinned] = tut::time_gpu([&] {
                                if (to_host)
                                    TUT_CUDA(cudaMemcpy(host, device.get(), bytes, cudaMemcpyDeviceToHost));
                                else
                                    TUT_CUDA(cudaMemcpy(device.get(), host, bytes, cudaMemcpyHostToDevice));
                            },
                                            timing)
                                .median_ms;
        }
        for (const bool is_pinned : {false, true}) {
            const double t = ms[is_pinned];
            const double gbs = bytes / (t * 1e-3) / 1e9;
            const double gibs = bytes / (t * 1e-3) / 1073741824.0;
            table.add_row({direction, is_pinned ? "pinned" : "pageable", tut::fmt("%.3f", t), tut::fmt("%.2f", gibs),
                           tut::fmt("%.2f", gbs), tut::percent(ms[1] / t)});
            tut::Result result;
            tut::Record& r = result.record;
            r.variant = "cudaMemcpy " + direction + (is_pinned ? ", pinned" : ", pageable");
            r.size = std::to_string(n);
            r.value = gbs;
            r.unit = "GB/s";
            r.time_ms = t;
            r.library = "cudaMemcpy " + direction + ", pinned";
            r.library_value = bytes / (ms[1] * 1e-3) / 1e9;
            r.peak = "none (the CUDA runtime does not report the PCIe link)";
            r.extra.add("bytes", static_cast<long long>(bytes)).add("gib_per_s", gibs);
            bench.record(result);
        }
    }
    table.print();
}

}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "02_unified_memory",
                                 "unified memory vs explicit copies, whole-job wall time"};
    const std::vector<lesson::Pipeline> variants = lesson::variants();
    tut::sgemm::Options options(lesson, 4096, {}, PipelineProblem::kSummary);
    options.run.warmup = 1;  // a pipeline takes tenths of a second: one untimed run loads the module, warms the driver
    options.run.repeats = 5;
    options.parse(argc, argv, tut::names_of(variants));
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        PipelineProblem problem(bench, options.n);  // A and B on the host, the reference, cuBLAS alone
        tut::Table table = problem.table();
        for (const lesson::Pipeline& v : variants) {
            if (!bench.runs(v)) continue;
            try {
                const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(v.run); });
                const tut::Timing timing = bench.time_host(v.name, [&] { problem.run(v.run); });  // the whole job
                table.add_row(bench.record(problem.result(v, timing, verdict)));
            } catch (const tut::Unsupported& e) {  // e.g. a GPU or OS that cannot prefetch managed memory
                std::fprintf(stderr, "%s [%s]: unsupported: %s\n", lesson.lesson, v.name.c_str(), e.what());
                table.add_row(problem.unsupported_row(v.name));  // and on with the others
            }
        }
        table.add_row(problem.library_row());
        table.print();
        std::printf("Stages in ms, each ended by cudaDeviceSynchronize; 'vs first' = first pipeline's wall time / "
                    "this one's.\n");
        report_copy_bandwidth(bench, options.n);
        return bench.exit_code();
    });
}
