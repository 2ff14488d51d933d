// Checks for sgemm/15_wmma: TF32 tensor cores through WMMA (compute capability 8.0 or newer; on an older GPU
// the whole program is skipped, exit 77, with the reason); any N in 1..8192, as accurate as cuBLAS TF32.
#include "sgemm_checks.hpp"
#include "perf_gate.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"wmma 128x128x32"};

}  // namespace

TEST_CASE("sgemm/15_wmma: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes, kTf32Roundoff);
    // N % 4 != 0: rows not 16-byte aligned; overhanging block tiles
    check_correct(kVariants, {4, 7, 127, 129, 255}, kTf32Roundoff);
}

TEST_CASE("sgemm/15_wmma: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000}, kTf32Roundoff);
    check_correct(kVariants, kTourSizes, kTf32Roundoff);
    check_correct({"wmma 128x128x32"}, {kLargestSize}, kTf32Roundoff);
}

TEST_CASE("sgemm/15_wmma: has at most twice the error of cuBLAS TF32", "[exercise]") {
    check_tf32_accuracy("wmma 128x128x32");
}

TEST_CASE("sgemm/15_wmma: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}

// Speed, the lesson's idea: 'wmma 128x128x32' timed beside cuBLAS TF32 in the same process;
// its share is judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "sgemm/15_wmma: speed: its share of cuBLAS TF32 at N = 4096, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant v = variant_named("wmma 128x128x32");
    const int n = 4096;
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> C(size_t(n) * n);
    static tut::sgemm::Cublas tf32(CUBLAS_TF32_TENSOR_OP_MATH);
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cuBLAS TF32";
    c.size = "N = 4096";
    c.work_name = "'wmma 128x128x32'";
    c.yardstick_name = "cuBLAS TF32";
    c.hint = "Does each warp load its fragments once per k step and issue all of its mma_sync calls on them?";
    const auto work = [&] { v.run(n, p.dA(), p.dB(), C.get()); };
    const auto yardstick = [&] { tf32.sgemm(n, p.dA(), p.dB(), C.get()); };
    perf_gate::time_and_judge(c, work, yardstick);
}
