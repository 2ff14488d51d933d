#!/usr/bin/env python3
"""Counts each track's lesson harness: the code in common/include that runs a lesson program.

    scripts/driver_lines.py [--root DIR] [--limit N]

A track header marks where its harness begins with the line

    // ==== Lesson harness: options, problem, results ====

and it runs to the end of the file or to the next line that starts with `// ==== `. The
harness is the track's command line, what its problem measures and prints, its records,
table rows and extras; above the marker is the track's subject matter (variant types,
inputs, references, error bounds, device plumbing), which the checks use too. Lines are
counted as they are, blank lines and comments included. Prints one line per track and the
total, and exits 1 when the total is over --limit (default 1000) or a track header that
declares a Problem has no marker.
"""
import argparse
import os
import re
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = "// ==== Lesson harness: options, problem, results ===="
TRACK_HEADERS = {"sgemm": ["sgemm.hpp"], "bandwidth": ["bandwidth.hpp"], "reduction": ["reduction.hpp"],
                 "cg": ["cg.hpp"], "jor": ["jor_gpu.hpp"]}


def harness_lines(path):
    """(lines in the harness sections of `path`, whether it has a marker)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    count, inside, marked = 0, False, False
    for line in lines:
        if line.strip() == MARKER:
            inside, marked = True, True
            continue
        if line.startswith("// ==== "):
            inside = False
        if inside:
            count += 1
    return count, marked


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=REPO_ROOT)
    parser.add_argument("--limit", type=int, default=1000)
    args = parser.parse_args(argv)
    include = os.path.join(args.root, "common", "include", "tut")
    total, status = 0, 0
    for track, headers in TRACK_HEADERS.items():
        n = 0
        for name in headers:
            path = os.path.join(include, name)
            if not os.path.isfile(path):
                continue
            count, marked = harness_lines(path)
            with open(path, encoding="utf-8") as f:
                declares_problem = re.search(r"^\s*(?:template\s*<[^>]*>\s*)?class\s+\w*Problem\b", f.read(), re.M)
            if declares_problem and not marked:
                print(f"{name}: declares a Problem but has no line '{MARKER}'")
                status = 1
            n += count
        print(f"{track:10s} {n:5d}")
        total += n
    print(f"{'total':10s} {total:5d} (limit {args.limit})")
    if total > args.limit:
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
