#!/usr/bin/env python3
"""Writes the README's results tables from the tour's results files, one per reference GPU.

    scripts/readme_table.py [results/A.json results/B.json ...] [--readme README.md] [--check]

Replaces what lies between the lines `<!-- results:begin -->` and `<!-- results:end -->`
with, per track, one markdown table whose rows are the lessons (the variant that teaches
each lesson, see progression_rows) and whose columns are, for every GPU side by side, the
value, its ratio to the track's yardstick (named by what it holds: "% of cuBLAS", "x CPU")
and its share of the hardware ceiling, followed by the track's plot
(docs/plots/<track>.svg) when there is one. A track whose lessons are measured against
more than one yardstick (SGEMM's tensor-core lessons against cuBLAS TF32) gets a column
that names each row's. Above the tables, one line per GPU names it with its CUDA version,
date and ceilings. Without results files it reads every
results/*.json, ordered by file name. Everything outside the markers is left alone, and
running it twice changes nothing. With --check it writes nothing and exits 1 when the
README differs from what it would write (a stale table), 0 when it is current.
"""
import argparse
import os
import sys
from collections import Counter

import results_json as rj

BEGIN = "<!-- results:begin -->"
END = "<!-- results:end -->"
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASH = "\u2014"  # a lesson this GPU has no record of


# The progression shows, for each lesson, the record that teaches it. Unless a lesson is named
# here, that is its fastest record in the track's unit (results_json.best_per_lesson: steps of
# the progression first, measured beside the library). A lesson named here is shown by its
# teaching variant ("variant") at the size it is about ("size": text the record's size holds);
# "note" goes beside the lesson's name when the row is not at the track's usual size, and
# "caption" under the track's heading. A lesson whose records do not match keeps its fastest.
TEACHING = {
    # Lesson 13 is about cp.async; its fastest record is lesson 12's register staging, kept beside it.
    ("sgemm", "13_cp_async"): {"variant": "cp.async 3 stages"},
    ("reduction", "09_vectorized"): {"variant": "double2"},
    # CG lessons 03 and 04 keep the previous lesson's approach as their first variant.
    ("cg", "03_device_pointer_mode"): {"variant": "device pointers"},
    ("cg", "04_own_dot"): {"variant": "own dot"},
    ("cg", "07_graph_while"): {"variant": "graph while"},
    ("cg", "09_streaming"): {
        "variant": "vectors=on-chip", "size": "128x128x128", "note": "large problem",
        "caption": "09_streaming is shown at its large problem (2.1 M rows), the size it is about; its solves/s "
                   "and \u00b5s/iteration are of that problem, its shares of the floor comparable with the rows above"},
    # Lesson 04 keeps lesson 02's sweep beside it as its baseline, "three launches".
    ("jor", "04_fused"): {"variant": "fused"},
    ("jor", "06_persistent"): {"variant": "persistent"},
    ("jor", "08_mixed_precision"): {
        "variant": "mixed", "note": "double solve",
        "caption": "08_mixed_precision is shown by its mixed variant, a double solve (A in float, everything "
                   "else in double, to double's tolerance): its solves/s compare with the double rows of "
                   "lessons 01-07's tables, not with the float rows above"},
}

# A reproduced historic mistake (a stopping rule that stops too early) stands in a row of its
# own beside the lesson, marked, and is never the lesson's result.
HISTORIC = {
    ("jor", "01_block_per_row"): {
        "variant": "min rule", "note": "historic stopping rule",
        "caption": "the row marked historic is the 2015 report's stopping rule (min |dx_j| < tol), reproduced: "
                   "it stops after far fewer sweeps with a far larger error (lesson 01's table), a faster solve "
                   "of a worse answer, not a speedup"},
}

# What a track's ratio columns are named: (its yardstick, its ceiling); one list for the
# README's table and the lessons' tables.
YARDSTICKS = rj.YARDSTICKS


class MarkerError(ValueError):
    pass


class Row:
    """One row of a track's progression: its label, its lesson, one record (or None) per GPU,
    and whether it is a historic method shown beside the lesson."""

    def __init__(self, label, lesson, records, historic=False, note=None):
        self.label, self.lesson, self.records, self.historic, self.note = label, lesson, records, historic, note


def matches(record, spec):
    """True when a record is the variant (and at the size) a TEACHING or HISTORIC entry names."""
    return (str(record.get("variant") or "") == spec["variant"]
            and spec.get("size", "") in str(record.get("size") or ""))


def pick(lesson, records, unit, spec, historic):
    """The record of one lesson on one GPU that the progression shows (None when there is none):
    the teaching variant when `spec` names one that was measured, else the fastest record that
    is not the historic method."""
    candidates = [r for r in records if not (historic and matches(r, historic))]
    named = [r for r in candidates if matches(r, spec)] if spec else []
    return dict(rj.best_per_lesson({lesson: named or candidates}, unit)).get(lesson)


def progression_rows(track, runs):
    """(unit, [Row]) of one track over every GPU (runs: [results] in file order): per lesson, in
    the tour's order, the record that teaches it, and after it the historic method's row where
    HISTORIC names one."""
    _, unit, _, order = rj.track_bests(track, runs)
    per_gpu = [rj.by_track(r.get("records", [])).get(track, {}) for r in runs]
    rows = []
    for lesson in order:
        spec = TEACHING.get((track, lesson))
        historic = HISTORIC.get((track, lesson))
        picked = [pick(lesson, lessons.get(lesson, []), unit, spec, historic) for lessons in per_gpu]
        if any(r is not None for r in picked):
            note = spec.get("note") if spec else None
            rows.append(Row(lesson + (" (%s)" % note if note else ""), lesson, picked, note=note))
        if historic:
            old = [dict(rj.best_per_lesson({lesson: [r for r in lessons.get(lesson, []) if matches(r, historic)]},
                                           unit)).get(lesson) for lessons in per_gpu]
            if any(r is not None for r in old):
                rows.append(Row("%s (%s)" % (lesson, historic["note"]), lesson, old, historic=True,
                                note=historic["note"]))
    return unit, rows


def row_captions(track, rows):
    """The sentences the track's caption adds for its named rows (teaching variants at another
    size, historic methods), in row order."""
    out = []
    for row in rows:
        spec = (HISTORIC if row.historic else TEACHING).get((track, row.lesson)) or {}
        if spec.get("caption") and (row.historic or row.note) and spec["caption"] not in out:
            out.append(spec["caption"])
    return out


def yardstick_name(name):
    """What a reference is, without its qualifiers: the name up to its first comma outside
    parentheses, parentheses dropped. 'cublasSgemm TF32 (tensor cores)' -> 'cublasSgemm TF32';
    'cudaMemcpy D2D, same bytes' -> 'cudaMemcpy D2D'; 'best OpenMP CPU version (simd or
    openmp+simd, all host cores), A resident on the GPU' -> 'best OpenMP CPU version'."""
    depth, out = 0, []
    for c in name:
        if c == "," and depth == 0:
            break
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0 and c != ")":
            out.append(c)
    return " ".join("".join(out).split())


def cell(s):
    """Text safe inside a markdown table cell."""
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def name_note(label, chosen, name_key, ratio_key, value_key):
    """'% of cuBLAS: X' (and the lessons whose record names another reference), or None. A name
    that starts with what the label already says ('% of bandwidth floor: bandwidth floor: ...')
    is not said twice."""
    names = reference_names(chosen, name_key, ratio_key, value_key)
    names = {row: rj.without_label(label, name) for row, name in names.items()}
    if not names:
        return None
    counts = Counter(name for name in names.values() if name)
    if not counts:
        return None
    main = counts.most_common(1)[0][0]
    runs = []  # [[first row, last row, name]]: consecutive rows that name the same other reference
    for row, name in names.items():
        if name and name != main and runs and runs[-1][2] == name and runs[-1][3]:
            runs[-1][1] = row
        elif name and name != main:
            runs.append([row, row, name, True])
        elif runs:
            runs[-1][3] = False
    others = ["%s: %s" % (first if first == last else "%s to %s" % (first, last), name)
              for first, last, name, _ in runs]
    return "%s: %s" % (label, main) + (" (%s)" % "; ".join(others) if others else "")


def reference_names(chosen, name_key, ratio_key, value_key):
    """{row: reference name} of the chosen records that have the ratio, in row order (one name
    per row: the first GPU's)."""
    names = {}
    for row, record in chosen:
        if rj.ratio(record, ratio_key, value_key) is None:
            continue
        names.setdefault(row, str(record.get(name_key) or ""))
    return names


def joined(values, labels):
    """One cell for a per-GPU field: the value when every GPU agrees, else 'H100: a; H200: b'."""
    present = [(label, v) for label, v in zip(labels, values) if v is not None]
    if not present:
        return DASH
    if len({v for _, v in present}) == 1:
        return present[0][1]
    return "; ".join("%s: %s" % (label, v) for label, v in present)


def track_table(track, runs, labels):
    """The markdown lines of one track over every GPU. runs: [results] in file order."""
    unit, rows = progression_rows(track, runs)
    # GPU-major, so that a reference's name is the first GPU's where the GPUs differ.
    chosen = [(row.label, row.records[g]) for g in range(len(runs)) for row in rows if row.records[g] is not None]
    records = [r for _, r in chosen]
    library_name, peak_name = YARDSTICKS.get(track, ("library", "peak"))

    has_library = any(rj.ratio(r, "ratio_to_library", "library_value") is not None for r in records)
    has_peak = any(rj.ratio(r, "ratio_to_peak", "peak_value") is not None for r in records)
    per_iteration = any(isinstance(r.get("extra"), dict) and "us_per_iter" in r["extra"] for r in records)
    library_format = rj.share_formatter([rj.ratio(r, "ratio_to_library", "library_value") for r in records])
    peak_format = rj.share_formatter([rj.ratio(r, "ratio_to_peak", "peak_value") for r in records])
    # A track measured against more than one yardstick names each row's in a column of its own.
    yardsticks = {label: yardstick_name(name) for label, name in
                  reference_names(chosen, "library", "ratio_to_library", "library_value").items() if name}
    yardstick_column = len(set(yardsticks.values())) > 1

    header = ["lesson", "variant", "size"] + (["yardstick"] if yardstick_column else [])
    align = ["---"] * len(header)
    library_header = rj.ratio_label(library_name, library_format)
    peak_header = rj.ratio_label(peak_name, peak_format)
    for label in labels:
        header.append("%s %s" % (label, unit or "value"))
        align.append("---:")
        if has_library:
            header.append("%s %s" % (label, library_header))
            align.append("---:")
        if has_peak:
            header.append("%s %s" % (label, peak_header))
            align.append("---:")
        if per_iteration:  # the CG track: a solve is judged per iteration too
            header.append("%s \u00b5s/iteration" % label)
            align.append("---:")
    lines_rows = []
    for row in rows:
        picked = row.records
        line = [row.label,
                joined([str(r.get("variant") or "") if r else None for r in picked], labels),
                joined([str(r.get("size") or "") if r else None for r in picked], labels)]
        if yardstick_column:
            line.append(yardsticks.get(row.label, "n/a"))
        for r in picked:
            if r is None:
                line += [DASH] * (1 + has_library + has_peak + per_iteration)
                continue
            line.append(rj.format_value(rj.number(r.get("value"))))
            if has_library:
                line.append(library_format(rj.ratio(r, "ratio_to_library", "library_value")))
            if has_peak:
                line.append(peak_format(rj.ratio(r, "ratio_to_peak", "peak_value")))
            if per_iteration:
                extra = r.get("extra") if isinstance(r.get("extra"), dict) else {}
                line.append(rj.format_value(rj.number(extra.get("us_per_iter"))))
        lines_rows.append(line)

    notes = [n for n in (name_note(library_header, chosen, "library", "ratio_to_library", "library_value"),
                         name_note(peak_header, chosen, "peak", "ratio_to_peak", "peak_value")) if n]
    caption = "**%s**: the variant that teaches each lesson, in %s (higher is better)." % (
        cell(track), cell(unit or "its unit"))
    if notes:
        caption += " " + "; ".join(cell(n) for n in notes) + "."
    for sentence in row_captions(track, rows):
        caption += " " + cell(sentence[0].upper() + sentence[1:]) + "."
    lines = [caption, "",
             "| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in line) + " |" for line in lines_rows]
    return lines


def plot_name(track):
    """The file name plots.py gives a track's plot."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in track) + ".svg"


def render_block(runs, sources, plots_link=None, plots_dir=None):
    """The text between the markers (starting and ending with a newline).

    runs: [results] in file order; sources: their paths as the README names them;
    plots_dir: where the tracks' plots are looked for; plots_link: that folder as the
    README links it (no plot is shown when either is None or the plot is missing).
    """
    lines = ["<!-- generated by scripts/readme_table.py from %s; do not edit by hand -->" % ", ".join(sources), ""]
    labels = rj.short_gpu_names([r.get("gpu") for r in runs])
    if not runs:
        return "\n" + "\n".join(lines + ["No results recorded."]) + "\n\n"
    lines.append("Measured by the tour on:")
    lines.append("")
    for label, results in zip(labels, runs):
        lines.append("- **%s**: %s." % (cell(label), cell(rj.gpu_line(results))))
    tracks = rj.ordered_tracks(runs)
    if not tracks:
        lines += ["", "No results recorded."]
    for track in tracks:
        lines += [""] + track_table(track, runs, labels)
        if plots_dir and plots_link is not None and os.path.exists(os.path.join(plots_dir, plot_name(track))):
            lines += ["", "![%s: the variant that teaches each lesson, on each GPU](%s)" % (track, "/".join(
                p for p in (plots_link, plot_name(track)) if p))]
    return "\n" + "\n".join(lines) + "\n\n"  # the blank line ends the last table before the marker


def replace_block(text, block):
    """`text` with the part between the marker lines replaced by `block`."""
    begin = text.find(BEGIN)
    if begin < 0:
        raise MarkerError("no '%s' line" % BEGIN)
    end = text.find(END, begin + len(BEGIN))
    if end < 0:
        raise MarkerError("no '%s' line after '%s'" % (END, BEGIN))
    if text.find(BEGIN, begin + len(BEGIN)) >= 0:
        raise MarkerError("more than one '%s' line" % BEGIN)
    return text[:begin + len(BEGIN)] + block + text[end:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="*", help="results/<gpu>.json files (default: every results/*.json)")
    parser.add_argument("--readme", default=os.path.join(REPO_ROOT, "README.md"),
                        help="the README to update (default: the repository's README.md)")
    parser.add_argument("--plots", default=os.path.join(REPO_ROOT, "docs", "plots"),
                        help="the folder of the tracks' plots (default: docs/plots)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the README is stale")
    args = parser.parse_args(argv)
    paths = args.results or rj.results_files(os.path.join(REPO_ROOT, "results"))
    try:
        loaded = rj.load_all(paths)
        with open(args.readme, encoding="utf-8") as f:
            old = f.read()
        readme_dir = os.path.dirname(os.path.abspath(args.readme))
        rel = lambda p: os.path.relpath(os.path.abspath(p), readme_dir).replace(os.sep, "/")  # noqa: E731
        plots_link = rel(args.plots)
        runs = [rj.without_retired(r, os.path.join(REPO_ROOT, "lessons")) for _, r in loaded]
        block = render_block(runs, [rel(p) for p, _ in loaded], plots_link, args.plots)
        new = replace_block(old, block)
    except MarkerError as e:
        print("readme_table.py: error: %s: %s" % (args.readme, e), file=sys.stderr)
        return 2
    except (OSError, ValueError) as e:
        print("readme_table.py: error: %s" % e, file=sys.stderr)
        return 2
    if args.check:
        if new != old:
            print("readme_table.py: %s: the results table is stale; run scripts/readme_table.py --readme %s"
                  % (args.readme, args.readme), file=sys.stderr)
            return 1
        print("readme_table.py: %s is current" % args.readme)
        return 0
    if new != old:
        with open(args.readme, "w", encoding="utf-8") as f:
            f.write(new)
        print("readme_table.py: updated %s" % args.readme)
    else:
        print("readme_table.py: %s already current" % args.readme)
    return 0


if __name__ == "__main__":
    sys.exit(main())
