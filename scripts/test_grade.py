"""CPU tests of the grader's own logic: JUnit parsing, scoring, reports, the self-test verdict."""
import json
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grade  # noqa: E402

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


class Reports(unittest.TestCase):
    def test_junit_and_gradescope_json(self):
        results = [lesson([grade.CaseResult("a", "exercise", True), grade.CaseResult("b", "baseline", True)]),
                   grade.LessonResult("sgemm", "05_shared_tiling", status="compile_error", detail="error: x")]
        with tempfile.TemporaryDirectory() as d:
            summary = grade.write_reports(results, Path(d), "test")
            data = json.loads((Path(d) / "results.json").read_text())
            self.assertEqual(data, summary)
            self.assertEqual(data["score"], 10.0)
            self.assertEqual(data["max_score"], 20.0)
            self.assertEqual([t["status"] for t in data["tests"]], ["passed", "failed"])
            self.assertIn("compile_error", data["tests"][1]["output"])
            suites = ET.parse(Path(d) / "junit.xml").getroot().findall("testsuite")
            self.assertEqual([s.get("name") for s in suites], ["sgemm/01_naive", "sgemm/05_shared_tiling"])
            self.assertEqual(suites[1].get("failures"), "1")


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


if __name__ == "__main__":
    unittest.main()
