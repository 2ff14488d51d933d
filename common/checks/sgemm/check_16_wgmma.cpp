// Checks for sgemm/16_wgmma: TMA + wgmma with an mbarrier pipeline, TF32; any N in 1..8192.
// The kernel is sm_90a code, which runs on compute capability 9.0 only (H100, H200). On any
// other GPU this program checks nothing: its main() (common/checks/catch_main.cpp, built with
// TUT_CHECK_NEEDS_CC=90 by tut_lesson(... HOPPER_FEATURES)) exits 77, skipped, and says why.
#include "sgemm_checks.hpp"

#if !defined(TUT_CHECK_NEEDS_CC) || TUT_CHECK_NEEDS_CC != 90
#error "check_16_wgmma.cpp must be built with TUT_CHECK_NEEDS_CC=90 (tut_lesson(... HOPPER_FEATURES))"
#endif

using namespace sgemm_checks;

namespace {

constexpr const char* kVariant = "wgmma 128x256x32 4 stages";
const std::vector<std::string> kVariants{kVariant};

}  // namespace

TEST_CASE("sgemm/16_wgmma: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes, kTf32Roundoff);
    // N % 4 != 0: A through the padded copy; overhanging boxes
    check_correct(kVariants, {4, 7, 127, 129, 255}, kTf32Roundoff);
}

TEST_CASE("sgemm/16_wgmma: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000}, kTf32Roundoff);
    check_correct(kVariants, kTourSizes, kTf32Roundoff);
    check_correct({kVariant}, {kLargestSize}, kTf32Roundoff);
}

TEST_CASE("sgemm/16_wgmma: has at most twice the error of cuBLAS TF32", "[exercise]") {
    check_tf32_accuracy(kVariant);
}

TEST_CASE("sgemm/16_wgmma: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}
