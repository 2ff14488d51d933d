"""CPU tests of the tour's table logic."""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tour  # noqa: E402


def rec(lesson, variant, value, track="sgemm"):
    return {"track": track, "lesson": lesson, "variant": variant, "size": "4096", "value": value, "unit": "GFLOP/s",
            "time_ms": 1.0, "ratio_to_library": value / 100.0, "ratio_to_peak": value / 200.0}


class Resources(unittest.TestCase):
    def test_kernels_with_an_occupancy_are_listed_and_sweeps_left_out(self):
        shaped = dict(rec("13_tuning", "128x256x16", 40), extra={"registers": 247, "shared_bytes": 49664.0,
                                                                   "occupancy": 0.125})
        sweep = dict(rec("13_tuning", "128x256x16", 41), size="8192",
                     extra={"registers": 247, "shared_bytes": 49664.0, "occupancy": 0.125, "sweep": True})
        library = dict(rec("08_cublas", "fp32", 50), extra={"registers": -1, "shared_bytes": -1.0})
        rows = tour.resources_table([library, shaped, sweep])
        self.assertEqual(rows, [["13_tuning", "128x256x16", "4096", "247", "49,664", "12.5%"]])

    def test_unknown_resources_show_a_dash(self):
        r = dict(rec("09_x", "v", 1), extra={"registers": -1, "shared_bytes": -1.0, "occupancy": -1.0})
        self.assertEqual(tour.resources_table([r])[0][3:], ["-", "-", "-"])


class Progression(unittest.TestCase):
    def test_speedup_is_best_over_previous_best(self):
        rows = tour.progression_table("sgemm", [rec("01_naive", "a", 10), rec("02_x", "b", 20), rec("02_x", "c", 40)])
        self.assertEqual(rows[0][-1], "- *")
        self.assertEqual(rows[1][-1], "-")
        self.assertEqual(rows[2][-1], "4.00x *")
        self.assertEqual(rows[2][5], "40.0%")

    def test_baselines_do_not_count_as_steps(self):
        rows = tour.progression_table("cg", [rec("00_eigen", "cpu", 5, "cg"), rec("01_sample", "gpu", 10, "cg"),
                                             rec("02_jacobi", "gpu", 30, "cg")])
        self.assertEqual(rows[1][-1], "- *")
        self.assertEqual(rows[2][-1], "3.00x *")

    def test_records_outside_the_progression_are_not_steps(self):
        tf32 = rec("08_cublas", "tf32", 400)
        tf32["extra"] = {"progression": False}
        rows = tour.progression_table("sgemm", [rec("07_volkov", "g16", 20), rec("08_cublas", "fp32", 50), tf32])
        self.assertEqual(rows[1][-1], "2.50x *")
        self.assertEqual(rows[2][-1], "-")
        pipeline = rec("02_um", "managed", 1)
        pipeline["extra"] = {"progression": False}
        rows = tour.progression_table("sgemm", [rec("01_naive", "a", 10), pipeline, rec("03_unroll", "b", 20)])
        self.assertEqual(rows[1][-1], "- *")
        self.assertEqual(rows[2][-1], "2.00x *")

    def test_missing_values(self):
        rows = tour.progression_table("x", [{"track": "x", "lesson": "01", "variant": "v", "value": None}])
        self.assertEqual(rows[0][4].strip(), "-")

    def test_gpu_file_name(self):
        self.assertEqual(tour.gpu_file_name("NVIDIA H200"), "NVIDIA_H200.json")
        self.assertEqual(tour.gpu_file_name("NVIDIA H100 80GB HBM3"), "NVIDIA_H100_80GB_HBM3.json")


class RegenerateDocs(unittest.TestCase):
    def test_every_results_file_feeds_plots_readme_and_lesson_tables(self):
        calls = []
        real_sh = tour.sh
        tour.sh = lambda cmd, **kw: calls.append([str(c) for c in cmd])
        try:
            tour.regenerate_docs(Path(__file__).resolve().parent / "testdata" / "results")
        finally:
            tour.sh = real_sh
        scripts = [Path(c[1]).name for c in calls]
        self.assertEqual(scripts, ["plots.py", "readme_table.py", "lesson_tables.py"])
        for c in calls:
            files = [Path(a).name for a in c if a.endswith(".json")]
            self.assertEqual(files, ["NVIDIA_H100_80GB_HBM3.json", "NVIDIA_H200.json"])
        self.assertIn("--readme", calls[1])
        self.assertIn("--results", calls[2])

    def test_docs_only_runs_no_program(self):
        seen = []
        real = tour.regenerate_docs
        tour.regenerate_docs = seen.append
        try:
            self.assertEqual(tour.main(["--docs-only", "--results-dir", "somewhere", "--build-dir", "/nonexistent"]), 0)
        finally:
            tour.regenerate_docs = real
        self.assertEqual(seen, [Path("somewhere")])


if __name__ == "__main__":
    unittest.main()
