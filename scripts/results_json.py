"""Reading results/<gpu>.json, the file scripts/tour.py writes; shared by plots.py and readme_table.py.

The file holds {"gpu", "cuda", "date", "device": {...}, "records": [...]}; each record
is one measured variant of one lesson (tut::Record in common/include/tut/report.hpp).
Numbers may be null or NaN (a value that was not measured); they are read as None.
"""
import json
import math
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


def ratio(record, key, value_key):
    """record[key] (e.g. ratio_to_library), or value / record[value_key] when only that is known."""
    r = number(record.get(key))
    if r is not None:
        return r
    v, ref = number(record.get("value")), number(record.get(value_key))
    return v / ref if v is not None and ref else None


def by_track(records):
    """{track: {lesson: [records]}} in the order of first appearance (the tour's order)."""
    tracks = OrderedDict()
    for r in records:
        if not isinstance(r, dict):
            continue
        track = str(r.get("track") or "?")
        lesson = str(r.get("lesson") or "?")
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
    headline. A lesson whose records all lack a value keeps its first record (shown as
    n/a); a lesson with no record in `unit` gets None.
    """
    out = []
    for lesson, records in lessons.items():
        same_unit = [r for r in records if (r.get("unit") or "") == unit]
        steps = [r for r in same_unit if in_progression(r)]
        same_unit = steps or same_unit
        measured = [r for r in same_unit if number(r.get("value")) is not None]
        beside_library = [r for r in measured if ratio(r, "ratio_to_library", "library_value") is not None]
        measured = beside_library or measured
        if measured:
            best = max(measured, key=lambda r: number(r.get("value")))  # first of equals wins
        else:
            best = same_unit[0] if same_unit else None
        out.append((lesson, best))
    return out


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
