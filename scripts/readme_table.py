#!/usr/bin/env python3
"""Writes the README's results tables from a tour's results JSON.

    scripts/readme_table.py results/NVIDIA_H200.json [README.md] [--check]

Replaces what lies between the lines `<!-- results:begin -->` and `<!-- results:end -->`
with one markdown table per track: each lesson's best variant, its size, its value,
its share of the library and of the hardware peak, under a line naming the GPU, CUDA
and the date. Everything outside the markers is left alone, and running it twice
changes nothing. With --check it writes nothing and exits 1 when the README differs
from what it would write (a stale table), 0 when it is current.
"""
import argparse
import os
import sys

import results_json as rj

BEGIN = "<!-- results:begin -->"
END = "<!-- results:end -->"
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class MarkerError(ValueError):
    pass


def cell(s):
    """Text safe inside a markdown table cell."""
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def common(records, key):
    """The value every record shares for `key`, or None when they differ or lack it."""
    values = {str(r.get(key) or "") for r in records}
    return values.pop() if len(values) == 1 and "" not in values else None


def share(record, ratio_key, value_key, name_key, name_in_header):
    r = rj.ratio(record, ratio_key, value_key)
    text = rj.format_percent(r)
    if r is not None and not name_in_header and record.get(name_key):
        text += " of " + str(record[name_key])
    return text


def track_table(track, lessons):
    """The markdown lines of one track: a caption line, then the table."""
    unit = rj.main_unit(lessons)
    best = rj.best_per_lesson(lessons, unit)
    chosen = [r for _, r in best if r is not None]
    # A name shared by every record that has the ratio goes into the column header once.
    library = common([r for r in chosen if rj.ratio(r, "ratio_to_library", "library_value") is not None], "library")
    peak = common([r for r in chosen if rj.ratio(r, "ratio_to_peak", "peak_value") is not None], "peak")
    with_iterations = any(isinstance(r.get("extra"), dict) and "iterations" in r["extra"] for r in chosen)

    # A ceiling no lesson of the track has (CG has no hardware peak) gets no column.
    has_library = any(rj.ratio(r, "ratio_to_library", "library_value") is not None for r in chosen)
    has_peak = any(rj.ratio(r, "ratio_to_peak", "peak_value") is not None for r in chosen)
    header = ["lesson", "variant", "size", unit or "value"]
    align = ["---", "---", "---:", "---:"]
    if has_library:
        header.append("% of " + library if library else "% of library")
        align.append("---:")
    if has_peak:
        header.append("% of " + peak if peak else "% of peak")
        align.append("---:")
    if with_iterations:  # the CG track: a solve is judged per iteration too
        header += ["iterations", "µs/iteration"]
        align += ["---:", "---:"]
    rows = []
    for lesson, r in best:
        if r is None:
            rows.append([lesson, "n/a"] + ["n/a"] * (len(header) - 2))
            continue
        row = [lesson, r.get("variant") or "", r.get("size") or "", rj.format_value(rj.number(r.get("value")))]
        if has_library:
            row.append(share(r, "ratio_to_library", "library_value", "library", library is not None))
        if has_peak:
            row.append(share(r, "ratio_to_peak", "peak_value", "peak", peak is not None))
        if with_iterations:
            extra = r.get("extra") if isinstance(r.get("extra"), dict) else {}
            iterations = rj.number(extra.get("iterations"))
            row += ["n/a" if iterations is None else "%d" % iterations,
                    rj.format_value(rj.number(extra.get("us_per_iter")))]
        rows.append(row)
    lines = ["**%s** (best variant of each lesson, in %s; higher is better)" % (cell(track), cell(unit or "its unit")),
             "",
             "| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def device_line(device):
    """'FP32 peak 66,900 GFLOP/s, DRAM 4,800 GB/s (measured D2D 4,100 GB/s), 132 SMs' from what is known."""
    if not isinstance(device, dict):
        return ""
    parts = []
    pairs = [("fp32_peak_gflops", "FP32 peak %s GFLOP/s"), ("dram_peak_gbs", "DRAM peak %s GB/s"),
             ("measured_d2d_gbs", "measured D2D copy %s GB/s")]
    for key, fmt in pairs:
        v = rj.number(device.get(key))
        if v:  # 0 means the driver did not say
            parts.append(fmt % rj.format_value(v))
    sms = rj.number(device.get("sm_count"))
    if sms:
        parts.append("%d SMs" % sms)
    return ", ".join(parts)


def render_block(results, source):
    """The text that goes between the markers (starting and ending with a newline)."""
    gpu = results.get("gpu") or "unknown GPU"
    head = "Measured on **%s**" % cell(gpu)
    if results.get("cuda"):
        head += " with CUDA %s" % cell(results["cuda"])
    head += " on %s" % cell(results.get("date") or "an unknown date")
    facts = device_line(results.get("device"))
    head += (" (%s)." % facts) if facts else "."
    lines = ["<!-- generated by scripts/readme_table.py from %s; do not edit by hand -->" % source, "", head]
    tracks = rj.by_track(results.get("records", []))
    if not tracks:
        lines += ["", "No results recorded."]
    for track, lessons in tracks.items():
        lines += [""] + track_table(track, lessons)
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
    parser.add_argument("results", help="results/<gpu>.json written by the tour")
    parser.add_argument("readme", nargs="?", default=os.path.join(REPO_ROOT, "README.md"),
                        help="the README to update (default: the repository's README.md)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the README is stale")
    args = parser.parse_args(argv)
    try:
        results = rj.load(args.results)
        with open(args.readme, encoding="utf-8") as f:
            old = f.read()
        readme_dir = os.path.dirname(os.path.abspath(args.readme))
        source = os.path.relpath(os.path.abspath(args.results), readme_dir).replace(os.sep, "/")
        new = replace_block(old, render_block(results, source))
    except MarkerError as e:
        print("readme_table.py: error: %s: %s" % (args.readme, e), file=sys.stderr)
        return 2
    except (OSError, ValueError) as e:
        print("readme_table.py: error: %s" % e, file=sys.stderr)
        return 2
    if args.check:
        if new != old:
            print("readme_table.py: %s: the results table is stale; run scripts/readme_table.py %s %s"
                  % (args.readme, args.results, args.readme), file=sys.stderr)
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
