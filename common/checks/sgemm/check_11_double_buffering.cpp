// Checks for sgemm/11_double_buffering: two shared-memory buffers, 128 x 128 tile; any N in 1..8192.
#include "sgemm_checks.hpp"
#include "perf_gate.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"2 buffers"};

}  // namespace

TEST_CASE("sgemm/11_double_buffering: matches the CPU reference at tiny sizes and sizes that are not multiples "
          "of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    check_correct(kVariants, {4, 7, 127, 129, 255});  // N % 4 != 0: rows not 16-byte aligned; overhanging block tiles
}

TEST_CASE("sgemm/11_double_buffering: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000});
    check_correct(kVariants, kTourSizes);
    check_correct({"2 buffers"}, {kLargestSize});
}

TEST_CASE("sgemm/11_double_buffering: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}

// Speed, the lesson's idea: '2 buffers' timed beside cuBLAS FP32 in the same process;
// its share is judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "sgemm/11_double_buffering: speed: its share of cuBLAS FP32 at N = 4096, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant v = variant_named("2 buffers");
    const int n = 4096;
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> C(size_t(n) * n);
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cuBLAS FP32";
    c.size = "N = 4096";
    c.work_name = "'2 buffers'";
    c.yardstick_name = "cuBLAS";
    c.previous_from = "sgemm/10_warp_tiling";
    c.hint = "Are the next tile's loads in flight during the FFMAs, and the next step's fragments loaded before "
             "this step's FFMAs, with one barrier per tile?";
    const auto work = [&] { v.run(n, p.dA(), p.dB(), C.get()); };
    const auto yardstick = [&] { cublas().sgemm(n, p.dA(), p.dB(), C.get()); };
    perf_gate::time_and_judge(c, work, yardstick);
}
