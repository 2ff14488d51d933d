// Checks for reduction/08_warp_shuffle_atomic (warp shuffles and atomics (per warp, per block, atomicCAS double add)): every type, n = 0 .. 2^26, 2^30 once (double), refusal above 2^30.
#include "reduction_checks.hpp"
#include "perf_gate.hpp"

using namespace reduction_checks;

// The variants these checks require, and the depth their sums are judged with: a
// grid-stride pass, then one level per atomic on the output, one per warp or one per
// block (atomic_per_warp_depth, atomic_per_block_depth in depth_rules.hpp).
const Required kPerWarp{{"double, atomic per warp"}, {"float, atomic per warp"}, {"int, atomic per warp"},
                        {"complex, atomic per warp"}};
const Required kPerBlock{{"double, atomic per block", "double, atomic per block, cas"},
                         {"float, atomic per block"},
                         {"int, atomic per block"},
                         {"complex, atomic per block"}};

template <class T>
void check_both() {
    check_sums<T>(kPerWarp.of<T>(), atomic_per_warp_depth);
    check_sums<T>(kPerBlock.of<T>(), atomic_per_block_depth);
}

TEST_CASE("reduction/08_warp_shuffle_atomic: double sums match the compensated reference, n = 0 .. 2^26",
          "[exercise]") {
    check_both<double>();
}

TEST_CASE("reduction/08_warp_shuffle_atomic: float sums are within the float error bound", "[exercise]") {
    check_both<float>();
}

TEST_CASE("reduction/08_warp_shuffle_atomic: int sums are exact", "[exercise]") { check_both<int>(); }

TEST_CASE("reduction/08_warp_shuffle_atomic: complex sums match, part by part", "[exercise]") {
    check_both<cuDoubleComplex>();
}

TEST_CASE("reduction/08_warp_shuffle_atomic: the largest n, 2^30 doubles, by the double atomic-per-warp variant",
          "[exercise]") {
    check_largest<double>("double, atomic per warp", atomic_per_warp_depth);
}

TEST_CASE("reduction/08_warp_shuffle_atomic: n > 2^30 is refused", "[baseline]") {
    check_all_refuse_too_large(kPerWarp);
    check_all_refuse_too_large(kPerBlock);
}

// Speed, the lesson's idea: 'float, atomic per block' sums 2^26 floats (256 MB), L2 flushed before each run,
// timed beside a 1 GiB cudaMemcpy device to device (the tour's measure of the copy bandwidth,
// tut::measure_d2d_bandwidth_gbs()); its bandwidth as a share of the copy's is judged against
// this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "reduction/08_warp_shuffle_atomic: speed: 'float, atomic per block' summing 2^26 floats, as a share of a device "
    "copy's bandwidth, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant<float> v = variant_named<float>("float, atomic per block");
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
    c.work_name = "'float, atomic per block'";
    c.yardstick_name = "cudaMemcpy";
    c.scale = double(n * sizeof(float)) / (2.0 * copied);  // GB/s of the sum over the copy's (read + write)
    c.plan.flush_l2 = true;  // the sum, as the tour times it; the copy, as the tour's measurement, without
    c.previous_from = "reduction/07_grid_stride";
    c.hint = "Do the warps add their sums with shuffles and each block add its sum into the output with one atomic, "
             "instead of a second pass?";
    const auto work = [&] {
        workspace.begin_run();
        v.run(in.get(), n, out.get(), workspace);
    };
    const auto yardstick = [&] {
        TUT_CUDA(cudaMemcpyAsync(to.get(), from.get(), copied, cudaMemcpyDeviceToDevice));
    };
    perf_gate::time_and_judge(c, work, yardstick);
}
