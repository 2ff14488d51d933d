#!/usr/bin/env python3
"""Checks that every lesson has the one shape the project's lessons share.

    scripts/lesson_shape.py [--root DIR]

- One variant shape: `tut::Variant` (common/include/tut/bench.hpp) is the only variant
  type in common/include, and no lesson or header declares another one or uses the
  factories that made the old ones.
- No driver entry point: common/include defines no `*_main(int argc, ...)` function; each
  lesson's main() shows its own check-then-time loop.
- Every lesson file (lessons/ and solutions/) opens with `// <track>/<NN_name>: ...`, has
  the divider line between what the student writes and the harness, keeps every
  TODO(exercise) above it, and its main() contains a loop over the variants that calls
  the bench's check and one of its timers.

Prints `path:line: what is wrong` for each finding and exits 1 when there is one.
"""
import argparse
import os
import re
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIVIDER = "// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ===="
# The old ways of declaring a variant, gone since every track uses tut::Variant.
OLD_FACTORIES = re.compile(r"\b(kernel_variant|library_variant|launch_shape|copy_variant|gather_variant|"
                           r"multi_pass_variant|host_variant)\s*\(")
# A type named *Variant (a struct of lists of tut::Variant, e.g. one per element type, is a
# container of the one shape, not another shape).
VARIANT_TYPE = re.compile(r"^\s*(?:template\s*<[^>]*>\s*)?(?:struct|class)\s+(\w*Variant)\b(?!\s*;)")
DRIVER = re.compile(r"^\s*(?:inline\s+)?int\s+(\w+_main)\s*\(\s*int\s+argc")
MAIN = re.compile(r"^\s*int\s+main\s*\(")


def is_comment(line):
    return line.lstrip().startswith(("//", "/*", "*"))


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def lesson_files(root):
    for tree in ("lessons", "solutions"):
        top = os.path.join(root, tree)
        if not os.path.isdir(top):
            continue
        for track in sorted(os.listdir(top)):
            for lesson in sorted(os.listdir(os.path.join(top, track)) if os.path.isdir(os.path.join(top, track)) else []):
                folder = os.path.join(top, track, lesson)
                if not os.path.isdir(folder):
                    continue
                for name in sorted(os.listdir(folder)):
                    if name.endswith(".cu"):
                        yield track, lesson, os.path.join(folder, name)


def main_body(lines):
    """The lines of main(), from its signature to the closing brace at column 0."""
    for i, line in enumerate(lines):
        if MAIN.match(line):
            for j in range(i + 1, len(lines)):
                if lines[j].startswith("}"):
                    return lines[i:j + 1]
            return lines[i:]
    return []


def check_lesson(root, track, lesson, path):
    rel = os.path.relpath(path, root)
    lines = read(path)
    out = []
    first = f"// {track}/{lesson}: "
    if not lines or not lines[0].startswith(first):
        out.append(f"{rel}:1: the first line must start with '{first}' (what the lesson adds)")
    dividers = [i for i, line in enumerate(lines) if line.strip() == DIVIDER]
    if len(dividers) != 1:
        out.append(f"{rel}: needs exactly one divider line between the exercise and the harness:\n    {DIVIDER}")
    else:
        for i in range(dividers[0] + 1, len(lines)):
            if "TODO(exercise)" in lines[i]:
                out.append(f"{rel}:{i + 1}: TODO(exercise) below the divider (the harness is not the exercise)")
    body = "\n".join(main_body(lines))
    if not body:
        out.append(f"{rel}: no main()")
    elif not (re.search(r"\bfor\s*\(", body) and ".check(" in body and re.search(r"\.time(_host)?\(", body)):
        out.append(f"{rel}: main() must show its loop over the variants: for (...), bench.check(...), "
                   "bench.time(...) or bench.time_host(...)")
    return out


def check_headers(root):
    out = []
    include = os.path.join(root, "common", "include")
    for folder, _, names in os.walk(include):
        for name in sorted(names):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            for number, line in enumerate(read(path), 1):
                m = VARIANT_TYPE.match(line)
                if m and not (name == "bench.hpp" and m.group(1) == "Variant"):
                    out.append(f"{rel}:{number}: declares the variant type '{m.group(1)}'; every track uses "
                               "tut::Variant (bench.hpp)")
                if DRIVER.match(line):
                    out.append(f"{rel}:{number}: defines the driver '{DRIVER.match(line).group(1)}'; a lesson's "
                               "main() shows its own loop")
                if OLD_FACTORIES.search(line) and not is_comment(line):
                    out.append(f"{rel}:{number}: uses an old variant factory; declare a tut::Variant")
    return out


def findings(root):
    out = check_headers(root)
    for track, lesson, path in lesson_files(root):
        out += check_lesson(root, track, lesson, path)
        rel = os.path.relpath(path, root)
        for number, line in enumerate(read(path), 1):
            m = VARIANT_TYPE.match(line)
            if m:
                out.append(f"{rel}:{number}: declares its own variant type '{m.group(1)}'; use tut::Variant")
            if OLD_FACTORIES.search(line) and not is_comment(line):
                out.append(f"{rel}:{number}: uses an old variant factory; declare a tut::Variant")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=REPO_ROOT)
    args = parser.parse_args(argv)
    found = findings(os.path.abspath(args.root))
    for line in found:
        print(line)
    if found:
        print(f"lesson_shape: {len(found)} finding(s)", file=sys.stderr)
        return 1
    print("lesson_shape: every lesson has the one shape")
    return 0


if __name__ == "__main__":
    sys.exit(main())
