// Checks for cg/03_device_pointer_mode: device pointer mode, residual checked every k iterations (the TODO: alpha and beta on the device).
// Shared by the exercise (lessons/) and the solution (solutions/); see cg_checks.hpp.
#include "cg_checks.hpp"
#include "perf_gate.hpp"

using namespace cg_checks;

// The lesson's variant: Jacobi PCG; the host looks at the status every k iterations.
const Expected kDevicePointers{"device pointers", Preconditioner::jacobi, Stops::within_k};
const std::vector<Expected> kVariants{kDevicePointers};
// The baseline the program keeps: lesson 02's loop (host pointer mode), which looks at r.r
// every iteration. It is the yardstick of the speed case.
const Expected kHostPointers{"host pointers", Preconditioner::jacobi, Stops::at_convergence};

TEST_CASE("cg/03_device_pointer_mode: solves the default problem and small ones to tolerance (true residual on the CPU)",
          "[exercise]") {
    std::vector<std::string> names = kSmallProblems;
    names.push_back("default");
    check_all_solve(kVariants, names);
}

TEST_CASE("cg/03_device_pointer_mode: solves the 2.1 M-row problem to tolerance", "[exercise]") {
    check_all_solve(kVariants, {"large"});
}

TEST_CASE("cg/03_device_pointer_mode: stops on a matrix that is not positive definite and at the iteration limit",
          "[exercise]") {
    check_all_stop(kVariants);
}

TEST_CASE("cg/03_device_pointer_mode: refuses what it cannot solve before launching anything", "[baseline]") {
    check_all_refuse({kHostPointers, kDevicePointers});
}

TEST_CASE("cg/03_device_pointer_mode: the host-pointers variant (lesson 02's loop) solves the small problems and the "
          "default one, and stops",
          "[baseline]") {
    check_all_solve({kHostPointers}, kSmallProblems);
    check_all_stop({kHostPointers});  // solves the default problem first
}

// Speed, the lesson's idea: 'device pointers' per iteration on the default problem, against the host-pointers
// variant (lesson 02's loop) timed in the same process (judge_against_variant(), cg_checks.hpp).
namespace {
constexpr const char* kSpeedCase =
    "cg/03_device_pointer_mode: speed: 'device pointers' per iteration on the default problem, against the "
    "host-pointers variant in the same process, against this GPU's gate";
}  // namespace

TEST_CASE(kSpeedCase, "[performance]") {
    perf_gate::Measurement m;
    m.measure = "x the host-pointers variant's speed per iteration";
    m.size = "default problem (40000 rows)";
    m.hint = "Do alpha, beta and the stopping test stay in device memory, so that no library call returns a value "
             "to the host and the host waits only every k iterations?";
    judge_against_variant(kSpeedCase, m, kDevicePointers, kHostPointers, "default");
}
