// Checks for sgemm/05_shared_tiling: tiles of 8, 16, 32; any N in 1..8192 (partial tiles zero-padded).
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

TEST_CASE("sgemm/05_shared_tiling matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_all_correct(kSmallSizes);
    check_all_correct({7, 9, 15, 63, 65});  // one short of / one past the tiles of 8, 16, 32
}

TEST_CASE("sgemm/05_shared_tiling matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    check_all_correct(kLargeSizes);
    check_correct(variant_named("tile=32"), kLargestSize);
}

TEST_CASE("sgemm/05_shared_tiling refuses N outside 1..8192", "[baseline]") {
    check_all_refuse({0, -1, tut::sgemm::kMaxN + 1});
}
