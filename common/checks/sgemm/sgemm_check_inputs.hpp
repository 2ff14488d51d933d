/// @file sgemm_check_inputs.hpp
/// @brief What every SGEMM check shares, lesson 02's host pipelines included: the sizes
/// tested, the inputs and their references, the guard zones around an output, and the
/// rule that finds the variants a check names and skips the program when this GPU cannot
/// run them.
///
/// The checks decide what is tested: each names the variants it requires (a variant the
/// lesson lacks fails the check, naming it), the sizes, and the arithmetic each variant is
/// judged by (kTf32Roundoff for the tensor-core variants); nothing is read from the
/// student's variants but their names and what they need of the GPU.
#pragma once

#include "catch.hpp"
#include "guarded.hpp"
#include "lesson_hint.hpp"
#include "tut/sgemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sgemm_checks {

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
/// Sizes every variant must refuse (tut::Unsupported) before touching memory.
inline const std::vector<int> kRefusedSizes{0, -1, tut::sgemm::kMaxN + 1};

/// The unit roundoff of TF32 inputs (10 of FP32's 23 mantissa bits): the tensor-core
/// variants are judged with it (see tut::sgemm::tolerance()); the others with 0.
inline const double kTf32Roundoff = std::ldexp(1.0, -11);

inline tut::sgemm::Cublas& cublas() {
    static tut::sgemm::Cublas handle;
    return handle;
}

/// The seed of size n's inputs (A from it, B from it + 1, as tut::sgemm::Operands does).
inline uint64_t seed_for(int n) { return 1000 + uint64_t(n); }

/// The operands of size n with their reference, on the host and the device (one per size).
inline tut::sgemm::Operands& host_operands(int n) {
    static std::map<int, std::unique_ptr<tut::sgemm::Operands>> cache;
    auto& p = cache[n];
    if (!p) {
        p = std::make_unique<tut::sgemm::Operands>(n, seed_for(n));
        p->prepare_reference(cublas());
    }
    return *p;
}

/// Elements of guard zone on each side of an n x n output: 32 rows and 128 columns, so that
/// a block that stores its whole tile of up to 32 rows past the last row of C (N % 32 != 0),
/// or past its last column, writes into the zone; rounded up to 256 bytes, so that the output
/// starts as aligned as cudaMalloc's memory.
inline size_t guard_elements(int n) { return (32 * size_t(n) + 128 + 63) / 64 * 64; }

/// Ends the check program with tut::kSkipExitCode (77), saying why, unless this GPU runs every
/// one of `variants`. A test case that returned early for a variant the GPU lacks would
/// assert nothing, and Catch2 passes such a case: an untouched exercise would score there.
/// Catch2 2.x cannot mark one case skipped (SKIP() arrived in 3.3), so the whole program is
/// skipped, which CTest and the grader report as such, with this reason.
template <class V>
void skip_unless_all_run_here(const std::vector<V>& variants) {
    const std::string why = tut::sgemm::unmet_needs(variants, tut::compute_capability(),
                                                    tut::sgemm::max_dynamic_shared_per_block());
    if (why.empty()) return;
    std::fflush(stdout);  // what Catch2 printed so far, before the reason
    std::printf("SKIPPED: these checks test variants that this GPU cannot run:\n%s\n", why.c_str());
    std::fflush(nullptr);
    // _Exit, not exit: this runs inside a test case, where a reporter (JUnit) has pointed
    // std::cout at a buffer that exit()'s static destructors would free before flushing
    // std::cout into it (a segmentation fault, not 77).
    std::_Exit(tut::kSkipExitCode);
}

/// The variants of `all` (the lesson's) called `names`, in that order. A name the lesson
/// lacks fails the check, naming it; the program is skipped unless this GPU runs them all.
template <class V>
std::vector<V> named(const std::vector<V>& all, const std::vector<std::string>& names) {
    std::vector<V> out;
    for (const std::string& name : names) {
        const auto v = std::find_if(all.begin(), all.end(), [&](const V& x) { return x.name == name; });
        if (v == all.end()) {
            std::string has;
            for (const V& x : all) has += (has.empty() ? "'" : ", '") + x.name + "'";
            FAIL("the checks require a variant named '" << name << "', and lesson::variants() has none (it has: "
                                                        << has << "). Was it removed or renamed?");
        }
        out.push_back(*v);
    }
    skip_unless_all_run_here(out);
    return out;
}

}  // namespace sgemm_checks
