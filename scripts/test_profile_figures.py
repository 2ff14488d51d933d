"""Tests of scripts/profile_figures.py: the parsers on ncu output (scripts/testdata/ncu), the
profile files, and the README blocks on a small made-up tree (no GPU, no ncu needed).

Run: python3 -m unittest discover -s scripts -p "test_*.py"
"""
import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import profile_figures as pf

HERE = os.path.dirname(os.path.abspath(__file__))
NCU = os.path.join(HERE, "testdata", "ncu")


def read(name):
    with open(os.path.join(NCU, name), encoding="utf-8") as f:
        return f.read()


class Units(unittest.TestCase):
    def test_base_units(self):
        self.assertEqual(pf.to_base(3.28, "ms"), (3280000.0, "ns"))
        self.assertEqual(pf.to_base(344.29, "us"), (344290.0, "ns"))
        self.assertEqual(pf.to_base(677220, "nsecond"), (677220, "ns"))
        self.assertEqual(pf.to_base(1.5, "Kbyte/block"), (1500.0, "byte/block"))
        self.assertEqual(pf.to_base(3.22, "Gbyte"), (3.22e9, "byte"))
        self.assertEqual(pf.to_base(1.68, "Ghz"), (1.68e9, "hz"))
        self.assertEqual(pf.to_base(1.68, "cycle/nsecond"), (1.68e9, "hz"))
        self.assertEqual(pf.to_base(2, "Tbyte/second"), (2e12, "byte/s"))
        self.assertEqual(pf.to_base(45.7, "%"), (45.7, "%"))
        self.assertEqual(pf.to_base(128, "register/thread"), (128, "register/thread"))
        self.assertEqual(pf.number("2,034,361.55"), 2034361.55)
        self.assertIsNone(pf.number("n/a"))


class ParseText(unittest.TestCase):
    def test_raw_counters_under_a_lesson_line(self):
        results = pf.parse_text(read("sgemm-09-13-excerpt.log"))
        self.assertEqual(len(results), 1)
        r = results[0]
        self.assertEqual((r["lesson"], r["variant"], r["kernel"]), ("11_double_buffering", "2 buffers", None))
        self.assertEqual(r["metrics"]["gpu__time_duration.sum"], 3280000)
        self.assertEqual(r["units"]["gpu__time_duration.sum"], "ns")
        self.assertEqual(r["metrics"]["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"], 28514)
        self.assertEqual(r["metrics"]["launch__registers_per_thread"], 127)
        self.assertEqual(r["units"]["launch__registers_per_thread"], "register/thread")
        self.assertEqual(r["metrics"]["sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"], 65.54)
        self.assertEqual(r["metrics"]["smsp__issue_active.avg.per_cycle_active"], 0.78)

    def test_details_page_with_two_kernels_of_one_variant(self):
        results = pf.parse_text(read("sgemm-14-16-excerpt.log"))
        self.assertEqual([(r["lesson"], r["variant"], pf.short_kernel(r["kernel"])) for r in results],
                         [("16_wgmma", "wgmma 128x256x32 4 stages", "transpose_round_tf32"),
                          ("16_wgmma", "wgmma 128x256x32 4 stages", "sgemm_wgmma")])
        transpose, gemm = results
        self.assertEqual(transpose["metrics"]["gpu__time_duration.sum"], 45020)
        self.assertEqual(gemm["metrics"]["gpu__time_duration.sum"], 350750)
        self.assertEqual(gemm["metrics"]["smsp__inst_executed.sum"], 40809487)
        self.assertEqual(gemm["metrics"]["launch__grid_size"], 512)
        self.assertEqual(gemm["metrics"]["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"],
                         91.09)
        self.assertNotIn("Metric", " ".join(gemm["metrics"]))  # the table's heading is no metric

    def test_ncu_version_and_kernel_names(self):
        self.assertEqual(pf.ncu_version("NVIDIA (R) Nsight Compute Command Line Profiler\n"
                                        "Version 2025.3.1.0 (build 36398880) (public-release)"), "2025.3.1")
        self.assertEqual(pf.ncu_version("# 2026-11-24, NVIDIA H200, 580.159.04, ncu 2025.3.1, commit f3291b1"),
                         "2025.3.1")
        self.assertEqual(pf.short_kernel("void <unnamed>::sgemm_mma<2, 1>(int, const float *, float *)"),
                         "sgemm_mma<2, 1>")
        self.assertEqual(pf.short_kernel("void (anonymous namespace)::k<(int)4>(float *)"), "k<(int)4>")
        self.assertEqual(pf.short_kernel("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_kernel"),
                         "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_kernel")


class ParseCsv(unittest.TestCase):
    def test_raw_page_with_nvtx_names(self):
        results = pf.with_variants(pf.parse_csv_raw(read("sgemm-15-raw.csv")), pf.parse_csv_raw(read("sgemm-15-nvtx.csv")))
        self.assertEqual([(r["variant"], pf.short_kernel(r["kernel"])) for r in results],
                         [("mma.sync 2 stages", "sgemm_mma<2, 1>"), ("mma.sync 4 stages", "sgemm_mma<4, 1>")])
        self.assertEqual(results[0]["metrics"]["gpu__time_duration.sum"], 677220)
        self.assertEqual(results[0]["units"]["gpu__time_duration.sum"], "ns")
        self.assertEqual(results[1]["metrics"]["smsp__inst_executed.sum"], 197804032)
        self.assertEqual(results[1]["metrics"]["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"], 0)
        self.assertNotIn("Block Size", results[0]["metrics"])

    def test_nvtx_range_of_a_renamed_result(self):
        # ncu writes '<range>/<signature>'; the range itself may hold spaces and commas.
        self.assertEqual(pf.nvtx_range_of("double/void <unnamed>::reduce<double>(const T1 *, unsigned long)"), "double")
        self.assertEqual(pf.nvtx_range_of("float, one allgather/jor_sweep(int)"), "float, one allgather")
        self.assertEqual(pf.nvtx_range_of("plain range"), "plain range")

    def test_no_csv_and_no_range(self):
        self.assertEqual(pf.parse_csv_raw("==PROF== Connected\n==ERROR== ERR_NVGPUCTRPERM\n"), [])
        raw = pf.parse_csv_raw(read("sgemm-15-raw.csv"))
        self.assertIsNone(pf.with_variants(raw, pf.parse_csv_raw(read("sgemm-15-raw.csv")))[0]["variant"])


class Figures(unittest.TestCase):
    def test_expressions_and_formats(self):
        m = {"a__w.sum": 402681698, "b__l.sum": 134217728, "f__f.sum": 68719476736, "i__i.sum": 2585616384}
        self.assertAlmostEqual(pf.value_of("a__w.sum/b__l.sum", m), 3.0002, places=4)
        self.assertAlmostEqual(pf.value_of("f__f.sum/32/i__i.sum", m), 0.8305, places=4)
        self.assertAlmostEqual(pf.value_of("a__w.sum*32/f__f.sum", m), 0.1875, places=4)
        self.assertIsNone(pf.value_of("a__w.sum/c__c.sum", m))
        self.assertIsNone(pf.value_of("a__w.sum/0", m))
        self.assertEqual(pf.metric_terms("a__x.sum*32/b__y.sum"), ["a__x.sum", "b__y.sum"])
        self.assertEqual(pf.spec_label("a__x.sum/32/b__y.sum"), "`a__x.sum` / 32 / `b__y.sum`")
        self.assertEqual(pf.format_figure(3280000, "ns"), "3.28 ms")
        self.assertEqual(pf.format_figure(45020, "ns"), "45 \u00b5s")
        self.assertEqual(pf.format_figure(65.54, "%"), "65.5%")
        self.assertEqual(pf.format_figure(28514, ""), "28.5 k")
        self.assertEqual(pf.format_figure(1982, ""), "1,982")
        self.assertEqual(pf.format_figure(2585616384, "inst"), "2.59 G")
        self.assertEqual(pf.format_figure(3.22e9, "byte"), "3.22 GB")
        self.assertEqual(pf.format_figure(1.68e9, "hz"), "1.68 GHz")
        self.assertEqual(pf.format_figure(3.0002, "ratio"), "3.00")
        self.assertEqual(pf.format_figure(None, "%"), "\u2014")
        self.assertEqual(pf.command_metrics("ncu --metrics a__b.sum,\\\nc__d.pct \\\n    ./x --profile"),
                         ["a__b.sum", "c__d.pct"])


README = """# SGEMM 11: a lesson

## What to look at in Nsight Compute

```sh
ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread \\
  build/solutions/sgemm/11_double_buffering/double_buffering --profile
```

Text.

<!-- profile:begin %s-->
stale
<!-- profile:end -->

## The exercise
"""


class Tree(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        for lesson in ("sgemm/10_warp_tiling", "sgemm/11_double_buffering"):
            self.write("lessons/%s/README.md" % lesson, "# %s\n" % lesson)
        self.readme = self.write("lessons/sgemm/11_double_buffering/README.md", README % "")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def text(self):
        with open(self.readme, encoding="utf-8") as f:
            return f.read()

    def import_logs(self, gpu="NVIDIA H100 80GB HBM3"):
        return pf.import_logs(self.root, [os.path.join(NCU, "sgemm-09-13-excerpt.log")], gpu, "2025.3.1", None,
                              os.path.join(self.root, "results", "profile", pf.gpu_file_name(gpu)))

    def test_import_keeps_the_quoted_metrics_and_names_the_missing(self):
        missing = self.import_logs()
        with open(os.path.join(self.root, "results/profile/NVIDIA_H100_80GB_HBM3.json")) as f:
            data = json.load(f)
        entry = data["lessons"]["sgemm/11_double_buffering"]
        self.assertEqual(data["gpu"], "NVIDIA H100 80GB HBM3")
        self.assertEqual((entry["ncu"], entry["date"]), ("2025.3.1", "2026-11-24"))
        self.assertIn("sgemm-09-13-excerpt.log", entry["source"])
        self.assertIn("ncu --clock-control none", entry["command"])
        self.assertEqual(entry["results"][0]["metrics"],
                         {"gpu__time_duration.sum": 3280000, "launch__registers_per_thread": 127})
        self.assertEqual(entry["units"]["gpu__time_duration.sum"], "ns")
        self.assertEqual(missing, {"sgemm/11_double_buffering": []})

    def test_block_one_column_per_gpu_idempotent_and_checked(self):
        self.import_logs()
        self.write("results/profile/NVIDIA_H200.json", '{"gpu": "NVIDIA H200", "lessons": {}}\n')
        self.assertEqual(pf.update(self.root, check=True), [self.readme])
        self.assertEqual(pf.update(self.root), [self.readme])
        text = self.text()
        self.assertNotIn("stale", text)
        self.assertIn("| variant | kernel | metric | H100 | H200 |", text)
        self.assertIn("| 2 buffers | \u2014 | `gpu__time_duration.sum` | 3.28 ms | \u2014 |", text)
        self.assertIn("|  |  | `launch__registers_per_thread` | 127 | \u2014 |", text)
        self.assertIn("**H200**: not profiled yet", text)
        self.assertIn("ncu 2025.3.1, 2026-11-24", text)
        self.assertTrue(text.endswith("<!-- profile:end -->\n\n## The exercise\n"))
        self.assertEqual(pf.update(self.root), [])
        self.assertEqual(pf.update(self.root, check=True), [])
        with redirect_stdout(io.StringIO()):
            self.assertEqual(pf.main(["--root", self.root, "--check"]), 0)
        self.write("lessons/sgemm/11_double_buffering/README.md", text.replace("3.28 ms", "3.3 ms"))
        with redirect_stderr(io.StringIO()) as err:
            self.assertEqual(pf.main(["--root", self.root, "--check"]), 1)
        self.assertIn("profile block is stale", err.getvalue())

    def test_metrics_and_also_attributes(self):
        self.write("lessons/sgemm/11_double_buffering/README.md", README % (
            'metrics="launch__registers_per_thread,smsp__inst_executed.sum/smsp__inst_executed_op_shared_ld.sum" '
            'also="sgemm/10_warp_tiling[warp 32x64]" '))
        pf.import_logs(self.root, [os.path.join(NCU, "sgemm-09-13-excerpt.log")], "NVIDIA H100 80GB HBM3",
                       "2025.3.1", None, os.path.join(self.root, "results/profile/H100.json"))
        pf.update(self.root)
        text = self.text()
        self.assertIn("`smsp__inst_executed.sum` / `smsp__inst_executed_op_shared_ld.sum` | 19.3 |", text)
        self.assertNotIn("gpu__time_duration", text.split("<!-- profile:begin")[1])
        self.assertIn("sgemm/10_warp_tiling: not profiled yet", text)

    def test_no_figures_yet(self):
        pf.update(self.root)
        self.assertIn("No figures recorded yet", self.text())
        self.assertIn("`gpu__time_duration.sum`, `launch__registers_per_thread`", self.text())

    def test_bad_markers(self):
        cases = [README % 'colour="red" ', README % 'also="sgemm/10" ', README % 'metrics="nothing" ',
                 README + "<!-- profile:end -->\n", README.replace("<!-- profile:begin %s-->", "<!-- profile:begin x -->")]
        for text in cases:
            self.write("lessons/sgemm/11_double_buffering/README.md", text)
            with self.assertRaises(pf.FigureError, msg=text[-120:]):
                pf.update(self.root)
        self.write("lessons/sgemm/11_double_buffering/README.md", README % 'also="sgemm/09_nothing" ')
        with self.assertRaises(pf.FigureError):
            pf.update(self.root)
        self.write("results/profile/bad.json", '{"lessons": []}')
        with self.assertRaises(pf.FigureError):
            pf.load_profile(os.path.join(self.root, "results/profile/bad.json"))


class Committed(unittest.TestCase):
    def test_every_committed_block_is_current(self):
        self.assertEqual(pf.update(pf.REPO_ROOT, check=True), [])


if __name__ == "__main__":
    unittest.main()
