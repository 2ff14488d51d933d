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
        # Ratio columns are named by what they hold: the track's yardstick and ceiling.
        self.assertIn("| lesson | variant | size | H100 GFLOP/s | H100 % of cuBLAS | H100 % of peak "
                      "| H200 GFLOP/s | H200 % of cuBLAS | H200 % of peak |", block)
        self.assertIn("| 01_naive | naive 16x16 | 4096 | 4,800 | 9.8% | 7.2% | 5,000 | 10.0% | 7.5% |", block)
        # Each GPU's own best variant; the cell names both when they differ.
        self.assertIn("| 05_shared_tiling | H100: tile=32; H200: tile=16 | 4096 | 8,900 | 18.2% | 13.3% "
                      "| 9,000 | 18.0% | 13.5% |", block)
        self.assertNotIn("sweep", block)  # faster, but not measured beside the library
        # A lesson one GPU has no record of: an em dash in its columns.
        self.assertIn("| 02_unified_memory | managed | 4096 | \u2014 | \u2014 | \u2014 | 1,100 | 2.2% | 1.6% |", block)
        self.assertIn("| 08_cublas | cublasSgemm FP32 | 4096 | 48,900 | 99.8% | 73.1% | n/a | n/a | n/a |", block)
        # The reference names, once, with the lessons that use another.
        self.assertIn("% of cuBLAS: cublasSgemm FP32 (pedantic) (02_unified_memory: cublasSgemm FP32 (pedantic), "
                      "kernel only); % of peak: FP32 peak from clocks.", block)
        self.assertNotIn("| yardstick |", block)  # "kernel only" qualifies the same yardstick
        self.assertIn("| 03_gather_divmod | a\\|b | 1000x20000->10000 | 1,800 | 61.0% | 53.7% |", block)
        self.assertNotIn("nan", block.lower())

    def test_cg_factors_and_per_iteration(self):
        self.both()
        block = self.block()
        self.assertIn("| H100 solves/s | H100 x Eigen (CPU) | H100 % of bandwidth floor | H100 \u00b5s/iteration |",
                      block)
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
        self.assertIn("| lesson | variant | size | H200 GFLOP/s | H200 % of cuBLAS | H200 % of peak |", block)
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

    def test_a_historic_rule_stands_beside_the_lesson(self):
        rows = [record("jor", "01_block_per_row", "restrict", 1000.0, unit="solves/s", size="8192 float",
                       library="best OpenMP CPU version", library_value=30.0),
                record("jor", "01_block_per_row", "min rule", 2700.0, unit="solves/s", size="8192 float",
                       library="best OpenMP CPU version", library_value=30.0),
                record("jor", "02_warp_rows", "1 row per warp", 1100.0, unit="solves/s", size="8192 float",
                       library="best OpenMP CPU version", library_value=30.0)]
        lines = readme_table.track_table("jor", [results(rows)], ["H200"])
        table = "\n".join(lines)
        # The lesson's row is the variant that runs to the project's stopping rule, not the faster min rule...
        self.assertIn("| 01_block_per_row | restrict | 8192 float | 1,000 | 33.3x |", table)
        # ...which follows it in a row of its own, marked, and the caption says why.
        self.assertIn("| 01_block_per_row (historic stopping rule) | min rule | 8192 float | 2,700 | 90.0x |", table)
        self.assertLess(table.index("| 01_block_per_row |"), table.index("| 01_block_per_row (historic"))
        self.assertLess(table.index("(historic stopping rule)"), table.index("| 02_warp_rows |"))
        self.assertIn("The row marked historic is the 2015 report's stopping rule", lines[0])
        self.assertIn("| H200 x CPU |", table)  # speedups over the CPU are named as such

    def test_a_lesson_is_shown_by_its_teaching_variant_at_its_size(self):
        rows = [record("cg", "08_persistent", "resident", 430.0, unit="solves/s", size="10x10x400",
                       library="Eigen", library_value=17.0),
                record("cg", "09_streaming", "vectors=on-chip", 253.0, unit="solves/s", size="10x10x400",
                       library="Eigen", library_value=17.0),
                record("cg", "09_streaming", "vectors=on-chip", 24.5, unit="solves/s", size="128x128x128",
                       library=None, library_value=None),
                record("cg", "07_graph_while", "graph per iteration", 167.0, unit="solves/s", size="10x10x400",
                       library="Eigen", library_value=17.0),
                record("cg", "07_graph_while", "graph while", 153.0, unit="solves/s", size="10x10x400",
                       library="Eigen", library_value=17.0)]
        unit, progression = readme_table.progression_rows("cg", [results(rows)])
        self.assertEqual(unit, "solves/s")
        shown = {row.label: (row.records[0]["variant"], row.records[0]["size"]) for row in progression}
        self.assertEqual(shown["09_streaming (large problem)"], ("vectors=on-chip", "128x128x128"))
        self.assertEqual(shown["07_graph_while"], ("graph while", "10x10x400"))  # not the faster halfway point
        table = "\n".join(readme_table.track_table("cg", [results(rows)], ["H200"]))
        self.assertIn("| 09_streaming (large problem) | vectors=on-chip | 128x128x128 | 24.5 | n/a |", table)
        self.assertIn("09_streaming is shown at its large problem", table)

    def test_a_teaching_variant_not_measured_falls_back_to_the_fastest(self):
        rows = [record("reduction", "09_vectorized", "double", 3044.0, unit="GB/s"),
                record("reduction", "09_vectorized", "float4", 2936.0, unit="GB/s")]
        _, progression = readme_table.progression_rows("reduction", [results(rows)])
        self.assertEqual([row.records[0]["variant"] for row in progression], ["double"])

    def test_a_teaching_entry_of_a_lesson_without_records_adds_no_row(self):
        # A new lesson the tour has not measured yet: no row, no error, the others unchanged.
        rows = [record("jor", "01_block_per_row", "restrict", 1041.0, unit="solves/s")]
        readme_table.TEACHING[("jor", "99_unmeasured")] = {"variant": "v", "note": "n", "caption": "c"}
        try:
            unit, progression = readme_table.progression_rows("jor", [results(rows)])
            lines = readme_table.track_table("jor", [results(rows)], ["H200"])
        finally:
            del readme_table.TEACHING[("jor", "99_unmeasured")]
        self.assertEqual(unit, "solves/s")
        self.assertEqual([row.lesson for row in progression], ["01_block_per_row"])
        self.assertFalse(any("99_unmeasured" in line for line in lines))

    def test_records_of_a_lesson_no_longer_in_the_tree_are_left_out(self):
        lessons_root = os.path.join(self.dir, "lessons")
        os.makedirs(os.path.join(lessons_root, "jor", "01_block_per_row"))
        data = results([record("jor", "00_cpu_baseline", "scalar", 9.0, unit="solves/s"),
                        record("jor", "01_block_per_row", "restrict", 1041.0, unit="solves/s"),
                        record("jor", "07_renumbered", "mixed", 962.0, unit="solves/s"),
                        record("sgemm", "01_naive", "naive", 1.0)])  # a track without a folder: kept
        kept = readme_table.rj.without_retired(data, lessons_root)
        self.assertEqual([r["lesson"] for r in kept["records"]], ["00_cpu_baseline", "01_block_per_row", "01_naive"])
        self.assertEqual(len(data["records"]), 4)  # the input is not changed

    def test_the_committed_results_show_each_lessons_teaching_variant(self):
        runs = [r for _, r in readme_table.rj.load_all(readme_table.rj.results_files(
            os.path.join(readme_table.REPO_ROOT, "results")))]
        if not any(r.get("records") for r in runs):
            self.skipTest("no committed results")
        for (track, lesson), spec in readme_table.TEACHING.items():
            for row in readme_table.progression_rows(track, runs)[1]:
                if row.lesson == lesson and not row.historic:
                    for r in row.records:
                        if r is not None:
                            self.assertTrue(readme_table.matches(r, spec), (track, lesson, r.get("variant")))
        for (track, lesson), spec in readme_table.HISTORIC.items():
            rows = [row for row in readme_table.progression_rows(track, runs)[1] if row.lesson == lesson]
            self.assertEqual([row.historic for row in rows], [False, True], (track, lesson))
            self.assertFalse(any(r is not None and readme_table.matches(r, spec) for r in rows[0].records))

    def test_a_change_of_yardstick_has_a_column(self):
        rows = [record("sgemm", "14_tuning", "128x256x16", 47000.0),
                record("sgemm", "15_wmma", "wmma", 70000.0, library="cublasSgemm TF32 (tensor cores)",
                       library_value=372000.0, peak="TF32 tensor-core peak from clocks", peak_value=535000.0)]
        lines = readme_table.track_table("sgemm", [results(rows)], ["H200"])
        self.assertIn("| lesson | variant | size | yardstick | H200 GFLOP/s | H200 % of cuBLAS | H200 % of peak |",
                      lines)
        self.assertIn("| 14_tuning | 128x256x16 | 4096 | cublasSgemm FP32 | 47,000 | 94.0% | 70.3% |", lines)
        self.assertIn("| 15_wmma | wmma | 4096 | cublasSgemm TF32 | 70,000 | 18.8% | 13.1% |", lines)
        self.assertIn("(15_wmma: cublasSgemm TF32 (tensor cores))", lines[0])

    def test_yardstick_names(self):
        name = readme_table.yardstick_name
        self.assertEqual(name("cublasSgemm TF32 (tensor cores)"), "cublasSgemm TF32")
        self.assertEqual(name("cublasSgemm FP32 (pedantic), kernel only"), "cublasSgemm FP32")
        self.assertEqual(name("cudaMemcpy D2D, same bytes"), "cudaMemcpy D2D")
        self.assertEqual(name("best OpenMP CPU version (simd or openmp+simd, all host cores), A resident on the GPU"),
                         "best OpenMP CPU version")
        self.assertEqual(name("cub::DeviceReduce::Sum (double)"), "cub::DeviceReduce::Sum")

    def test_a_note_does_not_repeat_its_column_name(self):
        rows = [record("cg", "05_fusion", "fused", 147.0, unit="solves/s", library="Eigen", library_value=15.0,
                       peak="bandwidth floor: compulsory bytes / D2D bandwidth", peak_value=740.0)]
        caption = readme_table.track_table("cg", [results(rows)], ["H200"])[0]
        self.assertIn("% of bandwidth floor: compulsory bytes / D2D bandwidth.", caption)
        rows = [record("reduction", "10_cub", "cub", 3000.0, unit="GB/s", library="cub::DeviceReduce::Sum (double)")]
        caption = readme_table.track_table("reduction", [results(rows)], ["H200"])[0]
        self.assertIn("% of CUB: cub::DeviceReduce::Sum (double);", caption)  # "cub::" is not "CUB: " again

    def test_synthetic_record_helpers_still_work(self):
        data = results([record("sgemm", "01_naive", "v", 1.0)])
        lines = readme_table.track_table("sgemm", [data], ["H200"])
        self.assertIn("| 01_naive | v | 4096 | 1.00 | 0.0% | 0.0% |", lines)


if __name__ == "__main__":
    unittest.main()
