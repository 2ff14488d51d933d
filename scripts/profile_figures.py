#!/usr/bin/env python3
"""The profiler figures of the lesson READMEs, generated from results/profile/<gpu>.json.

    scripts/profile_figures.py [--root DIR] [--check] [README ...]
    scripts/profile_figures.py import LOG ... --gpu NAME --ncu VERSION [--date D] [--out FILE]

Many students run on clouds that deny the hardware counters (ncu stops with
ERR_NVGPUCTRPERM); the Nsight Compute figures a README prints are then all the profiler
evidence they have. So no such figure is typed by hand: a README marks where its figures
belong with two lines,

    <!-- profile:begin -->
    <!-- profile:end -->

and this script fills the space between them from results/profile/<gpu>.json, one column
per GPU. The begin line may say which figures to show and what to put beside them:

    <!-- profile:begin metrics="a.sum,b.pct,a.sum/c.sum" also="sgemm/10_warp_tiling[warp 32x64]" -->

`metrics` (comma-separated) lists the metrics in the order of the table's rows; an entry
`x/y` (or `x/32/y`) is a quotient of metrics and numbers, for the figures that the ncu
documentation defines as one (sectors per request, wavefronts per load). Without it, the
table shows the `--metrics` of the README's own ncu commands. `also` (separated by `;`)
adds the results of other lessons, `track/NN_name` or `track/NN_name[variant]`, for the
comparisons the text asks for. Rows are (variant, kernel, metric); a figure a GPU has not
recorded shows an em dash. With --check nothing is written, every stale README is named
and the exit code is 1.

The profile files. `scripts/gpu-verify profile` writes results/profile/<gpu>.json
(scripts/profile_commands.py --figures-dir): it runs every ncu command of the READMEs with
a report file, exports the report as CSV (`--page raw --csv --print-units base`, and again
with `--print-nvtx-rename kernel`, which names each result's variant by the lesson's NVTX
range) and keeps, per lesson, per result (variant, kernel), the metrics some README's block
shows, in base units. The `import` command builds the same records from the text output
of ncu (the details page, as the committed logs in results/logs/*ncu*.log hold it): a line
`### NN_name/stem [variant]` before a kernel's output names its lesson and variant.

File format:

    {"gpu": "NVIDIA H100 80GB HBM3", "lessons": {"sgemm/11_double_buffering": {
        "ncu": "2025.3.1", "date": "2026-11-24", "command": "the ncu command(s)", "source": "...",
        "units": {"smsp__inst_executed.sum": "inst", "gpu__time_duration.sum": "ns"},
        "results": [{"variant": "2 buffers", "kernel": "sgemm_double_buffering<...>",
                     "metrics": {"smsp__inst_executed.sum": 2585616384, ...}}]}}}
"""
import argparse
import csv
import datetime
import glob
import io
import json
import os
import re
import sys
from collections import OrderedDict

import results_json as rj

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN_RE = re.compile(r'<!-- profile:begin((?:\s+[a-z]+="[^"]*")*)\s*-->')
ATTR_RE = re.compile(r'([a-z]+)="([^"]*)"')
BEGIN_ANY = "<!-- profile:begin"
END = "<!-- profile:end -->"
ATTRIBUTES = ("metrics", "also")
DASH = "\u2014"
METRIC_RE = re.compile(r"^[a-z][a-z0-9]*__[A-Za-z0-9_.]+$")


class FigureError(ValueError):
    """A problem in one input file; the message starts with the file."""


# ---------------------------------------------------------------------------------------
# Units: every value is kept in one unit per kind (ns, byte, hz, byte/s), as ncu's base units.

_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 1024.0, "Mi": 1024.0 ** 2,
           "Gi": 1024.0 ** 3, "Ti": 1024.0 ** 4}
_TIME = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "\u00b5s": 1e3, "msecond": 1e6, "ms": 1e6,
         "second": 1e9, "s": 1e9}


def _bytes_factor(word):
    m = re.fullmatch(r"(|k|K|M|G|T|Ki|Mi|Gi|Ti)(?:byte|B)", word)
    return _PREFIX[m.group(1)] if m else None


def _hz_factor(word):
    m = re.fullmatch(r"(|k|M|G|T)hz", word, re.IGNORECASE)
    return _PREFIX[m.group(1).upper()] if m else None


def to_base(value, unit):
    """(value, unit) in the unit this file keeps: times in ns, sizes in byte, frequencies in hz,
    bandwidths in byte/s; any other unit (%, inst, sector, register/thread, none) unchanged."""
    unit = (unit or "").strip()
    if unit in _TIME:
        return value * _TIME[unit], "ns"
    f = _bytes_factor(unit)
    if f is not None:
        return value * f, "byte"
    f = _hz_factor(unit)
    if f is not None:
        return value * f, "hz"
    if "/" in unit:
        num, den = unit.split("/", 1)
        if den in _TIME:  # a rate: per ns, us, ms or s
            per_second = 1e9 / _TIME[den]
            f = _bytes_factor(num)
            if f is not None:
                return value * f * per_second, "byte/s"
            if num == "cycle":
                return value * per_second, "hz"
        f = _bytes_factor(num)
        if f is not None and f != 1.0:  # Kbyte/block -> byte/block
            return value * f, "byte/" + den
    return value, unit


def number(text):
    """ncu's printed number (thousands separated, maybe a float) as a float; None for n/a."""
    text = (text or "").strip().replace(",", "")
    if not text or text.lower() in ("n/a", "nan"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def clean(v):
    """A stored number: 12 significant digits (no binary noise from the unit conversion), an
    int when it is one."""
    v = float("%.12g" % v)
    return int(v) if v.is_integer() and abs(v) < 2 ** 63 else v


# ---------------------------------------------------------------------------------------
# Parsing ncu's output.

KERNEL_LINE = re.compile(r"^\s*(?P<name>\S.*?) \((?P<grid>\d+, \d+, \d+)\)x\((?P<block>\d+, \d+, \d+)\), "
                         r"Context \d+, Stream \d+(?:, Device \d+, CC [\d.]+)?\s*$")
LESSON_LINE = re.compile(r"^###\s+(?P<lesson>[^\s/\[]+)(?:/\S*)?(?:\s+\[(?P<variant>.*)\])?\s*$")
METRIC_LINE = re.compile(r"^\s*(?P<name>[a-z][a-z0-9]*__[A-Za-z0-9_.]+)\s+(?:(?P<unit>\S+)\s+)?"
                         r"(?P<value>[-+]?(?:\d[\d,]*)?\.?\d+(?:[eE][-+]?\d+)?|n/a)\s*$")


def new_result(lesson=None, variant=None, kernel=None):
    return {"lesson": lesson, "variant": variant, "kernel": kernel, "metrics": OrderedDict(), "units": {}}


def parse_text(text):
    """The results in ncu's text output (the details page, as printed without --csv), in
    order: [{"lesson", "variant", "kernel", "metrics": {name: value}, "units": {name: unit}}].
    A kernel's header line (`name (grid)x(block), Context c, Stream s, ...`) starts a result;
    a line `### NN_name/stem [variant]` names the lesson and variant of the results after it
    (the convention of the committed logs), and starts a result of its own for metrics
    printed without a kernel line. Values are converted to base units (to_base)."""
    results = []
    lesson = variant = None
    current = None
    for line in text.splitlines():
        m = LESSON_LINE.match(line)
        if m:
            lesson, variant = m.group("lesson"), m.group("variant")
            current = new_result(lesson, variant)
            results.append(current)
            continue
        m = KERNEL_LINE.match(line)
        if m:
            if current is not None and current["kernel"] is None and not current["metrics"]:
                current["kernel"] = m.group("name")  # the kernel of the '###' line's result
            else:
                current = new_result(lesson, variant, m.group("name"))
                results.append(current)
            continue
        m = METRIC_LINE.match(line)
        if m and current is not None:
            v = number(m.group("value"))
            if v is None:
                continue
            v, unit = to_base(v, m.group("unit"))
            current["metrics"][m.group("name")] = clean(v)
            current["units"][m.group("name")] = unit
    return [r for r in results if r["metrics"] or r["kernel"]]


def parse_csv_raw(text):
    """The results of `ncu --csv --page raw` output (a header row, a row of units, one row per
    result), in order: [{"id", "kernel", "metrics", "units"}]. Lines before the header (the
    program's own output, ==PROF== lines) and after the rows are ignored."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID","Process ID"')), None)
    if start is None:
        return []
    rows = []
    for row in csv.reader(io.StringIO("\n".join(lines[start:]))):
        if rows and (len(row) != len(rows[0]) or (row and row[0].startswith("=="))):
            break
        rows.append(row)
    if len(rows) < 2:
        return []
    header, units = rows[0], rows[1]
    col = {name: i for i, name in enumerate(header)}
    results = []
    for row in rows[2:]:
        r = new_result(kernel=row[col["Kernel Name"]])
        r["id"] = row[col["ID"]]
        for i, name in enumerate(header):
            if not METRIC_RE.match(name):
                continue
            v = number(row[i])
            if v is None:
                continue
            v, unit = to_base(v, units[i] if i < len(units) else "")
            r["metrics"][name] = clean(v)
            r["units"][name] = unit
        results.append(r)
    return results


def with_variants(results, renamed):
    """`results` (parse_csv_raw of a report) with each result's variant: its name in the same
    report exported with --print-nvtx-rename kernel (parse_csv_raw of that export), where the
    two differ. A result no NVTX range encloses keeps no variant."""
    by_id = {r.get("id"): r["kernel"] for r in renamed}
    for r in results:
        name = by_id.get(r.get("id"))
        r["variant"] = nvtx_range_of(name) if name and name != r["kernel"] else None
    return results


def nvtx_range_of(renamed):
    """The NVTX range of a name that --print-nvtx-rename kernel gave a result: ncu 2025.3
    writes '<range>/<the kernel's signature>' ('double/void <unnamed>::reduce<double>(const
    T1 *)'). A C++ signature holds no '/', so the range is all before the last one."""
    return renamed.rsplit("/", 1)[0] if "/" in renamed else renamed


def ncu_version(text):
    """'2025.3.1' from `ncu --version` output or a log header that names it, else None."""
    m = re.search(r"(?:Version|ncu)\s+(\d{4}\.\d+(?:\.\d+)?)", text or "")
    return m.group(1) if m else None


# ---------------------------------------------------------------------------------------
# Names.

def short_kernel(name):
    """A kernel's name as a table shows it: without 'void', the anonymous namespace and the
    parameter list. 'void <unnamed>::sgemm_mma<2, 1>(int, const float *)' -> 'sgemm_mma<2, 1>'."""
    if not name:
        return ""
    s = re.sub(r"^void\s+", "", name.strip())
    s = s.replace("(anonymous namespace)::", "").replace("<unnamed>::", "")
    depth = 0
    for i, c in enumerate(s):  # cut at the parameter list: the first '(' outside template brackets
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0 and i > 0:
            return s[:i]
    return s


def lesson_folders(root):
    """{NN_name: track/NN_name} of the lesson folders (raises FigureError on a name two tracks share)."""
    found = {}
    for path in sorted(glob.glob(os.path.join(root, "lessons", "*", "*", "README.md"))):
        track, lesson = path.split(os.sep)[-3:-1]
        if lesson in found:
            raise FigureError("lessons/%s and %s share the folder name %s" % (track, found[lesson], lesson))
        found[lesson] = "%s/%s" % (track, lesson)
    return found


def split_spec(spec):
    """A table entry as [(operator, term)]: 'a.sum*32/b.sum' -> [('', 'a.sum'), ('*', '32'), ('/', 'b.sum')]."""
    parts = re.split(r"([*/])", spec)
    out = [("", parts[0].strip())]
    for i in range(1, len(parts), 2):
        out.append((parts[i], parts[i + 1].strip()))
    return out


def metric_terms(spec):
    """The metric names of a table entry: 'a.sum*32/b.sum' -> ['a.sum', 'b.sum']."""
    return [t for _, t in split_spec(spec) if METRIC_RE.match(t)]


def value_of(spec, metrics):
    """The value of a table entry for one result: a metric, or metrics and numbers multiplied
    and divided from left to right; None when a term is missing or a divisor is 0."""
    out = None
    for op, t in split_spec(spec):
        if METRIC_RE.match(t):
            v = metrics.get(t)
        else:
            try:
                v = float(t)
            except ValueError:
                return None
        if v is None:
            return None
        v = float(v)
        if op == "":
            out = v
        elif op == "*":
            out *= v
        elif v == 0:
            return None
        else:
            out /= v
    return out


# ---------------------------------------------------------------------------------------
# Blocks in the READMEs.

def readme_commands(text):
    """The ncu commands of a README (as profile_commands.py finds them)."""
    import profile_commands  # here, so that profile_commands may import this module
    return [c.text for c in profile_commands.commands_in(text, "", "") if c.tool == "ncu"]


def command_metrics(command):
    """The metrics a command's --metrics option names, in order."""
    joined = re.sub(r"\\\n\s*", "", command)
    out = []
    for m in re.finditer(r"--metrics(?:\s+|=)(\S+)", joined):
        for name in m.group(1).split(","):
            name = name.strip().strip("'\"")
            if METRIC_RE.match(name) and name not in out:
                out.append(name)
    return out


class Block:
    """One README's profile block: where it is and what it shows."""

    def __init__(self, readme, lesson, start, end, metrics, also):
        self.readme, self.lesson, self.start, self.end = readme, lesson, start, end
        self.metrics, self.also = metrics, also  # also: [(track/lesson, variant or None)]

    def lessons(self):
        return [(self.lesson, None)] + self.also


def parse_also(text, where):
    out = []
    for item in [s.strip() for s in text.split(";") if s.strip()]:
        m = re.fullmatch(r"([a-z0-9_]+/[0-9]{2}_[A-Za-z0-9_]+)(?:\[(.+)\])?", item)
        if not m:
            raise FigureError('%s: also="%s": each item is track/NN_name or track/NN_name[variant]' % (where, item))
        out.append((m.group(1), m.group(2)))
    return out


def find_block(text, readme, lesson):
    """The README's Block, or None when it has no markers; raises FigureError on bad markers."""
    if BEGIN_ANY not in text and END not in text:
        return None
    begins = list(BEGIN_RE.finditer(text))
    if text.count(BEGIN_ANY) != len(begins):
        raise FigureError('%s: a "%s" line that is not <!-- profile:begin --> with attributes name="value"'
                          % (readme, BEGIN_ANY))
    if len(begins) != 1 or text.count(END) != 1:
        raise FigureError("%s: expected one profile:begin line and one '%s' after it, found %d and %d"
                          % (readme, END, len(begins), text.count(END)))
    begin = begins[0]
    end = text.find(END)
    if end < begin.end():
        raise FigureError("%s: '%s' comes before profile:begin" % (readme, END))
    attrs = dict(ATTR_RE.findall(begin.group(1)))
    unknown = sorted(set(attrs) - set(ATTRIBUTES))
    if unknown:
        raise FigureError("%s: profile:begin has unknown attribute(s) %s (known: %s)"
                          % (readme, ", ".join(unknown), ", ".join(ATTRIBUTES)))
    if "metrics" in attrs:
        metrics = [m.strip() for m in attrs["metrics"].split(",") if m.strip()]
        bad = [m for m in metrics if not metric_terms(m)]
        if bad:
            raise FigureError("%s: metrics= entries that name no metric: %s" % (readme, ", ".join(bad)))
    else:
        metrics = []
        for c in readme_commands(text):
            metrics += [m for m in command_metrics(c) if m not in metrics]
        if not metrics:
            raise FigureError("%s: its ncu commands name no --metrics: list them in metrics=\"...\"" % readme)
    return Block(readme, lesson, begin.end(), end, metrics, parse_also(attrs.get("also", ""), readme))


def all_blocks(root, readmes=None):
    readmes = readmes or sorted(glob.glob(os.path.join(root, "lessons", "*", "*", "README.md")))
    blocks = []
    for readme in readmes:
        track, lesson = os.path.abspath(readme).split(os.sep)[-3:-1]
        with open(readme, encoding="utf-8") as f:
            b = find_block(f.read(), readme, "%s/%s" % (track, lesson))
        if b:
            blocks.append(b)
    return blocks


def quoted_metrics(root):
    """{track/lesson: set of metric names} that some README's block shows of that lesson."""
    out = {}
    for b in all_blocks(root):
        names = {t for spec in b.metrics for t in metric_terms(spec)}
        for lesson, _ in b.lessons():
            out.setdefault(lesson, set()).update(names)
    return out


# ---------------------------------------------------------------------------------------
# Profile files.

def profile_files(root):
    return sorted(glob.glob(os.path.join(root, "results", "profile", "*.json")), key=os.path.basename)


def load_profile(path):
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            raise FigureError("%s: not valid JSON: %s" % (path, e)) from None
    if not isinstance(data, dict) or not isinstance(data.get("gpu"), str) or not isinstance(data.get("lessons"), dict):
        raise FigureError("%s: expected an object with 'gpu' and a 'lessons' object" % path)
    for name, entry in data["lessons"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("results"), list):
            raise FigureError("%s: lessons[%s]: expected an object with a 'results' list" % (path, name))
    return data


def lesson_entry(results, quoted, ncu, date, command, source):
    """One lesson's entry of a profile file from parsed results, keeping only the quoted metrics."""
    units, kept = {}, []
    for r in results:
        metrics = OrderedDict((k, v) for k, v in sorted(r["metrics"].items()) if k in quoted)
        if not metrics:
            continue
        units.update({k: r["units"].get(k, "") for k in metrics})
        kept.append(OrderedDict([("variant", r.get("variant")), ("kernel", r.get("kernel")), ("metrics", metrics)]))
    return OrderedDict([("ncu", ncu), ("date", date), ("command", command), ("source", source),
                        ("units", OrderedDict(sorted(units.items()))), ("results", kept)])


def write_profile(path, gpu, lessons, replace=True):
    """Writes (or merges into) a profile file: the lessons given replace those of the same name."""
    data = OrderedDict([("gpu", gpu), ("lessons", OrderedDict())])
    if os.path.exists(path):
        old = load_profile(path)
        if old["gpu"] != gpu:
            raise FigureError("%s holds GPU '%s', not '%s'" % (path, old["gpu"], gpu))
        data["lessons"].update(old["lessons"])
    for name, entry in lessons.items():
        if replace or name not in data["lessons"]:
            data["lessons"][name] = entry
    data["lessons"] = OrderedDict(sorted(data["lessons"].items()))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


def gpu_file_name(gpu):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", gpu).strip("_") + ".json"


# ---------------------------------------------------------------------------------------
# Rendering.

def si(v):
    """3 significant digits with an SI prefix from 10,000 up: 2.71 G, 134 M, 28.5 k; below, the
    number itself."""
    a = abs(v)
    for threshold, factor, prefix in ((1e12, 1e12, "T"), (1e9, 1e9, "G"), (1e6, 1e6, "M"), (1e4, 1e3, "k")):
        if a >= threshold:
            return "%.3g %s" % (v / factor, prefix)
    if float(v).is_integer():
        return "{:,.0f}".format(v)
    return "%.3g" % v


def format_figure(v, unit):
    """One figure for a table cell, in a unit a reader knows."""
    if v is None:
        return DASH
    if unit == "%":
        return "%.1f%%" % v if abs(v) >= 0.1 or v == 0 else "%.2g%%" % v
    if unit == "ns":
        if v >= 1e6:
            return "%.3g ms" % (v / 1e6) if v < 1e9 else "%.3g s" % (v / 1e9)
        return "%.3g \u00b5s" % (v / 1e3) if v >= 1e3 else "%.3g ns" % v
    if unit == "byte":
        for factor, name in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB")):
            if abs(v) >= factor:
                return "%.3g %s" % (v / factor, name)
        return "%d B" % v
    if unit == "byte/s":
        return "%.3g GB/s" % (v / 1e9)
    if unit == "hz":
        return "%.3g GHz" % (v / 1e9)
    if unit == "ratio":
        return rj.format_value(v)
    return si(v)


def cell(s):
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def spec_label(spec):
    """'`a.sum` × 32 / `b.sum`'."""
    out = []
    for op, t in split_spec(spec):
        if op:
            out.append({"*": "\u00d7", "/": "/"}[op])
        out.append("`%s`" % t if METRIC_RE.match(t) else t)
    return " ".join(out)


def spec_unit(spec, units):
    if len(split_spec(spec)) > 1:
        return "ratio"
    return units.get(spec.strip(), "")


def result_rows(runs, lesson, variant_filter):
    """[(key, [result or None per GPU])] of one lesson over the GPUs: results matched by
    (variant, kernel, occurrence), in the first GPU's order, then the others'."""
    keys, table = [], {}
    for g, run in enumerate(runs):
        entry = run["lessons"].get(lesson) or {}
        seen = {}
        for r in entry.get("results", []):
            if variant_filter is not None and r.get("variant") != variant_filter:
                continue
            base = (r.get("variant"), r.get("kernel"))
            seen[base] = seen.get(base, 0) + 1
            key = base + (seen[base],)
            if key not in table:
                keys.append(key)
                table[key] = [None] * len(runs)
            table[key][g] = r
    return [(k, table[k]) for k in keys]


def gpu_lines(runs, labels, lessons):
    """One line per GPU: where its figures come from (ncu version, date, source), said once
    when every lesson of the block shares them."""
    lines = []
    for label, run in zip(labels, runs):
        entries = [(name, run["lessons"][name]) for name in lessons if name in run["lessons"]]
        if not entries:
            lines.append("- **%s**: not profiled yet; the next `scripts/gpu-verify profile` on this GPU fills "
                         "its column." % cell(label))
            continue
        said = OrderedDict()
        for name, e in entries:
            what = "ncu %s, %s" % (e.get("ncu") or "(version not recorded)", e.get("date") or "(date not recorded)")
            if e.get("source"):
                what += ", %s" % e["source"]
            said.setdefault(what, []).append(name)
        if len(said) == 1:
            text = next(iter(said))
        else:
            text = "; ".join("%s: %s" % (", ".join(names), what) for what, names in said.items())
        missing = [name for name in lessons if name not in run["lessons"]]
        if missing:
            text += "; %s: not profiled yet" % ", ".join(missing)
        lines.append("- **%s**: %s." % (cell(label), cell(text)))
    return lines


def render_block(block, runs, sources):
    """The text between a README's markers."""
    labels = rj.short_gpu_names([r["gpu"] for r in runs])
    lines = ["<!-- generated by scripts/profile_figures.py from %s; do not edit by hand -->"
             % (", ".join(sources) or "results/profile/ (no file yet)"), ""]
    lessons = [name for name, _ in block.lessons()]
    lessons = list(OrderedDict.fromkeys(lessons))
    lines.append("Measured with Nsight Compute (`ncu`) on:")
    lines.append("")
    if not runs:
        lines.append("- no GPU profiled yet; `scripts/gpu-verify profile` writes the files.")
    lines += gpu_lines(runs, labels, lessons)
    rows = []
    for lesson, variant in block.lessons():
        units = {}
        for run in runs:
            units.update((run["lessons"].get(lesson) or {}).get("units", {}))
        prefix = "" if lesson == block.lesson else lesson.split("/", 1)[1] + " "
        for (var, kernel, n), per_gpu in result_rows(runs, lesson, variant):
            kname = short_kernel(kernel) or DASH
            if n > 1:
                kname += " (launch %d)" % n
            for spec in block.metrics:
                values = [value_of(spec, r["metrics"]) if r else None for r in per_gpu]
                unit = spec_unit(spec, units)
                rows.append([prefix + (var or DASH), kname, spec_label(spec)] +
                            [format_figure(v, unit) for v in values])
    lines.append("")
    if not rows:
        lines.append("No figures recorded yet. The next `scripts/gpu-verify profile` records, per variant and "
                     "kernel: %s." % ", ".join(spec_label(s) for s in block.metrics))
        return "\n" + "\n".join(lines) + "\n\n"
    header = ["variant", "kernel", "metric"] + labels
    lines.append("| " + " | ".join(cell(h) for h in header) + " |")
    lines.append("|" + "|".join(["---"] * 3 + ["---:"] * len(labels)) + "|")
    previous = None
    for row in rows:
        shown = list(row)
        if previous and row[0] == previous[0] and row[1] == previous[1]:
            shown[0] = shown[1] = ""  # the same result as the row above
        previous = row
        lines.append("| " + " | ".join(cell(c) if i != 2 else c.replace("|", "\\|") for i, c in enumerate(shown))
                     + " |")
    return "\n" + "\n".join(lines) + "\n\n"


def update(root, readmes=None, check=False, profile_paths=None):
    """Regenerates (or checks) the READMEs' blocks; returns the READMEs that changed (or are stale)."""
    paths = profile_paths if profile_paths is not None else profile_files(root)
    runs = [load_profile(p) for p in paths]
    sources = [os.path.relpath(os.path.abspath(p), root).replace(os.sep, "/") for p in paths]
    known = set(lesson_folders(root).values())
    changed = []
    for block in all_blocks(root, readmes):
        for lesson, _ in block.also:
            if lesson not in known:
                raise FigureError('%s: also= names %s, which is not a lesson' % (block.readme, lesson))
        with open(block.readme, encoding="utf-8") as f:
            old = f.read()
        new = old[:block.start] + render_block(block, runs, sources) + old[block.end:]
        if new != old:
            changed.append(block.readme)
            if not check:
                with open(block.readme, "w", encoding="utf-8") as f:
                    f.write(new)
    return changed


# ---------------------------------------------------------------------------------------
# Import of committed text logs.

def import_logs(root, logs, gpu, ncu, date, out):
    """Adds to `out` the lessons the text logs hold (replacing those lessons). Returns
    {lesson: [metrics a README's block shows of it that the logs lack]}."""
    folders = lesson_folders(root)
    quoted = quoted_metrics(root)
    per_lesson = OrderedDict()
    for log in logs:
        with open(log, encoding="utf-8") as f:
            text = f.read()
        header = text.splitlines()[0] if text else ""
        log_date = date or (re.match(r"#\s*(\d{4}-\d{2}-\d{2})", header) or [None, None])[1]
        for r in parse_text(text):
            if not r["lesson"]:
                raise FigureError("%s: a result before any '### NN_name/stem [variant]' line" % log)
            lesson = folders.get(r["lesson"])
            if lesson is None:
                raise FigureError("%s: '%s' is not a lesson folder" % (log, r["lesson"]))
            rel = os.path.relpath(os.path.abspath(log), root).replace(os.sep, "/")
            per_lesson.setdefault(lesson, {"results": [], "logs": [], "date": log_date, "header": header})
            per_lesson[lesson]["results"].append(r)
            if rel not in per_lesson[lesson]["logs"]:
                per_lesson[lesson]["logs"].append(rel)
    entries, missing = OrderedDict(), OrderedDict()
    for lesson, info in per_lesson.items():
        q = quoted.get(lesson, set())
        command = info["header"].lstrip("# ").strip()
        entries[lesson] = lesson_entry(info["results"], q, ncu or ncu_version(info["header"]), info["date"],
                                       command, "committed log " + ", ".join(info["logs"]))
        have = {k for r in entries[lesson]["results"] for k in r["metrics"]}
        missing[lesson] = sorted(q - have)
    write_profile(out, gpu, entries)
    return missing


# ---------------------------------------------------------------------------------------

def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["import"]:
        ap = argparse.ArgumentParser(prog="profile_figures.py import",
                                     description="Builds results/profile/<gpu>.json from ncu text logs.")
        ap.add_argument("logs", nargs="+")
        ap.add_argument("--gpu", required=True, help="the GPU's name, as nvidia-smi prints it")
        ap.add_argument("--ncu", help="the ncu version, when the logs do not say")
        ap.add_argument("--date", help="the date of the logs, when their first line does not say")
        ap.add_argument("--root", default=REPO_ROOT)
        ap.add_argument("--out", help="default <root>/results/profile/<gpu>.json")
        args = ap.parse_args(argv[1:])
        out = args.out or os.path.join(args.root, "results", "profile", gpu_file_name(args.gpu))
        try:
            missing = import_logs(os.path.abspath(args.root), args.logs, args.gpu, args.ncu, args.date, out)
        except (OSError, FigureError) as e:
            print("profile_figures.py: error: %s" % e, file=sys.stderr)
            return 2
        print("profile_figures.py: wrote %s" % out)
        for lesson, names in missing.items():
            if names:
                print("  %s: not in the logs: %s" % (lesson, ", ".join(names)))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("readmes", nargs="*", help="lesson READMEs (default: every lessons/*/*/README.md)")
    ap.add_argument("--root", default=REPO_ROOT, help="the repository (default: this script's)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 naming every stale README")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    try:
        changed = update(root, args.readmes or None, args.check)
    except (OSError, FigureError) as e:
        print("profile_figures.py: error: %s" % e, file=sys.stderr)
        return 2
    rel = [os.path.relpath(p, root) for p in changed]
    if args.check:
        if rel:
            for p in rel:
                print("profile_figures.py: %s: the profile block is stale" % p, file=sys.stderr)
            print("profile_figures.py: run scripts/profile_figures.py to regenerate %d README(s)" % len(rel),
                  file=sys.stderr)
            return 1
        print("profile_figures.py: every profile block is current")
        return 0
    for p in rel:
        print("profile_figures.py: updated %s" % p)
    if not rel:
        print("profile_figures.py: every profile block already current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
