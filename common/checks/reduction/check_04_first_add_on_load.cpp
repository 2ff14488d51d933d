// Checks for reduction/04_first_add_on_load (the first add during the load): every type, n = 0 .. 2^26, 2^30 once (double), refusal above 2^30.
#include "reduction_checks.hpp"
#include "perf_gate.hpp"

using namespace reduction_checks;

// The variants these checks require, and the depth their sums are judged with:
// passes of a tree per block (tree_passes_depth, depth_rules.hpp).
const Required kRequired{{"double"}, {"float"}, {"int"}, {"complex"}};
const DepthRule kDepth = tree_passes_depth;

TEST_CASE("reduction/04_first_add_on_load: double sums match the compensated reference, n = 0 .. 2^26", "[exercise]") {
    check_sums<double>(kRequired.f64, kDepth);
}

TEST_CASE("reduction/04_first_add_on_load: float sums are within the float error bound", "[exercise]") {
    check_sums<float>(kRequired.f32, kDepth);
}

TEST_CASE("reduction/04_first_add_on_load: int sums are exact", "[exercise]") {
    check_sums<int>(kRequired.i32, kDepth);
}

TEST_CASE("reduction/04_first_add_on_load: complex sums match, part by part", "[exercise]") {
    check_sums<cuDoubleComplex>(kRequired.c64, kDepth);
}

TEST_CASE("reduction/04_first_add_on_load: the largest n, 2^30 doubles, by the headline double variant", "[exercise]") {
    check_largest<double>("double", kDepth);
}

TEST_CASE("reduction/04_first_add_on_load: n > 2^30 is refused", "[baseline]") {
    check_all_refuse_too_large(kRequired);
}

// Speed, the lesson's idea: 'float' sums 2^26 floats beside a device copy of 1 GiB
// (judge_sum_against_device_copy(), reduction_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "reduction/04_first_add_on_load: speed: 'float' summing 2^26 floats, as a share of a device copy's bandwidth, "
    "against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cudaMemcpy D2D bandwidth";
    c.size = "n = 2^26 floats";
    c.previous_from = "reduction/03_sequential";
    c.hint = "Does each thread add two elements while loading them, so that a block covers twice its threads and "
             "none is idle at the first step?";
    judge_sum_against_device_copy(c, "float", size_t(1) << 26);
}
