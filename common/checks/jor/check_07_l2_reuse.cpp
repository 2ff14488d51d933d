// Checks for jor/07_l2_reuse: A kept in L2 between sweeps (the TODO: the window's plan, the
// carve-out set aside while the solver lives, and how each policy's sweeps read A).
// Shared by the exercise (lessons/) and the solution (solutions/); see jor_checks.hpp.
#include "jor_checks.hpp"
#include "perf_gate.hpp"
#include "tut/jor_l2_plan.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

using namespace jor_checks;

namespace {
// The variants the lesson must have, by name, with their element types and stopping rules.
const std::vector<Required> kRequired{{"persistent"}, {"L2 window"}, {"alternating direction"}};
constexpr size_t kMiB = size_t(1) << 20;

size_t persisting_limit() {
    size_t bytes = 0;
    TUT_CUDA(cudaDeviceGetLimit(&bytes, cudaLimitPersistingL2CacheSize));
    return bytes;
}

tut::jor::L2Limits device_limits() {
    int device = 0, max_persisting = 0, max_window = 0;
    TUT_CUDA(cudaGetDevice(&device));
    TUT_CUDA(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device));
    TUT_CUDA(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device));
    tut::jor::L2Limits limits;
    limits.max_persisting = size_t(max_persisting > 0 ? max_persisting : 0);
    limits.max_window = size_t(max_window > 0 ? max_window : 0);
    return limits;
}
}  // namespace

// The policies change where A is read from, never the answer: lesson 06's loop is given.
TEST_CASE("jor/07_l2_reuse: solves N = 1 ... 8192 in float and double within the error bound, in the CPU's "
          "iterations",
          "[baseline]") {
    check_all_solve(kRequired);
}

TEST_CASE("jor/07_l2_reuse: reports a diverging system as not converged at the iteration limit", "[baseline]") {
    check_all_diverge(kRequired);
}

TEST_CASE("jor/07_l2_reuse: refuses bad options, bad systems and sizes beyond device memory", "[baseline]") {
    check_all_refuse(kRequired);
}

// The plan, on made-up limits: A smaller than the carve-out, larger than the carve-out, larger
// than the largest window, and a GPU without a persisting L2.
TEST_CASE("jor/07_l2_reuse: plan_l2_window spans A up to the largest window, sets aside what of it the carve-out "
          "holds, and marks that share persisting",
          "[exercise]") {
    INFO(tut_checks::exercise_hint());
    struct Case {
        size_t bytes, max_persisting, max_window, span, set_aside;
    };
    const Case cases[] = {
        {16 * kMiB, 30 * kMiB, 128 * kMiB, 16 * kMiB, 16 * kMiB},    // all of A persists
        {64 * kMiB, 30 * kMiB, 128 * kMiB, 64 * kMiB, 30 * kMiB},    // A larger than the carve-out
        {512 * kMiB, 30 * kMiB, 128 * kMiB, 128 * kMiB, 30 * kMiB},  // A larger than a window
        {100, 30 * kMiB, 128 * kMiB, 100, 100},                      // a few bytes
    };
    static const float anchor[4] = {};
    for (const Case& c : cases) {
        tut::jor::L2Limits limits;
        limits.max_persisting = c.max_persisting;
        limits.max_window = c.max_window;
        const tut::jor::L2Plan plan = lesson::plan_l2_window(anchor, c.bytes, limits);
        INFO("A of " << c.bytes << " bytes, carve-out at most " << c.max_persisting << ", window at most "
                     << c.max_window << ": planned window of " << plan.window.num_bytes << " bytes at "
                     << plan.window.base_ptr << ", hitRatio " << plan.window.hitRatio << ", set aside "
                     << plan.set_aside);
        REQUIRE(plan.window.base_ptr == static_cast<const void*>(anchor));
        REQUIRE(plan.window.num_bytes == c.span);
        REQUIRE(plan.set_aside == c.set_aside);
        REQUIRE(plan.window.hitRatio == Approx(double(c.set_aside) / double(c.span)).epsilon(1e-6));
        REQUIRE(plan.window.hitProp == cudaAccessPropertyPersisting);
        REQUIRE(plan.window.missProp == cudaAccessPropertyStreaming);
    }
    tut::jor::L2Limits none;  // before sm_80
    const tut::jor::L2Plan plan = lesson::plan_l2_window(anchor, 16 * kMiB, none);
    INFO("a GPU without a persisting L2: no window, nothing set aside");
    REQUIRE(plan.window.num_bytes == 0);
    REQUIRE(plan.set_aside == 0);
}

// The carve-out on this GPU: set aside while the 'L2 window' solver lives (float A of 16 MiB at
// N = 2048, which fits it on an H100 or H200; 256 MiB at N = 8192, which does not), the solve
// right under it, and the L2 given back when the solver goes.
TEST_CASE("jor/07_l2_reuse: the 'L2 window' solver sets aside the planned L2 while it lives and gives it back",
          "[exercise]") {
    INFO(tut_checks::exercise_hint());
    const tut::jor::L2Limits limits = device_limits();
    if (limits.max_persisting == 0 || limits.max_window == 0) {
        WARN("this GPU has no persisting L2 (before sm_80): nothing to set aside");
        return;
    }
    const tut::jor::Variant<float> v = variant_named<float>("L2 window");
    for (int n : {2048, 8192}) {
        DeviceSystem<float> sys(n);
        tut::jor::generate_system(sys, tut::jor::kSeed, 0);
        const size_t expected = std::min({sys.A.bytes(), limits.max_window, limits.max_persisting});
        INFO("N = " << n << ": A of " << sys.A.bytes() << " bytes; this GPU sets aside at most "
                    << limits.max_persisting << " bytes for a window of at most " << limits.max_window);
        // Not necessarily 0: an H100 was seen to start a process with 9,830,400 bytes set aside.
        const size_t before = persisting_limit();
        {
            std::unique_ptr<tut::jor::Solver<float>> solver;
            REQUIRE_NOTHROW(solver = v.run(sys, default_options<float>(StopRule::norm)));
            const size_t set_aside = persisting_limit();
            INFO("set aside while the solver lives: " << set_aside << " bytes (the plan: " << expected << ")");
            // The driver may round the limit to its own granularity.
            REQUIRE(set_aside + kMiB >= expected);
            REQUIRE(set_aside <= limits.max_persisting);
            tut::DeviceBuffer<float> x(static_cast<size_t>(n));
            tut::jor::SolveResult r;
            REQUIRE_NOTHROW(r = solver->solve(x.get()));
            REQUIRE(r.converged);
        }
        const size_t after = persisting_limit();
        INFO("after the solver is destroyed: " << after << " bytes set aside (before it: " << before
                                               << "); given back means 0, or what was set aside before");
        REQUIRE((after == 0 || after == before));
    }
}

// Speed, the lesson's idea: at N = 4096 in float (64 MiB of A, a little more than an H100's or
// H200's L2), 'alternating direction' per sweep as a multiple of 'persistent' (lesson 06's way of
// reading A) in the same process, both timed by the host's clock (perf_gate.hpp;
// common/checks/thresholds/).
namespace {
constexpr const char* kSpeedCase =
    "jor/07_l2_reuse: speed: 'alternating direction' per sweep at N = 4096, float, as a multiple of 'persistent', "
    "against this GPU's gate";

// Median microseconds per iteration of `v`'s solves of matrix 0 of size n (host clock).
double us_per_iteration(const tut::jor::Variant<float>& v, const DeviceSystem<float>& sys) {
    std::unique_ptr<tut::jor::Solver<float>> solver;
    REQUIRE_NOTHROW(solver = v.run(sys, default_options<float>(StopRule::norm)));
    tut::DeviceBuffer<float> x(static_cast<size_t>(sys.n));
    INFO("variant '" << v.name << "', N = " << sys.n << ": a solve that does not converge is not timed");
    REQUIRE(solver->solve(x.get()).converged);
    std::vector<double> iterations;
    perf_gate::Plan plan;
    plan.host_clock = true;
    const double ms = perf_gate::median_ms([&] { iterations.push_back(solver->solve(x.get()).iterations); }, plan);
    return 1000 * ms / std::max(1.0, perf_gate::median_in_place(iterations));
}
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    INFO(tut_checks::exercise_hint());
    DeviceSystem<float> sys(4096);
    tut::jor::generate_system(sys, tut::jor::kSeed, 0);
    const double plain_us = us_per_iteration(variant_named<float>("persistent"), sys);
    const double turn_us = us_per_iteration(variant_named<float>("alternating direction"), sys);
    perf_gate::Measurement m;
    m.measure = "x the persistent variant's speed per iteration";
    m.size = "N = 4096, float";
    m.ratio = plain_us / turn_us;
    m.detail = perf_gate::fmt("alternating direction %.2f us per sweep", turn_us) + ", persistent " +
               perf_gate::fmt("%.2f us", plain_us);
    m.spread_floor = 0.05;  // solves paced by the host
    m.previous_measured = 1.0;
    m.hint = "Does every other sweep turn round, so that it starts on the lines of A the previous sweep read last, "
             "and is A loaded with the default cache policy, not the evict-first hint?";
    perf_gate::judge(kSpeedCase, m);
}
