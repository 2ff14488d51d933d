#!/usr/bin/env python3
"""Grade a lessons/ tree: build each lesson's checks, run them, score, write reports.

usage:
  scripts/grade.py                          grade ./lessons (build dir ./build)
  scripts/grade.py --lessons-dir ~/my/lessons --build-dir build-grade
  scripts/grade.py --tree solutions         verify the solutions the same way
  scripts/grade.py --self-test              pristine exercises score zero, solutions full, and
                                            every known-wrong submission short of full
  scripts/grade.py --calibrate              the performance thresholds of this GPU
  scripts/grade.py --confirm-gates 20       each gate passes the solution and fails the bank's
                                            previous approach, 20 runs of each
  options: --only sgemm/01_naive (repeatable)  --tracks sgemm,cg  --out DIR
           --jobs N (compile jobs)  --run-jobs N (check programs at once)
           --sanitize (compute-sanitizer on each lesson's program: a scored case)
           --build-only (exit 1 when the build failed or timed out)
           --require-full (exit 1 unless every lesson scores full)
  self-test: --no-wrong-bank  --wrong-only sgemm/05 (repeatable)  --write-check-times
  calibrate: --calibrate-runs N (default 5)  --out FILE (default common/checks/thresholds/<gpu>.json)

Scoring. Each lesson is worth POINTS_PER_LESSON points. Its check's test cases tagged
[exercise] share the correctness part; [baseline] cases are reported but score nothing.
A lesson whose check has [performance] cases gives them PERF_SHARE (25%) of its points,
and with --sanitize the compute-sanitizer case gets SANITIZE_SHARE (10%); correctness
keeps the rest (65% with both). Correctness comes first: while any [exercise] case fails,
the performance cases and the sanitizer case score nothing. A [performance] case that
reports "unscored" (no threshold for this GPU, or a gain too small to gate reliably)
gives its share to correctness. A lesson scores only when its check program ran to the
end: a crash or time-out in any of its runs gives the whole lesson 0, with a report saying
that the program itself failed. So a lesson has full points exactly when --require-full
counts it as full.

Check runs. Each lesson's check program runs up to three times, each a process of its
own: its [exercise] cases and its [baseline] cases, several lessons at once (--run-jobs),
then, one lesson at a time with the GPU to itself, its [performance] cases (when it has
any), with TUT_PERF_REPORT naming a file in the logs folder where each case writes one JSON
line: ratio, threshold, status, hint. Each run has the lesson's time limit: 5 x the solution's check time on
this GPU (common/checks/check_times/<gpu>.json, written by --self-test
--write-check-times), at least 20 s and at most 30 s (twice the solution's time for a check
that needs over 15 s), or 30 s where this GPU has no measured time; never more than the
lesson's CTest limit (the manifest's timeout). After a time-out the lesson's later runs
are skipped, so a hang costs one limit; its report names the likely cause where the lesson
registered one (tut_lesson(HANG_HINT), e.g. a grid barrier that not every block reaches).

Sanitizer (--sanitize). compute-sanitizer runs the graded tree's lesson program (the
manifest's exe) with each of the lesson's sanitize_runs under each of its sanitize_tools
(memcheck; racecheck and synccheck where the lesson lists them), after its checks, when
its [exercise] cases all pass. A finding, a crash or a non-zero exit fails the case. Its
cost is printed per lesson (about 2 to 20 s on an H100).

Self-test (--self-test). The pristine exercises must score 0 on their [exercise] cases,
the solutions full points (with CTest's time limits, their check times measured). Then the
bank of known-wrong submissions (common/checks/wrong/<track>/<lesson>/*.diff, each written
out as its submission by scripts/wrong_bank.py under --out) is graded in rounds: round r
lays the r-th submission (by name) of every lesson that has one over a copy of lessons/ and
grades those lessons. Two copies, each with its build dir under --out, take turns: on a
GPU, rounds 1 and 2 build in the background while both trees are graded, and round r + 1
while round r is; the builds are paused while [performance] cases time kernels. Each must score
short of full: a wrong submission at full marks, or one that does not compile, fails the
self-test; with --sanitize, a race must be caught by the sanitizer case. The table lesson |
mistake | kind | caught by | declared is printed and written to --out/wrong-bank.md.

The build dir is configured (again) when it was configured for other settings: the
lessons tree (default lessons/), the solution tree (default solutions/, or the lessons
tree where there is none, as in a student's copy), the tracks (default all the tree has;
for --self-test, which CTest runs on its own build, those the build dir has) and
TUT_BUILD_CHECKS=ON. An --only lesson that is not in the build is an error (exit 2).

Phases: configure; one parallel build of every check target of the tree that keeps
going past failures (ninja -k 0); then, lesson by lesson, the check target is built
again on its own (up to date: instant; failed: rebuilt alone, so its log is its own)
and its checks are run, several lessons at once (--run-jobs). A lesson that fails to
compile, crashes or hangs loses its own points and grading goes on. The report of a
compile error begins with the first error lines that point into the graded tree
(file:line: message), then the build log. Each phase's time is printed, and so is the
report of every lesson without full points (the one results.json holds), for graders
that show only the console (GitHub Classroom).
Writes, under --out:
  junit.xml      one <testsuite> per lesson, one <testcase> per check test case
  results.json   Gradescope's results format (score, tests with score, max_score, ...)
  logs/          build and run output per lesson, and the parallel build's log
Without a GPU the checks report "skipped" (exit 77), and so do the checks of a lesson
built for one GPU architecture on any other (sgemm/17_wgmma needs compute capability 9.0)
and those of a lesson that needs more GPUs than the machine has (the multigpu track's:
its manifest entries name the GPUs and the launcher, common/checks/multigpu/mpi_launch.py,
which starts the checks under mpirun, one process per GPU): such lessons score 0, marked
skipped with the reason; --self-test exits 77 when every lesson was skipped. Lessons
that need several GPUs run their checks one at a time, after the others.

Calibration (--calibrate). Builds the solutions, runs each solution check's [performance]
cases --calibrate-runs times with TUT_PERF_CALIBRATE=1 (a case measures and reports, and
never fails) and hands the reports to scripts/perf_gates.py, which writes the thresholds.

Confirming the gates (--confirm-gates RUNS). For every lesson with a threshold on this GPU:
the solution's check program, and the lesson's exercise replaced by the bank's submission
that its gate must catch (the first of kind previous-lesson, else the first caught by
[performance]), built in a tree of its own under --out. Both run their [performance] cases,
judged, RUNS times, alternating lesson by lesson so that both see the same drift. The table
lesson | threshold | solution passed | its ratios | submission failed | its ratios goes to
--out/gate-confirmation.md (and .json). Exit 1 unless every solution run passed and every
submission run failed. A gate unscored here runs too when --only names it: its ratios are
recorded, nothing is judged, and scripts/perf_gates.py --from-confirmation may then find
the gap a threshold needs.

Merging confirmations (--merge-confirmations JSON...). Several --confirm-gates runs of one
GPU as one table: per lesson the runs of every file together (scripts/perf_gates.py
merge_confirmations), each run judged again against the thresholds file as it is now, into
--out/gate-confirmation-merged.md. Exit 1 on the same problems as --confirm-gates. The table
is for reading: keep the JSON files apart, since scripts/perf_gates.py --from-confirmation
needs each one's date (the runs that set a threshold cannot confirm it).
"""
import argparse
import concurrent.futures
import contextlib
import datetime
import difflib
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
POINTS_PER_LESSON = 10.0
PERF_SHARE = 0.25  # of a lesson's points, for its [performance] cases (when it has any)
SANITIZE_SHARE = 0.10  # of a lesson's points, for the compute-sanitizer case (with --sanitize)
SKIP_EXIT = 77
BUILD_TIMEOUT_S = 900  # one lesson's check target, built alone
PREBUILD_TIMEOUT_S = 3600  # the parallel build of every check target
MAX_ERROR_LINES = 12  # error lines at the top of a compile-error report
MAX_LOG_LINES = 300  # build log lines after them
# Each check run's time limit: LIMIT_FACTOR x the solution's measured check time, at least
# MIN_LIMIT_S, at most HANG_CAP_S (what a hang may cost), or DEFAULT_LIMIT_S without a
# measured time. A check that needs longer than HANG_CAP_S / SLOW_FACTOR gets SLOW_FACTOR x
# its time instead, so that no correct lesson times out.
LIMIT_FACTOR = 5
MIN_LIMIT_S = 20
HANG_CAP_S = 30
SLOW_FACTOR = 2
DEFAULT_LIMIT_S = 30
LAUNCHER_MARGIN_S = 15  # the multi-GPU launcher ends its job this much before the grader's limit
SANITIZE_RUN_TIMEOUT_S = 120  # one compute-sanitizer run (the largest take a few seconds)
GENERAL_HANG_HINT = ("a loop whose exit test is never met, a barrier that not every thread reaches, or code far "
                     "slower than the solution?")
CHECK_TIMES_DIR = REPO / "common" / "checks" / "check_times"
THRESHOLDS_DIR = REPO / "common" / "checks" / "thresholds"
WRONG_BANK_DIR = REPO / "common" / "checks" / "wrong"
# The check runs of a lesson, in order: (kind, Catch2 test spec). A case tagged
# [performance] belongs to the performance run alone, whatever its other tags. The
# [exercise] and [baseline] runs of several lessons share the GPU; a [performance] run
# times kernels, so grade_entries() gives it the GPU alone, after the others.
CHECK_RUNS = (("exercise", "[exercise]~[performance]"), ("baseline", "[baseline]~[performance]"),
              ("performance", "[performance]"))
SHARED_RUNS = ("exercise", "baseline")


@dataclass
class CaseResult:
    name: str
    kind: str  # "exercise", "performance", "baseline" or "sanitizer"
    passed: bool
    message: str = ""
    # performance: the case's TUT_PERF_REPORT line (ratio, threshold, status, hint...);
    # sanitizer: {"seconds", "runs", "failed_tools", "not_run"}
    data: dict = None

    @property
    def unscored(self):
        """A [performance] case that passed and reported "unscored": its share goes to correctness."""
        return self.kind == "performance" and self.passed and (self.data or {}).get("status") == "unscored"


@dataclass
class LessonResult:
    track: str
    lesson: str
    status: str = "ok"  # ok | compile_error | crashed | timeout | skipped | no_checks
    cases: list = field(default_factory=list)
    detail: str = ""
    seconds: float = 0.0  # the check runs' wall time
    limit: float = None  # each check run's time limit, and why it is that
    limit_why: str = ""

    @property
    def name(self):
        return f"{self.track}/{self.lesson}"

    def exercise_cases(self):
        return [c for c in self.cases if c.kind == "exercise"]

    def baseline_cases(self):
        return [c for c in self.cases if c.kind == "baseline"]

    def performance_cases(self):
        return [c for c in self.cases if c.kind == "performance"]

    def sanitizer_cases(self):
        return [c for c in self.cases if c.kind == "sanitizer"]

    def shares(self):
        """(correctness, performance, sanitizer): the fractions of the lesson's points. The
        performance cases share PERF_SHARE, less the shares of those that reported
        "unscored", which go to correctness; the sanitizer case, when there is one, has
        SANITIZE_SHARE; correctness has the rest."""
        perf = self.performance_cases()
        scored = [c for c in perf if not c.unscored]
        perf_share = PERF_SHARE * len(scored) / len(perf) if perf else 0.0
        sanitize_share = SANITIZE_SHARE if self.sanitizer_cases() else 0.0
        return 1.0 - perf_share - sanitize_share, perf_share, sanitize_share

    def points(self):
        """(correctness, performance, sanitizer) points earned, each part of the lesson's."""
        ex = self.exercise_cases()
        if self.status != "ok" or not ex:
            return 0.0, 0.0, 0.0
        correct_share, _, sanitize_share = self.shares()
        correct = POINTS_PER_LESSON * correct_share * sum(c.passed for c in ex) / len(ex)
        if not all(c.passed for c in ex):
            return correct, 0.0, 0.0  # correctness first
        perf = self.performance_cases()
        perf_points = POINTS_PER_LESSON * PERF_SHARE * sum(c.passed and not c.unscored for c in perf) / len(perf) \
            if perf else 0.0
        sanitizer = self.sanitizer_cases()
        sanitize_points = POINTS_PER_LESSON * sanitize_share if sanitizer and all(c.passed for c in sanitizer) \
            else 0.0
        return correct, perf_points, sanitize_points

    @property
    def score(self):
        # Any status but ok (compile error, crash or time-out in any run, skipped, no
        # exercise checks) scores nothing; full marks are exactly POINTS_PER_LESSON (the sum
        # of the parts could round to a hair below it).
        if self.full_marks:
            return POINTS_PER_LESSON
        return sum(self.points())

    @property
    def full_marks(self):
        ex = self.exercise_cases()
        return (self.status == "ok" and bool(ex) and all(c.passed for c in ex)
                and all(c.passed for c in self.performance_cases() + self.sanitizer_cases()))

    @property
    def skip_reason(self):
        """Why a skipped lesson's checks did not run, from the SKIPPED line its check program
        printed (common/checks/catch_main.cpp, sgemm_checks.hpp): "no GPU", "needs compute
        capability X.Y" (a lesson built for, or needing, another GPU architecture), "needs N KB
        of shared memory per block", or "" when the line says none of these."""
        m = re.search(r"\bneeds? compute capability (\d+\.\d+)", self.detail or "")
        if m:
            return f"needs compute capability {m.group(1)}"
        m = re.search(r"\bneeds (\d+) KB of shared memory per block", self.detail or "")
        if m:
            return f"needs {m.group(1)} KB of shared memory per block"
        m = re.search(r"\bneeds? (\d+) GPUs\b", self.detail or "")
        if m:
            return f"needs {m.group(1)} GPUs"
        if re.search(r"need a CUDA GPU|no CUDA GPU|no GPU", self.detail or "", re.IGNORECASE):
            return "no GPU"
        return ""


def skipped_name(r):
    """The lesson's name in the reports, with why its checks were skipped."""
    return r.name + (f" (skipped: {r.skip_reason})" if r.skip_reason else " (skipped)")


def all_skipped_why(results):
    """Why nothing was graded when every lesson was skipped."""
    if all(r.skip_reason == "no GPU" for r in results):
        return "these checks need a CUDA GPU; none is usable here"
    return "no lesson's checks could run here (no usable CUDA GPU, or not the GPU a lesson needs)"


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


# ---------------------------------------------------------------- compile errors first

# nvcc's front end (EDG, cudafe++):  /path/file.cu(123): error: message
#                                    /path/file.cu(123): error #20-D: message
EDG_ERROR = re.compile(r"^(?P<file>\S[^()]*?)\((?P<line>\d+)\): (?P<kind>(?:catastrophic )?error)(?: #[\w-]+)?: "
                       r"(?P<msg>.*)$")
# Its notes and remarks belong to the error before them (as do the indented lines).
EDG_NOTE = re.compile(r"^\S[^()]*?\(\d+\): (?:note|remark)\b")
# ...and where a template was instantiated from: "at line 49 of /path/file.cu", or
# "at line 58" (same file as the error).
EDG_AT_LINE = re.compile(r"\bat line (?P<line>\d+)(?: of (?P<file>\S.*?))?\s*$")
# gcc/g++ (the host compiler, nvcc's preprocessor, the checks): file:123:45: error: message
GCC_ERROR = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<kind>(?:fatal )?error): "
                       r"(?P<msg>.*)$")
GCC_FROM_HERE = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:\d+:)?\s+required from here")
GCC_INCLUDED = re.compile(r"^(?:In file included| +) from (?P<file>[^\s:][^:]*):(?P<line>\d+)[:,]")
GCC_CONTEXT = re.compile(r"^[^\s:][^:]*: In (?:instantiation of|function|member function|constructor|destructor|"
                         r"static member function|lambda function|substitution of)")
# Tools after the front end: ptxas, nvlink, fatbinary, nvcc itself.
TOOL_ERROR = re.compile(r"^(?P<tool>ptxas|nvlink|nvcc|fatbinary|cicc|cudafe\+\+)\s+(?P<kind>fatal|error)\s*:\s*"
                        r"(?P<msg>.*)$")
# The system linker.
LINK_SYMBOL = re.compile(r"(?P<what>undefined reference to|multiple definition of) [`'\u2018](?P<sym>.+?)['\u2019]")
LINK_FAILED = re.compile(r"(?:collect2|ld): error: ld returned|^/usr/bin/ld: cannot find|^ld: ")
NINJA_ERROR = re.compile(r"^ninja: error: (?P<msg>.*)$")
# The compiler command after a FAILED: line names the source it compiles.
COMPILED_SOURCE = re.compile(r"\s-c\s+(?P<src>\S+)")
MANGLED = re.compile(r"'(_Z[\w.$]+)'")


def _under(path, roots):
    """The root that contains path (a string as a compiler printed it), or None."""
    p = os.path.normpath(path)
    for root in roots:
        if p == root or p.startswith(root + os.sep):
            return root
    return None


def _show_path(path, roots):
    """path relative to the graded tree (or to the repository), else as printed."""
    p = os.path.normpath(path)
    root = _under(p, roots)
    if root:
        return os.path.relpath(p, root)
    repo = str(REPO)
    if p.startswith(repo + os.sep):
        return os.path.relpath(p, repo)
    return path


def tree_roots(tree_root):
    """The graded tree's path as given and resolved (compilers print either)."""
    if not tree_root:
        return []
    roots = {os.path.normpath(str(tree_root)), os.path.normpath(os.path.realpath(str(tree_root)))}
    return sorted(roots, key=len, reverse=True)


def find_errors(log, roots):
    """Errors in a build log, in order: dicts with file, line, kind, msg and student
    (file, line) when the error, or the place that instantiated or included the code that
    has it, lies under one of roots (the graded tree)."""
    errors = []
    current = None  # the last EDG error: its "detected during" lines follow it
    here = None  # gcc: the last "required from here" location
    include_site = None  # gcc: the first graded-tree file of the current include chain
    source = None  # the source file of the compile command that failed last
    after_failed = False
    for raw in log.splitlines():
        line = raw.rstrip()
        if after_failed:
            m = COMPILED_SOURCE.search(line)
            source = m["src"] if m and _under(m["src"], roots) else None
        after_failed = line.startswith("FAILED: ")
        m = EDG_ERROR.match(line)
        if m:
            current = dict(file=m["file"], line=int(m["line"]), kind=m["kind"], msg=m["msg"].strip(), student=None)
            if _under(m["file"], roots):
                current["student"] = (m["file"], int(m["line"]))
            errors.append(current)
            continue
        if current is not None and (line.startswith(" ") or EDG_NOTE.match(line)):
            a = EDG_AT_LINE.search(line)
            if a and current["student"] is None:
                f = a["file"] or current["file"]
                if _under(f, roots):
                    current["student"] = (f, int(a["line"]))
            continue
        current = None
        if line.startswith("In file included from"):
            include_site, here = None, None
        m = GCC_INCLUDED.match(line)
        if m:
            if include_site is None and _under(m["file"], roots):
                include_site = (m["file"], int(m["line"]))
            continue
        if GCC_CONTEXT.match(line):
            here = None
            continue
        m = GCC_FROM_HERE.match(line)
        if m:
            here = (m["file"], int(m["line"]))
            continue
        m = GCC_ERROR.match(line)
        if m:
            e = dict(file=m["file"], line=int(m["line"]), kind=m["kind"], msg=m["msg"].strip(), student=None)
            if _under(m["file"], roots):
                e["student"] = (m["file"], int(m["line"]))
            elif here and _under(here[0], roots):
                e["student"] = here
            elif include_site:
                e["student"] = include_site
            errors.append(e)
            here = None
            continue
        m = TOOL_ERROR.match(line)
        if m:
            # no line number: point at the graded file whose compile failed, if any
            errors.append(dict(file=None, line=None, kind=f"{m['tool']} {m['kind']}", msg=m["msg"].strip(),
                               student=(source, None) if source else None))
            continue
        m = LINK_SYMBOL.search(line)
        if m:
            errors.append(dict(file=None, line=None, kind="link error", msg=f"{m['what']} '{m['sym']}'",
                               student=None))
            continue
        if LINK_FAILED.search(line):
            errors.append(dict(file=None, line=None, kind="link error", msg=line.strip(), student=None))
            continue
        m = NINJA_ERROR.match(line)
        if m:
            errors.append(dict(file=None, line=None, kind="build error", msg=m["msg"].strip(), student=None))
    return errors


def _demangle(text):
    """Kernel names in ptxas/nvlink messages, demangled with c++filt when it is there."""
    names = MANGLED.findall(text)
    tool = shutil.which("c++filt")
    if not names or not tool:
        return text
    try:
        out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True, timeout=10).stdout
    except (subprocess.SubprocessError, OSError):
        return text
    for name, plain in zip(names, out.splitlines()):
        text = text.replace(f"'{name}'", f"'{plain}'")
    return text


def _shorten_log(log, roots):
    """The build log for a student: paths into the graded tree made relative, the long
    compiler command after each FAILED: line shortened, at most MAX_LOG_LINES lines."""
    pats = [re.compile(r"(?<![\w./-])" + re.escape(root) + "/") for root in roots]
    out, after_failed = [], False
    for line in log.splitlines():
        for p in pats:
            line = p.sub("", line)
        if after_failed and len(line) > 160:
            line = line[:160] + " ... (compiler command shortened)"
        after_failed = line.startswith("FAILED: ")
        out.append(line)
    if len(out) > MAX_LOG_LINES:
        out = out[:MAX_LOG_LINES] + [f"... ({len(out) - MAX_LOG_LINES} more lines in the full log)"]
    return "\n".join(out)


def summarize_build_failure(log, tree_root=None):
    """A compile-error report that begins with the errors in the student's own files
    ("file:line: error: message", paths relative to the graded tree), then any other
    errors (headers, link, ptxas), then the build log."""
    roots = tree_roots(tree_root)
    errors = find_errors(log, roots)
    head, seen = [], set()

    def add(text):
        if text not in seen and len(head) < MAX_ERROR_LINES:
            seen.add(text)
            head.append(text)

    for e in errors:
        if e["student"]:
            f, n = e["student"]
            where = f"{_show_path(f, roots)}:{n}" if n is not None else _show_path(f, roots)
            text = f"{where}: {e['kind']}: {_demangle(e['msg'])}"
            if e["file"] and (os.path.normpath(f), n) != (os.path.normpath(e["file"]), e["line"]):
                text += f"  [reported in {_show_path(e['file'], roots)}:{e['line']}]"
            add(text)
    for e in errors:
        if not e["student"]:
            where = f"{_show_path(e['file'], roots)}:{e['line']}: " if e["file"] else ""
            add(f"{where}{e['kind']}: {e['msg']}")
    if any(e["kind"] == "link error" and "undefined reference" in e["msg"] for e in errors):
        add("(an undefined reference means a function the checks call is missing from the lesson, "
            "or its name or signature changed)")
    if not head:
        head = ["build failed; no error line was recognised in the build log below."]
    return "\n".join(head) + "\n\nbuild log:\n" + _shorten_log(log, roots)


# ---------------------------------------------------------------- running


def run_with_timeout(cmd, timeout, log_path, cwd=None, env=None):
    """Runs cmd in its own process group; returns (returncode, output, timed_out)."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd,
                                errors="replace", start_new_session=True, env=env)
        try:
            out, _ = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            timed_out = True
        log.write(out or "")
    return proc.returncode, out or "", timed_out


def available_cpus():
    """CPUs this process may use: its affinity mask, capped by a cgroup CPU quota."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:
        n = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            n = min(n, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, n)


def available_memory_gib():
    """MemAvailable from /proc/meminfo in GiB, or None."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / (1024 * 1024)
    except (OSError, ValueError, IndexError):
        pass
    return None


def default_build_jobs():
    """Compile jobs: one per CPU, at most one per 2 GiB of available memory (nvcc takes
    about 0.5 GiB on the lessons that include CUB; the rest is room for the linker)."""
    jobs = available_cpus()
    mem = available_memory_gib()
    if mem is not None:
        jobs = min(jobs, int(mem // 2))
    return max(1, jobs)


def default_run_jobs():
    """Check programs run at once: up to 4 with, for each, 4 CPUs, 18 GiB of GPU memory
    (an 80 GB card, 79 GiB usable, runs 4) and 16 GiB of host memory (the largest checks
    hold about 9 GiB on the device and as much on the host), else one at a time. The
    [exercise] and [baseline] checks compare results and time nothing, so sharing the GPU
    does not change what they decide; the [performance] runs, which time kernels, run one
    at a time whatever this says."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return 1
    try:
        out = subprocess.run([smi, "--query-gpu=memory.total", "--format=csv,noheader,nounits"], capture_output=True,
                             text=True, timeout=30).stdout.split()
        gpu_gib = int(float(out[0])) // 1024
    except (subprocess.SubprocessError, OSError, ValueError, IndexError):
        return 1
    jobs = min(4, available_cpus() // 4, gpu_gib // 18)
    mem = available_memory_gib()
    if mem is not None:
        jobs = min(jobs, int(mem // 16))
    return max(1, jobs)


def catch_major(build_dir):
    """Catch2's major version in this build (3.x needs --allow-running-no-tests)."""
    info = json.loads((Path(build_dir) / "tut_build_info.json").read_text())
    return int(info["catch_major"])


def generator_keep_going(build_dir):
    """The native build tool's keep-going flag for this build dir's generator."""
    gen = cache_value(build_dir, "CMAKE_GENERATOR") or ""
    if "Ninja" in gen:
        return ["-k", "0"]
    if "Makefiles" in gen:
        return ["-k"]
    return []


def build_command(build_dir, targets, jobs, keep_going=None):
    """The parallel build of `targets` that keeps going past failures: keep_going is the
    native build tool's flag for it (default: that of build_dir's generator)."""
    cmd = ["cmake", "--build", str(build_dir), "--parallel", str(jobs), "--target", *targets]
    keep_going = generator_keep_going(build_dir) if keep_going is None else keep_going
    return cmd + ["--", *keep_going] if keep_going else cmd


def build_targets(entries, programs):
    """The check targets of manifest entries, and lesson programs (the sanitizer runs them):
    every lesson's when `programs` is True, else those of the trees and lessons it names
    ("solutions", "jor/01_block_per_row")."""
    targets = [e["check_target"] for e in entries]
    targets += [e["target"] for e in entries
                if e.get("target") and (programs is True or (programs and (
                    e["tree"] in programs or f"{e['track']}/{e['lesson']}" in programs)))]
    return targets


def build_all(build_dir, targets, jobs, log_path):
    """One parallel build of every target that keeps going past failures; the targets that
    fail are found (and rebuilt alone, for their own logs) lesson by lesson afterwards."""
    if not targets:
        return 0, False
    rc, _, timed_out = run_with_timeout(build_command(build_dir, targets, jobs), PREBUILD_TIMEOUT_S, log_path)
    return rc, timed_out


def build_programs(build_dir, entries, logs, timer):
    """One parallel build of the lesson programs of `entries` (those the sanitizer will run);
    a program that does not build shows as its sanitizer case's failure."""
    targets = [e["target"] for e in entries if e.get("target")]
    if not targets:
        return
    t = time.monotonic()
    jobs = default_build_jobs()
    build_all(build_dir, targets, jobs, logs / "build-programs.log")
    timer.add(f"program build ({len(targets)} for the sanitizer, {jobs} jobs)", time.monotonic() - t)


def tree_root_of(entry):
    """The root of the tree a manifest entry's source lies in (<root>/<track>/<lesson>/<file>)."""
    return Path(entry["source"]).parent.parent.parent


def build_lesson(entry, build_dir, logs, program=False):
    """Builds one lesson's check target alone (instant when the parallel build made it),
    and its lesson program too when `program` (the sanitizer runs it); returns None, or the
    LessonResult of a lesson that did not compile."""
    stem = f"{entry['tree']}-{entry['track']}-{entry['lesson']}"
    targets = [entry["check_target"]] + ([entry["target"]] if program and entry.get("target") else [])
    rc, out, timed_out = run_with_timeout(["cmake", "--build", str(build_dir), "--target", *targets],
                                          BUILD_TIMEOUT_S, logs / f"{stem}.build.log")
    if rc == 0 and not timed_out:
        return None
    res = LessonResult(entry["track"], entry["lesson"], status="compile_error")
    res.detail = summarize_build_failure(out, tree_root_of(entry))
    if timed_out:
        res.detail = f"the build did not finish in {BUILD_TIMEOUT_S} s\n" + res.detail
    return res


def launch_prefix(entry, timeout):
    """What starts a lesson's check program: nothing for most lessons; for a lesson that
    needs several GPUs (a manifest entry with "launcher"), its launcher, which skips (77,
    with the reason) when the machine has fewer GPUs, starts one process per GPU under
    mpirun (or one process that uses them, "launch": "single") with NVLink multicast off,
    and ends the job a little before the grader's own time limit."""
    if not entry.get("launcher"):
        return []
    gpus = str(int(entry.get("gpus", 2)))
    limit = str(max(10, int(timeout) - 15))
    if entry.get("launch") == "single":
        return [sys.executable, entry["launcher"], "--single", "--need-gpus", gpus, "--timeout", limit, "--"]
    return [sys.executable, entry["launcher"], "--np", gpus, "--timeout", limit, "--"]


def read_perf_reports(path):
    """The JSON lines a check's [performance] cases wrote to TUT_PERF_REPORT (a list of
    dicts; a line that is not a JSON object is left out)."""
    reports = []
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return reports
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            reports.append(item)
    return reports


def attach_perf_reports(cases, reports):
    """Gives each [performance] case its report: the last line whose "case" is the case's
    name (or the name of the test case that holds it as a section)."""
    for c in cases:
        for r in reports:
            name = str(r.get("case", ""))
            if name and (c.name == name or c.name.startswith(name + "/")):
                c.data = r


def timeout_detail(entry, kind, limit, why):
    """The report of a check run that did not finish: the limit, why it is that, and the
    likely cause (the lesson's HANG_HINT, else a general one)."""
    hint = entry.get("hang_hint") or GENERAL_HANG_HINT
    return (f"[{kind}] checks did not finish in {limit:.0f} s" + (f" ({why})" if why else "") +
            f". Likely cause: {hint}")


def has_performance_cases(entry):
    """Whether the lesson's check program has [performance] cases. Catch2 keeps a test
    case's tags as the string literal it was given, so the tag is in the executable; a
    program without it needs no [performance] run (which would cost a process start)."""
    try:
        return b"[performance]" in Path(entry["check_exe"]).read_bytes()
    except OSError:
        return True  # the run itself will report what is wrong


def run_checks(entry, logs, major, limit=None, limit_why="", kinds=("exercise", "baseline", "performance"),
               res=None):
    """Runs the `kinds` of one lesson's checks, in CHECK_RUNS order, each its own process
    under the time limit `limit` (default the manifest's), and returns its LessonResult
    (`res`, when given, is carried on: a lesson's runs may be made in two steps; one whose
    status is no longer ok gets no more runs). After a time-out the later runs are skipped:
    a hang costs one limit."""
    if res is None:
        res = LessonResult(entry["track"], entry["lesson"])
        res.limit = limit or entry.get("timeout", 300)
        res.limit_why = limit_why if limit else "the lesson's CTest limit"
    elif res.status != "ok":
        return res
    stem = f"{entry['tree']}-{entry['track']}-{entry['lesson']}"
    exe = entry["check_exe"]
    start = time.monotonic()
    for kind, spec in CHECK_RUNS:
        if kind not in kinds or (kind == "performance" and not has_performance_cases(entry)):
            continue
        xml_path = logs / f"{stem}.{kind}.junit.xml"
        if xml_path.exists():
            xml_path.unlink()
        env = None
        report_path = logs / f"{stem}.perf.jsonl"
        if kind == "performance":
            if report_path.exists():
                report_path.unlink()
            env = dict(os.environ, TUT_PERF_REPORT=str(report_path))
        cmd = launch_prefix(entry, res.limit) + [exe, spec, "-r", "junit", "-o", str(xml_path)]
        if major >= 3:
            cmd.append("--allow-running-no-tests")
        rc, out, timed_out = run_with_timeout(cmd, res.limit, logs / f"{stem}.{kind}.log", env=env)
        if rc == SKIP_EXIT:
            res.status = "skipped"
            res.detail = out.strip()
            break
        if timed_out:
            res.status = "timeout"
            res.detail = timeout_detail(entry, kind, res.limit, res.limit_why)
            res.cases.append(CaseResult(f"[{kind}] checks (timed out)", kind, False, res.detail))
            break
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
        if kind == "performance":
            attach_perf_reports(cases, read_perf_reports(report_path))
        res.cases.extend(cases)
    res.seconds += time.monotonic() - start
    if "exercise" in kinds and not res.exercise_cases() and res.status == "ok":
        res.status = "no_checks"
        res.detail = "no [exercise] test case found"
    return res


# ---------------------------------------------------------------- time limits


def gpu_file_name(gpu):
    """A GPU's name as a file name, as results/ has it: NVIDIA_H100_80GB_HBM3.json."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", gpu).strip("_") + ".json"


def gpu_name():
    """The name of the GPU the checks run on (the first one CUDA_VISIBLE_DEVICES leaves,
    as nvidia-smi reports it), or None without one. TUT_GPU_NAME overrides it."""
    if os.environ.get("TUT_GPU_NAME"):
        return os.environ["TUT_GPU_NAME"]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and not visible.strip():
        return None
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    cmd = [smi, "--query-gpu=name", "--format=csv,noheader"]
    first = (visible or "").split(",")[0].strip()
    if first.isdigit():
        cmd += ["-i", first]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (subprocess.SubprocessError, OSError):
        return None
    names = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    return names[0] if out.returncode == 0 and names else None


def check_times_path(gpu):
    return CHECK_TIMES_DIR / gpu_file_name(gpu)


def load_check_times(gpu):
    """{lesson: the solution's check seconds} measured on this GPU, {} without a file."""
    if not gpu:
        return {}
    try:
        data = json.loads(check_times_path(gpu).read_text())
    except (OSError, ValueError):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(v, (int, float))} if isinstance(data, dict) else {}


def write_check_times(gpu, results):
    """Merges the check times of the solutions that ran to the end into this GPU's file."""
    path = check_times_path(gpu)
    times = load_check_times(gpu)
    for r in results:
        if r.status == "ok":
            times[r.name] = round(r.seconds, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(sorted(times.items())), indent=2) + "\n")
    return path


def time_limit(entry, check_times):
    """(seconds, why): the time limit of each of a lesson's check runs. check_times None:
    the manifest's (CTest's) limit, as the self-test gives the solutions."""
    ctest = float(entry.get("timeout", 300))
    if check_times is None:
        return ctest, "the lesson's CTest limit"
    measured = check_times.get(f"{entry['track']}/{entry['lesson']}")
    if measured is None:
        limit, why = float(DEFAULT_LIMIT_S), "the default: no measured check time for this GPU"
    else:
        limit = min(max(MIN_LIMIT_S, LIMIT_FACTOR * measured), HANG_CAP_S)
        why = f"{LIMIT_FACTOR} x the solution's {measured:.1f} s, at least {MIN_LIMIT_S} s, at most {HANG_CAP_S} s"
        if limit < SLOW_FACTOR * measured:
            limit = SLOW_FACTOR * measured
            why = f"{SLOW_FACTOR} x the solution's {measured:.1f} s"
    if entry.get("launcher"):
        limit += LAUNCHER_MARGIN_S
        why += f", and {LAUNCHER_MARGIN_S} s for the launcher"
    if limit > ctest:
        limit, why = ctest, "the lesson's CTest limit"
    return limit, why


# ---------------------------------------------------------------- the sanitizer case


def sanitizer_excerpt(text, max_lines=20):
    """The findings in a compute-sanitizer log: its ========= lines, less banner and summary."""
    out = []
    for line in text.splitlines():
        if not line.startswith("=====") or "COMPUTE-SANITIZER" in line or "SUMMARY" in line:
            continue
        if line.strip("= ").strip():
            out.append(line)
        if len(out) >= max_lines:
            out.append("... (more in the log)")
            break
    return "\n".join(out)


def sanitizer_case_name(entry):
    tools = entry.get("sanitize_tools") or ["memcheck"]
    return f"compute-sanitizer: {', '.join(tools)} ({len(entry['sanitize_runs']) * len(tools)} run(s))"


def sanitize_lesson(entry, logs):
    """The sanitizer case of one lesson: compute-sanitizer (scripts/sanitize.py's runs and
    verdicts) on the graded tree's lesson program, each of the lesson's sanitize_runs under
    each of its tools, one after another. Fails on any finding, crash, non-zero exit or
    time-out."""
    import sanitize  # scripts/sanitize.py: needed with --sanitize only

    tools = entry.get("sanitize_tools") or ["memcheck"]
    runs = [sanitize.Run(entry["track"], entry["lesson"], tool, i, list(args), entry["exe"])
            for tool in tools for i, args in enumerate(entry["sanitize_runs"])]
    tool_path = sanitize.find_sanitizer(None)
    if not tool_path:
        return CaseResult(sanitizer_case_name(entry), "sanitizer", False,
                          "compute-sanitizer not found (it comes with the CUDA toolkit, in its bin/)",
                          {"seconds": 0.0, "runs": 0, "failed_tools": [], "not_run": True})
    log_dir = logs / f"{entry['tree']}-sanitize"
    log_dir.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    failed, lines = [], []
    for run in runs:
        sanitize.execute(run, tool_path, log_dir, SANITIZE_RUN_TIMEOUT_S)
        word, bad = sanitize.outcome(run)
        if not bad:
            continue
        failed.append(run.tool)
        lines.append(f"{run.tool}, run {run.index + 1} ({' '.join(run.args)}): {word}, "
                     f"{sanitize.findings(run)} finding(s); log {run.log.name}")
        excerpt = sanitizer_excerpt(run.log.read_text(errors="replace")) if run.log else ""
        if excerpt:
            lines.append("    " + excerpt.replace("\n", "\n    "))
    seconds = time.monotonic() - start
    data = {"seconds": round(seconds, 1), "runs": len(runs), "failed_tools": sorted(set(failed))}
    return CaseResult(sanitizer_case_name(entry), "sanitizer", not failed, "\n".join(lines), data)


def sanitizer_not_run(entry):
    """The sanitizer case of a lesson whose [exercise] cases did not all pass: it scores
    nothing anyway (correctness first), so the sanitizer is not run."""
    return CaseResult(sanitizer_case_name(entry), "sanitizer", False,
                      "not run: an [exercise] case failed (the sanitizer case scores only once all of them pass)",
                      {"seconds": 0.0, "runs": 0, "failed_tools": [], "not_run": True})


def sanitizer_not_needed(entry):
    """The sanitizer case of a known-wrong submission that its checks already caught, in the
    self-test's bank rounds: whatever the sanitizer says, the submission is short of full
    marks, so the sanitizer is not run."""
    return CaseResult(sanitizer_case_name(entry), "sanitizer", False,
                      "not run: the checks already took points from this known-wrong submission",
                      {"seconds": 0.0, "runs": 0, "failed_tools": [], "not_run": True})


@dataclass
class Grading:
    """How a tree's lessons are graded besides their checks."""
    sanitize: bool = False  # add the compute-sanitizer case to each lesson that has sanitize runs
    # lessons ("track/lesson") whose sanitizer case runs even when an [exercise] case failed:
    # the bank's races, which the sanitizer must catch whatever else does
    sanitize_always: tuple = ()
    check_times: dict = None  # lesson -> the solution's check seconds on this GPU; None: CTest's limits
    # False in the self-test's bank rounds: a submission whose checks took points is caught,
    # and the sanitizer runs only on those they leave at full marks (and on sanitize_always)
    sanitize_caught: bool = True
    # True: prepare() built every lesson program; else the lessons ("track/lesson") whose
    # programs it built, and grade_entries() builds those of the other lessons whose
    # sanitizer case runs, once their checks have run
    programs_built: object = True
    # True: prepare()'s parallel build made every target without a failure, so the
    # per-lesson builds (each a no-op then, a quarter of a second) are skipped
    prebuilt: bool = False
    # False in the self-test's pristine tree and bank rounds: a lesson whose [exercise] cases
    # fail is already short of full marks and its [performance] cases would score nothing
    # (correctness first), so their run, one lesson at a time with the GPU to itself, is skipped
    perf_caught: bool = True
    # a context manager around the [performance] runs, when there are any: the self-test
    # pauses the bank's builds in the background there, so that kernels are timed on a quiet
    # machine
    quiet: object = None


def perf_not_run_case():
    """The [performance] case of a lesson whose run was skipped (Grading.perf_caught):
    failed, so that its share stays where it was and scores nothing."""
    return CaseResult("[performance] cases", "performance", False, "", {"not_run": True})


def sanitizer_will_run(entry, r, grading):
    """Whether add_sanitizer_case() runs compute-sanitizer on lesson `r` (its checks done)."""
    if not (grading.sanitize and entry.get("sanitize_runs") and r.status == "ok"):
        return False
    if r.name in grading.sanitize_always:
        return True
    if not all(c.passed for c in r.exercise_cases()):
        return False
    return grading.sanitize_caught or r.full_marks


def add_sanitizer_case(entry, logs, r, grading):
    """With --sanitize, the sanitizer case of a lesson whose checks ran to the end (and
    that has sanitize runs): run when its [exercise] cases all pass, else marked not run
    (see sanitizer_will_run() for the bank's rounds)."""
    if grading.sanitize and entry.get("sanitize_runs") and r.status == "ok":
        if sanitizer_will_run(entry, r, grading):
            r.cases.append(sanitize_lesson(entry, logs))
        elif not all(c.passed for c in r.exercise_cases()):
            r.cases.append(sanitizer_not_run(entry))
        else:
            r.cases.append(sanitizer_not_needed(entry))
    return r


def grade_lesson(entry, logs, major, grading):
    """One lesson on its own: its checks under its time limit, then its sanitizer case."""
    limit, why = time_limit(entry, grading.check_times)
    r = run_checks(entry, logs, major, limit, why)
    return add_sanitizer_case(entry, logs, r, grading)


def default_tracks():
    """Every track this tree has, in tour order: TUT_ALL_TRACKS in CMakeLists.txt, less the
    tracks without common/checks/<track>/lessons.cmake (an assignment's copy of the tutorial
    may ship some tracks only). None if CMakeLists.txt says none."""
    try:
        m = re.search(r'set\(TUT_ALL_TRACKS\s+"([^"]+)"', (REPO / "CMakeLists.txt").read_text())
    except OSError:
        return None
    if not m:
        return None
    return [t for t in m.group(1).split(";") if (REPO / "common" / "checks" / t / "lessons.cmake").exists()]


def build_settings(lessons_dir=None, tracks=None, solutions_dir=None):
    """The CMake cache values a grading build needs, defaults filled in: the lessons tree
    (lessons/), the solution tree (solutions/; where there is none, as in a student's copy
    of the repository, the lessons tree stands in for it), the tracks (all) and the checks."""
    lessons = Path(lessons_dir or REPO / "lessons").resolve()
    if solutions_dir:
        solutions = Path(solutions_dir).resolve()
    elif (REPO / "solutions").is_dir():
        solutions = (REPO / "solutions").resolve()
    else:
        solutions = lessons
    settings = {"TUT_LESSONS_DIR": str(lessons), "TUT_SOLUTIONS_DIR": str(solutions), "TUT_BUILD_CHECKS": "ON"}
    tracks = list(tracks or []) or default_tracks()
    if tracks:
        settings["TUT_TRACKS"] = ";".join(tracks)
    return settings


def cmake_true(value):
    """CMake's truth of a cache value (ON, TRUE, YES, Y, 1 or another non-zero number)."""
    v = (value or "").strip().upper()
    if re.fullmatch(r"-?\d+(\.\d*)?", v):
        return float(v) != 0
    return v in ("ON", "TRUE", "YES", "Y")


def configure_command(build_dir, lessons_dir=None, tracks=None, solutions_dir=None):
    cmd = ["cmake", "-S", str(REPO), "-B", str(build_dir)]
    if not (Path(build_dir) / "CMakeCache.txt").exists():
        # a build dir of its own: no docs; one that exists keeps its docs setting
        cmd.append("-DTUT_BUILD_DOCS=OFF")
        if shutil.which("ninja"):
            cmd += ["-G", "Ninja"]
        if not shutil.which("nvcc") and Path("/usr/local/cuda/bin/nvcc").exists():
            cmd.append("-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc")
    # Every setting, defaults included: a cache keeps the values of an earlier configure.
    cmd += [f"-D{k}={v}" for k, v in build_settings(lessons_dir, tracks, solutions_dir).items()]
    return cmd


def configure(build_dir, lessons_dir=None, tracks=None, solutions_dir=None):
    cmd = configure_command(build_dir, lessons_dir, tracks, solutions_dir)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout)
        raise SystemExit(f"grade.py: configuring {build_dir} failed (cmake exit code {proc.returncode}); "
                         "see the CMake output above")


def load_manifest(build_dir, tree, only):
    entries = json.loads((Path(build_dir) / "tut_manifest.json").read_text())
    entries = [e for e in entries if e["tree"] == tree and "check_target" in e]
    if only:
        entries = [e for e in entries if f"{e['track']}/{e['lesson']}" in only]
    return entries


class PhaseTimer:
    """Wall-clock seconds per named phase, in order."""

    def __init__(self):
        self.phases = []

    def add(self, name, seconds):
        self.phases.append((name, seconds))

    def total(self):
        return sum(s for _, s in self.phases)

    def line(self):
        return ", ".join(f"{n} {s:.1f} s" for n, s in self.phases) + f"; total {self.total():.1f} s"


# ---------------------------------------------------------------- reports


def test_number(results, i):
    """Gradescope's test number: track index.lesson index, in manifest order ("1.3")."""
    tracks = []
    for r in results:
        if r.track not in tracks:
            tracks.append(r.track)
    r = results[i]
    k = sum(1 for x in results[:i + 1] if x.track == r.track)
    return f"{tracks.index(r.track) + 1}.{k}"


def _num(value, digits=3):
    """A report's number as text ('-' when it is missing)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.{digits}g}"
    return "-"


def perf_line(c):
    """One [performance] case as its report shows it: status, ratio, threshold, the
    solution's ratio, and the hint or the reason where there is one."""
    d = c.data or {}
    if d.get("not_run"):
        return (f"[not run] (performance) {c.name}: not run, since an [exercise] case failed (correctness first: "
                "the performance share scores nothing)")
    word = "unscored" if c.unscored else ("pass" if c.passed else "FAIL")
    text = f"[{word}] (performance) {c.name}"
    if d:
        measure = f" ({d['measure']})" if d.get("measure") else ""
        text += (f": ratio {_num(d.get('ratio'))}{measure}, threshold {_num(d.get('threshold'))}, "
                 f"the solution's {_num(d.get('solution'))}")
        if d.get("reason"):
            text += f"; {d['reason']}"
        if not c.passed and d.get("hint"):
            text += f"\n    hint: {d['hint']}"
    return text


def points_line(r):
    """How the lesson's points divide among its parts and what each earned."""
    correct_share, perf_share, sanitize_share = r.shares()
    earned = r.points()
    parts = [f"correctness {earned[0]:.2f} of {POINTS_PER_LESSON * correct_share:.2f}"]
    if r.performance_cases():
        parts.append(f"performance {earned[1]:.2f} of {POINTS_PER_LESSON * perf_share:.2f}")
    if r.sanitizer_cases():
        parts.append(f"sanitizer {earned[2]:.2f} of {POINTS_PER_LESSON * sanitize_share:.2f}")
    note = ""
    if any(not c.passed for c in r.exercise_cases()) and (r.performance_cases() or r.sanitizer_cases()):
        note = " (correctness first: the other parts score once every [exercise] case passes)"
    return "points: " + ", ".join(parts) + note


def test_output(r):
    """The text Gradescope shows for one lesson. A compile error starts with its error lines."""
    lines = []
    if r.status == "compile_error":
        lines += [r.detail, "", f"status: compile_error (the lesson's checks were not run: {POINTS_PER_LESSON:g} "
                                "points lost)"]
    elif r.status == "skipped" and r.skip_reason == "no GPU":
        lines += [f"SKIPPED: no CUDA GPU here, so this lesson's checks did not run; it compiled, and it scores 0 "
                  f"of {POINTS_PER_LESSON:g} until it is graded on a machine with a GPU.", r.detail]
    elif r.status == "skipped":
        lines += [f"SKIPPED: this lesson's checks cannot run here ({r.skip_reason or 'see below'}); it "
                  f"compiled, and it scores 0 of {POINTS_PER_LESSON:g} until it is graded on a GPU that can run "
                  "them.", r.detail]
    elif r.status in ("crashed", "timeout"):
        what = "crashed" if r.status == "crashed" else "did not finish in time"
        lines += [f"status: {r.status} (the lesson's program itself {what} while its checks ran, so the lesson "
                  f"scores 0 of {POINTS_PER_LESSON:g} whatever its other checks reported: a crash or time-out in "
                  "the [exercise], [performance] or [baseline] run fails the whole lesson)", r.detail]
    else:
        lines += [f"status: {r.status}"] + ([r.detail] if r.detail else [])
        if r.status == "ok":
            lines.append(points_line(r))
    for c in r.cases:
        if c.kind == "performance":
            lines.append(perf_line(c))
        else:
            lines.append(f"[{'pass' if c.passed else 'FAIL'}] ({c.kind}) {c.name}")
        if c.kind == "sanitizer" and c.data and not c.data.get("not_run"):
            lines.append(f"    {c.data['runs']} sanitizer run(s), {c.data['seconds']:.1f} s")
        if not c.passed and c.message:
            lines.append("    " + c.message.replace("\n", "\n    ")[:2000])
    return "\n".join(x for x in lines if x is not None).strip() + "\n"


def lesson_extra_data(r):
    """The machine-readable part of a lesson's result in results.json."""
    perf = r.performance_cases()
    sanitizer = r.sanitizer_cases()
    data = {"status": r.status, "exercise_passed": sum(c.passed for c in r.exercise_cases()),
            "exercise_total": len(r.exercise_cases()),
            "baseline_passed": sum(c.passed for c in r.baseline_cases()),
            "baseline_total": len(r.baseline_cases()),
            "performance_passed": sum(c.passed and not c.unscored for c in perf),
            "performance_total": len(perf),
            "performance_unscored": sum(c.unscored for c in perf),
            "performance": [dict(c.data, case=c.name) if c.data else {"case": c.name} for c in perf],
            "points": [round(x, 3) for x in r.points()],
            "check_seconds": round(r.seconds, 1)}
    if r.limit is not None:
        data["time_limit"] = round(r.limit, 1)
    if sanitizer:
        data["sanitizer_passed"] = all(c.passed for c in sanitizer)
        data["sanitizer_seconds"] = sum((c.data or {}).get("seconds", 0.0) for c in sanitizer)
    return data


def gradescope_results(results, title, seconds=None, extra=None):
    """results.json in Gradescope's documented format (autograder specifications): the
    top-level score, output and settings, one test per lesson."""
    tests = []
    for i, r in enumerate(results):
        name = skipped_name(r) if r.status == "skipped" else r.name
        tests.append({
            "name": name,
            "number": test_number(results, i),
            "score": round(r.score, 2),
            "max_score": POINTS_PER_LESSON,
            "status": "passed" if r.full_marks else "failed",
            "output": test_output(r),
            "output_format": "text",
            "tags": [r.track, r.status],
            "visibility": "visible",
            "extra_data": lesson_extra_data(r),
        })
    score = round(sum(r.score for r in results), 2)
    max_score = POINTS_PER_LESSON * len(results)
    statuses = {}
    for r in results:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    out = [f"{title}: {score:g} of {max_score:g} points ({len(results)} lesson(s), {POINTS_PER_LESSON:g} each)."]
    no_gpu = sum(1 for r in results if r.status == "skipped" and r.skip_reason == "no GPU")
    other_skips = statuses.get("skipped", 0) - no_gpu
    if no_gpu:
        out.append(f"No CUDA GPU was usable here: the checks of {no_gpu} lesson(s) were SKIPPED and score 0 "
                   "(those lessons compiled). Grade them on a machine with a GPU.")
    if other_skips:
        out.append(f"The checks of {other_skips} lesson(s) cannot run on this GPU and were SKIPPED; they score 0 "
                   "(those lessons compiled). Their reports say which GPU they need.")
    if statuses.get("compile_error"):
        out.append(f"{statuses['compile_error']} lesson(s) did not compile: their reports begin with the errors.")
    data = {
        "score": score,
        "output": "\n".join(out),
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": dict({"max_score": max_score, "statuses": statuses}, **(extra or {})),
        "tests": tests,
    }
    if seconds is not None:
        data["execution_time"] = int(round(seconds))
    return data


def write_reports(results, out_dir, title, seconds=None, extra=None):
    out_dir.mkdir(parents=True, exist_ok=True)
    suites = ET.Element("testsuites", name=title)
    for r in results:
        suite = ET.SubElement(suites, "testsuite", name=r.name)
        if r.status in ("compile_error", "skipped", "no_checks"):
            tc = ET.SubElement(suite, "testcase", classname=r.name, name=r.status)
            tag = "skipped" if r.status == "skipped" else "failure"
            first = (r.detail.splitlines() or [r.status])[0]
            ET.SubElement(tc, tag, message=first[:500]).text = r.detail
        for c in r.cases:
            tc = ET.SubElement(suite, "testcase", classname=f"{r.name}.{c.kind}", name=c.name)
            if not c.passed:
                ET.SubElement(tc, "failure", message="check failed").text = c.message
        # The counts of what was written, so that they always agree with the test cases.
        cases = suite.findall("testcase")
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(tc.find("failure") is not None for tc in cases)))
        suite.set("skipped", str(sum(tc.find("skipped") is not None for tc in cases)))
    ET.ElementTree(suites).write(out_dir / "junit.xml", encoding="utf-8", xml_declaration=True)
    summary = gradescope_results(results, title, seconds, extra)
    (out_dir / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def print_table(results, title):
    """The score table: per lesson, its [exercise], [baseline] and scored [performance]
    cases passed, its sanitizer case (when graded), points and status."""
    print(f"\n{title}")
    w = max([len(r.name) for r in results] + [6])
    print(f"{'lesson':<{w}}  {'exercise':>8}  {'baseline':>8}  {'perf':>8}  {'sanitize':>8}  {'points':>11}  status")
    print(f"{'-' * w}  {'-' * 8}  {'-' * 8}  {'-' * 8}  {'-' * 8}  {'-' * 11}  ------")
    for r in results:
        ex, base = r.exercise_cases(), r.baseline_cases()
        scored = [c for c in r.performance_cases() if not c.unscored]
        perf = f"{sum(c.passed for c in scored):>3}/{len(scored):<4}" if scored else f"{'-':>3} {'':<4}"
        sanitizer = r.sanitizer_cases()
        san = "-" if not sanitizer else ("ok" if all(c.passed for c in sanitizer) else "FAIL")
        print(f"{r.name:<{w}}  {sum(c.passed for c in ex):>3}/{len(ex):<4}  {sum(c.passed for c in base):>3}/{len(base):<4}"
              f"  {perf}  {san:>8}  {r.score:>5.1f}/{POINTS_PER_LESSON:<5.0f}  {r.status}")
    total = sum(r.score for r in results)
    print(f"{'total':<{w}}  {'':>8}  {'':>8}  {'':>8}  {'':>8}  {total:>5.1f}/{POINTS_PER_LESSON * len(results):<5.0f}")


def cache_value(build_dir, name):
    """A variable's value in build_dir/CMakeCache.txt, or None."""
    try:
        cache = (Path(build_dir) / "CMakeCache.txt").read_text(errors="replace")
    except OSError:
        return None
    m = re.search(rf"^{re.escape(name)}:[A-Z]+=(.*)$", cache, re.M)
    return m.group(1) if m else None


def needs_configure(build_dir, lessons_dir=None, tracks=None, solutions_dir=None):
    """True when build_dir has no manifest yet, or was configured with other trees, other
    tracks or without the checks (a tour build), than these settings with their defaults."""
    if not (Path(build_dir) / "tut_manifest.json").exists():
        return True
    for name, wanted in build_settings(lessons_dir, tracks, solutions_dir).items():
        have = cache_value(build_dir, name)
        if have is None:
            return True
        if name in ("TUT_LESSONS_DIR", "TUT_SOLUTIONS_DIR"):
            if os.path.realpath(have) != os.path.realpath(wanted):
                return True
        elif name == "TUT_BUILD_CHECKS":
            if not cmake_true(have):
                return True
        elif have != wanted:
            return True
    return False


def unknown_lessons(build_dir, trees, only):
    """The --only names that are not lessons with checks of the given trees in build_dir's
    manifest, and a short list of those that are (one line per track)."""
    entries = json.loads((Path(build_dir) / "tut_manifest.json").read_text())
    known = {}
    for e in entries:
        if e["tree"] in trees and "check_target" in e:
            known.setdefault(e["track"], [])
            if e["lesson"] not in known[e["track"]]:
                known[e["track"]].append(e["lesson"])
    names = [f"{t}/{l}" for t, ls in known.items() for l in ls]
    unknown = [o for o in only if o not in names]
    listing = "\n".join(f"  {t}: {' '.join(ls)}" for t, ls in known.items())
    return unknown, names, listing


def check_only(build_dir, trees, only):
    """Exits 2 when an --only lesson is not in the build (a typo, or a track not built)."""
    unknown, names, listing = unknown_lessons(build_dir, trees, only)
    if not unknown:
        return
    lines = [f"grade.py: --only names lesson(s) not in the build in {build_dir}: {', '.join(unknown)}"]
    for u in unknown:
        close = difflib.get_close_matches(u, names, n=3)
        if close:
            lines.append(f"  {u}: did you mean {' or '.join(close)}?")
    lines.append("lessons in this build:" if listing else "this build has no lessons with checks")
    if listing:
        lines.append(listing)
    print("\n".join(lines), file=sys.stderr)
    raise SystemExit(2)


def prepare(build_dir, trees, only, lessons_dir=None, tracks=None, solutions_dir=None, jobs=None, logs=None,
            timer=None, programs=False):
    """Configures when needed and builds every check target of the given trees in one
    parallel build, and lesson programs (the sanitizer runs them): every lesson's when
    `programs` is True, else those of the trees and lessons it names ("solutions",
    "jor/01_block_per_row"). Returns ({tree: manifest entries}, True when that build
    succeeded)."""
    timer = timer or PhaseTimer()
    t = time.monotonic()
    if needs_configure(build_dir, lessons_dir, tracks, solutions_dir):
        configure(build_dir, lessons_dir, tracks, solutions_dir)
        timer.add("configure", time.monotonic() - t)
    if only:
        check_only(build_dir, trees, only)
    entries = {tree: load_manifest(build_dir, tree, only) for tree in trees}
    for tree in trees:
        if not entries[tree]:
            raise SystemExit(f"grade.py: no lessons with checks found for tree '{tree}' in {build_dir}"
                             + (f" (--only {' '.join(only)})" if only else ""))
    targets = build_targets([e for tree in trees for e in entries[tree]], programs)
    jobs = jobs or default_build_jobs()
    logs = logs or Path(build_dir)
    logs.mkdir(parents=True, exist_ok=True)
    what = "check targets and lesson programs" if len(targets) > sum(len(entries[t]) for t in trees) \
        else "check targets"
    print(f"building {len(targets)} {what} ({', '.join(trees)}) with {jobs} parallel jobs...", flush=True)
    t = time.monotonic()
    rc, timed_out = build_all(build_dir, targets, jobs, logs / "build-all.log")
    timer.add(f"parallel build ({len(targets)} targets, {jobs} jobs)", time.monotonic() - t)
    if timed_out:
        print(f"  the parallel build did not finish in {PREBUILD_TIMEOUT_S} s (log: {logs / 'build-all.log'}); "
              "when grading, the lessons are built one by one")
    elif rc != 0:
        print(f"  some targets failed to build (log: {logs / 'build-all.log'}); when grading, each lesson's "
              "own log is in its report")
    return entries, rc == 0 and not timed_out


def print_reports(results):
    """The report of every lesson without full points, as results.json has it: GitHub
    Classroom shows a test's console output only."""
    for r in results:
        if r.full_marks:
            continue
        print(f"\n---- {r.name}: {r.score:.1f}/{POINTS_PER_LESSON:.0f} ({r.status}) ----")
        print(test_output(r), end="")


def graded_line(r):
    """The progress line of one graded lesson: score, status, check time and limit, and
    the sanitizer's cost."""
    text = f"  graded {r.name}: {r.score:.1f}/{POINTS_PER_LESSON:.0f} ({r.status}"
    if r.limit is not None and r.status != "skipped":
        text += f"; checks {r.seconds:.1f} s, limit {r.limit:.0f} s"
    for c in r.sanitizer_cases():
        if c.data and not c.data.get("not_run"):
            text += f"; sanitizer {c.data['seconds']:.1f} s"
    return text + ")"


def sanitizer_seconds(results):
    return sum((c.data or {}).get("seconds", 0.0) for r in results if r for c in r.sanitizer_cases())


def grade_entries(tree, entries, build_dir, out_dir, title, run_jobs=1, timer=None, show_reports=True,
                  grading=None, show_table=True):
    """The per-lesson phase: build each check target alone (no-op when up to date), run the
    checks of those that built (run_jobs lessons at once; grading: time limits and the
    sanitizer case), write the reports; print the report of each lesson without full points
    unless show_reports is False, and the score table unless show_table is False."""
    timer = timer or PhaseTimer()
    grading = grading or Grading()
    logs = out_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    major = catch_major(build_dir)
    results = [None] * len(entries)
    t = time.monotonic()
    to_run = []
    for i, e in enumerate(entries):
        failed = None if grading.prebuilt else \
            build_lesson(e, Path(build_dir), logs, program=grading.sanitize and grading.programs_built is True)
        if failed:
            results[i] = failed
            print(graded_line(failed), flush=True)
        else:
            to_run.append(i)
    if not grading.prebuilt:
        timer.add(f"per-lesson build ({len(entries) - len(to_run)} failed)", time.monotonic() - t)

    t = time.monotonic()

    def shared_runs(i):
        limit, why = time_limit(entries[i], grading.check_times)
        return run_checks(entries[i], logs, major, limit, why, kinds=SHARED_RUNS)

    def done(i):
        """The lesson's progress line, once nothing more is run for it."""
        print(graded_line(results[i]), flush=True)

    # 1. The [exercise] and [baseline] runs, run_jobs lessons at once (they time nothing).
    # Lessons that need several GPUs take all of them: one at a time, after the others.
    alone = [i for i in to_run if entries[i].get("launcher")]
    shared = [i for i in to_run if i not in alone]
    workers = max(1, min(run_jobs, len(shared) or 1))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(shared_runs, i): i for i in shared}
        for fut in concurrent.futures.as_completed(futures):
            i = futures[fut]
            results[i] = fut.result()
            if results[i].status != "ok":
                done(i)
    for i in alone:
        results[i] = shared_runs(i)
        if results[i].status != "ok":
            done(i)
    # 2. The [performance] runs time kernels: one lesson at a time, with the GPU to itself.
    checked = [i for i in to_run if results[i].status == "ok"]
    caught = {i for i in checked
              if not grading.perf_caught and not all(c.passed for c in results[i].exercise_cases())}
    # run_checks() makes the [performance] run of those that have such cases
    timed = [i for i in checked if i not in caught]
    with grading.quiet() if grading.quiet and timed else contextlib.nullcontext():
        for i in checked:
            if i in caught:
                if has_performance_cases(entries[i]):
                    results[i].cases.append(perf_not_run_case())
            else:
                run_checks(entries[i], logs, major, kinds=("performance",), res=results[i])
            if not grading.sanitize or results[i].status != "ok":
                done(i)
    # 3. The sanitizer case (it times nothing), run_jobs lessons at once.
    if grading.sanitize:
        sanitized = [i for i in checked if results[i].status == "ok"]
        if grading.programs_built is not True:
            build_programs(build_dir, [entries[i] for i in sanitized
                                       if sanitizer_will_run(entries[i], results[i], grading)
                                       and results[i].name not in (grading.programs_built or ())], logs, timer)
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(add_sanitizer_case, entries[i], logs, results[i], grading): i for i in sanitized}
            for fut in concurrent.futures.as_completed(futures):
                done(futures[fut])
    what = f"checks ({len(to_run)} lessons, {workers} at a time, [performance] runs one at a time"
    if grading.sanitize:
        what += f"; sanitizer {sanitizer_seconds(results):.1f} s of lesson time"
    timer.add(what + ")", time.monotonic() - t)

    write_reports(results, out_dir, title, seconds=timer.total(),
                  extra={"tree": tree, "phase_seconds": {n: round(s, 1) for n, s in timer.phases}})
    if show_reports:
        print_reports(results)
    if show_table:
        print_table(results, title)
        print(f"\nreports: {out_dir / 'junit.xml'}, {out_dir / 'results.json'}")
    print(f"phase times ({tree}): {timer.line()}", flush=True)
    return results


def grade(tree, build_dir, out_dir, only, lessons_dir=None, tracks=None, solutions_dir=None, jobs=None,
          run_jobs=1, sanitize=False):
    timer = PhaseTimer()
    out_dir.mkdir(parents=True, exist_ok=True)
    entries, built = prepare(build_dir, [tree], only, lessons_dir, tracks, solutions_dir, jobs, out_dir / "logs",
                             timer, programs=sanitize)
    title = f"grade of {tree} tree ({lessons_dir or tree})"
    grading = Grading(sanitize=sanitize, check_times=load_check_times(gpu_name()), prebuilt=built)
    return grade_entries(tree, entries[tree], build_dir, out_dir, title, run_jobs, timer, grading=grading)


def pristine_problems(r):
    """Why one pristine exercise fails the self-test: it scores, or has nothing to score."""
    if r.status == "skipped":
        return []
    problems = []
    if not r.exercise_cases():
        problems.append(f"{r.name}: pristine exercise has no [exercise] check ({r.status})")
    for c in r.exercise_cases():
        if c.passed:
            problems.append(f"{r.name}: pristine exercise PASSES '{c.name}' (the TODO is not checked)")
    return problems


def solution_problems(r):
    """Why one solution fails the self-test: less than full points, or a failed baseline."""
    if r.status == "skipped":
        return []
    problems = []
    if r.status != "ok" or r.score < POINTS_PER_LESSON:
        problems.append(f"{r.name}: solution scores {r.score:.1f}/{POINTS_PER_LESSON:.0f} ({r.status})")
    for c in r.baseline_cases():
        if not c.passed:
            problems.append(f"{r.name}: solution fails baseline check '{c.name}'")
    return problems


def self_test_verdict(pristine, solutions):
    """Problems that make the self-test fail: an exercise that scores, a solution that does not."""
    return [p for r in pristine for p in pristine_problems(r)] + [p for r in solutions for p in solution_problems(r)]


def self_test_tally(pristine, solutions):
    """(passed, failed, skipped) lessons of both trees, each tree's lesson counted on its own."""
    verdicts = [(r, pristine_problems(r)) for r in pristine] + [(r, solution_problems(r)) for r in solutions]
    skipped = sum(r.status == "skipped" for r, _ in verdicts)
    failed = sum(bool(problems) for _, problems in verdicts)
    return len(verdicts) - failed - skipped, failed, skipped


def check_time_problems(entries, solutions, check_times, gpu):
    """Solutions whose checks took longer than the time limit a student's lesson gets on
    this GPU (the measured times are stale, or missing and the default is too short)."""
    problems = []
    for e, r in zip(entries, solutions):
        if r.status != "ok":
            continue
        limit, why = time_limit(e, check_times)
        if r.seconds > limit:
            problems.append(f"{r.name}: the solution's checks took {r.seconds:.1f} s, over the grading limit of "
                            f"{limit:.0f} s ({why}); scripts/grade.py --self-test --write-check-times updates "
                            f"{check_times_path(gpu).relative_to(REPO)}")
    return problems


# ---------------------------------------------------------------- the bank of known-wrong submissions


def wrong_only_matches(name, pattern):
    """--wrong-only names a lesson as track/NN_name or as track/NN."""
    return name == pattern or name.startswith(pattern + "_")


def wrong_bank_files(bank_dir, names, wrong_only=()):
    """{lesson: its .diff files, sorted by name} for the lessons `names` (in that order) that
    the bank has files for, narrowed to the --wrong-only lessons when there are any."""
    out = {}
    for name in names:
        if wrong_only and not any(wrong_only_matches(name, w) for w in wrong_only):
            continue
        folder = Path(bank_dir) / name
        files = sorted(folder.glob("*.diff")) if folder.is_dir() else []
        if files:
            out[name] = files
    return out


def write_submissions(bank, out_dir):
    """The submissions of the bank's files `bank` ({lesson: .diff files}), written by
    scripts/wrong_bank.py under out_dir as <track>/<lesson>/<mistake>.cu: ({lesson: those
    files}, a problem for each bank file that does not apply to its base)."""
    import wrong_bank  # scripts/wrong_bank.py: needed by the self-test only

    out, problems = {}, []
    for name, files in bank.items():
        for path in files:
            try:
                out.setdefault(name, []).append(wrong_bank.write_submission(path, out_dir, REPO))
            except wrong_bank.DiffError as e:
                problems.append(f"{name}: {e}")
    return out, problems


def submission_tree(work, bank):
    """A fresh copy of lessons/ in work/lessons, for submissions to be laid over, and the
    bank's files `bank` written out under work/submissions: (the copy, {lesson: submission
    files}, problems; see write_submissions())."""
    tree, made = work / "lessons", work / "submissions"
    for folder in (tree, made):
        if folder.exists():
            shutil.rmtree(folder)
    shutil.copytree(REPO / "lessons", tree)
    written, problems = write_submissions(bank, made)
    return tree, written, problems


def wrong_bank_rounds(bank):
    """Round r: the r-th file of every lesson that has one, as {lesson: file}."""
    rounds = max((len(files) for files in bank.values()), default=0)
    return [{name: files[r] for name, files in bank.items() if len(files) > r} for r in range(rounds)]


def wrong_header(path):
    """The `wrong:`, `caught by:` and `kind:` lines of a submission (scripts/wrong_bank.py)."""
    import wrong_bank  # scripts/wrong_bank.py: needed by the self-test only

    fields, _ = wrong_bank.parse_header(Path(path).read_text(errors="replace"))
    return fields


def short_case_name(r, name):
    """A case name without the "track/lesson: " that most of them begin with."""
    prefix = f"{r.name}: "
    return name[len(prefix):] if name.startswith(prefix) else name


def sanitizer_caught(r):
    return any(not c.passed and c.data and not c.data.get("not_run") for c in r.sanitizer_cases())


def caught_by(r):
    """What took points from a graded submission: the failing [exercise] and [performance]
    cases, the sanitizer tools that found something, or the crash, time-out or compile error."""
    if r.status == "compile_error":
        return "compile error"
    if r.status == "crashed":
        return "crash"
    if r.status == "timeout":
        return "time-out"
    if r.status == "skipped":
        return "skipped" + (f" ({r.skip_reason})" if r.skip_reason else "")
    if r.status == "no_checks":
        return "no [exercise] case"
    parts = [f"[{c.kind}] {short_case_name(r, c.name)}" for c in r.cases
             if c.kind in ("exercise", "performance") and not c.passed and not (c.data or {}).get("not_run")]
    for c in r.sanitizer_cases():
        if not c.passed and c.data and not c.data.get("not_run"):
            parts += [f"sanitizer: {tool}" for tool in c.data.get("failed_tools", [])] or ["sanitizer"]
    return "; ".join(parts) or "nothing (full marks)"


def wrong_row(r, path, sanitize):
    """The bank table's row for one graded known-wrong submission, and the self-test
    problem it shows (None when there is none)."""
    header = wrong_header(path)
    declared = header.get("caught_by", "")
    kind = header.get("kind", "?")
    row = {"lesson": r.name, "file": Path(path).name, "mistake": header.get("mistake", "(no 'wrong:' line)"),
           "kind": kind, "caught_by": caught_by(r), "declared": declared, "score": round(r.score, 2)}
    where = f"{r.name}: {Path(path).name}"
    problem = None
    if r.status == "skipped":
        verdict = "skipped"
    elif r.status == "compile_error":
        verdict = "DOES NOT COMPILE"
        problem = f"{where}: the known-wrong submission does not compile (its build log is in the round's logs)"
    elif kind == "race" and sanitize and r.status == "ok" and r.sanitizer_cases() and not sanitizer_caught(r):
        verdict = "RACE MISSED"
        problem = f"{where}: a race the sanitizer case did not catch ({row['mistake']})"
    elif not r.full_marks:
        verdict = "caught"
    elif declared.startswith("sanitizer") and not sanitize:
        verdict = "not checked (needs --sanitize)"
    elif declared.startswith("[performance]") and not [c for c in r.performance_cases() if not c.unscored]:
        verdict = "not checked (no scored [performance] case here)"
    else:
        verdict = "NOT CAUGHT"
        problem = f"{where} scores full marks: {row['mistake']}"
    row["verdict"] = verdict
    return row, problem


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def wrong_bank_table(rows):
    """The bank's table in Markdown: lesson | mistake | kind | caught by | declared."""
    lines = ["| lesson | mistake | kind | caught by | declared |", "|---|---|---|---|---|"]
    for row in rows:
        caught = row["caught_by"] if row["verdict"] in ("caught", "skipped") else f"{row['verdict']}: {row['caught_by']}"
        cells = [row["lesson"], f"`{row['file']}`: {row['mistake']}", row["kind"], caught, row["declared"]]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def wrong_bank_tally(rows):
    """The bank's summary line."""
    caught = sum(r["verdict"] == "caught" for r in rows)
    skipped = sum(r["verdict"] == "skipped" for r in rows)
    unchecked = sum(r["verdict"].startswith("not checked") for r in rows)
    failed = len(rows) - caught - skipped - unchecked
    line = f"wrong-bank self-test: {caught} caught, {failed} failed"
    if unchecked:
        line += f", {unchecked} not checked here"
    if skipped:
        line += f", {skipped} skipped"
    return line + f" ({len(rows)} known-wrong submission(s))"


def process_tree(pid):
    """pid and the processes under it, parents before children (Linux: /proc); [] when
    /proc cannot tell."""
    children = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(stat.parent.name))
    if not children:
        return []
    tree, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        tree.append(p)
        todo += children.get(p, [])
    return tree


def signal_tree(pid, sig):
    """Sends sig to pid and every process under it; False when /proc cannot list them."""
    tree = process_tree(pid)
    for p in tree:
        try:
            os.kill(p, sig)
        except OSError:
            pass  # ended meanwhile
    return bool(tree)


class BackgroundBuild:
    """A parallel build started now and waited for later. The self-test builds the bank's
    rounds while the GPU grades something else: the compilers run at a lower priority
    (`nice`), so the check programs running meanwhile keep their CPUs, and the [exercise],
    [baseline] and sanitizer runs time nothing. While [performance] cases time kernels the
    build is paused (pause(): SIGSTOP to the build's every process, compilers included),
    or waited for where its processes cannot be listed."""

    def __init__(self, build_dir, targets, jobs, log_path, niceness=10, configure=None):
        """`configure`: the configure command to run first, when the build dir needs one."""
        # a build dir configured only now has no generator to ask yet
        cmd = build_command(build_dir, targets, jobs, ["-k", "0"] if configure and "Ninja" in configure else None)
        if configure:
            cmd = ["sh", "-c", f"{shlex.join(configure)} && exec {shlex.join(cmd)}"]
        if shutil.which("nice"):
            cmd = ["nice", "-n", str(niceness), *cmd]
        self.targets = len(targets)
        self.jobs = jobs
        self.started = time.monotonic()
        self.seconds = None  # its wall time, once it ended
        self.waited = 0.0  # how long the self-test stood still for it
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.ended = None
        threading.Thread(target=self._note_the_end, daemon=True).start()

    def _note_the_end(self):
        self.proc.wait()
        self.ended = time.monotonic()

    def wait(self):
        if self.seconds is None:
            t = time.monotonic()
            try:
                self.proc.wait(timeout=max(1.0, PREBUILD_TIMEOUT_S - (t - self.started)))
            except subprocess.TimeoutExpired:
                self.stop()
            self.log.close()
            now = time.monotonic()
            self.seconds = (self.ended or now) - self.started
            self.waited = now - t

    def pause(self):
        """Stops the build's processes until resume(); waits for it instead where they
        cannot be listed. Twice over: a process started during the first pass by one not yet
        stopped is stopped by the second."""
        if self.proc.poll() is None:
            if not (signal_tree(self.proc.pid, signal.SIGSTOP) and signal_tree(self.proc.pid, signal.SIGSTOP)):
                self.wait()

    def resume(self):
        if self.proc.poll() is None:
            signal_tree(self.proc.pid, signal.SIGCONT)

    def stop(self):
        if self.proc.poll() is None:
            signal_tree(self.proc.pid, signal.SIGCONT)
            if not signal_tree(self.proc.pid, signal.SIGKILL):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.log.close()


def start_background_build(build_dir, lessons_dir, tracks, targets, jobs, log_path, niceness=10):
    """The BackgroundBuild of `targets` in build_dir, configured first for lessons_dir when it
    needs that (in the background too)."""
    configure = configure_command(build_dir, lessons_dir, tracks) if needs_configure(build_dir, lessons_dir, tracks) \
        else None
    return BackgroundBuild(build_dir, targets, jobs, log_path, niceness, configure)


class WrongBank:
    """The bank's submissions, graded in rounds (see the module's docstring) over two copies
    of lessons/, out/wrong-bank/lessons (build dir build) for the odd rounds and lessons-2
    (build-2) for the even ones: while round r is graded over one copy, round r + 1 is laid
    over the other and built in the background (BackgroundBuild); rounds 1 and 2 build while
    both trees are graded. quiet() pauses the builds while kernels are timed."""

    def __init__(self, out, entries, bank_dir, wrong_only, tracks, jobs, sanitize):
        """`entries`: the lessons tree's manifest entries of the self-test (the lessons it
        grades). Writes the submissions out; start() begins the first round's build."""
        self.names = [f"{e['track']}/{e['lesson']}" for e in entries]
        self.by_name = dict(zip(self.names, entries))
        self.tracks, self.jobs, self.sanitize = tracks, jobs or default_build_jobs(), sanitize
        self.rounds, self.problems, self.builds = [], [], {}
        self.work = out / "wrong-bank"
        bank = wrong_bank_files(bank_dir, self.names, wrong_only)
        elsewhere = sorted(f"{p.parent.name}/{p.name}" for p in Path(bank_dir).glob("*/*")
                           if p.is_dir() and f"{p.parent.name}/{p.name}" not in self.by_name
                           and any(p.glob("*.diff")))
        if elsewhere and not wrong_only:
            listing = ", ".join(elsewhere) if len(elsewhere) <= 10 else f"{', '.join(elsewhere[:10])}, ..."
            print(f"wrong bank: {len(elsewhere)} lesson(s) not graded here (not in this build, or left out by "
                  f"--only): {listing}")
        if not bank:
            print("wrong bank: no known-wrong submission for the lessons graded here")
            return
        tree, bank, self.problems = submission_tree(self.work, bank)
        self.rounds = wrong_bank_rounds(bank)
        self.trees = [tree, self.work / "lessons-2"]
        if self.trees[1].exists():
            shutil.rmtree(self.trees[1])
        if len(self.rounds) > 1:
            shutil.copytree(tree, self.trees[1])
        self.build_dirs = [self.work / "build", self.work / "build-2"]

    def copy_of(self, r):
        """Round r's copy of lessons/ and its build dir."""
        return self.trees[(r - 1) % 2], self.build_dirs[(r - 1) % 2]

    def races(self, r):
        return tuple(name for name, path in self.rounds[r - 1].items() if wrong_header(path).get("kind") == "race")

    def start(self, r, niceness=10):
        """Lays round r's submissions over its copy and starts its build in the background
        (nothing past the last round). Round r - 2, graded in the same copy, must be done."""
        if not 1 <= r <= len(self.rounds) or r in self.builds:
            return
        tree, build_dir = self.copy_of(r)
        files = self.rounds[r - 1]
        for name, path in files.items():
            e = self.by_name[name]
            # a plain copy: a new time stamp, so the build dir rebuilds the lesson
            shutil.copy(path, tree / e["track"] / e["lesson"] / Path(e["source"]).name)
        # the targets are named alike in every build dir: the self-test's own manifest gives them
        targets = build_targets([self.by_name[name] for name in sorted(files)],
                                self.races(r) if self.sanitize else ())
        logs = self.work / f"round-{r}" / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.builds[r] = start_background_build(build_dir, tree, self.tracks, targets, self.jobs,
                                                logs / "build-background.log", niceness)

    def wait(self, r):
        """Waits for round r's build, if it was started."""
        if r in self.builds:
            self.builds[r].wait()

    def stop(self):
        for build in self.builds.values():
            build.stop()

    @contextlib.contextmanager
    def quiet(self):
        """The builds paused (or, where they cannot be, finished) for the block's duration."""
        running = [b for b in self.builds.values() if b.seconds is None]
        for build in running:
            build.pause()
        try:
            yield
        finally:
            for build in running:
                build.resume()

    def grade(self, run_jobs, grading):
        """Grades every round; returns (rows of the table, self-test problems)."""
        if not self.rounds:
            return [], list(self.problems)
        rows, problems = [], list(self.problems)
        start = time.monotonic()
        for r, files in enumerate(self.rounds, 1):
            self.start(r)  # when nothing before started it
            self.wait(r)
            self.start(r + 1)  # round r - 1 is done, so its copy is free
            build = self.builds[r]
            print(f"\nwrong bank, round {r} of {len(self.rounds)}: {len(files)} lesson(s); built in the background "
                  f"({build.targets} targets, {build.jobs} jobs, {build.seconds:.1f} s, of which {build.waited:.1f} s "
                  "waited for)", flush=True)
            races = self.races(r)
            timer = PhaseTimer()
            tree, build_dir = self.copy_of(r)
            round_out = self.work / f"round-{r}"
            # everything is built: this finds the failures, if any, and builds nothing more
            round_entries, built = prepare(build_dir, ["lessons"], sorted(files), lessons_dir=tree,
                                           tracks=self.tracks, jobs=self.jobs, logs=round_out / "logs", timer=timer,
                                           programs=races if grading.sanitize else False)
            # A submission needs catching once: the [performance] runs are made only where the
            # [exercise] cases pass; the sanitizer runs on races, and on those the checks leave at
            # full marks; only their programs are built (the others' after the checks).
            round_grading = Grading(sanitize=grading.sanitize, sanitize_always=races,
                                    check_times=grading.check_times, sanitize_caught=False, programs_built=races,
                                    prebuilt=built, perf_caught=False, quiet=self.quiet)
            results = grade_entries("lessons", round_entries["lessons"], build_dir, round_out,
                                    f"wrong bank, round {r}", run_jobs, timer, show_reports=False,
                                    grading=round_grading, show_table=False)
            for res in results:
                row, problem = wrong_row(res, files[res.name], grading.sanitize)
                rows.append(row)
                if problem:
                    problems.append(problem)
        order = {name: i for i, name in enumerate(self.names)}
        rows.sort(key=lambda row: (order[row["lesson"]], row["file"]))
        table = wrong_bank_table(rows)
        tally = wrong_bank_tally(rows)
        out = self.work.parent
        (out / "wrong-bank.md").write_text(f"# Known-wrong submissions, graded\n\n{table}\n{tally}\n")
        print(f"\nwrong bank ({len(self.rounds)} round(s), {time.monotonic() - start:.1f} s):\n\n{table}")
        print(f"table: {out / 'wrong-bank.md'}")
        return rows, problems


def self_test(build_dir, out, only, tracks, jobs, run_jobs, sanitize=False, wrong_bank=True, wrong_only=(),
              bank_dir=WRONG_BANK_DIR, write_times=False):
    """Both trees: one parallel build of all their check targets, then each tree graded;
    then the bank of known-wrong submissions, round by round."""
    start = time.monotonic()
    if not tracks:
        # CTest runs the self-test on the build it belongs to: keep that build's tracks
        have = cache_value(build_dir, "TUT_TRACKS")
        tracks = [t for t in (have or "").split(";") if t]
    gpu = gpu_name()
    committed = load_check_times(gpu)
    prep = PhaseTimer()
    # the pristine exercises fail their [exercise] cases, so the sanitizer runs none of their programs
    entries, built = prepare(build_dir, ["lessons", "solutions"], only, tracks=tracks, jobs=jobs, logs=out,
                             timer=prep, programs=("solutions",) if sanitize else False)
    print(f"phase times (configure and build, both trees): {prep.line()}", flush=True)
    # On a GPU the bank's first two rounds build while both trees are graded, paused while
    # kernels are timed, the second at a lower priority than the first; without one every
    # round would build a tree to be skipped, and the wrong-bank target already compiles
    # every file.
    bank = WrongBank(out, entries["lessons"], bank_dir, wrong_only, tracks, jobs, sanitize) \
        if wrong_bank and gpu else None
    if bank and not write_times:  # check times are measured on a quiet machine
        bank.start(1)
        bank.start(2, niceness=19)
    quiet = bank.quiet if bank else None
    # the pristine exercises fail by design: their reports would only bury the verdict
    pristine = grade_entries("lessons", entries["lessons"], build_dir, out / "lessons", "grade of lessons tree (lessons)",
                             run_jobs, show_reports=False,
                             grading=Grading(sanitize=sanitize, check_times=committed, prebuilt=built,
                                             programs_built=(), perf_caught=False, quiet=quiet))
    # the solutions run under CTest's limits, so that their check times are measured whole
    solutions = grade_entries("solutions", entries["solutions"], build_dir, out / "solutions",
                              "grade of solutions tree (solutions)", run_jobs,
                              grading=Grading(sanitize=sanitize, prebuilt=built, quiet=quiet))
    all_skipped = all(r.status == "skipped" for r in pristine + solutions)
    problems = self_test_verdict(pristine, solutions)
    if gpu and not write_times:
        problems += check_time_problems(entries["solutions"], solutions, committed, gpu)
    if write_times and gpu and not all_skipped:
        print(f"check times written: {write_check_times(gpu, solutions)}")
    elif write_times:
        print("no check times written: no GPU ran the solutions' checks here")
    if all_skipped:
        print(f"SKIPPED: {all_skipped_why(pristine + solutions)}, so the grader self-test tested nothing.")
    else:
        for p in problems:
            print("SELF-TEST FAILURE:", p)
        passed, failed, skipped = self_test_tally(pristine, solutions)
        print(f"grader self-test: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""),
              flush=True)
    bank_problems = []
    if wrong_bank and all_skipped:
        if bank:
            bank.stop()
        print("wrong-bank self-test: not run (no GPU ran the checks here)")
    elif wrong_bank:
        bank = bank or WrongBank(out, entries["lessons"], bank_dir, wrong_only, tracks, jobs, sanitize)
        rows, bank_problems = bank.grade(run_jobs, Grading(sanitize=sanitize, check_times=committed))
        for p in bank_problems:
            print("SELF-TEST FAILURE:", p)
        if rows:
            print(wrong_bank_tally(rows))
    print(f"self-test wall time: {time.monotonic() - start:.1f} s ({run_jobs} check programs at a time)")
    if bank_problems or (problems and not all_skipped):
        return 1
    return SKIP_EXIT if all_skipped else 0


# ---------------------------------------------------------------- calibration


def import_perf_gates():
    """scripts/perf_gates.py, which turns the calibration reports into thresholds."""
    try:
        import perf_gates
    except ImportError as e:
        raise SystemExit(f"grade.py --calibrate: scripts/perf_gates.py, which writes the thresholds, could not be "
                         f"imported ({e})")
    if not hasattr(perf_gates, "write_thresholds"):
        raise SystemExit("grade.py --calibrate: scripts/perf_gates.py has no write_thresholds(reports, gpu_name, "
                         "out_path)")
    return perf_gates


def performance_run(entry, logs, major, limit, stem, calibrate=False, extra_args=()):
    """One run of a check program's [performance] cases, judged or (`calibrate`) measured
    only, its output in logs/<stem>.log: (exit code, timed out, the reports its cases wrote
    to logs/<stem>.jsonl)."""
    report = logs / f"{stem}.jsonl"
    if report.exists():
        report.unlink()
    env = {k: v for k, v in os.environ.items() if k != "TUT_PERF_CALIBRATE"}
    env["TUT_PERF_REPORT"] = str(report)
    if calibrate:
        env["TUT_PERF_CALIBRATE"] = "1"
    cmd = launch_prefix(entry, limit) + [entry["check_exe"], "[performance]", *extra_args]
    if major >= 3:
        cmd.append("--allow-running-no-tests")
    rc, _, timed_out = run_with_timeout(cmd, limit, logs / f"{stem}.log", env=env)
    return rc, timed_out, read_perf_reports(report)


def calibrate_run(entry, logs, major, index):
    """One run of a solution check's [performance] cases in calibration mode: (exit code,
    the reports its cases wrote)."""
    name = f"{entry['track']}/{entry['lesson']}"
    stem = f"{entry['tree']}-{entry['track']}-{entry['lesson']}.calibrate-{index + 1}"
    limit = entry.get("timeout", 300)
    rc, timed_out, reports = performance_run(entry, logs, major, limit, stem, calibrate=True,
                                             extra_args=("-r", "junit", "-o", str(logs / f"{stem}.junit.xml")))
    if timed_out:
        print(f"  {name}: calibration run {index + 1} did not finish in {limit} s ({logs / (stem + '.log')})")
    elif rc not in (0, SKIP_EXIT):
        print(f"  {name}: calibration run {index + 1} exited with code {rc} ({logs / (stem + '.log')})")
    return rc, reports


def calibrate(build_dir, out_file, only, tracks, jobs, runs):
    """Runs every solution check's [performance] cases `runs` times on this GPU and writes
    the thresholds with scripts/perf_gates.py. Exit 77 without a GPU."""
    perf_gates = import_perf_gates()
    gpu = gpu_name()
    if not gpu:
        print("SKIPPED: calibration measures on a GPU, and none is usable here.")
        return SKIP_EXIT
    out_file = Path(out_file) if out_file else THRESHOLDS_DIR / gpu_file_name(gpu)
    logs = Path(build_dir) / "calibrate"
    entries, _ = prepare(build_dir, ["solutions"], only, tracks=tracks, jobs=jobs, logs=logs)
    logs.mkdir(parents=True, exist_ok=True)
    major = catch_major(build_dir)
    reports, skipped = [], 0
    start = time.monotonic()
    for e in entries["solutions"]:
        name = f"{e['track']}/{e['lesson']}"
        if build_lesson(e, Path(build_dir), logs):
            print(f"  {name}: the solution does not compile, so it is not calibrated")
            continue
        got = []
        for i in range(runs):
            rc, items = calibrate_run(e, logs, major, i)
            if rc == SKIP_EXIT:
                skipped += 1
                print(f"  {name}: skipped (its checks cannot run on this GPU)")
                break
            got += items
        for case in sorted({str(r.get("case")) for r in got}):
            ratios = " ".join(_num(r.get("ratio")) for r in got if str(r.get("case")) == case)
            measure = next((r.get("measure") for r in got if str(r.get("case")) == case and r.get("measure")), "")
            print(f"  {name}: {case}: ratios {ratios}" + (f" ({measure})" if measure else ""), flush=True)
        reports += got
    print(f"calibration: {len(reports)} report(s) from {len(entries['solutions'])} solution(s), {runs} run(s) each, "
          f"{time.monotonic() - start:.0f} s")
    if not reports:
        if skipped == len(entries["solutions"]):
            print("SKIPPED: no solution's checks could run on this GPU.")
            return SKIP_EXIT
        print("calibration: no [performance] case reported anything, so no thresholds were written")
        return 0
    data = perf_gates.write_thresholds(reports, gpu, str(out_file))
    written = data.get("lessons", {}) if isinstance(data, dict) else {}
    for gate in sorted({str(r.get("gate") or r.get("lesson")) for r in reports if r.get("gate") or r.get("lesson")}):
        e = written.get(gate) or {}
        if e.get("threshold") is not None:
            print(f"  {gate}: gate {_num(e['threshold'])} (solution {_num(e.get('solution'))}, previous approach "
                  f"{_num(e.get('previous'))})")
        else:
            print(f"  {gate}: unscored: {e.get('reason', '')}")
    print(f"thresholds for {gpu}: {out_file}\nConfirm them before grading with them: scripts/grade.py --confirm-gates 20")
    return 0



# ---------------------------------------------------------------- confirming the gates


def threshold_entries(gpu):
    """{lesson: its entry} of this GPU's thresholds file ({} without one)."""
    data = import_perf_gates().load_existing(str(THRESHOLDS_DIR / gpu_file_name(gpu))) or {"lessons": {}}
    return {k: v for k, v in data["lessons"].items() if isinstance(v, dict)}


def gate_submission(bank_dir, name):
    """The bank file a lesson's gate must fail: the first (by name) of kind previous-lesson,
    else the first whose `caught by:` is [performance]; None when the bank has neither."""
    folder = Path(bank_dir) / name
    files = sorted(folder.glob("*.diff")) if folder.is_dir() else []
    by_perf = [f for f in files if "[performance]" in wrong_header(f).get("caught_by", "")]
    previous = [f for f in by_perf if wrong_header(f).get("kind") == "previous-lesson"]
    return (previous or by_perf or [None])[0]


def gate_run(entry, logs, major, limit, stem):
    """One run of a check program's [performance] cases, judged: (outcome, the reports its
    cases wrote); outcome "ran", "skipped", "timeout" or "crashed"."""
    rc, timed_out, reports = performance_run(entry, logs, major, limit, stem)
    if rc == SKIP_EXIT:
        return "skipped", reports
    if timed_out:
        return "timeout", reports
    if rc < 0 or (rc != 0 and not any(r.get("status") == "fail" for r in reports)):
        return "crashed", reports  # a non-zero exit that no gate's verdict explains
    return "ran", reports


def gate_outcome(outcome, reports, entry=None):
    """One run's verdict on its lesson's gate: "pass" (a scored case passed, none failed),
    "fail" (a scored case failed), "unscored" (no case was judged), or the run's outcome when
    it did not run to the end; and the judged ratios (without a judged case, those of the
    cases that measure what the thresholds `entry` names, at its size)."""
    judged = [r for r in reports if r.get("status") in ("pass", "fail")]
    shape = (entry.get("measure"), entry.get("size")) if entry else None
    alike = [r for r in reports if (r.get("measure"), r.get("size")) == shape]
    ratios = [float(r["ratio"]) for r in (judged or alike) if isinstance(r.get("ratio"), (int, float))]
    if outcome != "ran":
        return outcome, ratios
    if any(r.get("status") == "fail" for r in judged):
        return "fail", ratios
    return ("pass" if judged else "unscored"), ratios


def ratio_range(ratios):
    if not ratios:
        return "-"
    s = sorted(ratios)
    return f"{s[0]:.3f} .. {s[len(s) // 2]:.3f} .. {s[-1]:.3f}"


def previous_alike_lesson(name, entries):
    """The lesson just before `name` in its track whose speed case measures the same thing at
    the same size (scored or not), among `entries` ({lesson: thresholds entry}): its solution
    is then the previous lesson's approach, measured alike (perf_gates.previous_alike)."""
    return import_perf_gates().previous_alike(
        name, {k: (e.get("measure"), e.get("size")) for k, e in entries.items()})


def gate_confirmation_rows(runs, gates, submissions, count, entries=None):
    """The table's rows and the problems, from runs {(lesson, side): [(verdict, ratios)]}
    (side "solution" or "submission"): the solution must pass every run, and the bank's
    submission, and the previous lesson's solution where it is measured alike, fail every
    run."""
    rows, problems = [], []
    for name in sorted(gates):
        sol = runs.get((name, "solution"), [])
        sub = runs.get((name, "submission"), [])
        passed = sum(v == "pass" for v, _ in sol)
        failed = sum(v == "fail" for v, _ in sub)
        path = submissions.get(name)
        earlier = previous_alike_lesson(name, {**(entries or {}), **gates})
        threshold = gates[name].get("threshold")
        earlier_ratios = [x for _, r in runs.get((earlier, "solution"), []) for x in r] if earlier else []
        earlier_passed = sum(x >= threshold for x in earlier_ratios) if threshold is not None else 0
        row = {"lesson": name, "measure": gates[name].get("measure", ""), "size": gates[name].get("size", ""),
               "threshold": threshold, "runs": count,
               "solution_passed": passed, "solution_ratios": [x for _, r in sol for x in r],
               "submission": path.name if path else None, "submission_failed": failed,
               "submission_ratios": [x for _, r in sub for x in r],
               "other": sorted({v for v, _ in sol if v != "pass"} | {v for v, _ in sub if v != "fail"}),
               "previous_lesson": earlier if earlier_ratios else None, "previous_lesson_passed": earlier_passed,
               "previous_lesson_runs": len(earlier_ratios), "previous_lesson_ratios": earlier_ratios}
        rows.append(row)
        if sol and all(v == "skipped" for v, _ in sol):
            continue  # cannot run here (more GPUs, another architecture): said in the row
        if threshold is None:
            continue  # unscored here: the runs' ratios are the evidence, there is nothing to hold
        problems += gate_problems(row, count, count if path else None)
    return rows, problems


def gate_problems(row, solution_runs, submission_runs):
    """What a confirmation row of a scored gate shows wrong: solution runs that did not pass,
    submission runs that did not fail (None: the bank has no submission for the gate), and runs
    of the previous lesson's solution, measured alike, that reached the gate."""
    name, problems = row["lesson"], []
    if row["solution_passed"] < solution_runs:
        problems.append(f"{name}: the solution passed its gate in {row['solution_passed']} of {solution_runs} run(s)")
    if submission_runs is None:
        problems.append(f"{name}: the bank has no submission its gate must catch (kind previous-lesson, or "
                        "caught by [performance])")
    elif row["submission_failed"] < submission_runs:
        problems.append(f"{name}: {row['submission']} failed the gate in {row['submission_failed']} of "
                        f"{submission_runs} run(s)")
    if row.get("previous_lesson_passed"):
        problems.append(f"{name}: {row['previous_lesson']}'s solution, measured alike, reached this gate in "
                        f"{row['previous_lesson_passed']} of {row['previous_lesson_runs']} run(s)")
    return problems


def gate_confirmation_table(rows, gpu):
    lines = [f"| lesson | measure, size | threshold | solution passed | solution's ratios (min .. median .. max) "
             f"| submission | submission failed | submission's ratios | other outcomes |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        other = r["other"] + ([f"{r['previous_lesson']}'s solution passed {r['previous_lesson_passed']}/"
                               f"{r['previous_lesson_runs']}"] if r.get("previous_lesson_passed") else [])
        scored = r["threshold"] is not None
        if not scored:
            other = [o for o in other if o != "unscored"] + (
                [f"{r['previous_lesson']}'s solution: {ratio_range(r['previous_lesson_ratios'])}"]
                if r.get("previous_lesson_ratios") else [])
        threshold = f"{r['threshold']:.3f}" if scored else "unscored"
        passed = f"{r['solution_passed']}/{r['runs']}" if scored else "-"
        failed = f"{r['submission_failed']}/{r['runs']}" if scored else "-"
        lines.append(f"| {r['lesson']} | {r['measure']}, {r['size']} | {threshold} | {passed} | "
                     f"{ratio_range(r['solution_ratios'])} | `{r['submission'] or 'none'}` | {failed} | "
                     f"{ratio_range(r['submission_ratios'])} | {', '.join(other) or '-'} |")
    return f"# Performance gates confirmed on {gpu}\n\n" + "\n".join(lines) + "\n"


def confirm_gates(build_dir, out, only, tracks, jobs, count, bank_dir=WRONG_BANK_DIR):
    """Runs every gated lesson's [performance] cases `count` times with the solution and
    `count` times with the bank's submission its gate must catch, alternating, judged
    against this GPU's thresholds (an unscored gate that `only` names runs alike, its ratios
    recorded with nothing to hold); writes out/gate-confirmation.md and .json. Exit 0 when
    every solution run passed and every submission run failed, 1 otherwise, 77 without a
    GPU."""
    gpu = gpu_name()
    if not gpu:
        print("SKIPPED: confirming the performance gates needs a GPU, and none is usable here.")
        return SKIP_EXIT
    entries_here = threshold_entries(gpu)
    # the gates, and the unscored ones --only names: their runs may show the gap a threshold needs
    gates = {k: v for k, v in entries_here.items()
             if v.get("threshold") is not None or (k in only and v.get("measure"))}
    if not gates:
        print(f"confirm-gates: {gpu} has no thresholds file with a gate ({THRESHOLDS_DIR / gpu_file_name(gpu)}); "
              "write one with --calibrate first")
        return 1
    if needs_configure(build_dir, tracks=tracks):
        configure(build_dir, tracks=tracks)
    if only:
        check_only(build_dir, ["solutions"], only)
    here = {f"{e['track']}/{e['lesson']}" for e in load_manifest(build_dir, "solutions", [])}
    left_out = sorted(k for k in gates if k not in here and (not only or k in only))
    gates = {k: v for k, v in gates.items() if k in here and (not only or k in only)}
    # the previous lessons measured alike, unscored or not gated here: their solutions run too
    alike = {p for p in (previous_alike_lesson(k, entries_here) for k in gates) if p and p in here and p not in gates}
    if left_out:
        print(f"confirm-gates: {len(left_out)} gated lesson(s) not in this build: {', '.join(left_out)}")
    if not gates:
        print("confirm-gates: no lesson built here has a gate on this GPU")
        return 1
    entries, _ = prepare(build_dir, ["solutions"], sorted(set(gates) | alike), tracks=tracks, jobs=jobs,
                         logs=out / "logs")
    solutions = {f"{e['track']}/{e['lesson']}": e for e in entries["solutions"]}
    submissions = {name: gate_submission(bank_dir, name) for name in gates}
    bank = {name: [path] for name, path in submissions.items() if path}
    work = out / "gate-submissions"
    tree, written, problems = submission_tree(work, bank)
    for name, paths in written.items():
        e = solutions[name]
        shutil.copy(paths[0], tree / e["track"] / e["lesson"] / Path(e["source"]).name)
    lesson_entries, _ = prepare(work / "build", ["lessons"], sorted(written), lessons_dir=tree, tracks=tracks,
                                jobs=jobs, logs=work / "logs")
    timed = sorted(set(gates) | alike)
    programs = {(name, "solution"): e for name, e in solutions.items() if name in timed}
    programs.update({(f"{e['track']}/{e['lesson']}", "submission"): e for e in lesson_entries["lessons"]})
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    major = catch_major(build_dir)
    check_times = load_check_times(gpu)
    broken = set()
    for key, e in sorted(programs.items()):
        b = Path(build_dir) if key[1] == "solution" else work / "build"
        if build_lesson(e, b, logs):
            broken.add(key)
            problems.append(f"{key[0]}: the {key[1]} does not compile ({logs})")
    runs = {}
    start = time.monotonic()
    # when these runs began, to the minute: perf_gates.py labels what it sets from them so
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    for i in range(count):
        for name in timed:
            for side in ("solution", "submission"):
                key = (name, side)
                if key not in programs or key in broken:
                    continue
                limit, _ = time_limit(solutions[name], check_times)
                stem = f"{name.replace('/', '-')}.{side}-{i + 1}"
                verdict, ratios = gate_outcome(*gate_run(programs[key], logs, major, limit, stem), entries_here[name])
                runs.setdefault(key, []).append((verdict, ratios))
        # the table so far after every round: a run cut short still leaves its rounds' evidence
        rows, more = gate_confirmation_rows(runs, gates, submissions, i + 1, entries_here)
        table = gate_confirmation_table(rows, gpu)
        (out / "gate-confirmation.md").write_text(table)
        (out / "gate-confirmation.json").write_text(json.dumps({"gpu": gpu, "date": started, "runs": i + 1,
                                                                "lessons": rows}, indent=1))
        print(f"confirm-gates: round {i + 1} of {count} done ({time.monotonic() - start:.0f} s)", flush=True)
    problems += more
    print("\n" + table)
    for p in problems:
        print("GATE NOT CONFIRMED:", p)
    print(f"confirm-gates: {len(rows)} gate(s), {count} run(s) each side, {len(problems)} problem(s), "
          f"{time.monotonic() - start:.0f} s")
    if runs and all(v == "skipped" for results in runs.values() for v, _ in results):
        print("SKIPPED: no gated lesson's checks could run on this GPU.")
        return SKIP_EXIT
    return 1 if problems else 0


def merge_gate_confirmations(paths, out):
    """--merge-confirmations: the confirmations in `paths` (one GPU) as one table, each run
    judged against that GPU's thresholds file as it is now (a threshold may have been set
    again between the runs); writes out/gate-confirmation-merged.md. Exit 1 on a problem."""
    merged = import_perf_gates().merge_confirmations([json.loads(Path(p).read_text()) for p in paths])
    gpu = merged["gpu"]
    thresholds = THRESHOLDS_DIR / gpu_file_name(gpu)
    entries = json.loads(thresholds.read_text()).get("lessons", {}) if thresholds.exists() else {}
    problems = []
    for row in merged["lessons"]:
        name = row["lesson"]
        t = entries.get(name, {}).get("threshold")
        sol, sub = row.get("solution_ratios", []), row.get("submission_ratios", [])
        earlier = row.get("previous_lesson_ratios") or []
        row.update(threshold=t, runs=len(sol), previous_lesson_runs=len(earlier),
                   other=[o for o in row.get("other", []) if o not in ("pass", "fail")])
        if t is None:
            continue  # unscored now: the ratios are the evidence
        row.update(solution_passed=sum(x >= t for x in sol), submission_failed=sum(x < t for x in sub),
                   previous_lesson_passed=sum(x >= t for x in earlier))
        problems += gate_problems(row, len(sol), len(sub))
    out.mkdir(parents=True, exist_ok=True)
    table = gate_confirmation_table(merged["lessons"], gpu)
    (out / "gate-confirmation-merged.md").write_text(table)
    print(table)
    for p in problems:
        print("GATE NOT CONFIRMED:", p)
    print(f"merge-confirmations: {len(paths)} file(s), {len(merged['lessons'])} gate(s), {len(problems)} problem(s)")
    return 1 if problems else 0


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number")
    if v < 1:
        raise argparse.ArgumentTypeError(f"'{text}' must be at least 1")
    return v


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", choices=["lessons", "solutions"], default="lessons")
    ap.add_argument("--lessons-dir", help="grade this copy of lessons/ (configures its own build dir)")
    ap.add_argument("--solutions-dir", help="the solution tree CMake builds beside it (default: solutions/)")
    ap.add_argument("--build-dir", default=str(REPO / "build"))
    ap.add_argument("--out", help="the reports' folder (default: grade-results/); with --calibrate, the thresholds "
                                  "file (default: common/checks/thresholds/<gpu>.json)")
    ap.add_argument("--only", action="append", default=[], help="track/lesson to grade (repeatable)")
    ap.add_argument("--tracks", help="configure with only these tracks (comma-separated, e.g. sgemm,cg)")
    ap.add_argument("--jobs", type=positive_int, help="parallel compile jobs (default: CPUs, memory permitting)")
    ap.add_argument("--run-jobs", type=positive_int,
                    help="lessons whose checks run at once (default: up to 4, memory and CPUs permitting, else 1)")
    ap.add_argument("--build-only", action="store_true",
                    help="configure and build the check targets, run nothing (exit 1 when the build failed or timed "
                         "out)")
    ap.add_argument("--require-full", action="store_true",
                    help="exit 1 unless every graded lesson scores full points: all its [exercise] cases, scored "
                         "[performance] cases and sanitizer case pass, and no check run crashed or timed out (77 "
                         "when all were skipped)")
    ap.add_argument("--sanitize", action="store_true",
                    help=f"run compute-sanitizer on each lesson's program: a case worth {SANITIZE_SHARE * 100:.0f}%% of the "
                         "lesson")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--no-wrong-bank", action="store_true", help="self-test: leave out the known-wrong submissions")
    ap.add_argument("--wrong-only", action="append", default=[],
                    help="self-test: grade the known-wrong submissions of this lesson only, track/NN or "
                         "track/NN_name (repeatable)")
    ap.add_argument("--wrong-bank-dir", default=str(WRONG_BANK_DIR), help=argparse.SUPPRESS)
    ap.add_argument("--write-check-times", action="store_true",
                    help="self-test: write the solutions' check times to common/checks/check_times/<gpu>.json")
    ap.add_argument("--calibrate", action="store_true",
                    help="run the solutions' [performance] cases and write this GPU's thresholds")
    ap.add_argument("--calibrate-runs", type=positive_int, default=5, help="calibration runs per lesson (default 5)")
    ap.add_argument("--confirm-gates", type=positive_int, metavar="RUNS",
                    help="run each gated lesson's [performance] cases RUNS times with the solution and RUNS times "
                         "with the bank's submission its gate must catch; exit 1 unless every solution run passes "
                         "and every submission run fails (an unscored gate named by --only runs too, for its ratios)")
    ap.add_argument("--merge-confirmations", nargs="+", metavar="JSON",
                    help="show --confirm-gates runs of one GPU (their gate-confirmation.json files) as one "
                         "table, each run judged against the thresholds file as it is now (--out/"
                         "gate-confirmation-merged.md)")
    args = ap.parse_args(argv)
    if args.merge_confirmations:
        missing = [p for p in args.merge_confirmations if not Path(p).is_file()]
        if missing:
            ap.error(f"--merge-confirmations: no such file: {', '.join(missing)}")
        if not args.out:
            ap.error("--merge-confirmations needs --out (the folder for gate-confirmation-merged.md)")
        return merge_gate_confirmations(args.merge_confirmations, Path(args.out))
    tracks = [t for t in re.split(r"[,;\s]+", args.tracks or "") if t]
    for name in args.only:
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", name):
            ap.error(f"--only takes track/lesson (e.g. sgemm/01_naive), not '{name}'")
    for name in args.wrong_only:
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", name):
            ap.error(f"--wrong-only takes track/NN or track/NN_name (e.g. sgemm/05), not '{name}'")
    for t in tracks:
        if not (REPO / "common" / "checks" / t / "lessons.cmake").exists():
            ap.error(f"--tracks names '{t}', which is not a track (common/checks/{t}/lessons.cmake)")
    for name, d in (("--lessons-dir", args.lessons_dir), ("--solutions-dir", args.solutions_dir)):
        if d and not Path(d).is_dir():
            ap.error(f"{name} '{d}' is not a directory")
    if (args.wrong_only or args.no_wrong_bank or args.write_check_times) and not args.self_test:
        ap.error("--no-wrong-bank, --wrong-only and --write-check-times go with --self-test")
    if args.calibrate and (args.self_test or args.build_only):
        ap.error("--calibrate runs on its own (not with --self-test or --build-only)")
    if args.confirm_gates and (args.self_test or args.build_only or args.calibrate):
        ap.error("--confirm-gates runs on its own (not with --self-test, --calibrate or --build-only)")
    if args.sanitize and not args.build_only:
        import sanitize  # scripts/sanitize.py finds compute-sanitizer as its own runs do
        if not sanitize.find_sanitizer(None):
            ap.error("--sanitize: compute-sanitizer not found (it comes with the CUDA toolkit, in its bin/)")
    run_jobs = args.run_jobs or default_run_jobs()

    if args.confirm_gates:
        return confirm_gates(args.build_dir, Path(args.out) if args.out else REPO / "grade-results", args.only,
                             tracks, args.jobs, args.confirm_gates, bank_dir=Path(args.wrong_bank_dir))
    if args.calibrate:
        return calibrate(args.build_dir, args.out, args.only, tracks, args.jobs, args.calibrate_runs)
    out = Path(args.out) if args.out else REPO / "grade-results"
    if args.self_test:
        return self_test(args.build_dir, out, args.only, tracks, args.jobs, run_jobs, sanitize=args.sanitize,
                         wrong_bank=not args.no_wrong_bank, wrong_only=args.wrong_only,
                         bank_dir=Path(args.wrong_bank_dir), write_times=args.write_check_times)

    if args.lessons_dir and args.build_dir == str(REPO / "build"):
        args.build_dir = str(REPO / "build-grade")
    if args.build_only:
        _, built = prepare(args.build_dir, [args.tree], args.only, args.lessons_dir, tracks, args.solutions_dir,
                           args.jobs, out / "logs", programs=args.sanitize)
        return 0 if built else 1
    results = grade(args.tree, args.build_dir, out, args.only, args.lessons_dir, tracks, args.solutions_dir,
                    args.jobs, run_jobs, sanitize=args.sanitize)
    if results and all(r.status == "skipped" for r in results):
        if args.require_full:
            print(f"SKIPPED: {all_skipped_why(results)}, so nothing was graded (0 points).")
        return SKIP_EXIT
    if args.require_full and not all(r.full_marks for r in results):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
