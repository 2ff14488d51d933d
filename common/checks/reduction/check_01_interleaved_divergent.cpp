// Checks for reduction/01_interleaved_divergent (a tree per 256 elements, interleaved addressing, divergent branch): every type, n = 0 .. 2^26, 2^30 once (double), refusal above 2^30.
#include "reduction_checks.hpp"

using namespace reduction_checks;

// The variants these checks require, and the depth their sums are judged with:
// passes of a tree per block (tree_passes_depth, depth_rules.hpp).
const Required kRequired{{"double"}, {"float"}, {"int"}, {"complex"}};
const DepthRule kDepth = tree_passes_depth;

TEST_CASE("reduction/01_interleaved_divergent: double sums match the compensated reference, n = 0 .. 2^26",
          "[exercise]") {
    check_sums<double>(kRequired.f64, kDepth);
}

TEST_CASE("reduction/01_interleaved_divergent: float sums are within the float error bound", "[exercise]") {
    check_sums<float>(kRequired.f32, kDepth);
}

TEST_CASE("reduction/01_interleaved_divergent: int sums are exact", "[exercise]") {
    check_sums<int>(kRequired.i32, kDepth);
}

TEST_CASE("reduction/01_interleaved_divergent: complex sums match, part by part", "[exercise]") {
    check_sums<cuDoubleComplex>(kRequired.c64, kDepth);
}

TEST_CASE("reduction/01_interleaved_divergent: the largest n, 2^30 doubles, by the headline double variant",
          "[exercise]") {
    check_largest<double>("double", kDepth);
}

TEST_CASE("reduction/01_interleaved_divergent: n > 2^30 is refused", "[baseline]") {
    check_all_refuse_too_large(kRequired);
}
