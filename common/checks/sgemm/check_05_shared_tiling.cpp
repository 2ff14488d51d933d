// Checks for sgemm/05_shared_tiling: tiles of 8, 16, 32; any N in 1..8192 (partial tiles zero-padded).
#include "sgemm_checks.hpp"
#include "perf_gate.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"tile=8", "tile=16", "tile=32"};

}  // namespace

TEST_CASE("sgemm/05_shared_tiling: matches the CPU reference at tiny sizes and sizes that are not multiples of "
          "the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    check_correct(kVariants, {7, 9, 15, 63, 65});  // one short of / one past the tiles of 8, 16, 32
}

TEST_CASE("sgemm/05_shared_tiling: matches cuBLAS at N = 1000, 4099 and 8192", "[exercise]") {
    check_correct(kVariants, kLargeSizes);
    check_correct({"tile=32"}, {kLargestSize});
}

TEST_CASE("sgemm/05_shared_tiling: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}

// Speed, the lesson's idea: 'tile=32' timed beside cuBLAS FP32 in the same process;
// its share is judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "sgemm/05_shared_tiling: speed: its share of cuBLAS FP32 at N = 4096, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant v = variant_named("tile=32");
    const int n = 4096;
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> C(size_t(n) * n);
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cuBLAS FP32";
    c.size = "N = 4096";
    c.work_name = "'tile=32'";
    c.yardstick_name = "cuBLAS";
    c.hint = "Does each element a block copies into shared memory serve a whole tile's FMAs, with one barrier after "
             "the copy and one after the products?";
    const auto work = [&] { v.run(n, p.dA(), p.dB(), C.get()); };
    const auto yardstick = [&] { cublas().sgemm(n, p.dA(), p.dB(), C.get()); };
    perf_gate::time_and_judge(c, work, yardstick);
}
