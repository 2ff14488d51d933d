// Checks for sgemm/04_multi_output: any N in 1..8192, kMulti = 1, 2, 4, 8 outputs per thread,
// consecutive and strided. Sizes below include tails of every width (N not a multiple of
// 16 * kMulti), where the last block overhangs the matrix.
#include "sgemm_checks.hpp"

using namespace sgemm_checks;

namespace {

// The variants with more than one output per thread (the exercise), or the one with one.
std::vector<Variant> variants(bool multi) {
    std::vector<Variant> out;
    for (const Variant& v : lesson_variants())
        if ((v.name != "multi=1") == multi) out.push_back(v);
    return out;
}

}  // namespace

TEST_CASE("sgemm/04_multi_output has multi = 2, 4, 8 both consecutive and strided", "[baseline]") {
    REQUIRE(variants(true).size() == 6);
    REQUIRE(variants(false).size() == 1);
}

TEST_CASE("sgemm/04_multi_output multi > 1 matches the CPU reference at tiny and odd sizes", "[exercise]") {
    for (const Variant& v : variants(true))
        for (int n : kSmallSizes) check_correct(v, n);
}

// The widest blocks (8 consecutive outputs, 128 columns) at the largest size.
TEST_CASE("sgemm/04_multi_output multi > 1 matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    for (const Variant& v : variants(true))
        for (int n : kLargeSizes) check_correct(v, n);
    check_correct(variant_named("multi=8 consecutive"), kLargestSize);
}

TEST_CASE("sgemm/04_multi_output multi = 1 (lesson 01's mapping) is right at small and large sizes", "[baseline]") {
    for (const Variant& v : variants(false))
        for (int n : {1, 17, 100, 257, 1000}) check_correct(v, n);
}

TEST_CASE("sgemm/04_multi_output refuses N outside 1..8192", "[baseline]") {
    check_all_refuse({0, -1, tut::sgemm::kMaxN + 1});
}
