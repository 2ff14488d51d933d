// Checks for sgemm/02_unified_memory: four host-to-host pipelines, any N in 1..8192.
// The exercise is the prefetch of managed memory (lesson::prefetch_to_gpu/_to_host).
// The largest size is checked once, with the prefetching pipeline; the others stop at 4099.
#include "sgemm_checks.hpp"

#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace lesson {
// Defined in the lesson's unified_memory.cu (the exercise).
void prefetch_to_gpu(const void* p, size_t bytes);
void prefetch_to_host(const void* p, size_t bytes);
}  // namespace lesson

using namespace sgemm_checks;
using tut::sgemm::HostVariant;

namespace {

const char* const kPrefetchPipeline = "managed prefetch";

std::vector<HostVariant> pipelines(bool with_prefetch) {
    std::vector<HostVariant> out;
    for (const HostVariant& v : lesson::sgemm_host_variants())
        if ((v.name == kPrefetchPipeline) == with_prefetch) out.push_back(v);
    return out;
}

// Runs a pipeline on host matrices; the host output starts as NaN so unwritten elements fail.
void check_pipeline(const HostVariant& v, int n) {
    tut::sgemm::Problem& p = host_problem(n);
    std::vector<float> c(size_t(n) * n, std::numeric_limits<float>::quiet_NaN());
    INFO("pipeline '" << v.name << "', N = " << n << ", reference: "
                      << (p.reference_is_fp32 ? "cuBLAS FP32" : "CPU double"));
    INFO(tut_checks::exercise_hint());
    REQUIRE_NOTHROW(v.run(n, p.A.data(), p.B.data(), c.data(), nullptr));
    const tut::Comparison cmp = tut::compare(c.data(), p.C_ref.data(), c.size(),
                                             tut::sgemm::tolerance(n, tut::sgemm::Variant{}, p.reference_is_fp32),
                                             p.scale.data());
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

    // Where the driver says the whole range was last prefetched to (type, id).
    std::pair<cudaMemLocationType, int> last_prefetch() const {
        cudaMemLocationType type = cudaMemLocationTypeInvalid;
        int id = -1;
        TUT_CUDA(cudaMemRangeGetAttribute(&type, sizeof(type), cudaMemRangeAttributeLastPrefetchLocationType, p, kBytes));
        TUT_CUDA(cudaMemRangeGetAttribute(&id, sizeof(id), cudaMemRangeAttributeLastPrefetchLocationId, p, kBytes));
        return {type, id};
    }
};

void require_managed_prefetch_supported() {
    INFO("this GPU/OS cannot prefetch managed memory (cudaDevAttrConcurrentManagedAccess = 0): run on Linux, Pascal or newer");
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

}  // namespace

TEST_CASE("sgemm/02_unified_memory: prefetch_to_gpu moves managed pages to this GPU", "[exercise]") {
    require_prefetch_to_gpu_works();
}

TEST_CASE("sgemm/02_unified_memory: prefetch_to_host moves managed pages back to the host", "[exercise]") {
    require_prefetch_to_host_works();
}

TEST_CASE("sgemm/02_unified_memory: the managed prefetch pipeline prefetches and is right up to N = 8192",
          "[exercise]") {
    require_prefetch_to_gpu_works();
    require_prefetch_to_host_works();
    const auto prefetching = pipelines(true);
    REQUIRE(prefetching.size() == 1);
    for (int n : kSmallSizes) check_pipeline(prefetching[0], n);
    for (int n : kLargeSizes) check_pipeline(prefetching[0], n);
    check_pipeline(prefetching[0], kLargestSize);
}

TEST_CASE("sgemm/02_unified_memory: explicit and managed pipelines match the CPU reference at tiny and odd sizes",
          "[baseline]") {
    const auto others = pipelines(false);
    REQUIRE(others.size() == 3);
    for (const HostVariant& v : others)
        for (int n : kSmallSizes) check_pipeline(v, n);
}

// The largest size once, with the prefetching pipeline (above); the others at sizes in and beyond L2.
TEST_CASE("sgemm/02_unified_memory: explicit and managed pipelines match cuBLAS at N = 1000 and 4099", "[baseline]") {
    for (const HostVariant& v : pipelines(false))
        for (int n : kLargeSizes) check_pipeline(v, n);
}

TEST_CASE("sgemm/02_unified_memory: every pipeline refuses N outside 1..8192 before allocating", "[baseline]") {
    for (const HostVariant& v : lesson::sgemm_host_variants())
        for (int n : {0, -1, tut::sgemm::kMaxN + 1}) {
            INFO("pipeline '" << v.name << "' must refuse N = " << n << " with tut::Unsupported");
            REQUIRE_THROWS_AS(v.run(n, nullptr, nullptr, nullptr, nullptr), tut::Unsupported);
        }
}
