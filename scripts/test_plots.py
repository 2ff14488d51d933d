"""Tests of scripts/plots.py on small synthetic results files (no GPU needed).

Run: python3 -m unittest discover -s scripts -p "test_*.py"
"""
import io
import json
import math
import os
import tempfile
import unittest
import xml.etree.ElementTree as ET
from contextlib import redirect_stderr, redirect_stdout

import plots

SVG = "{http://www.w3.org/2000/svg}"
FIXTURE_RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata", "results")


def record(track, lesson, variant, value, unit="GFLOP/s", library="cublasSgemm FP32 (pedantic)",
           library_value=50000.0, peak="FP32 peak from clocks", peak_value=66900.0, size="4096", extra=None):
    ratio = lambda a, b: a / b if a is not None and b else None  # noqa: E731
    return {"track": track, "lesson": lesson, "variant": variant, "size": size, "value": value, "unit": unit,
            "time_ms": 1.0, "library": library, "library_value": library_value,
            "ratio_to_library": ratio(value, library_value), "peak": peak, "peak_value": peak_value,
            "ratio_to_peak": ratio(value, peak_value), "checked": True, "extra": extra or {}}


def results(records):
    return {"gpu": "NVIDIA H200", "cuda": "13.0 (driver 13.0)", "date": "2026-11-21",
            "device": {"sm_count": 132, "fp32_peak_gflops": 66900}, "records": records}


def sample():
    return results([
        record("sgemm", "01_naive", "naive 16x16", 4000.0),
        record("sgemm", "05_shared_tiling", "tile=8", 6000.0),
        record("sgemm", "05_shared_tiling", "tile=16", 9000.0),
        record("sgemm", "05_shared_tiling", "tile=32", float("nan")),
        record("sgemm", "08_cublas", "cublasSgemm FP32", None, library_value=None),
        record("bandwidth", "02_copy_kernels", "float4 <&> \"quoted\"", 3900.0, unit="GB/s",
               library="cudaMemcpy D2D", library_value=4100.0, peak="DRAM theoretical", peak_value=4800.0),
        record("cg", "01_sample", "default", 20.0, unit="solves/s", library="Eigen CPU", library_value=8.0,
               peak=None, peak_value=None, extra={"iterations": 785, "us_per_iter": 60.0}),
        record("cg", "08_persistent", "default", 5000.0, unit="solves/s", library="Eigen CPU", library_value=8.0,
               peak=None, peak_value=None),
    ])


def texts(root):
    return [t.text or "" for t in root.iter(SVG + "text")]


def fixture_runs():
    return [plots.rj.load(os.path.join(FIXTURE_RESULTS, name))
            for name in ("NVIDIA_H100_80GB_HBM3.json", "NVIDIA_H200.json")]


def svg_of(track, runs):
    return ET.fromstring(plots.track_svg(track, runs))


def lines_of(root):
    """[(x1, x2, dasharray, title)] of every line with a title (the ceilings)."""
    out = []
    for line in root.iter(SVG + "line"):
        title = line.find(SVG + "title")
        if title is not None:
            out.append((float(line.get("x1")), float(line.get("x2")), line.get("stroke-dasharray"), title.text))
    return out


class PlotTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write_json(self, data, name="r.json"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            json.dump(data, f)  # NaN is written as the NaN literal, as a lenient writer would
        return path

    def run_main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = plots.main(list(args))
        return rc, out.getvalue(), err.getvalue()

    def test_one_well_formed_svg_per_track(self):
        out_dir = os.path.join(self.dir, "plots")
        files = [os.path.join(FIXTURE_RESULTS, n) for n in sorted(os.listdir(FIXTURE_RESULTS))]
        rc, out, _ = self.run_main(*files, "--out", out_dir)
        self.assertEqual(rc, 0)
        self.assertEqual(sorted(os.listdir(out_dir)), ["bandwidth.svg", "cg.svg", "sgemm.svg"])
        for name in os.listdir(out_dir):
            root = ET.parse(os.path.join(out_dir, name)).getroot()  # raises if not well-formed
            self.assertEqual(root.tag, SVG + "svg")
            self.assertIn(os.path.join(out_dir, name), out)

    def test_two_gpus_one_bar_each(self):
        root = svg_of("sgemm", fixture_runs())
        words = "\n".join(texts(root))
        self.assertIn("sgemm on NVIDIA H100 80GB HBM3 and NVIDIA H200", words)  # title: both GPUs
        self.assertIn("H100: NVIDIA H100 80GB HBM3 (CUDA 13.0 (driver 13.0), 2026-11-24)", words)  # legend
        self.assertIn("GFLOP/s", words)            # x axis: the unit
        for lesson in ("01_naive", "02_unified_memory", "05_shared_tiling", "08_cublas"):
            self.assertIn(lesson, words)
        self.assertIn("H100: tile=32", words)      # each GPU's own best variant when they differ
        self.assertIn("H200: tile=16", words)
        self.assertIn("naive 16x16", words)        # said once when they agree
        self.assertNotIn("H100: naive 16x16", words)
        self.assertIn("no record", words)          # 02 on the H100
        self.assertIn("n/a", words)                # 08 on the H200 has no value
        self.assertIn("9k  (18.0% cuBLAS)", words)  # 9000 / 50000, one decimal, and the yardstick's name
        bars = [r for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None]
        self.assertEqual(len(bars), 6)             # 01, 05, 08 on the H100; 01, 02, 05 on the H200
        colors = {r.get("fill") for r in bars}
        self.assertEqual(len(colors), 2)           # one colour per GPU

    def test_one_line_per_ceiling_and_gpu(self):
        root = svg_of("sgemm", fixture_runs())
        # A line is drawn over the rows it serves (the H100 has no 02: two pieces of one line).
        refs = sorted({(float(l.get("x1")), l.get("stroke-dasharray"), l.get("stroke"))
                       for l in root.iter(SVG + "line") if l.find(SVG + "title") is not None})
        # The H200's 02 names its library differently ("kernel only") at the same value: still one line.
        self.assertEqual(len(refs), 4)             # library and peak, for each GPU
        self.assertEqual(len([r for r in refs if r[1] == plots.LIBRARY_DASH]), 2)
        words = "\n".join(texts(root))
        self.assertEqual(words.count("library on H200"), 1)
        self.assertIn("library on H200: cublasSgemm FP32 (pedantic), 50k", words)
        self.assertIn("peak on H100: FP32 peak from clocks, 66.9k", words)
        self.assertNotIn("kernel only", words)

    def test_ceilings_that_differ_by_lesson_are_marks(self):
        root = svg_of("cg", fixture_runs())
        refs = lines_of(root)
        floors = [r for r in refs if "bandwidth floor" in r[3]]
        self.assertEqual(len(floors), 4)           # 01 and 08 on each GPU, one short mark each
        words = "\n".join(texts(root))
        self.assertIn("peak on H200 (one mark per lesson): bandwidth floor", words)
        self.assertIn("library on H200: Eigen CG, all host cores, 16", words)

    def test_cg_is_log_scale_with_factors(self):
        words = texts(svg_of("cg", fixture_runs()))
        self.assertIn("solves/s (log scale)", words)
        self.assertIn("430  (26.9x Eigen)", words)  # factors throughout, never 975% beside 27x
        self.assertIn("16  (1.00x Eigen)", words)
        self.assertFalse(any("00_launch_queue" in w for w in words))  # no record in solves/s: no row
        self.assertIn("the variant that teaches each lesson; size diffusion27 10x10x400; higher is better; "
                      "1 record(s) in other units not shown", words)

    def test_labels_stay_inside_the_chart(self):
        for track in ("sgemm", "bandwidth", "cg"):
            root = svg_of(track, fixture_runs())
            width = float(root.get("width"))
            for t in root.iter(SVG + "text"):
                x, n = float(t.get("x")), len(t.text or "") * plots.CHAR_WIDTH[10]
                anchor = t.get("text-anchor")
                left = x - n if anchor == "end" else x - n / 2 if anchor == "middle" else x
                right = x if anchor == "end" else x + n / 2 if anchor == "middle" else x + n
                if t.get("font-size") in ("9", "10", "11"):
                    self.assertGreaterEqual(left, 0, t.text)
                    self.assertLessEqual(right, width, t.text)

    def test_axis_title_is_below_the_tick_labels(self):
        root = svg_of("bandwidth", fixture_runs())
        texts_ = list(root.iter(SVG + "text"))
        title = next(t for t in texts_ if t.text == "GB/s")
        ticks = [t for t in texts_ if t.text in ("0", "1k", "2k", "3k", "4k", "5k")]
        self.assertTrue(ticks)
        self.assertGreater(float(title.get("y")), max(float(t.get("y")) for t in ticks) + 12)

    def test_long_ceiling_names_are_wrapped_not_cut(self):
        name = "bandwidth floor: compulsory bytes per iteration x iterations / measured D2D bandwidth, " \
               "read and written once per iteration by every phase of the solve"
        data = results([record("cg", "01_sample", "default", 20.0, unit="solves/s", library="Eigen", library_value=8.0,
                               peak=name, peak_value=600.0),
                        record("cg", "02_jacobi", "default", 30.0, unit="solves/s", library="Eigen", library_value=8.0,
                               peak=name, peak_value=1000.0)])
        words = texts(svg_of("cg", [data]))
        start = next(i for i, w in enumerate(words) if w.startswith("peak on H200"))
        self.assertEqual(" ".join(words[start:start + 2]), "peak on H200 (one mark per lesson): " + name)
        self.assertTrue(all(len(w) <= plots.LEGEND_CHARS for w in words))

    def test_every_bar_label_has_a_background(self):
        root = svg_of("bandwidth", fixture_runs())
        children = list(root)
        for k, el in enumerate(children):
            if el.tag == SVG + "text" and (el.text or "").endswith("memcpy)"):
                self.assertEqual(children[k - 1].tag, SVG + "rect", el.text)  # hides the lines behind it

    def test_a_historic_row_is_pale_and_marked(self):
        data = results([record("jor", "01_block_per_row", "restrict", 1000.0, unit="solves/s", size="8192 float",
                               library="CPU", library_value=30.0, peak="floor", peak_value=1400.0),
                        record("jor", "01_block_per_row", "min rule", 2700.0, unit="solves/s", size="8192 float",
                               library="CPU", library_value=30.0, peak="floor", peak_value=3800.0)])
        root = svg_of("jor", [data])
        words = texts(root)
        self.assertIn("historic stopping rule", words)
        self.assertIn("1k  (33.3x CPU)", words)
        bars = [r for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None]
        self.assertEqual([b.get("fill-opacity") for b in bars], [None, "0.45"])
        self.assertTrue(any(w.startswith("pale bars: a historic method") for w in words))

    def test_a_line_is_drawn_only_over_the_rows_it_is_the_yardstick_of(self):
        recs = [record("bandwidth", "01_transfers", "d2d", 3066.0, unit="GB/s", size="1",
                       library="the same transfer at its asymptote", library_value=3066.0, peak_value=None)]
        recs += [record("bandwidth", "0%d_kernel" % k, "v", 2800.0 + k, unit="GB/s", size="1",
                        library="cudaMemcpy D2D", library_value=3025.0 + k, peak_value=None) for k in range(2, 6)]
        root = svg_of("bandwidth", [results(recs)])
        library = [r for r in lines_of(root) if r[2] in (plots.LIBRARY_DASH, plots.mark_dash(plots.LIBRARY_DASH))]
        line = [r for r in library if r[3].startswith("cudaMemcpy D2D")]
        mark = [r for r in library if "asymptote" in r[3]]
        self.assertEqual(len(line), 1)
        self.assertEqual(len(mark), 1)
        self.assertNotEqual(line[0][0], mark[0][0])    # 01's bar ends at its own 100%, not at the others' line
        y = {float(el.get("y1")) for el in root.iter(SVG + "line") if (el.findtext(SVG + "title") or "") == line[0][3]}
        self.assertGreater(min(y), plots.TOP + 8)      # the line starts below row 01
        words = texts(root)
        self.assertIn("library on H200 (lessons 02-05): cudaMemcpy D2D, 3.03k", words)
        self.assertTrue(any(w.startswith("library on H200 (one mark per lesson; lesson 01): the same transfer")
                            for w in words))

    def test_labels_keep_clear_of_their_own_ceilings(self):
        """No label of a bar is crossed by a line or mark of its own GPU (another GPU's line may pass
        behind its opaque background); checked on every fixture chart and on the committed results."""
        runs = [fixture_runs()]
        committed = plots.rj.results_files(os.path.join(os.path.dirname(FIXTURE_RESULTS), "..", "..", "results"))
        if committed:
            runs.append([plots.rj.load(p) for p in committed])
        for rs in runs:
            for track in plots.rj.ordered_tracks(rs):
                root = svg_of(track, rs)
                children = list(root)
                bars = [(float(r.get("y")), plots.LINE_COLORS[plots.BAR_COLORS.index(r.get("fill"))])
                        for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None]
                ceilings = [(float(l.get("x1")), float(l.get("y1")), float(l.get("y2")), l.get("stroke"))
                            for l in root.iter(SVG + "line") if l.find(SVG + "title") is not None]
                for k, el in enumerate(children):
                    label = el.text or ""
                    if el.tag != SVG + "text" or not label.endswith(")") or "  (" not in label:
                        continue
                    y = float(el.get("y")) - 12
                    color = next(c for by, c in bars if abs(by - y) < 0.5)
                    n = len(label) * plots.CHAR_WIDTH[10]
                    x = float(el.get("x"))
                    left, right = (x - n, x) if el.get("text-anchor") == "end" else (x, x + n)
                    for cx, y1, y2, stroke in ceilings:
                        if stroke == color and y1 < y + plots.BAR and y2 > y:
                            self.assertFalse(left - 1 <= cx <= right + 1, (track, label, cx))

    def test_special_characters_are_escaped(self):
        data = results([record("bandwidth", "02_copy_kernels", "float4 <&> \"quoted\"", 3900.0, unit="GB/s")])
        self.assertIn('float4 <&> "quoted"', texts(svg_of("bandwidth", [data])))

    def test_log_axis_rule(self):
        self.assertTrue(plots.wants_log([1.0, 500.0]))                  # span past 100x
        self.assertTrue(plots.wants_log([16, 17, 20, 37, 48, 155, 149, 152, 432]))  # most bars flat
        self.assertFalse(plots.wants_log([5133, 1390, 5164, 7378, 8402, 11481, 22554, 51001]))
        self.assertFalse(plots.wants_log([806, 1017, 1505, 2653, 3336, 3484, 4023, 4112, 4128, 4046]))
        self.assertFalse(plots.wants_log([None, 3.0]))

    def test_all_missing_values_still_draw(self):
        data = results([record("reduction", "01_interleaved_divergent", "double", None, unit="GB/s",
                               library_value=None, peak_value=None),
                        record("reduction", "02_interleaved_strided", "double", float("inf"), unit="GB/s",
                               library_value=float("nan"), peak_value=None)])
        data["gpu"], data["date"] = None, None
        svg = plots.track_svg("reduction", [data])
        words = texts(ET.fromstring(svg))
        self.assertEqual(words.count("n/a"), 2)
        self.assertIn("reduction on unknown GPU", words)
        self.assertNotIn("nan", svg.lower().replace("unknown", ""))

    def test_other_units_are_left_out_and_said(self):
        data = results([record("bandwidth", "01_transfers", "D2D", 4000.0, unit="GB/s"),
                        record("bandwidth", "02_copy_kernels", "grid-stride", 3900.0, unit="GB/s"),
                        record("bandwidth", "01_transfers", "latency", 5.0, unit="us")])
        svg = plots.track_svg("bandwidth", [data])
        self.assertIn("1 record(s) in other units not shown", svg)
        self.assertNotIn("latency", svg)

    def test_output_is_deterministic(self):
        files = [os.path.join(FIXTURE_RESULTS, n) for n in sorted(os.listdir(FIXTURE_RESULTS))]
        a, b = os.path.join(self.dir, "a"), os.path.join(self.dir, "b")
        self.run_main(*files, "--out", a)
        self.run_main(*reversed(files), "--out", b)  # the order given does not matter
        for name in os.listdir(a):
            with open(os.path.join(a, name)) as fa, open(os.path.join(b, name)) as fb:
                self.assertEqual(fa.read(), fb.read())

    def test_bad_input(self):
        bad = os.path.join(self.dir, "bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        self.assertEqual(self.run_main(bad, "--out", self.dir)[0], 2)
        self.assertEqual(self.run_main(os.path.join(self.dir, "missing.json"), "--out", self.dir)[0], 2)
        self.assertEqual(self.run_main(self.write_json({"gpu": "x"}, "norecords.json"), "--out", self.dir)[0], 2)
        self.assertEqual(self.run_main(self.write_json(results([]), "empty.json"), "--out", self.dir)[0], 1)

    def test_ticks(self):
        self.assertEqual(plots.nice_ticks(9.0), [0, 2, 4, 6, 8, 10])
        ticks = plots.nice_ticks(72000.0)
        self.assertGreaterEqual(ticks[-1], 72000.0)
        self.assertTrue(all(math.isclose(b - a, ticks[1]) for a, b in zip(ticks, ticks[1:])))
        self.assertEqual(plots.log_ticks(8.0, 5250.0)[0], 1.0)
        self.assertEqual(plots.log_ticks(8.0, 5250.0)[-1], 10000.0)
        # The axis ends at the first tick past the data, not at the next power of ten.
        self.assertEqual(plots.log_ticks(15.4, 1105.0), [10, 20, 50, 100, 200, 500, 1000, 2000])


if __name__ == "__main__":
    unittest.main()
