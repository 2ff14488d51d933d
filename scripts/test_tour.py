"""CPU tests of the tour: its table logic, and its handling of bad input and of a host
without a GPU (fake device_info and lesson programs in a temporary build directory)."""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tour  # noqa: E402

TESTDATA = Path(__file__).resolve().parent / "testdata"


def rec(lesson, variant, value, track="sgemm"):
    return {"track": track, "lesson": lesson, "variant": variant, "size": "4096", "value": value, "unit": "GFLOP/s",
            "time_ms": 1.0, "ratio_to_library": value / 100.0, "ratio_to_peak": value / 200.0}


class Resources(unittest.TestCase):
    def test_kernels_with_an_occupancy_are_listed_and_sweeps_left_out(self):
        shaped = dict(rec("14_tuning", "128x256x16", 40), extra={"registers": 247, "shared_bytes": 49664.0,
                                                                   "occupancy": 0.125})
        sweep = dict(rec("14_tuning", "128x256x16", 41), size="8192",
                     extra={"registers": 247, "shared_bytes": 49664.0, "occupancy": 0.125, "sweep": True})
        library = dict(rec("08_cublas", "fp32", 50), extra={"registers": -1, "shared_bytes": -1.0})
        rows = tour.resources_table([library, shaped, sweep])
        self.assertEqual(rows, [["14_tuning", "128x256x16", "4096", "247", "49,664", "12.5%"]])

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
        def fake_sh(cmd, **kw):
            calls.append([str(c) for c in cmd])
            return subprocess.CompletedProcess(cmd, 0)
        tour.sh = fake_sh
        try:
            self.assertEqual(tour.regenerate_docs(TESTDATA / "results"), 0)
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
        tour.regenerate_docs = lambda d: seen.append(d) or 0
        try:
            self.assertEqual(tour.main(["--docs-only", "--results-dir", "somewhere", "--build-dir", "/nonexistent"]), 0)
        finally:
            tour.regenerate_docs = real
        self.assertEqual(seen, [Path("somewhere")])


def quiet(fn, *args):
    """(return value, stderr) of fn(*args), its stdout discarded."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = fn(*args)
    return rc, err.getvalue()


class DocsFailures(unittest.TestCase):
    def test_a_folder_without_results_files_is_an_error(self):
        with tempfile.TemporaryDirectory() as empty:
            rc, err = quiet(tour.main, ["--docs-only", "--results-dir", empty])
        self.assertEqual(rc, 2)
        self.assertIn("no results files", err)

    def test_a_failing_generator_is_named_and_fails_the_tour(self):
        real_sh = tour.sh
        tour.sh = lambda cmd, **kw: subprocess.CompletedProcess(cmd, 2 if "lesson_tables.py" in str(cmd[1]) else 0)
        try:
            rc, err = quiet(tour.regenerate_docs, TESTDATA / "results")
        finally:
            tour.sh = real_sh
        self.assertEqual(rc, 1)
        self.assertIn("lesson_tables.py (exit 2)", err)
        self.assertNotIn("plots.py", err)


def fake_program(path, body):
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


DEVICE = {"gpu": "Fake GPU", "cuda": "13.0", "date": "2030-01-01"}


class Run(unittest.TestCase):
    """main() against a temporary build directory: a manifest, a fake device_info and fake
    lesson programs (shell scripts), so that nothing is compiled and no GPU is needed."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.build = Path(self.tmp.name) / "build"
        self.results = Path(self.tmp.name) / "results"
        self.build.mkdir()
        (self.build / "CMakeCache.txt").write_text("")
        self.sh_calls = []
        self.real_sh = tour.sh

    def tearDown(self):
        tour.sh = self.real_sh
        self.tmp.cleanup()

    def lesson(self, track, lesson, body):
        exe = self.build / f"{track}-{lesson}"
        fake_program(exe, body)
        return {"tree": "solutions", "track": track, "lesson": lesson, "target": f"solutions-{track}-{lesson}",
                "exe": str(exe), "tour_args": []}

    def write_manifest(self, entries):
        (self.build / "tut_manifest.json").write_text(json.dumps(entries))

    def device_info(self, body):
        fake_program(self.build / "device_info", body)

    def main(self, *extra, build=True):
        def fake_sh(cmd, **kw):  # records cmake calls; runs the lesson programs
            if str(cmd[0]) == "cmake":
                self.sh_calls.append([str(c) for c in cmd])
                return subprocess.CompletedProcess(cmd, 0)
            return self.real_sh(cmd, **kw)
        tour.sh = fake_sh
        args = ["--build-dir", str(self.build), "--results-dir", str(self.results), "--no-docs", *extra]
        return quiet(tour.main, args + ([] if build else ["--no-build"]))

    def test_no_build_of_a_missing_build_dir_is_one_line(self):
        rc, err = quiet(tour.main, ["--no-build", "--build-dir", os.path.join(self.tmp.name, "none")])
        self.assertEqual(rc, 2)
        self.assertEqual(len(err.strip().splitlines()), 1)
        self.assertIn("tut_manifest.json not found", err)

    def test_an_unknown_track_is_refused_before_anything_is_built(self):
        self.write_manifest([self.lesson("sgemm", "01_naive", "exit 0")])
        rc, err = self.main("--tracks", "sgem")
        self.assertEqual(rc, 2)
        self.assertIn("unknown track(s) sgem", err)
        self.assertIn("sgemm", err)
        self.assertEqual(self.sh_calls, [])
        self.assertFalse(self.results.exists())

    def test_without_a_gpu_only_device_info_is_built(self):
        self.write_manifest([self.lesson("sgemm", "01_naive", "exit 0")])
        self.device_info("echo 'SKIPPED: no CUDA GPU' >&2; exit 77")
        rc, _ = self.main()
        self.assertEqual(rc, tour.SKIP_EXIT)
        self.assertEqual(len(self.sh_calls), 1)
        self.assertEqual(self.sh_calls[0][-2:], ["--target", "device_info"])
        self.assertFalse(self.results.exists())

    def test_a_run_without_records_leaves_the_results_file_alone(self):
        self.write_manifest([self.lesson("sgemm", "01_naive", "exit 3")])
        self.device_info(f"echo '{json.dumps(DEVICE)}'")
        self.results.mkdir()
        old = self.results / "Fake_GPU.json"
        old.write_text('{"date": "earlier"}\n')
        rc, err = self.main(build=False)
        self.assertEqual(rc, 1)
        self.assertIn("left as it was", err)
        self.assertEqual(old.read_text(), '{"date": "earlier"}\n')

    def test_multigpu_gets_one_results_file_per_gpu_count(self):
        # A stand-in launcher runs the program with FAKE_NP set to the --np it was given; the
        # program writes one record whose value is that count (and fails without the safety
        # variable set).
        launcher = self.build / "launch.py"
        launcher.write_text(f"#!{sys.executable}\nimport os, subprocess, sys\n"
                            "a = sys.argv[1:]\nnp = a[a.index('--np') + 1] if '--np' in a else '1'\n"
                            "sys.exit(subprocess.run(a[a.index('--') + 1:], env=dict(os.environ, FAKE_NP=np)).returncode)\n")
        program = self.build / "allreduce"
        program.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                           "assert os.environ['NCCL_NVLS_ENABLE'] == '0'\n"
                           "r = {'track': 'multigpu', 'lesson': '02_allreduce', 'variant': 'ring', "
                           "'value': int(os.environ['FAKE_NP'])}\n"
                           "open(sys.argv[sys.argv.index('--json') + 1], 'a').write(json.dumps(r) + '\\n')\n")
        program.chmod(0o755)
        self.write_manifest([{"tree": "solutions", "track": "multigpu", "lesson": "02_allreduce",
                              "target": "solutions-multigpu-02_allreduce", "exe": str(program), "tour_args": [],
                              "launch": "mpi", "launcher": str(launcher), "gpus": 2}])
        self.device_info(f"echo '{json.dumps(DEVICE)}'")
        os.environ["TUT_GPU_COUNT"] = "2"
        try:
            rc, err = self.main("--tracks", "multigpu")
        finally:
            del os.environ["TUT_GPU_COUNT"]
        self.assertEqual(rc, 0, err)
        for g in (1, 2):
            written = json.loads((self.results / "multigpu" / f"Fake_GPU-x{g}.json").read_text())
            self.assertEqual(written["gpus"], g)
            self.assertEqual([r["value"] for r in written["records"]], [g])
        self.assertFalse((self.results / "Fake_GPU.json").exists())

    def test_records_are_written(self):
        record = {"track": "sgemm", "lesson": "01_naive", "variant": "v", "value": 1.0, "unit": "GFLOP/s"}
        self.write_manifest([self.lesson("sgemm", "01_naive", f"echo '{json.dumps(record)}' >> \"$2\"")])
        self.device_info(f"echo '{json.dumps(DEVICE)}'")
        rc, _ = self.main()
        self.assertEqual(rc, 0)
        self.assertEqual([c[-1] for c in self.sh_calls], ["device_info", "solutions-sgemm-01_naive"])
        written = json.loads((self.results / "Fake_GPU.json").read_text())
        self.assertEqual(written["records"], [record])

    def test_a_lesson_tour_replaces_only_that_lessons_records(self):
        def rec(lesson, variant, value):
            return {"track": "sgemm", "lesson": lesson, "variant": variant, "value": value}
        new = rec("02_two", "new", 9.0)
        self.write_manifest([self.lesson("sgemm", "01_one", "exit 5"),
                             self.lesson("sgemm", "02_two", f"echo '{json.dumps(new)}' >> \"$2\""),
                             self.lesson("sgemm", "03_three", "exit 5")])
        self.device_info(f"echo '{json.dumps(DEVICE)}'")
        self.results.mkdir()
        old = [rec("01_one", "a", 1.0), rec("02_two", "old", 2.0), rec("03_three", "c", 3.0)]
        (self.results / "Fake_GPU.json").write_text(json.dumps({"date": "2020-01-01", "device": {"gpu": "Fake GPU"},
                                                                "records": old, "failures": [], "skipped": []}))
        rc, err = self.main("--lessons", "sgemm/02_two", build=False)
        self.assertEqual(rc, 0, err)
        written = json.loads((self.results / "Fake_GPU.json").read_text())
        self.assertEqual(written["records"], [old[0], new, old[2]])  # the other lessons' programs never ran
        self.assertEqual(written["date"], "2020-01-01")  # the date of the tour that measured the rest
        self.assertEqual(written["updates"], [{"date": DEVICE["date"], "gpu": "Fake GPU", "lessons": ["sgemm/02_two"]}])
        rc, err = self.main("--lessons", "sgemm/04_four", build=False)
        self.assertEqual(rc, 2)
        self.assertIn("unknown lesson(s) sgemm/04_four", err)


class MultiGpu(unittest.TestCase):
    """The multigpu track: GPU counts, its launch commands, one results file per count."""

    def test_counts_are_powers_of_two_up_to_the_gpus_here(self):
        self.assertEqual(tour.multigpu_counts(0), [])
        self.assertEqual(tour.multigpu_counts(1), [1])
        self.assertEqual(tour.multigpu_counts(4), [1, 2, 4])
        self.assertEqual(tour.multigpu_counts(6), [1, 2, 4])
        self.assertEqual(tour.multigpu_counts(8), [1, 2, 4, 8])
        self.assertEqual(tour.multigpu_counts(2, [1, 2, 4]), [1, 2])

    def test_commands_go_through_the_launcher(self):
        e = {"exe": "/b/allreduce", "launcher": "/l.py", "launch": "mpi", "gpus": 2, "tour_args": ["--x"]}
        cmd = tour.multigpu_command(e, 4, "/b/r.jsonl", 300)
        self.assertEqual(cmd[1:6], ["/l.py", "--np", "4", "--timeout", "300"])
        self.assertEqual(cmd[cmd.index("--") + 1:], ["/b/allreduce", "--json", "/b/r.jsonl", "--x"])
        single = dict(e, launch="single", exe="/b/peers")
        cmd = tour.multigpu_command(single, 4, "/b/r.jsonl", 300)
        self.assertIn("--single", cmd)
        self.assertEqual(cmd[-2:], ["--gpus", "4"])

    def test_rows_show_the_solver_columns(self):
        r = {"lesson": "04_cg", "variant": "float", "size": "weak", "time_ms": 12.5, "value": 800.0, "unit": "GB/s",
             "ratio_to_library": 0.9, "ratio_to_peak": 0.5,
             "extra": {"us_per_iter": 250.0, "compute_us_per_iter": 200.0, "comm_us_per_iter": 50.0, "speedup": 3.6,
                       "parallel_efficiency": 0.9}}
        row = tour.multigpu_rows([r])[0]
        self.assertEqual(row[7:], ["250.0", "200.0", "50.0", "3.60", "90.0%"])
        self.assertEqual(tour.multigpu_rows([dict(r, extra={})])[0][7:], ["-"] * 5)


if __name__ == "__main__":
    unittest.main()
