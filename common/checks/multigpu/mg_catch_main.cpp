// main() of the multigpu track's check programs, for Catch2 2.x and 3.x alike. Built three
// times: tut_checks_mg, for a lesson that runs as one process using several GPUs;
// tut_checks_mg_mpi (TUT_MG_MPI), for one process per GPU under mpirun; and
// tut_checks_mg_mpi_cpu (TUT_MG_MPI and TUT_MG_CPU), for the CPU tests of the MPI helpers
// (processes, no GPU). Each check file says how many GPUs (processes) it needs
// (TUT_MG_CHECKS_NEED_GPUS(n)); with fewer, the program prints why and exits 77 (skipped).
// Under MPI every rank runs the same test cases in the same order (declaration order, and
// rank 0's random seed on every rank unless --order and --rng-seed are given); the checks
// agree on every verdict across ranks (mg_checks.hpp), so rank 0's report is the report:
// the other ranks write theirs to /dev/null, and print to stderr only what is theirs (a
// failed check's view from that rank, an abort, the watchdog's report).
// At the end, on every rank: the finalizers the checks registered (NVSHMEM's finalize),
// then MPI_Finalize; never the other way round, and never from a static destructor.
#if TUT_CATCH_MAJOR < 3
#define CATCH_CONFIG_RUNNER
#endif
#include "catch.hpp"
#include "mg_checks.hpp"

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#ifdef TUT_MG_MPI
namespace {
const tut::mg::World* g_world = nullptr;
}
namespace mg_checks {
const tut::mg::World& world() { return *g_world; }
}  // namespace mg_checks
#endif

namespace {
bool has_option(const std::vector<std::string>& args, const char* name) {
    const std::string with_value = std::string(name) + "=";
    for (const std::string& a : args)
        if (a == name || a.rfind(with_value, 0) == 0) return true;
    return false;
}

int run_catch(std::vector<std::string> args) {
    std::vector<char*> cargs;
    for (auto& a : args) cargs.push_back(a.data());
    return Catch::Session().run(static_cast<int>(cargs.size()), cargs.data());
}

void run_finalizers() {
    for (auto& f : mg_checks::finalizers()) f();
    mg_checks::finalizers().clear();
}
}  // namespace

int main(int argc, char* argv[]) {
#ifdef TUT_MG_MPI
#ifdef TUT_MG_CPU
    tut::mg::Mpi mpi(argc, argv, /*need_gpu=*/false);
#else
    tut::mg::Mpi mpi(argc, argv);  // exits 77 (skipped) when a process has no GPU of its own
#endif
    g_world = &mpi.world();
    const tut::mg::World& w = mpi.world();
    tut::mg::require_processes(w, tut_mg_check_gpus, "these checks");
    std::vector<std::string> args(argv, argv + argc);
    // The same test cases in the same order on every rank: their collectives must match.
    if (!has_option(args, "--order")) {
        args.push_back("--order");
        args.push_back("decl");
    }
    if (!has_option(args, "--rng-seed")) {
        unsigned seed = w.rank == 0 ? std::random_device{}() : 0u;
        TUT_MPI(MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, w.comm));
        args.push_back("--rng-seed");
        args.push_back(std::to_string(seed));
    }
    if (w.rank > 0) {
        bool has_out = false;
        for (size_t i = 0; i + 1 < args.size(); ++i)
            if (args[i] == "-o" || args[i] == "--out") {
                args[i + 1] = "/dev/null";
                has_out = true;
            }
        if (!has_out) {
            args.push_back("-o");
            args.push_back("/dev/null");
        }
    }
    int rc = run_catch(args);
    mg_checks::step("checks done: the ranks' exit codes compared");
    TUT_MPI(MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, w.comm));
    mg_checks::step("finalizers (before MPI_Finalize)");
    run_finalizers();
    return rc;  // ~Mpi: MPI_Finalize
#else
    tut::mg::set_progress_label("[one process] ");
    tut::mg::start_watchdog(tut::mg::watchdog_seconds_from_env());
    std::string why;
    int devices = 0;
    if (!tut::gpu_available(&why)) {
        std::printf("SKIPPED: these checks need a CUDA GPU and none is usable here (%s).\n", why.c_str());
        return tut::kSkipExitCode;
    }
    cudaGetDeviceCount(&devices);
    if (devices < tut_mg_check_gpus) {
        std::printf("SKIPPED: these checks need %d GPUs in one process; this process sees %d.\n", tut_mg_check_gpus,
                    devices);
        return tut::kSkipExitCode;
    }
    const int rc = run_catch(std::vector<std::string>(argv, argv + argc));
    run_finalizers();
    tut::mg::stop_watchdog();
    return rc;
#endif
}
