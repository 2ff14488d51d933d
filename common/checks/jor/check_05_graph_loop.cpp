// Checks for jor/05_graph_loop: the loop on the GPU (the TODO: the WHILE graph, and decide, which ends its loop).
// Shared by the exercise (lessons/) and the solution (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"
#include "perf_gate.hpp"

using namespace jor_checks;

namespace {
// The variants the lesson must have, by name, with their element types and stopping rules.
const std::vector<Required> kRequired{{"while graph"}, {"check every k"}};
}  // namespace

TEST_CASE("jor/05_graph_loop: solves N = 1 ... 8192 in float and double within the error bound, in the CPU's "
          "iterations",
          "[exercise]") {
    check_all_solve(kRequired);
}

TEST_CASE("jor/05_graph_loop: reports a diverging system as not converged at the iteration limit", "[exercise]") {
    check_all_diverge(kRequired);
}

TEST_CASE("jor/05_graph_loop: refuses bad options, bad systems and sizes beyond device memory", "[baseline]") {
    check_all_refuse(kRequired);
}

// Speed, the lesson's idea: 'while graph' solves matrix 0 of N = 512 in float, timed by the host's
// clock; its time per sweep is held to the bandwidth floor (the bytes a sweep reads over the
// device-to-device copy bandwidth measured here) and judged against this GPU's threshold
// (perf_gate.hpp; common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "jor/05_graph_loop: speed: 'while graph' per sweep at N = 512, float, as a share of the bandwidth floor, "
    "against this GPU's gate";

// Median microseconds per iteration of `v`'s solves of matrix 0 of size n (host clock), and the
// bytes one sweep reads (A as the solver stores it, and three vectors).
template <class T>
std::pair<double, double> jor_us_per_iteration(const tut::jor::Variant<T>& v, int n) {
    DeviceSystem<T> sys(n);
    tut::jor::generate_system(sys, tut::jor::kSeed, 0);
    std::unique_ptr<tut::jor::Solver<T>> solver;
    REQUIRE_NOTHROW(solver = v.run(sys, default_options<T>(StopRule::norm)));
    tut::DeviceBuffer<T> x(static_cast<size_t>(n));
    INFO("variant '" << v.name << "', N = " << n << ": a solve that does not converge is not timed");
    INFO(tut_checks::exercise_hint());
    REQUIRE(solver->solve(x.get()).converged);
    std::vector<double> iterations;
    perf_gate::Plan plan;
    plan.host_clock = true;
    const double ms = perf_gate::median_ms([&] { iterations.push_back(solver->solve(x.get()).iterations); }, plan);
    const double bytes = solver->matrix_bytes() + 3.0 * n * sizeof(T);
    return {1000 * ms / std::max(1.0, perf_gate::median_in_place(iterations)), bytes};
}
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    const auto [us, bytes] = jor_us_per_iteration(variant_named<float>("while graph"), 512);
    const double floor_us = bytes / tut::measure_d2d_bandwidth_gbs() * 1e-3;
    perf_gate::Measurement m;
    m.measure = "% of the bandwidth floor per iteration";
    m.size = "N = 512, float";
    m.ratio = floor_us / us;
    m.detail = perf_gate::fmt("%.2f us per sweep", us) + ", floor " + perf_gate::fmt("%.2f us", floor_us);
    m.spread_floor = 0.05;  // a solve paced by the host
    m.previous_from = "jor/04_fused";
    m.hint = "Does the GPU decide when the loop ends (the WHILE node's condition set by the sweep), so that the "
             "host launches once and waits once per solve?";
    perf_gate::judge(kSpeedCase, m);
}
