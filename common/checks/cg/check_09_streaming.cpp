// Checks for cg/09_streaming: the persistent kernel streaming the matrix from memory, each
// block's vectors on chip or in memory (the TODO: phase A's streaming SpMV, block_spmv; the
// small problems give it rows of 1 to 200 nonzeros with ragged ends within 16-byte quads,
// the larger ones many steps per warp for its loads issued a step ahead).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"
#include "perf_gate.hpp"

using namespace cg_checks;

// The lesson's variants: Jacobi PCG, each block's p and q/z on chip or in memory; the
// kernel decides after every iteration.
const Expected kOnChip{"vectors=on-chip", Preconditioner::jacobi, Stops::at_convergence};
const Expected kInMemory{"vectors=memory", Preconditioner::jacobi, Stops::at_convergence};
const std::vector<Expected> kVariants{kOnChip, kInMemory};

TEST_CASE("cg/09_streaming: solves the default problem and small ones to tolerance, vectors on chip and in memory",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    check_all_solve(kVariants, names);
}

TEST_CASE("cg/09_streaming: solves the 2.1 M-row problem to tolerance (vectors on chip)", "[exercise]") {
    check_solves(kOnChip, "large");
}

TEST_CASE("cg/09_streaming: solves a problem larger than L2 with its vectors in memory", "[exercise]") {
    check_solves(kInMemory, "diffusion 64x64x96");
}

TEST_CASE("cg/09_streaming: stops on a matrix that is not positive definite and at the iteration limit", "[exercise]") {
    check_all_stop(kVariants);
}

TEST_CASE("cg/09_streaming: refuses what it cannot solve before launching anything", "[baseline]") {
    check_all_refuse(kVariants);
}

// Speed, the lesson's idea: 'vectors=on-chip' solves the 2.1 M-row problem as the tour does (the
// default options), timed by the host's clock; its time per iteration is held to the bandwidth
// floor (the compulsory bytes of an iteration over the device-to-device copy bandwidth measured
// here) and judged against this GPU's threshold (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "cg/09_streaming: speed: 'vectors=on-chip' per iteration on the 2.1 M-row problem, as a share of the bandwidth "
    "floor, against this GPU's gate";

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
    TestProblem& p = problem("large");
    const double us = cg_us_per_iteration(variant_named("vectors=on-chip"), p);
    const double floor_us =
        tut::cg::floor_bytes_per_iteration(p.A.rows, p.A.nnz(), true) / tut::measure_d2d_bandwidth_gbs() * 1e-3;
    perf_gate::Measurement m;
    m.measure = "% of the bandwidth floor per iteration";
    m.size = "2.1 M-row problem";
    m.ratio = floor_us / us;
    m.detail = perf_gate::fmt("%.2f us per iteration", us) + ", floor " + perf_gate::fmt("%.2f us", floor_us);
    m.spread_floor = 0.05;  // a solve paced by the host
    if (perf_gate::calibrating())  // the previous approach, as the lesson keeps it
        m.previous_measured = floor_us / cg_us_per_iteration(variant_named("vectors=memory"), p);
    m.hint = "Does the SpMV read the matrix as aligned 16-byte quads marked read-once, and issue the next step's "
             "loads before this step's gathers of p, so that each thread keeps enough bytes in flight?";
    perf_gate::judge(kSpeedCase, m);
}
