/// @file sgemm_checks.hpp
/// @brief Checks shared by the SGEMM lessons: correctness at a size, refusal of a size.
///
/// Small sizes are compared with a double-precision CPU reference, large ones with
/// cuBLAS FP32; the tolerance is tut::sgemm::tolerance() (see its comment).
/// The output is poisoned (NaN) before every run, so unwritten elements fail.
#pragma once

#include "catch.hpp"
#include "lesson_hint.hpp"
#include "tut/sgemm.hpp"

#include <map>
#include <memory>

namespace sgemm_checks {

using tut::sgemm::Variant;

/// Tiny sizes and sizes that are not multiples of any tile (16, 32, 64...).
inline const std::vector<int> kSmallSizes{1, 2, 3, 5, 16, 17, 31, 33, 64, 100, 257, 512};
/// Large sizes, against cuBLAS, up to the largest every lesson claims.
inline const std::vector<int> kLargeSizes{1000, 2048, tut::sgemm::kMaxN};

inline tut::sgemm::Cublas& cublas() {
    static tut::sgemm::Cublas handle;
    return handle;
}

/// One problem per size, shared by all variants of the lesson (inputs and reference are costly at 8192).
inline tut::sgemm::Problem& problem(int n) {
    static std::map<int, std::unique_ptr<tut::sgemm::Problem>> cache;
    auto& p = cache[n];
    if (!p) {
        p = std::make_unique<tut::sgemm::Problem>(n, 1000 + n);
        p->prepare_reference(cublas());
    }
    return *p;
}

/// Runs `v` at size n on random inputs and requires every element within tolerance.
inline void check_correct(const Variant& v, int n) {
    tut::sgemm::Problem& p = problem(n);
    tut::DeviceBuffer<float> dC(size_t(n) * n);
    dC.poison();
    INFO("variant '" << v.name << "', N = " << n << ", reference: "
                     << (p.reference_is_fp32 ? "cuBLAS FP32" : "CPU double"));
    INFO(tut_checks::exercise_hint());
    REQUIRE_NOTHROW(v.run(n, p.dA.get(), p.dB.get(), dC.get()));
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

/// Every variant of the lesson, checked at each size.
inline void check_all_correct(const std::vector<int>& sizes) {
    const auto variants = lesson::sgemm_variants();
    REQUIRE(!variants.empty());
    for (const Variant& v : variants)
        for (int n : sizes) check_correct(v, n);
}

inline void check_all_refuse(const std::vector<int>& sizes) {
    for (const Variant& v : lesson::sgemm_variants())
        for (int n : sizes) check_refuses(v, n);
}

}  // namespace sgemm_checks
