// Checks for sgemm/01_naive: any N in 1..8192.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

TEST_CASE("sgemm/01_naive matches the CPU reference at tiny and odd sizes", "[exercise]") {
    check_all_correct(kSmallSizes);
}

TEST_CASE("sgemm/01_naive matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    check_all_correct(kLargeSizes);
    check_correct(variant_named("naive"), kLargestSize);
}

TEST_CASE("sgemm/01_naive refuses N outside 1..8192", "[baseline]") {
    check_all_refuse({0, -1, tut::sgemm::kMaxN + 1});
}
