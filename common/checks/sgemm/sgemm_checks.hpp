/// @file sgemm_checks.hpp
/// @brief Checks shared by the SGEMM lessons: correctness at a size, refusal of a size.
///
/// Small sizes are compared with a double-precision CPU reference, large ones with
/// cuBLAS FP32; the tolerance is tut::sgemm::tolerance() (see its comment).
/// The output is poisoned (NaN) before every run, so unwritten elements fail.
/// Above the CPU reference's sizes the inputs are generated, multiplied and compared on
/// the GPU (device_compare.hpp): the same values and the same rule, without moving
/// 256 MB matrices through host memory for every variant.
///
/// Sizes: every variant at the tiny and odd sizes of kSmallSizes and at kLargeSizes (one
/// that fits in L2, one whose matrices do not); one variant per lesson, named by the
/// lesson's check, at the largest size the track claims (kMaxN). That keeps each lesson's
/// check to a few seconds without leaving the largest size unchecked.
#pragma once

#include "catch.hpp"
#include "device_compare.hpp"
#include "lesson_hint.hpp"
#include "tut/sgemm.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

namespace sgemm_checks {

using tut::sgemm::Variant;

/// Tiny sizes and sizes that are not multiples of any tile (16, 32, 64...).
inline const std::vector<int> kSmallSizes{1, 2, 3, 5, 16, 17, 31, 33, 64, 100, 257, 512};
/// Large sizes, against cuBLAS, for every variant: 1000 (4 MB a matrix, in L2) and 4099
/// (67 MB a matrix: beyond the 50 to 60 MB L2 of an H100 or H200, so the kernels run from
/// DRAM as at the tour's size; not a multiple of any tile, so every block edge is tested).
inline const std::vector<int> kLargeSizes{1000, 4099};
/// Around the tour's size, from lesson 09 on: a multiple of every tile (4096) and one short
/// and one past it (4095, 4097: overhanging tiles, and rows that are not 16-byte aligned).
inline const std::vector<int> kTourSizes{4095, 4096, 4097};
/// The largest size the track claims, checked with one variant per lesson.
inline constexpr int kLargestSize = tut::sgemm::kMaxN;

inline tut::sgemm::Cublas& cublas() {
    static tut::sgemm::Cublas handle;
    return handle;
}

/// The seed of size n's inputs (A from it, B from it + 1, as tut::sgemm::Problem does).
inline uint64_t seed_for(int n) { return 1000 + uint64_t(n); }

/// One host problem per size (inputs and reference on the host as well): for checks of
/// pipelines that start from host memory.
inline tut::sgemm::Problem& host_problem(int n) {
    static std::map<int, std::unique_ptr<tut::sgemm::Problem>> cache;
    auto& p = cache[n];
    if (!p) {
        p = std::make_unique<tut::sgemm::Problem>(n, seed_for(n));
        p->prepare_reference(cublas());
    }
    return *p;
}

/// Inputs of size n on the GPU and a way to judge a C computed from them. Up to
/// tut::sgemm::Problem::kCpuReferenceMaxN the host problem (CPU reference in double);
/// above it A and B are generated on the GPU (the same values), the reference and the
/// error scale |A||B| come from cuBLAS FP32, and the comparison runs on the GPU.
class CheckProblem {
  public:
    explicit CheckProblem(int n_) : n(n_) {
        if (n <= tut::sgemm::Problem::kCpuReferenceMaxN) {
            host_ = &host_problem(n);
            return;
        }
        reference_is_fp32 = true;
        const size_t count = size_t(n) * n;
        a_ = tut::DeviceBuffer<float>(count);
        b_ = tut::DeviceBuffer<float>(count);
        c_ref_ = tut::DeviceBuffer<float>(count);
        scale_ = tut::DeviceBuffer<float>(count);
        tut_checks::fill_uniform_on_device(a_.get(), count, seed_for(n));
        tut_checks::fill_uniform_on_device(b_.get(), count, seed_for(n) + 1);
        cublas().sgemm(n, a_.get(), b_.get(), c_ref_.get());
        tut::DeviceBuffer<float> abs_a(count), abs_b(count);
        tut_checks::abs_on_device(a_.get(), abs_a.get(), count);
        tut_checks::abs_on_device(b_.get(), abs_b.get(), count);
        cublas().sgemm(n, abs_a.get(), abs_b.get(), scale_.get());
        TUT_CUDA(cudaDeviceSynchronize());
    }

    const int n;
    bool reference_is_fp32 = false;  ///< true when the reference is cuBLAS FP32 rather than the CPU in double

    const float* dA() const { return host_ ? host_->dA.get() : a_.get(); }
    const float* dB() const { return host_ ? host_->dB.get() : b_.get(); }

    /// Compares a device result with the reference, with `v`'s tolerance.
    tut::Comparison check(const Variant& v, const tut::DeviceBuffer<float>& dC) const {
        if (host_) return host_->check(v, dC);
        return tut_checks::compare_on_device(dC.get(), c_ref_.get(), dC.size(),
                                             tut::sgemm::tolerance(n, v, reference_is_fp32), scale_.get());
    }

  private:
    tut::sgemm::Problem* host_ = nullptr;
    tut::DeviceBuffer<float> a_, b_, c_ref_, scale_;
};

/// One problem per size, shared by all variants of the lesson.
inline CheckProblem& problem(int n) {
    static std::map<int, std::unique_ptr<CheckProblem>> cache;
    auto& p = cache[n];
    if (!p) p = std::make_unique<CheckProblem>(n);
    return *p;
}

/// Ends the check program with tut::kSkipExitCode (77), saying why, unless this GPU runs every
/// one of `variants`. A test case that returned early for a variant the GPU lacks would
/// assert nothing, and Catch2 passes such a case: an untouched exercise would score there.
/// Catch2 2.x cannot mark one case skipped (SKIP() arrived in 3.3), so the whole program is
/// skipped, which CTest and the grader report as such, with this reason.
inline void skip_unless_all_run_here(const std::vector<Variant>& variants) {
    const std::string why = tut::sgemm::unmet_needs(variants, tut::compute_capability(),
                                                    tut::sgemm::max_dynamic_shared_per_block());
    if (why.empty()) return;
    std::fflush(stdout);  // what Catch2 printed so far, before the reason
    std::printf("SKIPPED: these checks test every variant of the lesson, and this GPU cannot run all of them:\n%s\n",
                why.c_str());
    std::fflush(nullptr);
    // _Exit, not exit: this runs inside a test case, where a reporter (JUnit) has pointed
    // std::cout at a buffer that exit()'s static destructors would free before flushing
    // std::cout into it (a segmentation fault, not 77).
    std::_Exit(tut::kSkipExitCode);
}

/// The lesson's variants. Every check reaches them through here (variant_named, the
/// check_all_ helpers), so the program is skipped, before the first check that would use
/// them, on a GPU too old or with too little shared memory per block for any of them: a
/// lesson whose exercise cannot be run in full here is not graded here.
inline std::vector<Variant> lesson_variants() {
    std::vector<Variant> variants = lesson::sgemm_variants();
    skip_unless_all_run_here(variants);
    return variants;
}

/// Runs `v` at size n on random inputs and requires every element within tolerance.
inline void check_correct(const Variant& v, int n) {
    skip_unless_all_run_here({v});  // a variant from outside lesson_variants() is held to the same rule
    const CheckProblem& p = problem(n);
    tut::DeviceBuffer<float> dC(size_t(n) * n);
    dC.poison();
    INFO("variant '" << v.name << "', N = " << n << ", reference: "
                     << (p.reference_is_fp32 ? "cuBLAS FP32" : "CPU double"));
    INFO(tut_checks::exercise_hint());
    REQUIRE_NOTHROW(v.run(n, p.dA(), p.dB(), dC.get()));
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    const tut::Comparison c = p.check(v, dC);
    INFO(c.describe());
    REQUIRE(c.ok());
}

/// Requires `v` to refuse size n with tut::Unsupported before touching memory.
inline void check_refuses(const Variant& v, int n) {
    INFO("variant '" << v.name << "' must refuse N = " << n << " with tut::Unsupported");
    REQUIRE_THROWS_AS(v.run(n, nullptr, nullptr, nullptr), tut::Unsupported);
}

/// The lesson's variant called `name` (the check fails if there is none).
inline Variant variant_named(const std::string& name) {
    for (const Variant& v : lesson_variants())
        if (v.name == name) return v;
    FAIL("the lesson has no variant named '" << name << "'");
    return Variant{};
}

/// Every variant of the lesson, checked at each size.
inline void check_all_correct(const std::vector<int>& sizes) {
    const auto variants = lesson_variants();
    REQUIRE(!variants.empty());
    for (const Variant& v : variants)
        for (int n : sizes) check_correct(v, n);
}

/// Relative L2 error of `v` at the problem's size against its reference, after requiring
/// every element within tolerance.
inline double relative_error(const Variant& v, const CheckProblem& p) {
    skip_unless_all_run_here({v});
    tut::DeviceBuffer<float> dC(size_t(p.n) * p.n);
    dC.poison();
    REQUIRE_NOTHROW(v.run(p.n, p.dA(), p.dB(), dC.get()));
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    const tut::Comparison c = p.check(v, dC);
    INFO("variant '" << v.name << "': " << c.describe());
    REQUIRE(c.ok());
    return c.rel_l2_error;
}

/// A tensor-core (TF32) variant is as accurate as the library's TF32: at N = 512, against
/// the CPU reference in double, its relative L2 error is at most twice cuBLAS TF32's on the
/// same inputs. (Rounding the inputs to TF32 gives about cuBLAS's error; truncating them,
/// about 1.6 times it.) The error must also be a TF32 one, far above FP32's 1e-7: a kernel
/// that secretly computes in FP32 is not the lesson's.
inline void check_tf32_accuracy(const Variant& v) {
    const int n = 512;
    const CheckProblem& p = problem(n);
    REQUIRE(!p.reference_is_fp32);
    tut::sgemm::Cublas tf32_library(CUBLAS_TF32_TENSOR_OP_MATH);
    Variant library = tut::sgemm::library_variant("cuBLAS TF32", nullptr);
    library.input_roundoff = std::ldexp(1.0, -11);
    tut::DeviceBuffer<float> dC(size_t(n) * n);
    dC.poison();
    tf32_library.sgemm(n, p.dA(), p.dB(), dC.get());
    TUT_CUDA(cudaDeviceSynchronize());
    const tut::Comparison lib = p.check(library, dC);
    INFO(tut_checks::exercise_hint());
    const double error = relative_error(v, p);
    CAPTURE(error, lib.rel_l2_error);
    CHECK(error <= 2 * lib.rel_l2_error);
    CHECK(error > 1e-6);
}

inline void check_all_refuse(const std::vector<int>& sizes) {
    for (const Variant& v : lesson_variants())
        for (int n : sizes) check_refuses(v, n);
}

}  // namespace sgemm_checks
