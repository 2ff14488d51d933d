"""CPU tests of the grader's own logic: JUnit parsing, scoring, reports, the self-test
verdict, compile errors first (on captured build logs), the parallel build's flags and
the per-lesson phase (with stand-in check programs)."""
import contextlib
import io
import json
import os
import stat
import sys
import tempfile
import textwrap
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grade  # noqa: E402
from test_autograder import validate_gradescope  # noqa: E402

LOGS = Path(__file__).resolve().parent / "testdata" / "build_logs"
TREE = "/autograder/work/lessons"  # where the captured logs' lessons were

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="check" errors="0" failures="1" tests="3">
  <testcase classname="check.global" name="matches the CPU reference" time="0.1"/>
  <testcase classname="check.global" name="matches cuBLAS/N = 8192" time="0.2">
    <failure message="c.ok()" type="REQUIRE">FAILED: first bad index 0</failure>
  </testcase>
  <testcase classname="check.global" name="skipped one" time="0"><skipped message="SKIP()"/></testcase>
</testsuite></testsuites>"""


def lesson(cases, status="ok"):
    r = grade.LessonResult("sgemm", "01_naive", status=status)
    r.cases = cases
    return r


class ParseJunit(unittest.TestCase):
    def test_cases_pass_fail_and_skip(self):
        cases = grade.parse_catch_junit(JUNIT, "exercise")
        self.assertEqual([c.name for c in cases], ["matches the CPU reference", "matches cuBLAS/N = 8192", "skipped one"])
        self.assertEqual([c.passed for c in cases], [True, False, False])
        self.assertIn("first bad index 0", cases[1].message)
        self.assertTrue(all(c.kind == "exercise" for c in cases))

    def test_empty_report_has_no_cases(self):
        self.assertEqual(grade.parse_catch_junit("<testsuites><testsuite name='x'/></testsuites>", "baseline"), [])


class Scoring(unittest.TestCase):
    def test_points_are_shared_by_exercise_cases_only(self):
        r = lesson([grade.CaseResult("a", "exercise", True), grade.CaseResult("b", "exercise", False),
                    grade.CaseResult("c", "baseline", False)])
        self.assertAlmostEqual(r.score, grade.POINTS_PER_LESSON / 2)

    def test_compile_error_skip_and_no_checks_score_zero(self):
        for status in ("compile_error", "skipped", "no_checks"):
            self.assertEqual(lesson([grade.CaseResult("a", "exercise", True)], status).score, 0)
        self.assertEqual(lesson([]).score, 0)

    def test_crash_counts_as_failed_case(self):
        r = lesson([grade.CaseResult("[exercise] checks (crashed: signal 11)", "exercise", False)], "crashed")
        self.assertEqual(r.score, 0)

    def test_baseline_crash_or_timeout_fails_the_lesson(self):
        # the exercise cases passed, then the program crashed (or hung) in its baseline run:
        # 0 points, as --require-full counts it, and the report says why
        for status in ("crashed", "timeout"):
            r = lesson([grade.CaseResult("a", "exercise", True),
                        grade.CaseResult(f"[baseline] checks ({status})", "baseline", False)], status)
            r.detail = f"[baseline] checks {status}"
            self.assertEqual(r.score, 0)
            self.assertFalse(r.full_marks)
            test = grade.gradescope_results([r], "t")["tests"][0]
            self.assertEqual((test["score"], test["status"]), (0, "failed"))
            self.assertIn("program itself", test["output"])
            self.assertIn("fails the whole lesson", test["output"])

    def test_score_is_full_exactly_when_full_marks(self):
        cases = [grade.CaseResult("a", "exercise", True), grade.CaseResult("b", "baseline", False)]
        for status in ("ok", "compile_error", "crashed", "timeout", "skipped", "no_checks"):
            r = lesson(list(cases), status)
            self.assertEqual(r.score == grade.POINTS_PER_LESSON, r.full_marks, status)


class Reports(unittest.TestCase):
    def test_junit_and_gradescope_json(self):
        results = [lesson([grade.CaseResult("a", "exercise", True), grade.CaseResult("b", "baseline", True)]),
                   grade.LessonResult("sgemm", "05_shared_tiling", status="compile_error",
                                      detail="sgemm/05_shared_tiling/shared_tiling.cu:12: error: x\n\nbuild log:\n..."),
                   grade.LessonResult("cg", "01_sample", status="skipped", detail="SKIPPED: no GPU")]
        with tempfile.TemporaryDirectory() as d:
            summary = grade.write_reports(results, Path(d), "test", seconds=12.6)
            data = json.loads((Path(d) / "results.json").read_text())
            self.assertEqual(data, summary)
            self.assertEqual(validate_gradescope(data), [])
            self.assertEqual(data["score"], 10.0)
            self.assertEqual(data["extra_data"]["max_score"], 30.0)
            self.assertEqual(data["execution_time"], 13)
            self.assertEqual([t["status"] for t in data["tests"]], ["passed", "failed", "failed"])
            self.assertEqual([t["number"] for t in data["tests"]], ["1.1", "1.2", "2.1"])
            # a compile error's report begins with its first error line
            self.assertTrue(data["tests"][1]["output"].startswith("sgemm/05_shared_tiling/shared_tiling.cu:12: error: x"))
            self.assertIn("compile_error", data["tests"][1]["tags"])
            # a lesson whose checks were skipped (no GPU) scores 0 and says so
            self.assertIn("skipped", data["tests"][2]["name"])
            self.assertTrue(data["tests"][2]["output"].startswith("SKIPPED"))
            self.assertIn("SKIPPED", data["output"])
            suites = ET.parse(Path(d) / "junit.xml").getroot().findall("testsuite")
            self.assertEqual([s.get("name") for s in suites], ["sgemm/01_naive", "sgemm/05_shared_tiling", "cg/01_sample"])
            self.assertEqual(suites[1].get("failures"), "1")
            failure = suites[1].find("testcase/failure")
            self.assertEqual(failure.get("message"), "sgemm/05_shared_tiling/shared_tiling.cu:12: error: x")

    def test_junit_counts_match_the_test_cases_written(self):
        no_exercise = grade.LessonResult("cg", "02_jacobi", status="no_checks", detail="no [exercise] test case found")
        no_exercise.cases = [grade.CaseResult("b1", "baseline", True), grade.CaseResult("b2", "baseline", False)]
        skipped_late = grade.LessonResult("cg", "03_x", status="skipped", detail="SKIPPED: no GPU")
        skipped_late.cases = [grade.CaseResult("a", "exercise", True)]
        results = [no_exercise, skipped_late,
                   grade.LessonResult("cg", "04_y", status="compile_error", detail="x.cu:1: error: y"),
                   lesson([grade.CaseResult("a", "exercise", True), grade.CaseResult("b", "exercise", False)])]
        with tempfile.TemporaryDirectory() as d:
            grade.write_reports(results, Path(d), "test")
            suites = ET.parse(Path(d) / "junit.xml").getroot().findall("testsuite")
        counts = [(s.get("tests"), s.get("failures"), s.get("skipped")) for s in suites]
        self.assertEqual(counts, [("3", "2", "0"), ("2", "0", "1"), ("1", "1", "0"), ("2", "1", "0")])
        for s in suites:
            cases = s.findall("testcase")
            self.assertEqual(int(s.get("tests")), len(cases))
            self.assertEqual(int(s.get("failures")), sum(c.find("failure") is not None for c in cases))


class SelfTest(unittest.TestCase):
    def test_verdict(self):
        pristine_ok = lesson([grade.CaseResult("a", "exercise", False), grade.CaseResult("b", "baseline", True)])
        solution_ok = lesson([grade.CaseResult("a", "exercise", True), grade.CaseResult("b", "baseline", True)])
        self.assertEqual(grade.self_test_verdict([pristine_ok], [solution_ok]), [])
        leaky = lesson([grade.CaseResult("a", "exercise", True)])
        self.assertTrue(any("PASSES" in p for p in grade.self_test_verdict([leaky], [solution_ok])))
        broken = lesson([grade.CaseResult("a", "exercise", False)])
        self.assertTrue(any("scores" in p for p in grade.self_test_verdict([pristine_ok], [broken])))
        untested = lesson([grade.CaseResult("b", "baseline", True)])
        self.assertTrue(any("no [exercise]" in p for p in grade.self_test_verdict([untested], [solution_ok])))
        skipped = lesson([], "skipped")
        self.assertEqual(grade.self_test_verdict([skipped], [skipped]), [])

    def test_tally_counts_each_tree_on_its_own(self):
        # the same lesson failing in both trees is two failures, not one
        leaky = lesson([grade.CaseResult("a", "exercise", True)])
        broken = lesson([grade.CaseResult("a", "exercise", False)])
        self.assertEqual(grade.self_test_tally([leaky], [broken]), (0, 2, 0))
        pristine_ok = lesson([grade.CaseResult("a", "exercise", False)])
        solution_ok = lesson([grade.CaseResult("a", "exercise", True)])
        other = grade.LessonResult("sgemm", "02_unified_memory")
        other.cases = [grade.CaseResult("a", "exercise", True)]  # a pristine exercise that passes
        skipped = lesson([], "skipped")
        self.assertEqual(grade.self_test_tally([pristine_ok, other, skipped], [solution_ok, solution_ok, skipped]),
                         (3, 1, 2))


class CompileErrorsFirst(unittest.TestCase):
    """Captured build logs (testdata/build_logs/README.md): the report's first lines are
    the errors in the graded tree, as file:line: message relative to it."""

    def report(self, name):
        return grade.summarize_build_failure((LOGS / name).read_text(), TREE)

    def head(self, name):
        text = self.report(name)
        head, sep, log = text.partition("\n\nbuild log:\n")
        self.assertTrue(sep, "the report has a build log after its error lines")
        return head.splitlines(), log

    def test_nvcc_error_in_the_lesson(self):
        lines, log = self.head("nvcc_undefined_identifier.log")
        self.assertEqual(lines, ['bandwidth/01_transfers/transfers.cu:26: error: identifier "byts" is undefined'])
        # the rest of the log follows, its paths relative to the tree, the compiler command shortened
        self.assertIn('bandwidth/01_transfers/transfers.cu(26): error: identifier "byts" is undefined', log)
        self.assertNotIn("\n" + TREE, "\n" + log)
        self.assertIn("(compiler command shortened)", log)

    def test_host_function_called_in_a_kernel(self):
        lines, _ = self.head("nvcc_host_call_in_kernel.log")
        self.assertEqual(len(lines), 2)
        self.assertTrue(lines[0].startswith("bandwidth/04_gather_incremental/gather_incremental.cu:30: error: calling a "
                                            "__host__ function(\"rand\")"))

    def test_error_in_a_standard_header_points_at_the_lesson_line(self):
        lines, _ = self.head("nvcc_error_in_stl_header.log")
        self.assertEqual(lines, ['bandwidth/03_gather_divmod/gather_divmod.cu:49: error: a value of type "const char *" '
                                 'cannot be used to initialize an entity of type "int"  '
                                 '[reported in /usr/include/c++/12/bits/new_allocator.h:175]'])

    def test_pages_of_template_notes(self):
        text = (LOGS / "nvcc_template_notes.log").read_text()
        # in the log, the lesson's line comes after the first 20 lines of library notes
        first_mention = next(i for i, l in enumerate(text.splitlines()) if "multi_output.cu" in l)
        self.assertGreater(first_mention, 20)
        lines, _ = self.head("nvcc_template_notes.log")
        self.assertEqual(len(lines), 3)
        for line, header_line in zip(lines, (45, 69, 98)):
            self.assertTrue(line.startswith('sgemm/04_multi_output/multi_output.cu:16: error: no operator "<" matches'))
            self.assertTrue(line.endswith(f"[reported in /usr/include/c++/12/bits/predefined_ops.h:{header_line}]"))

    def test_gcc_missing_include(self):
        lines, _ = self.head("gcc_missing_include.log")
        self.assertEqual(lines, ["bandwidth/02_copy_kernels/copy_kernels.cu:11: fatal error: tut/copy_helpers.hpp: "
                                 "No such file or directory"])

    def test_gcc_required_from_here(self):
        lines, _ = self.head("gcc_required_from_here.log")
        self.assertEqual(lines[0], "sgemm/01_naive/naive.cpp:10: error: \u2018undefined_name\u2019 was not declared in "
                                   "this scope")
        self.assertTrue(lines[1].startswith("sgemm/01_naive/naive.cpp:7: error: static assertion failed"))
        self.assertTrue(lines[1].endswith("[reported in /usr/include/c++/12/bits/stl_uninitialized.h:90]"))

    def test_ptxas_error_names_the_lesson_file_and_kernel(self):
        lines, _ = self.head("ptxas_shared_memory.log")
        self.assertEqual(len(lines), 4)
        for line in lines:
            self.assertTrue(line.startswith("bandwidth/06_gather_2d/gather_2d.cu: ptxas error: Entry function"))
            self.assertIn("uses too much shared data", line)

    def test_link_error(self):
        lines, _ = self.head("link_undefined_reference.log")
        self.assertEqual(lines[0], "link error: undefined reference to 'lesson::gather_variants()'")
        self.assertEqual(sum("undefined reference" in l for l in lines), 2)  # once, and the hint
        self.assertIn("ld returned 1 exit status", lines[1])

    def test_parallel_build_log_lists_every_lesson_first(self):
        lines, _ = self.head("parallel_build_keep_going.log")
        self.assertEqual([l.split(":")[0] for l in lines[:5]],
                         ["bandwidth/01_transfers/transfers.cu", "bandwidth/02_copy_kernels/copy_kernels.cu",
                          "bandwidth/03_gather_divmod/gather_divmod.cu",
                          "bandwidth/04_gather_incremental/gather_incremental.cu",
                          "bandwidth/04_gather_incremental/gather_incremental.cu"])
        self.assertTrue(lines[5].startswith("link error: undefined reference to 'lesson::gather_variants()'"))

    def test_tree_path_as_given_or_resolved(self):
        with tempfile.TemporaryDirectory() as d:
            real = Path(d) / "real"
            (real / "sgemm" / "01_naive").mkdir(parents=True)
            link = Path(d) / "link"
            link.symlink_to(real)
            log = f"{real}/sgemm/01_naive/naive.cu(7): error: expected a \";\"\n"
            self.assertTrue(grade.summarize_build_failure(log, link).startswith("sgemm/01_naive/naive.cu:7: error:"))

    def test_errors_outside_the_tree_come_after_its_own(self):
        log = textwrap.dedent("""\
            /src/common/include/tut/sgemm.hpp(40): error: identifier "kMaxN" is undefined

            /autograder/work/lessons/sgemm/01_naive/naive.cu(12): error: expected a ";"
            """)
        lines = grade.summarize_build_failure(log, TREE).splitlines()
        self.assertEqual(lines[0], 'sgemm/01_naive/naive.cu:12: error: expected a ";"')
        self.assertEqual(lines[1], '/src/common/include/tut/sgemm.hpp:40: error: identifier "kMaxN" is undefined')

    def test_unrecognised_log(self):
        text = grade.summarize_build_failure("something went wrong\n", TREE)
        self.assertTrue(text.startswith("build failed; no error line was recognised"))
        self.assertIn("something went wrong", text)

    def test_long_log_is_capped(self):
        log = "\n".join(f"line {i}" for i in range(grade.MAX_LOG_LINES + 50))
        text = grade.summarize_build_failure(log, TREE)
        self.assertIn("50 more lines in the full log", text)


def write_cache(build_dir, lessons=None, solutions=None, tracks=None, checks="ON"):
    """A CMakeCache.txt with the grader's settings, the defaults unless given."""
    want = grade.build_settings()
    lines = [f"TUT_LESSONS_DIR:PATH={lessons or want['TUT_LESSONS_DIR']}",
             f"TUT_SOLUTIONS_DIR:PATH={solutions or want['TUT_SOLUTIONS_DIR']}",
             f"TUT_TRACKS:STRING={tracks or want['TUT_TRACKS']}", "CMAKE_GENERATOR:INTERNAL=Ninja"]
    if checks is not None:
        lines.append(f"TUT_BUILD_CHECKS:BOOL={checks}")
    (Path(build_dir) / "CMakeCache.txt").write_text("\n".join(lines) + "\n")


def fake_build_dir(d):
    """A build dir configured as the grader wants it, with a manifest of two lessons."""
    write_cache(d)
    entries = [{"tree": tree, "track": "sgemm", "lesson": lesson, "source": f"/x/{tree}/sgemm/{lesson}/k.cu",
                "check_target": f"check-{tree}-sgemm-{lesson}", "check_exe": "/nonexistent"}
               for tree in ("lessons", "solutions") for lesson in ("01_naive", "02_unified_memory")]
    (Path(d) / "tut_manifest.json").write_text(json.dumps(entries))
    (Path(d) / "tut_build_info.json").write_text('{"catch_major": 3}')


class BadInput(unittest.TestCase):
    def test_usage_errors_exit_2(self):
        for argv in (["--tracks", "nosuch"], ["--lessons-dir", "/nonexistent/lessons"], ["--jobs", "0"],
                     ["--run-jobs", "x"], ["--only", "sgemm"], ["--bogus"]):
            with open(os.devnull, "w") as quiet:
                old, sys.stderr = sys.stderr, quiet
                try:
                    with self.assertRaises(SystemExit) as ctx:
                        grade.main(argv)
                finally:
                    sys.stderr = old
            self.assertEqual(ctx.exception.code, 2, argv)

    def test_only_names_a_lesson_not_in_the_build(self):
        with tempfile.TemporaryDirectory() as d:
            fake_build_dir(d)
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                with self.assertRaises(SystemExit) as ctx:
                    grade.main(["--build-dir", d, "--out", str(Path(d, "out")), "--only", "sgemm/01_naive",
                                "--only", "sgemm/01_naiv"])
        self.assertEqual(ctx.exception.code, 2)
        text = err.getvalue()
        self.assertIn("not in the build", text)
        self.assertIn("sgemm/01_naiv", text)
        self.assertIn("did you mean sgemm/01_naive", text)
        self.assertIn("sgemm: 01_naive 02_unified_memory", text)


class SelfTestTracks(unittest.TestCase):
    def test_self_test_keeps_the_tracks_of_its_build(self):
        seen = []

        def fake_prepare(build_dir, trees, only, lessons_dir=None, tracks=None, **kw):
            seen.append(tracks)
            raise SystemExit(0)

        saved = grade.prepare
        grade.prepare = fake_prepare
        try:
            with tempfile.TemporaryDirectory() as d:
                write_cache(d, tracks="sgemm;cg")
                for argv, want in ((["--self-test"], ["sgemm", "cg"]), (["--self-test", "--tracks", "jor"], ["jor"])):
                    with self.assertRaises(SystemExit):
                        grade.main(argv + ["--build-dir", d, "--out", str(Path(d, "out"))])
                    self.assertEqual(seen.pop(), want)
        finally:
            grade.prepare = saved


class BuildOnly(unittest.TestCase):
    def run_build_only(self, rc, timed_out):
        saved = grade.build_all
        grade.build_all = lambda *a: (rc, timed_out)
        try:
            with tempfile.TemporaryDirectory() as d:
                fake_build_dir(d)
                with contextlib.redirect_stdout(io.StringIO()):
                    return grade.main(["--build-dir", d, "--out", str(Path(d, "out")), "--build-only"])
        finally:
            grade.build_all = saved

    def test_exit_code_says_whether_the_build_succeeded(self):
        self.assertEqual(self.run_build_only(0, False), 0)
        self.assertEqual(self.run_build_only(1, False), 1)
        self.assertEqual(self.run_build_only(-9, True), 1)


class ParallelBuild(unittest.TestCase):
    def test_keep_going_flag_per_generator(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(grade.generator_keep_going(d), [])
            cache = Path(d) / "CMakeCache.txt"
            cache.write_text("CMAKE_GENERATOR:INTERNAL=Ninja\n")
            self.assertEqual(grade.generator_keep_going(d), ["-k", "0"])
            cache.write_text("CMAKE_GENERATOR:INTERNAL=Unix Makefiles\n")
            self.assertEqual(grade.generator_keep_going(d), ["-k"])

    def test_configure_only_when_trees_or_tracks_change(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertTrue(grade.needs_configure(d))
            (Path(d) / "tut_manifest.json").write_text("[]")
            lessons = str(Path(d, "lessons").resolve())
            write_cache(d, lessons=lessons, solutions=lessons, tracks="sgemm;cg")
            self.assertFalse(grade.needs_configure(d, Path(d, "lessons"), ["sgemm", "cg"], Path(d, "lessons")))
            self.assertTrue(grade.needs_configure(d, Path(d, "lessons"), ["sgemm"], Path(d, "lessons")))
            self.assertTrue(grade.needs_configure(d, Path(d, "lessons"), ["sgemm", "cg"], Path(d, "solutions")))
            self.assertTrue(grade.needs_configure(d, Path(d, "mine"), ["sgemm", "cg"], Path(d, "lessons")))

    def test_defaults_are_compared_too(self):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "tut_manifest.json").write_text("[]")
            write_cache(d)
            self.assertFalse(grade.needs_configure(d))
            # configured for a student's tree: a plain run grades lessons/ again
            write_cache(d, lessons="/tmp/stud")
            self.assertTrue(grade.needs_configure(d))
            self.assertFalse(grade.needs_configure(d, lessons_dir="/tmp/stud"))
            # a subset of the tracks, where all are wanted
            write_cache(d, tracks="sgemm")
            self.assertTrue(grade.needs_configure(d))
            # the tour's build: no checks
            for value in ("OFF", "0", "FALSE"):
                write_cache(d, checks=value)
                self.assertTrue(grade.needs_configure(d), value)
            write_cache(d, checks="TRUE")
            self.assertFalse(grade.needs_configure(d))
            write_cache(d, checks=None)
            self.assertTrue(grade.needs_configure(d))

    def test_configure_passes_every_setting(self):
        calls = []

        class Done:
            returncode, stdout = 0, ""

        saved = grade.subprocess.run
        grade.subprocess.run = lambda cmd, **kw: calls.append(cmd) or Done()
        try:
            with tempfile.TemporaryDirectory() as d:
                grade.configure(d)
                grade.configure(d, "/tmp/stud", ["cg"], "/tmp/sol")
        finally:
            grade.subprocess.run = saved
        defaults, given = calls
        for arg in ("-DTUT_BUILD_CHECKS=ON", f"-DTUT_LESSONS_DIR={grade.REPO.resolve() / 'lessons'}",
                    "-DTUT_TRACKS=" + ";".join(grade.default_tracks())):
            self.assertIn(arg, defaults)
        for arg in ("-DTUT_BUILD_CHECKS=ON", f"-DTUT_LESSONS_DIR={Path('/tmp/stud').resolve()}",
                    f"-DTUT_SOLUTIONS_DIR={Path('/tmp/sol').resolve()}", "-DTUT_TRACKS=cg"):
            self.assertIn(arg, given)

    def test_job_counts_are_positive(self):
        self.assertGreaterEqual(grade.available_cpus(), 1)
        self.assertGreaterEqual(grade.default_build_jobs(), 1)
        self.assertGreaterEqual(grade.default_run_jobs(), 1)


FAKE_CHECK = """\
#!{python}
# Stands in for a Catch2 check program: [exercise] or [baseline], -r junit -o FILE.
import sys, time
behaviour = {behaviour!r}
kind = sys.argv[1][1:].split("]")[0]  # the first tag of the test spec: [exercise]~[performance]
out = sys.argv[sys.argv.index("-o") + 1]
if kind == "performance":  # these lessons have no [performance] case
    open(out, "w").write('<testsuites><testsuite name="t"/></testsuites>')
    sys.exit(0)
if behaviour == "skip":
    print("SKIPPED: these checks need a CUDA GPU")
    sys.exit(77)
if behaviour == "crash" and kind == "exercise":
    sys.exit(134)
if behaviour == "crash_baseline" and kind == "baseline":
    sys.exit(134)
time.sleep(0.2)
ok = behaviour in ("pass", "crash_baseline") or kind == "baseline"
case = '<testcase name="{{0}} case"/>' if ok else '<testcase name="{{0}} case"><failure message="x">bad</failure></testcase>'
open(out, "w").write('<testsuites><testsuite name="t">' + case.format(kind) + '</testsuite></testsuites>')
sys.exit(0 if ok else 1)
"""


class PerLessonPhase(unittest.TestCase):
    """grade_entries with the builds stubbed out and stand-in check programs, several at once."""

    def test_results_keep_manifest_order_and_statuses(self):
        behaviours = {"01_pass": "pass", "02_fail": "fail", "03_broken": None, "04_skip": "skip", "05_crash": "crash",
                      "06_pass": "pass", "07_crash_baseline": "crash_baseline"}
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            entries = []
            for name, b in behaviours.items():
                exe = d / f"check_{name}"
                if b:
                    exe.write_text(FAKE_CHECK.format(python=sys.executable, behaviour=b))
                    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
                entries.append({"tree": "lessons", "track": "demo", "lesson": name, "source": f"{d}/demo/{name}/x.cu",
                                "check_target": f"check-{name}", "check_exe": str(exe), "timeout": 30})

            def fake_build(entry, build_dir, logs, program=False):
                if entry["lesson"] != "03_broken":
                    return None
                r = grade.LessonResult(entry["track"], entry["lesson"], status="compile_error")
                r.detail = grade.summarize_build_failure(f"{d}/demo/03_broken/x.cu(3): error: oops\n", d)
                return r

            saved = grade.build_lesson, grade.catch_major
            grade.build_lesson, grade.catch_major = fake_build, lambda build_dir: 2
            console = io.StringIO()
            try:
                with contextlib.redirect_stdout(console):
                    results = grade.grade_entries("lessons", entries, d, d / "out", "demo", run_jobs=3)
            finally:
                grade.build_lesson, grade.catch_major = saved
            self.assertEqual([r.lesson for r in results], list(behaviours))
            self.assertEqual([r.status for r in results],
                             ["ok", "ok", "compile_error", "skipped", "crashed", "ok", "crashed"])
            self.assertEqual([r.score for r in results], [10.0, 0.0, 0.0, 0.0, 0.0, 10.0, 0.0])
            data = json.loads((d / "out" / "results.json").read_text())
            self.assertEqual(validate_gradescope(data), [])
            self.assertEqual(data["score"], 20.0)
            self.assertTrue(data["tests"][2]["output"].startswith("demo/03_broken/x.cu:3: error: oops"))
            self.assertIn("phase_seconds", data["extra_data"])
            # the console has the report of every lesson without full points (GitHub Classroom
            # shows nothing else), compile errors first, and none of the others
            out = console.getvalue()
            for r, test in zip(results, data["tests"]):
                header = f"---- demo/{r.lesson}: "
                if r.full_marks:
                    self.assertNotIn(header, out)
                else:
                    self.assertIn(header, out)
                    self.assertIn(test["output"], out)
            self.assertIn("demo/03_broken/x.cu:3: error: oops", out)
            self.assertLess(out.index("---- demo/"), out.index("\ndemo\n"))  # before the score table


class MultiGpuLessons(unittest.TestCase):
    """Lessons that need several GPUs: started through their launcher, skipped with the GPU
    count as the reason, and run one at a time after the others."""

    LAUNCHER = Path(__file__).resolve().parent.parent / "common" / "checks" / "multigpu" / "mpi_launch.py"

    def test_launch_prefix(self):
        self.assertEqual(grade.launch_prefix({"check_exe": "x"}, 300), [])
        mpi = grade.launch_prefix({"launcher": "/l.py", "gpus": 2, "launch": "mpi"}, 300)
        self.assertEqual(mpi, [sys.executable, "/l.py", "--np", "2", "--timeout", "285", "--"])
        single = grade.launch_prefix({"launcher": "/l.py", "gpus": 2, "launch": "single"}, 300)
        self.assertIn("--single", single)
        self.assertEqual(single[-1], "--")

    def test_skip_reason_names_the_gpus(self):
        r = grade.LessonResult("multigpu", "02_allreduce", status="skipped",
                               detail="SKIPPED: check-lessons-multigpu-02_allreduce needs 2 GPUs (one process on each), "
                                      "found 1.")
        self.assertEqual(r.skip_reason, "needs 2 GPUs")
        self.assertEqual(grade.skipped_name(r), "multigpu/02_allreduce (skipped: needs 2 GPUs)")
        none = grade.LessonResult("multigpu", "02_allreduce", status="skipped",
                                  detail="SKIPPED: check needs a CUDA GPU (2 of them) and no GPU is usable here.")
        self.assertEqual(none.skip_reason, "no GPU")

    def test_a_lesson_with_too_few_gpus_is_skipped_with_the_reason(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            exe = d / "check"
            exe.write_text(FAKE_CHECK.format(python=sys.executable, behaviour="pass"))
            exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
            entry = {"tree": "lessons", "track": "multigpu", "lesson": "02_allreduce", "source": f"{d}/x.cu",
                     "check_target": "check", "check_exe": str(exe), "timeout": 60, "gpus": 2, "launch": "mpi",
                     "launcher": str(self.LAUNCHER)}
            saved = os.environ.get("TUT_GPU_COUNT")
            os.environ["TUT_GPU_COUNT"] = "1"
            try:
                r = grade.run_checks(entry, d, 2)
            finally:
                if saved is None:
                    del os.environ["TUT_GPU_COUNT"]
                else:
                    os.environ["TUT_GPU_COUNT"] = saved
            self.assertEqual(r.status, "skipped")
            self.assertEqual(r.skip_reason, "needs 2 GPUs")
            self.assertEqual(r.score, 0.0)


if __name__ == "__main__":
    unittest.main()
