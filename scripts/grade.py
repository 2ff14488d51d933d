#!/usr/bin/env python3
"""Grade a lessons/ tree: build each lesson's checks, run them, score, write reports.

usage:
  scripts/grade.py                          grade ./lessons (build dir ./build)
  scripts/grade.py --lessons-dir ~/my/lessons --build-dir build-grade
  scripts/grade.py --tree solutions         verify the solutions the same way
  scripts/grade.py --self-test              pristine exercises score zero, solutions full
  options: --only sgemm/01_naive (repeatable)  --tracks sgemm,cg  --out DIR
           --jobs N (compile jobs)  --run-jobs N (check programs at once)
           --build-only (exit 1 when the build failed or timed out)
           --require-full (exit 1 unless every lesson scores full)

Each lesson is worth POINTS_PER_LESSON points, shared equally by the test cases of its
check tagged [exercise]; [baseline] cases are reported but score nothing. A lesson scores
only when its check program ran to the end: a crash or time-out in the [exercise] run or
in the [baseline] run gives the whole lesson 0, with a report saying that the program
itself failed. So a lesson has full points exactly when --require-full counts it as full.

The build dir is configured (again) when it was configured for other settings: the
lessons tree (default lessons/), the solution tree (default solutions/, or the lessons
tree where there is none, as in a student's copy), the tracks (default all; for
--self-test, which CTest runs on its own build, those the build dir has) and
TUT_BUILD_CHECKS=ON. An --only lesson that is not in the build is an error (exit 2).

Phases: configure; one parallel build of every check target of the tree that keeps
going past failures (ninja -k 0); then, lesson by lesson, the check target is built
again on its own (up to date: instant; failed: rebuilt alone, so its log is its own)
and its checks are run under a time limit, several lessons at once (--run-jobs). A
lesson that fails to compile, crashes or hangs loses its own points and grading goes
on. The report of a compile error begins with the first error lines that point into the
graded tree (file:line: message), then the build log. Each phase's time is printed, and
so is the report of every lesson without full points (the one results.json holds), for
graders that show only the console (GitHub Classroom).
Writes, under --out:
  junit.xml      one <testsuite> per lesson, one <testcase> per check test case
  results.json   Gradescope's results format (score, tests with score, max_score, ...)
  logs/          build and run output per lesson, and the parallel build's log
Without a GPU the checks report "skipped" (exit 77), and so do the checks of a lesson
built for one GPU architecture on any other (sgemm/16_wgmma needs compute capability 9.0)
and those of a lesson that needs more GPUs than the machine has (the multigpu track's:
its manifest entries name the GPUs and the launcher, common/checks/multigpu/mpi_launch.py,
which starts the checks under mpirun, one process per GPU): such lessons score 0, marked
skipped with the reason; --self-test exits 77 when every lesson was skipped. Lessons
that need several GPUs run their checks one at a time, after the others.
"""
import argparse
import concurrent.futures
import difflib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
POINTS_PER_LESSON = 10.0
SKIP_EXIT = 77
BUILD_TIMEOUT_S = 900  # one lesson's check target, built alone
PREBUILD_TIMEOUT_S = 3600  # the parallel build of every check target
MAX_ERROR_LINES = 12  # error lines at the top of a compile-error report
MAX_LOG_LINES = 300  # build log lines after them


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
        # Any status but ok (compile error, crash or time-out in either run, skipped, no
        # exercise checks) scores nothing, so that the score agrees with full_marks.
        if self.status != "ok" or not ex:
            return 0.0
        return POINTS_PER_LESSON * sum(c.passed for c in ex) / len(ex)

    @property
    def full_marks(self):
        return self.status == "ok" and bool(self.exercise_cases()) and all(c.passed for c in self.exercise_cases())

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


def run_with_timeout(cmd, timeout, log_path, cwd=None):
    """Runs cmd in its own process group; returns (returncode, output, timed_out)."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd,
                                errors="replace", start_new_session=True)
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
    """Check programs run at once: up to 4 with, for each, 4 CPUs, 20 GiB of GPU memory
    and 16 GiB of host memory (the largest checks hold about 9 GiB on the device and as
    much on the host), else one at a time. The checks compare results and time nothing,
    so sharing the GPU does not change what they decide."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return 1
    try:
        out = subprocess.run([smi, "--query-gpu=memory.total", "--format=csv,noheader,nounits"], capture_output=True,
                             text=True, timeout=30).stdout.split()
        gpu_gib = int(float(out[0])) // 1024
    except (subprocess.SubprocessError, OSError, ValueError, IndexError):
        return 1
    jobs = min(4, available_cpus() // 4, gpu_gib // 20)
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


def build_all(build_dir, targets, jobs, log_path):
    """One parallel build of every target that keeps going past failures; the targets that
    fail are found (and rebuilt alone, for their own logs) lesson by lesson afterwards."""
    if not targets:
        return 0, False
    cmd = ["cmake", "--build", str(build_dir), "--parallel", str(jobs), "--target", *targets]
    keep_going = generator_keep_going(build_dir)
    if keep_going:
        cmd += ["--", *keep_going]
    rc, _, timed_out = run_with_timeout(cmd, PREBUILD_TIMEOUT_S, log_path)
    return rc, timed_out


def tree_root_of(entry):
    """The root of the tree a manifest entry's source lies in (<root>/<track>/<lesson>/<file>)."""
    return Path(entry["source"]).parent.parent.parent


def build_lesson(entry, build_dir, logs):
    """Builds one lesson's check target alone (instant when the parallel build made it);
    returns None, or the LessonResult of a lesson that did not compile."""
    stem = f"{entry['tree']}-{entry['track']}-{entry['lesson']}"
    rc, out, timed_out = run_with_timeout(["cmake", "--build", str(build_dir), "--target", entry["check_target"]],
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


def run_checks(entry, logs, major):
    """Runs one lesson's [exercise] and [baseline] checks (each its own process, under the
    lesson's time limit) and returns its LessonResult."""
    res = LessonResult(entry["track"], entry["lesson"])
    stem = f"{entry['tree']}-{entry['track']}-{entry['lesson']}"
    exe = entry["check_exe"]
    timeout = entry.get("timeout", 300)
    for kind in ("exercise", "baseline"):
        xml_path = logs / f"{stem}.{kind}.junit.xml"
        if xml_path.exists():
            xml_path.unlink()
        cmd = launch_prefix(entry, timeout) + [exe, f"[{kind}]", "-r", "junit", "-o", str(xml_path)]
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


def default_tracks():
    """Every track, in tour order: TUT_TRACKS's default in CMakeLists.txt (None if not found)."""
    try:
        m = re.search(r'set\(TUT_TRACKS\s+"([^"]+)"', (REPO / "CMakeLists.txt").read_text())
    except OSError:
        return None
    return m.group(1).split(";") if m else None


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


def configure(build_dir, lessons_dir=None, tracks=None, solutions_dir=None):
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
                  "the [exercise] or the [baseline] run fails the whole lesson)", r.detail]
    else:
        lines += [f"status: {r.status}"] + ([r.detail] if r.detail else [])
    for c in r.cases:
        lines.append(f"[{'pass' if c.passed else 'FAIL'}] ({c.kind}) {c.name}")
        if not c.passed and c.message:
            lines.append("    " + c.message.replace("\n", "\n    ")[:2000])
    return "\n".join(x for x in lines if x is not None).strip() + "\n"


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
            "extra_data": {"status": r.status, "exercise_passed": sum(c.passed for c in r.exercise_cases()),
                           "exercise_total": len(r.exercise_cases()),
                           "baseline_passed": sum(c.passed for c in r.baseline_cases()),
                           "baseline_total": len(r.baseline_cases())},
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
            timer=None):
    """Configures when needed and builds every check target of the given trees in one
    parallel build. Returns ({tree: manifest entries}, True when that build succeeded)."""
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
    targets = [e["check_target"] for tree in trees for e in entries[tree]]
    jobs = jobs or default_build_jobs()
    logs = logs or Path(build_dir)
    logs.mkdir(parents=True, exist_ok=True)
    print(f"building {len(targets)} check targets ({', '.join(trees)}) with {jobs} parallel jobs...", flush=True)
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


def grade_entries(tree, entries, build_dir, out_dir, title, run_jobs=1, timer=None, show_reports=True):
    """The per-lesson phase: build each check target alone (no-op when up to date), run the
    checks of those that built (run_jobs lessons at once), write the reports; print the
    report of each lesson without full points unless show_reports is False."""
    timer = timer or PhaseTimer()
    logs = out_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    major = catch_major(build_dir)
    results = [None] * len(entries)
    t = time.monotonic()
    to_run = []
    for i, e in enumerate(entries):
        failed = build_lesson(e, Path(build_dir), logs)
        if failed:
            results[i] = failed
            print(f"  graded {failed.name}: 0.0/{POINTS_PER_LESSON:.0f} (compile_error)", flush=True)
        else:
            to_run.append(i)
    timer.add(f"per-lesson build ({len(entries) - len(to_run)} failed)", time.monotonic() - t)

    t = time.monotonic()
    # Lessons that need several GPUs take all of them: one at a time, after the others.
    alone = [i for i in to_run if entries[i].get("launcher")]
    shared = [i for i in to_run if i not in alone]
    workers = max(1, min(run_jobs, len(shared) or 1))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(run_checks, entries[i], logs, major): i for i in shared}
        for fut in concurrent.futures.as_completed(futures):
            i = futures[fut]
            results[i] = fut.result()
            r = results[i]
            print(f"  graded {r.name}: {r.score:.1f}/{POINTS_PER_LESSON:.0f} ({r.status})", flush=True)
    for i in alone:
        results[i] = run_checks(entries[i], logs, major)
        r = results[i]
        print(f"  graded {r.name}: {r.score:.1f}/{POINTS_PER_LESSON:.0f} ({r.status})", flush=True)
    timer.add(f"checks ({len(to_run)} lessons, {workers} at a time)", time.monotonic() - t)

    write_reports(results, out_dir, title, seconds=timer.total(),
                  extra={"tree": tree, "phase_seconds": {n: round(s, 1) for n, s in timer.phases}})
    if show_reports:
        print_reports(results)
    print_table(results, title)
    print(f"\nreports: {out_dir / 'junit.xml'}, {out_dir / 'results.json'}")
    print(f"phase times ({tree}): {timer.line()}", flush=True)
    return results


def grade(tree, build_dir, out_dir, only, lessons_dir=None, tracks=None, solutions_dir=None, jobs=None,
          run_jobs=1):
    timer = PhaseTimer()
    out_dir.mkdir(parents=True, exist_ok=True)
    entries, _ = prepare(build_dir, [tree], only, lessons_dir, tracks, solutions_dir, jobs, out_dir / "logs", timer)
    title = f"grade of {tree} tree ({lessons_dir or tree})"
    return grade_entries(tree, entries[tree], build_dir, out_dir, title, run_jobs, timer)


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


def self_test(build_dir, out, only, tracks, jobs, run_jobs):
    """Both trees: one parallel build of all their check targets, then each tree graded."""
    start = time.monotonic()
    if not tracks:
        # CTest runs the self-test on the build it belongs to: keep that build's tracks
        have = cache_value(build_dir, "TUT_TRACKS")
        tracks = [t for t in (have or "").split(";") if t]
    prep = PhaseTimer()
    entries, _ = prepare(build_dir, ["lessons", "solutions"], only, tracks=tracks, jobs=jobs, logs=out, timer=prep)
    print(f"phase times (configure and build, both trees): {prep.line()}", flush=True)
    # the pristine exercises fail by design: their reports would only bury the verdict
    pristine = grade_entries("lessons", entries["lessons"], build_dir, out / "lessons", "grade of lessons tree (lessons)",
                             run_jobs, show_reports=False)
    solutions = grade_entries("solutions", entries["solutions"], build_dir, out / "solutions",
                              "grade of solutions tree (solutions)", run_jobs)
    print(f"self-test wall time: {time.monotonic() - start:.1f} s ({run_jobs} check programs at a time)")
    if all(r.status == "skipped" for r in pristine + solutions):
        print(f"SKIPPED: {all_skipped_why(pristine + solutions)}, so the grader self-test tested nothing.")
        return SKIP_EXIT
    problems = self_test_verdict(pristine, solutions)
    for p in problems:
        print("SELF-TEST FAILURE:", p)
    passed, failed, skipped = self_test_tally(pristine, solutions)
    print(f"grader self-test: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
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
    ap.add_argument("--out", default=str(REPO / "grade-results"))
    ap.add_argument("--only", action="append", default=[], help="track/lesson to grade (repeatable)")
    ap.add_argument("--tracks", help="configure with only these tracks (comma-separated, e.g. sgemm,cg)")
    ap.add_argument("--jobs", type=positive_int, help="parallel compile jobs (default: CPUs, memory permitting)")
    ap.add_argument("--run-jobs", type=positive_int,
                    help="lessons whose checks run at once (default: up to 4, memory and CPUs permitting, else 1)")
    ap.add_argument("--build-only", action="store_true",
                    help="configure and build the check targets, run nothing (exit 1 when the build failed or timed "
                         "out)")
    ap.add_argument("--require-full", action="store_true",
                    help="exit 1 unless every graded lesson scores full points: all its [exercise] cases pass and "
                         "neither check run crashed or timed out (77 when all were skipped)")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args(argv)
    out = Path(args.out)
    tracks = [t for t in re.split(r"[,;\s]+", args.tracks or "") if t]
    for name in args.only:
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", name):
            ap.error(f"--only takes track/lesson (e.g. sgemm/01_naive), not '{name}'")
    for t in tracks:
        if not (REPO / "common" / "checks" / t / "lessons.cmake").exists():
            ap.error(f"--tracks names '{t}', which is not a track (common/checks/{t}/lessons.cmake)")
    for name, d in (("--lessons-dir", args.lessons_dir), ("--solutions-dir", args.solutions_dir)):
        if d and not Path(d).is_dir():
            ap.error(f"{name} '{d}' is not a directory")
    run_jobs = args.run_jobs or default_run_jobs()

    if args.self_test:
        return self_test(args.build_dir, out, args.only, tracks, args.jobs, run_jobs)

    if args.lessons_dir and args.build_dir == str(REPO / "build"):
        args.build_dir = str(REPO / "build-grade")
    if args.build_only:
        _, built = prepare(args.build_dir, [args.tree], args.only, args.lessons_dir, tracks, args.solutions_dir,
                           args.jobs, out / "logs")
        return 0 if built else 1
    results = grade(args.tree, args.build_dir, out, args.only, args.lessons_dir, tracks, args.solutions_dir,
                    args.jobs, run_jobs)
    if results and all(r.status == "skipped" for r in results):
        if args.require_full:
            print(f"SKIPPED: {all_skipped_why(results)}, so nothing was graded (0 points).")
        return SKIP_EXIT
    if args.require_full and not all(r.full_marks for r in results):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
