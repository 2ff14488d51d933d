// Checks for sgemm/09_register_blocking: a 4 x 4 or 8 x 8 tile of C per thread; any N in 1..8192.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

TEST_CASE("sgemm/09_register_blocking matches the CPU reference at tiny sizes and sizes that are not multiples of "
          "the tile",
          "[exercise]") {
    check_all_correct(kSmallSizes);
    check_all_correct({4, 7, 63, 65, 127, 129});  // N % 4 != 0: rows not 16-byte aligned; blocks of 64 and 128 overhang
}

TEST_CASE("sgemm/09_register_blocking matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_all_correct({1000});
    check_all_correct(kTourSizes);
    check_correct(variant_named("thread 8x8"), kLargestSize);
}

TEST_CASE("sgemm/09_register_blocking refuses N outside 1..8192", "[baseline]") {
    check_all_refuse({0, -1, tut::sgemm::kMaxN + 1});
}
