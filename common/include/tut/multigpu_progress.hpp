/// @file multigpu_progress.hpp
/// @brief Where each process of a multi-GPU job is, and a watchdog that says so when the
/// job does not end: the tool for finding which rank waits where in a hang.
///
///     tut::mg::progress("03_jor float N=1000: distributed solve");  // this process's current step
///     tut::mg::progress_detail("sweep 7: waiting for the GPU");      // where inside it
///     tut::mg::start_watchdog(35);   // after 35 s: every process prints its step and exits 124
///
/// A job whose ranks wait for each other (a collective reached by one rank only, a GPU
/// waiting for a signal that never comes) shows nothing from the outside: every process
/// just sleeps. Each process here keeps its current step and the few before it; the
/// watchdog, a thread that sleeps until a deadline, prints them to stderr on every rank at
/// about the same moment (each rank's watchdog started at MPI start-up) and ends the
/// process with exit code 124, the code of a time-out. mpi_launch.py arms it a little
/// before its own time limit (environment variable TUT_MG_WATCHDOG_S, passed to every rank).
/// abort_all() (multigpu_mpi.hpp) and the checks' failures print the same report.
///
/// Plain C++ and POSIX: no MPI, no CUDA (the CPU tests use it as it is). Steps are cheap to
/// record (a lock and a string copy): per solve, per batch of iterations, never per kernel.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace tut::mg {
namespace detail {

struct ProgressState {
    std::mutex mutex;
    std::condition_variable wake;
    std::string label;  ///< "[rank 1 of 2, host, GPU 1] ": set by tut::mg::Mpi
    std::string step = "start-up";
    std::string detail;  ///< where inside the step (a sweep, a batch of iterations): no history of its own
    std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point born = since;
    std::deque<std::string> before;  ///< the steps before the current one, newest first, with their lengths
    bool armed = false, disarmed = false;
};

/// One per process, never destroyed: the watchdog thread may outlive main()'s statics.
inline ProgressState& progress_state() {
    static ProgressState* s = new ProgressState;
    return *s;
}

inline double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

/// The report, with the lock held.
inline std::string progress_report_locked(const ProgressState& s) {
    const auto now = std::chrono::steady_clock::now();
    char head[64];
    std::snprintf(head, sizeof head, " (for %.1f s)", seconds_between(s.since, now));
    std::string out = "at: " + s.step + (s.detail.empty() ? "" : " [" + s.detail + "]") + head;
    if (!s.before.empty()) {
        out += "; before that:";
        for (const std::string& b : s.before) out += " <- " + b;
    }
    return out;
}

}  // namespace detail

/// The prefix of this process's lines ("[rank 1 of 2, host, GPU 1] ").
inline void set_progress_label(const std::string& label) {
    detail::ProgressState& s = detail::progress_state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.label = label;
}

/// Records `step` as what this process does now (the previous one goes to the history).
inline void progress(const std::string& step) {
    detail::ProgressState& s = detail::progress_state();
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (step == s.step) {
        s.detail.clear();
        return;
    }
    char took[48];
    std::snprintf(took, sizeof took, " (%.1f s)", detail::seconds_between(s.since, now));
    s.before.push_front(s.step + took);
    if (s.before.size() > 5) s.before.pop_back();
    s.step = step;
    s.detail.clear();
    s.since = now;
}

/// Where inside the current step this process is (a sweep, a batch of iterations, a
/// kernel it waits for): shown with the step, kept out of the history.
inline void progress_detail(const std::string& where) {
    detail::ProgressState& s = detail::progress_state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.detail = where;
}

/// "at: STEP [DETAIL] (for 2.1 s); before that: <- A (0.3 s) <- B (1.0 s)".
inline std::string progress_report() {
    detail::ProgressState& s = detail::progress_state();
    std::lock_guard<std::mutex> lock(s.mutex);
    return detail::progress_report_locked(s);
}

/// This process's label, for messages printed elsewhere.
inline std::string progress_label() {
    detail::ProgressState& s = detail::progress_state();
    std::lock_guard<std::mutex> lock(s.mutex);
    return s.label;
}

/// Seconds from TUT_MG_WATCHDOG_S (or `variable`); 0 when unset, empty or not a positive number.
inline double watchdog_seconds_from_env(const char* variable = "TUT_MG_WATCHDOG_S") {
    const char* v = std::getenv(variable);
    if (!v || !*v) return 0;
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    return (end && *end == '\0' && s > 0) ? s : 0;
}

/// After `seconds` (unless stop_watchdog() came first): prints this process's label, how
/// long it ran and its progress report to stderr, waits `grace` seconds (so that the other
/// ranks' watchdogs print theirs before mpirun ends them), and ends the process with
/// `exit_code`. Once per process; later calls do nothing. seconds <= 0: nothing.
inline void start_watchdog(double seconds, int exit_code = 124, double grace = 3.0) {
    if (!(seconds > 0)) return;
    detail::ProgressState& s = detail::progress_state();
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.armed) return;
        s.armed = true;
    }
    std::thread([seconds, exit_code, grace] {
        detail::ProgressState& st = detail::progress_state();
        std::unique_lock<std::mutex> lock(st.mutex);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        if (st.wake.wait_until(lock, deadline, [&] { return st.disarmed; })) return;
        const std::string line = st.label + "watchdog: still running " +
                                 std::to_string(static_cast<long long>(
                                     detail::seconds_between(st.born, std::chrono::steady_clock::now()))) +
                                 " s after start-up (limit " + std::to_string(static_cast<long long>(seconds)) +
                                 " s); " + detail::progress_report_locked(st) + ". Ending this process (exit " +
                                 std::to_string(exit_code) + ").\n";
        lock.unlock();
        std::fputs(line.c_str(), stderr);
        std::fflush(stderr);
        std::fflush(stdout);
        std::this_thread::sleep_for(std::chrono::duration<double>(grace));
        std::_Exit(exit_code);
    }).detach();
}

/// Disarms the watchdog (the process is about to end on its own).
inline void stop_watchdog() {
    detail::ProgressState& s = detail::progress_state();
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        s.disarmed = true;
    }
    s.wake.notify_all();
}

}  // namespace tut::mg
