// Checks for sgemm/08_cublas: cublasSgemm in FP32 (pedantic) and TF32 on row-major data; any N in 1..8192.
// The TF32 variant needs compute capability 8.0 or newer. On an older GPU the whole program is
// skipped (exit 77, with the reason), since every [exercise] case below names both variants:
// part 2 of the exercise (TF32) cannot be checked there.
#include "sgemm_checks.hpp"

#include <cmath>

using namespace sgemm_checks;

namespace {

// "tf32" rounds its inputs to TF32, and is judged with TF32's roundoff.
const std::vector<std::string> kFp32{"fp32"}, kTf32{"tf32"};

}  // namespace

TEST_CASE("sgemm/08_cublas: computes row-major C = A B (not B A): CPU reference at tiny and odd sizes",
          "[exercise]") {
    check_correct(kFp32, kSmallSizes);
    check_correct(kTf32, kSmallSizes, kTf32Roundoff);
}

TEST_CASE("sgemm/08_cublas: matches cuBLAS FP32 at N = 1000, 4099 and 8192", "[exercise]") {
    check_correct(kFp32, kLargeSizes);
    check_correct(kTf32, kLargeSizes, kTf32Roundoff);
    check_correct(kFp32, {kLargestSize});
}

// Relative L2 error against the CPU reference in double. With inputs uniform in [-1, 1)
// and random signs, errors add like a random walk: FP32 (u = 2^-24) stays near 1e-7 and
// TF32 (inputs rounded to 2^-11) near 1e-4..1e-3. The bounds below are loose on purpose:
// they catch a wrong product (error ~1) and a "TF32" run that is not on tensor cores.
TEST_CASE("sgemm/08_cublas: TF32 costs accuracy, FP32 does not", "[exercise]") {
    const int n = 512;
    REQUIRE(!problem(n).reference_is_fp32);  // n <= kCpuReferenceMaxN: CPU reference in double
    const Variant fp32 = variant_named("fp32"), tf32 = variant_named("tf32");
    INFO(tut_checks::exercise_hint());
    const double fp32_error = check_variant(fp32, n);
    CHECK(fp32_error < 1e-6);
    const double tf32_error = check_variant(tf32, n, kTf32Roundoff);
    CAPTURE(fp32_error, tf32_error);
    CHECK(tf32_error < std::ldexp(1.0, -10));
    CHECK(tf32_error > 10 * fp32_error);
}

TEST_CASE("sgemm/08_cublas: refuses N outside 1..8192", "[baseline]") {
    check_refuses(kFp32, kRefusedSizes);
    check_refuses(kTf32, kRefusedSizes);
}
