// Checks for sgemm/08_cublas: cublasSgemm in FP32 (pedantic) and TF32 on row-major data; any N in 1..8192.
#include "sgemm_checks.hpp"

#include <cmath>

using namespace sgemm_checks;

TEST_CASE("sgemm/08_cublas computes row-major C = A B (not B A): CPU reference at tiny and odd sizes", "[exercise]") {
    check_all_correct(kSmallSizes);
}

TEST_CASE("sgemm/08_cublas matches cuBLAS FP32 at large sizes, up to N = 8192", "[exercise]") {
    check_all_correct(kLargeSizes);
}

// Relative L2 error against the CPU reference in double. With inputs uniform in [-1, 1)
// and random signs, errors add like a random walk: FP32 (u = 2^-24) stays near 1e-7 and
// TF32 (inputs rounded to 2^-11) near 1e-4..1e-3. The bounds below are loose on purpose:
// they catch a wrong product (error ~1) and a "TF32" run that is not on tensor cores.
TEST_CASE("sgemm/08_cublas: TF32 costs accuracy, FP32 does not", "[exercise]") {
    const int n = 512;
    tut::sgemm::Problem& p = problem(n);  // n <= kCpuReferenceMaxN: CPU reference in double
    REQUIRE(!p.reference_is_fp32);
    INFO(tut_checks::exercise_hint());
    tut::DeviceBuffer<float> dC(size_t(n) * n);
    double fp32_error = NAN, tf32_error = NAN;
    for (const tut::sgemm::Variant& v : lesson::sgemm_variants()) {
        dC.poison();
        REQUIRE_NOTHROW(v.run(n, p.dA.get(), p.dB.get(), dC.get()));
        REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
        const tut::Comparison c = p.check(v, dC);
        INFO("variant '" << v.name << "': " << c.describe());
        REQUIRE(c.ok());
        if (v.input_roundoff == 0)
            fp32_error = c.rel_l2_error;
        else
            tf32_error = c.rel_l2_error;
    }
    CAPTURE(fp32_error, tf32_error);
    CHECK(fp32_error < 1e-6);
    CHECK(tf32_error < std::ldexp(1.0, -10));
    int device = 0, major = 0;
    REQUIRE_NOTHROW(TUT_CUDA(cudaGetDevice(&device)));
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device)));
    if (major >= 8) CHECK(tf32_error > 10 * fp32_error);  // TF32 tensor cores exist from Ampere (sm_80) on
}

TEST_CASE("sgemm/08_cublas refuses N outside 1..8192", "[baseline]") {
    check_all_refuse({0, -1, tut::sgemm::kMaxN + 1});
}
