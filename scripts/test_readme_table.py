"""Tests of scripts/readme_table.py on the two-GPU fixture (scripts/testdata/results) and small
synthetic READMEs (no GPU needed).

Run: python3 -m unittest discover -s scripts -p "test_*.py"
"""
import io
import json
import os
import shutil
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import readme_table
from test_plots import FIXTURE_RESULTS, record, results

README = """# A tutorial

Intro text | with a pipe.

## Results

<!-- results:begin -->
stale text that must go
<!-- results:end -->

## Profiling

Text after the block stays.
"""


class ReadmeTableTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.results_dir = os.path.join(self.dir, "results")
        shutil.copytree(FIXTURE_RESULTS, self.results_dir)
        self.h100 = os.path.join(self.results_dir, "NVIDIA_H100_80GB_HBM3.json")
        self.h200 = os.path.join(self.results_dir, "NVIDIA_H200.json")
        self.plots = os.path.join(self.dir, "docs", "plots")
        os.makedirs(self.plots)
        self.readme = os.path.join(self.dir, "README.md")
        with open(self.readme, "w") as f:
            f.write(README)

    def tearDown(self):
        self.tmp.cleanup()

    def read(self):
        with open(self.readme) as f:
            return f.read()

    def run_main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = readme_table.main(list(args) + ["--readme", self.readme, "--plots", self.plots])
        return rc, out.getvalue() + err.getvalue()

    def both(self, *extra):
        return self.run_main(self.h200, self.h100, *extra)  # given out of order on purpose

    def block(self):
        text = self.read()
        return text[text.index(readme_table.BEGIN):text.index(readme_table.END)]

    def test_replaces_only_the_block_and_is_idempotent(self):
        self.assertEqual(self.both()[0], 0)
        first = self.read()
        self.assertNotIn("stale text", first)
        head, tail = README.split(readme_table.BEGIN)[0], README.split(readme_table.END)[1]
        self.assertTrue(first.startswith(head + readme_table.BEGIN + "\n"))
        self.assertTrue(first.endswith("\n\n" + readme_table.END + tail))
        self.assertEqual(self.both()[0], 0)
        self.assertEqual(self.read(), first)

    def test_check_mode(self):
        rc, message = self.both("--check")
        self.assertEqual(rc, 1)
        self.assertIn("stale", message)
        self.assertEqual(self.read(), README)  # --check writes nothing
        self.both()
        self.assertEqual(self.both("--check")[0], 0)
        with open(self.h200) as f:
            data = json.load(f)
        data["records"][0]["value"] = 4100.0  # a new tour: the table is stale again
        with open(self.h200, "w") as f:
            json.dump(data, f)
        self.assertEqual(self.both("--check")[0], 1)

    def test_two_gpus_side_by_side(self):
        self.both()
        block = self.block()
        # Files are read in the order of their names, whatever the order given.
        self.assertIn("from results/NVIDIA_H100_80GB_HBM3.json, results/NVIDIA_H200.json", block)
        self.assertIn("- **H100**: NVIDIA H100 80GB HBM3, CUDA 13.0 (driver 13.0), 2026-11-24 (FP32 peak 66,908 "
                      "GFLOP/s, DRAM peak 3,352 GB/s, measured D2D copy 2,950 GB/s, 132 SMs).", block)
        self.assertIn("- **H200**: NVIDIA H200, CUDA 13.0", block)
        self.assertLess(block.index("**H100**"), block.index("**H200**"))
        self.assertIn("| lesson | variant | size | H100 GFLOP/s | H100 % of library | H100 % of peak "
                      "| H200 GFLOP/s | H200 % of library | H200 % of peak |", block)
        self.assertIn("| 01_naive | naive 16x16 | 4096 | 4,800 | 9.8% | 7.2% | 5,000 | 10.0% | 7.5% |", block)
        # Each GPU's own best variant; the cell names both when they differ.
        self.assertIn("| 05_shared_tiling | H100: tile=32; H200: tile=16 | 4096 | 8,900 | 18.2% | 13.3% "
                      "| 9,000 | 18.0% | 13.5% |", block)
        self.assertNotIn("sweep", block)  # faster, but not measured beside the library
        # A lesson one GPU has no record of: an em dash in its columns.
        self.assertIn("| 02_unified_memory | managed | 4096 | \u2014 | \u2014 | \u2014 | 1,100 | 2.2% | 1.6% |", block)
        self.assertIn("| 08_cublas | cublasSgemm FP32 | 4096 | 48,900 | 99.8% | 73.1% | n/a | n/a | n/a |", block)
        # The reference names, once, with the lessons that use another.
        self.assertIn("% of library: cublasSgemm FP32 (pedantic) (02_unified_memory: cublasSgemm FP32 (pedantic), "
                      "kernel only); % of peak: FP32 peak from clocks.", block)
        self.assertIn("| 03_gather_divmod | a\\|b | 1000x20000->10000 | 1,800 | 61.0% | 53.7% |", block)
        self.assertNotIn("nan", block.lower())

    def test_cg_factors_and_per_iteration(self):
        self.both()
        block = self.block()
        self.assertIn("| H100 solves/s | H100 % of library | H100 % of peak | H100 \u00b5s/iteration |", block)
        # One format per column: factors throughout when any ratio passes 10x (never '975%' beside '27x').
        self.assertIn("| 01_sample | cuBLAS+cuSPARSE | diffusion27 10x10x400 | 12.0 | 0.80x | 2.7% | 100 "
                      "| 16.0 | 1.00x | 2.6% | 75.7 |", block)
        self.assertIn("| 08_persistent | persistent | diffusion27 10x10x400 | 310 | 20.7x | 40.8% | 7.10 "
                      "| 430 | 26.9x | 40.6% | 5.09 |", block)
        self.assertNotIn("00_launch_queue", block)  # no record in the track's unit: not a step

    def test_tracks_keep_the_tour_order_and_plots_are_linked(self):
        for track in ("sgemm", "cg"):
            with open(os.path.join(self.plots, track + ".svg"), "w") as f:
                f.write("<svg/>")
        self.both()
        block = self.block()
        self.assertLess(block.index("**sgemm**"), block.index("**bandwidth**"))
        self.assertLess(block.index("**bandwidth**"), block.index("**cg**"))
        self.assertIn("](docs/plots/sgemm.svg)", block)
        self.assertIn("](docs/plots/cg.svg)", block)
        self.assertNotIn("bandwidth.svg", block)  # no plot drawn: no link

    def test_one_gpu(self):
        self.run_main(self.h200)
        block = self.block()
        self.assertNotIn("H100", block)
        self.assertIn("| lesson | variant | size | H200 GFLOP/s | H200 % of library | H200 % of peak |", block)
        self.assertIn("| 05_shared_tiling | tile=16 | 4096 | 9,000 | 18.0% | 13.5% |", block)

    def test_default_is_every_results_file(self):
        rc, _ = self.run_main()
        self.assertEqual(rc, 0)  # the repository's own results/: whatever is committed there
        self.assertIn("Measured by the tour on:", self.block())

    def test_empty_results(self):
        empty = os.path.join(self.dir, "empty.json")
        data = results([])
        data["cuda"] = None
        with open(empty, "w") as f:
            json.dump(data, f)
        self.assertEqual(self.run_main(empty)[0], 0)
        self.assertIn("No results recorded.", self.block())

    def test_missing_markers_and_bad_files(self):
        with open(self.readme, "w") as f:
            f.write("# no markers here\n")
        rc, message = self.both()
        self.assertEqual(rc, 2)
        self.assertIn("results:begin", message)
        with open(self.readme, "w") as f:
            f.write(readme_table.BEGIN + "\nno end\n")
        self.assertEqual(self.both()[0], 2)
        with open(self.readme, "w") as f:
            f.write(README + README)
        self.assertEqual(self.both()[0], 2)
        self.assertEqual(self.run_main(os.path.join(self.dir, "missing.json"))[0], 2)
        bad = os.path.join(self.dir, "bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        rc, message = self.run_main(self.h200, bad)
        self.assertEqual(rc, 2)
        self.assertIn("bad.json", message)

    def test_short_gpu_names(self):
        names = readme_table.rj.short_gpu_names
        self.assertEqual(names(["NVIDIA H100 80GB HBM3", "NVIDIA H200"]), ["H100", "H200"])
        self.assertEqual(names(["NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe"]), ["H100 80GB HBM3", "H100 PCIe"])
        self.assertEqual(names([None]), ["GPU"])

    def test_lessons_of_several_files_keep_the_tour_order(self):
        merge = readme_table.rj.merge_orders
        self.assertEqual(merge([["01", "05", "08"], ["01", "02", "05", "08"]]), ["01", "02", "05", "08"])
        self.assertEqual(merge([["01", "02"], ["00", "01"]]), ["00", "01", "02"])
        self.assertEqual(merge([["a", "c"], ["b", "c", "d"], ["x"]]), ["a", "b", "c", "d", "x"])

    def test_synthetic_record_helpers_still_work(self):
        data = results([record("sgemm", "01_naive", "v", 1.0)])
        lines = readme_table.track_table("sgemm", [data], ["H200"])
        self.assertIn("| 01_naive | v | 4096 | 1.00 | 0.0% | 0.0% |", lines)


if __name__ == "__main__":
    unittest.main()
