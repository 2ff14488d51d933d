// Checks for sgemm/16_mma_sync: TF32 tensor cores through mma.sync with 2 and 4 cp.async stages; any N in
// 1..8192, as accurate as cuBLAS TF32. Both variants need compute capability 8.0 or newer, and 4 stages
// need 192 KB of shared memory per block: on a GPU without them (an A100 has 163 KB) the whole program is
// skipped (exit 77, with the reason), since the checks name both: 2 stages alone would leave the
// exercise's reads from stages 2 and 3 unchecked.
#include "sgemm_checks.hpp"
#include "perf_gate.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"mma.sync 2 stages", "mma.sync 4 stages"};

}  // namespace

TEST_CASE("sgemm/16_mma_sync: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes, kTf32Roundoff);
    // N % 4 != 0: rows not 16-byte aligned; overhanging block tiles
    check_correct(kVariants, {4, 7, 127, 129, 255}, kTf32Roundoff);
}

TEST_CASE("sgemm/16_mma_sync: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000}, kTf32Roundoff);
    check_correct(kVariants, kTourSizes, kTf32Roundoff);
    check_correct({"mma.sync 4 stages"}, {kLargestSize}, kTf32Roundoff);
}

TEST_CASE("sgemm/16_mma_sync: has at most twice the error of cuBLAS TF32", "[exercise]") {
    check_tf32_accuracy("mma.sync 2 stages");  // the same fragments and rounding as 4 stages
}

TEST_CASE("sgemm/16_mma_sync: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}

// Speed, the lesson's idea: 'mma.sync 4 stages' timed beside cuBLAS TF32 in the same process;
// its share is judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "sgemm/16_mma_sync: speed: its share of cuBLAS TF32 at N = 4096, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant v = variant_named("mma.sync 4 stages");
    const int n = 4096;
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> C(size_t(n) * n);
    static tut::sgemm::Cublas tf32(CUBLAS_TF32_TENSOR_OP_MATH);
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cuBLAS TF32";
    c.size = "N = 4096";
    c.work_name = "'mma.sync 4 stages'";
    c.yardstick_name = "cuBLAS TF32";
    c.previous_from = "sgemm/15_wmma";
    c.hint = "Are the next k step's fragments loaded while this step's mma.sync instructions run, and the cp.async "
             "stages kept in flight?";
    const auto work = [&] { v.run(n, p.dA(), p.dB(), C.get()); };
    const auto yardstick = [&] { tf32.sgemm(n, p.dA(), p.dB(), C.get()); };
    perf_gate::time_and_judge(c, work, yardstick);
}
