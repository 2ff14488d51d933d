/// @file cg_checks.hpp
/// @brief Checks shared by the CG lessons: solve to tolerance, stop when the matrix is not
/// positive definite or at the iteration limit, refuse what the lesson cannot solve.
///
/// Every solve writes into a poisoned (NaN) x between two guard zones, and is judged by
/// the true residual ||b - A x|| / ||b|| recomputed on the CPU in double
/// (tut::cg::check_solution(): within 2 tol; see its comment for why 2); a write outside x
/// fails. Iteration counts are held to the CPU reference in double (tut::cg::cg_cpu, the
/// same algorithm): float rounding may add a few.
///
/// The checks own what they test: each check file names the lesson's variants it requires
/// (Expected), with what the checks hold each to (plain CG or Jacobi PCG, and whether it
/// stops at the converging iteration or may run up to k - 1 past it). A variant is found
/// in lesson::variants() by its name only: one that is missing or renamed fails.
///
/// The speed case of lessons 5-9 is judge_against_bandwidth_floor(); that of lessons 3, 4 and
/// 10, whose programs keep the previous approach as a variant, is judge_against_variant().
#pragma once

#include "catch.hpp"
#include "guarded.hpp"
#include "lesson_hint.hpp"
#include "perf_gate.hpp"
#include "tut/cg.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cg_checks {

using tut::cg::Csr;
using tut::cg::Outcome;
using tut::cg::Preconditioner;
using tut::cg::SolveOptions;
using tut::cg::SolveResult;
using tut::cg::Variant;

constexpr double kTol = 1e-6;

/// Guard elements on each side of x: more than a whole block of 1024 threads writing four
/// rows each past the end (or before the start) of x. 16 KB, so x stays 16-byte aligned
/// (lesson 09 moves it as float4).
constexpr size_t kGuard = 4096;

/// When a variant decides that the solve is over, which bounds the loop bodies it may run
/// past the iteration that converged.
enum class Stops {
    at_convergence,  ///< looks every iteration (or the GPU decides): no iteration past it
    within_k,        ///< looks every check_every iterations: fewer than check_every past it
};

/// A variant the checks require of a lesson, and what they hold it to.
struct Expected {
    std::string name;               ///< the variant's name in lesson::variants()
    Preconditioner preconditioner;  ///< plain CG (lesson 01) or Jacobi PCG: the reference, the diagonal's refusal
    Stops stops;
};

/// The lesson's variant of this name: a check that requires it fails, naming it, when the
/// lesson has none (removed or renamed).
inline Variant variant_named(const std::string& name) {
    const std::vector<Variant> variants = lesson::variants();
    std::string names;
    for (const Variant& v : variants) {
        if (v.name == name) return v;
        names += " '" + v.name + "'";
    }
    FAIL("the checks test the variant '" << name << "', and the lesson has no variant of that name (it has:"
                                         << (names.empty() ? " none" : names) << ")");
    return {};
}

/// Iterations of the CPU double reference on the large problem (b = make_rhs(A, 2024)),
/// measured once with tut::cg::cg_cpu (76 s on one core, too slow to redo in every check).
constexpr int kLargeReferenceCg = 467;
constexpr int kLargeReferencePcg = 283;
/// The same for "diffusion 64x64x96" (393 216 rows, 10 324 600 nonzeros: 84 MB of CSR,
/// more than the L2 of an H100 or H200), measured once the same way.
constexpr int kMediumReferenceCg = 352;
constexpr int kMediumReferencePcg = 222;

/// The default problem fits lesson 08's on-chip layout (one block per SM, at most 512
/// rows and 8192 nonzeros per block) on a GPU with this many SMs or more: at 115 SMs the
/// fullest tile of 348 rows holds 8271 nonzeros. (H100 SXM and H200: 132.) A CPU check
/// (check_cg.cpp) recomputes it.
constexpr int kSmsForResidentDefault = 116;

/// common/checks/cg/data/, found from this header's own path (__FILE__ is the absolute path
/// the build gives the compiler).
inline std::string data_dir() {
    const std::string here = __FILE__;
    return here.substr(0, here.find_last_of("/\\") + 1) + "data/";
}

struct TestProblem {
    Csr A;
    std::vector<float> b;
    std::unique_ptr<tut::cg::DeviceMatrix> dA;
    tut::DeviceBuffer<float> db;
    std::map<bool, int> reference_iterations;  // preconditioned -> count
};

/// Small SPD problems: a 1x1, a diagonal with 1000 entries spread over two decades,
/// diffusion grids of sizes that are not multiples of any block, warp or lane count,
/// "dense 200" with 200 nonzeros per row (long rows: many passes of a sub-warp), and
/// "spd100" (common/checks/cg/data/spd100.mtx: 100 rows, fewer than one block's threads,
/// of 1 to 48 nonzeros, irregular; see make_spd100.py there).
inline const std::vector<std::string> kSmallProblems{"1x1",           "diagonal",        "chain 1x1x64",
                                                     "diffusion 3x3x3", "diffusion 5x7x11", "diffusion 33x17x9",
                                                     "dense 200",       "spd100"};

/// [[1, 2], [2, 1]] repeated `blocks` times along the diagonal: eigenvalues 3 and -1, a
/// positive diagonal (Jacobi accepts it), and with b = (1, 0, 1, 0, ...) p.Ap = -12 < 0
/// at the second iteration, with or without Jacobi.
inline Csr indefinite_blocks(int blocks) {
    std::vector<tut::cg::Triplet> t;
    for (int k = 0; k < blocks; ++k) {
        const int i = 2 * k;
        t.push_back({i, i, 1.0f});
        t.push_back({i, i + 1, 2.0f});
        t.push_back({i + 1, i, 2.0f});
        t.push_back({i + 1, i + 1, 1.0f});
    }
    return tut::cg::csr_from_triplets(2 * blocks, 2 * blocks, t, "indefinite 2x2 blocks x" + std::to_string(blocks));
}

inline Csr build_matrix(const std::string& name) {
    if (name == "default") return tut::cg::default_matrix();
    if (name == "large") return tut::cg::large_matrix();
    if (name == "1x1") return tut::cg::diagonal_matrix({4.0f});
    if (name == "diagonal") {
        std::vector<float> d(1000);
        tut::SplitMix64 rng(99);
        for (auto& v : d) v = float(std::pow(10.0, 2.0 * rng.uniform()));
        return tut::cg::diagonal_matrix(d);
    }
    if (name == "chain 1x1x64") return tut::cg::diffusion_27pt(1, 1, 64);
    if (name == "diffusion 3x3x3") return tut::cg::diffusion_27pt(3, 3, 3);
    if (name == "diffusion 5x7x11") return tut::cg::diffusion_27pt(5, 7, 11);
    if (name == "diffusion 33x17x9") return tut::cg::diffusion_27pt(33, 17, 9);
    if (name == "diffusion 64x64x96") return tut::cg::diffusion_27pt(64, 64, 96);
    if (name == "spd100") return tut::cg::read_matrix_market_file(data_dir() + "spd100.mtx");
    if (name == "dense 200") {  // 200 I + 1 1^T: eigenvalues 200 and 400, so CG needs 2 iterations
        std::vector<tut::cg::Triplet> t;
        for (int i = 0; i < 200; ++i)
            for (int j = 0; j < 200; ++j) t.push_back({i, j, i == j ? 201.0f : 1.0f});
        return tut::cg::csr_from_triplets(200, 200, t, "dense 200");
    }
    if (name == "indefinite 2x2") return indefinite_blocks(1);
    if (name == "indefinite 2000") return indefinite_blocks(1000);
    throw std::invalid_argument("no test problem named " + name);
}

/// One problem per name, built once per check executable (the large one is 450 MB).
/// Its right-hand side is b = make_rhs(A, 2024) (the indefinite ones: b = (1, 0, 1, 0, ...)).
inline TestProblem& problem(const std::string& name) {
    static std::map<std::string, std::unique_ptr<TestProblem>> cache;
    auto& p = cache[name];
    if (!p) {
        p = std::make_unique<TestProblem>();
        p->A = build_matrix(name);
        if (name.rfind("indefinite", 0) == 0) {
            p->b.assign(size_t(p->A.rows), 0.0f);
            for (size_t i = 0; i < p->b.size(); i += 2) p->b[i] = 1.0f;
        } else {
            p->b = tut::cg::make_rhs(p->A, 2024);
        }
        p->dA = std::make_unique<tut::cg::DeviceMatrix>(p->A);
        p->db = tut::DeviceBuffer<float>(p->b);
    }
    return *p;
}

/// Iterations the CPU double reference needs (the same algorithm in double).
inline int reference_iterations(const std::string& name, bool preconditioned) {
    if (name == "large") return preconditioned ? kLargeReferencePcg : kLargeReferenceCg;
    if (name == "diffusion 64x64x96") return preconditioned ? kMediumReferencePcg : kMediumReferenceCg;
    TestProblem& p = problem(name);
    auto it = p.reference_iterations.find(preconditioned);
    if (it != p.reference_iterations.end()) return it->second;
    const auto ref = tut::cg::cg_cpu(p.A, p.b, kTol, 100000, preconditioned);
    REQUIRE(ref.outcome == Outcome::converged);
    p.reference_iterations[preconditioned] = ref.iterations;
    return ref.iterations;
}

/// How far a float solve's iteration count may stray from the double reference. Rounding
/// slows CG's convergence a little, more as the problem grows (measured on an H200: 455-460
/// float vs 454 double on the default problem, 299-300 vs 283 on the large one; plain CG
/// 795 vs ~780 and 495 vs 467), and the GPU's summation order differs from lesson to
/// lesson. Between lessons the counts agree to a few iterations (see the tour table).
inline int iteration_slack(int reference, bool preconditioned) {
    return preconditioned ? std::max(3, reference * 8 / 100) : std::max(8, reference * 10 / 100);
}

/// Solves into x (poisoned, between guard zones) and requires that nothing outside x was
/// written.
inline SolveResult solve_guarded(tut::cg::Solver& solver, const TestProblem& p, tut_checks::GuardedBuffer<float>& x) {
    x.poison();
    SolveResult r;
    REQUIRE_NOTHROW(r = solver.solve(p.db.get(), x.get()));
    const std::string damage = x.damage();
    INFO("x: " << damage);
    REQUIRE(damage.empty());
    return r;
}

/// Solves problem `name` twice with the variant (into two different poisoned x buffers, so
/// state left over from the first solve, or a graph bound to the first x, shows up) and
/// requires convergence, the true residual within 2 tol and an iteration count near the
/// CPU reference's.
inline void check_solves(const Expected& e, const std::string& name, int check_every = 20) {
    const Variant v = variant_named(e.name);
    const bool preconditioned = e.preconditioner == Preconditioner::jacobi;
    TestProblem& p = problem(name);
    const int ref = reference_iterations(name, preconditioned);
    SolveOptions opt;
    opt.tolerance = kTol;
    opt.check_every = check_every;
    opt.max_iterations = 3 * ref + 50;
    INFO("variant '" << v.name << "', problem " << name << " (" << p.A.rows << " rows, " << p.A.nnz()
                     << " nonzeros), check every " << check_every);
    INFO(tut_checks::exercise_hint());
    std::unique_ptr<tut::cg::Solver> solver;
    REQUIRE_NOTHROW(solver = v.run(p.A, *p.dA, opt));
    tut_checks::GuardedBuffer<float> first_x(size_t(p.A.rows), kGuard), second_x(size_t(p.A.rows), kGuard);
    int first_iterations = -1;
    for (int attempt = 0; attempt < 2; ++attempt) {
        tut_checks::GuardedBuffer<float>& dx = attempt == 0 ? first_x : second_x;
        const SolveResult r = solve_guarded(*solver, p, dx);
        const auto x = dx.download();
        const auto c = tut::cg::check_solution(p.A, p.b, x, r, kTol);
        INFO("solve " << attempt + 1 << ": " << tut::cg::outcome_name(r.outcome) << ", " << r.iterations
                      << " iterations, converged at " << r.converged_at << ", solver residual " << r.residual
                      << ", true residual " << c.true_residual << " (allowed " << c.allowed << "); CPU double reference: "
                      << ref << " iterations");
        REQUIRE(r.outcome == Outcome::converged);
        REQUIRE(c.true_residual <= c.allowed);
        // Compare counts only where CG is not in its finite-termination regime (iterations
        // near n): there, rounding moves the count by 20% or more (chain 1x1x64: float
        // 78-113 vs double 64-91) and says nothing about the lesson.
        if (2 * ref < p.A.rows) REQUIRE(std::abs(r.converged_at - ref) <= iteration_slack(ref, preconditioned));
        // Iterations run past convergence: none for a variant that looks every iteration,
        // fewer than k for one that looks every k.
        REQUIRE(r.iterations >= r.converged_at);
        REQUIRE(r.iterations < r.converged_at + (e.stops == Stops::within_k ? opt.check_every : 1));
        if (attempt == 0)
            first_iterations = r.converged_at;
        else
            REQUIRE(std::abs(r.converged_at - first_iterations) <= 2);  // atomics may reorder sums, no more
    }
}

/// Every expected variant on every named problem; variants that look every k also with k = 7.
inline void check_all_solve(const std::vector<Expected>& variants, const std::vector<std::string>& names) {
    for (const Expected& e : variants)
        for (const auto& name : names) {
            check_solves(e, name);
            if (e.stops == Stops::within_k && name == "default") check_solves(e, name, 7);
        }
}

/// Stops: it solves an SPD matrix (`spd`, the default problem unless a lesson cannot hold
/// it: so "stopping" cannot be a broken solver stopping on everything), reports p.Ap <= 0
/// on an indefinite one instead of looping, and stops at the iteration limit when one is
/// set too low.
inline void check_all_stop(const std::vector<Expected>& variants, const std::string& spd = "default") {
    for (const Expected& e : variants) {
        INFO(tut_checks::exercise_hint());
        check_solves(e, spd);
        const Variant v = variant_named(e.name);
        for (const std::string name : {"indefinite 2x2", "indefinite 2000"}) {
            TestProblem& p = problem(name);
            SolveOptions opt;
            opt.max_iterations = 1000;
            INFO("variant '" << v.name << "', problem " << name << ": must stop with not_positive_definite");
            std::unique_ptr<tut::cg::Solver> solver;
            REQUIRE_NOTHROW(solver = v.run(p.A, *p.dA, opt));
            tut_checks::GuardedBuffer<float> dx(size_t(p.A.rows), kGuard);
            const SolveResult r = solve_guarded(*solver, p, dx);
            INFO(tut::cg::outcome_name(r.outcome) << " after " << r.iterations << " iterations");
            REQUIRE(r.outcome == Outcome::not_positive_definite);
            REQUIRE(r.converged_at == -1);
            REQUIRE(r.iterations >= 2);
            REQUIRE(r.iterations < 2 + (e.stops == Stops::within_k ? opt.check_every : 1));
        }
        {
            TestProblem& p = problem(spd);
            SolveOptions opt;
            opt.max_iterations = 5;
            INFO("variant '" << v.name << "', problem " << spd << ", max_iterations 5: must stop after 5");
            std::unique_ptr<tut::cg::Solver> solver;
            REQUIRE_NOTHROW(solver = v.run(p.A, *p.dA, opt));
            tut_checks::GuardedBuffer<float> dx(size_t(p.A.rows), kGuard);
            const SolveResult r = solve_guarded(*solver, p, dx);
            REQUIRE(r.outcome == Outcome::max_iterations);
            REQUIRE(r.iterations == 5);
        }
    }
}

/// Refuses, with tut::Unsupported and before launching anything: non-square and empty
/// matrices; and, for the Jacobi lessons, a zero, missing or negative diagonal (named by
/// row). Plain CG (lesson 1) needs no diagonal and must accept a zero one.
inline void check_all_refuse(const std::vector<Expected>& variants) {
    using tut::cg::Triplet;
    const Csr non_square = tut::cg::csr_from_triplets(2, 3, {{0, 0, 1.0f}, {1, 1, 1.0f}}, "2x3");
    const Csr empty = tut::cg::csr_from_triplets(0, 0, {}, "0x0");
    const Csr zero_diagonal = tut::cg::csr_from_triplets(
        3, 3, {{0, 0, 2.0f}, {1, 1, 0.0f}, {1, 2, 1.0f}, {2, 1, 1.0f}, {2, 2, 2.0f}}, "zero diagonal");
    const Csr missing_diagonal =
        tut::cg::csr_from_triplets(3, 3, {{0, 0, 2.0f}, {1, 2, 1.0f}, {2, 1, 1.0f}, {2, 2, 2.0f}}, "missing diagonal");
    const Csr negative_diagonal =
        tut::cg::csr_from_triplets(2, 2, {{0, 0, 2.0f}, {1, 1, -1.0f}}, "negative diagonal");
    SolveOptions opt;
    for (const Expected& e : variants) {
        const Variant v = variant_named(e.name);
        INFO("variant '" << v.name << "'");
        for (const Csr* A : {&non_square, &empty}) {
            INFO("matrix " << A->label << " must be refused with tut::Unsupported");
            tut::cg::DeviceMatrix dA(*A);
            REQUIRE_THROWS_AS(v.run(*A, dA, opt), tut::Unsupported);
        }
        for (const Csr* A : {&zero_diagonal, &missing_diagonal, &negative_diagonal}) {
            tut::cg::DeviceMatrix dA(*A);
            if (e.preconditioner == Preconditioner::jacobi) {
                INFO("matrix " << A->label << ": the Jacobi preconditioner must refuse it with tut::Unsupported");
                REQUIRE_THROWS_AS(v.run(*A, dA, opt), tut::Unsupported);
                try {
                    v.run(*A, dA, opt);
                } catch (const tut::Unsupported& ex) {
                    INFO(ex.what());
                    REQUIRE(std::string(ex.what()).find("row 1") != std::string::npos);
                }
            } else {
                INFO("matrix " << A->label << ": plain CG needs no diagonal and must accept it");
                REQUIRE_NOTHROW(v.run(*A, dA, opt));
            }
        }
    }
}

/// Median microseconds per iteration of `v`'s solves of problem `p` with the default options,
/// as the tour solves it, timed by the host's clock; a solve that does not converge is not
/// timed (the case fails).
inline double median_us_per_iteration(const Variant& v, TestProblem& p) {
    std::unique_ptr<tut::cg::Solver> solver;
    REQUIRE_NOTHROW(solver = v.run(p.A, *p.dA, SolveOptions{}));
    tut::DeviceBuffer<float> x(size_t(p.A.rows));
    INFO("variant '" << v.name << "': a solve that does not converge is not timed");
    INFO(tut_checks::exercise_hint());
    REQUIRE(solver->solve(p.db.get(), x.get()).outcome == Outcome::converged);
    std::vector<double> iterations;
    perf_gate::Plan plan;
    plan.host_clock = true;
    plan.repeats = 5;
    const double ms = perf_gate::median_ms(
        [&] { iterations.push_back(solver->solve(p.db.get(), x.get()).iterations); }, plan);
    return 1000 * ms / std::max(1.0, perf_gate::median_in_place(iterations));
}

/// The speed case of lessons 5-9: `variant` solves problem `problem_name` as the tour does;
/// its time per iteration (median_us_per_iteration()) is held to the bandwidth floor (the
/// compulsory bytes of an iteration over the device-to-device copy bandwidth measured here)
/// and judged against this GPU's threshold (perf_gate::judge(); common/checks/thresholds/).
/// The check file fills m's measure, size, previous_from and hint; the rest is set here.
/// `previous_variant`, when named, is the previous approach as the lesson keeps it, timed
/// when calibrating.
inline void judge_against_bandwidth_floor(const std::string& case_name, perf_gate::Measurement m,
                                          const std::string& variant, const std::string& problem_name,
                                          const std::string& previous_variant = {}) {
    TestProblem& p = problem(problem_name);
    const double us = median_us_per_iteration(variant_named(variant), p);
    const double floor_us =
        tut::cg::floor_bytes_per_iteration(p.A.rows, p.A.nnz(), true) / tut::measure_d2d_bandwidth_gbs() * 1e-3;
    m.ratio = floor_us / us;
    m.detail = perf_gate::fmt("%.2f us per iteration", us) + ", floor " + perf_gate::fmt("%.2f us", floor_us);
    m.spread_floor = 0.05;  // a solve paced by the host
    if (!previous_variant.empty() && perf_gate::calibrating())
        m.previous_measured = floor_us / median_us_per_iteration(variant_named(previous_variant), p);
    perf_gate::judge(case_name, m);
}

/// One solve into a poisoned x between guard zones: how it ended and x.
struct Solved {
    SolveResult result;
    std::vector<float> x;
};

inline Solved solve_once(tut::cg::Solver& solver, const TestProblem& p) {
    tut_checks::GuardedBuffer<float> dx(size_t(p.A.rows), kGuard);
    Solved s;
    s.result = solve_guarded(solver, p, dx);
    s.x = dx.download();
    return s;
}

/// The expected variant's solver for problem p, to tolerance kTol, stopping at `max_iterations`.
inline std::unique_ptr<tut::cg::Solver> build_solver(const Expected& e, const TestProblem& p, int max_iterations) {
    SolveOptions opt;
    opt.tolerance = kTol;
    opt.max_iterations = max_iterations;
    std::unique_ptr<tut::cg::Solver> solver;
    REQUIRE_NOTHROW(solver = variant_named(e.name).run(p.A, *p.dA, opt));
    return solver;
}

/// The speed case of a lesson whose program keeps the previous approach as a variant
/// (`baseline`): both solve problem `problem_name` in this process, timed by the host's clock
/// one solve of each in turn (perf_gate::solves_beside()), and the ratio is the baseline's
/// median time per iteration over the lesson's, judged against this GPU's threshold
/// (perf_gate::judge(); common/checks/thresholds/).
/// The time per iteration of a host-paced solve moves by a quarter from one process to the
/// next; the ratio of two loops bound alike moves by a few percent (lesson 10's), that of a
/// loop bound by queueing and one bound by round trips more (lessons 3-4). A lesson's variant whose
/// solve is wrong is not timed (the case fails). The check file fills m's measure, size,
/// previous_from and hint; the rest is set here.
inline void judge_against_variant(const std::string& case_name, perf_gate::Measurement m,
                                  const Expected& lesson_variant, const Expected& baseline,
                                  const std::string& problem_name) {
    TestProblem& p = problem(problem_name);
    const bool jacobi = lesson_variant.preconditioner == Preconditioner::jacobi;
    const int limit = 3 * reference_iterations(problem_name, jacobi) + 50;
    auto slow = build_solver(baseline, p, limit);
    auto fast = build_solver(lesson_variant, p, limit);
    {  // a wrong solve is not timed
        const Solved s = solve_once(*fast, p);
        const auto c = tut::cg::check_solution(p.A, p.b, s.x, s.result, kTol);
        INFO(tut_checks::exercise_hint());
        INFO("'" << lesson_variant.name << "' on " << problem_name << ": " << c.verdict);
        REQUIRE(c.ok);
    }
    tut_checks::GuardedBuffer<float> dx(size_t(p.A.rows), kGuard);
    // 15 solves of each, as median_us_per_iteration(), one of each in turn
    const perf_gate::PerIteration t =
        perf_gate::solves_beside([&] { return fast->solve(p.db.get(), dx.get()).iterations; },
                                 [&] { return slow->solve(p.db.get(), dx.get()).iterations; }, 15);
    m.ratio = t.yardstick_us / t.work_us;
    m.detail = "'" + lesson_variant.name + "' " + perf_gate::fmt("%.2f us", t.work_us) + " per iteration, '" +
               baseline.name + "' " + perf_gate::fmt("%.2f us", t.yardstick_us) + ", medians of " +
               std::to_string(t.samples);
    m.previous_measured = 1.0;  // the previous approach is the baseline itself
    m.spread_floor = 0.05;      // solves paced by the host
    perf_gate::judge(case_name, m);
}

}  // namespace cg_checks
