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
        rc, out, _ = self.run_main(self.write_json(sample()), "--out", out_dir)
        self.assertEqual(rc, 0)
        self.assertEqual(sorted(os.listdir(out_dir)), ["bandwidth.svg", "cg.svg", "sgemm.svg"])
        for name in os.listdir(out_dir):
            root = ET.parse(os.path.join(out_dir, name)).getroot()  # raises if not well-formed
            self.assertEqual(root.tag, SVG + "svg")
            self.assertIn(os.path.join(out_dir, name), out)

    def test_labels(self):
        root = ET.fromstring(plots.track_svg("sgemm", plots.rj.by_track(sample()["records"])["sgemm"], sample()))
        words = "\n".join(texts(root))
        self.assertIn("NVIDIA H200", words)       # title: GPU and date
        self.assertIn("2026-11-21", words)
        self.assertIn("GFLOP/s", words)           # y axis: the unit
        self.assertIn("lesson (variant)", words)  # x axis
        for lesson in ("01_naive", "05_shared_tiling", "08_cublas"):
            self.assertIn(lesson, words)
        self.assertIn("tile=16", words)           # the best variant of 05, not the NaN one
        self.assertNotIn("tile=32", words)
        self.assertIn("n/a", words)               # 08_cublas has no value
        self.assertIn("cublasSgemm FP32 (pedantic): 50k", words)  # library line
        self.assertIn("FP32 peak from clocks: 66.9k", words)      # peak line
        self.assertIn("18% lib", words)           # 9000 / 50000
        self.assertEqual(len([r for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None]), 2)

    def test_special_characters_are_escaped(self):
        root = ET.fromstring(plots.track_svg("bandwidth", plots.rj.by_track(sample()["records"])["bandwidth"],
                                             sample()))
        self.assertIn('float4 <&> "quoted"', texts(root))

    def test_wide_range_uses_a_log_axis(self):
        lessons = plots.rj.by_track(sample()["records"])["cg"]
        root = ET.fromstring(plots.track_svg("cg", lessons, sample()))
        words = texts(root)
        self.assertIn("solves/s (log scale)", words)
        self.assertIn("625x lib", words)          # 5000 / 8: a factor, not 62500%
        self.assertFalse(any("peak" in w for w in words))  # no peak known: no peak line

    def test_long_reference_names_are_wrapped(self):
        name = "Eigen ConjugateGradient + DiagonalPreconditioner, OpenMP, all host cores"
        data = results([record("cg", "01_sample", "default", 20.0, unit="solves/s", library=name, library_value=8.0,
                               peak=None, peak_value=None)])
        words = texts(ET.fromstring(plots.track_svg("cg", plots.rj.by_track(data["records"])["cg"], data)))
        rows = [w for w in words if w.startswith("Eigen")]
        self.assertEqual(len(rows), 1)
        start = words.index(rows[0])
        label = " ".join(words[start:start + 3])
        self.assertEqual(label, name + ": 8")
        self.assertTrue(all(len(w) <= plots.LABEL_CHARS for w in words[start:start + 3]))

    def test_all_missing_values_still_draw(self):
        data = results([record("reduction", "01_interleaved_divergent", "double", None, unit="GB/s",
                               library_value=None, peak_value=None),
                        record("reduction", "02_interleaved_strided", "double", float("inf"), unit="GB/s",
                               library_value=float("nan"), peak_value=None)])
        data["gpu"], data["date"] = None, None
        svg = plots.track_svg("reduction", plots.rj.by_track(data["records"])["reduction"], data)
        words = texts(ET.fromstring(svg))
        self.assertEqual(words.count("n/a"), 2)
        self.assertIn("reduction: unknown GPU, undated", words)
        self.assertNotIn("nan", svg.lower().replace("unknown", ""))

    def test_other_units_are_left_out_and_said(self):
        data = results([record("bandwidth", "01_transfers", "D2D", 4000.0, unit="GB/s"),
                        record("bandwidth", "02_copy_kernels", "grid-stride", 3900.0, unit="GB/s"),
                        record("bandwidth", "01_transfers", "latency", 5.0, unit="us")])
        svg = plots.track_svg("bandwidth", plots.rj.by_track(data["records"])["bandwidth"], data)
        self.assertIn("1 record(s) in other units not shown", svg)
        self.assertNotIn("latency", svg)

    def test_output_is_deterministic(self):
        path = self.write_json(sample())
        a, b = os.path.join(self.dir, "a"), os.path.join(self.dir, "b")
        self.run_main(path, "--out", a)
        self.run_main(path, "--out", b)
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


if __name__ == "__main__":
    unittest.main()
