/// @file multigpu_mpi.hpp
/// @brief One process per GPU, started by mpirun: start-up, which GPU each process takes,
/// checked MPI calls, errors that stop every process with a message naming the rank,
/// the call, the file and the line, timing across ranks, and the exchange of halo lists.
///
///     int main(int argc, char** argv) {
///         ... parse options (before MPI starts: bad input exits 2 on every rank) ...
///         tut::mg::Mpi mpi(argc, argv);               // MPI_Init, safety defaults, cudaSetDevice
///         const tut::mg::World& world = mpi.world();
///         return tut::mg::guarded(world, "allreduce", [&] { ...; return 0; });
///     }
///
/// Process r takes GPU local_rank (its rank among the processes of its node), so
/// `mpirun -np 4` on a 4-GPU node puts one process on each GPU; more processes than GPUs
/// on a node is refused (NCCL does not accept two ranks on one GPU).
/// A failure in one process must not leave the others waiting forever in a collective:
/// guarded() and the TUT_MPI / TUT_NCCL macros print "[rank r of n, host] what failed"
/// and call MPI_Abort, which makes mpirun end every process.
///
/// Three more guards against a job whose ranks wait for each other forever:
/// - RankLocal marks work that one rank does alone (rank 0's one-GPU baseline while the
///   others wait): every collective helper of the track (barrier, the reductions, the
///   NCCL and NVSHMEM start-up, IPC buffers, the halo lists) refuses to start inside it,
///   naming itself and the section, instead of waiting for ranks that never come.
/// - agree_on_stop() compares the ranks' decisions to end an iteration: a rank that
///   stops while another goes on would leave that one waiting in its next collective, so
///   a disagreement becomes an AgreedError, thrown on every rank at the same point.
/// - every process records its steps (tut::mg::progress, multigpu_progress.hpp); a
///   watchdog armed from TUT_MG_WATCHDOG_S prints them on every rank before a time limit
///   ends the job, and abort_all() prints them with its message.
#pragma once

#include "check.hpp"
#include "cli.hpp"
#include "gpu.hpp"
#include "multigpu.hpp"
#include "multigpu_halo.hpp"
#include "multigpu_progress.hpp"
#include "timer.hpp"

#include <mpi.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <climits>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace tut::mg {

/// This process's place among the others, and its GPU.
struct World {
    int rank = 0, size = 1;              ///< in MPI_COMM_WORLD
    int local_rank = 0, local_size = 1;  ///< among the processes of this node
    int device = 0;                      ///< the CUDA device this process uses
    int devices = 0;                     ///< CUDA devices this process sees
    std::string host;
    MPI_Comm comm = MPI_COMM_WORLD;
    bool root() const { return rank == 0; }
};

namespace detail {
inline World*& current_world() {
    static World* w = nullptr;
    return w;
}
inline std::string where() {
    const World* w = current_world();
    if (!w) return "";
    return "[rank " + std::to_string(w->rank) + " of " + std::to_string(w->size) + ", " + w->host +
           (w->devices > 0 ? ", GPU " + std::to_string(w->device) : std::string()) + "] ";
}
}  // namespace detail

/// An error that every rank of the job throws at the same point, because the ranks found it
/// together (agree_on_stop()): no rank is left waiting, so it may end a check (or a
/// lesson) like any failure instead of aborting the job.
struct AgreedError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// A collective helper called where only some ranks run (inside a RankLocal section).
struct CollectiveMisuse : std::logic_error {
    using std::logic_error::logic_error;
};

/// Prints `message` with this process's rank and its last steps, and stops the whole job:
/// MPI_Abort when MPI is running with more than one process (mpirun then ends the
/// others), exit otherwise.
[[noreturn]] inline void abort_all(const std::string& message, int code = 1) {
    std::fprintf(stderr, "%s%s\n%s  (this rank %s)\n", detail::where().c_str(), message.c_str(),
                 detail::where().c_str(), progress_report().c_str());
    std::fflush(stderr);
    std::fflush(stdout);
    int initialized = 0, finalized = 0, size = 1;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) {
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (size > 1) MPI_Abort(MPI_COMM_WORLD, code);
    }
    std::exit(code);
}

namespace detail {
inline void check_mpi(int status, const char* call, const char* file, int line) {
    if (status == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {0};
    int length = 0;
    MPI_Error_string(status, text, &length);
    ::tut::detail::throw_call_error("MPI", std::string("'") + text + "'", call, file, line);
}
}  // namespace detail

}  // namespace tut::mg

/// Checks an MPI call: `TUT_MPI(MPI_Barrier(world.comm));` (errors are returned, not
/// fatal: MPI_COMM_WORLD's error handler is MPI_ERRORS_RETURN), throwing tut::CudaError
/// "MPI error '...' in CALL at FILE:LINE".
#define TUT_MPI(call) ::tut::mg::detail::check_mpi((call), #call, __FILE__, __LINE__)

namespace tut::mg {

// ---------------------------------------------------------------------------------------
// Work one rank does alone, and the collectives that must not start inside it
// ---------------------------------------------------------------------------------------

namespace detail {
inline std::string& rank_local_section() {
    static std::string what;
    return what;
}
}  // namespace detail

/// While alive, this rank runs work the other ranks do not (rank 0's one-GPU baseline,
/// while the others wait in the MPI_Bcast of its result). A collective over the job started
/// meanwhile (say, a communicator made lazily by the first call that needs it) would wait
/// forever for ranks that never call it: collective() refuses it, naming both.
class RankLocal {
  public:
    explicit RankLocal(const std::string& what) : previous_(detail::rank_local_section()) {
        detail::rank_local_section() = what;
        progress(what + " (this rank alone)");
    }
    ~RankLocal() { detail::rank_local_section() = previous_; }
    RankLocal(const RankLocal&) = delete;
    RankLocal& operator=(const RankLocal&) = delete;

  private:
    std::string previous_;
};

/// Called by every collective helper of the track before it talks to the other ranks:
/// throws CollectiveMisuse inside a RankLocal section (with more than one rank). `call`
/// names the collective.
inline void collective(const World& w, const char* call) {
    const std::string& section = detail::rank_local_section();
    if (w.size > 1 && !section.empty())
        throw CollectiveMisuse(std::string(call) + " is collective (every rank of the job must call it), but rank " +
                               std::to_string(w.rank) + " called it inside '" + section +
                               "', which it runs alone while the other ranks wait: they would never join, and the "
                               "job would hang. Do the collective part on every rank, before or after that section.");
}

/// Exits every process with the skip code 77 and one line saying why (printed once, by
/// rank 0): the lesson needs what this machine lacks. Collective: call it on every rank.
[[noreturn]] inline void skip_all(const World& w, const std::string& why) {
    collective(w, "skip_all");
    if (w.rank == 0) {
        std::printf("SKIPPED: %s. Exit code %d means skipped.\n", why.c_str(), kSkipExitCode);
        std::fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    std::exit(kSkipExitCode);
}

/// MPI started, the safety defaults set and this process bound to its GPU; MPI_Finalize
/// at the end. With fewer GPUs on a node than processes, or none, every process exits 77.
/// need_gpu = false: no GPU is looked for or used (the CPU tests of the MPI helpers).
/// When TUT_MG_WATCHDOG_S is set (mpi_launch.py sets it from its --timeout), the
/// watchdog of multigpu_progress.hpp is armed with it.
class Mpi {
  public:
    Mpi(int& argc, char**& argv, bool need_gpu = true) {
        apply_safety_defaults(true);
        int provided = 0;
        if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
            std::fprintf(stderr, "MPI_Init_thread failed\n");
            std::exit(1);
        }
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        TUT_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &world_.rank));
        TUT_MPI(MPI_Comm_size(MPI_COMM_WORLD, &world_.size));
        char name[MPI_MAX_PROCESSOR_NAME] = {0};
        int length = 0;
        TUT_MPI(MPI_Get_processor_name(name, &length));
        world_.host = name;
        MPI_Comm node;
        TUT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_.rank, MPI_INFO_NULL, &node));
        TUT_MPI(MPI_Comm_rank(node, &world_.local_rank));
        TUT_MPI(MPI_Comm_size(node, &world_.local_size));
        TUT_MPI(MPI_Comm_free(&node));
        detail::current_world() = &world_;
        set_progress_label(detail::where());
        progress("MPI started");
        start_watchdog(watchdog_seconds_from_env());
        if (!need_gpu) return;

        std::string why;
        const bool has_gpu = gpu_available(&why);
        if (has_gpu) cudaGetDeviceCount(&world_.devices);
        // Every process must take the same decision: agree on the smallest count seen.
        int fewest = world_.devices >= world_.local_size ? 1 : 0;
        TUT_MPI(MPI_Allreduce(MPI_IN_PLACE, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        if (!has_gpu)
            skip_all(world_, "these programs need a CUDA GPU per process and none is usable here (" + why + ")");
        if (!fewest)
            skip_all(world_, std::to_string(world_.local_size) + " processes on node " + world_.host + " but " +
                                 std::to_string(world_.devices) +
                                 " GPU(s): each process needs a GPU of its own (mpirun -np <at most the GPUs>)");
        world_.device = world_.local_rank;
        set_progress_label(detail::where());
        progress("CUDA context on GPU " + std::to_string(world_.device));
        TUT_CUDA(cudaSetDevice(world_.device));
        TUT_CUDA(cudaFree(nullptr));  // create the context now, not inside the first timed call
        progress("running");
    }
    ~Mpi() {
        progress("MPI_Finalize");
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized) MPI_Finalize();
        stop_watchdog();
        detail::current_world() = nullptr;
    }
    Mpi(const Mpi&) = delete;
    Mpi& operator=(const Mpi&) = delete;

    const World& world() const { return world_; }

  private:
    World world_;
};

/// Exits 77 on every rank, saying why, unless the job has at least `gpus` processes (one
/// per GPU). `what`: the lesson, for the message.
inline void require_processes(const World& w, int gpus, const std::string& what) {
    collective(w, "require_processes");
    if (w.size >= gpus) return;
    skip_all(w, what + " needs " + std::to_string(gpus) + " GPUs, one process on each (mpirun -np " +
                    std::to_string(gpus) + "); this job has " + std::to_string(w.size) + " process(es) on " +
                    std::to_string(w.devices) + " visible GPU(s)");
}

/// Runs a lesson's body and turns errors into a message and an exit code, like
/// tut::guarded_main, on every rank: bad input or an unsupported size -> 2, anything
/// else -> 1; with more than one process, MPI_Abort after the message.
template <class Body>
int guarded(const World& w, const char* program, Body&& body) {
    std::string message;
    int code = 0;
    try {
        return body();
    } catch (const Unsupported& e) {
        message = std::string(program) + ": unsupported input: " + e.what();
        code = kUsageExitCode;
    } catch (const UsageError& e) {
        message = std::string(program) + ": error: " + e.what() + " (see --help)";
        code = kUsageExitCode;
    } catch (const std::exception& e) {
        message = std::string(program) + ": " + e.what();
        code = 1;
    }
    if (w.size > 1) abort_all(message, code);
    std::fprintf(stderr, "%s%s\n", detail::where().c_str(), message.c_str());
    return code;
}

// ---------------------------------------------------------------------------------------
// Across ranks
// ---------------------------------------------------------------------------------------

inline double max_over_ranks(const World& w, double v) {
    collective(w, "max_over_ranks");
    TUT_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, w.comm));
    return v;
}
inline double min_over_ranks(const World& w, double v) {
    collective(w, "min_over_ranks");
    TUT_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MIN, w.comm));
    return v;
}
inline long long sum_over_ranks(const World& w, long long v) {
    collective(w, "sum_over_ranks");
    TUT_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, w.comm));
    return v;
}
/// True on every rank when `ok` is true on every rank.
inline bool all_ranks(const World& w, bool ok) {
    collective(w, "all_ranks");
    int v = ok ? 1 : 0;
    TUT_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, w.comm));
    return v != 0;
}
inline void barrier(const World& w) {
    collective(w, "barrier");
    TUT_MPI(MPI_Barrier(w.comm));
}

/// Rank `from`'s string, on every rank.
inline std::string broadcast_string(const World& w, std::string s, int from) {
    collective(w, "broadcast_string");
    int length = static_cast<int>(s.size());
    TUT_MPI(MPI_Bcast(&length, 1, MPI_INT, from, w.comm));
    s.resize(static_cast<size_t>(length));
    if (length) TUT_MPI(MPI_Bcast(s.data(), length, MPI_CHAR, from, w.comm));
    return s;
}

/// The first non-empty message of the lowest rank that has one ("" when no rank has), on
/// every rank: a check's verdict, with what rank r saw, reported by rank 0.
inline std::string first_message(const World& w, const std::string& mine) {
    collective(w, "first_message");
    int has = mine.empty() ? w.size : w.rank;
    TUT_MPI(MPI_Allreduce(MPI_IN_PLACE, &has, 1, MPI_INT, MPI_MIN, w.comm));
    if (has == w.size) return "";
    return "rank " + std::to_string(has) + ": " + broadcast_string(w, mine, has);
}

/// Whether to stop an iteration (a solver's stopping test, decided on each rank from values
/// that should be the same on every rank), compared across the ranks: returns `stop` when
/// every rank decided alike. When they differ, a rank that stops would leave the others
/// waiting in their next collective: every rank throws AgreedError instead, naming a rank
/// that stops and one that goes on. `what` and `step` say where, for the message (and the
/// progress report). Collective; one MPI_Allreduce of two ints (1-2 us on one node).
inline bool agree_on_stop(const World& w, bool stop, long long step, const std::string& what) {
    if (w.size == 1) return stop;
    collective(w, "agree_on_stop");
    int v[2] = {stop ? w.rank : INT_MAX, stop ? INT_MAX : w.rank};  // lowest rank that stops, that goes on
    TUT_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MIN, w.comm));
    if (v[0] != INT_MAX && v[1] != INT_MAX)
        throw AgreedError(what + ": the ranks disagree whether to stop after step " + std::to_string(step) + ": rank " +
                          std::to_string(v[0]) + " stops, rank " + std::to_string(v[1]) +
                          " goes on. Each rank decides from the values it holds; they must be the same on every "
                          "rank (summed, or gathered, over every GPU) for the ranks to stop together.");
    return stop;
}

/// Appends `count` timed runs of `work` to `samples`, in ms per call: all ranks start each
/// run together (a barrier after the stream drains), and a run of `batch` calls is timed
/// with events on `stream`. Collective.
template <class Work>
void time_calls(const World& w, Work& work, int count, int batch, cudaStream_t stream,
                std::vector<double>& samples) {
    cudaEvent_t start, stop;
    TUT_CUDA(cudaEventCreate(&start));
    TUT_CUDA(cudaEventCreate(&stop));
    batch = std::max(1, batch);
    for (int r = 0; r < std::max(1, count); ++r) {
        TUT_CUDA(cudaStreamSynchronize(stream));
        barrier(w);
        TUT_CUDA(cudaEventRecord(start, stream));
        for (int b = 0; b < batch; ++b) work();
        TUT_CUDA(cudaEventRecord(stop, stream));
        TUT_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        TUT_CUDA(cudaEventElapsedTime(&ms, start, stop));
        samples.push_back(double(ms) / batch);
    }
    TUT_CUDA(cudaEventDestroy(start));
    TUT_CUDA(cudaEventDestroy(stop));
}

/// How long `work` takes when every rank runs it together: per repeat, the ranks meet
/// (the stream drained, MPI_Barrier), then `batch` calls run between a pair of CUDA events
/// on `stream` and the repeat's time is their total / batch; each rank takes the median of
/// its repeats, and the result is the largest median over the ranks (a collective is done
/// when its slowest rank is). `warmup` calls first, untimed. Collective: call on every rank.
template <class Work>
double time_across_ranks(const World& w, Work&& work, int warmup, int repeats, int batch, cudaStream_t stream) {
    for (int i = 0; i < warmup; ++i) work();
    TUT_CUDA(cudaStreamSynchronize(stream));
    std::vector<double> samples;
    time_calls(w, work, repeats, batch, stream, samples);
    return max_over_ranks(w, median_of(samples));
}

// ---------------------------------------------------------------------------------------
// Halo lists between processes
// ---------------------------------------------------------------------------------------

/// Completes `plan` (made by discover_halo() on every rank) with its send lists: every rank
/// tells each owner which of its rows it needs (MPI_Alltoall of the counts, then
/// MPI_Alltoallv of the global columns). Collective.
inline void exchange_halo_lists(const World& w, HaloPlan& plan) {
    collective(w, "exchange_halo_lists");
    std::vector<int> send_counts(w.size, 0), recv_counts(w.size, 0);
    for (size_t i = 0; i < plan.recv_ranks.size(); ++i)
        send_counts[plan.recv_ranks[i]] = plan.recv_offsets[i + 1] - plan.recv_offsets[i];
    TUT_MPI(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, w.comm));
    std::vector<int> send_displs(w.size, 0), recv_displs(w.size, 0);
    for (int q = 1; q < w.size; ++q) {
        send_displs[q] = send_displs[q - 1] + send_counts[q - 1];
        recv_displs[q] = recv_displs[q - 1] + recv_counts[q - 1];
    }
    // The requests go out in rank order, which is the order of recv_cols.
    std::vector<int> incoming(static_cast<size_t>(recv_displs.back() + recv_counts.back()));
    TUT_MPI(MPI_Alltoallv(plan.recv_cols.data(), send_counts.data(), send_displs.data(), MPI_INT, incoming.data(),
                          recv_counts.data(), recv_displs.data(), MPI_INT, w.comm));
    std::vector<std::vector<int>> requests(w.size);
    for (int q = 0; q < w.size; ++q)
        requests[q].assign(incoming.begin() + recv_displs[q], incoming.begin() + recv_displs[q] + recv_counts[q]);
    set_send_lists(plan, requests);
}

}  // namespace tut::mg
