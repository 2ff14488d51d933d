// SGEMM lesson 02: unified memory against explicit copies, timed by the wall clock of the whole job.
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
//   "managed prefetch"    the same, with prefetch_to_gpu() / prefetch_to_host() moving pages in bulk
// After the table: cudaMemcpy bandwidth of one matrix from pageable and from pinned memory.
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

#include <algorithm>
#include <memory>

namespace lesson {

// Migrates the pages of managed memory [p, p + bytes) to this GPU, in bulk, on the default
// stream: large DMA transfers instead of one GPU page fault (and a small migration) per page
// the kernel touches first. Pages never touched are created directly on the GPU.
void prefetch_to_gpu(const void* p, size_t bytes) {
    // TODO(exercise) part 1 of 2: move the pages of [p, p + bytes) to the GPU this program
    //   runs on, in bulk, before the kernel touches them.
    //   - Without this, a page moves only when a warp first touches it: the warp stalls on
    //     a GPU page fault while the driver migrates a few pages. The runtime can instead
    //     move a whole range ahead of time with large DMA transfers; the README names the
    //     call, and its declaration in cuda_runtime_api.h documents every argument.
    //   - In CUDA 13 the destination is a cudaMemLocation, not a device number: which
    //     location type means a GPU, and which GPU is the current one?
    //   - The kernel is launched on the default stream right after this returns: the move
    //     must be ordered before it, without blocking the host.
    //   - Check every CUDA call with TUT_CUDA, as the rest of this file does.
    //   Until this is done the "managed prefetch" pipeline behaves like "managed".
    (void)p;  // unused until the TODO is done
    (void)bytes;
}

// Migrates them back to host memory in bulk, so the host's reads do not fault page by page.
void prefetch_to_host(const void* p, size_t bytes) {
    // TODO(exercise) part 2 of 2: the same bulk move in the other direction, after the
    //   kernel, so that the host's reads of C do not fault page by page. Which location type
    //   is host memory, and does it need an id?
    (void)p;  // unused until the TODO is done
    (void)bytes;
}

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

using tut::sgemm::PipelineTimes;
using tut::sgemm::StageClock;

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

    if (kPrefetch) {
        lesson::prefetch_to_gpu(A.get(), bytes);
        lesson::prefetch_to_gpu(B.get(), bytes);
        lesson::prefetch_to_gpu(C.get(), bytes);  // C: created on the GPU before the kernel writes it
    }
    stage.to_gpu = clock.lap();

    launch_naive(n, A.get(), B.get(), C.get());
    stage.kernel = clock.lap();

    if (kPrefetch) lesson::prefetch_to_host(C.get(), bytes);
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

namespace lesson {

// Host <-> device copy bandwidth of one matrix, pageable against pinned host memory.
// GiB/s = 2^30 bytes/s (the course slides' unit); GB/s = 10^9 bytes/s (PCIe's and the tour's).
int report_copy_bandwidth(const tut::RunOptions& run, int n) {
    const size_t count = size_t(n) * n;
    const size_t bytes = count * sizeof(float);
    tut::DeviceBuffer<float> device(count);
    HostMatrix pageable(Memory::pageable, count), pinned(Memory::pinned, count);
    std::fill(pageable.get(), pageable.get() + count, 1.0f);  // touch every page first: no first-touch faults timed
    std::fill(pinned.get(), pinned.get() + count, 1.0f);
    TUT_CUDA(cudaMemset(device.get(), 0, bytes));
    const tut::TimingOptions timing{run.warmup, std::max(run.repeats, 10), false};

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
            tut::Record r;
            r.track = "sgemm";
            r.lesson = "02_unified_memory";
            r.variant = "cudaMemcpy " + direction + (is_pinned ? ", pinned" : ", pageable");
            r.size = std::to_string(n);
            r.value = gbs;
            r.unit = "GB/s";
            r.time_ms = t;
            r.library = "cudaMemcpy " + direction + ", pinned";
            r.library_value = bytes / (ms[1] * 1e-3) / 1e9;
            r.peak = "none (the CUDA runtime does not report the PCIe link)";
            r.extra.add("bytes", static_cast<long long>(bytes)).add("gib_per_s", gibs);
            tut::append_record("02_unified_memory", run.json, r);
        }
    }
    table.print();
    return 0;
}

std::vector<tut::sgemm::HostVariant> sgemm_host_variants() {
    using tut::sgemm::host_variant;
    return {host_variant("explicit pageable", run_explicit<Memory::pageable>),
            host_variant("explicit pinned", run_explicit<Memory::pinned>),
            host_variant("managed", run_managed<false>),
            host_variant("managed prefetch", run_managed<true>)};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo info{"sgemm", "02_unified_memory", "unified memory vs explicit copies, whole-job wall time"};
    tut::sgemm::MainOptions options;
    options.after = lesson::report_copy_bandwidth;  // after the pipelines: the copy bandwidth, pageable and pinned
    return tut::sgemm::host_lesson_main(argc, argv, info, lesson::sgemm_host_variants(), options);
}
