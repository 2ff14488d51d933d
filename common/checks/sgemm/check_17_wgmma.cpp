// Checks for sgemm/17_wgmma: TMA + wgmma with an mbarrier pipeline, TF32; any N in 1..8192.
// The kernel is sm_90a code, which runs on compute capability 9.0 only (H100, H200). On any
// other GPU this program checks nothing: its main() (common/checks/catch_main.cpp, built with
// TUT_CHECK_NEEDS_CC=90 by tut_lesson(... HOPPER_FEATURES)) exits 77, skipped, and says why.
#include "sgemm_checks.hpp"
#include "perf_gate.hpp"

#if !defined(TUT_CHECK_NEEDS_CC) || TUT_CHECK_NEEDS_CC != 90
#error "check_17_wgmma.cpp must be built with TUT_CHECK_NEEDS_CC=90 (tut_lesson(... HOPPER_FEATURES))"
#endif

using namespace sgemm_checks;

namespace {

constexpr const char* kVariant = "wgmma 128x256x32 4 stages";
const std::vector<std::string> kVariants{kVariant};

}  // namespace

TEST_CASE("sgemm/17_wgmma: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes, kTf32Roundoff);
    // N % 4 != 0: A through the padded copy; overhanging boxes
    check_correct(kVariants, {4, 7, 127, 129, 255}, kTf32Roundoff);
}

TEST_CASE("sgemm/17_wgmma: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000}, kTf32Roundoff);
    check_correct(kVariants, kTourSizes, kTf32Roundoff);
    check_correct({kVariant}, {kLargestSize}, kTf32Roundoff);
}

TEST_CASE("sgemm/17_wgmma: has at most twice the error of cuBLAS TF32", "[exercise]") {
    check_tf32_accuracy(kVariant);
}

TEST_CASE("sgemm/17_wgmma: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}

// Speed, the lesson's idea: 'wgmma 128x256x32 4 stages' timed beside cuBLAS TF32 in the same process;
// its share is judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "sgemm/17_wgmma: speed: its share of cuBLAS TF32 at N = 4096, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant v = variant_named("wgmma 128x256x32 4 stages");
    const int n = 4096;
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> C(size_t(n) * n);
    static tut::sgemm::Cublas tf32(CUBLAS_TF32_TENSOR_OP_MATH);
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cuBLAS TF32";
    c.size = "N = 4096";
    c.work_name = "'wgmma 128x256x32 4 stages'";
    c.yardstick_name = "cuBLAS TF32";
    c.previous_from = "sgemm/16_mma_sync";
    c.hint = "Does the producer keep the TMA loads of the next stages in flight while the consumers' wgmma run, "
             "each stage released as soon as it is consumed?";
    const auto work = [&] { v.run(n, p.dA(), p.dB(), C.get()); };
    const auto yardstick = [&] { tf32.sgemm(n, p.dA(), p.dB(), C.get()); };
    perf_gate::time_and_judge(c, work, yardstick);
}
