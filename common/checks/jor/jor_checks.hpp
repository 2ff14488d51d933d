/// @file jor_checks.hpp
/// @brief Checks shared by the JOR lessons: solve generated systems of N = 1 ... 8192 in
/// float and double, report a diverging system as not converged, refuse what cannot be
/// solved before any work.
///
/// Every solve writes into a poisoned (NaN) x and is judged against the known x*: max
/// |x - x*| within tut::jor::error_bound() (a bound proven for any summation order, from
/// the contraction factor and the tolerance; see jor.hpp), and the iteration count within
/// 3 of the CPU `scalar` version's on the same system (the float sums of a GPU round
/// differently, which may move the last sweep's test either way; on the CPU the orders
/// differ by at most one).
#pragma once

#include "catch.hpp"
#include "lesson_hint.hpp"
#include "reference_iterations.hpp"
#include "tut/jor_cpu.hpp"
#include "tut/jor_gpu.hpp"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace jor_checks {

using tut::jor::DeviceSystem;
using tut::jor::SolveOptions;
using tut::jor::SolveResult;
using tut::jor::StopRule;
using tut::jor::Variant;

/// The sizes every lesson solves: tiny, around a block of 128 threads, not a multiple of
/// the 16-byte vector width (1, 2, 3, 127), and the largest the tour runs.
inline const std::vector<int> kSizes{1, 2, 3, 127, 128, 1000, 8192};
inline constexpr int kIterationSlack = 3;

/// The CPU `scalar` version's iterations on matrix 0 of size n.
template <class T>
int scalar_iterations(int n, const SolveOptions& opt) {
    if (n == kReferenceN && opt.alpha == tut::jor::kAlpha && opt.tolerance == tut::jor::default_tolerance<T>()) {
        const bool f = sizeof(T) == sizeof(float), m = opt.stop == StopRule::min;
        return f ? (m ? kScalarIterations8192FloatMin : kScalarIterations8192Float)
                 : (m ? kScalarIterations8192DoubleMin : kScalarIterations8192Double);
    }
    const tut::jor::System<T> sys = tut::jor::make_system<T>(n);
    std::vector<T> x(static_cast<size_t>(n));
    return tut::jor::iterate_cpu(tut::jor::CpuVariant::scalar, sys.A.data(), sys.b.data(), n, opt, x.data()).iterations;
}

template <class T>
SolveOptions default_options(StopRule stop) {
    SolveOptions opt;
    opt.tolerance = tut::jor::default_tolerance<T>();
    opt.stop = stop;
    return opt;
}

/// The lesson's variants. There must be at least one, and each must have a factory for
/// float or double: the checks skip a type without one, so an empty list (or a variant with
/// no factory) would otherwise pass every check without solving anything.
inline std::vector<Variant> lesson_variants() {
    std::vector<Variant> variants = lesson::jor_variants();
    REQUIRE(!variants.empty());
    for (const Variant& v : variants) {
        INFO("variant '" << v.name << "' has neither make_float nor make_double");
        REQUIRE((v.make_float || v.make_double));
    }
    return variants;
}

/// Solves matrix 0 of each size twice (the second solve catches state left behind).
template <class T>
void check_solves(const Variant& v, const std::vector<int>& sizes) {
    const tut::jor::Factory<T>& make = tut::jor::factory<T>(v);
    if (!make) return;
    for (int n : sizes) {
        DeviceSystem<T> sys(n);
        tut::jor::generate_system(sys, tut::jor::kSeed, 0);
        const SolveOptions opt = default_options<T>(v.stop);
        const double q = tut::jor::contraction_factor(sys, opt.alpha);
        const int reference = scalar_iterations<T>(n, opt);
        INFO("variant '" << v.name << "', N = " << n << ", " << tut::jor::type_name<T>() << ", "
                         << tut::jor::stop_rule_name(v.stop) << " rule; CPU scalar: " << reference << " iterations");
        INFO(tut_checks::exercise_hint());
        std::unique_ptr<tut::jor::Solver<T>> solver;
        REQUIRE_NOTHROW(solver = make(sys, opt));
        tut::DeviceBuffer<T> x(static_cast<size_t>(n));
        for (int attempt = 0; attempt < 2; ++attempt) {
            x.poison();
            SolveResult r;
            REQUIRE_NOTHROW(r = solver->solve(x.get()));
            const tut::jor::SolveCheck c = tut::jor::check_solution(sys, x.download(), r, opt, q);
            INFO("solve " << attempt + 1 << ": " << r.iterations << " iterations, converged " << r.converged
                          << ", max error " << c.max_error << " (bound " << c.bound << "): " << c.verdict);
            REQUIRE(r.converged);
            REQUIRE(c.ok);
            REQUIRE(std::abs(r.iterations - reference) <= kIterationSlack);
        }
    }
}

/// Every variant of the lesson, both types, all of kSizes.
inline void check_all_solve(const std::vector<int>& sizes = kSizes) {
    for (const Variant& v : lesson_variants()) {
        check_solves<float>(v, sizes);
        check_solves<double>(v, sizes);
    }
}

/// A = all ones (diagonal 1 too): far from diagonally dominant; JOR's iteration matrix
/// then has an eigenvalue of about -a (n - 1), so x grows without bound.
template <class T>
void check_diverges(const Variant& v, int n) {
    const tut::jor::Factory<T>& make = tut::jor::factory<T>(v);
    if (!make) return;
    std::vector<T> A(size_t(n) * n, T(1)), b(size_t(n), T(1));
    DeviceSystem<T> sys = tut::jor::upload_system(A, b, n);
    SolveOptions opt = default_options<T>(v.stop);
    opt.max_iterations = 60;
    INFO("variant '" << v.name << "', all-ones " << n << " x " << n << " matrix, " << tut::jor::type_name<T>());
    INFO(tut_checks::exercise_hint());
    std::unique_ptr<tut::jor::Solver<T>> solver;
    REQUIRE_NOTHROW(solver = make(sys, opt));
    tut::DeviceBuffer<T> x(static_cast<size_t>(n));
    x.poison();
    const SolveResult r = solver->solve(x.get());
    INFO(r.iterations << " iterations, last dx " << r.last.dx_max << ", x " << r.last.x_max);
    REQUIRE_FALSE(r.converged);
    REQUIRE(r.iterations == opt.max_iterations);
}

/// 37: the scalar path (not a multiple of the vector width); 64: the vector path.
inline void check_all_diverge() {
    for (const Variant& v : lesson_variants())
        for (int n : {37, 64}) {
            check_diverges<float>(v, n);
            check_diverges<double>(v, n);
        }
}

/// What is refused, before any work: bad options by every factory, bad systems on upload,
/// and a size that does not fit device memory.
template <class T>
void check_refuses(const Variant& v) {
    const tut::jor::Factory<T>& make = tut::jor::factory<T>(v);
    if (!make) return;
    INFO("variant '" << v.name << "', " << tut::jor::type_name<T>());
    DeviceSystem<T> sys(16);
    tut::jor::generate_system(sys, tut::jor::kSeed, 0);
    for (double alpha : {0.0, 1.5, -0.5, double(NAN)}) {
        SolveOptions opt = default_options<T>(v.stop);
        opt.alpha = alpha;
        INFO("a = " << alpha);
        REQUIRE_THROWS_AS(make(sys, opt), tut::Unsupported);
    }
    for (double tol : {0.0, -1.0, double(INFINITY)}) {
        SolveOptions opt = default_options<T>(v.stop);
        opt.tolerance = tol;
        INFO("tol = " << tol);
        REQUIRE_THROWS_AS(make(sys, opt), tut::Unsupported);
    }
    const int n = 8;
    std::vector<T> A(size_t(n) * n, T(0)), b(size_t(n), T(1));
    for (int j = 0; j < n; ++j) A[size_t(j) * n + j] = T(4);
    A[3 * n + 3] = T(0);  // a zero on the diagonal
    REQUIRE_THROWS_AS(tut::jor::upload_system(A, b, n), tut::Unsupported);
    A[3 * n + 3] = T(4);
    A[5] = T(NAN);
    REQUIRE_THROWS_AS(tut::jor::upload_system(A, b, n), tut::Unsupported);
    A[5] = T(INFINITY);
    REQUIRE_THROWS_AS(tut::jor::upload_system(A, b, n), tut::Unsupported);
    A[5] = T(0);
    b[2] = T(NAN);
    REQUIRE_THROWS_AS(tut::jor::upload_system(A, b, n), tut::Unsupported);
    // 2^19 unknowns: 1 TiB of float, more than any device holds.
    REQUIRE_THROWS_AS(tut::jor::require_fits_device(tut::jor::kMaxN, sizeof(T)), tut::Unsupported);
}

inline void check_all_refuse() {
    for (const Variant& v : lesson_variants()) {
        check_refuses<float>(v);
        check_refuses<double>(v);
    }
}

/// The device generator gives the host generator's bits (make_system()).
template <class T>
void check_generator(int n, uint32_t matrix) {
    INFO("N = " << n << ", matrix " << matrix << ", " << tut::jor::type_name<T>());
    const tut::jor::System<T> host = tut::jor::make_system<T>(n, tut::jor::kSeed, matrix);
    DeviceSystem<T> dev(n);
    tut::jor::generate_system(dev, tut::jor::kSeed, matrix);
    REQUIRE(dev.A.download() == host.A);
    REQUIRE(dev.b.download() == host.b);
    REQUIRE(dev.x_star == host.x_star);
}

}  // namespace jor_checks
