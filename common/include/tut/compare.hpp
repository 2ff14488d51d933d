/// @file compare.hpp
/// @brief Comparing a result against a reference, with a tolerance you can justify.
///
/// tut::compare() checks every element: element i passes when it is finite and
///
///     |got[i] - ref[i]| <= tolerance * scale[i]
///
/// where `scale` is the size of the quantity the rounding error is proportional to
/// (for a dot product that is sum_k |a_k b_k|, not |sum_k a_k b_k|, which cancellation
/// can make arbitrarily small). With no scale array, scale[i] = max(|ref[i]|, 1).
/// It also reports the relative L2 norm of the error and the first and the worst
/// failing index, which is what a student needs to find an indexing bug.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

namespace tut {

struct Comparison {
    size_t count = 0;
    size_t bad = 0;                 ///< elements outside the tolerance (NaN and Inf included)
    size_t nonfinite = 0;           ///< NaN or Inf in `got`
    size_t first_bad = SIZE_MAX;    ///< index of the first failing element, SIZE_MAX if none
    size_t worst = SIZE_MAX;        ///< index of the largest error relative to its allowance
    double worst_got = 0, worst_ref = 0, worst_allowed = 0;
    double first_got = 0, first_ref = 0;
    double max_abs_error = 0;       ///< over finite elements
    double rel_l2_error = 0;        ///< ||got - ref||_2 / ||ref||_2 (over finite elements)
    bool ok() const { return bad == 0; }

    /// One line for a log or a failed check.
    std::string describe() const {
        char buf[512];
        if (ok()) {
            std::snprintf(buf, sizeof buf, "all %zu elements within tolerance (rel. L2 error %.3g, max abs error %.3g)",
                          count, rel_l2_error, max_abs_error);
        } else if (worst == SIZE_MAX) {  // every bad element is NaN or infinite: no worst ratio
            std::snprintf(buf, sizeof buf,
                          "%zu of %zu elements wrong (%zu not finite); first bad index %zu: got %.9g, expected %.9g",
                          bad, count, nonfinite, first_bad, first_got, first_ref);
        } else {
            std::snprintf(buf, sizeof buf,
                          "%zu of %zu elements wrong (%zu not finite); first bad index %zu: got %.9g, expected %.9g; "
                          "worst index %zu: got %.9g, expected %.9g, allowed error %.3g; rel. L2 error %.3g",
                          bad, count, nonfinite, first_bad, first_got, first_ref, worst, worst_got, worst_ref,
                          worst_allowed, rel_l2_error);
        }
        return buf;
    }
};

/// Compares `got` with `ref` element by element (see the file comment). `scale` may be null.
template <class G, class R, class S = double>
Comparison compare(const G* got, const R* ref, size_t count, double tolerance, const S* scale = nullptr) {
    Comparison c;
    c.count = count;
    double err2 = 0, ref2 = 0, worst_ratio = -1;
    for (size_t i = 0; i < count; ++i) {
        const double g = static_cast<double>(got[i]);
        const double r = static_cast<double>(ref[i]);
        const double s = scale ? static_cast<double>(scale[i]) : std::fmax(std::fabs(r), 1.0);
        const double allowed = tolerance * s;
        const bool finite = std::isfinite(g);
        const double err = finite ? std::fabs(g - r) : std::numeric_limits<double>::infinity();
        if (finite) {
            err2 += (g - r) * (g - r);
            c.max_abs_error = std::fmax(c.max_abs_error, err);
        } else {
            ++c.nonfinite;
        }
        ref2 += r * r;
        if (!(err <= allowed)) {
            if (c.bad++ == 0) {
                c.first_bad = i;
                c.first_got = g;
                c.first_ref = r;
            }
            const double ratio = allowed > 0 ? err / allowed : std::numeric_limits<double>::infinity();
            if (ratio > worst_ratio) {
                worst_ratio = ratio;
                c.worst = i;
                c.worst_got = g;
                c.worst_ref = r;
                c.worst_allowed = allowed;
            }
        }
    }
    c.rel_l2_error = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
    return c;
}

}  // namespace tut
