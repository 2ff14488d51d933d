// Checks for sgemm/12_cp_async: 128 x 256 tile, cp.async pipelines of 2-4 stages and register staging; any N in
// 1..8192. The cp.async variants (the exercise) need compute capability 8.0: on an older GPU the whole program is
// skipped (exit 77, with the reason) by sgemm_checks' lesson_variants().
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
