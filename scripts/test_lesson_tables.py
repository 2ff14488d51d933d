"""Tests of scripts/lesson_tables.py on a small tree made from the fixtures in scripts/testdata
(two fake GPU files and a historic file), and the real tree's --check (no GPU needed).

Run: python3 -m unittest discover -s scripts -p "test_*.py"
"""
import io
import json
import os
import shutil
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import lesson_tables
import results_json

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.join(HERE, "testdata")

TILING = """# SGEMM 05: shared-memory tiling {#sgemm_05}

## Prediction

Some text.

## Measured

<!-- measured:begin -->
stale text that must go
<!-- measured:end -->

## Profiler

Text after the block stays.
"""

PERSISTENT = """# CG 08

<!-- measured:begin extra="us_per_iter,iterations" -->
<!-- measured:end -->
"""


class LessonTablesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        shutil.copytree(os.path.join(TESTDATA, "results"), os.path.join(self.root, "results"))
        os.makedirs(os.path.join(self.root, "docs", "historic"))
        shutil.copy(os.path.join(TESTDATA, "historic", "sgemm.json"), os.path.join(self.root, "docs", "historic"))
        self.tiling = self.write("lessons/sgemm/05_shared_tiling/README.md", TILING)
        self.naive = self.write("lessons/sgemm/01_naive/README.md", "# SGEMM 01\n\nNo markers here.\n")
        self.persistent = self.write("lessons/cg/08_persistent/README.md", PERSISTENT)
        self.unified = self.write("lessons/sgemm/02_unified_memory/README.md",
                                  "# 02\n\n<!-- measured:begin -->\n<!-- measured:end -->\n")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def read(self, path):
        with open(path) as f:
            return f.read()

    def run_main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = lesson_tables.main(["--root", self.root] + list(args))
        return rc, out.getvalue() + err.getvalue()

    def block(self, path):
        text = self.read(path)
        return text[text.index("<!-- measured:begin"):text.index(lesson_tables.END)]

    def test_fills_only_the_block_and_is_idempotent(self):
        self.assertEqual(self.run_main()[0], 0)
        first = self.read(self.tiling)
        self.assertNotIn("stale text", first)
        head, tail = TILING.split("<!-- measured:begin -->")[0], TILING.split(lesson_tables.END)[1]
        self.assertTrue(first.startswith(head + "<!-- measured:begin -->\n"))
        self.assertTrue(first.endswith("\n\n" + lesson_tables.END + tail))
        self.assertEqual(self.read(self.naive), "# SGEMM 01\n\nNo markers here.\n")  # no markers: untouched
        rc, message = self.run_main()
        self.assertEqual(rc, 0)
        self.assertIn("already current", message)
        self.assertEqual(self.read(self.tiling), first)

    def test_check_names_every_stale_readme(self):
        rc, message = self.run_main("--check")
        self.assertEqual(rc, 1)
        for rel in ("lessons/sgemm/05_shared_tiling/README.md", "lessons/cg/08_persistent/README.md",
                    "lessons/sgemm/02_unified_memory/README.md"):
            self.assertIn(rel + ": the measured table is stale", message)
        self.assertNotIn("01_naive", message)
        self.assertEqual(self.read(self.tiling), TILING)  # --check writes nothing
        self.run_main()
        self.assertEqual(self.run_main("--check")[0], 0)
        path = os.path.join(self.root, "results", "NVIDIA_H200.json")
        with open(path) as f:
            data = json.load(f)
        data["records"][4]["value"] = 9100.0  # a new tour of lesson 05 on the H200
        with open(path, "w") as f:
            json.dump(data, f)
        rc, message = self.run_main("--check")
        self.assertEqual(rc, 1)
        self.assertIn("05_shared_tiling", message)
        self.assertNotIn("08_persistent", message)

    def test_two_gpus_side_by_side(self):
        self.run_main()
        block = self.block(self.tiling)
        self.assertIn("from results/NVIDIA_H100_80GB_HBM3.json, results/NVIDIA_H200.json, "
                      "docs/historic/sgemm.json; do not edit by hand", block)
        self.assertIn("- **H100**: NVIDIA H100 80GB HBM3, CUDA 13.0 (driver 13.0), 2026-11-24 (FP32 peak", block)
        self.assertIn("- **H200**: NVIDIA H200, CUDA 13.0 (driver 13.0), 2026-11-22 (FP32 peak 66,908 GFLOP/s, "
                      "DRAM peak 4,814 GB/s, measured D2D copy 4,209 GB/s, 132 SMs).", block)
        self.assertIn("| variant | size | H100 | H100 % of cuBLAS | H100 % of peak | H200 | H200 % of cuBLAS "
                      "| H200 % of peak |", block)
        # Every record, in the tour's order, value with its unit.
        self.assertIn("| tile=8 | 4096 | 6,100 GFLOP/s | 12.4% | 9.1% | 6,000 GFLOP/s | 12.0% | 9.0% |", block)
        self.assertIn("| tile=32 | 4096 | 8,900 GFLOP/s | 18.2% | 13.3% | n/a | n/a | n/a |", block)
        # A record the H100 does not have: em dashes in its columns.
        self.assertIn("| sweep without a baseline | 4096 | \u2014 | \u2014 | \u2014 | 9,900 GFLOP/s | n/a | 14.8% |",
                      block)
        self.assertLess(block.index("| tile=8 "), block.index("| tile=16 "))
        self.assertIn("% of cuBLAS: cublasSgemm FP32 (pedantic), measured in the same run; "
                      "% of peak: FP32 peak from clocks.", block)

    def test_historic_tables(self):
        self.run_main()
        block = self.block(self.tiling)
        self.assertIn('**Historic:** Shared-memory tiling, N = 1024, single precision. Source: Course slides "CUDA 4" '
                      '(SGEMM continued).', block)
        self.assertIn("| tile | Tesla C2070 | Tesla K40 | GTX Titan X |\n|---|---|---|---|\n"
                      "| 8x8 | 20.0 ms, 100 GFLOP/s (10% of peak) |", block)
        self.assertIn("Source: [V. Volkov and J. Demmel, Benchmarking GPUs to tune dense linear algebra (SC08)]"
                      "(https://example.org/volkov-sc08).", block)
        self.assertIn("**Historic:** A made-up second table with a | pipe. Source: [V. Volkov", block)
        self.assertIn("| 1 |  |", block)
        self.assertLess(block.index("| tile=8 "), block.index("**Historic:**"))  # after the measured table
        self.assertNotIn("Historic", self.block(self.persistent))  # no cg.json

    def test_mixed_units_and_reference_columns(self):
        self.run_main()
        block = self.block(self.unified)
        # Two records in different units with different libraries: the library gets a column,
        # and its header says "library", not the track's cuBLAS, which one row is not held against.
        self.assertIn("| variant | size | library | H100 | H100 % of library | H100 % of peak | H200 |", block)
        self.assertIn("| managed | 4096 | cublasSgemm FP32 (pedantic), kernel only | \u2014 | \u2014 | \u2014 "
                      "| 1,100 GFLOP/s | 2.2% | 1.6% |", block)
        self.assertIn("| cudaMemcpy host to device, pinned | 4096 | cudaMemcpy host to device, pinned | \u2014 "
                      "| \u2014 | \u2014 | 55.0 GB/s | 100.0% | n/a |", block)

    def test_extra_columns(self):
        self.run_main()
        block = self.block(self.persistent)
        self.assertTrue(self.read(self.persistent).startswith(
            '# CG 08\n\n<!-- measured:begin extra="us_per_iter,iterations" -->\n'))
        self.assertIn("| H100 | H100 x Eigen (CPU) | H100 % of bandwidth floor | H100 \u00b5s/iteration | H100 iterations "
                      "| H200 |", block)
        self.assertIn("| persistent | diffusion27 10x10x400 | 310 solves/s | 20.7x | 40.8% | 7.10 | 455 "
                      "| 430 solves/s | 26.9x | 40.6% | 5.09 | 455 |", block)
        self.assertIn("% of bandwidth floor: bandwidth floor", block)

    def test_negative_comm_is_explained_under_the_table(self):
        def results(comm):
            return {"gpu": "NVIDIA H100 80GB HBM3", "records": [
                {"track": "multigpu", "lesson": "04_cg", "variant": "halo", "size": "weak", "value": 1.0, "unit": "GB/s",
                 "extra": {"compute_us_per_iter": 100.0, "comm_us_per_iter": comm}}]}
        extras = ["compute_us_per_iter", "comm_us_per_iter"]
        lines = lesson_tables.measured_lines("multigpu", "04_cg", [results(-2.5)], ["H100"], extras)
        self.assertIn("H100 comm \u00b5s/iteration", lines[0])
        self.assertIn(lesson_tables.NEGATIVE_COMM_NOTE, lines[-1])
        lines = lesson_tables.measured_lines("multigpu", "04_cg", [results(12.0)], ["H100"], extras)
        self.assertNotIn(lesson_tables.NEGATIVE_COMM_NOTE, "\n".join(lines))

    def test_multigpu_one_table_per_gpu_count(self):
        readme = self.write("lessons/multigpu/02_allreduce/README.md",
                            '<!-- measured:begin extra="algbw_gbs" -->\n<!-- measured:end -->\n')
        mg = os.path.join(self.root, "results", "multigpu")
        os.makedirs(mg)
        for g, value in ((2, 300.0), (4, 350.0)):
            with open(os.path.join(mg, "NVIDIA_H100_80GB_HBM3-x%d.json" % g), "w") as f:
                json.dump({"gpu": "NVIDIA H100 80GB HBM3", "cuda": "13.0", "date": "2030-01-01", "gpus": g,
                           "records": [{"track": "multigpu", "lesson": "02_allreduce", "variant": "ring",
                                        "size": "268435456", "value": value, "unit": "GB/s", "library_value": 330.0,
                                        "library": "ncclAllReduce", "extra": {"algbw_gbs": value / 1.5}}]}, f)
        rc, out = self.run_main()
        self.assertEqual(rc, 0, out)
        block = self.block(readme)
        self.assertLess(block.index("**On 2 GPUs**"), block.index("**On 4 GPUs**"))
        self.assertIn("| ring | 268435456 | 300 GB/s | 90.9% | 200 |", block)
        self.assertIn("| ring | 268435456 | 350 GB/s | 106.1% | 233 |", block)
        self.assertNotIn("sgemm", block)
        rc, out = self.run_main("--check")
        self.assertEqual(rc, 0, out)

    def test_multigpu_without_results(self):
        readme = self.write("lessons/multigpu/03_jor/README.md", "<!-- measured:begin -->\n<!-- measured:end -->\n")
        self.run_main()
        self.assertIn("No results recorded yet.", self.block(readme))

    def test_no_records_and_one_gpu(self):
        readme = self.write("lessons/sgemm/09_new/README.md", "<!-- measured:begin -->\n<!-- measured:end -->\n")
        self.run_main("--results", os.path.join(self.root, "results", "NVIDIA_H200.json"))
        self.assertIn("No tour record of this lesson yet.", self.block(readme))
        block = self.block(self.tiling)
        self.assertNotIn("H100", block)
        self.assertIn("| variant | size | H200 | H200 % of cuBLAS | H200 % of peak |", block)
        # The columns are named by the track's yardstick and ceiling, and so is the note under the table.
        self.assertIn("% of cuBLAS: cublasSgemm FP32 (pedantic), measured in the same run", block)

    def test_bad_markers(self):
        for text, words in (("<!-- measured:begin -->\n", "found 1 and 0"),
                            ("<!-- measured:end -->\n<!-- measured:begin -->\n", "comes before"),
                            ("<!-- measured:begin -->\n<!-- measured:end -->\n" * 2, "found 2 and 2"),
                            ("<!-- measured:begin extra=us_per_iter -->\n<!-- measured:end -->\n", "extra=")):
            self.write("lessons/sgemm/05_shared_tiling/README.md", text)
            rc, message = self.run_main()
            self.assertEqual(rc, 2, text)
            self.assertIn("05_shared_tiling/README.md", message)
            self.assertIn(words, message)

    def test_historic_format_is_checked(self):
        path = os.path.join(self.root, "docs", "historic", "sgemm.json")
        with open(path) as f:
            good = json.load(f)
        cases = [
            (lambda d: d.pop("sources"), "top level: missing 'sources'"),
            (lambda d: d["sources"]["slides"].pop("url"), "sources.slides: missing 'url'"),
            (lambda d: d["sources"]["slides"].update(title=""), "sources.slides.title: expected a non-empty string"),
            (lambda d: d["lessons"]["05_shared_tiling"][0].update(source="paper"),
             "lessons.05_shared_tiling[0].source: 'paper' is not one of the sources"),
            (lambda d: d["lessons"]["05_shared_tiling"][0]["rows"][1].pop(),
             "lessons.05_shared_tiling[0].rows[1]: expected a list of 4 strings"),
            (lambda d: d["lessons"]["05_shared_tiling"][0]["rows"][0].__setitem__(1, 20.0),
             "lessons.05_shared_tiling[0].rows[0][1]: expected a string"),
            (lambda d: d["lessons"]["05_shared_tiling"][0].update(note="x"),
             "lessons.05_shared_tiling[0]: unknown key(s) 'note'"),
            (lambda d: d["lessons"].update({"5_tiling": d["lessons"]["05_shared_tiling"]}),
             "lessons.5_tiling: a lesson is named NN_name"),
            (lambda d: d["lessons"].update({"07_volkov_ilp": d["lessons"]["05_shared_tiling"]}),
             "lessons.07_volkov_ilp: no lesson folder"),
        ]
        for change, words in cases:
            data = json.loads(json.dumps(good))
            change(data)
            with open(path, "w") as f:
                json.dump(data, f)
            rc, message = self.run_main("--check")
            self.assertEqual(rc, 2, words)
            self.assertIn("docs/historic/sgemm.json: " + words, message)
        with open(path, "w") as f:
            f.write("{")
        rc, message = self.run_main()
        self.assertEqual(rc, 2)
        self.assertIn("sgemm.json: not valid JSON", message)

    def test_a_track_program_that_is_not_a_lesson_needs_no_folder(self):
        path = os.path.join(self.root, "docs", "historic", "sgemm.json")
        with open(path) as f:
            data = json.load(f)
        data["lessons"]["00_cpu_baseline"] = data["lessons"]["05_shared_tiling"]
        with open(path, "w") as f:
            json.dump(data, f)
        rc, message = self.run_main()
        self.assertEqual(rc, 0, message)

    def test_unused_historic_tables_are_noted(self):
        self.write("lessons/sgemm/05_shared_tiling/README.md", "# no block\n")
        rc, message = self.run_main()
        self.assertEqual(rc, 0)
        self.assertIn("has tables for 05_shared_tiling, whose README has no measured block", message)


class RenumberedLessonsTest(unittest.TestCase):
    """Results measured before a renumbering: records of a renamed lesson are read under its new
    name, those of a lesson that no longer exists are left out, and a lesson without records
    says so."""

    def setUp(self):
        self.saved = dict(results_json.RENUMBERED)
        results_json.RENUMBERED.clear()
        results_json.RENUMBERED.update({("t", "02_old"): "03_old", ("t", "05_gone"): None})

    def tearDown(self):
        results_json.RENUMBERED.clear()
        results_json.RENUMBERED.update(self.saved)

    def test_stale_names(self):
        recs = [{"track": "t", "lesson": "02_old", "variant": "v", "size": "1", "value": 1.0},
                {"track": "t", "lesson": "05_gone", "variant": "v", "size": "1", "value": 2.0},
                {"track": "other", "lesson": "02_old", "variant": "v", "size": "1", "value": 3.0}]
        tracks = results_json.by_track(recs)
        self.assertEqual(list(tracks["t"]), ["03_old"])
        self.assertEqual(list(tracks["other"]), ["02_old"])
        results = {"gpu": "G", "records": recs}
        self.assertEqual(list(lesson_tables.lesson_records(results, "t", "03_old")), [("v", "1")])
        self.assertEqual(lesson_tables.lesson_records(results, "t", "05_gone"), {})
        self.assertEqual(lesson_tables.measured_lines("t", "04_new", [results], ["G"], []),
                         ["No tour record of this lesson yet."])


if __name__ == "__main__":
    unittest.main()
