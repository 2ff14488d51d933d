// Checks for sgemm/14_tuning: the sweep's tile shapes, swizzles and C paths, and the given depth-32
// kernel (interior blocks unguarded, edge blocks guarded); any N in 1..8192.
#include "sgemm_checks.hpp"
#include "perf_gate.hpp"

using namespace sgemm_checks;

namespace {

const std::vector<std::string> kVariants{"128x256x8",
                                         "128x256x16",
                                         "128x256x16 swizzle 8",
                                         "128x256x16 swizzle 16",
                                         "128x256x16 swizzle 8 C staged",
                                         "256x128x16 swizzle 8",
                                         "128x128x8 swizzle 8"};

// Given in the exercise (not its TODO): checked as [baseline]. Needs cp.async (compute capability 8.0).
const std::vector<std::string> kGiven{"128x256x32 B by cp.async, last tile peeled"};

}  // namespace

TEST_CASE("sgemm/14_tuning: matches the CPU reference at tiny sizes and sizes that are not multiples of the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes);
    check_correct(kVariants, {4, 7, 127, 129, 255});  // N % 4 != 0: rows not 16-byte aligned; overhanging block tiles
}

TEST_CASE("sgemm/14_tuning: matches cuBLAS at N = 1000, 4095, 4096, 4097 and 8192", "[exercise]") {
    check_correct(kVariants, {1000});
    check_correct(kVariants, kTourSizes);
    check_correct({"128x256x16 swizzle 8"}, {kLargestSize});
}

TEST_CASE("sgemm/14_tuning: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
    check_refuses(kGiven, kRefusedSizes);
}

// The depth-32 kernel runs an unguarded body in blocks whose tile lies inside the matrix when
// N % 32 == 0, and a guarded one elsewhere. Sizes: tiny; N % 4 != 0 (rows not 16-byte aligned:
// 4-byte copies); N % 4 == 0 but N % 32 != 0 (a partial last k tile: every block guarded);
// N % 32 == 0 with partial block rows or columns (384, 640, 4128: interior and edge blocks in one
// grid); one k tile (32) and two (64) with nothing peeled before the last; the tour's sizes and
// the largest.
TEST_CASE("sgemm/14_tuning: the depth-32 kernel matches the reference at any N, edge blocks included", "[baseline]") {
    check_correct(kGiven, kSmallSizes);
    check_correct(kGiven, {4, 7, 32, 63, 96, 127, 129, 255, 300, 384, 480});
    check_correct(kGiven, {640, 1000, 3000, 4128});
    check_correct(kGiven, kTourSizes);
    check_correct(kGiven, {kLargestSize});
}

// Speed, the lesson's idea: '128x256x16 swizzle 8 C staged' timed beside cuBLAS FP32 in the same process;
// its share is judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "sgemm/14_tuning: speed: its share of cuBLAS FP32 at N = 4096, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant v = variant_named("128x256x16 swizzle 8 C staged");
    const Variant previous = variant_named("128x256x8");
    const int n = 4096;
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> C(size_t(n) * n);
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cuBLAS FP32";
    c.size = "N = 4096";
    c.work_name = "'128x256x16 swizzle 8 C staged'";
    c.yardstick_name = "cuBLAS";
    c.hint = "Do neighbouring blocks compute tiles of C that share rows of A and columns of B (the swizzle), and "
             "does C leave through shared memory in whole rows?";
    const auto work = [&] { v.run(n, p.dA(), p.dB(), C.get()); };
    const auto yardstick = [&] { cublas().sgemm(n, p.dA(), p.dB(), C.get()); };
    perf_gate::time_and_judge(c, work, yardstick, [&] { previous.run(n, p.dA(), p.dB(), C.get()); });
}
