/// @file mg_perf.hpp
/// @brief Performance gates on several GPUs: perf_gate.hpp's [performance] case, with every
/// rank timing its part and one verdict for the job.
///
/// The single-GPU pattern (perf_gate.hpp) times the lesson's variant beside its yardstick
/// in one process and judges the ratio against this GPU's threshold. Under MPI each rank
/// runs the same case, so here:
///
/// - **the same collectives on every rank**: time_beside() runs the work and the yardstick
///   (and, under calibration, the previous approach) in the same alternating rounds on every
///   rank; before each timed run every rank drains its stream and the ranks meet
///   (MPI_Barrier), so all start together;
/// - **the slowest rank's time**: per rank the median of its timed runs (CUDA events on the
///   job's stream), then the largest over the ranks (MPI_Allreduce, max): a collective is
///   done when its slowest rank is. Every rank then holds the same numbers, bit for bit,
///   and computes the same ratio;
/// - **one verdict**: judge() evaluates on rank 0 only (perf_gate::evaluate(): the
///   thresholds file of rank 0's GPU), which prints the sentence and appends the one JSON
///   line to $TUT_PERF_REPORT; the verdict then goes through MG_REQUIRE, so the case fails
///   on every rank or on none. A job whose ranks hold different GPUs is reported, unscored.
///
/// The gate's size names the GPU count ("256 MiB, 2 GPUs"): a threshold measured on 2 GPUs
/// is used for 2 GPUs only (perf_gate refuses a size other than the file's), and the grader
/// runs the multigpu checks on 2.
#pragma once

#include "mg_checks.hpp"
#include "perf_gate.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#ifdef TUT_MG_MPI
#include "tut/multigpu_mpi.hpp"

namespace mg_perf {

/// How time_beside() repeats its work. Each timed run is `batch` calls between two events
/// (its time is their total / batch).
struct Plan {
    int warmup = 2;   ///< untimed calls of each before the first round
    int repeats = 5;  ///< timed runs of each per round
    int rounds = 3;   ///< rounds alternate work and yardstick, so both see the same drift
    int batch = 1;
};

struct Times {
    double work_ms = NAN;       ///< the slowest rank's median
    double yardstick_ms = NAN;  ///< the same for the yardstick
    double previous_ms = NAN;   ///< the same for the previous approach (when it was timed)
    int samples = 0;            ///< timed runs of each, per rank
};

/// Times `work` and `yardstick` (each enqueues one call on `stream`), and `previous` when it
/// is given: warm-up calls of each, then `rounds` rounds of `repeats` timed runs of each in
/// turn; per rank the median of each, and the largest median over the ranks. Collective:
/// every rank calls it with the same plan, and `previous` given on all or none.
template <class Work, class Yardstick>
Times time_beside(Work&& work, Yardstick&& yardstick, cudaStream_t stream, const Plan& plan = {},
                  const std::function<void()>& previous = {}) {
    const tut::mg::World& w = mg_checks::world();
    for (int i = 0; i < plan.warmup; ++i) {
        work();
        yardstick();
        if (previous) previous();
    }
    TUT_CUDA(cudaStreamSynchronize(stream));
    std::vector<double> a, b, p;
    const int repeats = std::max(1, plan.repeats), batch = std::max(1, plan.batch);
    std::function<void()> prev = previous;
    for (int r = 0; r < std::max(1, plan.rounds); ++r) {
        tut::mg::time_calls(w, work, repeats, batch, stream, a);
        tut::mg::time_calls(w, yardstick, repeats, batch, stream, b);
        if (prev) tut::mg::time_calls(w, prev, repeats, batch, stream, p);
    }
    Times t;
    t.samples = static_cast<int>(a.size());
    t.work_ms = tut::mg::max_over_ranks(w, perf_gate::median_of(a));
    t.yardstick_ms = tut::mg::max_over_ranks(w, perf_gate::median_of(b));
    if (previous) t.previous_ms = tut::mg::max_over_ranks(w, perf_gate::median_of(p));
    return t;
}

/// "" when every rank's GPU is rank 0's model, else why the ratio cannot be judged. Collective.
inline std::string same_gpus() {
    const tut::mg::World& w = mg_checks::world();
    const std::string mine = perf_gate::gpu_name();
    const std::string first = tut::mg::broadcast_string(w, mine, 0);
    return tut::mg::all_ranks(w, mine == first)
               ? ""
               : "the job's GPUs are not all one model (rank 0: " + first + "): no threshold describes the mix";
}

/// "N GPUs": the GPU count a gate's size names.
inline std::string gpus_text() {
    const int n = mg_checks::world().size;
    return n == 2 ? "2 GPUs" : tut::fmt("%d GPUs", n);
}

/// Judges `m` once for the job: rank 0 evaluates it against the thresholds of its GPU,
/// prints the sentence and appends the report line to $TUT_PERF_REPORT; every rank then
/// fails, or passes, with rank 0's verdict (MG_REQUIRE). `m` must be the same on every
/// rank (from time_beside()'s numbers). Collective.
inline perf_gate::Verdict judge(const std::string& case_name, perf_gate::Measurement m) {
    const tut::mg::World& w = mg_checks::world();
    if (m.unscored_because.empty()) m.unscored_because = same_gpus();
    else same_gpus();  // collective: every rank takes part whatever it found
    perf_gate::Verdict v;
    std::string failure;
    if (w.rank == 0) {
        const std::string lesson = TUT_LESSON_ID;
        const std::string gpu = perf_gate::gpu_name();
        v = perf_gate::evaluate(lesson, gpu, perf_gate::thresholds_dir(), m, perf_gate::calibrating());
        std::printf("[performance] %s\n", v.sentence.c_str());
        std::fflush(stdout);
        if (const char* path = std::getenv("TUT_PERF_REPORT"); path && *path) {
            if (FILE* f = std::fopen(path, "a")) {
                const std::string line = perf_gate::report_line(lesson, case_name, gpu, m, v) + "\n";
                std::fputs(line.c_str(), f);
                std::fclose(f);
            } else {
                WARN("cannot append the performance report to " << path);
            }
        }
        if (v.failed()) failure = v.sentence;
    }
    v.sentence = tut::mg::broadcast_string(w, v.sentence, 0);
    INFO(v.sentence);
    MG_REQUIRE(failure.empty(), failure);
    return v;
}

/// A case whose ratio is scale x the yardstick's time / the work's (perf_gate::RatioCase,
/// with this file's plan).
struct RatioCase {
    std::string name, gate, measure, size, hint;
    std::string work_name = "the lesson's variant";
    std::string yardstick_name = "the yardstick";
    std::string previous_name = "the previous approach";
    double scale = 1.0;
    std::string previous_from;
    double spread_floor = 0.03;
    Plan plan;
};

/// Times `work` beside `yardstick` (time_beside()) and judges scale x yardstick / work once
/// for the job (judge()). `previous`, the previous lesson's approach as the lesson keeps it
/// (a variant), is timed too under TUT_PERF_CALIBRATE=1 and reported as previous_measured.
/// A call that throws on any rank ends the job with its message (mg_checks::run_or_abort).
/// Collective.
template <class Work, class Yardstick>
perf_gate::Verdict time_and_judge(const RatioCase& c, Work&& work, Yardstick&& yardstick, cudaStream_t stream,
                                  const std::function<void()>& previous = {}) {
    Times t;
    // The same on every rank (each reads its own environment; a rank without it would skip
    // collectives the others make).
    const bool with_previous = tut::mg::all_ranks(mg_checks::world(), previous && perf_gate::calibrating());
    mg_checks::run_or_abort([&] {
        t = time_beside(work, yardstick, stream, c.plan, with_previous ? previous : std::function<void()>{});
    });
    perf_gate::Measurement m;
    m.gate = c.gate;
    m.measure = c.measure;
    m.size = c.size;
    m.hint = c.hint;
    m.ratio = c.scale * t.yardstick_ms / t.work_ms;
    m.detail = perf_gate::against(t.work_ms, c.work_name, t.yardstick_ms, c.yardstick_name) +
               ", the slowest rank's medians of " + std::to_string(t.samples) + " on " + gpus_text();
    if (std::isfinite(t.previous_ms)) {
        m.previous_measured = c.scale * t.yardstick_ms / t.previous_ms;
        m.detail += ", " + c.previous_name + " " + tut::fmt("%.3g ms", t.previous_ms);
    }
    m.previous_from = c.previous_from;
    m.spread_floor = c.spread_floor;
    return mg_perf::judge(c.name, m);
}

}  // namespace mg_perf
#endif  // TUT_MG_MPI
