#!/usr/bin/env python3
"""Grade a lessons/ tree: build each lesson's checks, run them, score, write reports.

usage:
  scripts/grade.py                          grade ./lessons (build dir ./build)
  scripts/grade.py --lessons-dir ~/my/lessons --build-dir build-grade
  scripts/grade.py --tree solutions         verify the solutions the same way
  scripts/grade.py --self-test              pristine exercises score zero, solutions full
  options: --only sgemm/01_naive (repeatable)  --out DIR  --jobs N

Each lesson is worth POINTS_PER_LESSON points, shared equally by the test cases of its
check tagged [exercise]; [baseline] cases are reported but score nothing. Every lesson
is built and run on its own, under a time limit: a lesson that fails to compile,
crashes or hangs loses its own points and grading goes on. Writes, under --out:
  junit.xml      one <testsuite> per lesson, one <testcase> per check test case
  results.json   Gradescope-style: {"score", "max_score", "tests": [...]}
  logs/          build and run output per lesson
Without a GPU the checks report "skipped" (exit 77); --self-test then exits 77 too.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
POINTS_PER_LESSON = 10.0
SKIP_EXIT = 77
BUILD_TIMEOUT_S = 900


@dataclass
class CaseResult:
    name: str
    kind: str  # "exercise" or "baseline"
    passed: bool
    message: str = ""


@dataclass
class LessonResult:
    track: str
    lesson: str
    status: str = "ok"  # ok | compile_error | crashed | timeout | skipped | no_checks
    cases: list = field(default_factory=list)
    detail: str = ""

    @property
    def name(self):
        return f"{self.track}/{self.lesson}"

    def exercise_cases(self):
        return [c for c in self.cases if c.kind == "exercise"]

    def baseline_cases(self):
        return [c for c in self.cases if c.kind == "baseline"]

    @property
    def score(self):
        ex = self.exercise_cases()
        if self.status in ("compile_error", "skipped", "no_checks") or not ex:
            return 0.0
        return POINTS_PER_LESSON * sum(c.passed for c in ex) / len(ex)


# ---------------------------------------------------------------- JUnit parsing


def parse_catch_junit(text, kind):
    """Test cases from a Catch2 (2.x or 3.x) JUnit report, one per <testcase> element
    (a test case with sections appears once per leaf section, "name/section")."""
    cases = []
    for tc in ET.fromstring(text).iter("testcase"):
        bad = [f for f in tc if f.tag in ("failure", "error", "skipped")]
        msg = "\n".join(((f.get("message") or f.tag) + "\n" + (f.text or "")).strip() for f in bad)
        cases.append(CaseResult(tc.get("name", "?"), kind, not bad, msg))
    return cases


# ---------------------------------------------------------------- running


def run_with_timeout(cmd, timeout, log_path, cwd=None):
    """Runs cmd in its own process group; returns (returncode, output, timed_out)."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd,
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            timed_out = True
        log.write(out or "")
    return proc.returncode, out or "", timed_out


def catch_major(build_dir):
    """Catch2's major version in this build (3.x needs --allow-running-no-tests)."""
    info = json.loads((Path(build_dir) / "tut_build_info.json").read_text())
    return int(info["catch_major"])


def grade_lesson(entry, build_dir, logs, major):
    res = LessonResult(entry["track"], entry["lesson"])
    stem = f"{entry['tree']}-{entry['track']}-{entry['lesson']}"
    rc, out, timed_out = run_with_timeout(["cmake", "--build", str(build_dir), "--target", entry["check_target"]],
                                          BUILD_TIMEOUT_S, logs / f"{stem}.build.log")
    if rc != 0 or timed_out:
        res.status = "compile_error"
        res.detail = "build failed:\n" + "\n".join(out.splitlines()[-40:])
        return res
    exe = entry["check_exe"]
    timeout = entry.get("timeout", 300)
    for kind in ("exercise", "baseline"):
        xml_path = logs / f"{stem}.{kind}.junit.xml"
        if xml_path.exists():
            xml_path.unlink()
        cmd = [exe, f"[{kind}]", "-r", "junit", "-o", str(xml_path)]
        if major >= 3:
            cmd.append("--allow-running-no-tests")
        rc, out, timed_out = run_with_timeout(cmd, timeout, logs / f"{stem}.{kind}.log")
        if rc == SKIP_EXIT:
            res.status = "skipped"
            res.detail = out.strip()
            return res
        if timed_out:
            res.status = "timeout"
            res.detail = f"[{kind}] checks did not finish in {timeout} s"
            res.cases.append(CaseResult(f"[{kind}] checks (timed out)", kind, False, res.detail))
            continue
        cases = []
        if xml_path.exists():
            try:
                cases = parse_catch_junit(xml_path.read_text(errors="replace"), kind)
            except ET.ParseError:
                cases = []
        if rc < 0 or (rc != 0 and not cases):
            res.status = "crashed"
            why = f"signal {-rc}" if rc < 0 else f"exit code {rc}"
            res.detail = f"[{kind}] checks crashed ({why}):\n" + "\n".join(out.splitlines()[-40:])
            res.cases.append(CaseResult(f"[{kind}] checks (crashed: {why})", kind, False, res.detail))
            continue
        res.cases.extend(cases)
    if not res.exercise_cases() and res.status == "ok":
        res.status = "no_checks"
        res.detail = "no [exercise] test case found"
    return res


def configure(build_dir, lessons_dir):
    cmd = ["cmake", "-S", str(REPO), "-B", str(build_dir), "-DTUT_BUILD_DOCS=OFF"]
    if shutil.which("ninja") and not (Path(build_dir) / "CMakeCache.txt").exists():
        cmd += ["-G", "Ninja"]
    if lessons_dir:
        cmd.append(f"-DTUT_LESSONS_DIR={Path(lessons_dir).resolve()}")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def load_manifest(build_dir, tree, only):
    entries = json.loads((Path(build_dir) / "tut_manifest.json").read_text())
    entries = [e for e in entries if e["tree"] == tree and "check_target" in e]
    if only:
        entries = [e for e in entries if f"{e['track']}/{e['lesson']}" in only]
    return entries


# ---------------------------------------------------------------- reports


def write_reports(results, out_dir, title):
    out_dir.mkdir(parents=True, exist_ok=True)
    suites = ET.Element("testsuites", name=title)
    for r in results:
        failures = sum(not c.passed for c in r.cases) + (r.status == "compile_error")
        suite = ET.SubElement(suites, "testsuite", name=r.name, tests=str(max(1, len(r.cases))),
                              failures=str(failures), skipped=str(int(r.status == "skipped")))
        if r.status in ("compile_error", "skipped", "no_checks"):
            tc = ET.SubElement(suite, "testcase", classname=r.name, name=r.status)
            tag = "skipped" if r.status == "skipped" else "failure"
            ET.SubElement(tc, tag, message=r.status).text = r.detail
        for c in r.cases:
            tc = ET.SubElement(suite, "testcase", classname=f"{r.name}.{c.kind}", name=c.name)
            if not c.passed:
                ET.SubElement(tc, "failure", message="check failed").text = c.message
    ET.ElementTree(suites).write(out_dir / "junit.xml", encoding="utf-8", xml_declaration=True)

    tests = []
    for r in results:
        ex = r.exercise_cases()
        lines = [f"status: {r.status}"] + ([r.detail] if r.detail else [])
        for c in r.cases:
            lines.append(f"[{'pass' if c.passed else 'FAIL'}] ({c.kind}) {c.name}")
            if not c.passed and c.message:
                lines.append("    " + c.message.replace("\n", "\n    ")[:2000])
        tests.append({
            "name": r.name,
            "score": round(r.score, 2),
            "max_score": POINTS_PER_LESSON,
            "status": "passed" if ex and all(c.passed for c in ex) and r.status == "ok" else "failed",
            "output": "\n".join(lines),
        })
    summary = {
        "score": round(sum(r.score for r in results), 2),
        "max_score": POINTS_PER_LESSON * len(results),
        "output": title,
        "tests": tests,
    }
    (out_dir / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def print_table(results, title):
    print(f"\n{title}")
    w = max([len(r.name) for r in results] + [6])
    print(f"{'lesson':<{w}}  {'exercise':>8}  {'baseline':>8}  {'points':>11}  status")
    print(f"{'-' * w}  {'-' * 8}  {'-' * 8}  {'-' * 11}  ------")
    for r in results:
        ex, base = r.exercise_cases(), r.baseline_cases()
        print(f"{r.name:<{w}}  {sum(c.passed for c in ex):>3}/{len(ex):<4}  {sum(c.passed for c in base):>3}/{len(base):<4}"
              f"  {r.score:>5.1f}/{POINTS_PER_LESSON:<5.0f}  {r.status}")
    total = sum(r.score for r in results)
    print(f"{'total':<{w}}  {'':>8}  {'':>8}  {total:>5.1f}/{POINTS_PER_LESSON * len(results):<5.0f}")


def grade(tree, build_dir, out_dir, only, lessons_dir=None):
    if lessons_dir or not (Path(build_dir) / "tut_manifest.json").exists():
        configure(build_dir, lessons_dir)
    entries = load_manifest(build_dir, tree, only)
    if not entries:
        sys.exit(f"grade.py: no lessons with checks found for tree '{tree}' in {build_dir}")
    logs = out_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    major = catch_major(build_dir)
    results = []
    for e in entries:
        r = grade_lesson(e, Path(build_dir), logs, major)
        print(f"  graded {r.name}: {r.score:.1f}/{POINTS_PER_LESSON:.0f} ({r.status})", flush=True)
        results.append(r)
    title = f"grade of {tree} tree ({lessons_dir or tree})"
    write_reports(results, out_dir, title)
    print_table(results, title)
    print(f"\nreports: {out_dir / 'junit.xml'}, {out_dir / 'results.json'}")
    return results


def self_test_verdict(pristine, solutions):
    """Problems that make the self-test fail: an exercise that scores, a solution that does not."""
    problems = []
    for r in pristine:
        if r.status == "skipped":
            continue
        if not r.exercise_cases():
            problems.append(f"{r.name}: pristine exercise has no [exercise] check ({r.status})")
        for c in r.exercise_cases():
            if c.passed:
                problems.append(f"{r.name}: pristine exercise PASSES '{c.name}' (the TODO is not checked)")
    for r in solutions:
        if r.status == "skipped":
            continue
        if r.status != "ok" or r.score < POINTS_PER_LESSON:
            problems.append(f"{r.name}: solution scores {r.score:.1f}/{POINTS_PER_LESSON:.0f} ({r.status})")
        for c in r.baseline_cases():
            if not c.passed:
                problems.append(f"{r.name}: solution fails baseline check '{c.name}'")
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", choices=["lessons", "solutions"], default="lessons")
    ap.add_argument("--lessons-dir", help="grade this copy of lessons/ (configures its own build dir)")
    ap.add_argument("--build-dir", default=str(REPO / "build"))
    ap.add_argument("--out", default=str(REPO / "grade-results"))
    ap.add_argument("--only", action="append", default=[], help="track/lesson to grade (repeatable)")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args(argv)
    out = Path(args.out)

    if args.self_test:
        pristine = grade("lessons", args.build_dir, out / "lessons", args.only)
        solutions = grade("solutions", args.build_dir, out / "solutions", args.only)
        if all(r.status == "skipped" for r in pristine + solutions):
            print("SKIPPED: the grader self-test needs a CUDA GPU to run the checks.")
            return SKIP_EXIT
        problems = self_test_verdict(pristine, solutions)
        for p in problems:
            print("SELF-TEST FAILURE:", p)
        n = len(pristine) + len(solutions)
        print(f"grader self-test: {n - len({p.split(':')[0] for p in problems})} passed, "
              f"{len({p.split(':')[0] for p in problems})} failed")
        return 1 if problems else 0

    if args.lessons_dir and args.build_dir == str(REPO / "build"):
        args.build_dir = str(REPO / "build-grade")
    results = grade(args.tree, args.build_dir, out, args.only, args.lessons_dir)
    return SKIP_EXIT if results and all(r.status == "skipped" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
