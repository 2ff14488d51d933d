// Checks for sgemm/07_volkov_ilp: 32 x 32 tiles, grain = 1..16 outputs per thread; any N in 1..8192.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

TEST_CASE("sgemm/07_volkov_ilp matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_all_correct(kSmallSizes);
    check_all_correct({4, 8, 63, 65, 95, 96, 97});  // the float4 reads of A cross k = 4q; 32-row blocks end early
}

TEST_CASE("sgemm/07_volkov_ilp matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    check_all_correct(kLargeSizes);
    check_correct(variant_named("grain=16"), kLargestSize);
}

TEST_CASE("sgemm/07_volkov_ilp refuses N outside 1..8192", "[baseline]") {
    check_all_refuse({0, -1, tut::sgemm::kMaxN + 1});
}
