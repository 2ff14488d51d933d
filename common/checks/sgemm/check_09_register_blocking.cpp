// Checks for sgemm/09_register_blocking: a 4 x 4 or 8 x 8 tile of C per thread; any N in 1..8192.
#include "sgemm_checks.hpp"
#include "perf_gate.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"thread 4x4", "thread 8x8"};

}  // namespace

TEST_CASE("sgemm/09_register_blocking: matches the CPU reference at tiny sizes and sizes that are not "
          "multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    // N % 4 != 0: rows not 16-byte aligned; blocks of 64 and 128 overhang
    check_correct(kVariants, {4, 7, 63, 65, 127, 129});
}

TEST_CASE("sgemm/09_register_blocking: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000});
    check_correct(kVariants, kTourSizes);
    check_correct({"thread 8x8"}, {kLargestSize});
}

TEST_CASE("sgemm/09_register_blocking: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}

// Speed, the lesson's idea: 'thread 8x8' timed beside cuBLAS FP32 in the same process;
// its share is judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "sgemm/09_register_blocking: speed: its share of cuBLAS FP32 at N = 4096, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant v = variant_named("thread 8x8");
    const int n = 4096;
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> C(size_t(n) * n);
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cuBLAS FP32";
    c.size = "N = 4096";
    c.work_name = "'thread 8x8'";
    c.yardstick_name = "cuBLAS";
    c.previous_from = "sgemm/07_volkov_ilp";
    c.hint = "Does each thread load a column of TM values of A and a row of TN values of B into registers once per "
             "k and form their outer product from registers?";
    const auto work = [&] { v.run(n, p.dA(), p.dB(), C.get()); };
    const auto yardstick = [&] { cublas().sgemm(n, p.dA(), p.dB(), C.get()); };
    perf_gate::time_and_judge(c, work, yardstick);
}
