// Checks for bandwidth/05_gather_constant: exact gathers against src(:, indices) on the CPU,
// on both index paths (__constant__ up to 16384 indices, the read-only cache beyond).
#include "bandwidth_checks.hpp"
#include "perf_gate.hpp"

using namespace bandwidth_checks;

namespace lesson {
std::vector<tut::bandwidth::GatherVariant> variants();  // gather_constant.cu
}

namespace {

// The variants the lesson must have, by name: one removed or renamed fails the checks.
std::vector<GatherVariant> checked_variants() {
    return required(lesson::variants(), {"precomputed + const, 64x256 (classic launch)",
                                         "precomputed + read-only cache, full grid",
                                         "precomputed + const, full grid"});
}

}  // namespace

TEST_CASE("bandwidth/05_gather_constant: small shapes, 0, 1 and many indices, repeated and out of order",
          "[exercise]") {
    check_small_gathers(checked_variants());
}

TEST_CASE("bandwidth/05_gather_constant: the classic size and many indices", "[exercise]") {
    check_many_indices(checked_variants());
}

TEST_CASE("bandwidth/05_gather_constant: both index paths, and fresh indices on every call", "[exercise]") {
    // Each variant's path: __constant__ up to 16384 indices (they fill it exactly), the
    // read-only cache beyond; the read-only variant always takes the read-only cache.
    struct Paths {
        const char* variant;
        const char* fit;
        const char* spill;  // a prefix of the path taken with 16385 indices
    };
    for (const Paths& p : {Paths{"precomputed + const, 64x256 (classic launch)", "__constant__", "read-only cache"},
                           Paths{"precomputed + read-only cache, full grid", "read-only cache", "read-only cache"},
                           Paths{"precomputed + const, full grid", "__constant__", "read-only cache"}}) {
        const GatherVariant v = required(lesson::variants(), {p.variant}).front();
        const std::vector<int> fit = make_indices(16384, 20000, IndexOrder::Random, 21);
        const std::vector<int> spill = make_indices(16385, 20000, IndexOrder::Random, 22);
        CHECK(check_gather(v, 100, 20000, fit, "16384 indices") == p.fit);
        CHECK(check_gather(v, 100, 20000, spill, "16385 indices").rfind(p.spill, 0) == 0);
        // Back to back, same count, different indices: the second call must not see the first's.
        check_gather(v, 100, 20000, sequential(16384), "16384 indices in order");
        check_gather(v, 100, 20000, reversed(16384, 20000), "16384 other indices, reversed");
        check_gather(v, 100, 20000, {7}, "one index");
    }
}

TEST_CASE("bandwidth/05_gather_constant: huge columns and the largest size, 2^30 floats", "[exercise]") {
    check_largest(checked_variants());
}

TEST_CASE("bandwidth/05_gather_constant: refuses an empty matrix, a bad index, too large a size", "[baseline]") {
    check_all_refusals(checked_variants());
}

TEST_CASE("bandwidth/05_gather_constant: the device comparison finds planted errors", "[baseline]") {
    check_device_comparison();
}

// Speed, the lesson's idea: 'precomputed + const, 64x256 (classic launch)' gathers 16384 random columns of a
// 10000 x 32768 float matrix (1.3 GB moved), timed beside cudaMemcpy device to device of the
// same bytes, L2 flushed before each run, as the tour measures it; the share is judged against
// this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "bandwidth/05_gather_constant: speed: 'precomputed + const, 64x256 (classic launch)' against cudaMemcpy of the "
    "same bytes at the tour's size, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const GatherVariant v = required(lesson::variants(), {"precomputed + const, 64x256 (classic launch)"}).front();
    const int rows = 10000, cols = 32768, count = 16384;
    tut::DeviceBuffer<float> src(size_t(rows) * cols), dst(size_t(rows) * count);
    TUT_CUDA(cudaMemset(src.get(), 0, src.size() * sizeof(float)));
    const std::vector<int> indices = make_indices(count, cols, IndexOrder::Random, 2);
    tut::DeviceBuffer<int> idx(indices);
    const GatherInput in = make_gather_input(rows, cols, src.get(), indices, idx.get());
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cudaMemcpy D2D of the same bytes";
    c.size = "10000 x 32768 floats, 16384 random columns, 64 blocks of 256 threads";
    c.work_name = "'precomputed + const, 64x256 (classic launch)'";
    c.yardstick_name = "cudaMemcpy";
    c.plan.flush_l2 = c.plan.flush_l2_yardstick = true;  // as the tour times both
    c.previous_from = "bandwidth/04_gather_incremental";
    c.hint = "Are the stride's whole columns and leftover rows computed once on the host, and this call's indices "
             "copied into __constant__ memory before the launch, on its stream?";
    const auto work = [&] { v.run(in, dst.get()); };
    const auto yardstick = [&] {
        TUT_CUDA(cudaMemcpyAsync(dst.get(), src.get(), dst.size() * sizeof(float), cudaMemcpyDeviceToDevice));
    };
    perf_gate::time_and_judge(c, work, yardstick);
}
