// Checks for bandwidth/06_gather_2d: exact gathers against src(:, indices) on the CPU,
// float4 only where every column is 16-byte aligned.
#include "bandwidth_checks.hpp"
#include "perf_gate.hpp"

using namespace bandwidth_checks;

namespace lesson {
std::vector<tut::bandwidth::GatherVariant> variants();  // gather_2d.cu
}

namespace {

// The variants the lesson must have, by name: one removed or renamed fails the checks.
std::vector<GatherVariant> checked_variants() {
    return required(lesson::variants(), {"2D, float",
                                         "2D, float4",
                                         "2D, float4, 2 per thread",
                                         "2D, float4, 2 per thread, large blocks"});
}

}  // namespace

TEST_CASE("bandwidth/06_gather_2d: small shapes, 0, 1 and many indices, repeated and out of order", "[exercise]") {
    check_small_gathers(checked_variants());
}

TEST_CASE("bandwidth/06_gather_2d: the classic size and many indices", "[exercise]") {
    check_many_indices(checked_variants());
}

TEST_CASE("bandwidth/06_gather_2d: float4 only when rows % 4 == 0 and both pointers are 16-byte aligned",
          "[exercise]") {
    const std::vector<int> indices = make_indices(300, 500, IndexOrder::Random, 31);
    struct Case {
        int rows;
        size_t src_offset, dst_offset;
        const char* path;
    };
    for (const Case& c : {Case{1000, 0, 0, "float4"}, Case{1000, 1, 0, "float: pointer not 16-byte aligned"},
                          Case{1000, 0, 2, "float: pointer not 16-byte aligned"},
                          Case{1000, 3, 3, "float: pointer not 16-byte aligned"},
                          Case{1000, 4, 4, "float4"}, Case{1002, 0, 0, "float: rows % 4 != 0"},
                          Case{4, 0, 0, "float4"}, Case{8, 0, 0, "float4"}}) {
        for (const auto& v : checked_variants()) {
            const std::string path =
                check_gather(v, c.rows, 500, indices, "alignment case", c.src_offset, c.dst_offset);
            INFO("variant '" << v.name << "', rows " << c.rows << ", offsets " << c.src_offset << ", " << c.dst_offset);
            CHECK(path == (v.name == "2D, float" ? "float" : c.path));
        }
    }
}

TEST_CASE("bandwidth/06_gather_2d: huge columns and the largest size, 2^30 floats", "[exercise]") {
    check_largest(checked_variants());
}

TEST_CASE("bandwidth/06_gather_2d: refuses an empty matrix, a bad index, too large a size", "[baseline]") {
    check_all_refusals(checked_variants());
}

TEST_CASE("bandwidth/06_gather_2d: the device comparison finds planted errors", "[baseline]") {
    check_device_comparison();
}

// Speed, the lesson's idea: '2D, float4, 2 per thread' gathers 16384 random columns of a
// 10000 x 32768 float matrix (1.3 GB moved), timed beside cudaMemcpy device to device of the
// same bytes, L2 flushed before each run, as the tour measures it; the share is judged against
// this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "bandwidth/06_gather_2d: speed: '2D, float4, 2 per thread' against cudaMemcpy of the same bytes at the tour's "
    "size, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const GatherVariant v = required(lesson::variants(), {"2D, float4, 2 per thread"}).front();
    const int rows = 10000, cols = 32768, count = 16384;
    tut::DeviceBuffer<float> src(size_t(rows) * cols), dst(size_t(rows) * count);
    TUT_CUDA(cudaMemset(src.get(), 0, src.size() * sizeof(float)));
    const std::vector<int> indices = make_indices(count, cols, IndexOrder::Random, 2);
    tut::DeviceBuffer<int> idx(indices);
    const GatherInput in = make_gather_input(rows, cols, src.get(), indices, idx.get());
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cudaMemcpy D2D of the same bytes";
    c.size = "10000 x 32768 floats, 16384 random columns";
    c.work_name = "'2D, float4, 2 per thread'";
    c.yardstick_name = "cudaMemcpy";
    c.plan.flush_l2 = c.plan.flush_l2_yardstick = true;  // as the tour times both
    c.hint = "Does each block copy its part of one column with 16-byte accesses, its kPerThread loads in flight "
             "before its first store, dividing nowhere?";
    const auto work = [&] { v.run(in, dst.get()); };
    const auto yardstick = [&] {
        TUT_CUDA(cudaMemcpyAsync(dst.get(), src.get(), dst.size() * sizeof(float), cudaMemcpyDeviceToDevice));
    };
    perf_gate::time_and_judge(c, work, yardstick);
}
