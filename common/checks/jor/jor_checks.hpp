/// @file jor_checks.hpp
/// @brief Checks shared by the JOR lessons: solve generated systems of N = 1 ... 8192 in
/// float and double, report a diverging system as not converged, refuse what cannot be
/// solved before any work.
///
/// Each lesson's check file names the variants it requires (Required: the name, the
/// element types, the stopping rule); they are looked up in lesson::variants() by name,
/// and one that is missing fails the check with its name. The sizes, the tolerances and
/// the stopping rules come from here, never from the lesson.
///
/// Every solve writes into a poisoned (NaN) x between two guard zones and is judged
/// against the known x*: max |x - x*| within tut::jor::error_bound() (a bound proven for
/// any summation order, from the contraction factor and the tolerance; see jor.hpp), the
/// iteration count within 3 of the CPU `scalar` version's on the same system (the float
/// sums of a GPU round differently, which may move the last sweep's test either way; on
/// the CPU the orders differ by at most one), and both guard zones untouched.
///
/// The speed case of lessons 2 and 6 is judge_against_bandwidth_floor(); that of lessons 4, 5
/// and 8, whose programs keep the previous approach as a variant, judge_against_variant()
/// (lesson 7's, which keeps one too, times its pair one after the other: check_07_l2_reuse.cpp).
#pragma once

#include "catch.hpp"
#include "guarded.hpp"
#include "lesson_hint.hpp"
#include "perf_gate.hpp"
#include "reference_iterations.hpp"
#include "tut/jor_cpu.hpp"
#include "tut/jor_gpu.hpp"

#include <algorithm>
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

/// The sizes every lesson solves: tiny, around a block of 128 threads, not a multiple of
/// the 16-byte vector width (1, 2, 3, 127), and the largest the tour runs.
inline const std::vector<int> kSizes{1, 2, 3, 127, 128, 1000, 8192};
inline constexpr int kIterationSlack = 3;
/// Elements of guard zone on each side of x: a grid of blocks of up to 1024 threads, one
/// row each, overhangs the last row by at most 1023.
inline constexpr size_t kGuard = 1024;

/// Which element types a required variant has.
enum class Types { both, float_only, double_only };

/// A variant the lesson must have, and how the checks solve it.
struct Required {
    std::string name;
    Types types = Types::both;
    StopRule stop = StopRule::norm;  ///< StopRule::min only for lesson 01's reproduction of the report
};

template <class T>
bool has_type(const Required& r) {
    return r.types == Types::both || (r.types == Types::float_only) == (sizeof(T) == sizeof(float));
}

/// The lesson's variant `name` for elements of type T; fails the check, naming it, when
/// the lesson has none (a variant removed or renamed in the exercise).
template <class T>
tut::jor::Variant<T> variant_named(const std::string& name) {
    const tut::jor::Variants all = lesson::variants();
    const std::vector<tut::jor::Variant<T>>& list = tut::jor::variants_of<T>(all);
    for (const tut::jor::Variant<T>& v : list)
        if (v.name == name) {
            INFO("variant '" << name << "' (" << tut::jor::type_name<T>() << ") has no function to run");
            REQUIRE(v.run);
            return v;
        }
    std::string names;
    for (const tut::jor::Variant<T>& v : list) names += " '" + v.name + "'";
    FAIL("the lesson has no " << tut::jor::type_name<T>() << " variant named '" << name
                              << "' (its variants of that type:" << (names.empty() ? " none" : names) << ")");
    return {};
}

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

/// Solves matrix 0 of each size twice (the second solve catches state left behind), at the
/// type's default tolerance or, when `tolerance` is positive, at that one (the error bound
/// and the CPU's iterations then follow it).
template <class T>
void check_solves(const Required& required, const std::vector<int>& sizes, double tolerance = 0.0) {
    if (!has_type<T>(required)) return;
    const tut::jor::Variant<T> v = variant_named<T>(required.name);
    for (int n : sizes) {
        DeviceSystem<T> sys(n);
        tut::jor::generate_system(sys, tut::jor::kSeed, 0);
        SolveOptions opt = default_options<T>(required.stop);
        if (tolerance > 0.0) opt.tolerance = tolerance;
        const double q = tut::jor::contraction_factor(sys, opt.alpha);
        const int reference = scalar_iterations<T>(n, opt);
        INFO("variant '" << v.name << "', N = " << n << ", " << tut::jor::type_name<T>() << ", "
                         << tut::jor::stop_rule_name(required.stop) << " rule, tol " << opt.tolerance
                         << "; CPU scalar: " << reference << " iterations");
        INFO(tut_checks::exercise_hint());
        std::unique_ptr<tut::jor::Solver<T>> solver;
        REQUIRE_NOTHROW(solver = v.run(sys, opt));
        tut_checks::GuardedBuffer<T> x(static_cast<size_t>(n), kGuard);
        for (int attempt = 0; attempt < 2; ++attempt) {
            x.poison();
            SolveResult r;
            REQUIRE_NOTHROW(r = solver->solve(x.get()));
            const tut::jor::SolveCheck c = tut::jor::check_solution(sys, x.download(), r, opt, q);
            INFO("solve " << attempt + 1 << ": " << r.iterations << " iterations, converged " << r.converged
                          << ", max error " << c.max_error << " (bound " << c.bound << "): " << c.verdict);
            const std::string damage = x.damage();
            INFO("x's guard zones: " << (damage.empty() ? "untouched" : damage));
            REQUIRE(damage.empty());
            REQUIRE(r.converged);
            REQUIRE(c.ok);
            REQUIRE(std::abs(r.iterations - reference) <= kIterationSlack);
        }
    }
}

/// Every required variant, both types, all of `sizes`.
inline void check_all_solve(const std::vector<Required>& required, const std::vector<int>& sizes = kSizes) {
    for (const Required& r : required) {
        check_solves<float>(r, sizes);
        check_solves<double>(r, sizes);
    }
}

/// A = all ones (diagonal 1 too): far from diagonally dominant; JOR's iteration matrix
/// then has an eigenvalue of about -a (n - 1), so x grows without bound.
template <class T>
void check_diverges(const Required& required, int n) {
    if (!has_type<T>(required)) return;
    const tut::jor::Variant<T> v = variant_named<T>(required.name);
    std::vector<T> A(size_t(n) * n, T(1)), b(size_t(n), T(1));
    DeviceSystem<T> sys = tut::jor::upload_system(A, b, n);
    SolveOptions opt = default_options<T>(required.stop);
    opt.max_iterations = 60;
    INFO("variant '" << v.name << "', all-ones " << n << " x " << n << " matrix, " << tut::jor::type_name<T>());
    INFO(tut_checks::exercise_hint());
    std::unique_ptr<tut::jor::Solver<T>> solver;
    REQUIRE_NOTHROW(solver = v.run(sys, opt));
    tut_checks::GuardedBuffer<T> x(static_cast<size_t>(n), kGuard);
    SolveResult r;
    REQUIRE_NOTHROW(r = solver->solve(x.get()));
    INFO(r.iterations << " iterations, last dx " << r.last.dx_max << ", x " << r.last.x_max);
    const std::string damage = x.damage();
    INFO("x's guard zones: " << (damage.empty() ? "untouched" : damage));
    REQUIRE(damage.empty());
    REQUIRE_FALSE(r.converged);
    REQUIRE(r.iterations == opt.max_iterations);
}

/// 37: the scalar path (not a multiple of the vector width); 64: the vector path.
inline void check_all_diverge(const std::vector<Required>& required) {
    for (const Required& r : required)
        for (int n : {37, 64}) {
            check_diverges<float>(r, n);
            check_diverges<double>(r, n);
        }
}

/// What is refused, before any work: bad options by every variant, bad systems on upload,
/// and a size that does not fit device memory.
template <class T>
void check_refuses(const Required& required) {
    if (!has_type<T>(required)) return;
    const tut::jor::Variant<T> v = variant_named<T>(required.name);
    INFO("variant '" << v.name << "', " << tut::jor::type_name<T>());
    DeviceSystem<T> sys(16);
    tut::jor::generate_system(sys, tut::jor::kSeed, 0);
    for (double alpha : {0.0, 1.5, -0.5, double(NAN)}) {
        SolveOptions opt = default_options<T>(required.stop);
        opt.alpha = alpha;
        INFO("a = " << alpha);
        REQUIRE_THROWS_AS(v.run(sys, opt), tut::Unsupported);
    }
    for (double tol : {0.0, -1.0, double(INFINITY)}) {
        SolveOptions opt = default_options<T>(required.stop);
        opt.tolerance = tol;
        INFO("tol = " << tol);
        REQUIRE_THROWS_AS(v.run(sys, opt), tut::Unsupported);
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

inline void check_all_refuse(const std::vector<Required>& required) {
    for (const Required& r : required) {
        check_refuses<float>(r);
        check_refuses<double>(r);
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

/// One sweep of a variant's solves: its median time, and the bytes it reads.
struct Sweep {
    double us = 0;
    double bytes = 0;  ///< A as the solver stores it, and three vectors
};

/// `v`'s solver for `sys` with the default options, once a first solve into x has converged
/// (a solve that does not converge is not timed: the case fails).
template <class T>
std::unique_ptr<tut::jor::Solver<T>> converged_solver(const tut::jor::Variant<T>& v, const DeviceSystem<T>& sys,
                                                      T* x) {
    std::unique_ptr<tut::jor::Solver<T>> solver;
    REQUIRE_NOTHROW(solver = v.run(sys, default_options<T>(StopRule::norm)));
    INFO("variant '" << v.name << "', N = " << sys.n << ": a solve that does not converge is not timed");
    INFO(tut_checks::exercise_hint());
    REQUIRE(solver->solve(x).converged);
    return solver;
}

/// `v`'s solves of matrix 0 of size n with the default options, timed by the host's clock:
/// the median microseconds per iteration, and the bytes one sweep reads. A solve that does
/// not converge is not timed (the case fails).
template <class T>
Sweep median_sweep(const tut::jor::Variant<T>& v, int n) {
    DeviceSystem<T> sys(n);
    tut::jor::generate_system(sys, tut::jor::kSeed, 0);
    tut::DeviceBuffer<T> x(static_cast<size_t>(n));
    const std::unique_ptr<tut::jor::Solver<T>> solver = converged_solver(v, sys, x.get());
    std::vector<double> iterations;
    perf_gate::Plan plan;
    plan.host_clock = true;
    const double ms = perf_gate::median_ms([&] { iterations.push_back(solver->solve(x.get()).iterations); }, plan);
    const double bytes = solver->matrix_bytes() + 3.0 * n * sizeof(T);
    return {1000 * ms / std::max(1.0, perf_gate::median_in_place(iterations)), bytes};
}

/// The speed case of lessons 2 and 4-6: `variant` solves matrix 0 of size n in T; its time
/// per sweep (median_sweep()) is held to the bandwidth floor (the bytes a sweep reads over
/// the device-to-device copy bandwidth measured here) and judged against this GPU's
/// threshold (perf_gate::judge(); common/checks/thresholds/). The check file fills m's
/// measure, size, previous_from and hint; the rest is set here.
template <class T>
void judge_against_bandwidth_floor(const std::string& case_name, perf_gate::Measurement m, const std::string& variant,
                                   int n) {
    const Sweep sweep = median_sweep(variant_named<T>(variant), n);
    const double floor_us = sweep.bytes / tut::measure_d2d_bandwidth_gbs() * 1e-3;
    m.ratio = floor_us / sweep.us;
    m.detail = perf_gate::fmt("%.2f us per sweep", sweep.us) + ", floor " + perf_gate::fmt("%.2f us", floor_us);
    m.spread_floor = 0.05;  // a solve paced by the host
    perf_gate::judge(case_name, m);
}

/// The speed case of a lesson whose program keeps the previous approach as a variant
/// (`baseline`): `variant` and `baseline` solve matrix 0 of size n in T in the same process,
/// on the same system, timed by the host's clock one solve of each in turn
/// (perf_gate::solves_beside()), so that both see the same clocks and the same host; the ratio
/// is the baseline's median time per sweep over the variant's, judged against this GPU's
/// threshold. Where a sweep is a few microseconds paced by the host, its absolute time moves
/// by tens of percent from one process to the next, the ratio of two timed side by side by a
/// few; a variant that is still the previous approach measures about 1.0. The check file
/// fills m's measure, size, previous_from and hint; the rest is set here.
template <class T>
void judge_against_variant(const std::string& case_name, perf_gate::Measurement m, const std::string& variant,
                           const std::string& baseline, int n) {
    DeviceSystem<T> sys(n);
    tut::jor::generate_system(sys, tut::jor::kSeed, 0);
    tut::DeviceBuffer<T> x(static_cast<size_t>(n));
    const std::unique_ptr<tut::jor::Solver<T>> own = converged_solver(variant_named<T>(variant), sys, x.get());
    const std::unique_ptr<tut::jor::Solver<T>> before = converged_solver(variant_named<T>(baseline), sys, x.get());
    const perf_gate::PerIteration t = perf_gate::solves_beside([&] { return own->solve(x.get()).iterations; },
                                                               [&] { return before->solve(x.get()).iterations; }, 30);
    m.ratio = t.yardstick_us / t.work_us;
    m.detail = "'" + variant + "' " + perf_gate::fmt("%.2f us", t.work_us) + " per sweep, '" + baseline + "' " +
               perf_gate::fmt("%.2f us", t.yardstick_us) + ", medians of " + std::to_string(t.samples);
    m.previous_measured = 1.0;  // the previous approach is the baseline itself
    m.spread_floor = 0.05;      // solves paced by the host
    perf_gate::judge(case_name, m);
}

}  // namespace jor_checks
