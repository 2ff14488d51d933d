// Checks for sgemm/13_tuning: the sweep's tile shapes, swizzles and C paths; any N in 1..8192.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"128x256x8",
                                         "128x256x16",
                                         "128x256x16 swizzle 8",
                                         "128x256x16 swizzle 16",
                                         "128x256x16 swizzle 8 C staged",
                                         "256x128x16 swizzle 8",
                                         "128x128x8 swizzle 8"};

}  // namespace

TEST_CASE("sgemm/13_tuning: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    check_correct(kVariants, {4, 7, 127, 129, 255});  // N % 4 != 0: rows not 16-byte aligned; overhanging block tiles
}

TEST_CASE("sgemm/13_tuning: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000});
    check_correct(kVariants, kTourSizes);
    check_correct({"128x256x16 swizzle 8"}, {kLargestSize});
}

TEST_CASE("sgemm/13_tuning: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}
