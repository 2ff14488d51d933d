// Checks for sgemm/06_granularity: 16 x 16G blocks of C for G = 1, 2, 4; any N in 1..8192.
#include "sgemm_checks.hpp"
#include "perf_gate.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"g=1", "g=2", "g=4"};

}  // namespace

TEST_CASE("sgemm/06_granularity: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    // blocks of 16 rows by 16, 32 or 64 columns: sizes that end inside the last B tile of a block:
    check_correct(kVariants, {47, 48, 49, 63, 65, 80, 127});
}

TEST_CASE("sgemm/06_granularity: matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    check_correct(kVariants, kLargeSizes);
    check_correct({"g=4"}, {kLargestSize});
}

TEST_CASE("sgemm/06_granularity: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}

// Speed, the lesson's idea: 'g=4' timed beside cuBLAS FP32 in the same process;
// its share is judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "sgemm/06_granularity: speed: its share of cuBLAS FP32 at N = 4096, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant v = variant_named("g=4");
    const Variant previous = variant_named("g=1");
    const int n = 4096;
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> C(size_t(n) * n);
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cuBLAS FP32";
    c.size = "N = 4096";
    c.work_name = "'g=4'";
    c.yardstick_name = "cuBLAS";
    c.hint = "Does each value a thread reads from the A tile in shared memory serve all G of its outputs?";
    const auto work = [&] { v.run(n, p.dA(), p.dB(), C.get()); };
    const auto yardstick = [&] { cublas().sgemm(n, p.dA(), p.dB(), C.get()); };
    perf_gate::time_and_judge(c, work, yardstick, [&] { previous.run(n, p.dA(), p.dB(), C.get()); });
}
