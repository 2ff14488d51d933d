#!/usr/bin/env python3
"""Draws each track's progression from a tour's results as an SVG bar chart.

    scripts/plots.py results/NVIDIA_H200.json --out docs/plots

writes docs/plots/<track>.svg: one bar per lesson (its best variant, named under the
lesson), the value in the track's unit, the library's value as a dashed line and the
hardware peak as a dotted line, with the GPU and the date in the title. Pure standard
library (no matplotlib), and deterministic: the same JSON gives the same bytes.
"""
import argparse
import math
import os
import statistics
import sys
from xml.sax.saxutils import escape, quoteattr

import results_json as rj

# Layout, in SVG pixels.
SLOT = 70                 # horizontal room per bar
BAR = 44                  # bar width
LEFT, RIGHT = 78, 215     # margins: y-axis labels; reference-line labels
TOP, BOTTOM = 70, 130     # margins: title; rotated lesson and variant names
PLOT_HEIGHT = 300
MIN_PLOT_WIDTH = 420
LABEL_ANGLE = 35          # degrees the lesson and variant names are turned
CHAR_WIDTH = 6.8          # average advance of an 11 px character, for the margin
LABEL_CHARS = 34          # characters per row of a reference line's label (fits RIGHT at 10 px)
LINE_GAP = 12             # pixels between rows of a label
LOG_SPAN = 100.0          # switch to a log axis when the bars span more than this factor

BAR_COLOR = "#4c78a8"
LIBRARY_COLOR = "#f58518"
PEAK_COLOR = "#e45756"
INK, MUTED, GRID = "#222222", "#666666", "#dddddd"
FONT = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""


def compact(v):
    """A short label for a bar: 48.2k, 3.51k, 912, 12.5, 0.844."""
    if v is None:
        return "n/a"
    a = abs(v)
    if a >= 1e6:
        return "%.3gM" % (v / 1e6)
    if a >= 1e3:
        return "%.3gk" % (v / 1e3)
    return "%.3g" % v


def library_share(ratio):
    """'41% lib' for a fraction of the library, '87x lib' when far past it (a CPU baseline)."""
    return "%.0f%% lib" % (100 * ratio) if ratio < 10 else "%.0fx lib" % ratio


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


class Axis:
    """Maps values to y pixels, linear from 0 or logarithmic."""

    def __init__(self, values, references):
        positive = [v for v in values if v is not None and v > 0]
        everything = positive + [v for v in references if v is not None and v > 0]
        self.log = bool(positive) and max(positive) / min(positive) > LOG_SPAN
        if self.log:
            self.ticks = log_ticks(min(everything), max(everything) * 1.05)
            self.lo, self.hi = math.log10(self.ticks[0]), math.log10(self.ticks[-1])
        else:
            top = max(everything) * 1.08 if everything else 1.0
            self.ticks = nice_ticks(top)
            self.lo, self.hi = 0.0, self.ticks[-1]

    def y(self, v):
        """Pixel row of value v (clamped to the plot), TOP + PLOT_HEIGHT being the baseline."""
        if v is None or (self.log and v <= 0):
            return TOP + PLOT_HEIGHT
        t = ((math.log10(v) if self.log else v) - self.lo) / (self.hi - self.lo)
        return TOP + PLOT_HEIGHT * (1.0 - min(max(t, 0.0), 1.0))


def reference_lines(chosen, name_key, value_key):
    """[(label, value)] per distinct reference (library or peak) of the chosen records.

    A lesson's library is measured in its own run, so values differ slightly from lesson
    to lesson; the line is drawn at their median. At most three lines, most used first.
    """
    groups = {}
    order = []
    for r in chosen:
        v = rj.number(r.get(value_key))
        if v is None:
            continue
        name = str(r.get(name_key) or ("library" if name_key == "library" else "peak"))
        if name not in groups:
            groups[name] = []
            order.append(name)
        groups[name].append(v)
    order.sort(key=lambda n: -len(groups[n]))
    lines = []
    for name in order[:3]:
        values = groups[name]
        med = statistics.median(values)
        spread = (max(values) - min(values)) / med if med else 0.0
        lines.append((name + (" (median)" if spread > 0.01 else ""), med))
    return lines


def text(x, y, s, size=12, anchor="start", color=INK, weight=None, rotate=None, italic=False, halo=False):
    attrs = '%s font-size="%g" fill="%s" text-anchor="%s"' % (FONT, size, color, anchor)
    if halo:  # a white outline keeps the label readable over a reference line
        attrs += ' stroke="white" stroke-width="3" paint-order="stroke"'
    if weight:
        attrs += ' font-weight="%s"' % weight
    if italic:
        attrs += ' font-style="italic"'
    if rotate is not None:
        attrs += ' transform="rotate(%g %.1f %.1f)"' % (rotate, x, y)
    return '<text x="%.1f" y="%.1f" %s>%s</text>' % (x, y, attrs, escape(s))


def spread_labels(ys, heights):
    """First-row positions of labels `heights` pixels tall, moved down so none overlaps the one above."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    out = list(ys)
    for prev, cur in zip(order, order[1:]):
        out[cur] = max(out[cur], out[prev] + heights[prev] + 2)
    return out


def wrap(label, width=LABEL_CHARS, max_rows=3):
    """A reference line's label cut into rows of at most `width` characters, at spaces."""
    rows = [""]
    for word in label.split():
        if rows[-1] and len(rows[-1]) + 1 + len(word) > width:
            rows.append(word)
        else:
            rows[-1] = (rows[-1] + " " + word).strip()
    if len(rows) > max_rows:  # keep the start and the value at the end
        rows = rows[:max_rows - 1] + ["... " + label.rsplit(" ", 1)[-1]]
    return rows


def track_svg(track, lessons, meta):
    """The SVG text of one track's chart. `lessons`: {lesson: [records]} in order."""
    unit = rj.main_unit(lessons)
    best = rj.best_per_lesson(lessons, unit)
    chosen = [r for _, r in best if r is not None]
    values = [rj.number(r.get("value")) if r is not None else None for _, r in best]
    libraries = reference_lines(chosen, "library", "library_value")
    peaks = reference_lines(chosen, "peak", "peak_value")
    axis = Axis(values, [v for _, v in libraries + peaks])

    n = len(best)
    plot_width = max(MIN_PLOT_WIDTH, n * SLOT)
    slot = plot_width / max(n, 1)
    # The first lesson's name, turned, reaches left of its bar: widen the margin to fit it.
    first_name = len(best[0][0]) * CHAR_WIDTH * math.cos(math.radians(LABEL_ANGLE)) if best else 0
    x0, y0 = max(LEFT, int(first_name - slot / 2 + 12)), TOP + PLOT_HEIGHT
    height = TOP + PLOT_HEIGHT + BOTTOM
    gpu, date = meta.get("gpu") or "unknown GPU", meta.get("date") or "undated"
    title = "%s: %s, %s" % (track, gpu, date)
    sizes = sorted({str(r.get("size")) for r in chosen if r.get("size") not in (None, "")})
    subtitle = ["best variant of each lesson"]
    if len(sizes) == 1:
        subtitle.append("size " + sizes[0])
    if meta.get("cuda"):
        subtitle.append("CUDA " + str(meta["cuda"]))
    subtitle.append("higher is better")
    skipped = sum(len(rs) for rs in lessons.values()) - sum(
        1 for rs in lessons.values() for r in rs if (r.get("unit") or "") == unit)
    if skipped:
        subtitle.append("%d record(s) in other units not shown" % skipped)
    subtitle = "; ".join(subtitle)
    width = max(x0 + plot_width + RIGHT, int(x0 + len(subtitle) * CHAR_WIDTH + 10))

    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">'
           % (width, height, width, height),
           "<title>%s</title>" % escape(title),
           "<desc>%s</desc>" % escape("Generated by scripts/plots.py from the tour's results JSON."),
           '<rect x="0" y="0" width="%d" height="%d" fill="white"/>' % (width, height),
           text(x0, 28, title, size=17, weight="bold"),
           text(x0, 48, subtitle, size=12, color=MUTED)]

    # Grid and y axis.
    for t in axis.ticks:
        y = axis.y(t)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="1"/>'
                   % (x0, y, x0 + plot_width, y, GRID))
        out.append(text(x0 - 6, y + 4, compact(t), size=11, anchor="end", color=MUTED))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s"/>' % (x0, TOP, x0, y0, INK))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s"/>' % (x0, y0, x0 + plot_width, y0, INK))
    y_label = (unit or "value") + (" (log scale)" if axis.log else "")
    out.append(text(x0 - 56, TOP + PLOT_HEIGHT / 2, y_label, size=12, anchor="middle", rotate=-90))
    out.append(text(x0 + plot_width / 2, height - 8, "lesson (variant)", size=12, anchor="middle"))

    # Reference lines across the plot (under the bars' labels), labelled in the right margin.
    lines = [(label, v, LIBRARY_COLOR, "7 4") for label, v in libraries]
    lines += [(label, v, PEAK_COLOR, "2 3") for label, v in peaks]
    wrapped = [wrap("%s: %s" % (label, compact(v))) for label, v, _, _ in lines]
    label_ys = spread_labels([axis.y(v) + 4 for _, v, _, _ in lines], [LINE_GAP * len(w) for w in wrapped])
    for (label, v, color, dash), rows, ly in zip(lines, wrapped, label_ys):
        y = axis.y(v)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="%s">'
                   '<title>%s</title></line>' % (x0, y, x0 + plot_width, y, color, dash, escape(label)))
        for k, row in enumerate(rows):
            out.append(text(x0 + plot_width + 6, ly + LINE_GAP * k, row, size=10, color=color))

    # Bars, each with its value and % of library above, lesson and variant below.
    for i, ((lesson, r), v) in enumerate(zip(best, values)):
        cx = x0 + slot * (i + 0.5)
        if v is not None and (v > 0 or not axis.log):
            y = axis.y(v)
            tip = "%s %s: %s %s" % (lesson, (r or {}).get("variant") or "", rj.format_value(v), unit)
            out.append('<rect x="%.1f" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s</title></rect>'
                       % (cx - BAR / 2, y, BAR, max(y0 - y, 0.0), BAR_COLOR, escape(tip)))
            out.append(text(cx, y - 16, compact(v), size=11, anchor="middle", weight="bold", halo=True))
            lib = rj.ratio(r, "ratio_to_library", "library_value")
            if lib is not None:
                out.append(text(cx, y - 4, library_share(lib), size=9, anchor="middle", color=MUTED, halo=True))
        else:
            out.append(text(cx, y0 - 6, "n/a", size=11, anchor="middle", color=MUTED, italic=True))
        # Both names rotated by LABEL_ANGLE, ending under the bar; the variant one line lower.
        lx, ly = cx + 4, y0 + 14
        out.append(text(lx, ly, lesson, size=11, anchor="end", rotate=-LABEL_ANGLE))
        variant = str((r or {}).get("variant") or "")
        if variant:
            a = math.radians(LABEL_ANGLE)
            out.append(text(lx + 12 * math.sin(a), ly + 12 * math.cos(a), variant, size=9, anchor="end",
                            color=MUTED, rotate=-LABEL_ANGLE))

    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_plots(results, out_dir):
    """Writes <out_dir>/<track>.svg for every track; returns the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for track, lessons in rj.by_track(results["records"]).items():
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in track)
        path = os.path.join(out_dir, safe + ".svg")
        with open(path, "w", encoding="utf-8") as f:
            f.write(track_svg(track, lessons, results))
        paths.append(path)
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="results/<gpu>.json written by the tour")
    parser.add_argument("--out", default="docs/plots", help="output folder (default: docs/plots)")
    args = parser.parse_args(argv)
    try:
        results = rj.load(args.results)
    except (OSError, ValueError) as e:
        print("plots.py: error: %s" % e, file=sys.stderr)
        return 2
    paths = write_plots(results, args.out)
    if not paths:
        print("plots.py: %s has no records; nothing drawn" % args.results, file=sys.stderr)
        return 1
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
