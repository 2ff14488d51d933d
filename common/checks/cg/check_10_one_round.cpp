// Checks for cg/10_one_round: pipelined PCG with one communication round per iteration (the
// TODO: the all-reduce without a grid barrier: publish the block's sums as tagged words,
// gather every block's, add them in the same order in every block).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"
#include "perf_gate.hpp"

#include <algorithm>
#include <cstring>

using namespace cg_checks;

using tut::sm_count;

// The variants the checks require. The three one-round variants run the exercise's
// all-reduce; the grid-barrier variant does not (it is the yardstick of the speed check).
const Expected kBarrier{"pipelined, grid barrier", Preconditioner::jacobi, Stops::at_convergence};
const Expected kOneRound{"pipelined, one round", Preconditioner::jacobi, Stops::at_convergence};
const Expected kPredict{"predict-recompute, one round", Preconditioner::jacobi, Stops::at_convergence};
const Expected kReplace{"predict-recompute + replacement, one round", Preconditioner::jacobi, Stops::at_convergence};
const std::vector<Expected> kRound{kOneRound, kPredict, kReplace};

// The lesson's goals. Iterations: within 3% of the CPU double reference (at least 2) on
// the default problem and the Matrix Market file. The reference needs 454 on the default
// problem and lesson 08 455; the pipelined variants, measured on an H100, needed 454-455,
// and on spd100.mtx all needed 11. (On the small grids the shared check's wider bound
// applies: near finite termination, on the 64-row chain, float rounding moves every
// variant's count by 20% or more.) True residual: the double-vector variant, and the one
// with residual replacement, stop with a true residual within tol, up to the rounding of x
// to float (check_solution's float limit); the float predict-and-recompute variant without
// replacement ends above tol (1.15e-6 measured) and is held to the track's 2 tol
// (cg_checks.hpp).
constexpr double kIterationShare = 0.03;
// Per iteration, one round against the grid barrier on the same pipelined PCG: 1.55x
// measured on an H100 on the default problem (4.91 against 3.16 us), 1.35x on the 33x17x9
// grid. An all-reduce that waits for the whole grid before it reads (a barrier in
// disguise) would leave about the grid-barrier variant's time less the 0.45 us that the
// staged window saves in the SpMV: about 1.1x. The gate between them is this GPU's, from
// common/checks/thresholds/ (perf_gate.hpp): 1.26x on an H100 on the default problem.

// The problem that stands for "default" on this GPU: the default one when it fits on chip
// (116 SMs or more), else the largest small grid, after requiring that the default one is
// refused.
std::string main_problem() {
    if (sm_count() >= kSmsForResidentDefault) return "default";
    TestProblem& p = problem("default");
    SolveOptions opt;
    WARN("this GPU has " << sm_count() << " SMs; the default problem needs " << kSmsForResidentDefault
                         << " to fit on chip: checking that it is refused, and diffusion 33x17x9 instead");
    for (const Expected& e : {kBarrier, kOneRound, kPredict, kReplace})
        REQUIRE_THROWS_AS(variant_named(e.name).run(p.A, *p.dA, opt), tut::Unsupported);
    return "diffusion 33x17x9";
}

// The goals on one problem: iterations within kIterationShare of the reference; with
// `within_tol`, the true residual within tol (plus the float limit).
void check_goals(const Expected& e, const std::string& name, bool within_tol) {
    TestProblem& p = problem(name);
    const int ref = reference_iterations(name, true);
    const int slack = std::max(2, int(kIterationShare * ref));
    INFO("variant '" << e.name << "', problem " << name << ": CPU double reference " << ref << " iterations");
    INFO(tut_checks::exercise_hint());
    auto solver = build_solver(e, p, 3 * ref + 50);
    const Solved s = solve_once(*solver, p);
    const auto c = tut::cg::check_solution(p.A, p.b, s.x, s.result, kTol);
    INFO(tut::cg::outcome_name(s.result.outcome) << " at iteration " << s.result.converged_at << ", true residual "
                                                 << c.true_residual << ", carried " << s.result.residual
                                                 << ", float limit " << c.float_limit);
    REQUIRE(s.result.outcome == Outcome::converged);
    REQUIRE(std::abs(s.result.converged_at - ref) <= slack);
    REQUIRE(c.true_residual <= 2 * kTol);
    if (within_tol) REQUIRE(c.true_residual <= kTol + c.float_limit);
}

TEST_CASE("cg/10_one_round: the one-round variants solve small problems to tolerance (true residual on the CPU)",
          "[exercise]") {
    check_all_solve(kRound, kSmallProblems);
}

TEST_CASE("cg/10_one_round: the one-round variants solve the default problem (on a GPU with fewer than 116 SMs it "
          "must be refused)",
          "[exercise]") {
    const std::string name = main_problem();
    for (const Expected& e : kRound) check_solves(e, name);
}

TEST_CASE("cg/10_one_round: the lesson's goals: iterations within 3% of the reference, the true residual within tol "
          "for double vectors and for residual replacement",
          "[exercise]") {
    const std::string name = main_problem();
    check_goals(kOneRound, name, true);
    check_goals(kPredict, name, false);
    check_goals(kReplace, name, true);
    check_goals(kOneRound, "spd100", true);
    check_goals(kPredict, "spd100", false);
    check_goals(kReplace, "spd100", false);  // 11 iterations: no replacement happens
}

TEST_CASE("cg/10_one_round: the sums are the same in every run: a repeat solve gives the same x, bit for bit",
          "[exercise]") {
    // Every block adds the partial sums in one fixed order, so a solve does exactly the
    // same arithmetic every time (a sum of atomics would not). (That every block gets the
    // same sums as every other, the solver itself tests after each solve: it throws when
    // the blocks' fingerprints of every iteration's totals differ.)
    for (const std::string name : {main_problem(), std::string("diffusion 5x7x11"), std::string("spd100")})
        for (const Expected& e : kRound) {
            TestProblem& p = problem(name);
            INFO("variant '" << e.name << "', problem " << name);
            INFO(tut_checks::exercise_hint());
            auto solver = build_solver(e, p, 3 * reference_iterations(name, true) + 50);
            const Solved first = solve_once(*solver, p), second = solve_once(*solver, p);
            const auto c = tut::cg::check_solution(p.A, p.b, first.x, first.result, kTol);
            INFO("first solve: " << c.verdict);
            REQUIRE(c.ok);
            REQUIRE(second.result.iterations == first.result.iterations);
            REQUIRE(std::memcmp(first.x.data(), second.x.data(), first.x.size() * sizeof(float)) == 0);
        }
}

TEST_CASE("cg/10_one_round: the one-round variants stop on a matrix that is not positive definite and at the "
          "iteration limit",
          "[exercise]") {
    check_all_stop(kRound, sm_count() >= kSmsForResidentDefault ? "default" : "diffusion 33x17x9");
}

TEST_CASE("cg/10_one_round: one round per iteration is faster per iteration than a grid barrier",
          "[performance]") {
    const std::string name = main_problem();
    perf_gate::Measurement m;
    m.measure = "x the grid-barrier variant's speed per iteration";
    m.size = name == "default" ? "default problem (40000 rows)" : name;
    m.hint = "Does each block wait only for the tagged words it reads, with no grid barrier (or a barrier in "
             "disguise, waiting for every block before reading) left in the loop?";
    judge_against_variant("cg/10_one_round: one round per iteration is faster per iteration than a grid barrier", m,
                          kOneRound, kBarrier, name);
}

TEST_CASE("cg/10_one_round: the grid-barrier variant solves the small problems and the default one, and stops",
          "[baseline]") {
    check_all_solve({kBarrier}, kSmallProblems);
    check_all_stop({kBarrier}, main_problem());
    check_goals(kBarrier, main_problem(), true);
}

TEST_CASE("cg/10_one_round: refuses the 2.1 M-row problem (it does not fit on chip)", "[baseline]") {
    TestProblem& p = problem("large");
    SolveOptions opt;
    for (const Expected& e : {kBarrier, kOneRound, kPredict, kReplace}) {
        INFO("variant '" << e.name << "'");
        REQUIRE_THROWS_AS(variant_named(e.name).run(p.A, *p.dA, opt), tut::Unsupported);
    }
}

TEST_CASE("cg/10_one_round: refuses what it cannot solve before launching anything", "[baseline]") {
    check_all_refuse({kBarrier, kOneRound, kPredict, kReplace});
}
