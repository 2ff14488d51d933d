// Checks for sgemm/01_naive: any N in 1..8192.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"naive"};

}  // namespace

TEST_CASE("sgemm/01_naive: matches the CPU reference at tiny and odd sizes", "[exercise]") {
    check_correct(kVariants, kSmallSizes);
}

TEST_CASE("sgemm/01_naive: matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    check_correct(kVariants, kLargeSizes);
    check_correct({"naive"}, {kLargestSize});
}

TEST_CASE("sgemm/01_naive: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}
