#!/usr/bin/env python3
"""Run every profiler command that the lesson READMEs print, and say which ones work.

usage: scripts/profile_commands.py [--build-dir build-gpu] [--log-dir DIR] [--tracks cg,sgemm]
                                   [--timeout 90] [--figures-dir results/profile] [--list]

Instructors copy the `ncu`, `nsys` and `compute-sanitizer` commands of the READMEs into a
shell in class; a metric that was renamed, a kernel filter that no longer matches or an
option a program lost makes such a command fail there. This script finds each command in
lessons/<track>/<lesson>/README.md (a line that starts with the tool's name, with its
backslash continuations), points its `build/` paths at --build-dir, runs it from the
log folder (from the lesson's build folder when it names its program as `./name`)
under a time limit, one at a time (the profilers serialize the GPU anyway), and prints
one row per command: lesson, tool, outcome, seconds. The output of each goes to
<log-dir>/<NN>-<track>-<lesson>.log.

A command counts as failed when it exits non-zero, when the tool printed an ==ERROR==
line, when ncu profiled no kernel, or when compute-sanitizer reported errors or hazards.
A tool that is not installed (nsys on many GPU hosts) skips its commands. Exits 1 if any
command failed, 77 if there is no GPU, 0 otherwise; --list only prints the commands.

With --figures-dir, each ncu command also keeps its report (`--nvtx -f -o <log-dir>/<NN>-...`,
the rest of the command as printed), which is exported as CSV twice (`--page raw --csv
--print-units base`, and with `--print-nvtx-rename kernel` for each result's variant); the
metrics the READMEs' profile blocks show go into <figures-dir>/<gpu>.json (the lessons run
replace theirs, the others stay), and every README's profile block is regenerated from
it (scripts/profile_figures.py). That is how the READMEs' profiler figures are made.
"""
import argparse
import datetime
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SKIP_EXIT = 77
TOOLS = ("ncu", "nsys", "compute-sanitizer")


@dataclass
class Command:
    track: str
    lesson: str
    text: str  # as printed, continuations included

    @property
    def tool(self):
        return self.text.split(None, 1)[0]

    @property
    def name(self):
        return f"{self.track}/{self.lesson}"

    def runs_in_lesson_dir(self):
        """True when it names its program relative to the program's own folder (./name)."""
        return re.search(r"(^|\s)\./", self.text) is not None


def commands_in(text, track, lesson):
    """The profiler commands of one README: lines that start (after indentation) with a
    tool's name, each joined with the lines its trailing backslashes continue onto. The
    continuation lines lose the first line's indentation, as a copy into a shell would.
    `ncu -i` (opening a saved report) runs nothing and is left out."""
    lines = text.split("\n")
    found = []
    i = 0
    while i < len(lines):
        stripped = lines[i].lstrip()
        indent = len(lines[i]) - len(stripped)
        first_word = stripped.split(None, 1)[0] if stripped else ""
        if first_word in TOOLS and not stripped.startswith("ncu -i "):
            parts = [stripped]
            while parts[-1].rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                nxt = lines[i]
                parts.append(nxt[indent:] if nxt[:indent].strip() == "" else nxt.lstrip())
            found.append(Command(track, lesson, "\n".join(parts).strip()))
        i += 1
    return found


def all_commands(tracks=None):
    found = []
    for readme in sorted(REPO.glob("lessons/*/*/README.md")):
        track, lesson = readme.parts[-3], readme.parts[-2]
        if tracks and track not in tracks:
            continue
        found += commands_in(readme.read_text(), track, lesson)
    return found


def with_build_dir(text, build_dir):
    """The command with the READMEs' `build/` (the folder the README's build line makes)
    replaced by `build_dir`."""
    return re.sub(r"(^|\s)build/", lambda m: m.group(1) + str(build_dir).rstrip("/") + "/", text)


def verdict(tool, rc, output):
    """'ok', or why the command failed, from its exit code and output."""
    error = next((line.strip() for line in output.splitlines() if "==ERROR==" in line), "")
    if error:
        return error
    if rc != 0:
        return f"exit code {rc}"
    if tool == "ncu" and "==PROF== Profiling" not in output:
        return "no kernel was profiled (the kernel or NVTX filter matched nothing)"
    if tool == "compute-sanitizer":
        m = re.search(r"(ERROR|RACECHECK|SYNCCHECK|INITCHECK) SUMMARY: (\d+) (errors?|hazards?)", output)
        if m and int(m.group(2)) > 0:
            return m.group(0)
    return "ok"


def figures_command(text, report):
    """An ncu command with its report kept in `report` (.ncu-rep is added by ncu) and NVTX on,
    so that its results can be exported with their variants; the rest as printed."""
    rest = text.split(None, 1)[1] if len(text.split(None, 1)) > 1 else ""
    nvtx = "" if re.search(r"(^|\s)--nvtx(\s|$)", rest) else "--nvtx "
    return "ncu %s-f -o %s %s" % (nvtx, report, rest)


def export_commands(report):
    """The two CSV exports of a report: (raw metrics, the same with NVTX names)."""
    base = ["ncu", "-i", str(report) + ".ncu-rep", "--csv", "--page", "raw", "--print-units", "base"]
    return base, base + ["--print-nvtx-rename", "kernel"]


def tool_output(cmd, timeout=60):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.stdout if p.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def collect_figures(report, log_base):
    """The results of one command's report (profile_figures.parse_csv_raw, with variants), or []
    when the report or an export is missing. Writes both exports beside the log."""
    import profile_figures as pf
    if not Path(str(report) + ".ncu-rep").exists():
        return []
    raw_cmd, nvtx_cmd = export_commands(report)
    raw, named = tool_output(raw_cmd), tool_output(nvtx_cmd)
    Path(str(log_base) + "-raw.csv").write_text(raw)
    Path(str(log_base) + "-nvtx.csv").write_text(named)
    return pf.with_variants(pf.parse_csv_raw(raw), pf.parse_csv_raw(named))


def write_figures(figures_dir, per_lesson, commands_of):
    """Writes <figures-dir>/<gpu>.json from {lesson: [results]} and regenerates the READMEs'
    profile blocks; returns the file's path."""
    import profile_figures as pf
    gpu = tool_output(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]).splitlines()
    gpu = gpu[0].strip() if gpu else "unknown GPU"
    ncu = pf.ncu_version(tool_output(["ncu", "--version"]))
    # "-dirty" where the tree is not its commit (a copy of a working tree, as on a lent GPU machine,
    # can carry an older .git): the file then says so instead of naming a commit it did not run.
    commit = tool_output(["git", "-C", str(REPO), "describe", "--always", "--dirty"]).strip()
    date = datetime.date.today().isoformat()
    quoted = pf.quoted_metrics(str(REPO))
    source = "scripts/gpu-verify profile" + (" at commit %s" % commit if commit else "")
    entries = {lesson: pf.lesson_entry(results, quoted.get(lesson, set()), ncu, date,
                                       "\n".join(commands_of[lesson]), source)
               for lesson, results in per_lesson.items()}
    path = Path(figures_dir) / pf.gpu_file_name(gpu)
    pf.write_profile(str(path), gpu, entries)
    pf.update(str(REPO))
    return path


def gpu_present():
    smi = shutil.which("nvidia-smi")
    return bool(smi) and subprocess.run([smi, "-L"], capture_output=True).returncode == 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build-gpu", help="a configured and built folder (default build-gpu)")
    ap.add_argument("--log-dir", default=None, help="default <build-dir>/logs/profile")
    ap.add_argument("--tracks", default="", help="comma-separated subset of tracks")
    ap.add_argument("--timeout", type=int, default=90, help="seconds per command (default 90)")
    ap.add_argument("--list", action="store_true", help="print the commands and run nothing")
    ap.add_argument("--figures-dir", default=None,
                    help="keep each ncu report and write the READMEs' figures into DIR/<gpu>.json")
    args = ap.parse_args(argv)
    tracks = [t for t in args.tracks.split(",") if t]
    known = sorted({p.parts[-3] for p in REPO.glob("lessons/*/*/README.md")})
    unknown = [t for t in tracks if t not in known]
    if unknown:
        print(f"profile_commands: unknown track(s) {', '.join(unknown)}; the tracks: {', '.join(known)}", file=sys.stderr)
        return 2
    if args.timeout < 1:
        print("profile_commands: --timeout must be at least 1 second", file=sys.stderr)
        return 2
    commands = all_commands(tracks)
    if args.list:
        for c in commands:
            print(f"# {c.name}\n{c.text}\n")
        return 0
    build = Path(args.build_dir).resolve()
    if not (build / "solutions").is_dir():
        print(f"profile_commands: {build} has no solutions/: build the project there first", file=sys.stderr)
        return 2
    if not gpu_present():
        print("SKIPPED: the profilers need a CUDA GPU, and none is usable here (exit 77).")
        return SKIP_EXIT
    log_dir = Path(args.log_dir) if args.log_dir else build / "logs" / "profile"
    log_dir.mkdir(parents=True, exist_ok=True)
    rows, failed = [], 0
    figures, figure_commands = {}, {}
    for n, c in enumerate(commands, 1):
        if not shutil.which(c.tool):
            rows.append((c.name, c.tool, f"skipped: {c.tool} is not installed", 0.0))
            continue
        # From the log folder, so that what a command writes (nsys -o NAME) lands there and
        # not in the repository; its build/ paths are absolute by now.
        cwd = build / "solutions" / c.track / c.lesson if c.runs_in_lesson_dir() else log_dir
        text = with_build_dir(c.text, build)
        log_base = log_dir / f"{n:02d}-{c.track}-{c.lesson}"
        keep = args.figures_dir and c.tool == "ncu"
        if keep:
            text = figures_command(text, log_base.resolve())
        start = time.time()
        try:
            p = subprocess.run(["bash", "-c", text], cwd=cwd, capture_output=True, text=True, timeout=args.timeout)
            rc, output = p.returncode, p.stdout + p.stderr
            outcome = verdict(c.tool, rc, output)
        except subprocess.TimeoutExpired as e:
            output = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            outcome = f"timed out after {args.timeout} s"
        if keep and outcome == "ok":
            figures.setdefault(c.name, []).extend(collect_figures(log_base.resolve(), log_base))
            figure_commands.setdefault(c.name, []).append(c.text)
        seconds = time.time() - start
        (log_dir / f"{n:02d}-{c.track}-{c.lesson}.log").write_text(f"$ (cd {cwd}) {text}\n\n{output}")
        failed += outcome != "ok"
        rows.append((c.name, c.tool, outcome, seconds))
        print(f"[{n}/{len(commands)}] {c.name} {c.tool}: {outcome}", flush=True)
    w = max([len(r[0]) for r in rows] + [6])
    print(f"\n{'lesson':<{w}}  {'tool':<17}  {'seconds':>7}  outcome")
    for name, tool, outcome, seconds in rows:
        print(f"{name:<{w}}  {tool:<17}  {seconds:7.1f}  {outcome}")
    ran = sum(1 for r in rows if not r[2].startswith("skipped"))
    print(f"\nprofile commands: {len(rows)} found, {ran} run, {ran - failed} ok, {failed} failed; logs in {log_dir}")
    if args.figures_dir and figures:
        path = write_figures(args.figures_dir, figures, figure_commands)
        print(f"profiler figures of {len(figures)} lesson(s) written to {path}; README profile blocks regenerated")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
