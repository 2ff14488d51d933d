// Checks for sgemm/07_volkov_ilp: 32 x 32 tiles, grain = 1..16 outputs per thread; any N in 1..8192.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"grain=1", "grain=2", "grain=4", "grain=8", "grain=16"};

}  // namespace

TEST_CASE("sgemm/07_volkov_ilp: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    // the float4 reads of A cross k = 4q; 32-row blocks end early:
    check_correct(kVariants, {4, 8, 63, 65, 95, 96, 97});
}

TEST_CASE("sgemm/07_volkov_ilp: matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    check_correct(kVariants, kLargeSizes);
    check_correct({"grain=16"}, {kLargestSize});
}

TEST_CASE("sgemm/07_volkov_ilp: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}
