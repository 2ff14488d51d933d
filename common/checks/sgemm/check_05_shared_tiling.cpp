// Checks for sgemm/05_shared_tiling: tiles of 8, 16, 32; any N in 1..8192 (partial tiles zero-padded).
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"tile=8", "tile=16", "tile=32"};

}  // namespace

TEST_CASE("sgemm/05_shared_tiling: matches the CPU reference at tiny sizes and sizes that are not multiples of "
          "the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    check_correct(kVariants, {7, 9, 15, 63, 65});  // one short of / one past the tiles of 8, 16, 32
}

TEST_CASE("sgemm/05_shared_tiling: matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    check_correct(kVariants, kLargeSizes);
    check_correct({"tile=32"}, {kLargestSize});
}

TEST_CASE("sgemm/05_shared_tiling: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}
