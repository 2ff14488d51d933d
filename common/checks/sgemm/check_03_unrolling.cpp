// Checks for sgemm/03_unrolling: the compile-time-N kernels exist for N = 256, 512, 1024,
// 2048, 4096, 8192 only and must refuse every other N; the runtime-n kernel takes any N.
#include "sgemm_checks.hpp"
#include "perf_gate.hpp"

#include <string>

namespace lesson {
// Defined in the lesson's unrolling.cu: the sizes compiled in.
std::vector<int> supported_sizes();
}  // namespace lesson

using namespace sgemm_checks;

namespace {

// N a template parameter, the k loop unrolled: the exercise.
const std::vector<std::string> kUnrolled{"unroll=1", "unroll=4", "unroll=16"};
// Lesson 01's kernel, N known at run time.
const std::vector<std::string> kRuntimeN{"runtime n"};

}  // namespace

TEST_CASE("sgemm/03_unrolling: compiles in exactly the sizes its README promises", "[baseline]") {
    REQUIRE(lesson::supported_sizes() == std::vector<int>{256, 512, 1024, 2048, 4096, 8192});
    REQUIRE(variants_named(kUnrolled).size() == 3);
    REQUIRE(variants_named(kRuntimeN).size() == 1);
}

TEST_CASE("sgemm/03_unrolling: compile-time kernels match the CPU reference at N = 256 and 512", "[exercise]") {
    check_correct(kUnrolled, {256, 512});
}

// Every kernel compiled in up to 4096 (one matrix of 4096^2 floats, 64 MB, exceeds the L2),
// and the N = 8192 kernel of the fastest variant.
TEST_CASE("sgemm/03_unrolling: compile-time kernels match cuBLAS at N = 1024, 2048, 4096 and 8192", "[exercise]") {
    check_correct(kUnrolled, {1024, 2048, 4096});
    check_correct({"unroll=16"}, {kLargestSize});
}

TEST_CASE("sgemm/03_unrolling: compile-time kernels refuse every size not compiled in, naming the sizes",
          "[baseline]") {
    const std::vector<int> sizes{1000, 100, 0, -1, 255, 257, tut::sgemm::kMaxN + 1};
    check_refuses(kUnrolled, sizes);
    for (const Variant& v : variants_named(kUnrolled))
        for (int n : sizes) {
            try {
                v.run(n, nullptr, nullptr, nullptr);
            } catch (const tut::Unsupported& e) {
                INFO("variant '" << v.name << "': the message should list the supported sizes: " << e.what());
                CHECK(std::string(e.what()).find("4096") != std::string::npos);
            }
        }
}

TEST_CASE("sgemm/03_unrolling: the runtime-n kernel (lesson 01's) still takes any N", "[baseline]") {
    check_correct(kRuntimeN, {1, 17, 100, 257, 1000});
    check_refuses(kRuntimeN, kRefusedSizes);
}

// Speed, the lesson's idea: 'unroll=16' timed beside cuBLAS FP32 in the same process;
// its share is judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "sgemm/03_unrolling: speed: its share of cuBLAS FP32 at N = 4096, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant v = variant_named("unroll=16");
    const Variant previous = variant_named("runtime n");
    const int n = 4096;
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> C(size_t(n) * n);
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cuBLAS FP32";
    c.size = "N = 4096";
    c.work_name = "'unroll=16'";
    c.yardstick_name = "cuBLAS";
    c.hint = "Is N a template parameter in the kernel, so that the k loop unrolls and every stride is a constant?";
    const auto work = [&] { v.run(n, p.dA(), p.dB(), C.get()); };
    const auto yardstick = [&] { cublas().sgemm(n, p.dA(), p.dB(), C.get()); };
    perf_gate::time_and_judge(c, work, yardstick, [&] { previous.run(n, p.dA(), p.dB(), C.get()); });
}
