// Checks for sgemm/19_persistent_cluster: lesson 18's main loop in persistent blocks (alone and in
// clusters of 2 that share A by TMA multicast), with direct or TMA stores, and with the last wave split
// along k; TF32, any N in 1..8192. The kernels are sm_90a code, which runs on compute capability 9.0 only
// (H100, H200). On any other GPU this program checks nothing: its main() (common/checks/catch_main.cpp,
// built with TUT_CHECK_NEEDS_CC=90 by tut_lesson(... HOPPER_FEATURES)) exits 77, skipped, and says why.
#include "sgemm_checks.hpp"
#include "perf_gate.hpp"

#if !defined(TUT_CHECK_NEEDS_CC) || TUT_CHECK_NEEDS_CC != 90
#error "check_19_persistent_cluster.cpp must be built with TUT_CHECK_NEEDS_CC=90 (tut_lesson(... HOPPER_FEATURES))"
#endif

using namespace sgemm_checks;

namespace {

constexpr const char* kSplit = "persistent, cluster of 2, TMA stores, split last wave";
// Every step of the schedule: each walks the tile list the exercise writes.
const std::vector<std::string> kVariants{"persistent", "persistent, cluster of 2",
                                         "persistent, cluster of 2, TMA stores", kSplit};

}  // namespace

TEST_CASE("sgemm/19_persistent_cluster: matches the CPU reference at tiny sizes and sizes that are not multiples of "
          "the tile",
          "[exercise]") {
    check_correct(kVariants, kSmallSizes, kTf32Roundoff);
    // N % 4 != 0: A and B through the padded copies, direct stores in place of TMA stores; an odd number
    // of column tiles (the second block of a cluster past the last column)
    check_correct(kVariants, {4, 7, 127, 129, 255, 258}, kTf32Roundoff);
}

// On a GPU with 132 SMs (H100, H200: 66 clusters of 2) the split cuts the last wave into thirds at 2500
// and 8192 (TMA stores), quarters at 3000 (TMA stores) and 3001 (direct stores), halves at 4097, and
// nothing at 4095 and 4096; above about 2,100 (clusters) or 2,900 (single blocks) every block walks
// more than one tile, and the last round is partial.
TEST_CASE("sgemm/19_persistent_cluster: matches cuBLAS at N = 1000, 2500, 3000, 3001, 4095, 4096, 4097 and 8192",
          "[exercise]") {
    check_correct(kVariants, {1000, 2500, 3000, 3001}, kTf32Roundoff);
    check_correct(kVariants, kTourSizes, kTf32Roundoff);
    check_correct(kVariants, {kLargestSize}, kTf32Roundoff);
}

TEST_CASE("sgemm/19_persistent_cluster: has at most twice the error of cuBLAS TF32", "[exercise]") {
    check_tf32_accuracy("persistent");  // the same fragments, rounding and order of sums in every variant
}

TEST_CASE("sgemm/19_persistent_cluster: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kVariants, kRefusedSizes);
}

// Speed, the lesson's idea: 'persistent, cluster of 2, TMA stores, split last wave' timed beside cuBLAS TF32
// in the same process; its share is judged against this GPU's threshold (perf_gate.hpp;
// common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "sgemm/19_persistent_cluster: speed: its share of cuBLAS TF32 at N = 5000, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const Variant v = variant_named("persistent, cluster of 2, TMA stores, split last wave");
    const int n = 5000;
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> C(size_t(n) * n);
    static tut::sgemm::Cublas tf32(CUBLAS_TF32_TENSOR_OP_MATH);
    perf_gate::RatioCase c;
    c.name = kSpeedCase;
    c.measure = "% of cuBLAS TF32";
    c.size = "N = 5000";
    c.work_name = "'persistent, cluster of 2, TMA stores, split last wave'";
    c.yardstick_name = "cuBLAS TF32";
    c.hint = "Does every cluster walk its list of tiles in order, so that the persistent grid ends in a balanced "
             "last wave and the pair shares its A tiles?";
    const auto work = [&] { v.run(n, p.dA(), p.dB(), C.get()); };
    const auto yardstick = [&] { tf32.sgemm(n, p.dA(), p.dB(), C.get()); };
    perf_gate::time_and_judge(c, work, yardstick);
}
