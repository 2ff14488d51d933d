#!/usr/bin/env python3
"""CPU test: a lesson binary must answer bad command-line input with a usage error.

usage: expect_usage_error.py EXE "ARGS 1" "ARGS 2" ...

Each quoted string is one invocation (split on spaces). Each must exit with code 2
(tut::kUsageExitCode) and print an error on stderr, before touching any GPU, so this
runs on machines without one. A crash (negative code), a hang or exit 0 fails.
"""
import subprocess
import sys

USAGE_EXIT = 2


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    exe, cases = argv[1], argv[2:]
    failures = 0
    for case in cases:
        args = case.split()
        try:
            p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            print(f"FAIL  {case!r}: hung for 60 s")
            failures += 1
            continue
        first_line = (p.stderr.strip().splitlines() or ["<no stderr>"])[0]
        if p.returncode == USAGE_EXIT and p.stderr.strip():
            print(f"ok    {case!r}: exit {p.returncode}: {first_line}")
        else:
            print(f"FAIL  {case!r}: exit {p.returncode} (want {USAGE_EXIT} and a message): {first_line}")
            failures += 1
    help_run = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    if help_run.returncode != 0 or "usage:" not in help_run.stdout:
        print(f"FAIL  '--help': exit {help_run.returncode}, want 0 and a usage message")
        failures += 1
    print(f"{len(cases) + 1 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
