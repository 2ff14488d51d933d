// Checks for sgemm/07_volkov_ilp: 32 x 32 tiles, grain = 1..16 outputs per thread; any N in 1..8192.
#include "sgemm_checks.hpp"
#include "perf_gate.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"grain=1", "grain=2", "grain=4", "grain=8", "grain=16"};

}  // namespace

TEST_CASE("sgemm/07_volkov_ilp: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    // the float4 reads of A cross k = 4q; 32-row blocks end early:
    check_correct(kVariants, {4, 8, 63, 65, 95, 96, 97});
}

TEST_CASE("sgemm/07_volkov_ilp: matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    check_correct(kVariants, kLargeSizes);
    check_correct({"grain=16"}, {kLargestSize});
}

TEST_CASE("sgemm/07_volkov_ilp: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}

// Speed, the lesson's idea: 'grain=16' timed beside cuBLAS FP32 in the same process;
// its share is judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "sgemm/07_volkov_ilp: speed: its share of cuBLAS FP32 at N = 4096, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant v = variant_named("grain=16");
    const Variant previous = variant_named("grain=1");
    const int n = 4096;
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> C(size_t(n) * n);
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cuBLAS FP32";
    c.size = "N = 4096";
    c.work_name = "'grain=16'";
    c.yardstick_name = "cuBLAS";
    c.hint = "Does each thread keep `grain` independent accumulators, so that the FFMAs of a k step do not wait for "
             "each other, and read each B value from shared memory once for all of them?";
    const auto work = [&] { v.run(n, p.dA(), p.dB(), C.get()); };
    const auto yardstick = [&] { cublas().sgemm(n, p.dA(), p.dB(), C.get()); };
    perf_gate::time_and_judge(c, work, yardstick, [&] { previous.run(n, p.dA(), p.dB(), C.get()); });
}
