#!/usr/bin/env python3
"""Draws each track's progression from the tour's results as an SVG bar chart.

    scripts/plots.py [results/A.json results/B.json ...] [--out docs/plots]

writes docs/plots/<track>.svg: one row per lesson (its best variant, named beside the
row), one horizontal bar per GPU in that row, so that the GPUs of every results file
(default: every results/*.json, ordered by file name) stand side by side. Each bar is
labelled with its value and its share of the library. The library and the hardware peak
of each GPU are drawn as a dashed and a dotted line in that GPU's colour; a ceiling that
differs from lesson to lesson (the CG track's bandwidth floor depends on the iteration
count) is drawn as a short mark on each bar instead. A legend under the chart names
the GPUs and the lines. When most bars would be too short to read on a linear axis the
axis is logarithmic. Pure standard library (no matplotlib), and deterministic: the same
JSON gives the same bytes.
"""
import argparse
import math
import os
import statistics
import sys
from collections import Counter
from xml.sax.saxutils import escape

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
CLUSTER = 0.03             # ceilings within 3% of their median are one line

BAR_COLORS = ["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#9d755d"]
LINE_COLORS = ["#1f3b63", "#a04f00", "#2c6327", "#6e3f66", "#5c4333"]
INK, MUTED, GRID = "#222222", "#666666", "#dddddd"
FONT = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""
LIBRARY_DASH, PEAK_DASH = "7 4", "2 3"


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
    """Powers of ten (and 2x, 5x between them when there are few) covering [lo, hi]."""
    e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    mults = (1, 2, 5) if e1 - e0 <= 3 else (1,)
    ticks = [m * 10.0 ** e for e in range(e0, e1 + 1) for m in mults]
    return [t for t in ticks if 10.0 ** e0 <= t <= 10.0 ** e1]


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


def ceilings(chosen, name_key, value_key):
    """How one GPU's ceiling of one kind (library or peak) is drawn.

    chosen: [(lesson, record)]. Returns None when no record has it; ("line", name, value)
    when every lesson's value lies within CLUSTER of their median (a lesson's library is
    measured in its own run, so values differ slightly): one line at the median, named
    by the name most records use; ("marks", name, {lesson: value}) otherwise.
    """
    values = {}
    names = Counter()
    for lesson, r in chosen:
        v = rj.number(r.get(value_key))
        if v is None or v <= 0:
            continue
        values[lesson] = v
        names[str(r.get(name_key) or name_key)] += 1
    if not values:
        return None
    name = sorted(names.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    med = statistics.median(values.values())
    if all(abs(v - med) <= CLUSTER * med for v in values.values()):
        return ("line", name, med)
    return ("marks", name, values)


def mark_dash(dash):
    """The dash pattern of a per-lesson mark (a line's pattern, shortened to fit a bar's height)."""
    return "3 1" if dash == PEAK_DASH else "5 2"


def track_svg(track, runs):
    """The SVG text of one track's chart over every GPU. runs: [results] in file order."""
    merged, unit, best, order = rj.track_bests(track, runs)
    labels = rj.short_gpu_names([r.get("gpu") for r in runs])
    ngpu = len(runs)
    colors = [BAR_COLORS[i % len(BAR_COLORS)] for i in range(ngpu)]
    line_colors = [LINE_COLORS[i % len(LINE_COLORS)] for i in range(ngpu)]

    chosen = [[(lesson, b[lesson]) for lesson in order if b.get(lesson) is not None] for b in best]
    values = [rj.number(r.get("value")) for c in chosen for _, r in c]
    refs = [(ceilings(c, "library", "library_value"), ceilings(c, "peak", "peak_value")) for c in chosen]
    ref_values = []
    for pair in refs:
        for ref in pair:
            if ref:
                ref_values += [ref[2]] if ref[0] == "line" else list(ref[2].values())
    share = rj.share_formatter([rj.ratio(r, "ratio_to_library", "library_value") for c in chosen for _, r in c])

    # Left: lesson names, and their variants under them (one per GPU when they differ).
    def variants_of(lesson):
        names = [str(b[lesson].get("variant") or "") if b.get(lesson) else None for b in best]
        present = [(label, v) for label, v in zip(labels, names) if v]
        if len({v for _, v in present}) <= 1:
            return [shorten(present[0][1])] if present else []
        return [shorten("%s: %s" % (label, v)) for label, v in present]

    left_texts = [(lesson, variants_of(lesson)) for lesson in order]
    label_width = max([text_width(lesson, 11) for lesson, _ in left_texts] +
                      [text_width(v, 9) for _, vs in left_texts for v in vs] + [60])
    x0 = int(label_width + 22)
    band = max(ngpu * BAR + (ngpu - 1) * BAR_GAP, max([13 + 11 * len(vs) for _, vs in left_texts] + [0]) - 2)
    band_height = band + BAND_GAP
    y_top = TOP + 8
    y0 = y_top + band_height * max(len(order), 1)
    axis = Axis(values, ref_values, x0, PLOT_WIDTH)

    gpus = " and ".join(str(r.get("gpu") or "unknown GPU") for r in runs) or "no GPU"
    title = "%s on %s" % (track, gpus)
    sizes = sorted({str(r.get("size")) for c in chosen for _, r in c if r.get("size") not in (None, "")})
    subtitle = ["best variant of each lesson"]
    if len(sizes) == 1:
        subtitle.append("size " + sizes[0])
    subtitle.append("higher is better")
    total = sum(len(rs) for rs in merged.values())
    skipped = total - sum(1 for rs in merged.values() for r in rs if (r.get("unit") or "") == unit)
    if skipped:
        subtitle.append("%d record(s) in other units not shown" % skipped)
    subtitle = "; ".join(subtitle)

    # The legend, under the axis: per GPU its bars, then its lines (or marks).
    legend = []  # (kind, color, rows) with kind "bar", "line:<dash>" or "mark:<dash>"
    for i, results in enumerate(runs):
        when = ", ".join(str(x) for x in (("CUDA " + str(results["cuda"])) if results.get("cuda") else None,
                                          results.get("date")) if x)
        legend.append(("bar", colors[i], wrap("%s: %s%s" % (labels[i], results.get("gpu") or "unknown GPU",
                                                             " (%s)" % when if when else ""))))
        for ref, what, dash in ((refs[i][0], "library", LIBRARY_DASH), (refs[i][1], "peak", PEAK_DASH)):
            if not ref:
                continue
            if ref[0] == "line":
                entry = "%s on %s: %s, %s" % (what, labels[i], ref[1], compact(ref[2]))
                legend.append(("line:" + dash, line_colors[i], wrap(entry)))
            else:
                entry = "%s on %s (one mark per lesson): %s" % (what, labels[i], ref[1])
                legend.append(("mark:" + dash, line_colors[i], wrap(entry)))
    legend_top = y0 + 52
    legend_rows = sum(len(rows) for _, _, rows in legend)
    height = int(legend_top + LEGEND_ROW * legend_rows + 10)
    width = int(max(x0 + PLOT_WIDTH + RIGHT, 20 + text_width(title, 11) * 1.45, 20 + text_width(subtitle, 11),
                    x0 + 40 + max([text_width(row, 10) for _, _, rows in legend for row in rows] + [0])))

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

    def bar_y(row, gpu):
        return y_top + BAND_GAP / 2 + row * band_height + gpu * (BAR + BAR_GAP)

    # Bars first, then the ceilings over them, then the labels (on a background that hides the lines).
    labels_out = []
    for row, (lesson, variants) in enumerate(left_texts):
        y = bar_y(row, 0)
        out.append(text(x0 - 8, y + 11, lesson, size=11, anchor="end"))
        for k, v in enumerate(variants):
            out.append(text(x0 - 8, y + 11 + 11 * (k + 1), v, size=9, anchor="end", color=MUTED))
        for i, b in enumerate(best):
            by = bar_y(row, i)
            r = b.get(lesson)
            v = rj.number(r.get("value")) if r else None
            if r is None or v is None or (axis.log and v <= 0):
                labels_out.append(text(x0 + 4, by + 12, "no record" if r is None else "n/a", size=10,
                                       color=MUTED, italic=True))
                continue
            x = axis.x(v)
            tip = "%s, %s %s: %s %s" % (labels[i], lesson, r.get("variant") or "", rj.format_value(v), unit)
            out.append('<rect x="%d" y="%.1f" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>'
                       % (x0, by, max(x - x0, 0.5), BAR, colors[i], escape(tip)))
            lib = rj.ratio(r, "ratio_to_library", "library_value")
            label = compact(v) + ("  (%s lib)" % share(lib) if lib is not None else "")
            w = text_width(label, 10)
            if x - x0 >= w + 10:  # inside the bar's end, white on the bar's colour
                labels_out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"/>'
                                  % (x - w - 6, by + 1, w + 4, BAR - 2, colors[i]))
                labels_out.append(text(x - 4, by + 12, label, size=10, anchor="end", color="white", weight="bold"))
            else:  # past the bar's end, on white
                labels_out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="white" fill-opacity="0.9"/>'
                                  % (x + 2, by + 1, w + 4, BAR - 2))
                labels_out.append(text(x + 4, by + 12, label, size=10, color=INK))

    for i, pair in enumerate(refs):
        for ref, dash in ((pair[0], LIBRARY_DASH), (pair[1], PEAK_DASH)):
            if not ref:
                continue
            if ref[0] == "line":
                x = axis.x(ref[2])
                out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2" '
                           'stroke-dasharray="%s"><title>%s</title></line>'
                           % (x, y_top, x, y0, line_colors[i], dash, escape("%s: %s" % (ref[1], compact(ref[2])))))
            else:
                for row, lesson in enumerate(order):
                    if lesson not in ref[2]:
                        continue
                    x, by = axis.x(ref[2][lesson]), bar_y(row, i)
                    out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2" '
                               'stroke-dasharray="%s"><title>%s</title></line>'
                               % (x, by - 2, x, by + BAR + 2, line_colors[i], mark_dash(dash),
                                  escape("%s, %s: %s" % (labels[i], ref[1], compact(ref[2][lesson])))))
    out += labels_out

    y = legend_top
    for kind, color, rows in legend:
        if kind == "bar":
            out.append('<rect x="%d" y="%d" width="24" height="10" fill="%s"/>' % (x0, y - 9, color))
        elif kind.startswith("line:"):
            out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>'
                       % (x0, y - 4, x0 + 24, y - 4, color, kind[5:]))
        else:
            out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>'
                       % (x0 + 12, y - 12, x0 + 12, y + 2, color, mark_dash(kind[5:])))
        for k, row in enumerate(rows):
            out.append(text(x0 + 32, y + LEGEND_ROW * k, row, size=10, color=INK if kind == "bar" else color))
        y += LEGEND_ROW * len(rows)

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
        runs = [r for _, r in rj.load_all(paths)]
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
