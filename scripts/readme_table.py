#!/usr/bin/env python3
"""Writes the README's results tables from the tour's results files, one per reference GPU.

    scripts/readme_table.py [results/A.json results/B.json ...] [--readme README.md] [--check]

Replaces what lies between the lines `<!-- results:begin -->` and `<!-- results:end -->`
with, per track, one markdown table whose rows are the lessons (each lesson's best
variant) and whose columns are, for every GPU side by side, the value, the share of the
library and the share of the hardware peak, followed by the track's plot
(docs/plots/<track>.svg) when there is one. Above the tables, one line per GPU names
it with its CUDA version, date and ceilings. Without results files it reads every
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


class MarkerError(ValueError):
    pass


def cell(s):
    """Text safe inside a markdown table cell."""
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def name_note(label, chosen, name_key, ratio_key, value_key):
    """'% of library: X' (and the lessons whose record names another reference), or None."""
    names = reference_names(chosen, name_key, ratio_key, value_key)
    if not names:
        return None
    counts = Counter(name for name in names.values() if name)
    if not counts:
        return None
    main = counts.most_common(1)[0][0]
    others = ["%s: %s" % (lesson, name) for lesson, name in names.items() if name and name != main]
    return "%s: %s" % (label, main) + (" (%s)" % "; ".join(others) if others else "")


def reference_names(chosen, name_key, ratio_key, value_key):
    """{lesson: reference name} of the chosen records that have the ratio, in lesson order
    (one name per lesson: the first GPU's)."""
    names = {}
    for lesson, record in chosen:
        if rj.ratio(record, ratio_key, value_key) is None:
            continue
        names.setdefault(lesson, str(record.get(name_key) or ""))
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
    _, unit, best, order = rj.track_bests(track, runs)
    chosen = [(lesson, b[lesson]) for b in best for lesson in order if b.get(lesson) is not None]
    records = [r for _, r in chosen]

    has_library = any(rj.ratio(r, "ratio_to_library", "library_value") is not None for r in records)
    has_peak = any(rj.ratio(r, "ratio_to_peak", "peak_value") is not None for r in records)
    per_iteration = any(isinstance(r.get("extra"), dict) and "us_per_iter" in r["extra"] for r in records)
    library_format = rj.share_formatter([rj.ratio(r, "ratio_to_library", "library_value") for r in records])
    peak_format = rj.share_formatter([rj.ratio(r, "ratio_to_peak", "peak_value") for r in records])

    header = ["lesson", "variant", "size"]
    align = ["---", "---", "---"]
    for label in labels:
        header.append("%s %s" % (label, unit or "value"))
        align.append("---:")
        if has_library:
            header.append("%s %% of library" % label)
            align.append("---:")
        if has_peak:
            header.append("%s %% of peak" % label)
            align.append("---:")
        if per_iteration:  # the CG track: a solve is judged per iteration too
            header.append("%s \u00b5s/iteration" % label)
            align.append("---:")
    rows = []
    for lesson in order:
        picked = [b.get(lesson) for b in best]
        row = [lesson,
               joined([str(r.get("variant") or "") if r else None for r in picked], labels),
               joined([str(r.get("size") or "") if r else None for r in picked], labels)]
        for r in picked:
            if r is None:
                row += [DASH] * (1 + has_library + has_peak + per_iteration)
                continue
            row.append(rj.format_value(rj.number(r.get("value"))))
            if has_library:
                row.append(library_format(rj.ratio(r, "ratio_to_library", "library_value")))
            if has_peak:
                row.append(peak_format(rj.ratio(r, "ratio_to_peak", "peak_value")))
            if per_iteration:
                extra = r.get("extra") if isinstance(r.get("extra"), dict) else {}
                row.append(rj.format_value(rj.number(extra.get("us_per_iter"))))
        rows.append(row)

    notes = [n for n in (name_note("% of library", chosen, "library", "ratio_to_library", "library_value"),
                         name_note("% of peak", chosen, "peak", "ratio_to_peak", "peak_value")) if n]
    caption = "**%s**: the best variant of each lesson, in %s (higher is better)." % (cell(track), cell(unit or "its unit"))
    if notes:
        caption += " " + "; ".join(cell(n) for n in notes) + "."
    lines = [caption, "",
             "| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
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
            lines += ["", "![%s: the best variant of each lesson on each GPU](%s)" % (track, "/".join(
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
        block = render_block([r for _, r in loaded], [rel(p) for p, _ in loaded], plots_link, args.plots)
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
