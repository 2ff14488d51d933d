/// @file sgemm_checks.hpp
/// @brief Checks shared by the SGEMM lessons whose variants compute on device matrices (all
/// but lesson 02): correctness at a size, refusal of a size, TF32 accuracy.
///
/// Small sizes are compared with a double-precision CPU reference, large ones with
/// cuBLAS FP32; the tolerance is tut::sgemm::tolerance() (see its comment), with the input
/// roundoff the check names. C is poisoned (NaN) before every run, so unwritten elements
/// fail, and sits between guard zones (sgemm_check_inputs.hpp), so a write outside it fails.
/// Above the CPU reference's sizes the inputs are generated, multiplied and compared on
/// the GPU (device_compare.hpp): the same values and the same rule, without moving
/// 256 MB matrices through host memory for every variant.
///
/// Sizes: every variant at the tiny and odd sizes of kSmallSizes and at kLargeSizes (one
/// that fits in L2, one whose matrices do not); one variant per lesson, named by the
/// lesson's check, at the largest size the track claims (kLargestSize). That keeps each
/// lesson's check to a few seconds without leaving the largest size unchecked.
#pragma once

#include "device_compare.hpp"
#include "sgemm_check_inputs.hpp"

namespace lesson {
/// The lesson's variants, defined in its .cu (lessons/sgemm/*/ or solutions/sgemm/*/).
std::vector<tut::sgemm::Variant> variants();
}  // namespace lesson

namespace sgemm_checks {

using tut::sgemm::Variant;

/// Inputs of size n on the GPU and a way to judge a C computed from them. Up to
/// tut::sgemm::Operands::kCpuReferenceMaxN the host operands (CPU reference in double);
/// above it A and B are generated on the GPU (the same values), the reference and the
/// error scale |A||B| come from cuBLAS FP32, and the comparison runs on the GPU.
class CheckProblem {
  public:
    explicit CheckProblem(int n_) : n(n_) {
        if (n <= tut::sgemm::Operands::kCpuReferenceMaxN) {
            host_ = &host_operands(n);
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

    /// Compares a device result with the reference, for inputs of unit roundoff `input_roundoff`.
    tut::Comparison check(const tut_checks::GuardedBuffer<float>& C, double input_roundoff) const {
        if (host_) return host_->check(C.download().data(), input_roundoff);
        return tut_checks::compare_on_device(C.get(), c_ref_.get(), C.size(),
                                             tut::sgemm::tolerance(n, input_roundoff, reference_is_fp32), scale_.get());
    }

  private:
    tut::sgemm::Operands* host_ = nullptr;
    tut::DeviceBuffer<float> a_, b_, c_ref_, scale_;
};

/// One problem per size, shared by all variants of the lesson.
inline CheckProblem& problem(int n) {
    static std::map<int, std::unique_ptr<CheckProblem>> cache;
    auto& p = cache[n];
    if (!p) p = std::make_unique<CheckProblem>(n);
    return *p;
}

/// The lesson's variants called `names` (see named()).
inline std::vector<Variant> variants_named(const std::vector<std::string>& names) {
    return named(lesson::variants(), names);
}

/// The lesson's variant called `name` (see named()).
inline Variant variant_named(const std::string& name) { return variants_named({name}).front(); }

/// Runs `v` at size n, C between guard zones, and requires nothing written outside C and
/// every element of C within tolerance. The relative L2 error of C.
inline double check_variant(const Variant& v, int n, double input_roundoff = 0) {
    skip_unless_all_run_here(std::vector<Variant>{v});
    const CheckProblem& p = problem(n);
    tut_checks::GuardedBuffer<float> C(size_t(n) * n, guard_elements(n));
    INFO("variant '" << v.name << "', N = " << n << ", reference: "
                     << (p.reference_is_fp32 ? "cuBLAS FP32" : "CPU double"));
    INFO(tut_checks::exercise_hint());
    REQUIRE_NOTHROW(v.run(n, p.dA(), p.dB(), C.get()));
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    const std::string damage = C.damage();
    INFO(damage);
    REQUIRE(damage.empty());
    const tut::Comparison c = p.check(C, input_roundoff);
    INFO(c.describe());
    REQUIRE(c.ok());
    return c.rel_l2_error;
}

/// The lesson's variants called `names`, each checked at each of `sizes`.
inline void check_correct(const std::vector<std::string>& names, const std::vector<int>& sizes,
                          double input_roundoff = 0) {
    for (const Variant& v : variants_named(names))
        for (int n : sizes) check_variant(v, n, input_roundoff);
}

/// Requires each of the lesson's variants called `names` to refuse each of `sizes` with
/// tut::Unsupported before touching memory.
inline void check_refuses(const std::vector<std::string>& names, const std::vector<int>& sizes) {
    for (const Variant& v : variants_named(names))
        for (int n : sizes) {
            INFO("variant '" << v.name << "' must refuse N = " << n << " with tut::Unsupported");
            REQUIRE_THROWS_AS(v.run(n, nullptr, nullptr, nullptr), tut::Unsupported);
        }
}

/// A tensor-core (TF32) variant is as accurate as the library's TF32: at N = 512, against
/// the CPU reference in double, its relative L2 error is at most twice cuBLAS TF32's on the
/// same inputs. (Rounding the inputs to TF32 gives about cuBLAS's error; truncating them,
/// about 1.6 times it.) The error must also be a TF32 one, far above FP32's 1e-7: a kernel
/// that secretly computes in FP32 is not the lesson's.
inline void check_tf32_accuracy(const std::string& name) {
    const Variant v = variant_named(name);
    const int n = 512;
    const CheckProblem& p = problem(n);
    REQUIRE(!p.reference_is_fp32);
    tut::sgemm::Cublas tf32_library(CUBLAS_TF32_TENSOR_OP_MATH);
    tut_checks::GuardedBuffer<float> C(size_t(n) * n, guard_elements(n));
    tf32_library.sgemm(n, p.dA(), p.dB(), C.get());
    TUT_CUDA(cudaDeviceSynchronize());
    const tut::Comparison library = p.check(C, kTf32Roundoff);
    INFO(tut_checks::exercise_hint());
    const double error = check_variant(v, n, kTf32Roundoff);
    CAPTURE(error, library.rel_l2_error);
    CHECK(error <= 2 * library.rel_l2_error);
    CHECK(error > 1e-6);
}

}  // namespace sgemm_checks
