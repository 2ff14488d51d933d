// Checks for sgemm/12_cp_async: 128 x 256 tile, cp.async pipelines of 2-4 stages and register staging; the cp.async variants need compute capability 8.0 (skipped with a warning before); any N in 1..8192.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

TEST_CASE("sgemm/12_cp_async matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_all_correct(kSmallSizes);
    check_all_correct({4, 7, 127, 129, 255});  // N % 4 != 0: rows not 16-byte aligned; overhanging block tiles
}

TEST_CASE("sgemm/12_cp_async matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_all_correct({1000});
    check_all_correct(kTourSizes);
    check_correct(variant_named("cp.async 3 stages"), kLargestSize);
}

TEST_CASE("sgemm/12_cp_async refuses N outside 1..8192", "[baseline]") {
    check_all_refuse({0, -1, tut::sgemm::kMaxN + 1});
}
