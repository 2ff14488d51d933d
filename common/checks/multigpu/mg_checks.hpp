/// @file mg_checks.hpp
/// @brief What the multigpu checks share: the GPUs they need, verdicts that every rank
/// agrees on, errors that stop the whole job rather than one rank, work that rank 0 does
/// alone, each rank's progress, guard zones.
///
/// Under MPI each rank runs the same test cases. A check that failed on one rank only
/// must fail on all (else the ranks' next collective calls would not match and the job
/// would hang), so every verdict goes through MG_REQUIRE(ok, message): the ranks agree on
/// it, and the message of the lowest failing rank is shown by every rank (each rank also
/// prints its own view and its last steps to stderr). A lesson call that throws on one rank
/// ends the job at once with the error (run_or_abort()); an AgreedError, which every rank
/// throws at the same point, fails the test case on every rank instead.
///
/// The shape of a check that compares with rank 0's one-GPU solve:
///
///     Job& j = job();                          // collective setup: every rank, first
///     mg_checks::step("N = 7: one GPU");
///     mg_checks::on_rank0("N = 7: the one-GPU solve", [&] { ... });  // the others wait below
///     TUT_MPI(MPI_Bcast(...));                 // every rank
///     mg_checks::step("N = 7: distributed solve");
///     mg_checks::run_or_abort([&] { ... });    // every rank
///     MG_REQUIRE(bad.empty(), bad);            // every rank, agreed
///
/// Inside on_rank0() every collective helper of the track refuses to start (RankLocal,
/// multigpu_mpi.hpp) and the job ends with a message naming it, instead of hanging.
#pragma once

#include "catch.hpp"
#include "lesson_hint.hpp"
#include "tut/check.hpp"
#include "tut/gpu.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "tut/multigpu_progress.hpp"
#ifdef TUT_MG_MPI
#include "tut/multigpu_mpi.hpp"
#endif

/// How many GPUs a check program needs: defined once per check file.
extern const int tut_mg_check_gpus;
#define TUT_MG_CHECKS_NEED_GPUS(n) extern const int tut_mg_check_gpus = (n)

namespace mg_checks {

/// Records this rank's current step (the watchdog and the failure reports print it).
inline void step(const std::string& what) { tut::mg::progress(what); }

/// Work for the end of main(), on every rank, before MPI_Finalize (NVSHMEM's finalize):
/// registered once, in the same order on every rank (from a collective setup).
inline std::vector<std::function<void()>>& finalizers() {
    static std::vector<std::function<void()>> f;
    return f;
}
inline void at_finalize(std::function<void()> f) { finalizers().push_back(std::move(f)); }

#ifdef TUT_MG_MPI
/// This process's place in the job (set by main()).
const tut::mg::World& world();

/// "" when `mine` is "" on every rank, else the message of the lowest rank that has one.
inline std::string agreed(const std::string& mine) { return tut::mg::first_message(world(), mine); }

/// Runs `f`; an exception on this rank ends the whole job with its message and this rank's
/// last steps (the other ranks would otherwise wait for this one in a collective). An
/// AgreedError (thrown by every rank at the same point) and Catch's own failures pass
/// through: they fail the test case on every rank alike.
template <class F>
void run_or_abort(F&& f) {
    try {
        f();
    } catch (const tut::mg::AgreedError&) {
        throw;
    } catch (const std::exception& e) {
        tut::mg::abort_all(std::string("a lesson call threw: ") + e.what() + "\n" + tut_checks::exercise_hint());
    }
}

/// Runs `f` on rank 0 only, as work it does alone while the other ranks wait (for its
/// result, in the MPI_Bcast that follows): inside, every collective helper of the track
/// refuses (tut::mg::RankLocal), and an exception ends the job with its message.
template <class F>
void on_rank0(const std::string& what, F&& f) {
    step(what + (world().rank == 0 ? "" : " (rank 0 alone; this rank waits for its result)"));
    if (world().rank != 0) return;
    tut::mg::RankLocal alone(what);
    run_or_abort(f);
}

/// Each rank's line on stderr after a failed verdict: the agreed message, what this rank
/// saw, and where it was.
inline void report_failure(const std::string& agreed_message, const std::string& mine) {
    std::fprintf(stderr, "%scheck failed (%s); this rank: %s; %s\n", tut::mg::progress_label().c_str(),
                 agreed_message.c_str(), mine.empty() ? "passed here" : mine.c_str(), tut::mg::progress_report().c_str());
    std::fflush(stderr);
}
#else
inline std::string agreed(const std::string& mine) { return mine; }
template <class F>
void run_or_abort(F&& f) {
    f();
}
template <class F>
void on_rank0(const std::string& what, F&& f) {
    step(what);
    f();
}
inline void report_failure(const std::string&, const std::string&) {}
#endif

/// The guard pattern: bytes 0xA5 before and after every checked output.
inline constexpr unsigned char kGuardByte = 0xA5;

/// Fills the `guard` elements before and after a payload of `count` elements at
/// `with_guards` (a device allocation of count + 2 guard elements) with the pattern.
template <class T>
void fill_guards(T* with_guards, size_t count, size_t guard) {
    TUT_CUDA(cudaMemset(with_guards, kGuardByte, guard * sizeof(T)));
    TUT_CUDA(cudaMemset(with_guards + guard + count, kGuardByte, guard * sizeof(T)));
}

/// "" when both guard zones still hold the pattern, else where the first write out of
/// bounds landed (in elements before the start or past the end).
template <class T>
std::string check_guards(const T* with_guards, size_t count, size_t guard) {
    std::vector<unsigned char> before(guard * sizeof(T)), after(guard * sizeof(T));
    TUT_CUDA(cudaMemcpy(before.data(), with_guards, before.size(), cudaMemcpyDeviceToHost));
    TUT_CUDA(cudaMemcpy(after.data(), with_guards + guard + count, after.size(), cudaMemcpyDeviceToHost));
    for (size_t i = before.size(); i-- > 0;)
        if (before[i] != kGuardByte)
            return "a write " + std::to_string((before.size() - i + sizeof(T) - 1) / sizeof(T)) +
                   " element(s) before the start of the output (byte offset -" + std::to_string(before.size() - i) + ")";
    for (size_t i = 0; i < after.size(); ++i)
        if (after[i] != kGuardByte)
            return "a write " + std::to_string(i / sizeof(T)) + " element(s) past the end of the output (element " +
                   std::to_string(count + i / sizeof(T)) + " of " + std::to_string(count) + ")";
    return "";
}

}  // namespace mg_checks

/// A verdict every rank agrees on: fails on every rank when `ok` is false on any, with the
/// message of the lowest failing rank (and the exercise hint).
#define MG_REQUIRE(ok, message)                                                                       \
    do {                                                                                              \
        const std::string mg_mine_ = (ok) ? std::string() : std::string(message);                   \
        const std::string mg_failure_ = ::mg_checks::agreed(mg_mine_);                                \
        if (!mg_failure_.empty()) ::mg_checks::report_failure(mg_failure_, mg_mine_);                 \
        INFO(mg_failure_ + (mg_failure_.empty() ? "" : "\n" + ::tut_checks::exercise_hint()));       \
        REQUIRE(mg_failure_.empty());                                                                 \
    } while (0)
