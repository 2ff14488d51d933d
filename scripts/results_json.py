"""Reading results/<gpu>.json, the file scripts/tour.py writes; shared by plots.py,
readme_table.py and lesson_tables.py.

The file holds {"gpu", "cuda", "date", "device": {...}, "records": [...]}; each record
is one measured variant of one lesson (tut::Record in common/include/tut/report.hpp).
Numbers may be null or NaN (a value that was not measured); they are read as None.
There is one file per reference GPU; the generated tables and plots show every file
present, in the order of their file names.
"""
import glob
import json
import math
import os
from collections import OrderedDict


def number(x):
    """A finite float, or None for null, NaN, infinities and anything not numeric."""
    if isinstance(x, bool) or x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def load(path):
    """The results file as a dict; raises ValueError with the path when it is not one."""
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)  # Python's json accepts NaN and Infinity literals
        except json.JSONDecodeError as e:
            raise ValueError("%s: not valid JSON: %s" % (path, e)) from None
    if not isinstance(data, dict) or not isinstance(data.get("records"), list):
        raise ValueError("%s: expected an object with a 'records' list" % path)
    return data


def results_files(results_dir):
    """Every results/<gpu>.json of a folder, in the order of their file names."""
    return sorted(glob.glob(os.path.join(results_dir, "*.json")), key=os.path.basename)


def load_all(paths):
    """[(path, results)] for each file, ordered by file name; raises ValueError naming a bad file."""
    return [(p, load(p)) for p in sorted(paths, key=os.path.basename)]


def short_gpu_names(gpus):
    """A short label per GPU name for table headers: 'NVIDIA H100 80GB HBM3' -> 'H100'.

    The first word after the vendor, unless two GPUs would share it (then the name
    without the vendor), or the full name when even that is ambiguous.
    """
    def strip(name):
        words = str(name or "").split()
        while words and words[0] in ("NVIDIA", "Tesla", "GeForce", "Quadro"):
            words = words[1:]
        return words

    labels = [(strip(g) or ["GPU"])[0] for g in gpus]
    if len(set(labels)) < len(labels):
        labels = [" ".join(strip(g)) or "GPU" for g in gpus]
    if len(set(labels)) < len(labels):
        labels = ["%s (%d)" % (label, i + 1) for i, label in enumerate(labels)]
    return labels


def device_facts(device):
    """'FP32 peak 66,908 GFLOP/s, DRAM peak 4,814 GB/s, measured D2D copy 4,209 GB/s, 132 SMs'
    from what the device record knows ('' when nothing)."""
    if not isinstance(device, dict):
        return ""
    parts = []
    pairs = [("fp32_peak_gflops", "FP32 peak %s GFLOP/s"), ("dram_peak_gbs", "DRAM peak %s GB/s"),
             ("measured_d2d_gbs", "measured D2D copy %s GB/s")]
    for key, fmt in pairs:
        v = number(device.get(key))
        if v:  # 0 means the driver did not say
            parts.append(fmt % format_value(v))
    sms = number(device.get("sm_count"))
    if sms:
        parts.append("%d SMs" % sms)
    return ", ".join(parts)


def gpu_line(results, lesson=None):
    """'NVIDIA H200, CUDA 13.0 (driver 13.0), 2026-11-22 (FP32 peak ..., 132 SMs)' for one results file;
    with lesson ('track/NN_name') re-measured by a later tour of some lessons (the file's "updates"),
    '; this lesson 2026-11-27' after it."""
    text = str(results.get("gpu") or "unknown GPU")
    if results.get("cuda"):
        text += ", CUDA %s" % results["cuda"]
    text += ", %s" % (results.get("date") or "undated")
    facts = device_facts(results.get("device"))
    text += " (%s)" % facts if facts else ""
    dates = [u.get("date") for u in results.get("updates") or [] if lesson in (u.get("lessons") or [])]
    if lesson and dates and dates[-1]:
        text += "; this lesson %s" % dates[-1]
    return text


def merge_orders(sequences):
    """One list of the items of several ordered lists, keeping each list's order: an item
    first seen in a later list goes right after its predecessor there (a lesson only one
    GPU measured keeps its place among the others)."""
    merged = []
    for seq in sequences:
        previous = None
        for k, item in enumerate(seq):
            if item not in merged:
                if previous is not None:
                    merged.insert(merged.index(previous) + 1, item)
                else:  # before the first later item already placed, else at the end
                    later = [merged.index(x) for x in seq[k + 1:] if x in merged]
                    merged.insert(later[0] if later else len(merged), item)
            previous = item
    return merged


def without_retired(results, lessons_root):
    """`results` without the records of lessons that `lessons_root` (a tree's lessons/) no
    longer has: a lesson renamed or renumbered since the tour measured it, whose records stay
    in the committed file until the tour runs again. A track without a folder there, and a
    track's 00_ program (a baseline, not a lesson), keep all their records."""
    def kept(r):
        if not isinstance(r, dict):
            return True
        track, lesson = lesson_of(r)  # under its current name (RENUMBERED)
        if lesson is None:
            return False
        track_dir = os.path.join(lessons_root, track)
        return (lesson.startswith("00_") or not os.path.isdir(track_dir)
                or os.path.isdir(os.path.join(track_dir, lesson)))
    out = dict(results)
    out["records"] = [r for r in results.get("records", []) if kept(r)]
    return out


def ordered_lessons(track, results_list):
    """The lessons of `track` over several results files, in the tour's order."""
    return merge_orders([list(by_track(r.get("records", [])).get(track, {})) for r in results_list])


def ordered_tracks(results_list):
    """The tracks over several results files, in the tour's order."""
    return merge_orders([list(by_track(r.get("records", []))) for r in results_list])


def ratio(record, key, value_key):
    """record[key] (e.g. ratio_to_library), or value / record[value_key] when only that is known."""
    r = number(record.get(key))
    if r is not None:
        return r
    v, ref = number(record.get("value")), number(record.get(value_key))
    return v / ref if v is not None and ref else None


# What a track's ratio columns are named in every table: (its yardstick, its ceiling). A track
# not named here says "library" and "peak".
YARDSTICKS = {
    "sgemm": ("cuBLAS", "peak"),
    "bandwidth": ("cudaMemcpy", "DRAM peak"),
    "reduction": ("CUB", "DRAM peak"),
    "cg": ("Eigen (CPU)", "bandwidth floor"),
    "jor": ("CPU", "bandwidth floor"),
}


def ratio_label(name, formatter):
    """'% of cuBLAS', or 'x CPU' for a column of factors: how every table names a ratio column."""
    return ("x %s" if formatter is format_factor else "%% of %s") % name


def without_label(label, name):
    """A reference's `name` without what its column `label` already says: under '% of bandwidth
    floor', 'bandwidth floor: bytes ...' -> 'bytes ...'."""
    said = label.split(" of ", 1)[-1] if label.startswith("% of ") else label[2:] if label.startswith("x ") else ""
    if said and name.lower().startswith(said.lower() + ": "):
        return name[len(said) + 2:].strip()
    return name


# Lessons renumbered after a results file was measured: (track, lesson as recorded) -> the lesson
# that holds the same program now, or None for a lesson whose program was split between new
# lessons (its records are left out until the tour measures them). The tour writes the current
# names, so an entry matters only for files measured before the renumbering.
RENUMBERED = {
    ("sgemm", "12_cp_async"): "13_cp_async",  # 12_large_tile is new; cp.async's program moved to 13
    ("sgemm", "13_tuning"): "14_tuning",
    ("sgemm", "14_wmma"): "15_wmma",
    ("sgemm", "15_mma_sync"): "16_mma_sync",
    ("sgemm", "16_wgmma"): "17_wgmma",
    ("sgemm", "17_operand_swap"): "18_operand_swap",
    ("sgemm", "18_persistent_cluster"): "19_persistent_cluster",
    ("jor", "07_mixed_precision"): "08_mixed_precision",  # 07_l2_reuse is new, split from 06
}


def lesson_of(record):
    """(track, lesson) of a record under the lesson's current name; lesson None when its lesson
    no longer exists (see RENUMBERED)."""
    track = str(record.get("track") or "?")
    lesson = str(record.get("lesson") or "?")
    return track, RENUMBERED.get((track, lesson), lesson)


def by_track(records):
    """{track: {lesson: [records]}} in the order of first appearance (the tour's order), under
    the lessons' current names."""
    tracks = OrderedDict()
    for r in records:
        if not isinstance(r, dict):
            continue
        track, lesson = lesson_of(r)
        if lesson is None:
            continue
        tracks.setdefault(track, OrderedDict()).setdefault(lesson, []).append(r)
    return tracks


def main_unit(lessons):
    """The unit most records of a track use (ties: the first seen); other units are not comparable."""
    counts = OrderedDict()
    for records in lessons.values():
        for r in records:
            unit = r.get("unit") or ""
            counts[unit] = counts.get(unit, 0) + 1
    return max(counts, key=counts.get) if counts else ""


def in_progression(record):
    """False for records a lesson marks as outside its track's progression (extra.progression:
    false), e.g. TF32 tensor-core runs in the FP32 SGEMM track or whole-pipeline wall times."""
    extra = record.get("extra")
    return not (isinstance(extra, dict) and extra.get("progression") is False)


def best_per_lesson(lessons, unit):
    """[(lesson, record or None)]: the highest-valued record of each lesson in `unit`.

    Every unit the tour reports is a rate (GFLOP/s, GB/s, solves/s), so higher is better.
    Records marked outside the progression (see in_progression) are passed over when the
    lesson has others. Records measured beside the library are preferred: a lesson's extra runs without a
    library baseline (the reduction track's block x grid sweep) do not displace its
    headline, and neither do a lesson's size-sweep records (extra.sweep: the SGEMM lessons'
    --sweep at other sizes than the lesson's own). A lesson whose records all lack a value keeps its first record (shown as
    n/a); a lesson with no record in `unit` gets None.
    """
    out = []
    for lesson, records in lessons.items():
        same_unit = [r for r in records if (r.get("unit") or "") == unit]
        steps = [r for r in same_unit if in_progression(r)]
        same_unit = steps or same_unit
        headline = [r for r in same_unit if not (isinstance(r.get("extra"), dict) and r["extra"].get("sweep"))]
        same_unit = headline or same_unit
        measured = [r for r in same_unit if number(r.get("value")) is not None]
        beside_library = [r for r in measured if ratio(r, "ratio_to_library", "library_value") is not None]
        measured = beside_library or measured
        if measured:
            best = max(measured, key=lambda r: number(r.get("value")))  # first of equals wins
        else:
            best = same_unit[0] if same_unit else None
        out.append((lesson, best))
    return out


def track_bests(track, runs):
    """One track over several GPUs (runs: [results] in file order): every record of each
    lesson over all the GPUs ({lesson: [records]}), the track's main unit, each GPU's best
    record per lesson in that unit ([{lesson: record}], one per run), and the lessons, in
    order, that have such a record on some GPU (a probe counted in another unit, such as
    CG's launch queue, is not a step of the progression)."""
    per_gpu = [by_track(r.get("records", [])).get(track, {}) for r in runs]
    merged = {}
    for lessons in per_gpu:
        for lesson, records in lessons.items():
            merged.setdefault(lesson, []).extend(records)
    unit = main_unit(merged)
    best = [dict(best_per_lesson(lessons, unit)) for lessons in per_gpu]
    order = [lesson for lesson in ordered_lessons(track, runs) if any(b.get(lesson) is not None for b in best)]
    return merged, unit, best, order


def format_value(v):
    """A value for a table or a label: 3 significant digits at least, thousands separated."""
    if v is None:
        return "n/a"
    a = abs(v)
    if a >= 100:
        return "{:,.0f}".format(v)
    if a >= 10:
        return "{:.1f}".format(v)
    if a >= 1:
        return "{:.2f}".format(v)
    return "{:.3g}".format(v)


def format_percent(r):
    """A ratio as a percentage; far past 100% (a GPU against a CPU baseline) as a factor."""
    if r is None:
        return "n/a"
    return "{:.1f}%".format(100.0 * r) if r < 10 else "{:.0f}x".format(r)


def format_factor(r):
    """A ratio as a factor: 1.05x, 9.75x, 27.2x, 130x."""
    if r is None:
        return "n/a"
    if r < 10:
        return "{:.2f}x".format(r)
    return "{:.1f}x".format(r) if r < 100 else "{:.0f}x".format(r)


def share_formatter(ratios):
    """One format for a whole column of ratios, so that a column never mixes '975%' with '27x':
    percentages, or factors when any ratio reaches 10 (a GPU against a CPU baseline)."""
    known = [r for r in ratios if r is not None]
    if known and max(known) >= 10:
        return format_factor
    return lambda r: "n/a" if r is None else "{:.1f}%".format(100.0 * r)
