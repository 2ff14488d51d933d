#!/usr/bin/env python3
"""Fills the measured table of every lesson README from the tour's results files.

    scripts/lesson_tables.py [--root DIR] [--results FILE ...] [--check] [README ...]

A lesson README (lessons/<track>/<NN_name>/README.md) marks where its measured table
belongs with two lines:

    <!-- measured:begin -->                      or  <!-- measured:begin extra="us_per_iter,iterations" -->
    <!-- measured:end -->

Between them this script writes: one line per GPU (every results/*.json, ordered by file
name) naming it with its CUDA version, date and ceilings; a table whose rows are the
lesson's tour records (variant and size, in the tour's order) and whose columns are, for
each GPU side by side, the value with its unit, the share of the library, the share of
the hardware peak and the record's `extra` fields the marker names (a record one GPU
lacks shows an em dash); then the lesson's historic tables from docs/historic/<track>.json
(caption, source, table). Everything outside the markers is left alone; the output
depends only on those files, and running it twice changes nothing.

The multigpu track's READMEs are filled from results/multigpu/<gpu>-x<G>.json instead
(--multigpu-results): one table per GPU count G, each with every GPU model measured at
that count side by side.

With --check it writes nothing, names every README whose block differs from what it
would write, and exits 1 (0 when all are current). A malformed marker or historic file
is an error naming the file (and the key): exit 2. READMEs without markers are skipped.
"""
import argparse
import glob
import json
import os
import re
import sys
from collections import Counter

import results_json as rj

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN_RE = re.compile(r'<!-- measured:begin(?:\s+extra="([^"]*)")?\s*-->')
BEGIN_ANY = "<!-- measured:begin"
END = "<!-- measured:end -->"
DASH = "\u2014"  # a record this GPU does not have
EXTRA_NAMES = {"us_per_iter": "\u00b5s/iteration", "iterations": "iterations",
               "compute_us_per_iter": "compute \u00b5s/iteration", "comm_us_per_iter": "comm \u00b5s/iteration"}
# Said under a table with a negative comm value: the multigpu CG harness derives comm as the
# iteration's time less that of the same solve without communication, each the median of a
# few runs taken in turn, so comm carries their spread (on one GPU, where it is zero, a few
# microseconds at 128^3 and up to about 1% of the iteration at 256^3).
NEGATIVE_COMM_NOTE = ("a negative comm \u00b5s/iteration: the whole iteration took less than the same solve without "
                      "communication; comm is the difference of two medians and carries their spread")
PERCENT_EXTRAS = {"occupancy"}  # fractions shown as percentages


class TableError(ValueError):
    """A problem in one input file; the message starts with the file (and the key)."""


def cell(s):
    """Text safe inside a markdown table cell."""
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


# ----------------------------------------------------------------------------------------
# docs/historic/<track>.json

def check_historic(data, where):
    """Raises TableError naming `where` and the key when `data` is not in the historic format:
    {"sources": {key: {"title": str, "url": str or null}},
     "lessons": {lesson: [{"source": key, "caption": str, "columns": [str], "rows": [[str]]}]}}."""
    def fail(key, message):
        raise TableError("%s: %s: %s" % (where, key, message))

    def keys(obj, key, required, optional=()):
        if not isinstance(obj, dict):
            fail(key, "expected an object")
        missing = [k for k in required if k not in obj]
        if missing:
            fail(key, "missing %s" % ", ".join(repr(k) for k in missing))
        unknown = sorted(set(obj) - set(required) - set(optional))
        if unknown:
            fail(key, "unknown key(s) %s" % ", ".join(repr(k) for k in unknown))

    def text(value, key, allow_empty=False):
        if not isinstance(value, str) or (not allow_empty and not value.strip()):
            fail(key, "expected a%s string" % ("" if allow_empty else " non-empty"))

    keys(data, "top level", ("sources", "lessons"))
    if not isinstance(data["sources"], dict):
        fail("sources", "expected an object")
    for name, source in data["sources"].items():
        key = "sources.%s" % name
        keys(source, key, ("title", "url"))
        text(source["title"], key + ".title")
        if source["url"] is not None:
            text(source["url"], key + ".url")
    if not isinstance(data["lessons"], dict):
        fail("lessons", "expected an object")
    for lesson, tables in data["lessons"].items():
        key = "lessons.%s" % lesson
        if not re.match(r"^\d\d_\w+$", lesson):
            fail(key, "a lesson is named NN_name, as its folder")
        if not isinstance(tables, list) or not tables:
            fail(key, "expected a non-empty list of tables")
        for i, table in enumerate(tables):
            tkey = "%s[%d]" % (key, i)
            keys(table, tkey, ("source", "caption", "columns", "rows"))
            text(table["source"], tkey + ".source")
            if table["source"] not in data["sources"]:
                fail(tkey + ".source", "%r is not one of the sources" % table["source"])
            text(table["caption"], tkey + ".caption")
            columns = table["columns"]
            if not isinstance(columns, list) or not columns:
                fail(tkey + ".columns", "expected a non-empty list of strings")
            for j, c in enumerate(columns):
                text(c, "%s.columns[%d]" % (tkey, j))
            if not isinstance(table["rows"], list) or not table["rows"]:
                fail(tkey + ".rows", "expected a non-empty list of rows")
            for j, row in enumerate(table["rows"]):
                rkey = "%s.rows[%d]" % (tkey, j)
                if not isinstance(row, list) or len(row) != len(columns):
                    fail(rkey, "expected a list of %d strings (one per column)" % len(columns))
                for k, c in enumerate(row):
                    text(c, "%s[%d]" % (rkey, k), allow_empty=True)


def load_historic(path, lessons_dir=None):
    """The historic file of one track, checked; with lessons_dir, every lesson it names must
    have a folder there."""
    where = path
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        raise TableError("%s: not valid JSON: %s" % (where, e)) from None
    check_historic(data, where)
    if lessons_dir is not None:
        for lesson in data["lessons"]:
            # "00_*" names a track's program that is not a lesson (a CPU baseline, a probe):
            # its figures are kept for the lessons that quote them, and it has no folder.
            if lesson.startswith("00_"):
                continue
            if not os.path.isdir(os.path.join(lessons_dir, lesson)):
                raise TableError("%s: lessons.%s: no lesson folder %s" % (where, lesson,
                                                                         os.path.join(lessons_dir, lesson)))
    return data


def historic_lines(data, lesson):
    """The markdown of a lesson's historic tables (empty when it has none)."""
    tables = data["lessons"].get(lesson, []) if data else []
    lines = []
    for table in tables:
        source = data["sources"][table["source"]]
        title = source["title"].strip()
        named = "[%s](%s)" % (title, source["url"].strip()) if source.get("url") else title
        lines += ["", "**Historic:** %s. Source: %s." % (table["caption"].strip().rstrip("."), named), "",
                  "| " + " | ".join(cell(c) for c in table["columns"]) + " |",
                  "|" + "|".join("---" for _ in table["columns"]) + "|"]
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in table["rows"]]
    return lines


# ----------------------------------------------------------------------------------------
# The measured table

def format_extra(v, name=""):
    if name in PERCENT_EXTRAS and isinstance(v, (int, float)) and not isinstance(v, bool):
        return "{:.1f}%".format(100 * v)
    if v is None or isinstance(v, bool):
        return {True: "yes", False: "no", None: "n/a"}[v]
    if isinstance(v, int):
        return "{:,}".format(v)
    if isinstance(v, float):
        n = rj.number(v)
        if n is not None and n == int(n) and abs(n) < 1e15:
            return "{:,}".format(int(n))
        return rj.format_value(n)
    if isinstance(v, str):
        return v
    return json.dumps(v, sort_keys=True)


def lesson_records(results, track, lesson):
    """{(variant, size): record} of one lesson in one results file, first record of a key kept."""
    out = {}
    for r in rj.by_track(results.get("records", [])).get(track, {}).get(lesson, []):
        out.setdefault((str(r.get("variant") or ""), str(r.get("size") or "")), r)
    return out


def measured_lines(track, lesson, runs, labels, extras):
    """The markdown of the measured table of one lesson over every GPU."""
    per_gpu = [lesson_records(r, track, lesson) for r in runs]
    keys = rj.merge_orders([list(recs) for recs in per_gpu])
    if not keys:
        return ["No tour record of this lesson yet."]
    records = [r for recs in per_gpu for r in recs.values()]

    has_library = any(rj.ratio(r, "ratio_to_library", "library_value") is not None for r in records)
    has_peak = any(rj.ratio(r, "ratio_to_peak", "peak_value") is not None for r in records)
    library_format = rj.share_formatter([rj.ratio(r, "ratio_to_library", "library_value") for r in records])
    peak_format = rj.share_formatter([rj.ratio(r, "ratio_to_peak", "peak_value") for r in records])

    def names(name_key, ratio_key, value_key):
        """{key: the reference's name} of the rows that have the ratio."""
        out = {}
        for key in keys:
            for recs in per_gpu:
                r = recs.get(key)
                if r is not None and rj.ratio(r, ratio_key, value_key) is not None:
                    out.setdefault(key, str(r.get(name_key) or ""))
        return out

    library_names = names("library", "ratio_to_library", "library_value")
    peak_names = names("peak", "ratio_to_peak", "peak_value")
    # A reference named the same on every row is named once under the table; else in a column.
    library_column = len(set(library_names.values())) > 1
    peak_column = len(set(peak_names.values())) > 1

    header, align = ["variant", "size"], ["---", "---"]
    if library_column:
        header.append("library")
        align.append("---")
    if peak_column:
        header.append("peak")
        align.append("---")
    per_gpu_columns = ["value"] + (["library"] if has_library else []) + (["peak"] if has_peak else []) + extras
    # The track's names for its yardstick and ceiling, unless some row names another one (a
    # column whose names do not all mention it): then the plain word, and the column says which.
    yardstick, ceiling = rj.YARDSTICKS.get(track, ("library", "peak"))

    def label_for(track_name, plain, named, in_column):
        word = track_name.split()[0].lower()
        fits = not in_column or all(word in name.lower() for name in named.values())
        return track_name if fits else plain

    library_label = rj.ratio_label(label_for(yardstick, "library", library_names, library_column), library_format)
    peak_label = rj.ratio_label(label_for(ceiling, "peak", peak_names, peak_column), peak_format)
    for label in labels:
        for column in per_gpu_columns:
            if column == "value":
                header.append(label)
            elif column == "library":
                header.append("%s %s" % (label, library_label))
            elif column == "peak":
                header.append("%s %s" % (label, peak_label))
            else:
                header.append("%s %s" % (label, EXTRA_NAMES.get(column, column.replace("_", " "))))
            align.append("---:")

    rows = []
    for key in keys:
        row = [key[0], key[1]]
        if library_column:
            row.append(library_names.get(key, "n/a"))
        if peak_column:
            row.append(peak_names.get(key, "n/a"))
        for recs in per_gpu:
            r = recs.get(key)
            if r is None:
                row += [DASH] * len(per_gpu_columns)
                continue
            extra = r.get("extra") if isinstance(r.get("extra"), dict) else {}
            for column in per_gpu_columns:
                if column == "value":
                    v = rj.number(r.get("value"))
                    row.append("n/a" if v is None else ("%s %s" % (rj.format_value(v), r.get("unit") or "")).strip())
                elif column == "library":
                    row.append(library_format(rj.ratio(r, "ratio_to_library", "library_value")))
                elif column == "peak":
                    row.append(peak_format(rj.ratio(r, "ratio_to_peak", "peak_value")))
                else:
                    row.append(format_extra(extra.get(column), column))
        rows.append(row)

    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    notes = []
    for named, in_column, label, tail in ((library_names, library_column, library_label, ", measured in the same run"),
                                          (peak_names, peak_column, peak_label, "")):
        common = Counter(v for v in named.values() if v)
        if common and not in_column:
            notes.append("%s: %s%s" % (label, rj.without_label(label, common.most_common(1)[0][0]), tail))
    if "comm_us_per_iter" in extras and any(
            (rj.number((r.get("extra") or {}).get("comm_us_per_iter")) or 0) < 0 for r in records):
        notes.append(NEGATIVE_COMM_NOTE)
    if notes:
        lines += ["", "; ".join(cell(n) for n in notes) + "."]
    return lines


def render_block(track, lesson, runs, sources, historic, historic_source, extras):
    """The text between the markers (starting and ending with a newline)."""
    lines = ["<!-- generated by scripts/lesson_tables.py from %s; do not edit by hand -->"
             % ", ".join(list(sources) + ([historic_source] if historic_source else [])), ""]
    labels = rj.short_gpu_names([r.get("gpu") for r in runs])
    if runs:
        lines.append("Measured by the tour (`scripts/tour`) on:")
        lines.append("")
        lines += ["- **%s**: %s." % (cell(label), cell(rj.gpu_line(r, "%s/%s" % (track, lesson)))) for label, r in zip(labels, runs)]
        lines.append("")
        lines += measured_lines(track, lesson, runs, labels, extras)
    else:
        lines.append("No results recorded yet.")
    lines += historic_lines(historic, lesson)
    return "\n" + "\n".join(lines) + "\n\n"


def multigpu_count(results, path):
    """The GPU count of a multigpu results file: its "gpus" field, else the -x<G> of its name."""
    g = rj.number(results.get("gpus"))
    if g is not None:
        return int(g)
    m = re.search(r"-x(\d+)\.json$", os.path.basename(path))
    return int(m.group(1)) if m else 1


def render_multigpu_block(track, lesson, loaded, sources, historic, historic_source, extras):
    """The block of a multigpu lesson: per GPU count, the GPUs measured and the table."""
    lines = ["<!-- generated by scripts/lesson_tables.py from %s; do not edit by hand -->"
             % ", ".join(list(sources) + ([historic_source] if historic_source else []) or ["results/multigpu/"]), ""]
    by_count = {}
    for path, r in loaded:
        by_count.setdefault(multigpu_count(r, path), []).append(r)
    if not by_count:
        lines.append("No results recorded yet.")
    for g in sorted(by_count):
        runs = by_count[g]
        labels = rj.short_gpu_names([r.get("gpu") for r in runs])
        lines.append("**On %d GPU%s**, measured by the tour (`scripts/tour`) on:" % (g, "" if g == 1 else "s"))
        lines.append("")
        lines += ["- **%s**: %s." % (cell(label), cell(rj.gpu_line(r, "%s/%s" % (track, lesson)))) for label, r in zip(labels, runs)]
        lines.append("")
        lines += measured_lines(track, lesson, runs, labels, extras)
        lines.append("")
    if lines[-1] == "":
        lines.pop()
    lines += historic_lines(historic, lesson)
    return "\n" + "\n".join(lines) + "\n\n"


def find_block(text, where):
    """(start, end, extras): the block's span between the marker lines, or None without markers."""
    if BEGIN_ANY not in text and END not in text:
        return None
    begins = [m for m in BEGIN_RE.finditer(text)]
    if text.count(BEGIN_ANY) != len(begins):
        raise TableError("%s: a '%s' line that is not '<!-- measured:begin -->' or "
                         "'<!-- measured:begin extra=\"a,b\" -->'" % (where, BEGIN_ANY))
    if len(begins) != 1 or text.count(END) != 1:
        raise TableError("%s: expected one '<!-- measured:begin -->' line and one '%s' line after it, "
                         "found %d and %d" % (where, END, len(begins), text.count(END)))
    begin = begins[0]
    end = text.find(END)
    if end < begin.end():
        raise TableError("%s: '%s' comes before '<!-- measured:begin -->'" % (where, END))
    extras = [e.strip() for e in (begin.group(1) or "").split(",") if e.strip()]
    return begin.end(), end, extras


# ----------------------------------------------------------------------------------------

def lesson_of(readme, root):
    """(track, lesson) of lessons/<track>/<lesson>/README.md, or raises TableError."""
    rel = os.path.relpath(os.path.abspath(readme), os.path.join(root, "lessons")).split(os.sep)
    if len(rel) != 3 or rel[2] != "README.md" or rel[0].startswith(".."):
        raise TableError("%s: not a lesson README (lessons/<track>/<NN_name>/README.md under %s)" % (readme, root))
    return rel[0], rel[1]


def update(root, results_paths, readmes, check, multigpu_paths=()):
    """Updates (or checks) the READMEs; returns (stale or updated READMEs, messages)."""
    loaded = rj.load_all(results_paths)
    runs = [r for _, r in loaded]
    sources = [os.path.relpath(os.path.abspath(p), root).replace(os.sep, "/") for p, _ in loaded]
    mg_loaded = rj.load_all(multigpu_paths)
    mg_sources = [os.path.relpath(os.path.abspath(p), root).replace(os.sep, "/") for p, _ in mg_loaded]
    historic_dir = os.path.join(root, "docs", "historic")
    historic = {}
    for path in sorted(glob.glob(os.path.join(historic_dir, "*.json"))):
        track = os.path.splitext(os.path.basename(path))[0]
        historic[track] = load_historic(path, os.path.join(root, "lessons", track))
    changed, messages = [], []
    used = set()
    for readme in readmes:
        track, lesson = lesson_of(readme, root)
        with open(readme, encoding="utf-8") as f:
            old = f.read()
        span = find_block(old, readme)
        if span is None:
            continue
        used.add((track, lesson))
        start, end, extras = span
        hist_source = ("docs/historic/%s.json" % track) if track in historic else None
        if track == "multigpu":
            block = render_multigpu_block(track, lesson, mg_loaded, mg_sources, historic.get(track), hist_source,
                                          extras)
        else:
            block = render_block(track, lesson, runs, sources, historic.get(track), hist_source, extras)
        new = old[:start] + block + old[end:]
        if new == old:
            continue
        changed.append(readme)
        if not check:
            with open(readme, "w", encoding="utf-8") as f:
                f.write(new)
    for track, data in sorted(historic.items()):
        for lesson in data["lessons"]:
            if (track, lesson) not in used:
                messages.append("note: docs/historic/%s.json has tables for %s, whose README has no measured "
                                "block: they are not shown" % (track, lesson))
    return changed, messages


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("readmes", nargs="*", help="lesson READMEs (default: every lessons/*/*/README.md)")
    parser.add_argument("--root", default=REPO_ROOT, help="the repository (default: this script's)")
    parser.add_argument("--results", nargs="+", help="results files (default: every <root>/results/*.json)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming every stale README")
    parser.add_argument("--multigpu-results", help="folder of the multigpu track's results files "
                                                   "(default: <root>/results/multigpu)")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root)
    results_paths = args.results or rj.results_files(os.path.join(root, "results"))
    multigpu_paths = rj.results_files(args.multigpu_results or os.path.join(root, "results", "multigpu"))
    readmes = args.readmes or sorted(glob.glob(os.path.join(root, "lessons", "*", "*", "README.md")))
    try:
        changed, messages = update(root, results_paths, readmes, args.check, multigpu_paths)
    except (OSError, ValueError) as e:  # TableError is a ValueError, as are rj.load's errors
        print("lesson_tables.py: error: %s" % e, file=sys.stderr)
        return 2
    for m in messages:
        print("lesson_tables.py: %s" % m, file=sys.stderr)
    rel = [os.path.relpath(p, root) for p in changed]
    if args.check:
        if rel:
            for p in rel:
                print("lesson_tables.py: %s: the measured table is stale" % p, file=sys.stderr)
            print("lesson_tables.py: run scripts/lesson_tables.py to regenerate %d README(s)" % len(rel),
                  file=sys.stderr)
            return 1
        print("lesson_tables.py: every lesson table is current")
        return 0
    for p in rel:
        print("lesson_tables.py: updated %s" % p)
    if not rel:
        print("lesson_tables.py: every lesson table already current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
