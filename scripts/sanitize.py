#!/usr/bin/env python3
"""Run compute-sanitizer on every solution of a build's manifest and print a summary.

usage: scripts/sanitize.py [--build-dir build-gpu] [--log-dir DIR] [--tracks cg,sgemm]
                           [--only cg/08_persistent] [--jobs 4] [--timeout 300]

For each solution in <build-dir>/tut_manifest.json, each of its "sanitize_runs" (one
list of arguments per run: small and odd sizes, set with tut_lesson(SANITIZE_RUNS)) and
each tool of its "sanitize_tools" (memcheck always; racecheck for kernels with shared
memory; synccheck for barriers and cooperative kernels), it runs

    compute-sanitizer --tool TOOL --error-exitcode 99 --check-exit-code no [TOOL OPTIONS] EXE ARGS

a few at a time (the runs are mostly CPU-bound: the GPU takes them side by side), each
under a time limit, with its output in <log-dir>/<track>-<lesson>-<tool>-<run>.log. It
then prints one row per run (lesson, tool, run, errors or hazards, seconds, outcome) and
exits 1 if any run found an error or a hazard (racecheck warnings count: they are races
a beginner should not leave in), crashed, failed its own check or timed out; 77 when no
GPU was usable (every run skipped); 0 otherwise. Manifest entries without sanitize runs
(programs that are not lessons) are listed as not sanitized.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SKIP_EXIT = 77
SANITIZER_ERROR_EXIT = 99

# Options beyond --tool, where they help. memcheck: a 1 KiB unreadable pad after every
# cudaMalloc, so that a kernel running off the end of one buffer into the next is caught
# (buffers can otherwise sit back to back). Its leak check stays off: a buffer that a
# library or a cache keeps until the program exits is no error here. racecheck's default report
# ("analysis", one record per racing pair of source lines) is the readable one; synccheck
# and initcheck need nothing.
TOOL_OPTIONS = {"memcheck": ["--padding", "1024"]}

ERROR_SUMMARY = re.compile(r"^=+ ERROR SUMMARY: (\d+) errors?", re.M)
RACECHECK_SUMMARY = re.compile(r"^=+ RACECHECK SUMMARY: (\d+) hazards? displayed "
                               r"\((\d+) errors?, (\d+) warnings?\)", re.M)


@dataclass
class Summary:
    """What compute-sanitizer's closing lines say (None: the line is not there)."""
    errors: int = None       # ERROR SUMMARY (memcheck, synccheck, initcheck)
    hazards: int = None      # RACECHECK SUMMARY: hazards displayed
    hazard_errors: int = None
    hazard_warnings: int = None


def parse_summary(text):
    s = Summary()
    for m in ERROR_SUMMARY.finditer(text):
        s.errors = (s.errors or 0) + int(m.group(1))
    for m in RACECHECK_SUMMARY.finditer(text):
        s.hazards = (s.hazards or 0) + int(m.group(1))
        s.hazard_errors = (s.hazard_errors or 0) + int(m.group(2))
        s.hazard_warnings = (s.hazard_warnings or 0) + int(m.group(3))
    return s


@dataclass
class Run:
    track: str
    lesson: str
    tool: str
    index: int
    args: list
    exe: str
    log: Path = None
    returncode: int = None
    timed_out: bool = False
    seconds: float = 0.0
    summary: Summary = field(default_factory=Summary)

    @property
    def name(self):
        return f"{self.track}/{self.lesson}"


def findings(run):
    """The errors or hazards column: '0', '3', '2 (1 error, 1 warning)', or '-' (no summary)."""
    s = run.summary
    if s.hazards is not None:
        if s.hazards == 0:
            return "0"
        return f"{s.hazards} ({s.hazard_errors} error{'s' * (s.hazard_errors != 1)}, " \
               f"{s.hazard_warnings} warning{'s' * (s.hazard_warnings != 1)})"
    if s.errors is not None:
        return str(s.errors)
    return "-"


def outcome(run):
    """(word, failed): ok, skipped (no GPU), or why the run failed."""
    s = run.summary
    if run.timed_out:
        return "TIMEOUT", True
    if run.returncode is None:
        return "NOT RUN", True
    found = (s.errors or 0) + (s.hazards or 0)
    if found:
        return "ERRORS" if s.hazards is None else "HAZARDS", True
    rc = run.returncode
    if rc == SKIP_EXIT:
        return "skipped", False
    if rc < 0 or rc >= 128:
        sig = -rc if rc < 0 else rc - 128
        return f"CRASH (signal {sig})", True
    if rc == SANITIZER_ERROR_EXIT:
        return "ERRORS", True
    if rc != 0:
        return f"FAILED (exit {rc})", True
    if s.errors is None and s.hazards is None:
        return "NO SUMMARY", True
    return "ok", False


def format_table(runs, width=48):
    """The summary table, one row per run, as text."""
    header = ["lesson", "tool", "run", "errors/hazards", "seconds", "outcome"]
    rows = []
    for r in runs:
        args = " ".join(r.args) or "(defaults)"
        if len(args) > width:
            args = args[:width - 3] + "..."
        rows.append([r.name, r.tool, f"{r.index + 1}: {args}", findings(r), f"{r.seconds:.1f}", outcome(r)[0]])
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    right = {3, 4}
    lines = []
    for i, row in enumerate([header, ["-" * w for w in widths], *rows]):
        cells = [str(c).rjust(w) if j in right and i != 1 else str(c).ljust(w)
                 for j, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def plan(manifest, tracks=(), only=()):
    """The runs to make, and the names of the solutions that have none."""
    runs, unsanitized = [], []
    for e in manifest:
        if e["tree"] != "solutions":
            continue
        name = f"{e['track']}/{e['lesson']}"
        if tracks and e["track"] not in tracks:
            continue
        if only and name not in only:
            continue
        if "sanitize_runs" not in e:
            unsanitized.append(name)
            continue
        for tool in e.get("sanitize_tools") or ["memcheck"]:
            for i, args in enumerate(e["sanitize_runs"]):
                runs.append(Run(e["track"], e["lesson"], tool, i, list(args), e["exe"]))
    return runs, unsanitized


def find_sanitizer(given):
    if given:
        return given
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and (Path(home) / "bin" / "compute-sanitizer").exists():
            return str(Path(home) / "bin" / "compute-sanitizer")
    return None


def execute(run, sanitizer, log_dir, timeout):
    run.log = log_dir / f"{run.track}-{run.lesson}-{run.tool}-{run.index + 1}.log"
    cmd = [sanitizer, "--tool", run.tool, "--error-exitcode", str(SANITIZER_ERROR_EXIT), "--check-exit-code", "no",
           *TOOL_OPTIONS.get(run.tool, []), run.exe, *run.args]
    t0 = time.time()
    with open(run.log, "w") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        if not Path(run.exe).exists():
            log.write(f"not built: {run.exe}\n")
            run.seconds = 0.0
            return run
        # A session of its own, so that a timeout kills the sanitizer and the program under it.
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            run.returncode = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            run.timed_out = True
            log.write(f"\n[sanitize.py] timed out after {timeout} s\n")
    run.seconds = time.time() - t0
    run.summary = parse_summary(run.log.read_text(errors="replace"))
    return run


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=str(REPO / "build-gpu"))
    ap.add_argument("--log-dir", help="default: <build-dir>/logs/sanitize")
    ap.add_argument("--tracks", default="", help="comma-separated subset of tracks")
    ap.add_argument("--only", action="append", default=[], help="one solution, e.g. cg/08_persistent (repeatable)")
    ap.add_argument("--jobs", type=int, default=4, help="runs at a time (default 4)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run (default 300)")
    ap.add_argument("--sanitizer",
                    help="path of compute-sanitizer (default: on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin)")
    args = ap.parse_args(argv)
    if args.jobs < 1 or args.timeout < 1:
        ap.error("--jobs and --timeout must be positive")

    build = Path(args.build_dir)
    manifest_file = build / "tut_manifest.json"
    if not manifest_file.exists():
        print(f"sanitize: {manifest_file} not found: build first (scripts/gpu-verify build)", file=sys.stderr)
        return 2
    tracks = [t for t in args.tracks.split(",") if t]
    runs, unsanitized = plan(json.loads(manifest_file.read_text()), tracks, args.only)
    if not runs:
        print("sanitize: nothing to run (check --tracks and --only)", file=sys.stderr)
        return 2
    sanitizer = find_sanitizer(args.sanitizer)
    if not sanitizer:
        print("sanitize: compute-sanitizer not found (it comes with the CUDA toolkit, in its bin/)", file=sys.stderr)
        return 1
    log_dir = Path(args.log_dir) if args.log_dir else build / "logs" / "sanitize"
    log_dir.mkdir(parents=True, exist_ok=True)

    t0 = time.time()
    done = 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(execute, r, sanitizer, log_dir, args.timeout) for r in runs]
        for f in futures:  # in plan order, so the progress lines read like the table
            r = f.result()
            done += 1
            print(f"[{done}/{len(runs)}] {r.name} {r.tool} run {r.index + 1}: {outcome(r)[0]} ({r.seconds:.0f} s)",
                  flush=True)
    wall = time.time() - t0

    print()
    print(format_table(runs))
    if unsanitized:
        print(f"\nnot sanitized (no sanitize runs in the manifest): {', '.join(unsanitized)}")
    failed = [r for r in runs if outcome(r)[1]]
    skipped = [r for r in runs if outcome(r)[0] == "skipped"]
    print(f"\nsanitize: {len(runs)} runs, {len(runs) - len(failed) - len(skipped)} ok, {len(failed)} failed, "
          f"{len(skipped)} skipped (no GPU), {wall:.0f} s with {args.jobs} at a time; logs in {log_dir}")
    for r in failed:
        print(f"  {outcome(r)[0]}: {r.name} {r.tool} run {r.index + 1}: {r.log}")
    if failed:
        return 1
    if len(skipped) == len(runs):
        return SKIP_EXIT
    return 0


if __name__ == "__main__":
    sys.exit(main())
