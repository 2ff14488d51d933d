// Checks for sgemm/15_mma_sync: TF32 tensor cores through mma.sync with 2 and 4 cp.async stages; any N in
// 1..8192, as accurate as cuBLAS TF32. Both variants need compute capability 8.0 or newer, and 4 stages
// need 192 KB of shared memory per block: on a GPU without them (an A100 has 163 KB) the whole program is
// skipped (exit 77, with the reason), since the checks name both: 2 stages alone would leave the
// exercise's reads from stages 2 and 3 unchecked.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"mma.sync 2 stages", "mma.sync 4 stages"};

}  // namespace

TEST_CASE("sgemm/15_mma_sync: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes, kTf32Roundoff);
    // N % 4 != 0: rows not 16-byte aligned; overhanging block tiles
    check_correct(kVariants, {4, 7, 127, 129, 255}, kTf32Roundoff);
}

TEST_CASE("sgemm/15_mma_sync: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000}, kTf32Roundoff);
    check_correct(kVariants, kTourSizes, kTf32Roundoff);
    check_correct({"mma.sync 4 stages"}, {kLargestSize}, kTf32Roundoff);
}

TEST_CASE("sgemm/15_mma_sync: has at most twice the error of cuBLAS TF32", "[exercise]") {
    check_tf32_accuracy("mma.sync 2 stages");  // the same fragments and rounding as 4 stages
}

TEST_CASE("sgemm/15_mma_sync: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}
