#!/usr/bin/env python3
"""Finds a lesson's answer in files its student can read.

    scripts/answers_in_tree.py [--root DIR] [--min-length N]

A student gets lessons/ and common/ (the Gradescope package and the Classroom template
ship lesson k with the lessons before it: autograder/build_zip.sh --up-to). For every
lesson, the answer is what the solution's file has and the exercise's does not: the lines
of the solution that a diff against the exercise marks as added. The long code lines of the
answer (at least --min-length characters once spaces are collapsed, not comments, not
lines the exercise has elsewhere, not idioms found in three or more files) must not be
readable in the files the student has for that lesson -- two of them in one file, or
one of 60 characters or more, count as the answer given away:

- the headers shipped with it (shipped_headers(): what the exercises and checks of the
  track's lessons up to this one include from common/include and common/checks,
  transitively; a helper that only later lessons call is not shipped);
- the exercise files of the earlier lessons of its track, and the READMEs of its track's
  lessons up to this one;
- the code and Markdown files every student's copy has beside lessons/ and common/
  (files_beside_lessons(): the Classroom template is the repository without solutions/,
  scratch/ and the experiments' sources, docs/experiments/*.cu, which rebuild lessons'
  kernels to measure them).

Prints `lesson: N line(s) of its answer in path:line '...'` for each and exits 1 when it finds
one, 0 otherwise.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def normalise(line):
    """One line of code with its spaces collapsed and its trailing comment dropped."""
    line = re.sub(r"//.*$", "", line)
    return " ".join(line.split())


def is_code(line):
    text = line.strip()
    return bool(text) and not text.startswith(("//", "/*", "*", "#pragma", "#include"))


def answer_lines(exercise, solution, min_length):
    """The long code lines the solution adds to the exercise."""
    out = []
    matcher = difflib.SequenceMatcher(a=exercise, b=solution, autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag not in ("insert", "replace"):
            continue
        for line in solution[j1:j2]:
            if is_code(line) and len(normalise(line)) >= min_length:
                out.append(normalise(line))
    return out


def included_headers(path, roots, seen=None):
    """Headers under the folders `roots` that `path` includes, transitively (a set of paths)."""
    seen = set() if seen is None else seen
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = INCLUDE.match(line)
            if not m:
                continue
            for base in [os.path.dirname(path)] + list(roots):
                candidate = os.path.normpath(os.path.join(base, m.group(1)))
                if os.path.isfile(candidate) and any(candidate.startswith(r + os.sep) for r in roots):
                    if candidate not in seen:
                        seen.add(candidate)
                        included_headers(candidate, roots, seen)
                    break
    return seen


def shipped_headers(root, track, lesson, all_lessons=None):
    """The headers an assignment on `track/lesson` ships (autograder/build_zip.sh --up-to):
    those that the exercises and the checks of the track's lessons up to this one include,
    transitively, from common/include and common/checks. A header that only later lessons
    include is not shipped."""
    roots = [os.path.join(root, "common", "include"), os.path.join(root, "common", "checks")]
    all_lessons = lessons(root) if all_lessons is None else all_lessons
    seen = set()
    for t, l, exercise, _ in all_lessons:
        if t != track or l > lesson:
            continue
        included_headers(exercise, roots, seen)
        check = os.path.join(root, "common", "checks", t, f"check_{l}.cpp")
        if os.path.isfile(check):
            included_headers(check, roots, seen)
    return seen


def lessons(root):
    """(track, lesson, exercise path, solution path) for every lesson with both files."""
    out = []
    lessons_dir = os.path.join(root, "lessons")
    for track in sorted(os.listdir(lessons_dir)):
        track_dir = os.path.join(lessons_dir, track)
        if not os.path.isdir(track_dir):
            continue
        for lesson in sorted(os.listdir(track_dir)):
            folder = os.path.join(track_dir, lesson)
            if not os.path.isdir(folder):
                continue
            for name in sorted(os.listdir(folder)):
                if not name.endswith(".cu"):
                    continue
                solution = os.path.join(root, "solutions", track, lesson, name)
                if os.path.isfile(solution):
                    out.append((track, lesson, os.path.join(folder, name), solution))
    return out


NOT_SHIPPED = ("solutions", "scratch")  # besides lessons/ and common/, which are chosen per lesson
SCANNED_SUFFIXES = (".cu", ".cuh", ".hpp", ".h", ".cpp", ".c", ".md")


def ships_beside_lessons(rel):
    """Whether a student's copy of the repository (the Classroom template) holds the file at
    `rel` (relative to the root) whatever lessons it ships: not solutions/, scratch/, a build
    folder, lessons/ or common/ (selected per lesson), nor an experiment's source."""
    parts = rel.replace(os.sep, "/").split("/")
    if parts[0] in NOT_SHIPPED + ("lessons", "common", ".git") or parts[0].startswith("build"):
        return False
    return not (parts[:2] == ["docs", "experiments"] and rel.endswith((".cu", ".cuh", ".cpp", ".hpp")))


def repository_files(root):
    """The repository's files as git sees them (tracked, and untracked ones it does not
    ignore, so no grading output), relative to root; where git is not there, every file but
    build folders, .git and Python's caches (the Classroom template copies the same list)."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                             capture_output=True, check=True, timeout=120).stdout.decode()
        files = [p for p in out.split("\0") if p]
    except (OSError, subprocess.SubprocessError):
        files = []
        for folder, dirs, names in os.walk(root):
            rel = os.path.relpath(folder, root)
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", ".DS_Store")
                             and not (rel == "." and d.startswith(("build", ".git"))))
            files += [os.path.normpath(os.path.join(rel, n)) for n in sorted(names)
                      if n != ".DS_Store" and not n.endswith(".pyc") and not (rel == "." and n.startswith(("build", ".git")))]
    return [f for f in files if os.path.isfile(os.path.join(root, f))]


def files_beside_lessons(root):
    """The code and Markdown files (SCANNED_SUFFIXES) that ships_beside_lessons() keeps, as paths."""
    return sorted(os.path.join(root, rel) for rel in repository_files(root)
                  if rel.endswith(SCANNED_SUFFIXES) and ships_beside_lessons(rel))


def read_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def code_files(root):
    """Every .cu, .cuh, .hpp and .cpp of lessons/, solutions/ and common/."""
    out = []
    for top in ("lessons", "solutions", "common"):
        for folder, _, names in os.walk(os.path.join(root, top)):
            out += [os.path.join(folder, n) for n in names if n.endswith((".cu", ".cuh", ".hpp", ".cpp"))]
    return out


def idioms(root, limit=3):
    """Code lines found in `limit` or more files: loop heads and checked calls that any
    kernel has, which say nothing about a particular answer."""
    files_with = {}
    for path in code_files(root):
        for text in {normalise(line) for line in read_lines(path) if is_code(line)}:
            files_with[text] = files_with.get(text, 0) + 1
    return {text for text, count in files_with.items() if count >= limit}


def findings(root, min_length, long_length=60):
    """Where a lesson's answer is readable: a file the student has for lesson k that holds
    two or more of its distinctive answer lines, or one of `long_length` characters or more.
    An answer line is distinctive when the exercise does not hold it elsewhere and it is
    not an idiom (idioms())."""
    all_lessons = lessons(root)
    common = idioms(root)
    beside = files_beside_lessons(root)
    found = []
    for track, lesson, exercise, solution in all_lessons:
        exercise_lines = read_lines(exercise)
        in_exercise = {normalise(line) for line in exercise_lines}
        answers = {a for a in answer_lines(exercise_lines, read_lines(solution), min_length)
                   if a not in in_exercise and a not in common}
        if not answers:
            continue
        readable = sorted(shipped_headers(root, track, lesson, all_lessons))
        readable += [e for t, l, e, _ in all_lessons if t == track and l < lesson]
        readmes = {os.path.join(os.path.dirname(e), "README.md") for t, l, e, _ in all_lessons
                   if t == track and l <= lesson}
        readable += sorted(r for r in readmes if os.path.isfile(r))
        readable += beside
        for path in readable:
            hits = {}
            for number, line in enumerate(read_lines(path), 1):
                text = normalise(line)
                if text in answers and is_code(line):
                    hits.setdefault(text, number)
            if len(hits) >= 2 or any(len(t) >= long_length for t in hits):
                where = os.path.relpath(path, root)
                lines = ", ".join(f"{where}:{n} '{t}'" for t, n in sorted(hits.items(), key=lambda h: h[1]))
                found.append(f"{track}/{lesson}: {len(hits)} line(s) of its answer in {lines}")
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=REPO_ROOT, help="repository root (default: this one)")
    parser.add_argument("--min-length", type=int, default=30,
                        help="shortest answer line that counts, spaces collapsed (default 30)")
    args = parser.parse_args(argv)
    found = findings(os.path.abspath(args.root), args.min_length)
    for line in found:
        print(line)
    if found:
        print(f"answers_in_tree: {len(found)} answer line(s) readable from the student's tree", file=sys.stderr)
        return 1
    print("answers_in_tree: no lesson's answer is in a file its exercise includes, in an earlier lesson or "
          "beside the lessons")
    return 0


if __name__ == "__main__":
    sys.exit(main())
