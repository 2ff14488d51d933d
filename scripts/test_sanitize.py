"""CPU tests of scripts/sanitize.py: reading compute-sanitizer's summary lines, judging
each run, the summary table, and one whole pass with a fake compute-sanitizer."""
import io
import json
import sys
import tempfile
import unittest
from contextlib import redirect_stdout, redirect_stderr
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sanitize  # noqa: E402

MEMCHECK_CLEAN = """========= COMPUTE-SANITIZER
01_naive: naive SGEMM
variant   n   ms
========= ERROR SUMMARY: 0 errors
"""
MEMCHECK_ERRORS = """========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at sgemm_naive(int, const float *, const float *, float *)+0x1c0 in naive.cu:31
=========     by thread (17,0,0) in block (1,0,0)
=========     Address 0x7f0000000044 is out of bounds
========= Invalid __global__ read of size 4 bytes
========= ERROR SUMMARY: 2 errors
"""
RACECHECK_CLEAN = "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
RACECHECK_ONE = """========= Error: Race reported between Write access at reduce(const double *, double *)+0x2a0
=========     and Read access at reduce(const double *, double *)+0x310 [4 hazards]
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""
RACECHECK_WARNINGS = "========= RACECHECK SUMMARY: 3 hazards displayed (0 errors, 3 warnings)\n"


def run(rc=0, text="", timed_out=False, args=("--n", "17"), tool="memcheck"):
    r = sanitize.Run("sgemm", "01_naive", tool, 0, list(args), "/bin/true")
    r.returncode, r.timed_out, r.seconds = rc, timed_out, 1.25
    r.summary = sanitize.parse_summary(text)
    return r


class ParseSummary(unittest.TestCase):
    def test_error_summary(self):
        self.assertEqual(sanitize.parse_summary(MEMCHECK_CLEAN).errors, 0)
        self.assertEqual(sanitize.parse_summary(MEMCHECK_ERRORS).errors, 2)
        self.assertEqual(sanitize.parse_summary("========= ERROR SUMMARY: 1 error\n").errors, 1)

    def test_racecheck_summary(self):
        s = sanitize.parse_summary(RACECHECK_CLEAN)
        self.assertEqual((s.hazards, s.hazard_errors, s.hazard_warnings, s.errors), (0, 0, 0, None))
        s = sanitize.parse_summary(RACECHECK_ONE)
        self.assertEqual((s.hazards, s.hazard_errors, s.hazard_warnings), (1, 1, 0))
        s = sanitize.parse_summary(RACECHECK_WARNINGS)
        self.assertEqual((s.hazards, s.hazard_errors, s.hazard_warnings), (3, 0, 3))

    def test_no_summary(self):
        s = sanitize.parse_summary("Segmentation fault\n")
        self.assertEqual((s.errors, s.hazards), (None, None))

    def test_the_program_printing_summary_like_words_is_not_a_summary(self):
        self.assertIsNone(sanitize.parse_summary("ERROR SUMMARY: none\n").errors)


class Outcome(unittest.TestCase):
    def test_clean(self):
        self.assertEqual(sanitize.outcome(run(0, MEMCHECK_CLEAN)), ("ok", False))
        self.assertEqual(sanitize.outcome(run(0, RACECHECK_CLEAN, tool="racecheck")), ("ok", False))

    def test_errors_and_hazards_fail(self):
        self.assertEqual(sanitize.outcome(run(99, MEMCHECK_ERRORS)), ("ERRORS", True))
        self.assertEqual(sanitize.outcome(run(99, RACECHECK_ONE)), ("HAZARDS", True))
        # racecheck warnings are races too; compute-sanitizer may still exit 0
        self.assertEqual(sanitize.outcome(run(0, RACECHECK_WARNINGS)), ("HAZARDS", True))
        # the error exit code without a readable summary still fails
        self.assertEqual(sanitize.outcome(run(99, "")), ("ERRORS", True))

    def test_program_failures(self):
        self.assertEqual(sanitize.outcome(run(1, MEMCHECK_CLEAN)), ("FAILED (exit 1)", True))
        self.assertEqual(sanitize.outcome(run(-11, "")), ("CRASH (signal 11)", True))
        self.assertEqual(sanitize.outcome(run(134, "")), ("CRASH (signal 6)", True))
        self.assertEqual(sanitize.outcome(run(0, "", timed_out=True)), ("TIMEOUT", True))
        self.assertEqual(sanitize.outcome(run(0, "all fine, says the program\n")), ("NO SUMMARY", True))
        self.assertEqual(sanitize.outcome(run(None, "")), ("NOT RUN", True))

    def test_no_gpu_is_skipped(self):
        self.assertEqual(sanitize.outcome(run(77, MEMCHECK_CLEAN)), ("skipped", False))


class Table(unittest.TestCase):
    def test_rows_and_columns(self):
        runs = [run(0, MEMCHECK_CLEAN), run(99, RACECHECK_ONE, tool="racecheck"),
                run(0, RACECHECK_WARNINGS, args=["--n", "4097", "--variant", "tile=32", "--repeats", "1", "--warmup",
                                                 "0", "--seed", "7", "--no-check"], tool="racecheck")]
        lines = sanitize.format_table(runs).splitlines()
        self.assertEqual(len(lines), 2 + len(runs))
        self.assertEqual(lines[0].split(), ["lesson", "tool", "run", "errors/hazards", "seconds", "outcome"])
        self.assertTrue(set(lines[1].replace(" ", "")) == {"-"})
        self.assertIn("1: --n 17", lines[2])
        self.assertTrue(lines[2].endswith("ok"))
        self.assertIn("1 (1 error, 0 warnings)", lines[3])
        self.assertIn("3 (0 errors, 3 warnings)", lines[4])
        self.assertIn("...", lines[4])  # long argument lists are cut
        self.assertIn("1.2", lines[2])
        # columns line up: every row's outcome starts where the header's does
        start = lines[0].index("outcome")
        self.assertTrue(all(line[start:].strip() for line in lines[2:]))
        self.assertEqual(lines[0].index("seconds") + len("seconds"), lines[2].index("1.2") + len("1.2"))

    def test_default_arguments_are_named(self):
        self.assertIn("1: (defaults)", sanitize.format_table([run(0, MEMCHECK_CLEAN, args=[])]))


class Plan(unittest.TestCase):
    MANIFEST = [
        {"tree": "lessons", "track": "sgemm", "lesson": "01_naive", "exe": "x", "sanitize_runs": [["--n", "17"]],
         "sanitize_tools": ["memcheck"]},
        {"tree": "solutions", "track": "sgemm", "lesson": "01_naive", "exe": "x",
         "sanitize_runs": [["--n", "17"], ["--n", "1"]], "sanitize_tools": ["memcheck", "racecheck"]},
        {"tree": "solutions", "track": "cg", "lesson": "00_launch_queue", "exe": "y", "tour_args": []},
        {"tree": "solutions", "track": "cg", "lesson": "08_persistent", "exe": "z", "sanitize_runs": [[]],
         "sanitize_tools": ["memcheck", "synccheck"]},
    ]

    def test_every_run_and_tool_of_every_solution(self):
        runs, unsanitized = sanitize.plan(self.MANIFEST)
        self.assertEqual([(r.name, r.tool, r.index) for r in runs],
                         [("sgemm/01_naive", "memcheck", 0), ("sgemm/01_naive", "memcheck", 1),
                          ("sgemm/01_naive", "racecheck", 0), ("sgemm/01_naive", "racecheck", 1),
                          ("cg/08_persistent", "memcheck", 0), ("cg/08_persistent", "synccheck", 0)])
        self.assertEqual(unsanitized, ["cg/00_launch_queue"])

    def test_filters(self):
        runs, _ = sanitize.plan(self.MANIFEST, tracks=["cg"])
        self.assertEqual({r.name for r in runs}, {"cg/08_persistent"})
        runs, unsanitized = sanitize.plan(self.MANIFEST, only=["sgemm/01_naive"])
        self.assertEqual({r.name for r in runs}, {"sgemm/01_naive"})
        self.assertEqual(unsanitized, [])


# A stand-in for compute-sanitizer: a program named "bad" has two memcheck errors and
# one race, "nogpu" exits 77, anything else is clean.
FAKE_SANITIZER = """#!{python}
import sys
args = sys.argv[1:]
tool = args[args.index("--tool") + 1]
exe = next(a for a in args if a.endswith(("good", "bad", "nogpu")))
if exe.endswith("nogpu"):
    sys.exit(77)
bad = exe.endswith("bad")
if tool == "racecheck":
    print("========= RACECHECK SUMMARY: %d hazards displayed (%d errors, 0 warnings)" % ((1, 1) if bad else (0, 0)))
else:
    print("========= ERROR SUMMARY: %d errors" % (2 if bad else 0))
sys.exit(99 if bad else 0)
"""


class WholePass(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)
        self.sanitizer = self.dir / "compute-sanitizer"
        self.sanitizer.write_text(FAKE_SANITIZER.format(python=sys.executable))
        self.sanitizer.chmod(0o755)
        for name in ("good", "bad", "nogpu"):
            (self.dir / name).write_text("")

    def main(self, *programs):
        manifest = [{"tree": "solutions", "track": "t", "lesson": p, "exe": str(self.dir / p),
                     "sanitize_runs": [["--n", "3"]], "sanitize_tools": ["memcheck", "racecheck"]} for p in programs]
        (self.dir / "tut_manifest.json").write_text(json.dumps(manifest))
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = sanitize.main(["--build-dir", str(self.dir), "--sanitizer", str(self.sanitizer), "--jobs", "2"])
        return rc, out.getvalue()

    def test_clean_pass(self):
        rc, out = self.main("good")
        self.assertEqual(rc, 0, out)
        self.assertIn("2 runs, 2 ok, 0 failed", out)
        self.assertTrue((self.dir / "logs/sanitize/t-good-memcheck-1.log").exists())

    def test_errors_fail_the_pass(self):
        rc, out = self.main("good", "bad")
        self.assertEqual(rc, 1, out)
        self.assertIn("2 failed", out)
        self.assertIn("ERRORS: t/bad memcheck run 1", out)
        self.assertIn("HAZARDS: t/bad racecheck run 1", out)

    def test_no_gpu(self):
        rc, out = self.main("nogpu")
        self.assertEqual(rc, sanitize.SKIP_EXIT, out)

    def test_missing_manifest_is_a_usage_error(self):
        with redirect_stderr(io.StringIO()):
            self.assertEqual(sanitize.main(["--build-dir", str(self.dir / "nowhere")]), 2)


if __name__ == "__main__":
    unittest.main()
