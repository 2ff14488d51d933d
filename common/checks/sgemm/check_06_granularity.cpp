// Checks for sgemm/06_granularity: 16 x 16G blocks of C for G = 1, 2, 4; any N in 1..8192.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"g=1", "g=2", "g=4"};

}  // namespace

TEST_CASE("sgemm/06_granularity: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    // blocks of 16 rows by 16, 32 or 64 columns: sizes that end inside the last B tile of a block:
    check_correct(kVariants, {47, 48, 49, 63, 65, 80, 127});
}

TEST_CASE("sgemm/06_granularity: matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    check_correct(kVariants, kLargeSizes);
    check_correct({"g=4"}, {kLargestSize});
}

TEST_CASE("sgemm/06_granularity: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}
