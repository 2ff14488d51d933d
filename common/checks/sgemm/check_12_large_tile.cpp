// Checks for sgemm/12_large_tile: the 128 x 256 block tile, 8 x 16 outputs per thread; any N in 1..8192.
#include "sgemm_checks.hpp"
#include "perf_gate.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"tile=128x256"};

}  // namespace

TEST_CASE("sgemm/12_large_tile: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    // N % 4 != 0: rows not 16-byte aligned; 255, 383: a block column short of 256 columns, one past it
    check_correct(kVariants, {4, 7, 127, 129, 255, 383});
}

TEST_CASE("sgemm/12_large_tile: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000});
    check_correct(kVariants, kTourSizes);
    check_correct(kVariants, {kLargestSize});
}

TEST_CASE("sgemm/12_large_tile: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}

// Speed, the lesson's idea: 'tile=128x256' timed beside cuBLAS FP32 in the same process; its share
// is judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/). The previous
// approach is lesson 11's 128 x 128 tile, whose gate measures the same share at the same size.
namespace {
constexpr const char* kSpeedCase =
    "sgemm/12_large_tile: speed: its share of cuBLAS FP32 at N = 4096, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant v = variant_named("tile=128x256");
    const int n = 4096;
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> C(size_t(n) * n);
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cuBLAS FP32";
    c.size = "N = 4096";
    c.work_name = "'tile=128x256'";
    c.yardstick_name = "cuBLAS";
    c.previous_from = "sgemm/11_double_buffering";
    c.hint = "Does each warp's LDS.128 read neighbouring float4s, and does every thread keep its 128 accumulators in "
             "registers (one block per SM in __launch_bounds__, no local-memory spills in nvcc -Xptxas -v)?";
    const auto work = [&] { v.run(n, p.dA(), p.dB(), C.get()); };
    const auto yardstick = [&] { cublas().sgemm(n, p.dA(), p.dB(), C.get()); };
    perf_gate::time_and_judge(c, work, yardstick);
}
