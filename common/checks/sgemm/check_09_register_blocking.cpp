// Checks for sgemm/09_register_blocking: a 4 x 4 or 8 x 8 tile of C per thread; any N in 1..8192.
#include "sgemm_checks.hpp"

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
