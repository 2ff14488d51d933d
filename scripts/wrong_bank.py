#!/usr/bin/env python3
"""The bank of known-wrong submissions, common/checks/wrong/<track>/<lesson>/<mistake>.diff:
checks it, writes its submissions, and turns full submissions into bank files.

    scripts/wrong_bank.py [--root DIR] [--require-two]      check the bank (CTest cpu/wrong-bank)
    scripts/wrong_bank.py --materialize DIR [FILE.diff...]   write the submissions (all, or those named)
                                                             as DIR/<track>/<lesson>/<mistake>.cu
    scripts/wrong_bank.py --to-diff FILE.cu...               write each full submission as its bank file

A submission is a replacement for its lesson's exercise file with one realistic mistake in
the exercise part (above the divider). The bank stores each as a unified diff against a
file of the tree, the lesson's solution or its exercise:

    // wrong: <track>/<lesson>: <the mistake, as a student would make it>
    // caught by: <the check case (or a distinctive prefix of its name), [performance], or sanitizer: <tool>>
    // kind: <one of KINDS>
    // (any further comment lines that explain the mistake)
    // base: solution                                   (or: exercise)
    --- a/solutions/<track>/<lesson>/<file>.cu
    +++ b/solutions/<track>/<lesson>/<file>.cu
    @@ -120,7 +120,7 @@
    ...

The submission is the lines above `// base:` (the header block, all `//` lines) followed by
the base with the diff applied, so the header is the submission's first lines; the diff
alone applies to the base with `git apply` too. The diff is applied strictly: every context
and removed line must match the base at the line its hunk names, or the file fails with the
hunk and the line, so a base edited under a diff fails cpu/wrong-bank. `--to-diff` takes a
full submission (header block, then the whole file), diffs it against both bases (3 lines
of context) and keeps the smaller diff (the solution on a tie); the lesson comes from the
`wrong:` line and the bank file is written in this tree's bank. After an exercise or
solution changes under a diff that no longer applies: materialize the bank before the
change, make the change, fix the affected submissions and turn them back with --to-diff.
scripts/grade.py --self-test grades every submission in place of the exercise (each must
score short of full points); the CMake target wrong-bank materializes each into the build
dir and compiles it once.

The check needs no GPU. Every bank file must

- apply to its base; start with the three header lines, the first naming the lesson of the
  file's folder;
- belong to a lesson that exists (lessons/<track>/<lesson>/ with its exercise .cu);
- give a submission that keeps the exercise's divider line, and below it the exercise's
  harness unchanged.

A .cu file in the bank is a problem (a full copy: --to-diff turns it into a bank file). The
check also lists the lessons with fewer than two files: a failure with --require-two (or the
environment variable TUT_WRONG_BANK_REQUIRE_TWO=1), a note otherwise. Prints each problem
as `path: problem` and exits 1 when there is one, 0 otherwise.
"""
import argparse
import difflib
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
BASES = {"solution": "solutions", "exercise": "lessons"}  # base: the tree it names
BASE_LINE = re.compile(r"^// base: (?P<base>\S+)\s*$")
HUNK = re.compile(r"^@@ -(?P<old>\d+)(?:,(?P<old_len>\d+))? \+(?P<new>\d+)(?:,(?P<new_len>\d+))? @@")
NO_NEWLINE = "\\ No newline at end of file"
CONTEXT = 3


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


# ---------------------------------------------------------------- bank files as diffs


class DiffError(Exception):
    """A bank file that cannot be read or applied: str() names the file, `reason` the rest."""

    def __init__(self, path, reason):
        super().__init__(f"{Path(path).as_posix()}: {reason}")
        self.path, self.reason = Path(path), reason


def split_lines(text):
    """The lines of `text`, each with its newline (the last one may have none); unlike
    str.splitlines, only '\\n' ends a line."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


def read_text(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def write_text(path, text):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def lesson_of(path):
    """"track/lesson" of a file in the bank's layout (<track>/<lesson>/<file>)."""
    path = Path(path)
    return f"{path.parent.parent.name}/{path.parent.name}"


def base_file(root, lesson, base):
    """The path, relative to `root`, of base `base` ("solution" or "exercise") of `lesson`:
    the tree's file of the same name as the exercise's (lessons/<lesson>/*.cu)."""
    if base not in BASES:
        raise ValueError(f"base '{base}' is not one of: {', '.join(BASES)}")
    exercise = sorted((Path(root) / "lessons" / lesson).glob("*.cu"))
    if len(exercise) != 1:
        raise ValueError(f"lessons/{lesson}/ has {len(exercise)} .cu files, not one")
    return Path(BASES[base]) / lesson / exercise[0].name


def parse_diff(path, text):
    """(header lines, base, base path, hunks) of a bank file's text. A hunk is (its @@ line
    and that line's number, old start, old length, its lines as (tag, text, line number))."""
    lines = split_lines(text)
    at = next((i for i, line in enumerate(lines) if BASE_LINE.match(line.rstrip("\n"))), None)
    if at is None:
        raise DiffError(path, "no '// base: solution' or '// base: exercise' line")
    for i, line in enumerate(lines[:at]):
        if not line.startswith("//"):
            raise DiffError(path, f"line {i + 1}: the lines above '// base:' must be // comment lines, "
                                  f"not '{line.rstrip()[:80]}'")
    header, base = lines[:at], BASE_LINE.match(lines[at].rstrip("\n"))["base"]
    if base not in BASES:
        raise DiffError(path, f"line {at + 1}: base '{base}' is not one of: {', '.join(BASES)}")
    rest, n = lines[at + 1:], at + 2  # n: the line number of rest[0]
    if not rest:
        return header, base, None, []
    if len(rest) < 2 or not rest[0].startswith("--- a/") or not rest[1].startswith("+++ b/"):
        raise DiffError(path, f"line {n}: after the base line come '--- a/<base path>' and '+++ b/<base path>'")
    base_path = rest[0][len("--- a/"):].rstrip("\n")
    hunks, i = [], 2
    while i < len(rest):
        m = HUNK.match(rest[i])
        if not m:
            raise DiffError(path, f"line {n + i}: expected a hunk's '@@ -l,s +l,s @@' line, "
                                  f"not '{rest[i].rstrip()[:80]}'")
        old_len = int(m["old_len"]) if m["old_len"] is not None else 1
        new_len = int(m["new_len"]) if m["new_len"] is not None else 1
        head, i = (rest[i].rstrip("\n"), n + i), i + 1
        where = f"hunk {len(hunks) + 1} '{head[0]}' (line {head[1]})"
        body, olds, news = [], 0, 0
        while olds < old_len or news < new_len or (i < len(rest) and rest[i].startswith("\\")):
            if i >= len(rest):
                raise DiffError(path, f"{where}: the file ends {old_len - olds} base and {new_len - news} "
                                      "result line(s) short")
            line = rest[i]
            if line.startswith("\\"):
                if not body:
                    raise DiffError(path, f"line {n + i}: '{NO_NEWLINE}' follows no line")
                tag, t, k = body[-1]
                body[-1] = (tag, t[:-1] if t.endswith("\n") else t, k)
            else:
                tag, t = (" ", "\n") if line == "\n" else (line[0], line[1:])  # an editor's stripped blank line
                if tag not in " -+":
                    raise DiffError(path, f"line {n + i}: a hunk's line starts with ' ', '-' or '+', "
                                          f"not '{line.rstrip()[:80]}'")
                olds += tag in " -"
                news += tag in " +"
                body.append((tag, t, n + i))
            i += 1
        if olds != old_len or news != new_len:
            raise DiffError(path, f"{where}: it has {olds} base and {news} result line(s), not {old_len} and {new_len}")
        hunks.append((head, int(m["old"]), old_len, body))
    return header, base, base_path, hunks


def apply_hunks(path, base_text, base_name, hunks):
    """The base's text with the hunks applied, strictly: each hunk's context and removed
    lines must be the base's lines at the line the hunk names."""
    old, out, pos = split_lines(base_text), [], 0  # pos: lines of `old` already taken
    for number, ((head, head_line), start, length, body) in enumerate(hunks, 1):
        first = start if length == 0 else start - 1  # a hunk of no base line inserts after line `start`
        where = f"hunk {number} '{head}' (line {head_line})"
        if first < pos or first > len(old):
            raise DiffError(path, f"{where}: starts at line {start} of {base_name}, which has {len(old)} lines"
                            + (" (or the hunks overlap)" if first < pos else ""))
        out += old[pos:first]
        pos = first
        for tag, text, line in body:
            if tag == "+":
                out.append(text)
                continue
            have = old[pos] if pos < len(old) else None
            if have != text:
                shown = "the end of the file" if have is None else repr(have)
                raise DiffError(path, f"{where}, line {line}: {base_name} line {pos + 1} should read {text!r}, "
                                      f"but is {shown}")
            if tag == " ":
                out.append(text)
            pos += 1
    return "".join(out + old[pos:])


def materialize_text(path, text, root=REPO, lesson=None):
    """The submission of the bank file `path` with text `text`; its base is looked up under
    `root` for `lesson` (default: the lesson of the file's folder)."""
    lesson = lesson or lesson_of(path)
    header, base, base_path, hunks = parse_diff(path, text)
    try:
        want = base_file(root, lesson, base).as_posix()
    except ValueError as e:
        raise DiffError(path, f"its base: {e}")
    if base_path is not None and base_path != want:
        raise DiffError(path, f"the diff is of {base_path}, but its base ({base}) is {want}")
    source = Path(root) / want
    if not source.is_file():
        raise DiffError(path, f"its base {want} does not exist")
    return "".join(header) + apply_hunks(path, read_text(source), want, hunks)


def materialize(path, root=REPO):
    """The submission (full .cu text) of the bank file `path`; raises DiffError."""
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError) as e:
        raise DiffError(path, f"cannot be read: {e}")
    return materialize_text(path, text, root)


def write_submission(path, out_dir, root=REPO):
    """Writes the submission of bank file `path` as out_dir/<track>/<lesson>/<mistake>.cu
    and returns that path. A file that already holds it is left as it is (so the build
    compiles it again only when it changes)."""
    out = Path(out_dir) / lesson_of(path) / (Path(path).stem + ".cu")
    text = materialize(path, root)
    try:
        if read_text(out) == text:
            return out
    except (OSError, UnicodeDecodeError):
        pass
    write_text(out, text)
    return out


def unified_diff(old, new, name):
    """The lines of a unified diff (CONTEXT lines of context) from text `old` to `new`,
    both named `name`; lines without a newline at the end are marked as git marks them."""
    out = [f"--- a/{name}\n", f"+++ b/{name}\n"]
    for line in list(difflib.unified_diff(split_lines(old), split_lines(new), n=CONTEXT, lineterm="\n"))[2:]:
        out.append(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}\n")
    return out


def split_submission(text, lesson):
    """(header block, the rest) of a full submission: the header block is its leading //
    lines before the lesson's own first line ('// <track>/<lesson>: ...'), or before the
    first line that is not a comment."""
    lines = split_lines(text)
    at = next((i for i, line in enumerate(lines) if line.startswith(f"// {lesson}:") or not line.startswith("//")),
              len(lines))
    return "".join(lines[:at]), "".join(lines[at:])


def to_diff(text, root=REPO, path="<submission>"):
    """(lesson, the bank file's text) for a full submission: its header block, the base
    line and the smaller diff of the two bases (the solution on a tie)."""
    fields, problems = parse_header(text)
    if "lesson" not in fields:
        raise DiffError(path, "; ".join(problems))
    lesson = fields["lesson"]
    header, body = split_submission(text, lesson)
    best = None
    for base in BASES:
        try:
            name = base_file(root, lesson, base)
        except ValueError as e:
            raise DiffError(path, str(e))
        if not (Path(root) / name).is_file():
            continue
        diff = unified_diff(read_text(Path(root) / name), body, name.as_posix())
        if best is None or len(diff) < len(best[1]):
            best = (base, diff)
    if best is None:
        raise DiffError(path, f"{lesson} has neither a solution nor an exercise file to diff against")
    out = header + f"// base: {best[0]}\n" + "".join(best[1])
    if materialize_text(path, out, root, lesson) != text:  # never write a bank file that does not give it back
        raise DiffError(path, "its diff does not give the submission back")
    return lesson, out


def bank_files(root):
    """{"track/lesson": [its .diff files, sorted by name]} of the bank, and [(path, problem)]
    for the files that do not belong: a .diff outside a <track>/<lesson>/ folder, a .cu (a
    full submission, not a bank file)."""
    base = Path(root) / BANK
    by_lesson, stray = {}, []
    if not base.is_dir():
        return by_lesson, stray
    for path in sorted(base.rglob("*.cu")):
        stray.append((path, "a full submission: the bank holds .diff files (scripts/wrong_bank.py --to-diff "
                            "writes this one's)"))
    for path in sorted(base.rglob("*.diff")):
        parts = path.relative_to(base).parts
        if len(parts) != 3:
            stray.append((path, f"not in a <track>/<lesson>/ folder of {BANK.as_posix()}"))
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


def file_problems(path, lesson, exercise, root=REPO):
    """What is wrong with one bank file of `lesson` (exercise: its exercise file, or None)."""
    if exercise is None:
        return [f"there is no lesson {lesson} (lessons/{lesson}/ with an exercise .cu)"]
    try:
        text = materialize(path, root)
    except DiffError as e:
        return [e.reason]
    fields, problems = parse_header(text)
    if "lesson" in fields and fields["lesson"] != lesson:
        problems.append(f"its first line names {fields['lesson']}, but it lies in the folder of {lesson}")
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
    for path, why in stray:
        problems.append(f"{path.relative_to(root).as_posix()}: {why}")
    for lesson, files in by_lesson.items():
        for path in files:
            for p in file_problems(path, lesson, lessons.get(lesson), root):
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
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--materialize", metavar="DIR",
                      help="write the submissions of the named .diff files (default: the whole bank) as "
                           "DIR/<track>/<lesson>/<mistake>.cu")
    mode.add_argument("--to-diff", action="store_true",
                      help="write each named full submission (.cu) as the bank file "
                           f"{BANK.as_posix()}/<track>/<lesson>/<mistake>.diff")
    ap.add_argument("files", nargs="*", help="the .diff files of --materialize, the .cu files of --to-diff")
    args = ap.parse_args(argv)
    root = Path(args.root)
    if args.files and not (args.materialize or args.to_diff):
        ap.error("files go with --materialize or --to-diff")
    if args.to_diff and not args.files:
        ap.error("--to-diff needs the .cu files to convert")
    if args.materialize or args.to_diff:
        failed = 0
        if args.materialize:
            files = [Path(f) for f in args.files] or [f for fs in bank_files(root)[0].values() for f in fs]
        for path in map(Path, args.files) if args.to_diff else files:
            try:
                if args.materialize:
                    write_submission(path, args.materialize, root)
                    continue
                lesson, text = to_diff(read_text(path), root, path)
                out = root / BANK / lesson / (path.stem + ".diff")
                write_text(out, text)
                print(f"{out} ({len(split_lines(text))} lines)")
            except (DiffError, OSError, UnicodeDecodeError) as e:
                print(e, file=sys.stderr)
                failed += 1
        if args.materialize and not args.files:
            print(f"wrong_bank: {len(files) - failed} submission(s) written to {args.materialize}")
        return 1 if failed else 0
    require_two = args.require_two or os.environ.get("TUT_WRONG_BANK_REQUIRE_TWO") == "1"
    problems, notes = check(root, require_two)
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
