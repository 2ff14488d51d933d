"""Tests of scripts/process_text.py (no GPU needed). The real tree is checked by the CTest
test cpu/process-text, which runs the script itself.

Run: python3 -m unittest discover -s scripts -p "test_*.py"
"""
import io
import os
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import process_text

FLAGGED = [
    "iteration (the issue asked for 3x). The",
    "above the issue's 85%.",
    "faster than Eigen (the issue asked for 10x",
    "large problem 82.1% -> 87.9% of the floor (issue 5's 85% met)",
    "as requested in issue #12",
    "The first version of this lesson kept the scalars on the host.",
    "An earlier version of this lesson, the three-phase kernel, ran",
    "on the streaming path, default problem (this session's version).",
    "Lesson 01's naive kernel in the same session: 26.76 ms",
    "Latest run (fifth session of the day, after",
    "# Session 2026-11-22 (fifth): lesson 08's streaming path",
    "## Second session of 2026-11-22: lesson 8's streaming path",
    "The READMEs quote the first run of the day (commit 65428cd)",
    "//     (the story's version: the GPU idles while the host sees the value);",
    "the reviewer asked for a second table",
]

ALLOWED = [
    "each warp issues every instruction of every step: divergence costs issue slots, not correctness",
    "at the H200's issue rate (132 SMs x 4 schedulers x 1.98 GHz)",
    "a scheduler issues one instruction per clock; dual issue is gone since Volta",
    "smsp__issue_active.avg.pct_of_peak_sustained_active and smsp__inst_issued.sum",
    "thread 0 issues __threadfence() and takes a ticket from an atomic counter",
    "the SM can issue 4 FFMA warp instructions per clock",
    "The story (an article measured on a GTX 1080): NVIDIA's CG sample",
    "Bandwidth 03: extracting columns, the classic first version",
    "Record an Nsight Systems profiling session with nsys profile",
    "The issue is bank conflicts: 32 threads read one column.",
    "the first version of cuBLAS with tensor cores",
]


class PhraseTest(unittest.TestCase):
    def test_flagged(self):
        for line in FLAGGED:
            self.assertIsNotNone(process_text.find(line), line)

    def test_allowed(self):
        for line in ALLOWED:
            self.assertIsNone(process_text.find(line), line)


class ScanTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = process_text.main(["--root", self.root] + list(args))
        return rc, out.getvalue(), err.getvalue()

    def test_reports_file_and_line(self):
        self.write("lessons/cg/05_fusion/README.md", "# CG 05\n\nFine text.\nThe issue asked for 3x.\n")
        self.write("solutions/cg/06/mapped.cu", "// fine\n// fine\n// (the story's version: idle)\n")
        self.write("lessons/sgemm/01/naive.cu", "// the SM issues four FFMA per clock\n")
        rc, out, err = self.run_main()
        self.assertEqual(rc, 1)
        self.assertIn('lessons/cg/05_fusion/README.md:4: process text "The issue asked": The issue asked for 3x.', out)
        self.assertIn("solutions/cg/06/mapped.cu:3:", out)
        self.assertNotIn("naive.cu", out)
        self.assertIn("2 line(s) in 2 file(s)", err)

    def test_which_files_are_read(self):
        self.write("README.md", "this session\n")                      # every README.md
        self.write("scripts/testdata/README.md", "this session\n")
        self.write("results/logs/NVIDIA_H200-tour.log", "# Session 2026-11-22 (fifth)\n")  # logs included
        self.write("docs/architecture.md", "same session\n")
        self.write("scripts/notes.md", "this session\n")               # outside the trees: not read
        self.write("common/include/tut/x.hpp", "// this session\n")
        self.write("build-docs/docs/site/README.md", "this session\n")  # build folders: not read
        self.write(".git/README.md", "this session\n")
        rc, out, _ = self.run_main()
        self.assertEqual(rc, 1)
        found = sorted(line.split(":")[0] for line in out.splitlines())
        self.assertEqual(found, ["README.md", "docs/architecture.md", "results/logs/NVIDIA_H200-tour.log",
                                 "scripts/testdata/README.md"])

    def test_clean_tree_and_explicit_paths(self):
        self.write("lessons/a/README.md", "# fine\n")
        rc, out, _ = self.run_main()
        self.assertEqual(rc, 0)
        self.assertIn("no process text", out)
        bad = self.write("elsewhere/notes.txt", "as the issue asked\n")
        self.assertEqual(self.run_main(bad)[0], 1)
        self.assertEqual(self.run_main(os.path.join(self.root, "elsewhere"))[0], 1)


if __name__ == "__main__":
    unittest.main()
