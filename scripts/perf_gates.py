#!/usr/bin/env python3
"""The performance gates' thresholds: from measured ratios to common/checks/thresholds/<gpu>.json.

A lesson whose idea is speed has a check case tagged [performance] (common/checks/perf_gate.hpp)
that times the lesson's variant beside its yardstick in the same process and reports one JSON
line per run: lesson, case, gate, measure, size, ratio (higher is faster), and for calibration
previous_measured (the previous approach measured in the same run, where the lesson keeps it
as a variant), previous_from (the gate of the lesson whose solution is the previous approach,
measured the same way) and spread_floor. write_thresholds() turns the reports of several runs
of the solutions into a thresholds file by the rule below; `scripts/grade.py --calibrate`
calls it. The committed files were first written from the tour's records (--from-tour), one
run per lesson, by the same rule.

The rule, per gate (common/checks/thresholds/README.md says it in words):
- s_min, s_med: the slowest and the median of the solution's runs;
- spread: (max - min) / median of the runs, at least the report's spread_floor (3% for a
  kernel timed by CUDA events, 5% for a solve paced by the host), and the floor alone with
  fewer than MIN_RUNS runs;
- previous: the median of previous_measured, else the larger of the median of the
  previous_from gate's solution runs in the same reports (same measure and size: a
  stand-in) and the file's existing "previous" when it was timed in this lesson's own case
  (a source of "measured:" or "bank:"), since the gate must fail both, else the existing
  entry's "previous" (same measure and size), else unknown;
- a gate new to this GPU without previous_measured, which every other GPU's file leaves
  unscored with the previous approach known: unscored, with their figures as the reason (a
  calibration times only the solutions, and the stand-in can miss what the previous
  approach does in this lesson's own case);
- previous known and s_min / previous - 1 < 2 x spread: unscored (the gain is too small to
  gate reliably, or absent), with the reason;
- previous known otherwise: threshold = sqrt(s_min x previous), the geometric midpoint, at
  least one spread from each (the solution passes, the previous approach fails);
- previous unknown: threshold = s_min x (1 - 2 x spread), noted: the gate then only keeps the
  solution's level.

The multigpu gates come from the tour of the multigpu track on 2 GPUs, the GPU count the grader
runs its checks on: results/multigpu/<gpu>-x2.json, found next to the single-GPU results file
(or named with --multigpu-tour).

Usage:
  perf_gates.py --from-tour results/NVIDIA_H100_80GB_HBM3.json [--multigpu-tour FILE] [--out FILE]
                                  [--only GATE ...]: those gates only, into the existing file
  perf_gates.py --from-confirmation gate-confirmation.json [more.json ...] [--out FILE]
                                  20 runs of each side (grade.py --confirm-gates): a threshold that
                                  held stands (with the evidence); one that did not moves to the
                                  midpoint of the runs' ranges, or the gate is unscored
  perf_gates.py --check [DIR]     the committed thresholds files are well formed
  perf_gates.py --summary REPORT...   per gate, the passes and fails of repeated runs
"""
import argparse
import datetime
import json
import math
import os
import re
import statistics
import sys
import tempfile

import results_json as rj

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
THRESHOLDS_DIR = os.path.join(REPO, "common", "checks", "thresholds")

MIN_RUNS = 3              # runs needed before their own spread counts
DEFAULT_SPREAD = 0.03     # a kernel timed by CUDA events beside its yardstick
HOST_SPREAD = 0.05        # a solve timed by the host's clock
TRACK_ORDER = ["sgemm", "bandwidth", "reduction", "cg", "jor", "multigpu"]

RULE = ("threshold = sqrt(slowest solution run x previous approach), when the slowest run is at least "
        "2 x the run-to-run spread (measured, at least 3% for kernels and 5% for host-paced solves) above the "
        "previous approach; unscored when it is not; slowest run x (1 - 2 x spread) when the previous approach "
        "is unknown")


def gpu_file_name(gpu):
    """results/ and thresholds/ file name of a GPU (scripts/tour.py's gpu_file_name())."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", gpu).strip("_") + ".json"


def finite(x):
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and not isinstance(x, bool) else None


def round3(x):
    """x to three significant digits."""
    if x == 0:
        return 0.0
    return float("%.3g" % x)


def gate_of(report):
    return report.get("gate") or report.get("lesson")


def pct(x, measure):
    if measure.startswith("%"):
        return "%.1f%%" % (100 * x) if x < 0.1 else "%.0f%%" % (100 * x)
    return "%.2fx" % x


def load_existing(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("lessons"), dict) else None


def gate_sort_key(key):
    track = key.split("/", 1)[0]
    return (TRACK_ORDER.index(track) if track in TRACK_ORDER else len(TRACK_ORDER), key)


def decide(runs, previous, spread_floor, measure):
    """(threshold or None, reason, note, spread) for the solution's `runs` and the previous
    approach's ratio (None when unknown): the rule of the module comment."""
    s_min, s_med = min(runs), statistics.median(runs)
    spread = spread_floor
    if len(runs) >= MIN_RUNS and s_med > 0:
        spread = max(spread_floor, (max(runs) - s_min) / s_med)
    if previous is None:
        return (round3(s_min * (1 - 2 * spread)), "",
                "the previous approach is not measured on this GPU: the gate is 2 x the spread below the "
                "solution's slowest run", spread)
    if previous >= s_min:
        return (None, "the previous lesson's approach (%s) is as fast as this lesson's solution (%s) in this measure "
                      "on this GPU: the idea does not show as a speed-up here" % (pct(previous, measure), pct(s_min, measure)),
                "", spread)
    gap = s_min / previous - 1
    if gap < 2 * spread:
        return (None, "the solution (%s) is only %.1f%% faster than the previous lesson's approach (%s) in this measure "
                      "on this GPU, less than twice the run-to-run spread (%.0f%%): too close to gate reliably"
                % (pct(s_min, measure), 100 * gap, pct(previous, measure), 100 * spread), "", spread)
    return round3(math.sqrt(s_min * previous)), "", "", spread


DIRECT_SOURCES = ("measured:", "bank:")  # the previous approach timed in this lesson's own case


def reference_verdicts(gate, measure, size, gpu_name, folder=THRESHOLDS_DIR):
    """[(gpu, entry)] of the other GPUs' files in `folder` whose entry for `gate` has this
    measure and size: what the reference GPUs concluded about the gate."""
    found = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not name.endswith(".json") or name == gpu_file_name(gpu_name):
            continue
        data = load_existing(os.path.join(folder, name))
        entry = data["lessons"].get(gate) if data else None
        if isinstance(entry, dict) and (entry.get("measure"), entry.get("size")) == (measure, size):
            found.append((str(data.get("gpu") or name[:-5]), entry))
    return found


def unscored_everywhere_reason(verdicts, measure):
    """The reason a new GPU's calibration leaves a gate unscored when every reference GPU
    left it unscored with the previous approach known ("" otherwise): a calibration times
    the solutions only, and the previous lesson's solution in its own case is a stand-in
    that can miss what the previous approach does in this lesson's case."""
    if not verdicts or any(e.get("threshold") is not None or finite(e.get("previous")) is None for _, e in verdicts):
        return ""
    seen = "; ".join("%s: the solution %s, the previous approach %s" % (
        gpu, pct(finite(e.get("solution")) or 0.0, measure), pct(finite(e["previous"]), measure)) for gpu, e in verdicts)
    return ("not gated: on every reference GPU the previous lesson's approach came within the run-to-run spread "
            "of this lesson's solution or ahead of it (%s; their thresholds files say how each was measured), and "
            "a calibration times only the solutions, so it cannot show that the idea separates here" % seen)


def write_thresholds(reports, gpu_name, out_path, reference_dir=THRESHOLDS_DIR):
    """Writes the thresholds file of `gpu_name` to `out_path` from the [performance] reports
    (the JSON dicts of common/checks/perf_gate.hpp; several runs per lesson) by the rule of
    the module comment. Entries of gates without reports are kept from the existing file at
    `out_path` (else from the committed file of that GPU); the rest are replaced. A gate new
    to this GPU that every other GPU's file in `reference_dir` leaves unscored stays
    unscored (unscored_everywhere_reason()) unless the reports measured the previous approach
    beside the solution."""
    existing = load_existing(out_path) or load_existing(os.path.join(THRESHOLDS_DIR, gpu_file_name(gpu_name))) or {}
    old = existing.get("lessons", {}) if isinstance(existing, dict) else {}
    # This GPU's reports, less those measured in a way the thresholds do not describe (an L2
    # that could not be flushed, a problem this GPU cannot hold: unscored_because).
    mine = [r for r in reports if isinstance(r, dict) and (not r.get("gpu") or r.get("gpu") == gpu_name)
            and not r.get("unscored_because")]
    by_gate = {}
    for r in mine:
        if gate_of(r):
            by_gate.setdefault(gate_of(r), []).append(r)
    labels = [r.get("source_label") for r in mine if r.get("source_label")]
    sources = sorted(set(labels))
    if len(sources) == 1:
        source = sources[0]
    elif sources and all(str(x).startswith("tour ") for x in sources):
        source = max(sources, key=labels.count)  # several tours (one per GPU count): the file's is the most used
    else:
        source = "calibration %s" % datetime.date.today().isoformat()

    def shape(rs):
        """The measure and size most of the reports share."""
        pairs = [(r.get("measure", ""), r.get("size", "")) for r in rs]
        return max(set(pairs), key=pairs.count)

    lessons = dict(old)
    for gate, rs in by_gate.items():
        measure, size = shape(rs)
        rs = [r for r in rs if (r.get("measure", ""), r.get("size", "")) == (measure, size)]
        runs = [v for v in (finite(r.get("ratio")) for r in rs) if v is not None and v > 0]
        lesson = rs[0].get("lesson") or gate.split(":")[0]
        if not runs:
            lessons[gate] = {"measure": measure, "size": size, "solution": None, "previous": None, "threshold": None,
                             "runs": 0, "source": source,
                             "reason": "no run of the solution gave a ratio on this GPU (did the case fail or skip?)"}
            continue
        previous, previous_source = None, ""
        measured = [v for v in (finite(r.get("previous_measured")) for r in rs) if v is not None and v > 0]
        before = old.get(gate, {}) if isinstance(old.get(gate), dict) else {}
        alike = (before.get("measure"), before.get("size")) == (measure, size)
        carried = "" if measured or before else unscored_everywhere_reason(
            reference_verdicts(gate, measure, size, gpu_name, reference_dir), measure)
        if measured:
            given = sorted({r.get("previous_source") for r in rs if r.get("previous_source")})
            previous = statistics.median(measured)
            previous_source = given[0] if len(given) == 1 else "measured beside it in the same runs"
        elif not carried:
            # The previous approach has two renditions: the previous lesson's solution in its own
            # case (a stand-in, in the same runs) and, from an earlier file of this GPU, one timed
            # in this lesson's own case; the gate must fail both, so the faster counts.
            candidates = []
            origin = next((r.get("previous_from") for r in rs if r.get("previous_from")), "")
            if origin:
                theirs = [finite(r.get("ratio")) for r in by_gate.get(origin, [])
                          if (r.get("measure", ""), r.get("size", "")) == (measure, size)]
                theirs = [v for v in theirs if v is not None and v > 0]
                if theirs:
                    candidates.append((statistics.median(theirs), "%s's solution in the same runs" % origin))
            if alike and finite(before.get("previous")) and str(before.get("previous_source", "")).startswith(
                    DIRECT_SOURCES):
                candidates.append((finite(before.get("previous")), before["previous_source"]))
            if candidates:
                previous, previous_source = max(candidates)
            elif alike and finite(before.get("previous")):
                previous = finite(before.get("previous"))
                previous_source = before.get("previous_source") or "the earlier thresholds"
        own = sorted({r.get("source_label") for r in rs if r.get("source_label")})
        entry_source = own[0] if len(own) == 1 else source
        floors = [v for v in (finite(r.get("spread_floor")) for r in rs) if v is not None and v > 0]
        floor = max(floors) if floors else DEFAULT_SPREAD
        threshold, reason, note, spread = decide(runs, previous, floor, measure)
        if carried:
            threshold, reason, note = None, carried, ""
        entry = {"measure": measure, "size": size,
                 "solution": round3(statistics.median(runs)), "solution_min": round3(min(runs)), "runs": len(runs),
                 "spread": round3(spread),
                 "previous": round3(previous) if previous is not None else None,
                 "previous_source": previous_source,
                 "threshold": threshold, "source": entry_source}
        if reason:
            entry["reason"] = reason
        if note:
            entry["note"] = note
        if lesson != gate:
            entry["lesson"] = lesson
        lessons[gate] = entry
    data = {"gpu": gpu_name, "source": source, "rule": RULE,
            "lessons": {k: lessons[k] for k in sorted(lessons, key=gate_sort_key)}}
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    return data


# ---------------------------------------------------------------------------------------
# The committed files' first version: the tour's records as one run per gate
# ---------------------------------------------------------------------------------------

SGEMM_FP32 = "% of cuBLAS FP32"
SGEMM_TF32 = "% of cuBLAS TF32"
D2D = "% of cudaMemcpy D2D of the same bytes"
RED = "% of cudaMemcpy D2D bandwidth"
FLOOR = "% of the bandwidth floor per iteration"
CG_DEFAULT = "default problem (40000 rows)"
CG_LARGE = "2.1 M-row problem"
GATHER = "10000 x 32768 floats, 16384 random columns"
CG_DEFAULT_SIZE = "diffusion27 10x10x400 (40000 rows, 939232 nnz)"
CG_LARGE_SIZE = "diffusion27 128x128x128 (2097152 rows, 55742968 nnz)"


def _library(r):
    return finite(r.get("ratio_to_library"))


def _d2d(r):
    return finite((r.get("extra") or {}).get("ratio_to_d2d"))


def _floor(r):
    return finite((r.get("extra") or {}).get("fraction_of_floor_per_iter"))


def _us(r):
    return finite((r.get("extra") or {}).get("us_per_iter"))


# One entry per gate: the lesson's record (lesson, variant, size), how its ratio is read from
# it, and the previous approach's record (same reading; the lesson's own record where the
# previous approach measured as fast as the solution, with previous_text saying so) or a
# function of the results. These must agree with the [performance] cases (measure, size, variant).
def _sg(lesson, variant, previous, size="4096", measure=SGEMM_FP32, shown_size="N = 4096"):
    return {"gate": "sgemm/" + lesson, "measure": measure, "size": shown_size,
            "record": ("sgemm", lesson, variant, size), "read": _library, "previous": previous}


def _red(lesson, variant, previous):
    return {"gate": "reduction/" + lesson, "measure": RED, "size": "n = 2^26 floats",
            "record": ("reduction", lesson, variant, "67108864"), "read": _d2d, "previous": previous}


def _bw(lesson, variant, previous, size=GATHER, record_size="10000x32768->16384 random"):
    return {"gate": "bandwidth/" + lesson, "measure": D2D, "size": size,
            "record": ("bandwidth", lesson, variant, record_size), "read": _library, "previous": previous}


def _cg(lesson, variant, previous, large=False):
    return {"gate": "cg/" + lesson, "measure": FLOOR, "size": CG_LARGE if large else CG_DEFAULT,
            "record": ("cg", lesson, variant, CG_LARGE_SIZE if large else CG_DEFAULT_SIZE), "read": _floor,
            "previous": previous, "spread_floor": HOST_SPREAD}


def _jor_d2d(results):
    """A JOR record's fraction of the floor with the floor's bandwidth the D2D copy's (the
    check's yardstick) instead of the tour's read kernel's."""
    d2d = finite((results.get("device") or {}).get("measured_d2d_gbs"))

    def read(r):
        e = r.get("extra") or {}
        f, read_gbs = finite(e.get("fraction_of_floor_per_iter")), finite(e.get("read_gbs"))
        return f * read_gbs / d2d if f and read_gbs and d2d else None
    return read


def _jor(lesson, variant, size, previous):
    n, t = size.split()
    return {"gate": "jor/" + lesson, "measure": FLOOR, "size": "N = %s, %s" % (n, t),
            "record": ("jor", lesson, variant, size), "read": "jor_d2d", "previous": previous,
            "spread_floor": HOST_SPREAD}


def _beside(track, lesson, variant, size, shown_size, baseline, label, earlier=None, confirm_first=None):
    """A gate whose case times the lesson's variant beside `baseline`, the previous lesson's
    approach kept in the same program, in one process: "x the <baseline> variant's speed per
    iteration". From a tour, the baseline's record of this lesson when the tour has one, else
    `earlier`, the previous lesson's record of the same approach (same run, another process).
    `label` names the baseline in the measure ("host-pointers" for the variant "host pointers").
    `confirm_first`: why one tour run cannot place this gate's threshold; a tour's file leaves
    it unscored, for a confirmation on that GPU to set (confirm_entry())."""
    spec = {"gate": "%s/%s" % (track, lesson), "measure": "x the %s variant's speed per iteration" % label,
            "size": shown_size, "record": (track, lesson, variant, size),
            "read": ("beside", (track, lesson, baseline, size), earlier),
            "previous": lambda results: 1.0, "spread_floor": HOST_SPREAD,
            "previous_text": "the %s variant itself (1.0x)" % label}
    if confirm_first:
        spec["confirm_first"] = confirm_first
    return spec


def _beside_ratio(results, record, own_baseline, earlier):
    base = find_record(results, own_baseline) or (find_record(results, earlier) if earlier else None)
    return _us(base) / _us(record) if base and _us(base) and _us(record) else None


def _sgemm15_previous(results):
    """Lesson 14's FP32 kernel as a fraction of cuBLAS TF32 (lesson 15's yardstick)."""
    r14 = find_record(results, ("sgemm", "14_tuning", "128x256x16 swizzle 8 C staged", "4096"))
    r15 = find_record(results, ("sgemm", "15_wmma", "wmma 128x128x32", "4096"))
    if not r14 or not r15:
        return None
    v, lib = finite(r14.get("value")), finite(r15.get("library_value"))
    return v / lib if v and lib else None


def _speedup(track, lesson, slow, fast, size):
    """Per iteration, `fast` as a multiple of `slow`'s speed (us per iteration)."""
    def value(results):
        a = find_record(results, (track, lesson, slow, size))
        b = find_record(results, (track, lesson, fast, size))
        return _us(a) / _us(b) if a and b and _us(a) and _us(b) else None
    return value


TOUR_GATES = [
    _sg("03_unrolling", "unroll=16", ("sgemm", "03_unrolling", "runtime n", "4096")),
    _sg("04_multi_output", "multi=4 strided", ("sgemm", "04_multi_output", "multi=1", "4096")),
    _sg("05_shared_tiling", "tile=32", ("sgemm", "01_naive", "naive", "4096")),
    _sg("06_granularity", "g=4", ("sgemm", "06_granularity", "g=1", "4096")),
    _sg("07_volkov_ilp", "grain=16", ("sgemm", "07_volkov_ilp", "grain=1", "4096")),
    _sg("09_register_blocking", "thread 8x8", ("sgemm", "07_volkov_ilp", "grain=16", "4096")),
    _sg("10_warp_tiling", "warp 32x64", ("sgemm", "09_register_blocking", "thread 8x8", "4096")),
    # Lesson 10's kernel is not the approach to gate against: lesson 11 also changes the tile.
    # Its single-buffer loop at lesson 11's own tile (the bank's previous_lesson submission)
    # measured 79-81% of cuBLAS FP32 on the H100 (2026-11-26, one grader run, medians of 30)
    # against the solution's 78-87%: as fast, within the spread, so the gate is unscored (the
    # previous approach is read from the lesson's own record).
    dict(_sg("11_double_buffering", "2 buffers", ("sgemm", "11_double_buffering", "2 buffers", "4096")),
         previous_text="measured: lesson 10's single-buffer loop at this lesson's tile, 79-81% of cuBLAS FP32 "
                       "on the H100 against the solution's 78-87% in the same run"),
    _sg("12_large_tile", "tile=128x256", ("sgemm", "11_double_buffering", "2 buffers", "4096")),
    # Lesson 13 keeps lesson 12's register-staged kernel as a variant: the previous approach, same run.
    _sg("13_cp_async", "cp.async 3 stages", ("sgemm", "13_cp_async", "registers 2 buffers", "4096")),
    _sg("14_tuning", "128x256x16 swizzle 8 C staged", ("sgemm", "14_tuning", "128x256x8", "4096")),
    dict(_sg("15_wmma", "wmma 128x128x32", _sgemm15_previous, measure=SGEMM_TF32),
         previous_text="tour: sgemm/14_tuning '128x256x16 swizzle 8 C staged' (FP32) over cuBLAS TF32"),
    _sg("16_mma_sync", "mma.sync 4 stages", ("sgemm", "15_wmma", "wmma 128x128x32", "4096"), measure=SGEMM_TF32),
    _sg("17_wgmma", "wgmma 128x256x32 4 stages", ("sgemm", "16_mma_sync", "mma.sync 4 stages", "4096"),
        measure=SGEMM_TF32),
    # Lessons 18 and 19 gain a few percent over the previous kernel, near the run-to-run spread
    # of a TF32 GEMM at these sizes: one tour run cannot tell whether that holds in every run.
    dict(_sg("18_operand_swap", "operand swap 256x128x32 4 stages",
             ("sgemm", "17_wgmma", "wgmma 128x256x32 4 stages", "4096"), measure=SGEMM_TF32),
         confirm_first="on an H100 the solution's slowest of 20 runs measured 100% of cuBLAS TF32, lesson 17's "
                       "kernel's fastest 99%"),
    dict(_sg("19_persistent_cluster", "persistent, cluster of 2, TMA stores, split last wave",
             ("sgemm", "18_operand_swap", "operand swap 256x128x32 4 stages", "5000"), size="5000",
             measure=SGEMM_TF32, shown_size="N = 5000"),
         confirm_first="on an H100 the solution's slowest of 40 runs measured 107% of cuBLAS TF32, lesson 18's "
                       "kernel's fastest of 20 also 107%"),
    _bw("02_copy_kernels", "float4 x4 in flight, grid-stride, 2 blocks per SM",
        ("bandwidth", "02_copy_kernels", "float, grid-stride", "134217728"), size="n = 2^27 floats",
        record_size="134217728"),
    _bw("03_gather_divmod", "div and mod, full grid", None, size=GATHER + ", a full grid"),
    _bw("04_gather_incremental", "incremental, 64x256 (classic launch)",
        ("bandwidth", "03_gather_divmod", "div and mod, 64x256 (classic launch)", "10000x32768->16384 random"),
        size=GATHER + ", 64 blocks of 256 threads"),
    _bw("05_gather_constant", "precomputed + const, 64x256 (classic launch)",
        ("bandwidth", "04_gather_incremental", "incremental, 64x256 (classic launch)", "10000x32768->16384 random"),
        size=GATHER + ", 64 blocks of 256 threads"),
    _bw("06_gather_2d", "2D, float4, 2 per thread",
        ("bandwidth", "05_gather_constant", "precomputed + read-only cache, full grid", "10000x32768->16384 random")),
    _red("02_interleaved_strided", "float", ("reduction", "01_interleaved_divergent", "float", "67108864")),
    _red("03_sequential", "float", ("reduction", "02_interleaved_strided", "float", "67108864")),
    _red("04_first_add_on_load", "float", ("reduction", "03_sequential", "float", "67108864")),
    _red("05_unroll_last_warp", "float", ("reduction", "04_first_add_on_load", "float", "67108864")),
    # Lesson 5's kernel is not the approach to gate against: lesson 6's variants also change the
    # launch. Lesson 6's kernel with the tree's loop kept (the bank's previous_lesson submission)
    # measured 78.9% of a device copy's bandwidth on the H100 (2026-11-27, one grader run, medians
    # of 30) against the solution's 72.3% in the same grading run: no slower, so the gate is unscored.
    dict(_red("06_complete_unroll", "float", ("reduction", "06_complete_unroll", "float", "67108864")),
         previous_text="measured: lesson 6's kernel with the tree's loop kept, 78.9% of a device copy's bandwidth "
                       "on the H100 against the solution's 72.3% in the same grading run"),
    _red("07_grid_stride", "float", ("reduction", "06_complete_unroll", "float", "67108864")),
    _red("08_warp_shuffle_atomic", "float, atomic per block", ("reduction", "07_grid_stride", "float", "67108864")),
    _red("09_vectorized", "float4", ("reduction", "08_warp_shuffle_atomic", "float, atomic per block", "67108864")),
    # Lessons 3-4 and 10, and JOR 4-5, 7 and 8, keep the previous approach as a variant; their
    # cases time the two in one process (an iteration of microseconds, paced by the host, moves
    # by a quarter between processes, the ratio of two in one process by a few percent).
    # CG 3-4's loop is bound by how fast the host queues work and its baseline by round trips:
    # a slower host stretches the two by different amounts, and their ratio spreads widely.
    _beside("cg", "03_device_pointer_mode", "device pointers", CG_DEFAULT_SIZE, CG_DEFAULT, "host pointers",
            "host-pointers", ("cg", "02_jacobi", "jacobi", CG_DEFAULT_SIZE),
            confirm_first="on an H100 the solution measured 1.07x to 1.77x in 20 runs, lesson 02's loop 1.01x to "
                          "1.07x"),
    _beside("cg", "04_own_dot", "own dot", CG_DEFAULT_SIZE, CG_DEFAULT, "cuBLAS dot", "cuBLAS-dot",
            ("cg", "03_device_pointer_mode", "device pointers", CG_DEFAULT_SIZE),
            confirm_first="on an H100 the solution measured 1.12x to 1.41x in 20 runs, lesson 03's loop 0.93x to "
                          "1.04x"),
    _cg("05_fusion", "fused", ("cg", "04_own_dot", "own dot", CG_DEFAULT_SIZE)),
    _cg("06_mapped_polling", "poll=every-k", ("cg", "05_fusion", "fused", CG_DEFAULT_SIZE)),
    _cg("07_graph_while", "graph while", ("cg", "06_mapped_polling", "poll=every-k", CG_DEFAULT_SIZE)),
    _cg("08_persistent", "resident", ("cg", "07_graph_while", "graph while", CG_DEFAULT_SIZE)),
    _cg("09_streaming", "vectors=on-chip", ("cg", "09_streaming", "vectors=memory", CG_LARGE_SIZE), large=True),
    _beside("cg", "10_one_round", "pipelined, one round", CG_DEFAULT_SIZE, CG_DEFAULT, "pipelined, grid barrier",
            "grid-barrier"),
    # A solve of 8 sweeps at N = 4096 lasts under half a millisecond, paced by the host, and
    # the two lessons' records come from two processes.
    dict(_jor("02_warp_rows", "1 row per warp", "4096 float", ("jor", "01_block_per_row", "restrict", "4096 float")),
         confirm_first="the H100's tour measured the solution 7.0% faster than lesson 01's block per row, the "
                       "H200's first tour 5.1% and its second 52%, from a lesson 01 run 40% slower than before"),
    _beside("jor", "04_fused", "fused", "512 float", "N = 512, float", "three launches", "three-launch",
            ("jor", "02_warp_rows", "1 row per warp", "512 float")),
    _beside("jor", "05_graph_loop", "while graph", "512 float", "N = 512, float", "one look per sweep",
            "one-look-per-sweep", ("jor", "04_fused", "fused", "512 float")),
    _jor("06_persistent", "persistent", "512 float", ("jor", "05_graph_loop", "while graph", "512 float")),
    _beside("jor", "07_l2_reuse", "alternating direction", "4096 float", "N = 4096, float", "persistent",
            "persistent"),
    _beside("jor", "08_mixed_precision", "mixed", "8192 double", "N = 8192, double", "double", "double"),
]


# The multigpu gates: measured on 2 GPUs (the grader's count, named in the size), from the
# tour's results/multigpu/<gpu>-x2.json ("tour": "multigpu").
MG_GPUS = 2
MG_ALLREDUCE = "% of ncclAllReduce's bus bandwidth"
MG_OVERLAP = "x the sequential variant's speed per iteration"

MULTIGPU_GATES = [
    # The ring's bus bandwidth over NCCL's, same run, 256 MiB; the previous approach, the
    # gather, is a variant of the same program.
    {"gate": "multigpu/02_allreduce", "measure": MG_ALLREDUCE, "size": "256 MiB, %d GPUs" % MG_GPUS,
     "record": ("multigpu", "02_allreduce", "ring", "268435456"), "read": _library, "tour": "multigpu",
     "previous": ("multigpu", "02_allreduce", "gather", "268435456")},
    # The overlap against the same program's lesson-4 order, per iteration, weak problem.
    {"gate": "multigpu/05_overlap", "measure": MG_OVERLAP, "size": "weak problem (128^3 per GPU), %d GPUs" % MG_GPUS,
     "record": ("multigpu", "05_overlap", "overlap", "weak"), "read": "mg05", "tour": "multigpu",
     "previous": lambda results: 1.0, "spread_floor": HOST_SPREAD,
     "previous_text": "the sequential variant itself (1.0x)"},
]
TOUR_GATES += MULTIGPU_GATES


def find_record(results, key):
    track, lesson, variant, size = key
    for r in results.get("records", []):
        if isinstance(r, dict) and rj.lesson_of(r) == (track, lesson) and (r.get("variant"), str(r.get("size"))) == (
                variant, size):
            return r
    return None


def _reader(spec, results):
    read = spec["read"]
    if isinstance(read, tuple) and read[0] == "beside":
        return lambda r: _beside_ratio(results, r, read[1], read[2])
    if read == "jor_d2d":
        return _jor_d2d(results)
    if read == "mg05":
        return lambda r: _speedup("multigpu", "05_overlap", "sequential", "overlap", "weak")(results)
    return read


def multigpu_tour_path(results_path, gpu):
    """The 2-GPU tour of the multigpu track beside a single-GPU results file:
    <folder>/multigpu/<gpu>-x2.json (None when there is none)."""
    stem = gpu_file_name(gpu)[:-len(".json")]
    path = os.path.join(os.path.dirname(os.path.abspath(results_path)), "multigpu", "%s-x%d.json" % (stem, MG_GPUS))
    return path if os.path.exists(path) else None


def tour_date(results, lesson=None):
    """The date a tour measured `lesson` ("track/NN_name"): the last of its 'updates' that
    lists it, else the file's date."""
    date = results.get("date") or "undated"
    for u in results.get("updates") or []:
        if isinstance(u, dict) and lesson in (u.get("lessons") or []) and u.get("date"):
            date = u["date"]
    return date


def reports_from_tour(results, multigpu=None):
    """One report per gate from a tour's results (the solution's ratio and the previous
    approach's), and the list of gates the tour did not measure. `multigpu`: the multigpu
    track's tour on MG_GPUS GPUs (results/multigpu/<gpu>-x2.json), for its gates."""
    reports, missing = [], []
    for spec in TOUR_GATES:
        own = multigpu if spec.get("tour") == "multigpu" else results
        if own is None:
            missing.append(spec)
            continue
        date = tour_date(own, spec["gate"].split(":")[0]) if own is multigpu else (results.get("date") or "undated")
        label = "tour %s" % date + (", %d GPUs" % MG_GPUS if own is multigpu else "")
        read = _reader(spec, own)
        rec = find_record(own, spec["record"])
        ratio = read(rec) if rec else None
        if ratio is None:
            missing.append(spec)
            continue
        prev = spec["previous"]
        if callable(prev):
            previous = prev(own)
            previous_source = spec.get("previous_text", "")
        elif prev is None:
            previous, previous_source = None, ""
        else:
            p = find_record(own, prev)
            previous = read(p) if p else None
            previous_source = spec.get("previous_text") or "tour: %s/%s '%s'" % (prev[0], prev[1], prev[2])
        reports.append({"lesson": spec["gate"].split(":")[0], "gate": spec["gate"], "measure": spec["measure"],
                        "size": spec["size"], "ratio": ratio, "previous_measured": previous,
                        "previous_source": previous_source,
                        "spread_floor": spec.get("spread_floor", DEFAULT_SPREAD), "gpu": results.get("gpu"),
                        "source_label": label})
    return reports, missing


def thresholds_from_tour(results_path, out_path=None, multigpu_path=None, only=None):
    """Writes the thresholds file of a results/<gpu>.json (the committed files' first version),
    with the multigpu gates from `multigpu_path` (default: multigpu_tour_path()). `only`: the
    gates to write from the tour; every other entry of the existing file stays as it is."""
    with open(results_path, encoding="utf-8") as f:
        results = json.load(f)
    gpu = results["gpu"]
    out_path = out_path or os.path.join(THRESHOLDS_DIR, gpu_file_name(gpu))
    if only:
        unknown = sorted(set(only) - {spec["gate"] for spec in TOUR_GATES})
        if unknown:
            raise ValueError("no such gate: %s" % ", ".join(unknown))
        kept = load_existing(out_path)
        if kept is None:
            raise ValueError("%s: no thresholds file to update" % out_path)
        fd, fresh_path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        try:
            fresh = thresholds_from_tour(results_path, fresh_path, multigpu_path)
        finally:
            os.remove(fresh_path)
        for gate in only:
            kept["lessons"][gate] = fresh["lessons"][gate]
        kept["lessons"] = {k: kept["lessons"][k] for k in sorted(kept["lessons"], key=gate_sort_key)}
        with open(out_path, "w", encoding="utf-8") as f:
            json.dump(kept, f, indent=2)
            f.write("\n")
        return kept
    multigpu = None
    multigpu_path = multigpu_path or multigpu_tour_path(results_path, gpu)
    if multigpu_path:
        with open(multigpu_path, encoding="utf-8") as f:
            multigpu = json.load(f)
        if multigpu.get("gpu") != gpu or multigpu.get("gpus") != MG_GPUS:
            raise ValueError("%s is the tour of %s on %s GPUs, not of %s on %d" % (
                multigpu_path, multigpu.get("gpu"), multigpu.get("gpus"), gpu, MG_GPUS))
    reports, missing = reports_from_tour(results, multigpu)
    if os.path.exists(out_path):
        os.remove(out_path)  # the tour's file is written afresh, not merged
    data = write_thresholds(reports, gpu, out_path)
    for spec in missing:
        mg = spec.get("tour") == "multigpu"
        data["lessons"][spec["gate"]] = {
            "measure": spec["measure"], "size": spec["size"], "solution": None, "previous": None, "threshold": None,
            "source": "tour %s" % (results.get("date") or "undated"),
            "reason": ("the tour of %s on %d GPUs has no measurement of this lesson yet" % (gpu, MG_GPUS) if mg else
                       "the tour of %s has no measurement of this lesson yet" % gpu) +
                      ": the ratio is reported, not scored, until scripts/grade.py --calibrate measures the solution "
                      "on this GPU"}
    for spec in TOUR_GATES:
        e = data["lessons"].get(spec["gate"])
        if spec.get("confirm_first") and e and e.get("threshold") is not None:
            e["threshold"] = None
            e["reason"] = ("one tour run (%s) cannot place this threshold: %s. Unscored until scripts/grade.py "
                           "--confirm-gates on this GPU separates the runs" % (pct(e["solution"], e["measure"]),
                                                                              spec["confirm_first"]))
    data["source"] = "tour %s" % (results.get("date") or "undated")  # the file's: the single-GPU tour
    data["lessons"] = {k: data["lessons"][k] for k in sorted(data["lessons"], key=gate_sort_key)}
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    return data


# ---------------------------------------------------------------------------------------
# Confirmation: 20 runs of the solution and 20 of the previous approach per gate
# ---------------------------------------------------------------------------------------

MIN_CONFIRM_RUNS = 10  # runs of each side before a confirmation may move a threshold


def bank_kind(lesson, submission):
    """The `kind:` of a bank file (common/checks/wrong/<lesson>/<submission>), None when absent."""
    import wrong_bank  # scripts/wrong_bank.py reads the bank's headers

    try:
        with open(os.path.join(REPO, wrong_bank.BANK, lesson, submission or ""), encoding="utf-8") as f:
            return wrong_bank.parse_header(f.read())[0].get("kind")
    except OSError:
        return None


def previous_alike(name, shapes):
    """The lesson just before `name` ("track/NN_name") in its track whose speed case measures
    the same thing at the same size, by `shapes` ({lesson: (measure, size)}): its solution is
    then the previous lesson's approach too; None when there is none."""
    track, lesson = name.split("/", 1)
    for other, shape in shapes.items():
        t, o = other.split("/", 1)
        if (t == track and o[:2].isdigit() and lesson[:2].isdigit() and int(o[:2]) == int(lesson[:2]) - 1
                and shape == shapes[name]):
            return other
    return None


def previous_lesson_row(row, rows):
    """The confirmation row of the lesson just before `row`'s, gated alike (previous_alike)."""
    by_lesson = {r["lesson"]: r for r in rows}
    earlier = previous_alike(row["lesson"], {k: (r.get("measure"), r.get("size")) for k, r in by_lesson.items()})
    return by_lesson.get(earlier)


def runs_text(solution_runs, previous_runs):
    if solution_runs == previous_runs:
        return "%d runs of each" % solution_runs
    return "%d runs of the solution and %d of the previous approach" % (solution_runs, previous_runs)


def run_ratios(row, previous_row=None):
    """(solution, submission, previous lesson's solution) ratios of a confirmation row, the
    finite positive ones; the last from `previous_row` (that lesson's own row) when given."""
    def positive(values):
        return [v for v in (finite(x) for x in values) if v is not None and v > 0]
    row = row or {}
    # the previous lesson's own solution, measured alike, is the previous approach too
    earlier = (previous_row or {}).get("solution_ratios") or row.get("previous_lesson_ratios") or []
    return positive(row.get("solution_ratios", [])), positive(row.get("submission_ratios", [])), positive(earlier)


def confirm_entry(e, row, date, previous_row=None, fresh=None):
    """The thresholds entry `e` after the confirmation row `row` (scripts/grade.py
    --confirm-gates: the ratios of the solution's runs and of the bank submission's).
    `fresh`, (row, previous_row), holds only the runs newer than the confirmation that set
    `e`'s threshold (None: every run is newer): the runs a threshold was placed between pass
    it by construction, so only later runs may confirm it.
    - every fresh solution run passed and every fresh submission run failed, each by at least
      half the spread floor: the threshold stands, with their evidence under "confirmed";
    - else, with the previous lesson's approach as the submission, or the previous lesson's
      solution measured alike: the ranges of the runs decide. When the slowest solution run
      is at least 2 x the spread floor above the fastest run of the previous approach, the
      threshold is their geometric midpoint; otherwise the gate is unscored, with the reason;
    - else (too few runs, or a submission of another kind): unchanged, None."""
    S, P, earlier = run_ratios(row, previous_row)
    earlier_name = (previous_row or {}).get("lesson") or row.get("previous_lesson")
    t = finite(e.get("threshold"))
    measure = str(e.get("measure", ""))
    if len(S) < MIN_CONFIRM_RUNS or len(P) < MIN_CONFIRM_RUNS:
        return None
    if e.get("source") == "confirmation %s" % date:
        return None  # set from these very runs: they cannot confirm it
    fS, fP, f_earlier = (S, P, earlier) if fresh is None else run_ratios(*fresh)
    if len(fS) < MIN_CONFIRM_RUNS or len(fP) < MIN_CONFIRM_RUNS:
        return None  # too few runs since the threshold was set to confirm or move it
    evidence = {"date": date, "runs": min(len(fS), len(fP)), "solution_min": round3(min(fS)),
                "solution_max": round3(max(fS)), "submission": row.get("submission"),
                "submission_min": round3(min(fP)), "submission_max": round3(max(fP))}
    if f_earlier:
        evidence.update({"previous_lesson": earlier_name, "previous_lesson_max": round3(max(f_earlier))})
    # the spread floor of the measure: as recorded, else the spread of a single run (the floor)
    floor = finite(e.get("spread_floor")) or (finite(e.get("spread")) if e.get("runs", 1) < MIN_RUNS else None)
    floor = floor or DEFAULT_SPREAD
    # held, with half the floor to spare on each side: the next runs should hold too
    if t is not None and min(fS) >= t * (1 + floor / 2) and max(fP + f_earlier) <= t * (1 - floor / 2):
        out = dict(e)
        out["confirmed"] = evidence
        return out
    # the previous approach: the bank file when it is that, and the previous lesson's solution
    if bank_kind(row["lesson"], row.get("submission")) != "previous-lesson":
        P = []
    P_runs = len(P)
    P = P + earlier
    if len(P) < MIN_CONFIRM_RUNS:
        return None
    out = {k: v for k, v in e.items() if k not in ("reason", "note", "confirmed")}
    out.update({"solution": round3(statistics.median(S)), "solution_min": round3(min(S)), "runs": len(S),
                "spread": round3(max(floor, (max(S) - min(S)) / statistics.median(S))),
                "spread_floor": floor,
                "previous": round3(statistics.median(P)), "previous_max": round3(max(P)),
                "previous_source": ", and ".join(
                    (["bank: %s, %d runs" % (row.get("submission"), P_runs)] if P_runs else []) +
                    (["%s's solution, %d runs" % (earlier_name, len(earlier))] if earlier else [])),
                "source": "confirmation %s" % date})
    gap = min(S) / max(P) - 1
    if gap >= 2 * floor:
        out["threshold"] = round3(math.sqrt(min(S) * max(P)))
        out["note"] = ("the geometric midpoint of the slowest of %d solution runs (%s) and the fastest of %d runs of "
                       "the previous approach (%s)" % (len(S), pct(min(S), measure), len(P), pct(max(P), measure)))
        if t is None:
            out["note"] += "; the gate was unscored before"
        else:
            out["note"] += ("; the threshold before, %s, did not hold in every run with half the floor to spare"
                            % pct(t, measure))
    elif max(P) >= min(S):
        out["threshold"] = None
        out["reason"] = ("in %s on this GPU the previous lesson's approach ran as fast as the solution "
                         "(its fastest run %s, the solution's slowest %s; medians %s and %s): the idea does not show "
                         "as a speed-up in every run here" % (runs_text(len(S), len(P)), pct(max(P), measure),
                                                              pct(min(S), measure), pct(statistics.median(P), measure),
                                                              pct(statistics.median(S), measure)))
    else:
        out["threshold"] = None
        out["reason"] = ("in %s on this GPU the solution's slowest run (%s) is not 2 x %.0f%% above the "
                         "fastest run of the previous lesson's approach (%s; medians %s and %s): too close to gate "
                         "reliably" % (runs_text(len(S), len(P)), pct(min(S), measure), 100 * floor, pct(max(P), measure),
                                       pct(statistics.median(S), measure), pct(statistics.median(P), measure)))
    return out


def merge_confirmations(confs):
    """Several confirmations of one GPU (the JSONs of scripts/grade.py --confirm-gates) as one:
    per lesson, the runs of every file concatenated (those of the newest measure and size only),
    the submission's only where it is the same bank file as in the newest run of that lesson;
    each row dated by its newest runs, the whole by the newest file."""
    gpus = sorted({c["gpu"] for c in confs})
    if len(gpus) != 1:
        raise ValueError("confirmations of different GPUs cannot be merged: %s" % ", ".join(gpus))
    confs = sorted(confs, key=lambda c: str(c.get("date") or ""))
    merged = {}
    for c in confs:
        for row in c.get("lessons", []):
            row = dict(row, date=row.get("date") or c.get("date"))  # a row is as new as its newest runs
            have = merged.get(row["lesson"])
            if have is not None and (have.get("measure"), have.get("size")) != (row.get("measure"), row.get("size")):
                have = None  # the gate measures something else now: its older runs do not count
            if have is not None:  # new lists: the files' own rows stay as they were
                row["solution_ratios"] = have.get("solution_ratios", []) + row.get("solution_ratios", [])
                row["previous_lesson_ratios"] = (have.get("previous_lesson_ratios") or []) + (
                    row.get("previous_lesson_ratios") or [])
                row["previous_lesson"] = row.get("previous_lesson") or have.get("previous_lesson")
                if have.get("submission") == row.get("submission"):
                    row["submission_ratios"] = have.get("submission_ratios", []) + row.get("submission_ratios", [])
            merged[row["lesson"]] = row
    return {"gpu": gpus[0], "date": confs[-1].get("date"), "lessons": list(merged.values())}


def fresh_runs(e, gate, confs):
    """(row, previous lesson's row) of `gate` from the confirmations in `confs` newer than
    the one that set `e`'s threshold; None when a tour set it (every run is newer)."""
    set_by = re.fullmatch(r"confirmation (\S+)", str(e.get("source", "")))
    if not set_by:
        return None
    newer = [c for c in confs if str(c.get("date") or "") > set_by.group(1)]
    if not newer:
        return ({}, None)
    merged = merge_confirmations(newer)
    row = next((r for r in merged["lessons"] if r["lesson"] == gate), None)
    return (row or {}, previous_lesson_row(row, merged["lessons"]) if row else None)


def apply_confirmation(confirmation_paths, out_path=None):
    """Applies a confirmation (the JSON of scripts/grade.py --confirm-gates; a list of several
    of one GPU, merged by merge_confirmations) to its GPU's thresholds file; returns
    {gate: what happened}."""
    if isinstance(confirmation_paths, (str, os.PathLike)):
        confirmation_paths = [confirmation_paths]
    confs = []
    for path in confirmation_paths:
        with open(path, encoding="utf-8") as f:
            confs.append(json.load(f))
    conf = merge_confirmations(confs)
    gpu = conf["gpu"]
    date = conf.get("date") or datetime.date.today().isoformat()
    committed = os.path.join(THRESHOLDS_DIR, gpu_file_name(gpu))
    out_path = out_path or committed
    data = load_existing(out_path) or load_existing(committed)
    if data is None:
        raise ValueError("%s: no thresholds file of %s to confirm" % (out_path, gpu))
    what = {}
    for row in conf.get("lessons", []):
        gate = row.get("lesson")
        if gate not in data["lessons"]:
            what[gate] = "no such gate in %s" % os.path.basename(out_path)
            continue
        new = confirm_entry(data["lessons"][gate], row, row.get("date") or date,
                            previous_lesson_row(row, conf.get("lessons", [])),
                            fresh_runs(data["lessons"][gate], gate, confs))
        if new is None:
            what[gate] = ("unchanged (too few runs, a submission that is not the previous lesson's approach, or "
                          "a threshold set from these runs)")
            continue
        if "confirmed" in new:
            what[gate] = "confirmed"
        elif new.get("threshold") is None:
            what[gate] = "unscored: " + new["reason"]
        else:
            what[gate] = "threshold %s (was %s)" % (new["threshold"], data["lessons"][gate].get("threshold"))
        data["lessons"][gate] = new
    before = str(data.get("source", "")).strip() or "undated"
    earlier = re.fullmatch(r"confirmation \S+ \((.*)\)", before)
    before = earlier.group(1) if earlier else before  # the file's origin, once: the newest confirmation leads
    if not str(data.get("source", "")).startswith("confirmation %s" % date):
        data["source"] = "confirmation %s (%s)" % (date, before)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    return what


# ---------------------------------------------------------------------------------------
# The committed files are well formed
# ---------------------------------------------------------------------------------------

def check_file(path):
    """Problems with one thresholds file (an empty list when it is well formed)."""
    problems = []
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        return ["%s: %s" % (path, e)]
    name = os.path.basename(path)
    if not isinstance(data, dict) or not isinstance(data.get("lessons"), dict):
        return ["%s: expected an object with a 'lessons' object" % name]
    if gpu_file_name(str(data.get("gpu", ""))) != name:
        problems.append("%s: its gpu '%s' belongs in %s" % (name, data.get("gpu"), gpu_file_name(str(data.get("gpu")))))
    for key, e in data["lessons"].items():
        where = "%s: %s" % (name, key)
        if not re.match(r"^(sgemm|bandwidth|reduction|cg|jor|multigpu)/\d\d_[a-z0-9_]+(: .+)?$", key):
            problems.append("%s: not a lesson id (track/NN_name[: gate])" % where)
        problems += ["%s: %s" % (where, p) for p in check_file_entry_problems(e)]
    return problems


def check_file_entry_problems(e):
    """Problems with one gate's entry of a thresholds file."""
    problems = []
    for field in ("measure", "size", "threshold", "source"):
        if field not in e:
            problems.append("no '%s'" % field)
    t, s, p = finite(e.get("threshold")), finite(e.get("solution")), finite(e.get("previous"))
    if e.get("threshold") is None:
        if not e.get("reason"):
            problems.append("unscored without a reason")
        return problems
    if t is None or t <= 0:
        return problems + ["threshold %r is not a positive number" % e.get("threshold")]
    if s is not None and t >= s:
        problems.append("threshold %s is not below the solution's %s" % (t, s))
    if p is not None and t <= p:
        problems.append("threshold %s is not above the previous approach's %s" % (t, p))
    smin, pmax = finite(e.get("solution_min")), finite(e.get("previous_max"))
    if smin is not None and e.get("runs", 0) > 1 and t > smin:
        problems.append("threshold %s is above the solution's slowest run %s" % (t, smin))
    if pmax is not None and t <= pmax:
        problems.append("threshold %s is not above the previous approach's fastest run %s" % (t, pmax))
    return problems


# ---------------------------------------------------------------------------------------
# The README's table of gates, generated from the committed files
# ---------------------------------------------------------------------------------------

TABLE_BEGIN = "<!-- gates:begin (generated by scripts/perf_gates.py --readme from the thresholds files; do not edit) -->"
TABLE_END = "<!-- gates:end -->"
def gate_cell(e):
    """'**72%** (82% / 62%)' for a scored gate, 'unscored' or 'not measured yet' for the others."""
    if e is None:
        return "-"
    measure = str(e.get("measure", ""))
    t, s, p = finite(e.get("threshold")), finite(e.get("solution")), finite(e.get("previous"))
    if t is None:
        return "unscored" if s is not None else "not measured yet"
    return "**%s** (%s / %s)" % (pct(t, measure), pct(s, measure) if s is not None else "?",
                                 pct(p, measure) if p is not None else "?")


def gates_table(folder=THRESHOLDS_DIR):
    """The Markdown table of every gate scored on at least one GPU: lesson, measure, size, and
    per GPU the threshold (the solution's and the previous approach's ratio)."""
    files = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            data = load_existing(os.path.join(folder, name))
            if data:
                files.append(data)
    gpus = rj.short_gpu_names([d.get("gpu") for d in files])
    keys = sorted({k for d in files for k in d["lessons"]}, key=gate_sort_key)
    lines = ["| lesson | measure | size | " + " | ".join(gpus) + " |", "|---|---|---|" + "---|" * len(gpus)]
    for k in keys:
        entries = [d["lessons"].get(k) for d in files]
        if not any(e is not None and e.get("threshold") is not None for e in entries):
            continue  # unscored everywhere: the table of unscored gates says why
        first = next(e for e in entries if e is not None)
        lines.append("| %s | %s | %s | %s |" % (k, first.get("measure", ""), first.get("size", ""),
                                                " | ".join(gate_cell(e) for e in entries)))
    return "\n".join(lines)


def readme_with_table(text, table):
    """`text` with the block between TABLE_BEGIN and TABLE_END replaced by `table`."""
    b, e = text.find(TABLE_BEGIN), text.find(TABLE_END)
    if b < 0 or e < b:
        raise ValueError("no %s ... %s block" % (TABLE_BEGIN, TABLE_END))
    return text[:b] + TABLE_BEGIN + "\n" + table + "\n" + text[e:]


def read_reports(paths):
    """The JSON lines of TUT_PERF_REPORT files (lines that are not JSON objects left out)."""
    reports = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    item = json.loads(line)
                except ValueError:
                    continue
                if isinstance(item, dict):
                    reports.append(item)
    return reports


def summary(reports):
    """One line per gate and GPU of repeated runs: how many passed, failed or were unscored,
    and the ratios' range against the threshold (the check that a solution passes 20 runs
    of 20 and the previous approach fails 20 of 20)."""
    groups = {}
    for r in reports:
        groups.setdefault((str(r.get("gpu")), gate_of(r) or "?"), []).append(r)
    lines = []
    for (gpu, gate) in sorted(groups, key=lambda k: (k[0], gate_sort_key(k[1]))):
        rs = groups[(gpu, gate)]
        measure = str(rs[0].get("measure", ""))
        ratios = sorted(v for v in (finite(r.get("ratio")) for r in rs) if v is not None)
        counts = {s: sum(1 for r in rs if r.get("status") == s) for s in ("pass", "fail", "unscored")}
        threshold = next((finite(r.get("threshold")) for r in rs if finite(r.get("threshold")) is not None), None)
        span = ("%s .. %s .. %s" % (pct(ratios[0], measure), pct(statistics.median(ratios), measure),
                                    pct(ratios[-1], measure))) if ratios else "no ratio"
        lines.append("%s | %s: %d runs, %d pass, %d fail, %d unscored; ratio %s; threshold %s" % (
            gpu, gate, len(rs), counts["pass"], counts["fail"], counts["unscored"], span,
            pct(threshold, measure) if threshold is not None else "none"))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--summary", nargs="+", metavar="REPORT",
                    help="tally TUT_PERF_REPORT files of repeated runs per gate: passes, fails, the ratios' range")
    ap.add_argument("--from-tour", metavar="RESULTS", help="write a thresholds file from results/<gpu>.json")
    ap.add_argument("--only", action="append", default=[], metavar="GATE",
                    help="with --from-tour: write only this gate (track/NN_name, repeatable) into the existing file")
    ap.add_argument("--multigpu-tour", metavar="RESULTS",
                    help="with --from-tour: the multigpu track's tour on 2 GPUs, for its gates (default: "
                         "multigpu/<gpu>-x2.json beside the --from-tour file)")
    ap.add_argument("--from-confirmation", nargs="+", metavar="JSON",
                    help="apply scripts/grade.py --confirm-gates' gate-confirmation.json to its GPU's thresholds "
                         "file; several of one GPU are merged, lesson by lesson")
    ap.add_argument("--out", help="the thresholds file to write (default: common/checks/thresholds/<gpu>.json)")
    ap.add_argument("--check", nargs="?", const=THRESHOLDS_DIR, metavar="DIR",
                    help="check every thresholds file of DIR (default: the committed ones)")
    ap.add_argument("--readme", nargs="?", const=os.path.join(THRESHOLDS_DIR, "README.md"), metavar="FILE",
                    help="regenerate the table of gates in FILE (default: the thresholds README); with --check, "
                         "fail when it is stale")
    args = ap.parse_args(argv)
    if args.readme:
        with open(args.readme, encoding="utf-8") as f:
            text = f.read()
        fresh = readme_with_table(text, gates_table(args.check or THRESHOLDS_DIR))
        if args.check:
            if fresh != text:
                print("%s: the table of gates is stale: run scripts/perf_gates.py --readme" % args.readme,
                      file=sys.stderr)
                return 1
        elif fresh != text:
            with open(args.readme, "w", encoding="utf-8") as f:
                f.write(fresh)
            print("%s: table of gates regenerated" % args.readme)
        if not args.check:
            return 0
    if args.summary:
        for line in summary(read_reports(args.summary)):
            print(line)
        return 0
    if args.from_confirmation:
        for gate, outcome in apply_confirmation(args.from_confirmation, args.out).items():
            print("%s: %s" % (gate, outcome))
        return 0
    if args.from_tour:
        data = thresholds_from_tour(args.from_tour, args.out, args.multigpu_tour, args.only)
        gated = sum(1 for e in data["lessons"].values() if e.get("threshold") is not None)
        print("%s: %d gates, %d scored" % (data["gpu"], len(data["lessons"]), gated))
        return 0
    if args.check:
        paths = sorted(p for p in os.listdir(args.check) if p.endswith(".json"))
        problems = []
        for p in paths:
            problems += check_file(os.path.join(args.check, p))
        for p in problems:
            print(p, file=sys.stderr)
        print("%d thresholds files, %d problems" % (len(paths), len(problems)))
        return 1 if problems else 0
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
