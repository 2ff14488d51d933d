// Checks for sgemm/10_warp_tiling: warp tiles of 32 x 64 or 64 x 32, 8 x 8 per thread; any N in 1..8192.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"warp 32x64", "warp 64x32"};

}  // namespace

TEST_CASE("sgemm/10_warp_tiling: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    check_correct(kVariants, {4, 7, 127, 129, 255});  // N % 4 != 0: rows not 16-byte aligned; overhanging block tiles
}

TEST_CASE("sgemm/10_warp_tiling: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000});
    check_correct(kVariants, kTourSizes);
    check_correct({"warp 32x64"}, {kLargestSize});
}

TEST_CASE("sgemm/10_warp_tiling: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}
