#!/usr/bin/env python3
"""Builds the documentation site in a temporary folder and fails on any Doxygen warning.

    scripts/docs_warnings.py [--src REPO] [--keep DIR]

The `docs` target already treats warnings as errors, but only where the site is built;
this test (CTest `cpu/docs-warnings`) builds it from the tree as the target does, with
scripts/docs_site.py laying out the pages and docs/Doxyfile.in filled in the way
docs/CMakeLists.txt fills it, and prints every warning with its file and line. Exits 0
when Doxygen printed none, 1 when it printed any (or failed), 2 on a broken setup, and 77
(skipped) when Doxygen is not installed.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import docs_site

SKIP_EXIT = 77


def doxyfile(src, site, output, warnings):
    """docs/Doxyfile.in with CMake's @VARIABLES@ filled in, warnings to a file and not fatal
    (so that every warning is listed, not only the first)."""
    with open(os.path.join(src, "docs", "Doxyfile.in"), encoding="utf-8") as f:
        text = f.read()
    for name, value in (("TUT_DOXYGEN_OUTPUT", output), ("TUT_DOXYGEN_SITE", site),
                        ("CMAKE_SOURCE_DIR", src), ("CMAKE_CURRENT_SOURCE_DIR", os.path.join(src, "docs"))):
        text = text.replace("@%s@" % name, value)
    leftover = [w for w in text.split() if w.startswith("@") and w.endswith("@") and len(w) > 2]
    if leftover:
        raise ValueError("docs/Doxyfile.in uses %s, which this script does not fill in" % ", ".join(leftover))
    return text + "\nWARN_AS_ERROR = NO\nWARN_LOGFILE = %s\nQUIET = YES\n" % warnings


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="the repository (default: this script's)")
    ap.add_argument("--keep", help="build in this folder and keep it (default: a temporary folder)")
    args = ap.parse_args(argv)
    doxygen = shutil.which("doxygen")
    if not doxygen:
        print("SKIPPED: doxygen is not installed, so the site's warnings cannot be checked (exit 77); "
              "install it (apt-get install doxygen) to run this test.")
        return SKIP_EXIT
    src = os.path.abspath(args.src)
    work = args.keep or tempfile.mkdtemp(prefix="docs-warnings-")
    try:
        site, output = os.path.join(work, "site"), os.path.join(work, "out")
        warnings = os.path.join(work, "warnings.log")
        os.makedirs(output, exist_ok=True)
        docs_site.build(src, site)
        config = os.path.join(work, "Doxyfile")
        with open(config, "w", encoding="utf-8") as f:
            f.write(doxyfile(src, site, output, warnings))
        p = subprocess.run([doxygen, config], cwd=site, capture_output=True, text=True)
        with open(warnings, encoding="utf-8", errors="replace") as f:
            lines = [line.rstrip() for line in f if line.strip()]
        lines += [line for line in p.stderr.splitlines() if "warning" in line.lower() and line not in lines]
        for line in lines:
            print(line.replace(site + os.sep, ""))
        if p.returncode != 0:
            print("docs_warnings.py: doxygen exited %d\n%s" % (p.returncode, p.stderr[-2000:]), file=sys.stderr)
            return 1
        if lines:
            count = sum("warning" in line.lower() for line in lines) or len(lines)
            print("docs_warnings.py: %d Doxygen warning(s); fix them at their source" % count, file=sys.stderr)
            return 1
        print("docs_warnings.py: the site builds without a Doxygen warning (%s)" %
              subprocess.run([doxygen, "--version"], capture_output=True, text=True).stdout.strip())
        return 0
    except (OSError, ValueError) as e:
        print("docs_warnings.py: error: %s" % e, file=sys.stderr)
        return 2
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
