// Checks for sgemm/06_granularity: 16 x 16G blocks of C for G = 1, 2, 4; any N in 1..8192.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

TEST_CASE("sgemm/06_granularity matches the CPU reference at tiny sizes and sizes that are not multiples of the block",
          "[exercise]") {
    check_all_correct(kSmallSizes);
    // Blocks are 16 rows by 16, 32 or 64 columns: sizes that end inside the last B tile of a block.
    check_all_correct({47, 48, 49, 63, 65, 80, 127});
}

TEST_CASE("sgemm/06_granularity matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    check_all_correct(kLargeSizes);
    check_correct(variant_named("g=4"), kLargestSize);
}

TEST_CASE("sgemm/06_granularity refuses N outside 1..8192", "[baseline]") {
    check_all_refuse({0, -1, tut::sgemm::kMaxN + 1});
}
