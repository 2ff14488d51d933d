// Checks for reduction/07_grid_stride (grid-stride loop over a full-GPU grid, two passes): every type, n = 0 .. 2^26, 2^30 once (double), refusal above 2^30.
#include "reduction_checks.hpp"
#include "perf_gate.hpp"

using namespace reduction_checks;

// The variants these checks require, and the depth their sums are judged with:
// a grid-stride pass, then a pass over the block sums (two_pass_depth, depth_rules.hpp).
const Required kRequired{{"double", "double, loads=1"}, {"float"}, {"int"}, {"complex"}};
const DepthRule kDepth = two_pass_depth;

TEST_CASE("reduction/07_grid_stride: double sums match the compensated reference, n = 0 .. 2^26", "[exercise]") {
    check_sums<double>(kRequired.f64, kDepth);
}

TEST_CASE("reduction/07_grid_stride: float sums are within the float error bound", "[exercise]") {
    check_sums<float>(kRequired.f32, kDepth);
}

TEST_CASE("reduction/07_grid_stride: int sums are exact", "[exercise]") { check_sums<int>(kRequired.i32, kDepth); }

TEST_CASE("reduction/07_grid_stride: complex sums match, part by part", "[exercise]") {
    check_sums<cuDoubleComplex>(kRequired.c64, kDepth);
}

TEST_CASE("reduction/07_grid_stride: the largest n, 2^30 doubles, by the headline double variant", "[exercise]") {
    check_largest<double>("double", kDepth);
}

TEST_CASE("reduction/07_grid_stride: n > 2^30 is refused", "[baseline]") { check_all_refuse_too_large(kRequired); }

// Speed, the lesson's idea: 'float' sums 2^26 floats (256 MB), L2 flushed before each run,
// timed beside a 1 GiB cudaMemcpy device to device (the tour's measure of the copy bandwidth,
// tut::measure_d2d_bandwidth_gbs()); its bandwidth as a share of the copy's is judged against
// this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "reduction/07_grid_stride: speed: 'float' summing 2^26 floats, as a share of a device copy's bandwidth, against "
    "this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant<float> v = variant_named<float>("float");
    const size_t n = size_t(1) << 26;
    const size_t copied = size_t(1) << 30;  // bytes, as tut::measure_d2d_bandwidth_gbs() copies them
    tut::DeviceBuffer<float> in(n), out(1);
    tut::DeviceBuffer<unsigned char> from(copied), to(copied);
    TUT_CUDA(cudaMemset(in.get(), 0x3c, n * sizeof(float)));  // 0.0116 in every element
    TUT_CUDA(cudaMemset(from.get(), 1, copied));
    tut::reduction::Workspace workspace(n * sizeof(float) / 64 + 65536);  // as the lesson's harness
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cudaMemcpy D2D bandwidth";
    c.size = "n = 2^26 floats";
    c.work_name = "'float'";
    c.yardstick_name = "cudaMemcpy";
    c.scale = double(n * sizeof(float)) / (2.0 * copied);  // GB/s of the sum over the copy's (read + write)
    c.plan.flush_l2 = true;  // the sum, as the tour times it; the copy, as the tour's measurement, without
    c.previous_from = "reduction/06_complete_unroll";
    c.hint = "Does a one-wave grid walk the whole input with a grid-stride loop, several independent loads in "
             "flight per thread, before any tree?";
    const auto work = [&] {
        workspace.begin_run();
        v.run(in.get(), n, out.get(), workspace);
    };
    const auto yardstick = [&] {
        TUT_CUDA(cudaMemcpyAsync(to.get(), from.get(), copied, cudaMemcpyDeviceToDevice));
    };
    perf_gate::time_and_judge(c, work, yardstick);
}
