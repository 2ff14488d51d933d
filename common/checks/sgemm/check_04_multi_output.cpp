// Checks for sgemm/04_multi_output: any N in 1..8192, kMulti = 1, 2, 4, 8 outputs per thread,
// consecutive and strided. Sizes below include tails of every width (N not a multiple of
// 16 * kMulti), where the last block overhangs the matrix.
#include "sgemm_checks.hpp"
#include "perf_gate.hpp"

using namespace sgemm_checks;

namespace {

// More than one output per thread: the exercise.
const std::vector<std::string> kMulti{"multi=2 consecutive", "multi=4 consecutive", "multi=8 consecutive",
                                      "multi=2 strided",     "multi=4 strided",     "multi=8 strided"};
// One output per thread: lesson 01's mapping.
const std::vector<std::string> kSingle{"multi=1"};

}  // namespace

TEST_CASE("sgemm/04_multi_output: has multi = 2, 4, 8 both consecutive and strided", "[baseline]") {
    REQUIRE(variants_named(kMulti).size() == 6);
    REQUIRE(variants_named(kSingle).size() == 1);
}

TEST_CASE("sgemm/04_multi_output: multi > 1 matches the CPU reference at tiny and odd sizes", "[exercise]") {
    check_correct(kMulti, kSmallSizes);
}

// The widest blocks (8 consecutive outputs, 128 columns) at the largest size.
TEST_CASE("sgemm/04_multi_output: multi > 1 matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    check_correct(kMulti, kLargeSizes);
    check_correct({"multi=8 consecutive"}, {kLargestSize});
}

TEST_CASE("sgemm/04_multi_output: multi = 1 (lesson 01's mapping) is right at small and large sizes", "[baseline]") {
    check_correct(kSingle, {1, 17, 100, 257, 1000});
}

TEST_CASE("sgemm/04_multi_output: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kMulti, kRefusedSizes);
    check_refuses(kSingle, kRefusedSizes);
}

// Speed, the lesson's idea: 'multi=4 strided' timed beside cuBLAS FP32 in the same process;
// its share is judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "sgemm/04_multi_output: speed: its share of cuBLAS FP32 at N = 4096, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant v = variant_named("multi=4 strided");
    const Variant previous = variant_named("multi=1");
    const int n = 4096;
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> C(size_t(n) * n);
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cuBLAS FP32";
    c.size = "N = 4096";
    c.work_name = "'multi=4 strided'";
    c.yardstick_name = "cuBLAS";
    c.hint = "Does each thread load A's value once per k and use it for all of its outputs, held in registers, with "
             "a warp's loads of B still coalesced?";
    const auto work = [&] { v.run(n, p.dA(), p.dB(), C.get()); };
    const auto yardstick = [&] { cublas().sgemm(n, p.dA(), p.dB(), C.get()); };
    perf_gate::time_and_judge(c, work, yardstick, [&] { previous.run(n, p.dA(), p.dB(), C.get()); });
}
