// Checks for sgemm/04_multi_output: any N in 1..8192, kMulti = 1, 2, 4, 8 outputs per thread,
// consecutive and strided. Sizes below include tails of every width (N not a multiple of
// 16 * kMulti), where the last block overhangs the matrix.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

namespace {

// More than one output per thread: the exercise.
const std::vector<std::string> kMulti{"multi=2 consecutive", "multi=4 consecutive", "multi=8 consecutive",
                                      "multi=2 strided",     "multi=4 strided",     "multi=8 strided"};
// One output per thread: lesson 01's mapping.
const std::vector<std::string> kSingle{"multi=1"};

}  // namespace

TEST_CASE("sgemm/04_multi_output: has multi = 2, 4, 8 both consecutive and strided", "[baseline]") {
    REQUIRE(variants_named(kMulti).size() == 6);
    REQUIRE(variants_named(kSingle).size() == 1);
}

TEST_CASE("sgemm/04_multi_output: multi > 1 matches the CPU reference at tiny and odd sizes", "[exercise]") {
    check_correct(kMulti, kSmallSizes);
}

// The widest blocks (8 consecutive outputs, 128 columns) at the largest size.
TEST_CASE("sgemm/04_multi_output: multi > 1 matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    check_correct(kMulti, kLargeSizes);
    check_correct({"multi=8 consecutive"}, {kLargestSize});
}

TEST_CASE("sgemm/04_multi_output: multi = 1 (lesson 01's mapping) is right at small and large sizes", "[baseline]") {
    check_correct(kSingle, {1, 17, 100, 257, 1000});
}

TEST_CASE("sgemm/04_multi_output: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kMulti, kRefusedSizes);
    check_refuses(kSingle, kRefusedSizes);
}
