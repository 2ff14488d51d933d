// Checks for sgemm/02_unified_memory: four host-to-host pipelines, any N in 1..8192.
// The exercise is the prefetch of managed memory: the mechanism (lesson::prefetch_to_gpu/_to_host)
// and the pipeline's decisions, which matrix moves where (lesson::prefetch_before/after_kernel).
// The largest size is checked once, with the prefetching pipeline; the others stop at 4099.
#include "sgemm_check_inputs.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

namespace lesson {
// Defined in the lesson's unified_memory.cu: its pipelines, and the exercise.
struct PipelineTimes;
using Pipeline = tut::Variant<void(int n, const float* A, const float* B, float* C, PipelineTimes* times)>;
std::vector<Pipeline> variants();
void prefetch_to_gpu(const void* p, size_t bytes);
void prefetch_to_host(const void* p, size_t bytes);
void prefetch_before_kernel(const float* A, const float* B, const float* C, size_t bytes);
void prefetch_after_kernel(const float* A, const float* B, const float* C, size_t bytes);
}  // namespace lesson

using namespace sgemm_checks;
using lesson::Pipeline;

namespace {

const std::vector<std::string> kPrefetching{"managed prefetch"};
const std::vector<std::string> kOthers{"explicit pageable", "explicit pinned", "managed"};

std::vector<Pipeline> pipelines(const std::vector<std::string>& names) { return named(lesson::variants(), names); }

// Empty when both guard zones of `whole` (the `guard` elements before and after the `count`
// of the output) still hold the 0xFF poison; otherwise where the first changed element is,
// as tut_checks::GuardedBuffer::damage() says it for device outputs.
std::string host_damage(const std::vector<float>& whole, size_t guard, size_t count) {
    auto poisoned = [&](size_t i) {
        uint32_t bits = 0;
        std::memcpy(&bits, &whole[i], sizeof bits);
        return bits == 0xFFFFFFFFu;
    };
    for (size_t i = 0; i < guard; ++i)
        if (!poisoned(i))
            return "a write before the start of the output: offset " + std::to_string(static_cast<long long>(i) -
                                                                                      static_cast<long long>(guard));
    for (size_t i = guard + count; i < whole.size(); ++i)
        if (!poisoned(i))
            return "a write past the end of the output: offset " + std::to_string(i - guard) + " (the output has " +
                   std::to_string(count) + " elements)";
    return {};
}

// Runs a pipeline on host matrices. The host C sits between guard zones, all of it NaN
// (0xFF bytes) at first, so unwritten elements fail and so does a write outside C.
void check_pipeline(const Pipeline& v, int n) {
    tut::sgemm::Operands& p = host_operands(n);
    const size_t count = size_t(n) * n, guard = guard_elements(n);
    std::vector<float> whole(count + 2 * guard);
    std::memset(whole.data(), 0xFF, whole.size() * sizeof(float));
    float* C = whole.data() + guard;
    INFO("pipeline '" << v.name << "', N = " << n << ", reference: "
                      << (p.reference_is_fp32 ? "cuBLAS FP32" : "CPU double"));
    INFO(tut_checks::exercise_hint());
    REQUIRE_NOTHROW(v.run(n, p.A.data(), p.B.data(), C, nullptr));
    const std::string damage = host_damage(whole, guard, count);
    INFO(damage);
    REQUIRE(damage.empty());
    const tut::Comparison cmp = p.check(C, 0.0);
    INFO(cmp.describe());
    REQUIRE(cmp.ok());
}

// A managed allocation, written by the host so its pages start in host memory.
struct ManagedProbe {
    static constexpr size_t kBytes = size_t(8) << 20;
    void* p = nullptr;
    ManagedProbe() {
        TUT_CUDA(cudaMallocManaged(&p, kBytes, cudaMemAttachGlobal));
        std::memset(p, 1, kBytes);
    }
    ~ManagedProbe() { cudaFree(p); }
    ManagedProbe(const ManagedProbe&) = delete;
    ManagedProbe& operator=(const ManagedProbe&) = delete;

    const float* floats() const { return static_cast<const float*>(p); }

    // Where the driver says the whole range was last prefetched to (type, id).
    std::pair<cudaMemLocationType, int> last_prefetch() const {
        cudaMemLocationType type = cudaMemLocationTypeInvalid;
        int id = -1;
        TUT_CUDA(cudaMemRangeGetAttribute(&type, sizeof(type), cudaMemRangeAttributeLastPrefetchLocationType, p,
                                          kBytes));
        TUT_CUDA(cudaMemRangeGetAttribute(&id, sizeof(id), cudaMemRangeAttributeLastPrefetchLocationId, p, kBytes));
        return {type, id};
    }
};

void require_managed_prefetch_supported() {
    INFO("this GPU/OS cannot prefetch managed memory (cudaDevAttrConcurrentManagedAccess = 0): run on Linux, "
         "Pascal or newer");
    REQUIRE(tut::device_has(cudaDevAttrConcurrentManagedAccess));
}

void require_prefetch_to_gpu_works() {
    require_managed_prefetch_supported();
    int device = 0;
    TUT_CUDA(cudaGetDevice(&device));
    ManagedProbe probe;
    INFO("after lesson::prefetch_to_gpu(p, bytes), the driver must report the whole range as last prefetched "
         "to GPU " << device << " (cudaMemRangeAttributeLastPrefetchLocationType and ...LocationId)");
    INFO(tut_checks::exercise_hint());
    REQUIRE_NOTHROW(lesson::prefetch_to_gpu(probe.p, ManagedProbe::kBytes));
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    const auto [type, id] = probe.last_prefetch();
    CAPTURE(static_cast<int>(type), id);
    REQUIRE(type == cudaMemLocationTypeDevice);
    REQUIRE(id == device);
}

void require_prefetch_to_host_works() {
    require_managed_prefetch_supported();
    int device = 0;
    TUT_CUDA(cudaGetDevice(&device));
    ManagedProbe probe;
    // Pages on the GPU first (by the driver's own call, so this checks prefetch_to_host alone).
    cudaMemLocation gpu{};
    gpu.type = cudaMemLocationTypeDevice;
    gpu.id = device;
    TUT_CUDA(cudaMemPrefetchAsync(probe.p, ManagedProbe::kBytes, gpu, 0, nullptr));
    TUT_CUDA(cudaDeviceSynchronize());
    INFO("after lesson::prefetch_to_host(p, bytes), the driver must report the whole range as last prefetched "
         "to the host (cudaMemRangeAttributeLastPrefetchLocationType)");
    INFO(tut_checks::exercise_hint());
    REQUIRE_NOTHROW(lesson::prefetch_to_host(probe.p, ManagedProbe::kBytes));
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    const auto [type, id] = probe.last_prefetch();
    CAPTURE(static_cast<int>(type), id);
    REQUIRE(type == cudaMemLocationTypeHost);
}

// The pipeline's decisions: before the kernel A, B and C go to this GPU (A and B were written
// by the host, C is created where the kernel writes it); after it only C comes back, the one
// matrix the host reads. The driver reports each range's last requested prefetch location.
void require_pipeline_moves() {
    require_managed_prefetch_supported();
    int device = 0;
    TUT_CUDA(cudaGetDevice(&device));
    ManagedProbe A, B, C;
    const char* names[] = {"A", "B", "C"};
    const ManagedProbe* probes[] = {&A, &B, &C};
    INFO(tut_checks::exercise_hint());
    REQUIRE_NOTHROW(lesson::prefetch_before_kernel(A.floats(), B.floats(), C.floats(), ManagedProbe::kBytes));
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    for (int m = 0; m < 3; ++m) {
        const auto [type, id] = probes[m]->last_prefetch();
        INFO("after lesson::prefetch_before_kernel(A, B, C, bytes), the driver must report all of " << names[m]
             << " as last prefetched to GPU " << device << ": the kernel reads A and B and writes C, and every "
             << "page left behind costs the kernel a page fault");
        CAPTURE(static_cast<int>(type), id);
        REQUIRE(type == cudaMemLocationTypeDevice);
        REQUIRE(id == device);
    }
    REQUIRE_NOTHROW(lesson::prefetch_after_kernel(A.floats(), B.floats(), C.floats(), ManagedProbe::kBytes));
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    {
        const auto [type, id] = C.last_prefetch();
        INFO("after lesson::prefetch_after_kernel(A, B, C, bytes), the driver must report all of C as last "
             "prefetched to the host: the host reads it next");
        CAPTURE(static_cast<int>(type), id);
        REQUIRE(type == cudaMemLocationTypeHost);
    }
    for (int m = 0; m < 2; ++m) {
        const auto [type, id] = probes[m]->last_prefetch();
        INFO("after lesson::prefetch_after_kernel(A, B, C, bytes), " << names[m] << " must still be last prefetched "
             << "to GPU " << device << ": the host frees it without reading it, so moving it back costs PCIe time "
             << "for nothing");
        CAPTURE(static_cast<int>(type), id);
        REQUIRE(type == cudaMemLocationTypeDevice);
    }
}

}  // namespace

TEST_CASE("sgemm/02_unified_memory: prefetch_to_gpu moves managed pages to this GPU", "[exercise]") {
    require_prefetch_to_gpu_works();
}

TEST_CASE("sgemm/02_unified_memory: prefetch_to_host moves managed pages back to the host", "[exercise]") {
    require_prefetch_to_host_works();
}

TEST_CASE("sgemm/02_unified_memory: the pipeline moves A, B and C to the GPU before the kernel and only C back "
          "after it",
          "[exercise]") {
    require_pipeline_moves();
}

TEST_CASE("sgemm/02_unified_memory: the managed prefetch pipeline prefetches and is right up to N = 8192",
          "[exercise]") {
    require_prefetch_to_gpu_works();
    require_prefetch_to_host_works();
    require_pipeline_moves();
    const Pipeline prefetching = pipelines(kPrefetching).front();
    for (int n : kSmallSizes) check_pipeline(prefetching, n);
    for (int n : kLargeSizes) check_pipeline(prefetching, n);
    check_pipeline(prefetching, kLargestSize);
}

TEST_CASE("sgemm/02_unified_memory: explicit and managed pipelines match the CPU reference at tiny and odd sizes",
          "[baseline]") {
    for (const Pipeline& v : pipelines(kOthers))
        for (int n : kSmallSizes) check_pipeline(v, n);
}

// The largest size once, with the prefetching pipeline (above); the others at sizes in and beyond L2.
TEST_CASE("sgemm/02_unified_memory: explicit and managed pipelines match cuBLAS at N = 1000 and 4099", "[baseline]") {
    for (const Pipeline& v : pipelines(kOthers))
        for (int n : kLargeSizes) check_pipeline(v, n);
}

TEST_CASE("sgemm/02_unified_memory: every pipeline refuses N outside 1..8192 before allocating", "[baseline]") {
    for (const std::vector<std::string>& names : {kPrefetching, kOthers})
        for (const Pipeline& v : pipelines(names))
            for (int n : kRefusedSizes) {
                INFO("pipeline '" << v.name << "' must refuse N = " << n << " with tut::Unsupported");
                REQUIRE_THROWS_AS(v.run(n, nullptr, nullptr, nullptr, nullptr), tut::Unsupported);
            }
}
