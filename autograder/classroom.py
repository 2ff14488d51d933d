#!/usr/bin/env python3
"""Writes the GitHub Classroom autograding configuration, one test per lesson.

  autograder/classroom.py           regenerate both files from the lesson lists
  autograder/classroom.py --check   exit 1 if a committed file is not what it would write
  autograder/classroom.py --template DIR [--up-to sgemm/05] [--tracks cg]
                                    write an assignment's template repository into DIR
                                    (a new or empty folder): this repository without
                                    solutions/, the known-wrong submissions and the
                                    experiments' sources (docs/experiments/*.cu), with the
                                    assignment's lessons and headers (autograder/assignment.py:
                                    --up-to ships one track's lessons up to and including
                                    that one, and the other tracks --tracks names), and both
                                    files for those lessons

  .github/workflows/classroom.yml   the workflow GitHub Classroom runs on each push: one
                                    autograding-command-grader step per lesson, then the
                                    reporter that sends the points to Classroom
  .github/classroom/autograding.json  the same tests in the older autograding.json format
                                    (read by the education/autograding action)

The lessons are read from common/checks/<track>/lessons.cmake (tut_lesson() calls) in
the order of TUT_ALL_TRACKS in CMakeLists.txt, those whose folder lessons/ has, so a new
lesson needs only a re-run. Each test
runs `scripts/grade.py --only <track>/<lesson> --require-full`, which exits 0 only when
the lesson scores full points (its [exercise] cases and its scored [performance] cases
pass: docs/grading.md), and is worth POINTS points. The checks need an NVIDIA GPU:
without one each test prints SKIPPED and scores 0.
"""
import argparse
import json
import re
import sys
from pathlib import Path

import assignment
import answers_in_tree  # noqa: E402 (scripts/, on the path since assignment's import)

REPO = Path(__file__).resolve().parent.parent
WORKFLOW_REL = Path(".github") / "workflows" / "classroom.yml"
AUTOGRADING_JSON_REL = Path(".github") / "classroom" / "autograding.json"
WORKFLOW = REPO / WORKFLOW_REL
AUTOGRADING_JSON = REPO / AUTOGRADING_JSON_REL
POINTS = 10
TIMEOUT_MIN = 15  # per lesson: its own build if the shared one failed, and its check runs
BUILD_DIR = "build-classroom"


def lessons(root=REPO):
    """[(track, lesson)] in tour order: the registered lessons that lessons/ has."""
    cml = (root / "CMakeLists.txt").read_text()
    m = re.search(r'set\(TUT_ALL_TRACKS\s+"([^"]+)"', cml)
    if not m:
        raise SystemExit("classroom.py: no TUT_ALL_TRACKS in CMakeLists.txt")
    out = []
    for track in m.group(1).split(";"):
        registry = root / "common" / "checks" / track / "lessons.cmake"
        if not registry.exists():
            continue  # an assignment's template may ship some tracks only
        text = registry.read_text()
        # tut_lesson(<track> <lesson> ...); the multigpu track's tut_multigpu_lesson(<lesson> ...)
        found = re.findall(r"^\s*tut_lesson\(\s*(\w+)\s+(\w+)", text, re.M)
        found += [("multigpu", lesson) for lesson in re.findall(r"^\s*tut_multigpu_lesson\(\s*(\w+)", text, re.M)]
        for t, lesson in found:
            if t != track:
                raise SystemExit(f"classroom.py: {track}/lessons.cmake registers a lesson of track '{t}'")
            if (root / "lessons" / track / lesson).is_dir():
                out.append((track, lesson))
    return out


# A student's repository has no solutions/: the solution tree CMake configures beside the
# lessons is the lessons themselves (only the lessons' checks are built).
TREES = f"--build-dir {BUILD_DIR} --solutions-dir lessons"


def grade_command(track, lesson):
    return f"python3 scripts/grade.py --only {track}/{lesson} --require-full {TREES} --out grade-results/{track}-{lesson}"


def step_id(track, lesson):
    return re.sub(r"[^a-z0-9]+", "-", f"{track}-{lesson}".lower()).strip("-")


# The toolkit first: install-deps fails while nvcc is missing (it finds the installed one
# in /usr/local/cuda/bin).
SETUP_TOOLS = "autograder/install-cuda-toolkit.sh && scripts/install-deps"
IF_STUDENT = "steps.student.outputs.grade == 'yes'"
BUILD_ALL = f"python3 scripts/grade.py --build-only {TREES} --out grade-results"


def autograding_json(items):
    """The first test's setup installs the tools and builds every lesson's checks at once.
    A compile error makes that build exit 1; it is reported by that lesson's own test, so
    it must not fail the first test's setup."""
    tests = [{"name": f"{t}/{l}", "setup": f"{SETUP_TOOLS} && ({BUILD_ALL} || true)" if i == 0 else "",
              "run": grade_command(t, l), "input": "", "output": "", "comparison": "included",
              "timeout": TIMEOUT_MIN, "points": POINTS} for i, (t, l) in enumerate(items)]
    return json.dumps({"tests": tests}, indent=2) + "\n"


def workflow(items):
    lines = [
        "# GitHub Classroom autograding: one test per lesson, worth 10 points when the lesson",
        "# scores full points: its [exercise] checks and its scored [performance] checks pass",
        "# (scripts/grade.py --require-full; docs/grading.md).",
        "# Generated by autograder/classroom.py from common/checks/*/lessons.cmake; do not edit by hand.",
        "#",
        "# The checks need an NVIDIA GPU. Set the variable TUT_GPU_RUNNER (repository or",
        "# organization: Settings > Secrets and variables > Actions > Variables) to the label of",
        "# a self-hosted runner with a GPU. Without it the job runs on ubuntu-latest: it installs",
        "# the CUDA toolkit, compiles every lesson (compile errors are reported) and each test",
        "# prints SKIPPED (no GPU) and scores 0. It does nothing in a template repository, nor",
        "# in a repository with solutions/ (the tutorial's own: students get one without it).",
        "name: Autograding Tests",
        "'on':",
        "  - push",
        "  - workflow_dispatch",
        "  - repository_dispatch",
        "permissions:",
        "  checks: write",
        "  actions: read",
        "  contents: read",
        "jobs:",
        "  run-autograding-tests:",
        "    runs-on: ${{ vars.TUT_GPU_RUNNER || 'ubuntu-latest' }}",
        "    if: github.actor != 'github-classroom[bot]' && !github.event.repository.is_template",
        "    steps:",
        "      - name: Checkout code",
        "        uses: actions/checkout@v4",
        "      - name: A student's repository? (the tutorial's own has solutions/)",
        "        id: student",
        "        run: |",
        "          if [ -d solutions ]; then echo 'solutions/ is here, so nothing is graded'",
        "          else echo 'grade=yes' >> \"$GITHUB_OUTPUT\"; fi",
        "      - name: Tools (the CUDA toolkit when missing; CMake, Ninja, Catch2)",
        f"        if: {IF_STUDENT}",
        f"        run: {SETUP_TOOLS}",
        "      - name: Build every lesson's checks at once",
        f"        if: {IF_STUDENT}",
        f"        run: {BUILD_ALL}",
        "        continue-on-error: true",
    ]
    for t, l in items:
        sid = step_id(t, l)
        lines += [
            f"      - name: {t}/{l}",
            f"        id: {sid}",
            f"        if: {IF_STUDENT}",
            "        uses: classroom-resources/autograding-command-grader@v1",
            "        with:",
            f"          test-name: {t}/{l}",
            f"          command: {grade_command(t, l)}",
            f"          timeout: {TIMEOUT_MIN}",
            f"          max-score: {POINTS}",
        ]
    lines += [
        "      - name: Autograding Reporter",
        f"        if: {IF_STUDENT}",
        "        uses: classroom-resources/autograding-grading-reporter@v1",
        "        env:",
    ]
    for t, l in items:
        sid = step_id(t, l)
        lines.append(f"          {sid.upper()}_RESULTS: \"${{{{steps.{sid}.outputs.result}}}}\"")
    lines += [
        "        with:",
        "          runners: " + ",".join(step_id(t, l) for t, l in items),
    ]
    return "\n".join(lines) + "\n"


def repository_files(root=REPO):
    """The repository's files, relative to root (answers_in_tree.repository_files())."""
    return [Path(p) for p in answers_in_tree.repository_files(root)]


def write_template(dest, up_to=None, tracks=()):
    """An assignment's template repository in dest: this repository without solutions/ (nor
    its scratch/), lessons/ and common/ as autograder/assignment.py selects them, and the
    Classroom files for the lessons it ships."""
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise SystemExit(f"classroom.py: {dest} is not empty")
    try:
        shipped, files = assignment.select(REPO, up_to, tracks)
    except assignment.UsageError as e:
        raise SystemExit(f"classroom.py: {e}")
    generated = {WORKFLOW_REL, AUTOGRADING_JSON_REL}
    # beside lessons/ and common/ (selected above): what every student's copy holds, which
    # scripts/answers_in_tree.py searches for answers (no solutions/, no experiment sources)
    rest = [f for f in repository_files() if answers_in_tree.ships_beside_lessons(f.as_posix())
            and f not in generated]
    assignment.copy(REPO, rest + files, dest)
    items = lessons(dest)
    for rel, text in ((WORKFLOW_REL, workflow(items)), (AUTOGRADING_JSON_REL, autograding_json(items))):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(text)
    print(f"template in {dest}: {len(items)} lesson(s) graded ({len(shipped)} shipped), "
          f"{len(rest) + len(files) + 2} files")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the committed files, write nothing")
    ap.add_argument("--template", metavar="DIR", help="write an assignment's template repository into DIR")
    ap.add_argument("--up-to", help="with --template: the last lesson shipped, track/NN (e.g. sgemm/05)")
    ap.add_argument("--tracks", default="", help="with --template --up-to: other tracks shipped whole")
    args = ap.parse_args(argv)
    if (args.up_to or args.tracks) and not args.template:
        ap.error("--up-to and --tracks go with --template")
    if args.template:
        if args.check:
            ap.error("--check compares this repository's own files; leave it out with --template")
        return write_template(args.template, args.up_to, [t for t in re.split(r"[,;\s]+", args.tracks) if t])
    items = lessons()
    wanted = {WORKFLOW: workflow(items), AUTOGRADING_JSON: autograding_json(items)}
    stale = []
    for path, text in wanted.items():
        current = path.read_text() if path.exists() else None
        if current == text:
            continue
        if args.check:
            stale.append(path.relative_to(REPO).as_posix())
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path.relative_to(REPO)}")
    if stale:
        print("out of date (run autograder/classroom.py): " + ", ".join(stale))
        return 1
    print(f"{len(items)} lessons, {len(items) * POINTS} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
