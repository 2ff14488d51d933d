// Checks for cg/04_own_dot: our own dot-product kernel (the TODO: dot_kernel).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"
#include "perf_gate.hpp"

using namespace cg_checks;

// The lesson's variant: Jacobi PCG; the host looks at the status every k iterations.
const std::vector<Expected> kVariants{{"own dot", Preconditioner::jacobi, Stops::within_k}};

TEST_CASE("cg/04_own_dot: solves the default problem and small ones to tolerance (true residual on the CPU)",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    check_all_solve(kVariants, names);
}

TEST_CASE("cg/04_own_dot: solves the 2.1 M-row problem to tolerance", "[exercise]") {
    check_all_solve(kVariants, {"large"});
}

TEST_CASE("cg/04_own_dot: stops on a matrix that is not positive definite and at the iteration limit", "[exercise]") {
    check_all_stop(kVariants);
}

TEST_CASE("cg/04_own_dot: refuses what it cannot solve before launching anything", "[baseline]") {
    check_all_refuse(kVariants);
}

// Speed, the lesson's idea: 'own dot' solves the default problem (40000 rows) as the tour does (the
// default options), timed by the host's clock; its time per iteration is held to the bandwidth
// floor (the compulsory bytes of an iteration over the device-to-device copy bandwidth measured
// here) and judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "cg/04_own_dot: speed: 'own dot' per iteration on the default problem, as a share of the bandwidth floor, "
    "against this GPU's gate";

// Median microseconds per iteration of `v`'s solves of problem `p` (host clock).
double cg_us_per_iteration(const tut::cg::Variant& v, TestProblem& p) {
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
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    TestProblem& p = problem("default");
    const double us = cg_us_per_iteration(variant_named("own dot"), p);
    const double floor_us =
        tut::cg::floor_bytes_per_iteration(p.A.rows, p.A.nnz(), true) / tut::measure_d2d_bandwidth_gbs() * 1e-3;
    perf_gate::Measurement m;
    m.measure = "% of the bandwidth floor per iteration";
    m.size = "default problem (40000 rows)";
    m.ratio = floor_us / us;
    m.detail = perf_gate::fmt("%.2f us per iteration", us) + ", floor " + perf_gate::fmt("%.2f us", floor_us);
    m.spread_floor = 0.05;  // a solve paced by the host
    m.previous_from = "cg/03_device_pointer_mode";
    m.hint = "Does each dot product run as one launch, every block adding its partial sum into the result once?";
    perf_gate::judge(kSpeedCase, m);
}
