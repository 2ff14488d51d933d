// Checks for bandwidth/03_gather_divmod: exact gathers against src(:, indices) on the CPU.
#include "bandwidth_checks.hpp"
#include "perf_gate.hpp"

using namespace bandwidth_checks;

namespace lesson {
std::vector<tut::bandwidth::GatherVariant> variants();  // gather_divmod.cu
}

namespace {

// The variants the lesson must have, by name: one removed or renamed fails the checks.
std::vector<GatherVariant> checked_variants() {
    return required(lesson::variants(), {"div and mod, 64x256 (classic launch)",
                                         "div and mod, full grid"});
}

}  // namespace

TEST_CASE("bandwidth/03_gather_divmod: small shapes, 0, 1 and many indices, repeated and out of order", "[exercise]") {
    check_small_gathers(checked_variants());
}

TEST_CASE("bandwidth/03_gather_divmod: the classic size and many indices", "[exercise]") {
    check_many_indices(checked_variants());
}

TEST_CASE("bandwidth/03_gather_divmod: huge columns and the largest size, 2^30 floats", "[exercise]") {
    check_largest(checked_variants());
}

TEST_CASE("bandwidth/03_gather_divmod: refuses an empty matrix, a bad index, too large a size", "[baseline]") {
    check_all_refusals(checked_variants());
}

TEST_CASE("bandwidth/03_gather_divmod: the device comparison finds planted errors", "[baseline]") {
    check_device_comparison();
}

// Speed, the lesson's idea: 'div and mod, full grid' gathers 16384 random columns of a
// 10000 x 32768 float matrix (1.3 GB moved), timed beside cudaMemcpy device to device of the
// same bytes, L2 flushed before each run, as the tour measures it; the share is judged against
// this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "bandwidth/03_gather_divmod: speed: 'div and mod, full grid' against cudaMemcpy of the same bytes at the tour's "
    "size, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const GatherVariant v = required(lesson::variants(), {"div and mod, full grid"}).front();
    const int rows = 10000, cols = 32768, count = 16384;
    tut::DeviceBuffer<float> src(size_t(rows) * cols), dst(size_t(rows) * count);
    TUT_CUDA(cudaMemset(src.get(), 0, src.size() * sizeof(float)));
    const std::vector<int> indices = make_indices(count, cols, IndexOrder::Random, 2);
    tut::DeviceBuffer<int> idx(indices);
    const GatherInput in = make_gather_input(rows, cols, src.get(), indices, idx.get());
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cudaMemcpy D2D of the same bytes";
    c.size = "10000 x 32768 floats, 16384 random columns, a full grid";
    c.work_name = "'div and mod, full grid'";
    c.yardstick_name = "cudaMemcpy";
    c.plan.flush_l2 = c.plan.flush_l2_yardstick = true;  // as the tour times both
    c.hint = "Do the 32 lanes of a warp copy 32 consecutive target elements (consecutive rows of one column), so "
             "that every warp access is coalesced?";
    const auto work = [&] { v.run(in, dst.get()); };
    const auto yardstick = [&] {
        TUT_CUDA(cudaMemcpyAsync(dst.get(), src.get(), dst.size() * sizeof(float), cudaMemcpyDeviceToDevice));
    };
    perf_gate::time_and_judge(c, work, yardstick);
}
