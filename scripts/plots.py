#!/usr/bin/env python3
"""Draws each track's progression from the tour's results as an SVG bar chart.

    scripts/plots.py [results/A.json results/B.json ...] [--out docs/plots]

writes docs/plots/<track>.svg: one row per lesson (the variant that teaches it, named beside
the row, as readme_table.progression_rows chooses it; a historic method reproduced beside its
lesson in a pale row of its own), one horizontal bar per GPU in that row, so that the GPUs of
every results file (default: every results/*.json, ordered by file name) stand side by side.
Each bar is labelled with its value and its ratio to the track's yardstick. The yardstick and
the hardware ceiling of each GPU are drawn as dashed and dotted lines in that GPU's colour,
over the rows they are the yardstick of; a row whose own ceiling lies elsewhere (another
yardstick, a ceiling that depends on the lesson's iteration count) gets a short mark on its
bar instead. Labels keep clear of every line and mark. A legend under the chart names the
GPUs and each line, with the lessons it serves when that is not all of them. When most bars
would be too short to read on a linear axis the axis is logarithmic, and it ends at the first
tick past the data. Pure standard library (no matplotlib), and deterministic: the same JSON
gives the same bytes.
"""
import argparse
import math
import os
import statistics
import sys
from collections import Counter
from xml.sax.saxutils import escape

import readme_table
import results_json as rj

# Layout, in SVG pixels.
PLOT_WIDTH = 520           # the bars' area
BAR = 16                   # height of one bar
BAR_GAP = 2                # between the bars of one lesson
BAND_GAP = 14              # between lessons
TOP = 64                   # title and subtitle above the plot
RIGHT = 24                 # right margin
CHAR_WIDTH = {11: 6.6, 10: 6.0, 9: 5.4}  # average advance of a character at that font size
LEGEND_ROW = 15
LEGEND_CHARS = 100         # characters per legend row before it wraps
VARIANT_CHARS = 44         # a variant name longer than this is shortened
LOG_SPAN = 100.0           # a log axis when the bars span more than this factor...
SHORT_BAR = 0.1            # ...or when a third of them are under this fraction of the longest
LINE_TOLERANCE = 1.5       # ceilings within this many pixels of their median are one line

BAR_COLORS = ["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#9d755d"]
LINE_COLORS = ["#1f3b63", "#a04f00", "#2c6327", "#6e3f66", "#5c4333"]
INK, MUTED, GRID = "#222222", "#666666", "#dddddd"
FONT = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""
LIBRARY_DASH, PEAK_DASH = "7 4", "2 3"
# The yardstick a bar's label names beside its ratio: "(18.0% cuBLAS)", "(35.6x CPU)".
BAR_YARDSTICKS = {"sgemm": "cuBLAS", "bandwidth": "memcpy", "reduction": "CUB", "cg": "Eigen", "jor": "CPU"}


def compact(v):
    """A short label for a value: 48.2k, 3.51k, 912, 12.5, 0.844."""
    if v is None:
        return "n/a"
    a = abs(v)
    if a >= 1e6:
        return "%.3gM" % (v / 1e6)
    if a >= 1e3:
        return "%.3gk" % (v / 1e3)
    return "%.3g" % v


def nice_ticks(top, count=5):
    """Round tick values from 0 to at least `top` (steps of 1, 2 or 5 times a power of ten)."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    n = int(math.ceil(top / step - 1e-9))
    return [i * step for i in range(n + 1)]


def log_ticks(lo, hi):
    """Powers of ten (and 2x, 5x between them when there are few) covering [lo, hi], from the
    last tick at or below lo to the first at or above hi (no empty decade past the data)."""
    e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    mults = (1, 2, 5) if e1 - e0 <= 3 else (1,)
    ticks = [m * 10.0 ** e for e in range(e0, e1 + 1) for m in mults]
    ticks = [t for t in ticks if 10.0 ** e0 <= t <= 10.0 ** e1]
    first = max(t for t in ticks if t <= lo * (1 + 1e-9))
    last = min(t for t in ticks if t >= hi * (1 - 1e-9))
    return [t for t in ticks if first <= t <= last]


def wants_log(values):
    """True when a linear axis would flatten the chart: a span past LOG_SPAN, or a third of
    the bars shorter than SHORT_BAR of the longest."""
    positive = [v for v in values if v is not None and v > 0]
    if len(positive) < 2:
        return False
    top = max(positive)
    if top / min(positive) > LOG_SPAN:
        return True
    short = sum(1 for v in positive if v < SHORT_BAR * top)
    return 3 * short >= len(positive)


class Axis:
    """Maps values to x pixels of the plot [x0, x0 + width], linear from 0 or logarithmic."""

    def __init__(self, values, references, x0, width):
        positive = [v for v in values if v is not None and v > 0]
        everything = positive + [v for v in references if v is not None and v > 0]
        self.x0, self.width = x0, width
        self.log = wants_log(values)
        if self.log:
            self.ticks = log_ticks(min(everything), max(everything) * 1.05)
            self.lo, self.hi = math.log10(self.ticks[0]), math.log10(self.ticks[-1])
        else:
            top = max(everything) * 1.05 if everything else 1.0
            self.ticks = nice_ticks(top)
            self.lo, self.hi = 0.0, self.ticks[-1]

    def x(self, v):
        """Pixel column of value v, clamped to the plot; x0 is the axis."""
        if v is None or (self.log and v <= 0):
            return self.x0
        t = ((math.log10(v) if self.log else v) - self.lo) / (self.hi - self.lo)
        return self.x0 + self.width * min(max(t, 0.0), 1.0)


def text(x, y, s, size=11, anchor="start", color=INK, weight=None, italic=False):
    attrs = '%s font-size="%g" fill="%s" text-anchor="%s"' % (FONT, size, color, anchor)
    if weight:
        attrs += ' font-weight="%s"' % weight
    if italic:
        attrs += ' font-style="italic"'
    return '<text x="%.1f" y="%.1f" %s>%s</text>' % (x, y, attrs, escape(s))


def text_width(s, size):
    return len(s) * CHAR_WIDTH[size]


def wrap(label, width=LEGEND_CHARS):
    """A legend entry cut into rows of at most `width` characters, at spaces."""
    rows = [""]
    for word in label.split():
        if rows[-1] and len(rows[-1]) + 1 + len(word) > width:
            rows.append(word)
        else:
            rows[-1] = (rows[-1] + " " + word).strip()
    return rows


def shorten(s, limit=VARIANT_CHARS):
    return s if len(s) <= limit else s[:limit - 1].rstrip() + "\u2026"


def ceiling_groups(values, names, axis):
    """How one GPU's ceiling of one kind (library or peak) is drawn, from {row: value} and
    {row: name} of the rows that have it.

    Rows whose values fall within LINE_TOLERANCE pixels of their median share a line at that
    median (a lesson's library is measured in its own run, so values differ slightly), drawn
    over those rows only; a row whose own ceiling lies elsewhere (the same transfer at its
    asymptote, cuBLAS TF32 under FP32 lessons' line) gets a mark of its own, so that no bar is
    drawn against a line that is not its yardstick. Returns [("line", name, value, [rows])]
    and [("marks", name, {row: value})], lines first; a group's name is the one most of its
    rows use."""
    def name_of(rows):
        counts = Counter(names[r] for r in rows)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]

    remaining = sorted(values)
    lines = []
    while len(remaining) >= 2:
        best = []
        for c in remaining:
            near = [r for r in remaining if abs(axis.x(values[r]) - axis.x(values[c])) <= LINE_TOLERANCE]
            center = statistics.median(values[r] for r in near)
            members = [r for r in remaining if abs(axis.x(values[r]) - axis.x(center)) <= LINE_TOLERANCE]
            if len(members) > len(best):
                best = members
        if len(best) < 2:
            break
        lines.append(("line", name_of(best), statistics.median(values[r] for r in best), best))
        remaining = [r for r in remaining if r not in best]
    marks = {}
    for r in remaining:
        marks.setdefault(names[r], {})[r] = values[r]
    return lines + [("marks", name, rows) for name, rows in sorted(marks.items(), key=lambda kv: min(kv[1]))]


def mark_dash(dash):
    """The dash pattern of a per-lesson mark (a line's pattern, shortened to fit a bar's height)."""
    return "3 1" if dash == PEAK_DASH else "5 2"


def runs_of(indices):
    """Consecutive runs of sorted row indices: [0, 1, 2, 5, 6] -> [(0, 2), (5, 6)]."""
    out = []
    for i in sorted(indices):
        if out and i == out[-1][1] + 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return [tuple(r) for r in out]


def row_names(rows, indices):
    """'lessons 02-08, 10' for the rows at `indices`, a historic row named as such ('01 (historic)')."""
    numbers = sorted({int(rows[i].lesson.split("_")[0]) for i in indices if not rows[i].historic
                      and rows[i].lesson.split("_")[0].isdigit()})
    parts = ["%02d" % a if a == b else "%02d-%02d" % (a, b) for a, b in runs_of(numbers)]
    parts += [rows[i].lesson.split("_")[0] + " (historic)" for i in sorted(indices) if rows[i].historic]
    parts += [rows[i].lesson for i in sorted(indices) if not rows[i].historic
              and not rows[i].lesson.split("_")[0].isdigit()]
    return ("lesson " if len(parts) == 1 and "-" not in parts[0] else "lessons ") + ", ".join(parts)


def free_span(start, width, obstacles):
    """The first x >= start where [x, x + width] keeps 2 pixels from every obstacle (x positions
    of lines and marks)."""
    x = start
    moved = True
    while moved:
        moved = False
        for o in sorted(obstacles):
            if x - 2 <= o <= x + width + 2:
                x = o + 3
                moved = True
    return x


def free_end(end, width, obstacles):
    """The last x <= end where a text of `width` ending at x keeps 2 pixels from every obstacle."""
    moved = True
    while moved:
        moved = False
        for o in sorted(obstacles, reverse=True):
            if end - width - 4 <= o <= end + 4:
                end = o - 5
                moved = True
    return end


def track_svg(track, runs):
    """The SVG text of one track's chart over every GPU. runs: [results] in file order."""
    merged, _, _, _ = rj.track_bests(track, runs)
    unit, rows = readme_table.progression_rows(track, runs)
    labels = rj.short_gpu_names([r.get("gpu") for r in runs])
    ngpu = len(runs)
    colors = [BAR_COLORS[i % len(BAR_COLORS)] for i in range(ngpu)]
    line_colors = [LINE_COLORS[i % len(LINE_COLORS)] for i in range(ngpu)]
    yardstick = BAR_YARDSTICKS.get(track, "lib")

    records = [r for row in rows for r in row.records if r is not None]
    values = [rj.number(r.get("value")) for r in records]
    share = rj.share_formatter([rj.ratio(r, "ratio_to_library", "library_value") for r in records])

    def ceiling_values(g, value_key, name_key):
        vals, names = {}, {}
        for i, row in enumerate(rows):
            r = row.records[g]
            v = rj.number(r.get(value_key)) if r is not None else None
            if v is not None and v > 0:
                vals[i], names[i] = v, str(r.get(name_key) or name_key)
        return vals, names

    raw = [(ceiling_values(g, "library_value", "library"), ceiling_values(g, "peak_value", "peak"))
           for g in range(ngpu)]
    ref_values = [v for pair in raw for vals, _ in pair for v in vals.values()]

    # Left: lesson names, their variants under them (one per GPU when they differ), and the note
    # of a row that is not at the track's usual size or is a historic method.
    def variants_of(row):
        names = [str(r.get("variant") or "") if r else None for r in row.records]
        present = [(label, v) for label, v in zip(labels, names) if v]
        if len({v for _, v in present}) <= 1:
            out = [shorten(present[0][1])] if present else []
        else:
            out = [shorten("%s: %s" % (label, v)) for label, v in present]
        return out + ([shorten(row.note)] if row.note else [])

    left_texts = [(row.lesson, variants_of(row)) for row in rows]
    label_width = max([text_width(lesson, 11) for lesson, _ in left_texts] +
                      [text_width(v, 9) for _, vs in left_texts for v in vs] + [60])
    x0 = int(label_width + 22)
    band = max(ngpu * BAR + (ngpu - 1) * BAR_GAP, max([13 + 11 * len(vs) for _, vs in left_texts] + [0]) - 2)
    band_height = band + BAND_GAP
    y_top = TOP + 8
    y0 = y_top + band_height * max(len(rows), 1)
    axis = Axis(values, ref_values, x0, PLOT_WIDTH)
    refs = [tuple(ceiling_groups(vals, names, axis) for vals, names in pair) for pair in raw]

    gpus = " and ".join(str(r.get("gpu") or "unknown GPU") for r in runs) or "no GPU"
    title = "%s on %s" % (track, gpus)
    sizes = sorted({str(r.get("size")) for r in records if r.get("size") not in (None, "")})
    subtitle = ["the variant that teaches each lesson"]
    if len(sizes) == 1:
        subtitle.append("size " + sizes[0])
    subtitle.append("higher is better")
    total = sum(len(rs) for rs in merged.values())
    skipped = total - sum(1 for rs in merged.values() for r in rs if (r.get("unit") or "") == unit)
    if skipped:
        subtitle.append("%d record(s) in other units not shown" % skipped)
    subtitle = "; ".join(subtitle)

    def bar_y(row, gpu):
        return y_top + BAND_GAP / 2 + row * band_height + gpu * (BAR + BAR_GAP)

    # Every ceiling as drawn: (x, y1, y2, colour, dash, title), and per row the x positions that
    # cross it (for the labels to keep clear of).
    drawn = []
    for g, pair in enumerate(refs):
        for groups, dash in ((pair[0], LIBRARY_DASH), (pair[1], PEAK_DASH)):
            for group in groups:
                if group[0] == "line":
                    _, name, value, members = group
                    x = axis.x(value)
                    spans = [(y_top, y0)] if len(members) == len(rows) else [
                        (y_top + a * band_height, y_top + (b + 1) * band_height) for a, b in runs_of(members)]
                    for y1, y2 in spans:
                        drawn.append((x, y1, y2, line_colors[g], dash, "%s: %s" % (name, compact(value)), members, g))
                else:
                    _, name, marks = group
                    for i, value in marks.items():
                        x, by = axis.x(value), bar_y(i, g)
                        drawn.append((x, by - 2, by + BAR + 2, line_colors[g], mark_dash(dash),
                                      "%s, %s: %s" % (labels[g], name, compact(value)), [i], g))
    # What a bar's label keeps clear of: its own GPU's lines and marks in its row. Another GPU's
    # line may pass behind a label, whose opaque background interrupts it there.
    own = {(i, g): [d[0] for d in drawn if i in d[6] and d[7] == g] for i in range(len(rows)) for g in range(ngpu)}

    # The legend, under the axis: per GPU its bars, then its lines (or marks).
    legend = []  # (kind, color, rows) with kind "bar", "line:<dash>" or "mark:<dash>"
    for g, results in enumerate(runs):
        when = ", ".join(str(x) for x in (("CUDA " + str(results["cuda"])) if results.get("cuda") else None,
                                          results.get("date")) if x)
        legend.append(("bar", colors[g], wrap("%s: %s%s" % (labels[g], results.get("gpu") or "unknown GPU",
                                                             " (%s)" % when if when else ""))))
        for groups, what, dash, vals in ((refs[g][0], "library", LIBRARY_DASH, raw[g][0][0]),
                                          (refs[g][1], "peak", PEAK_DASH, raw[g][1][0])):
            for group in groups:
                members = group[3] if group[0] == "line" else list(group[2])
                where = "" if len(members) == len(vals) else " (%s)" % row_names(rows, members)
                if group[0] == "line":
                    entry = "%s on %s%s: %s, %s" % (what, labels[g], where, group[1], compact(group[2]))
                    legend.append(("line:" + dash, line_colors[g], wrap(entry)))
                else:
                    entry = "%s on %s (one mark per lesson%s): %s" % (
                        what, labels[g], "; " + where[2:-1] if where else "", group[1])
                    legend.append(("mark:" + dash, line_colors[g], wrap(entry)))
    if any(row.historic for row in rows):
        legend.append(("historic", MUTED, wrap("pale bars: a historic method reproduced beside its lesson, "
                                               "not the lesson's result")))

    # Bar labels: inside the bar's end when it fits and no ceiling crosses it there, else past
    # the bar's end and past any ceiling in the way.
    bars, labels_out, right = [], [], 0.0
    for i, (row, (lesson, variants)) in enumerate(zip(rows, left_texts)):
        y = bar_y(i, 0)
        bars.append(text(x0 - 8, y + 11, lesson, size=11, anchor="end"))
        for k, v in enumerate(variants):
            bars.append(text(x0 - 8, y + 11 + 11 * (k + 1), v, size=9, anchor="end", color=MUTED,
                             italic=bool(row.note) and k == len(variants) - 1))
        for g, r in enumerate(row.records):
            by = bar_y(i, g)
            v = rj.number(r.get("value")) if r else None
            if r is None or v is None or (axis.log and v <= 0):
                word = "no record" if r is None else "n/a"
                labels_out.append('<rect x="%d" y="%.1f" width="%.1f" height="%d" fill="white"/>'
                                  % (x0 + 2, by, text_width(word, 10) + 4, BAR))
                labels_out.append(text(x0 + 4, by + 12, word, size=10, color=MUTED, italic=True))
                continue
            x = axis.x(v)
            tip = "%s, %s %s: %s %s" % (labels[g], row.label, r.get("variant") or "", rj.format_value(v), unit)
            opacity = ' fill-opacity="0.45"' if row.historic else ""
            bars.append('<rect x="%d" y="%.1f" width="%.1f" height="%d" fill="%s"%s><title>%s</title></rect>'
                        % (x0, by, max(x - x0, 0.5), BAR, colors[g], opacity, escape(tip)))
            lib = rj.ratio(r, "ratio_to_library", "library_value")
            label = compact(v) + ("  (%s %s)" % (share(lib), yardstick) if lib is not None else "")
            w = text_width(label, 10)
            end = free_end(x - 4, w, own[(i, g)])  # the text's right end, left of its own ceilings
            if end - w - 2 >= x0 + 2 and not row.historic:  # inside the bar, white on its colour
                labels_out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"/>'
                                  % (end - w - 2, by + 1, w + 4, BAR - 2, colors[g]))
                labels_out.append(text(end, by + 12, label, size=10, anchor="end", color="white", weight="bold"))
            else:  # past the bar's end and its own ceilings, on white
                start = free_span(x + 2, w + 4, own[(i, g)])
                labels_out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="white"/>'
                                  % (start, by, w + 4, BAR))
                labels_out.append(text(start + 2, by + 12, label, size=10, color=INK))
                right = max(right, start + w + 6)

    legend_top = y0 + 52
    legend_rows = sum(len(r) for _, _, r in legend)
    height = int(legend_top + LEGEND_ROW * legend_rows + 10)
    width = int(max(x0 + PLOT_WIDTH + RIGHT, right + RIGHT, 20 + text_width(title, 11) * 1.45,
                    20 + text_width(subtitle, 11),
                    x0 + 40 + max([text_width(row, 10) for _, _, r in legend for row in r] + [0])))

    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">'
           % (width, height, width, height),
           "<title>%s</title>" % escape(title),
           "<desc>%s</desc>" % escape("Generated by scripts/plots.py from the tour's results JSON."),
           '<rect x="0" y="0" width="%d" height="%d" fill="white"/>' % (width, height),
           text(12, 26, title, size=17, weight="bold"),
           text(12, 46, subtitle, size=12, color=MUTED)]

    # Grid, x axis, tick labels and the axis title (under the tick labels, never on them).
    for t in axis.ticks:
        x = axis.x(t)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="1"/>'
                   % (x, y_top, x, y0, GRID))
        out.append(text(x, y0 + 15, compact(t), size=10, anchor="middle", color=MUTED))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s"/>' % (x0, y_top, x0, y0, INK))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s"/>' % (x0, y0, x0 + PLOT_WIDTH, y0, INK))
    axis_title = (unit or "value") + (" (log scale)" if axis.log else "")
    out.append(text(x0 + PLOT_WIDTH / 2, y0 + 34, axis_title, size=12, anchor="middle"))

    # Bars first, then the ceilings over them, then the labels (on a background).
    out += bars
    for x, y1, y2, color, dash, title_, _, _ in drawn:
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2" '
                   'stroke-dasharray="%s"><title>%s</title></line>' % (x, y1, x, y2, color, dash, escape(title_)))
    out += labels_out

    y = legend_top
    for kind, color, legend_rows_ in legend:
        if kind == "bar":
            out.append('<rect x="%d" y="%d" width="24" height="10" fill="%s"/>' % (x0, y - 9, color))
        elif kind == "historic":
            out.append('<rect x="%d" y="%d" width="24" height="10" fill="%s" fill-opacity="0.45"/>'
                       % (x0, y - 9, BAR_COLORS[0]))
        elif kind.startswith("line:"):
            out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>'
                       % (x0, y - 4, x0 + 24, y - 4, color, kind[5:]))
        else:
            out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>'
                       % (x0 + 12, y - 12, x0 + 12, y + 2, color, mark_dash(kind[5:])))
        for k, line in enumerate(legend_rows_):
            out.append(text(x0 + 32, y + LEGEND_ROW * k, line, size=10,
                            color=INK if kind in ("bar", "historic") else color))
        y += LEGEND_ROW * len(legend_rows_)

    out.append("</svg>")
    return "\n".join(out) + "\n"


def plot_name(track):
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in track) + ".svg"


def write_plots(runs, out_dir):
    """Writes <out_dir>/<track>.svg for every track of every results file; returns the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for track in rj.ordered_tracks(runs):
        path = os.path.join(out_dir, plot_name(track))
        with open(path, "w", encoding="utf-8") as f:
            f.write(track_svg(track, runs))
        paths.append(path)
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="*", help="results/<gpu>.json files (default: every results/*.json)")
    parser.add_argument("--out", default="docs/plots", help="output folder (default: docs/plots)")
    args = parser.parse_args(argv)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = args.results or rj.results_files(os.path.join(repo, "results"))
    try:
        runs = [rj.without_retired(r, os.path.join(repo, "lessons")) for _, r in rj.load_all(paths)]
    except (OSError, ValueError) as e:
        print("plots.py: error: %s" % e, file=sys.stderr)
        return 2
    written = write_plots(runs, args.out)
    if not written:
        print("plots.py: %s: no records; nothing drawn" % ", ".join(paths) if paths else "plots.py: no results files",
              file=sys.stderr)
        return 1
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
