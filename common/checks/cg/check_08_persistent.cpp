// Checks for cg/08_persistent: one persistent cooperative kernel, the matrix kept on chip
// (the TODO: phase B and the decision that ends the loop, the same in every block).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"
#include "perf_gate.hpp"

using namespace cg_checks;

using tut::sm_count;

// The lesson's variant: Jacobi PCG; the kernel decides after every iteration.
const Expected kResident{"resident", Preconditioner::jacobi, Stops::at_convergence};
const std::vector<Expected> kVariants{kResident};

TEST_CASE("cg/08_persistent: solves small problems to tolerance (true residual on the CPU)", "[exercise]") {
    check_all_solve(kVariants, kSmallProblems);
}

TEST_CASE("cg/08_persistent: solves the default problem on chip (on a GPU with fewer than 116 SMs it must refuse it)",
          "[exercise]") {
    if (sm_count() >= kSmsForResidentDefault) {
        check_solves(kResident, "default");
        return;
    }
    // Too few SMs to hold the default problem: the lesson must say so, and the exercise is
    // checked on the largest small problem instead.
    TestProblem& p = problem("default");
    SolveOptions opt;
    WARN("this GPU has " << sm_count() << " SMs; the default problem needs " << kSmsForResidentDefault
                         << " to fit on chip: checking that it is refused, and diffusion 33x17x9 instead");
    REQUIRE_THROWS_AS(variant_named(kResident.name).run(p.A, *p.dA, opt), tut::Unsupported);
    check_solves(kResident, "diffusion 33x17x9");
}

TEST_CASE("cg/08_persistent: stops on a matrix that is not positive definite and at the iteration limit",
          "[exercise]") {
    check_all_stop(kVariants, "diffusion 33x17x9");
}

TEST_CASE("cg/08_persistent: refuses the 2.1 M-row problem (it does not fit on chip)", "[baseline]") {
    TestProblem& p = problem("large");
    SolveOptions opt;
    REQUIRE_THROWS_AS(variant_named(kResident.name).run(p.A, *p.dA, opt), tut::Unsupported);
}

TEST_CASE("cg/08_persistent: refuses what it cannot solve before launching anything", "[baseline]") {
    check_all_refuse(kVariants);
}

// Speed, the lesson's idea: 'resident' per iteration on the default problem, against the bandwidth floor
// (judge_against_bandwidth_floor(), cg_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "cg/08_persistent: speed: 'resident' per iteration on the default problem, as a share of the bandwidth floor, "
    "against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    if (tut::sm_count() < kSmsForResidentDefault) {  // the default problem does not fit on chip: nothing to time
        perf_gate::Measurement m;
        m.measure = "% of the bandwidth floor per iteration";
        m.size = "default problem (40000 rows)";
        m.unscored_because = "the default problem does not fit on chip on a GPU with " +
                             std::to_string(tut::sm_count()) + " SMs, so the lesson refuses it";
        perf_gate::judge(kSpeedCase, m);
        return;
    }
    perf_gate::Measurement m;
    m.measure = "% of the bandwidth floor per iteration";
    m.size = "default problem (40000 rows)";
    m.previous_from = "cg/07_graph_while";
    m.hint = "Does one kernel launch run the whole solve, the phases separated by grid barriers and every block "
             "leaving the loop at the same iteration?";
    judge_against_bandwidth_floor(kSpeedCase, m, "resident", "default");
}
