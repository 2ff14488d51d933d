// Checks for sgemm/14_wmma: TF32 tensor cores through WMMA (compute capability 8.0 or newer; on an older GPU
// the whole program is skipped, exit 77, with the reason); any N in 1..8192, as accurate as cuBLAS TF32.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"wmma 128x128x32"};

}  // namespace

TEST_CASE("sgemm/14_wmma: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes, kTf32Roundoff);
    // N % 4 != 0: rows not 16-byte aligned; overhanging block tiles
    check_correct(kVariants, {4, 7, 127, 129, 255}, kTf32Roundoff);
}

TEST_CASE("sgemm/14_wmma: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000}, kTf32Roundoff);
    check_correct(kVariants, kTourSizes, kTf32Roundoff);
    check_correct({"wmma 128x128x32"}, {kLargestSize}, kTf32Roundoff);
}

TEST_CASE("sgemm/14_wmma: has at most twice the error of cuBLAS TF32", "[exercise]") {
    check_tf32_accuracy("wmma 128x128x32");
}

TEST_CASE("sgemm/14_wmma: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}
