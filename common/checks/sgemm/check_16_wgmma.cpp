// Checks for sgemm/16_wgmma: TMA + wgmma with an mbarrier pipeline, TF32; any N in 1..8192.
// The kernel is sm_90a code, which runs on compute capability 9.0 only (H100, H200): on any other
// GPU the correctness checks say so and check nothing.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

namespace {

constexpr const char* kVariant = "wgmma 128x256x32 4 stages";

bool hopper_here() {
    const int cc = tut::compute_capability();
    if (cc == 90) return true;
    WARN("sgemm/16_wgmma skipped: its kernel is sm_90a code (wgmma, TMA) and needs a compute capability 9.0 GPU; "
         "this GPU is "
         << cc / 10 << "." << cc % 10);
    return false;
}

}  // namespace

TEST_CASE("sgemm/16_wgmma matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    if (!hopper_here()) return;
    check_all_correct(kSmallSizes);
    check_all_correct({4, 7, 127, 129, 255});  // N % 4 != 0: A through the padded copy; overhanging boxes
}

TEST_CASE("sgemm/16_wgmma matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    if (!hopper_here()) return;
    check_all_correct({1000});
    check_all_correct(kTourSizes);
    check_correct(variant_named(kVariant), kLargestSize);
}

TEST_CASE("sgemm/16_wgmma has at most twice the error of cuBLAS TF32", "[exercise]") {
    if (!hopper_here()) return;
    check_tf32_accuracy(variant_named(kVariant));
}

TEST_CASE("sgemm/16_wgmma refuses N outside 1..8192", "[baseline]") {
    check_all_refuse({0, -1, tut::sgemm::kMaxN + 1});
}
