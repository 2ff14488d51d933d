#!/usr/bin/env python3
"""Checks the bank of known-wrong submissions: common/checks/wrong/<track>/<lesson>/<mistake>.cu.

    scripts/wrong_bank.py [--root DIR] [--require-two]

Each file is a complete replacement for its lesson's exercise file, with one realistic
mistake in the exercise part. scripts/grade.py --self-test grades every file in place of
the exercise (each must score short of full points); the CMake target wrong-bank compiles
each once. This script checks what needs no GPU. Every file must

- start with three header lines, the first naming the lesson of the file's folder:
    // wrong: <track>/<lesson>: <the mistake, as a student would make it>
    // caught by: <the check case (or a distinctive prefix of its name), [performance], or sanitizer: <tool>>
    // kind: <one of KINDS>
- belong to a lesson that exists (lessons/<track>/<lesson>/ with its exercise .cu);
- keep the exercise's divider line, and below it the exercise's harness unchanged.

It also lists the lessons with fewer than two files: a failure with --require-two (or the
environment variable TUT_WRONG_BANK_REQUIRE_TWO=1), a note otherwise. Prints each problem
as `path: problem` and exits 1 when there is one, 0 otherwise.
"""
import argparse
import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BANK = Path("common") / "checks" / "wrong"
KINDS = ("race", "out-of-bounds", "edges", "tiny-n", "not-reset", "stopping-test", "precision", "sampling",
         "skips-work", "previous-lesson", "other")
DIVIDER_START = "// ==== Harness:"
HEADER = (re.compile(r"^// wrong: (?P<lesson>[\w.-]+/[\w.-]+): (?P<mistake>\S.*)$"),
          re.compile(r"^// caught by: (?P<caught_by>\S.*)$"),
          re.compile(r"^// kind: (?P<kind>\S+)\s*$"))
HEADER_FORM = ("// wrong: <track>/<lesson>: <mistake>", "// caught by: <case>", "// kind: <kind>")


def parse_header(text):
    """(fields, problems) of a bank file's first three lines: fields has lesson, mistake,
    caught_by and kind (those that could be read); problems says what is malformed."""
    lines = text.splitlines()
    fields, problems = {}, []
    for i, (pattern, form) in enumerate(zip(HEADER, HEADER_FORM)):
        line = lines[i] if i < len(lines) else ""
        m = pattern.match(line.rstrip())
        if not m:
            problems.append(f"line {i + 1} must read '{form}', not '{line[:80]}'")
            continue
        fields.update({k: v.strip() for k, v in m.groupdict().items()})
    if "kind" in fields and fields["kind"] not in KINDS:
        problems.append(f"kind '{fields['kind']}' is not one of: {', '.join(KINDS)}")
    return fields, problems


def bank_files(root):
    """{"track/lesson": [files, sorted by name]} of the bank, and the .cu files that lie
    outside a <track>/<lesson>/ folder."""
    base = Path(root) / BANK
    by_lesson, stray = {}, []
    if not base.is_dir():
        return by_lesson, stray
    for path in sorted(base.rglob("*.cu")):
        parts = path.relative_to(base).parts
        if len(parts) != 3:
            stray.append(path)
            continue
        by_lesson.setdefault(f"{parts[0]}/{parts[1]}", []).append(path)
    return by_lesson, stray


def exercises(root):
    """{"track/lesson": its exercise file} for every lesson of lessons/."""
    out = {}
    base = Path(root) / "lessons"
    for path in sorted(base.glob("*/*/*.cu")):
        out[f"{path.parent.parent.name}/{path.parent.name}"] = path
    return out


def divider_and_harness(text):
    """The divider line and the text after it, or (None, None) when there is none."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(DIVIDER_START):
            return line.rstrip("\n"), "".join(lines[i + 1:])
    return None, None


def file_problems(path, lesson, exercise):
    """What is wrong with one bank file of `lesson` (exercise: its exercise file, or None)."""
    text = path.read_text(errors="replace")
    fields, problems = parse_header(text)
    if "lesson" in fields and fields["lesson"] != lesson:
        problems.append(f"its first line names {fields['lesson']}, but it lies in the folder of {lesson}")
    if exercise is None:
        problems.append(f"there is no lesson {lesson} (lessons/{lesson}/ with an exercise .cu)")
        return problems
    divider, harness = divider_and_harness(exercise.read_text(errors="replace"))
    if divider is None:
        return problems  # the exercise itself has none: lesson_shape.py reports that
    mine, my_harness = divider_and_harness(text)
    if mine is None or mine != divider:
        problems.append(f"the exercise's divider line is missing: '{divider}'")
    elif my_harness != harness:
        problems.append(f"the harness below the divider differs from {exercise.as_posix()}'s "
                        "(the mistake belongs above the divider)")
    return problems


def check(root, require_two=False):
    """(problems, notes): lines to print; a problem fails the check."""
    root = Path(root)
    by_lesson, stray = bank_files(root)
    lessons = exercises(root)
    problems, notes = [], []
    for path in stray:
        problems.append(f"{path.relative_to(root).as_posix()}: not in a <track>/<lesson>/ folder of {BANK.as_posix()}")
    for lesson, files in by_lesson.items():
        for path in files:
            for p in file_problems(path, lesson, lessons.get(lesson)):
                problems.append(f"{path.relative_to(root).as_posix()}: {p}")
    thin = [(lesson, len(by_lesson.get(lesson, []))) for lesson in lessons if len(by_lesson.get(lesson, [])) < 2]
    if thin:
        listing = ", ".join(f"{lesson} ({n})" for lesson, n in thin)
        line = f"{len(thin)} lesson(s) with fewer than two known-wrong submissions: {listing}"
        (problems if require_two else notes).append(line)
    files = sum(len(f) for f in by_lesson.values())
    notes.append(f"{files} file(s) for {len(by_lesson)} lesson(s) of {len(lessons)}")
    return problems, notes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(REPO), help="repository root (default: this one)")
    ap.add_argument("--require-two", action="store_true",
                    help="fail when a lesson has fewer than two files (also TUT_WRONG_BANK_REQUIRE_TWO=1)")
    args = ap.parse_args(argv)
    require_two = args.require_two or os.environ.get("TUT_WRONG_BANK_REQUIRE_TWO") == "1"
    problems, notes = check(args.root, require_two)
    for line in problems:
        print(line)
    for line in notes:
        print(f"wrong_bank: {line}")
    if problems:
        print(f"wrong_bank: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
