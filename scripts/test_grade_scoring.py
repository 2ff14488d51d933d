"""CPU tests of the grader's scoring parts and its self-test over the bank of known-wrong
submissions: the shares of correctness, [performance] cases and the sanitizer case, the
TUT_PERF_REPORT lines, time limits and check times, the sanitizer case (a stand-in
compute-sanitizer), the bank's rounds and table, and --calibrate (a stand-in
perf_gates.py). Check programs are stand-ins too (FAKE_CHECK), driven by a JSON spec."""
import contextlib
import io
import json
import os
import stat
import sys
import tempfile
import time
import types
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grade  # noqa: E402
import sanitize  # noqa: E402
import wrong_bank  # noqa: E402
from test_autograder import validate_gradescope  # noqa: E402

# A stand-in Catch2 check program. Its spec (JSON) lists, per run kind, the cases and
# whether they pass; [performance] cases also write their TUT_PERF_REPORT line. With
# "wrong_if" in the spec, a source file (spec["source"]) that contains that text makes
# every [exercise] case named in "wrong_fails" fail: a known-wrong submission.
FAKE_CHECK = """#!{python}
# tags: {tags}
import json, os, sys, time
spec = json.loads({spec!r})
kind = sys.argv[1][1:].split("]")[0]
out = sys.argv[sys.argv.index("-o") + 1]
if spec.get("skip"):
    print("SKIPPED: these checks need a CUDA GPU and none is usable here (no device).")
    sys.exit(77)
if spec.get("hang") == kind:
    time.sleep(60)
if spec.get("crash") == kind:
    sys.exit(134)
if spec.get("trace"):  # the run's start and end, for tests of what runs at once
    open(spec["trace"], "a").write(f"{{kind}} start {{time.time()}}\\n")
    time.sleep(0.2)
wrong = bool(spec.get("wrong_if")) and spec["wrong_if"] in open(spec["source"]).read()
report = os.environ.get("TUT_PERF_REPORT")
calibrating = os.environ.get("TUT_PERF_CALIBRATE") == "1"
parts, failed = [], False
for c in spec.get(kind, []):
    ok = c.get("ok", True) and not (wrong and c["name"] in spec.get("wrong_fails", []))
    if kind == "performance":
        status = c.get("status", "pass" if ok else "fail")
        if calibrating:
            status, ok = "unscored", True
        if report:
            with open(report, "a") as f:
                f.write(json.dumps({{"lesson": "demo", "case": c["name"], "measure": "% of cuBLAS",
                                    "ratio": c.get("ratio", 0.8), "threshold": 0.7, "solution": 0.85,
                                    "status": status, "reason": c.get("reason", ""),
                                    "hint": "keep the tile in shared memory"}}) + "\\n")
                f.write("not json\\n")
    failed = failed or not ok
    body = "" if ok else '<failure message="REQUIRE">bad</failure>'
    parts.append('<testcase name="{{0}}">{{1}}</testcase>'.format(c["name"], body))
open(out, "w").write('<testsuites><testsuite name="t">' + "".join(parts) + "</testsuite></testsuites>")
if spec.get("trace"):
    open(spec["trace"], "a").write(f"{{kind}} end {{time.time()}}\\n")
sys.exit(1 if failed else 0)
"""

# A stand-in compute-sanitizer: finds a race under racecheck when the program's first
# argument is "--racy", else nothing.
FAKE_SANITIZER = """#!{python}
import sys
tool = sys.argv[sys.argv.index("--tool") + 1]
args = sys.argv[sys.argv.index("--check-exit-code") + 2:]
print("========= COMPUTE-SANITIZER")
if tool == "racecheck":
    if "--racy" in args:
        print("========= Error: Race reported between Write access at kernel.cu:12 and Read access at kernel.cu:14")
        print("========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)")
        sys.exit(99)
    print("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)")
else:
    print("========= ERROR SUMMARY: 0 errors")
"""


def write_exe(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def fake_check(d, name, spec):
    # a real check program holds its tags as string literals (grade.has_performance_cases)
    tags = "[performance]" if spec.get("performance") else ""
    return write_exe(Path(d) / name, FAKE_CHECK.format(python=sys.executable, spec=json.dumps(spec), tags=tags))


def entry(d, exe, lesson="01_demo", track="demo", **more):
    e = {"tree": "lessons", "track": track, "lesson": lesson, "source": f"{d}/{track}/{lesson}/x.cu",
         "check_target": f"check-{lesson}", "check_exe": str(exe), "target": f"prog-{lesson}",
         "exe": str(exe), "timeout": 300}
    e.update(more)
    return e


def case(name, kind, passed, status=None):
    return grade.CaseResult(name, kind, passed, data={"status": status} if status else None)


def lesson(cases, status="ok"):
    r = grade.LessonResult("demo", "01_demo", status=status)
    r.cases = cases
    return r


class Shares(unittest.TestCase):
    def test_without_performance_or_sanitizer_correctness_has_everything(self):
        r = lesson([case("a", "exercise", True), case("b", "exercise", False)])
        self.assertEqual(r.shares(), (1.0, 0.0, 0.0))
        self.assertAlmostEqual(r.score, 5.0)

    def test_performance_and_sanitizer_shares(self):
        cases = [case("a", "exercise", True), case("b", "exercise", True), case("p1", "performance", True, "pass"),
                 case("p2", "performance", True, "pass"), case("s", "sanitizer", True)]
        r = lesson(cases)
        self.assertAlmostEqual(r.shares()[0], 1 - grade.PERF_SHARE - grade.SANITIZE_SHARE)
        self.assertTrue(r.full_marks)
        self.assertEqual(r.score, grade.POINTS_PER_LESSON)
        cases[2].passed = False  # one of two scored performance cases fails
        self.assertAlmostEqual(r.score, grade.POINTS_PER_LESSON * (1 - grade.PERF_SHARE / 2))
        self.assertFalse(r.full_marks)
        cases[2].passed = True
        cases[4].passed = False  # the sanitizer found something
        self.assertAlmostEqual(r.score, grade.POINTS_PER_LESSON * (1 - grade.SANITIZE_SHARE))

    def test_correctness_first(self):
        r = lesson([case("a", "exercise", True), case("b", "exercise", False), case("p", "performance", True, "pass"),
                    case("s", "sanitizer", True)])
        correct_share = 1 - grade.PERF_SHARE - grade.SANITIZE_SHARE
        self.assertEqual(r.points()[1:], (0.0, 0.0))
        self.assertAlmostEqual(r.score, grade.POINTS_PER_LESSON * correct_share / 2)
        self.assertIn("correctness first", grade.points_line(r))

    def test_unscored_gives_its_share_to_correctness(self):
        r = lesson([case("a", "exercise", True), case("p1", "performance", True, "unscored"),
                    case("p2", "performance", False, "fail")])
        self.assertAlmostEqual(r.shares()[1], grade.PERF_SHARE / 2)
        self.assertAlmostEqual(r.shares()[0], 1 - grade.PERF_SHARE / 2)
        self.assertAlmostEqual(r.score, grade.POINTS_PER_LESSON * (1 - grade.PERF_SHARE / 2))
        everything_unscored = lesson([case("a", "exercise", True), case("p", "performance", True, "unscored")])
        self.assertEqual(everything_unscored.shares(), (1.0, 0.0, 0.0))
        self.assertEqual(everything_unscored.score, grade.POINTS_PER_LESSON)
        # a case that failed is scored whatever its report says
        self.assertFalse(case("p", "performance", False, "unscored").unscored)

    def test_score_is_full_exactly_when_full_marks(self):
        kinds = ("exercise", "performance", "sanitizer")
        for mask in range(8):
            cases = [case(k, k, bool(mask >> i & 1), "pass" if k == "performance" else None) for i, k in
                     enumerate(kinds)]
            r = lesson(cases)
            self.assertEqual(r.score == grade.POINTS_PER_LESSON, r.full_marks, mask)
            self.assertLessEqual(r.score, grade.POINTS_PER_LESSON)


class PerfReports(unittest.TestCase):
    def test_reports_are_read_and_attached_by_case_name(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "r.jsonl"
            path.write_text('{"case": "speed", "ratio": 0.5, "status": "fail"}\nnot json\n[1, 2]\n'
                            '{"case": "other", "ratio": 0.9, "status": "pass"}\n')
            reports = grade.read_perf_reports(path)
            self.assertEqual([r["case"] for r in reports], ["speed", "other"])
            self.assertEqual(grade.read_perf_reports(Path(d) / "missing"), [])
        cases = [grade.CaseResult("speed", "performance", False), grade.CaseResult("other/N = 4096", "performance", True),
                 grade.CaseResult("alone", "performance", True)]
        grade.attach_perf_reports(cases, reports)
        self.assertEqual(cases[0].data["ratio"], 0.5)
        self.assertEqual(cases[1].data["ratio"], 0.9)  # a section of the case
        self.assertIsNone(cases[2].data)

    def test_a_lesson_with_performance_cases_end_to_end(self):
        spec = {"exercise": [{"name": "matches"}],
                "performance": [{"name": "fast", "ok": False, "ratio": 0.41}, {"name": "tiny", "status": "unscored",
                                                                               "reason": "gain under 5%"}],
                "baseline": [{"name": "refuses"}]}
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            e = entry(d, fake_check(d, "check", spec))
            r = grade.grade_lesson(e, d, 2, grade.Grading(check_times={}))
            self.assertEqual(r.status, "ok")
            self.assertEqual([c.kind for c in r.cases], ["exercise", "baseline", "performance", "performance"])
            self.assertTrue(r.cases[3].unscored)
            self.assertAlmostEqual(r.score, grade.POINTS_PER_LESSON * (1 - grade.PERF_SHARE / 2))
            out = grade.test_output(r)
            self.assertIn("[FAIL] (performance) fast: ratio 0.41 (% of cuBLAS), threshold 0.7", out)
            self.assertIn("hint: keep the tile in shared memory", out)
            self.assertIn("[unscored] (performance) tiny", out)
            self.assertIn("gain under 5%", out)
            data = grade.gradescope_results([r], "t")
            self.assertEqual(validate_gradescope(data), [])
            extra = data["tests"][0]["extra_data"]
            self.assertEqual((extra["performance_passed"], extra["performance_total"], extra["performance_unscored"]),
                             (0, 2, 1))
            self.assertEqual(extra["performance"][0]["ratio"], 0.41)

    def test_performance_cases_are_run_apart_from_the_exercise_cases(self):
        # the exercise and baseline runs leave out [performance] cases, whatever their other tags
        specs = dict(grade.CHECK_RUNS)
        self.assertEqual(specs["exercise"], "[exercise]~[performance]")
        self.assertEqual(specs["performance"], "[performance]")
        self.assertEqual(specs["baseline"], "[baseline]~[performance]")
        self.assertNotIn("performance", grade.SHARED_RUNS)

    def test_a_program_without_performance_cases_gets_no_performance_run(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            plain = entry(d, fake_check(d, "plain", {"exercise": [{"name": "a"}]}))
            timed = entry(d, fake_check(d, "timed", {"exercise": [{"name": "a"}], "performance": [{"name": "p"}]}))
            self.assertFalse(grade.has_performance_cases(plain))
            self.assertTrue(grade.has_performance_cases(timed))
            self.assertTrue(grade.has_performance_cases(entry(d, d / "missing")))
            grade.run_checks(plain, d, 2)
            self.assertFalse((d / "lessons-demo-01_demo.performance.log").exists())

    def test_performance_runs_come_one_at_a_time_after_the_others(self):
        # each stand-in writes its run's start and end to a shared trace; with 3 lessons
        # at once, no [performance] run overlaps another run
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            trace = d / "trace"
            entries = []
            for n in range(3):
                spec = {"exercise": [{"name": "a"}], "baseline": [{"name": "b"}], "performance": [{"name": "p"}],
                        "trace": str(trace)}
                entries.append(entry(d, fake_check(d, f"check{n}", spec), lesson=f"0{n}_demo"))
            saved = grade.build_lesson, grade.catch_major
            grade.build_lesson, grade.catch_major = (lambda entry, build_dir, logs, program=False: None), \
                (lambda build_dir: 2)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    results = grade.grade_entries("lessons", entries, d, d / "out", "demo", run_jobs=3,
                                                  grading=grade.Grading(check_times={}))
            finally:
                grade.build_lesson, grade.catch_major = saved
            events = [line.split() for line in trace.read_text().splitlines()]
        # while a [performance] run is on, nothing else is
        running, overlapped = set(), []
        for n, (kind, what, _) in enumerate(sorted(events, key=lambda e: float(e[2]))):
            if what == "start":
                if running and (kind == "performance" or "performance" in {k for k, _ in running}):
                    overlapped.append(kind)
                running.add((kind, n))
            else:
                running.discard(next(r for r in running if r[0] == kind))
        self.assertEqual(overlapped, [])
        self.assertEqual(sum(e[0] == "performance" and e[1] == "start" for e in events), 3)
        self.assertEqual([r.score for r in results], [grade.POINTS_PER_LESSON] * 3)


class TimeLimits(unittest.TestCase):
    def test_limits_from_measured_times(self):
        e = {"track": "demo", "lesson": "01_demo", "timeout": 300}
        self.assertEqual(grade.time_limit(e, {"demo/01_demo": 2.0})[0], grade.MIN_LIMIT_S)
        self.assertEqual(grade.time_limit(e, {"demo/01_demo": 5.0})[0], 25.0)
        self.assertEqual(grade.time_limit(e, {"demo/01_demo": 9.0})[0], grade.HANG_CAP_S)
        self.assertEqual(grade.time_limit(e, {"demo/01_demo": 20.0})[0], 40.0)  # a slow check: twice its time
        self.assertEqual(grade.time_limit(e, {})[0], grade.DEFAULT_LIMIT_S)
        self.assertEqual(grade.time_limit(e, None), (300.0, "the lesson's CTest limit"))
        self.assertEqual(grade.time_limit(dict(e, timeout=25), {"demo/01_demo": 9.0})[0], 25.0)
        mg = dict(e, launcher="/l.py", timeout=60)
        self.assertEqual(grade.time_limit(mg, {"demo/01_demo": 3.0})[0], grade.MIN_LIMIT_S + grade.LAUNCHER_MARGIN_S)
        self.assertIn("5 x the solution's 5.0 s", grade.time_limit(e, {"demo/01_demo": 5.0})[1])

    def test_a_hang_costs_one_limit_and_names_the_likely_cause(self):
        spec = {"hang": "exercise", "exercise": [{"name": "a"}], "baseline": [{"name": "b"}]}
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            e = entry(d, fake_check(d, "check", spec), hang_hint="a grid barrier that not every block reaches?")
            r = grade.run_checks(e, d, 2, limit=1, limit_why="test")
            self.assertEqual(r.status, "timeout")
            self.assertEqual(len(r.cases), 1)  # the later runs were not started
            self.assertLess(r.seconds, 10)
            self.assertIn("did not finish in 1 s (test)", r.detail)
            self.assertIn("Likely cause: a grid barrier that not every block reaches?", grade.test_output(r))
            e.pop("hang_hint")
            r = grade.run_checks(e, d, 2, limit=1)
            self.assertIn(grade.GENERAL_HANG_HINT, r.detail)

    def test_check_times_file(self):
        saved = grade.CHECK_TIMES_DIR
        with tempfile.TemporaryDirectory() as d:
            grade.CHECK_TIMES_DIR = Path(d) / "check_times"
            try:
                self.assertEqual(grade.load_check_times("NVIDIA H100 80GB HBM3"), {})
                a = grade.LessonResult("demo", "01_a", seconds=3.14159)
                b = grade.LessonResult("demo", "02_b", status="timeout", seconds=300)
                path = grade.write_check_times("NVIDIA H100 80GB HBM3", [a, b])
                self.assertEqual(path.name, "NVIDIA_H100_80GB_HBM3.json")
                self.assertEqual(json.loads(path.read_text()), {"demo/01_a": 3.1})
                # a later run with --only keeps the other lessons' times
                grade.write_check_times("NVIDIA H100 80GB HBM3", [grade.LessonResult("demo", "03_c", seconds=1)])
                self.assertEqual(grade.load_check_times("NVIDIA H100 80GB HBM3"), {"demo/01_a": 3.1, "demo/03_c": 1.0})
                self.assertEqual(grade.load_check_times(None), {})
            finally:
                grade.CHECK_TIMES_DIR = saved

    def test_gpu_name_from_the_environment(self):
        saved = dict(os.environ)
        try:
            os.environ["TUT_GPU_NAME"] = "NVIDIA H200"
            self.assertEqual(grade.gpu_name(), "NVIDIA H200")
            del os.environ["TUT_GPU_NAME"]
            os.environ["CUDA_VISIBLE_DEVICES"] = ""
            self.assertIsNone(grade.gpu_name())
        finally:
            os.environ.clear()
            os.environ.update(saved)
        self.assertEqual(grade.gpu_file_name("NVIDIA H100 80GB HBM3"), "NVIDIA_H100_80GB_HBM3.json")


class SanitizerCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = Path(self.tmp.name)
        tool = write_exe(self.d / "compute-sanitizer", FAKE_SANITIZER.format(python=sys.executable))
        self.saved = sanitize.find_sanitizer
        sanitize.find_sanitizer = lambda given: str(tool)

    def tearDown(self):
        sanitize.find_sanitizer = self.saved
        self.tmp.cleanup()

    def graded(self, runs, exercise_ok=True, always=False):
        spec = {"exercise": [{"name": "a", "ok": exercise_ok}]}
        e = entry(self.d, fake_check(self.d, "check", spec), sanitize_runs=runs,
                  sanitize_tools=["memcheck", "racecheck"])
        # the lesson program is the stand-in check too; the stand-in sanitizer never runs it
        always = ("demo/01_demo",) if always else ()
        return grade.grade_lesson(e, self.d, 2, grade.Grading(sanitize=True, sanitize_always=always, check_times={}))

    def test_clean_program_passes(self):
        r = self.graded([["--n", "37"], ["--n", "100"]])
        c = r.sanitizer_cases()[0]
        self.assertTrue(c.passed)
        self.assertEqual(c.data["runs"], 4)
        self.assertEqual(r.score, grade.POINTS_PER_LESSON)
        self.assertIn("sanitizer", grade.graded_line(r))

    def test_a_race_fails_the_case_and_names_the_tool(self):
        r = self.graded([["--n", "37"], ["--racy"]])
        c = r.sanitizer_cases()[0]
        self.assertFalse(c.passed)
        self.assertEqual(c.data["failed_tools"], ["racecheck"])
        self.assertIn("Race reported between", c.message)
        self.assertAlmostEqual(r.score, grade.POINTS_PER_LESSON * (1 - grade.SANITIZE_SHARE))
        self.assertEqual(grade.caught_by(r), "sanitizer: racecheck")

    def test_not_run_while_an_exercise_case_fails_unless_asked(self):
        r = self.graded([["--racy"]], exercise_ok=False)
        c = r.sanitizer_cases()[0]
        self.assertTrue(c.data["not_run"])
        self.assertEqual(r.score, 0.0)
        r = self.graded([["--racy"]], exercise_ok=False, always=True)
        self.assertEqual(r.sanitizer_cases()[0].data["failed_tools"], ["racecheck"])

    def test_bank_rounds_run_it_only_where_the_checks_left_full_marks(self):
        e = entry(self.d, fake_check(self.d, "check", {"exercise": [{"name": "a"}]}), sanitize_runs=[["--racy"]],
                  sanitize_tools=["racecheck"])
        bank = grade.Grading(sanitize=True, check_times={}, sanitize_caught=False)
        slow = lesson([case("a", "exercise", True), case("p", "performance", False, "fail")])
        self.assertFalse(grade.sanitizer_will_run(e, slow, bank))
        grade.add_sanitizer_case(e, self.d, slow, bank)
        self.assertTrue(slow.sanitizer_cases()[0].data["not_run"])
        self.assertIn("already took points", slow.sanitizer_cases()[0].message)
        self.assertEqual(grade.caught_by(slow), "[performance] p")
        full = lesson([case("a", "exercise", True), case("p", "performance", True, "pass")])
        self.assertTrue(grade.sanitizer_will_run(e, full, bank))
        grade.add_sanitizer_case(e, self.d, full, bank)
        self.assertEqual(full.sanitizer_cases()[0].data["failed_tools"], ["racecheck"])
        race = lesson([case("a", "exercise", False)])
        self.assertFalse(grade.sanitizer_will_run(e, race, bank))
        self.assertTrue(grade.sanitizer_will_run(e, race, grade.Grading(sanitize=True, sanitize_caught=False,
                                                                       sanitize_always=("demo/01_demo",))))
        # grading a student: the sanitizer runs whenever the [exercise] cases pass
        self.assertTrue(grade.sanitizer_will_run(e, slow, grade.Grading(sanitize=True)))

    def test_bank_rounds_build_only_the_programs_the_sanitizer_runs(self):
        slow = entry(self.d, fake_check(self.d, "slow", {"exercise": [{"name": "a"}],
                                                          "performance": [{"name": "p", "ok": False}]}),
                     lesson="01_slow", sanitize_runs=[["--n", "1"]], sanitize_tools=["memcheck"])
        fast = entry(self.d, fake_check(self.d, "fast", {"exercise": [{"name": "a"}],
                                                          "performance": [{"name": "p"}]}),
                     lesson="02_fast", sanitize_runs=[["--n", "1"]], sanitize_tools=["memcheck"])
        built, programs = [], []
        saved = grade.build_lesson, grade.catch_major, grade.build_programs
        grade.build_lesson = lambda entry, build_dir, logs, program=False: programs.append(program)
        grade.catch_major = lambda build_dir: 2
        grade.build_programs = lambda build_dir, entries, logs, timer: built.extend(e["lesson"] for e in entries)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                results = grade.grade_entries("lessons", [slow, fast], self.d, self.d / "out", "demo", run_jobs=2,
                                              grading=grade.Grading(sanitize=True, check_times={},
                                                                    sanitize_caught=False, programs_built=()))
        finally:
            grade.build_lesson, grade.catch_major, grade.build_programs = saved
        self.assertEqual(programs, [False, False])
        self.assertEqual(built, ["02_fast"])
        # after a parallel build that made every target, no lesson is built again
        programs.clear()
        grade.build_lesson = lambda entry, build_dir, logs, program=False: programs.append(program)
        grade.catch_major = lambda build_dir: 2
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                again = grade.grade_entries("lessons", [fast], self.d, self.d / "out2", "demo",
                                            grading=grade.Grading(sanitize=True, check_times={}, prebuilt=True))
        finally:
            grade.build_lesson, grade.catch_major = saved[0], saved[1]
        self.assertEqual(programs, [])
        self.assertEqual(again[0].score, grade.POINTS_PER_LESSON)
        self.assertTrue(results[0].sanitizer_cases()[0].data["not_run"])
        self.assertTrue(results[1].sanitizer_cases()[0].passed)
        self.assertEqual(results[1].score, grade.POINTS_PER_LESSON)

    def test_pristine_and_bank_gradings_skip_the_performance_run_of_a_failing_lesson(self):
        failing = entry(self.d, fake_check(self.d, "failing", {"exercise": [{"name": "a", "ok": False}],
                                                                "performance": [{"name": "p"}]}), lesson="01_failing")
        slow = entry(self.d, fake_check(self.d, "slow", {"exercise": [{"name": "a"}],
                                                          "performance": [{"name": "p", "ok": False}]}),
                     lesson="02_slow")
        saved = grade.build_lesson, grade.catch_major
        grade.build_lesson = lambda entry, build_dir, logs, program=False: None
        grade.catch_major = lambda build_dir: 2
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                bank = grade.grade_entries("lessons", [failing, slow], self.d, self.d / "bank", "demo", run_jobs=2,
                                           grading=grade.Grading(check_times={}, perf_caught=False))
                student = grade.grade_entries("lessons", [failing], self.d, self.d / "student", "demo",
                                              grading=grade.Grading(check_times={}))
        finally:
            grade.build_lesson, grade.catch_major = saved
        skipped = bank[0].performance_cases()
        self.assertEqual(len(skipped), 1)
        self.assertTrue(skipped[0].data["not_run"])
        self.assertFalse(skipped[0].passed)
        self.assertIn("not run", grade.perf_line(skipped[0]))
        # the shares stay as they are when the run is made: the same score either way
        self.assertAlmostEqual(bank[0].score, student[0].score)
        self.assertNotIn("performance", grade.caught_by(bank[0]))
        # a lesson whose [exercise] cases pass is timed as ever, and its failing gate caught
        self.assertNotIn("not_run", bank[1].performance_cases()[0].data)
        self.assertIn("[performance]", grade.caught_by(bank[1]))
        self.assertFalse(bank[1].full_marks)

    def test_lessons_without_sanitize_runs_have_no_case(self):
        spec = {"exercise": [{"name": "a"}]}
        e = entry(self.d, fake_check(self.d, "check", spec))
        r = grade.grade_lesson(e, self.d, 2, grade.Grading(sanitize=True, check_times={}))
        self.assertEqual(r.sanitizer_cases(), [])
        self.assertEqual(r.score, grade.POINTS_PER_LESSON)


def wrong_file(path, lesson, caught_by="matches", kind="edges", body="// body\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"// wrong: {lesson}: a mistake in {path.stem}\n// caught by: {caught_by}\n// kind: {kind}\n{body}")
    return path


def wrong_diff(path, lesson, marker):
    """A bank file (.diff) at `path`: the lesson's exercise of this repository with the line
    `marker` added at its end."""
    exercise = wrong_bank.read_text(wrong_bank.REPO / wrong_bank.base_file(wrong_bank.REPO, lesson, "exercise"))
    text = f"// wrong: {lesson}: a mistake in {path.stem}\n// caught by: matches\n// kind: edges\n{exercise}{marker}\n"
    _, diff = wrong_bank.to_diff(text, wrong_bank.REPO)
    wrong_bank.write_text(path, diff)
    return path


class PrepareTargets(unittest.TestCase):
    def targets(self, programs):
        """The targets prepare() hands to its one parallel build, for two trees of two lessons."""
        def manifest(build_dir, tree, only):
            return [{"tree": tree, "track": "demo", "lesson": n, "check_target": f"check-{tree}-{n}",
                     "target": f"{tree}-{n}"} for n in ("01_a", "02_b")]
        seen = []
        saved = grade.needs_configure, grade.load_manifest, grade.build_all
        grade.needs_configure = lambda *a: False
        grade.load_manifest = manifest
        grade.build_all = lambda build_dir, targets, jobs, log_path: (seen.extend(targets), (0, False))[1]
        try:
            with tempfile.TemporaryDirectory() as d, contextlib.redirect_stdout(io.StringIO()):
                _, ok = grade.prepare(Path(d), ["lessons", "solutions"], [], jobs=2, logs=Path(d), programs=programs)
        finally:
            grade.needs_configure, grade.load_manifest, grade.build_all = saved
        self.assertTrue(ok)
        return [t for t in seen if not t.startswith("check-")]

    def test_lesson_programs_for_every_lesson_some_trees_or_some_lessons(self):
        self.assertEqual(self.targets(False), [])
        self.assertEqual(self.targets(True), ["lessons-01_a", "lessons-02_b", "solutions-01_a", "solutions-02_b"])
        self.assertEqual(self.targets(("solutions",)), ["solutions-01_a", "solutions-02_b"])
        self.assertEqual(self.targets(("demo/02_b",)), ["lessons-02_b", "solutions-02_b"])
        self.assertEqual(self.targets(()), [])


class WrongBankPieces(unittest.TestCase):
    def test_files_rounds_and_wrong_only(self):
        with tempfile.TemporaryDirectory() as bank:
            bank = Path(bank)
            for name in ("b.diff", "a.diff", "c.diff", "not_a_bank_file.cu"):
                wrong_file(bank / "sgemm" / "05_shared_tiling" / name, "sgemm/05_shared_tiling")
            wrong_file(bank / "reduction" / "05_unroll_last_warp" / "x.diff", "reduction/05_unroll_last_warp")
            names = ["sgemm/05_shared_tiling", "sgemm/06_granularity", "reduction/05_unroll_last_warp"]
            files = grade.wrong_bank_files(bank, names)
            self.assertEqual(list(files), ["sgemm/05_shared_tiling", "reduction/05_unroll_last_warp"])
            self.assertEqual([p.name for p in files["sgemm/05_shared_tiling"]], ["a.diff", "b.diff", "c.diff"])
            rounds = grade.wrong_bank_rounds(files)
            self.assertEqual([sorted(r) for r in rounds], [["reduction/05_unroll_last_warp", "sgemm/05_shared_tiling"],
                                                           ["sgemm/05_shared_tiling"], ["sgemm/05_shared_tiling"]])
            self.assertEqual(rounds[1]["sgemm/05_shared_tiling"].name, "b.diff")
            self.assertEqual(list(grade.wrong_bank_files(bank, names, ["sgemm/05"])), ["sgemm/05_shared_tiling"])
            self.assertEqual(list(grade.wrong_bank_files(bank, names, ["reduction/05_unroll_last_warp"])),
                             ["reduction/05_unroll_last_warp"])
            self.assertEqual(grade.wrong_bank_rounds({}), [])

    def test_verdicts(self):
        with tempfile.TemporaryDirectory() as d:
            path = wrong_file(Path(d) / "x.cu", "demo/01_demo")
            caught = lesson([case("demo/01_demo: matches", "exercise", False)])
            row, problem = grade.wrong_row(caught, path, sanitize=False)
            self.assertEqual((row["verdict"], problem), ("caught", None))
            self.assertEqual(row["caught_by"], "[exercise] matches")
            self.assertEqual(row["mistake"], "a mistake in x")
            full = lesson([case("matches", "exercise", True)])
            row, problem = grade.wrong_row(full, path, sanitize=False)
            self.assertEqual(row["verdict"], "NOT CAUGHT")
            self.assertIn("scores full marks", problem)
            broken = lesson([], "compile_error")
            self.assertEqual(grade.wrong_row(broken, path, False)[0]["caught_by"], "compile error")
            self.assertIn("does not compile", grade.wrong_row(broken, path, False)[1])
            row, problem = grade.wrong_row(lesson([], "skipped"), path, False)
            self.assertEqual((row["verdict"], problem), ("skipped", None))
            for status, word in (("crashed", "crash"), ("timeout", "time-out")):
                self.assertEqual(grade.wrong_row(lesson([], status), path, False)[0]["caught_by"], word)
            # a race: with --sanitize the sanitizer case must catch it, an [exercise] case is not enough
            race = wrong_file(Path(d) / "race.cu", "demo/01_demo", "sanitizer: racecheck", "race")
            missed = lesson([case("matches", "exercise", False),
                             grade.CaseResult("cs", "sanitizer", True, data={"failed_tools": []})])
            self.assertEqual(grade.wrong_row(missed, race, True)[0]["verdict"], "RACE MISSED")
            found = lesson([case("matches", "exercise", True),
                            grade.CaseResult("cs", "sanitizer", False, data={"failed_tools": ["racecheck"]})])
            row, problem = grade.wrong_row(found, race, True)
            self.assertEqual((row["verdict"], row["caught_by"], problem), ("caught", "sanitizer: racecheck", None))
            # declared for the sanitizer or a [performance] case, where neither could run: not checked
            self.assertEqual(grade.wrong_row(full, race, False)[0]["verdict"], "not checked (needs --sanitize)")
            slow = wrong_file(Path(d) / "slow.cu", "demo/01_demo", "[performance]", "previous-lesson")
            unscored = lesson([case("matches", "exercise", True), case("fast", "performance", True, "unscored")])
            self.assertTrue(grade.wrong_row(unscored, slow, False)[0]["verdict"].startswith("not checked"))

    def test_table(self):
        rows = [{"lesson": "demo/01_demo", "file": "x.cu", "mistake": "a | b", "kind": "edges",
                 "caught_by": "[exercise] m", "declared": "m", "verdict": "caught"},
                {"lesson": "demo/01_demo", "file": "y.cu", "mistake": "c", "kind": "race",
                 "caught_by": "nothing (full marks)", "declared": "sanitizer: racecheck", "verdict": "NOT CAUGHT"}]
        table = grade.wrong_bank_table(rows)
        lines = table.splitlines()
        self.assertEqual(lines[0], "| lesson | mistake | kind | caught by | declared |")
        self.assertIn("`x.cu`: a \\| b", lines[2])
        self.assertIn("NOT CAUGHT: nothing (full marks)", lines[3])
        self.assertEqual(grade.wrong_bank_tally(rows), "wrong-bank self-test: 1 caught, 1 failed (2 known-wrong "
                                                       "submission(s))")


class SelfTestWithBank(unittest.TestCase):
    """self_test() end to end with the builds stubbed out: stand-in check programs that
    fail when the graded source holds a known-wrong submission's marker."""

    LESSONS = (("reduction", "05_unroll_last_warp", "unroll_last_warp.cu"), ("sgemm", "01_naive", "naive.cu"))

    def run_self_test(self, bank_files, spoil=None, **kw):
        """The self-test over a bank of {(track, lesson): [(submission's name, marker)]};
        spoil(bank dir) may change its files first."""
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            bank = d / "bank"
            for (track, lesson), files in bank_files.items():
                for name, marker in files:
                    wrong_diff(bank / track / lesson / Path(name).with_suffix(".diff"), f"{track}/{lesson}", marker)
            if spoil:
                spoil(bank)
            (d / "build").mkdir()
            (d / "build" / "tut_build_info.json").write_text('{"catch_major": 2}')
            calls = []

            def fake_prepare(build_dir, trees, only, lessons_dir=None, tracks=None, solutions_dir=None, jobs=None,
                             logs=None, timer=None, programs=False):
                calls.append((Path(build_dir).name, list(only)))
                Path(build_dir).mkdir(parents=True, exist_ok=True)
                (Path(build_dir) / "tut_build_info.json").write_text('{"catch_major": 2}')
                out = {}
                for tree in trees:
                    root = Path(lessons_dir) if lessons_dir else grade.REPO / tree
                    entries = []
                    for track, lesson, src in self.LESSONS:
                        name = f"{track}/{lesson}"
                        if only and name not in only:
                            continue
                        source = root / track / lesson / src
                        spec = {"exercise": [{"name": "matches", "ok": tree == "solutions"}],
                                "performance": [], "baseline": [{"name": "refuses"}],
                                "source": str(source), "wrong_if": "MARK", "wrong_fails": ["matches"]}
                        if tree == "lessons" and lessons_dir:  # the bank's copy: the lessons pass unless marked
                            spec["exercise"] = [{"name": "matches"}]
                        exe = fake_check(d, f"check-{Path(build_dir).name}-{tree}-{track}-{lesson}", spec)
                        entries.append(entry(d, exe, lesson, track, tree=tree, source=str(source)))
                    out[tree] = entries
                return out, True

            self.events = []

            class FakeBuild:  # a BackgroundBuild that is done at once
                targets, jobs, seconds, waited = 2, 1, 0.0, 0.0

                def __init__(build, name):
                    build.name = name

                def wait(build):
                    self.events.append(("wait", build.name))

                def stop(build):
                    self.events.append(("stop", build.name))

            def fake_background(build_dir, lessons_dir, tracks, targets, jobs, log_path, niceness=10):
                self.events.append(("background", Path(build_dir).name, list(targets)))
                return FakeBuild(Path(build_dir).name)

            real_grade_entries = grade.grade_entries

            def spy(tree, entries, build_dir, out_dir, title, *args, **kwargs):
                self.events.append(("grade", title))
                return real_grade_entries(tree, entries, build_dir, out_dir, title, *args, **kwargs)

            saved = (grade.prepare, grade.build_lesson, grade.gpu_name, grade.start_background_build,
                     grade.grade_entries)
            grade.prepare = fake_prepare
            grade.build_lesson = lambda entry, build_dir, logs, program=False: None
            grade.gpu_name = lambda: self.gpu
            grade.start_background_build = fake_background
            grade.grade_entries = spy
            console = io.StringIO()
            try:
                with contextlib.redirect_stdout(console):
                    rc = grade.self_test(d / "build", d / "out", [], ["sgemm", "reduction"], 1, 2,
                                         bank_dir=bank, **kw)
            finally:
                (grade.prepare, grade.build_lesson, grade.gpu_name, grade.start_background_build,
                 grade.grade_entries) = saved
            table = (d / "out" / "wrong-bank.md").read_text() if (d / "out" / "wrong-bank.md").exists() else None
            return rc, console.getvalue(), table, calls

    gpu = None

    def test_caught_and_missed_submissions(self):
        bank = {("reduction", "05_unroll_last_warp"): [("a_caught.cu", "MARK"), ("b_missed.cu", "// fine")],
                ("sgemm", "01_naive"): [("only.cu", "MARK")]}
        rc, out, table, calls = self.run_self_test(bank)
        self.assertEqual(rc, 1)
        self.assertIn("grader self-test: 4 passed, 0 failed", out)
        self.assertIn("SELF-TEST FAILURE: reduction/05_unroll_last_warp: b_missed.cu scores full marks", out)
        self.assertIn("wrong-bank self-test: 2 caught, 1 failed (3 known-wrong submission(s))", out)
        # round 1 grades both lessons, round 2 the one with a second file, each in its copy's build dir
        self.assertEqual(calls[1:], [("build", ["reduction/05_unroll_last_warp", "sgemm/01_naive"]),
                                     ("build-2", ["reduction/05_unroll_last_warp"])])
        rows = [line for line in table.splitlines() if line.startswith("| reduction") or line.startswith("| sgemm")]
        self.assertEqual(len(rows), 3)
        self.assertIn("[exercise] matches", rows[0])
        self.assertIn("NOT CAUGHT", rows[1])
        self.assertTrue(rows[2].startswith("| sgemm/01_naive"))

    def test_each_round_builds_while_the_one_before_is_graded(self):
        bank = {("reduction", "05_unroll_last_warp"): [("a.cu", "MARK"), ("b.cu", "MARK"), ("c.cu", "MARK")],
                ("sgemm", "01_naive"): [("only.cu", "MARK")]}
        # the check targets of the lessons the round grades (the stand-in manifest names them so)
        both, one = ["check-05_unroll_last_warp", "check-01_naive"], ["check-05_unroll_last_warp"]
        self.gpu = "Fake GPU"
        try:
            rc, out, _, calls = self.run_self_test(bank)
        finally:
            self.gpu = None
        self.assertEqual(rc, 0, out)
        starts = [e for e in self.events if e[0] in ("background", "grade")]
        # on a GPU, rounds 1 and 2 build while both trees are graded; round r + 1 while round r
        # is, in the other copy (round r - 1's, done by then)
        self.assertEqual(starts, [("background", "build", both), ("background", "build-2", one),
                                  ("grade", "grade of lessons tree (lessons)"),
                                  ("grade", "grade of solutions tree (solutions)"),
                                  ("grade", "wrong bank, round 1"), ("background", "build", one),
                                  ("grade", "wrong bank, round 2"), ("grade", "wrong bank, round 3")])
        self.assertEqual([c[0] for c in calls[1:]], ["build", "build-2", "build"])
        # a round is graded only once its build is done
        for r, name in ((1, "build"), (2, "build-2"), (3, "build")):
            graded = self.events.index(("grade", f"wrong bank, round {r}"))
            self.assertIn(("wait", name), self.events[:graded])
        # without a GPU nothing is built ahead: round 1 starts with the bank
        rc, out, _, _ = self.run_self_test(bank)
        starts = [e for e in self.events if e[0] in ("background", "grade")]
        self.assertEqual(starts[:3], [("grade", "grade of lessons tree (lessons)"),
                                      ("grade", "grade of solutions tree (solutions)"), ("background", "build", both)])

    def test_timing_is_quiet(self):
        timed = entry(Path(self.d), fake_check(self.d, "timed", {"exercise": [{"name": "a"}],
                                                                  "performance": [{"name": "p"}]}), lesson="01_timed")
        caught = entry(Path(self.d), fake_check(self.d, "caught", {"exercise": [{"name": "a", "ok": False}],
                                                                    "performance": [{"name": "p"}]}),
                       lesson="02_caught")
        quiet = []

        @contextlib.contextmanager
        def pause_builds():
            quiet.append("paused")
            yield
            quiet.append("resumed")

        saved = grade.build_lesson, grade.catch_major
        grade.build_lesson = lambda entry, build_dir, logs, program=False: None
        grade.catch_major = lambda build_dir: 2
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                for entries in ([timed, caught], [caught]):
                    grade.grade_entries("lessons", entries, self.d, Path(self.d) / "out", "demo", run_jobs=2,
                                        grading=grade.Grading(check_times={}, perf_caught=False, quiet=pause_builds))
        finally:
            grade.build_lesson, grade.catch_major = saved
        # around the [performance] runs; not at all when none is made
        self.assertEqual(quiet, ["paused", "resumed"])

    def test_background_build_runs_the_build_and_is_waited_for(self):
        d = Path(self.d)
        bin_dir = d / "bin"
        bin_dir.mkdir()
        write_exe(bin_dir / "cmake", f"#!/bin/sh\nsleep 0.3\necho \"$@\" > {d / 'args.txt'}\n")
        saved = os.environ["PATH"]
        os.environ["PATH"] = f"{bin_dir}:{saved}"
        try:
            build = grade.BackgroundBuild(d / "build", ["check-a", "prog-a"], 3, d / "build.log")
            build.wait()
            build.wait()  # a second wait is a no-op
        finally:
            os.environ["PATH"] = saved
        self.assertEqual((d / "args.txt").read_text().split(),
                         ["--build", str(d / "build"), "--parallel", "3", "--target", "check-a", "prog-a"])
        self.assertGreaterEqual(build.seconds, 0.3)
        self.assertEqual(build.proc.returncode, 0)
        # a build dir that needs configuring is configured first, in the background too,
        # and a Ninja build keeps going past a failing target
        write_exe(bin_dir / "cmake", f"#!/bin/sh\necho \"$@\" >> {d / 'calls.txt'}\n")
        os.environ["PATH"] = f"{bin_dir}:{saved}"
        try:
            build = grade.BackgroundBuild(d / "build", ["check-a"], 2, d / "build.log",
                                          configure=["cmake", "-S", "src", "-B", str(d / "build"), "-G", "Ninja"])
            build.wait()
        finally:
            os.environ["PATH"] = saved
        self.assertEqual((d / "calls.txt").read_text().splitlines(),
                         [f"-S src -B {d / 'build'} -G Ninja",
                          f"--build {d / 'build'} --parallel 2 --target check-a -- -k 0"])

    @unittest.skipUnless(Path("/proc/self/stat").exists(), "pausing lists processes through /proc")
    def test_a_paused_build_stops_its_every_process(self):
        d = Path(self.d)
        bin_dir = d / "bin"
        bin_dir.mkdir()
        ticks = d / "ticks"
        # the work is done by a grandchild, as a compiler under ninja under cmake
        write_exe(bin_dir / "cmake", f"#!/bin/sh\nsh -c 'for i in $(seq 1 40); do echo x >> {ticks}; sleep 0.05; done'\n")
        saved = os.environ["PATH"]
        os.environ["PATH"] = f"{bin_dir}:{saved}"
        try:
            build = grade.BackgroundBuild(d / "build", ["t"], 1, d / "build.log")
            time.sleep(0.3)
            build.pause()
            time.sleep(0.1)
            paused_at = ticks.read_text().count("x")
            time.sleep(0.4)
            self.assertEqual(ticks.read_text().count("x"), paused_at)
            build.resume()
            build.wait()
        finally:
            os.environ["PATH"] = saved
        self.assertEqual(ticks.read_text().count("x"), 40)
        self.assertEqual(build.proc.returncode, 0)

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.d = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def test_races_get_the_sanitizer_whatever_else_catches_them(self):
        bank = {("reduction", "05_unroll_last_warp"): [("a.cu", "MARK")], ("sgemm", "01_naive"): [("b.cu", "MARK")]}
        seen = []
        real = grade.grade_entries

        def spy(tree, entries, build_dir, out_dir, title, run_jobs=1, timer=None, show_reports=True, grading=None,
                show_table=True):
            if title.startswith("wrong bank"):
                seen.append(grading)
            return real(tree, entries, build_dir, out_dir, title, run_jobs, timer, show_reports, grading, show_table)

        saved = grade.wrong_header
        grade.grade_entries = spy
        grade.wrong_header = lambda path: {"kind": "race" if Path(path).name == "a.cu" else "edges",
                                           "caught_by": "x", "mistake": "y"}
        try:
            self.run_self_test(bank)
        finally:
            grade.grade_entries, grade.wrong_header = real, saved
        self.assertEqual([g.sanitize_always for g in seen], [("reduction/05_unroll_last_warp",)])
        # a submission needs catching once; its program is built only if the sanitizer runs
        self.assertEqual([(g.sanitize_caught, g.programs_built) for g in seen],
                         [(False, ("reduction/05_unroll_last_warp",))])

    def test_all_caught_and_subsets(self):
        bank = {("reduction", "05_unroll_last_warp"): [("a.cu", "MARK")], ("sgemm", "01_naive"): [("b.cu", "MARK")]}
        rc, out, _, _ = self.run_self_test(bank)
        self.assertEqual(rc, 0)
        self.assertIn("wrong-bank self-test: 2 caught, 0 failed", out)
        rc, out, _, calls = self.run_self_test(bank, wrong_only=["sgemm/01"])
        self.assertEqual(calls[1:], [("build", ["sgemm/01_naive"])])
        rc, out, table, calls = self.run_self_test(bank, wrong_bank=False)
        self.assertEqual((rc, table, len(calls)), (0, None, 1))
        rc, out, table, _ = self.run_self_test({})
        self.assertEqual(rc, 0)
        self.assertIn("no known-wrong submission", out)

    def test_a_bank_file_that_does_not_apply_fails_and_the_others_are_graded(self):
        bank = {("reduction", "05_unroll_last_warp"): [("a.cu", "MARK")], ("sgemm", "01_naive"): [("b.cu", "MARK")]}

        def spoil(folder):
            path = folder / "sgemm" / "01_naive" / "b.diff"
            path.write_text(path.read_text().replace("\n ", "\n drifted ", 1))  # hunk 1's first context line

        rc, out, table, _ = self.run_self_test(bank, spoil=spoil)
        self.assertEqual(rc, 1)
        self.assertRegex(out, r"SELF-TEST FAILURE: sgemm/01_naive: \S*/bank/sgemm/01_naive/b\.diff: "
                              r"hunk 1 .*, line \d+: lessons/sgemm/01_naive/naive\.cu line \d+ should read")
        self.assertIn("wrong-bank self-test: 1 caught, 0 failed (1 known-wrong submission(s))", out)
        self.assertIn("| reduction/05_unroll_last_warp | `a.cu`: a mistake in a |", table)


class Calibrate(unittest.TestCase):
    def test_reports_go_to_perf_gates(self):
        got = {}
        fake = types.ModuleType("perf_gates")
        def write_thresholds(reports, gpu_name, out_path):
            got.update(reports=reports, gpu=gpu_name, out=out_path)
            return {"lessons": {str(reports[0].get("gate") or reports[0].get("lesson")): {
                "threshold": None, "reason": "too close to gate reliably"}}}
        fake.write_thresholds = write_thresholds
        spec = {"performance": [{"name": "fast", "ok": False}], "exercise": [{"name": "never run"}]}
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            (d / "tut_build_info.json").write_text('{"catch_major": 2}')
            exe = fake_check(d, "check", spec)
            e = entry(d, exe, tree="solutions")
            none = entry(d, fake_check(d, "check-none", {"exercise": [{"name": "a"}]}), "02_none", tree="solutions")
            saved = grade.prepare, grade.build_lesson, grade.gpu_name, sys.modules.get("perf_gates")
            grade.prepare = lambda *a, **kw: ({"solutions": [e, none]}, True)
            grade.build_lesson = lambda entry, build_dir, logs, program=False: None
            grade.gpu_name = lambda: "NVIDIA H100 80GB HBM3"
            sys.modules["perf_gates"] = fake
            try:
                with contextlib.redirect_stdout(io.StringIO()) as out:
                    rc = grade.calibrate(d, None, [], [], 1, 3)
                sys.modules["perf_gates"] = None  # import perf_gates now raises ImportError
                with self.assertRaises(SystemExit) as ctx:
                    grade.calibrate(d, None, [], [], 1, 3)
            finally:
                grade.prepare, grade.build_lesson, grade.gpu_name = saved[:3]
                if saved[3] is None:
                    sys.modules.pop("perf_gates", None)
                else:
                    sys.modules["perf_gates"] = saved[3]
        self.assertEqual(rc, 0)
        self.assertEqual(len(got["reports"]), 3)  # one case, three runs; the lesson without one adds nothing
        self.assertTrue(all(r["status"] == "unscored" for r in got["reports"]))  # calibration never fails
        self.assertEqual(got["gpu"], "NVIDIA H100 80GB HBM3")
        self.assertTrue(got["out"].endswith("common/checks/thresholds/NVIDIA_H100_80GB_HBM3.json"))
        self.assertIn("fast: ratios 0.8 0.8 0.8", out.getvalue())
        self.assertIn("unscored: too close to gate reliably", out.getvalue())  # each gate's outcome, then the next step
        self.assertIn("--confirm-gates 20", out.getvalue())
        self.assertIn("perf_gates.py", str(ctx.exception))

    def test_without_a_gpu_it_skips(self):
        fake = types.ModuleType("perf_gates")
        fake.write_thresholds = lambda *a: None
        saved = grade.gpu_name, sys.modules.get("perf_gates")
        grade.gpu_name = lambda: None
        sys.modules["perf_gates"] = fake
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(grade.calibrate("/nonexistent", None, [], [], 1, 1), grade.SKIP_EXIT)
        finally:
            grade.gpu_name = saved[0]
            if saved[1] is None:
                sys.modules.pop("perf_gates", None)
            else:
                sys.modules["perf_gates"] = saved[1]



class ConfirmGates(unittest.TestCase):
    def test_a_run_passes_fails_or_says_why_not(self):
        judged = {"status": "pass", "ratio": 0.9}
        self.assertEqual(grade.gate_outcome("ran", [judged]), ("pass", [0.9]))
        self.assertEqual(grade.gate_outcome("ran", [judged, {"status": "fail", "ratio": 0.5}])[0], "fail")
        self.assertEqual(grade.gate_outcome("ran", [{"status": "unscored", "ratio": 0.9}]), ("unscored", []))
        self.assertEqual(grade.gate_outcome("ran", []), ("unscored", []))
        self.assertEqual(grade.gate_outcome("crashed", [judged])[0], "crashed")
        # an unscored lesson run beside a gate: its ratio in the gate's measure and size
        alike = {"status": "unscored", "ratio": 0.4, "measure": "% of x", "size": "N = 1"}
        self.assertEqual(grade.gate_outcome("ran", [alike], {"measure": "% of x", "size": "N = 1"}),
                         ("unscored", [0.4]))
        self.assertEqual(grade.gate_outcome("ran", [alike], {"measure": "% of y", "size": "N = 1"}),
                         ("unscored", []))

    def test_every_solution_run_must_pass_and_every_submission_run_fail(self):
        gates = {"t/01": {"measure": "% of x", "size": "N = 1", "threshold": 0.7},
                 "t/02": {"measure": "% of x", "size": "N = 1", "threshold": 0.7},
                 "t/03": {"measure": "% of x", "size": "N = 1", "threshold": 0.7}}
        subs = {"t/01": Path("previous_lesson.diff"), "t/02": Path("previous_lesson.diff"), "t/03": None}
        runs = {("t/01", "solution"): [("pass", [0.9]), ("pass", [0.8])],
                ("t/01", "submission"): [("fail", [0.5]), ("fail", [0.4])],
                ("t/02", "solution"): [("pass", [0.9]), ("fail", [0.6])],
                ("t/02", "submission"): [("fail", [0.5]), ("pass", [0.75])],
                ("t/03", "solution"): [("pass", [0.9]), ("pass", [0.9])]}
        rows, problems = grade.gate_confirmation_rows(runs, gates, subs, 2)
        self.assertEqual([r["lesson"] for r in rows], ["t/01", "t/02", "t/03"])
        self.assertEqual((rows[0]["solution_passed"], rows[0]["submission_failed"]), (2, 2))
        self.assertEqual(len([p for p in problems if p.startswith("t/01")]), 0)
        self.assertIn("t/02: the solution passed its gate in 1 of 2 run(s)", problems)
        self.assertIn("t/02: previous_lesson.diff failed the gate in 1 of 2 run(s)", problems)
        self.assertTrue(any(p.startswith("t/03: the bank has no submission") for p in problems))
        table = grade.gate_confirmation_table(rows, "GPU")
        self.assertIn("| t/01 | % of x, N = 1 | 0.700 | 2/2 | 0.800 .. 0.900 .. 0.900 | `previous_lesson.diff` | 2/2 |",
                      table)
        # the previous lesson's solution, gated alike, must fail this lesson's gate too
        gates2 = {"t/04_a": {"measure": "% of x", "size": "N = 1", "threshold": 0.5},
                  "t/05_b": {"measure": "% of x", "size": "N = 1", "threshold": 0.7}}
        runs2 = {("t/04_a", "solution"): [("pass", [0.72]), ("pass", [0.6])],
                 ("t/05_b", "solution"): [("pass", [0.9]), ("pass", [0.9])],
                 ("t/05_b", "submission"): [("fail", [0.4]), ("fail", [0.4])]}
        rows, problems = grade.gate_confirmation_rows(runs2, gates2, {"t/04_a": None, "t/05_b": Path("p.diff")}, 2)
        self.assertIn("t/05_b: t/04_a's solution, measured alike, reached this gate in 1 of 2 run(s)", problems)
        self.assertIn("t/04_a's solution passed 1/2", grade.gate_confirmation_table(rows, "GPU"))
        # an unscored gate (named by --only) records its ratios and holds nothing
        rows, problems = grade.gate_confirmation_rows(
            {("t/06", "solution"): [("unscored", [0.9])] * 2, ("t/06", "submission"): [("unscored", [0.8])] * 2},
            {"t/06": {"measure": "% of x", "size": "N = 1", "threshold": None}}, {"t/06": Path("p.diff")}, 2)
        self.assertEqual(problems, [])
        self.assertEqual(rows[0]["submission_ratios"], [0.8, 0.8])
        self.assertIn("| t/06 | % of x, N = 1 | unscored | - | 0.900 .. 0.900 .. 0.900 | `p.diff` | - | 0.800 ..",
                      grade.gate_confirmation_table(rows, "GPU"))
        # a lesson that cannot run here (all runs skipped) is listed, not a problem
        rows, problems = grade.gate_confirmation_rows({("t/01", "solution"): [("skipped", [])] * 2},
                                                      {"t/01": gates["t/01"]}, {"t/01": subs["t/01"]}, 2)
        self.assertEqual(problems, [])
        self.assertEqual(rows[0]["other"], ["skipped"])

    def test_merged_confirmations_judge_every_run_against_todays_threshold(self):
        def conf(date, threshold, sol, sub, earlier=()):
            return {"gpu": "Test GPU", "date": date, "runs": len(sol), "lessons": [
                {"lesson": "t/05_b", "measure": "% of x", "size": "N = 1", "threshold": threshold,
                 "runs": len(sol), "solution_passed": len(sol), "solution_ratios": list(sol),
                 "submission": "previous_lesson.diff", "submission_failed": len(sub), "submission_ratios": list(sub),
                 "other": [], "previous_lesson": "t/04_a" if earlier else None, "previous_lesson_passed": 0,
                 "previous_lesson_runs": len(earlier), "previous_lesson_ratios": list(earlier)}]}
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            (d / "thresholds").mkdir()
            (d / "thresholds" / "Test_GPU.json").write_text(json.dumps(
                {"gpu": "Test GPU", "lessons": {"t/05_b": {"measure": "% of x", "size": "N = 1", "threshold": 0.6}}}))
            # the older runs were judged against 0.5: one submission run and one earlier solution run reach 0.6
            (d / "a.json").write_text(json.dumps(conf("2026-01-01T00:00Z", 0.5, [0.9, 0.8], [0.55, 0.62], [0.58])))
            (d / "b.json").write_text(json.dumps(conf("2026-01-02T00:00Z", 0.6, [0.85], [0.4], [0.61])))
            saved = grade.THRESHOLDS_DIR
            grade.THRESHOLDS_DIR = d / "thresholds"
            try:
                with contextlib.redirect_stdout(io.StringIO()) as printed:
                    rc = grade.merge_gate_confirmations([d / "a.json", d / "b.json"], d / "out")
            finally:
                grade.THRESHOLDS_DIR = saved
            self.assertEqual(rc, 1)
            self.assertIn("t/05_b: previous_lesson.diff failed the gate in 2 of 3 run(s)", printed.getvalue())
            self.assertIn("t/04_a's solution, measured alike, reached this gate in 1 of 2 run(s)", printed.getvalue())
            table = (d / "out" / "gate-confirmation-merged.md").read_text()
            self.assertIn("| t/05_b | % of x, N = 1 | 0.600 | 3/3 | 0.800 .. 0.850 .. 0.900 | `previous_lesson.diff` | "
                          "2/3 |", table)
            self.assertIn("t/04_a's solution passed 1/2", table)
            self.assertFalse((d / "out" / "gate-confirmation.json").exists())  # the files stay apart

    def test_the_gate_must_catch_the_previous_approach_first(self):
        with tempfile.TemporaryDirectory() as d:
            folder = Path(d) / "t" / "01_x"
            folder.mkdir(parents=True)
            wrong_file(folder / "a_race.diff", "t/01_x", caught_by="[performance]", kind="race")
            wrong_file(folder / "b_edges.diff", "t/01_x")
            self.assertEqual(grade.gate_submission(d, "t/01_x").name, "a_race.diff")
            wrong_file(folder / "c_previous.diff", "t/01_x", caught_by="[performance]", kind="previous-lesson")
            self.assertEqual(grade.gate_submission(d, "t/01_x").name, "c_previous.diff")
            self.assertIsNone(grade.gate_submission(d, "t/02_y"))

    def test_without_a_gpu_it_skips(self):
        saved = grade.gpu_name
        grade.gpu_name = lambda: None
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(grade.confirm_gates("/nonexistent", Path("/nonexistent"), [], [], 1, 1),
                                 grade.SKIP_EXIT)
        finally:
            grade.gpu_name = saved


class Options(unittest.TestCase):
    def test_option_combinations_that_make_no_sense_exit_2(self):
        for argv in (["--wrong-only", "sgemm/05"], ["--no-wrong-bank"], ["--write-check-times"],
                     ["--calibrate", "--self-test"], ["--self-test", "--wrong-only", "sgemm"],
                     ["--calibrate-runs", "0"], ["--confirm-gates", "0"], ["--confirm-gates", "2", "--calibrate"],
                     ["--merge-confirmations", "/nonexistent.json", "--out", "/tmp"]):
            with contextlib.redirect_stderr(io.StringIO()):
                with self.assertRaises(SystemExit) as ctx:
                    grade.main(argv)
            self.assertEqual(ctx.exception.code, 2, argv)


if __name__ == "__main__":
    unittest.main()
