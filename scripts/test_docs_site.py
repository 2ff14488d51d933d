"""Tests of scripts/docs_site.py on a small made-up tree (no Doxygen needed; the docs target
builds the real site with Doxygen, warnings as errors).

Run: python3 -m unittest discover -s scripts -p "test_*.py"
"""
import io
import os
import tempfile
import unittest
from contextlib import redirect_stdout

import docs_site

README = """# A tutorial

| track | lessons | yardstick |
|---|---|---|
| `sgemm` | naive -> tiles | cuBLAS FP32 |
| `cg` | sample -> persistent | Eigen |
"""


class DocsSiteTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.src = os.path.join(self.tmp.name, "src")
        self.out = os.path.join(self.tmp.name, "site")
        self.write("README.md", README)
        self.write("docs/architecture.md", "# Architecture {#architecture}\n")
        self.write("docs/experiments/cg.md", "# CG experiments\n")
        self.write("results/README.md", "# Results\n")
        self.write("docs/plots/sgemm.svg", "<svg/>")
        self.write("common/include/tut/sgemm.hpp", "// helpers\n")
        self.write("lessons/sgemm/01_naive/README.md", "# SGEMM 01: the naive kernel {#sgemm_01_naive}\n\nBody.\n")
        self.write("lessons/sgemm/01_naive/naive.cu", "// exercise\n")
        self.write("solutions/sgemm/01_naive/naive.cu", "// solution\n")
        self.write("lessons/sgemm/05_shared_tiling/README.md", "# SGEMM 05: shared-memory tiling\n\nNo id.\n")
        self.write("lessons/sgemm/05_shared_tiling/shared_tiling.cu", "//\n")
        self.write("solutions/sgemm/05_shared_tiling/shared_tiling.cu", "//\n")
        self.write("lessons/cg/01_sample/README.md", "Text before any heading.\n")
        self.write("lessons/cg/01_sample/sample.cu", "//\n")
        self.write("lessons/bandwidth/01_transfers/README.md", "# Bandwidth 01: transfers {#bandwidth_01}\n")
        self.write("lessons/zeta/01_x/README.md", "# Zeta 1: \"quoted\" title\n")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text):
        path = os.path.join(self.src, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def read(self, rel):
        with open(os.path.join(self.out, rel)) as f:
            return f.read()

    def build(self):
        with redirect_stdout(io.StringIO()):
            self.assertEqual(docs_site.main(["--src", self.src, "--out", self.out]), 0)
        return [os.path.relpath(p, self.out) for p in docs_site.build(self.src, self.out)]

    def test_inputs_in_the_order_of_the_course(self):
        inputs = self.build()
        pages = [p for p in inputs if p.endswith(".md")]
        self.assertEqual(pages, [
            "README.md", "course.md",
            "tracks/sgemm.md", "tracks/bandwidth.md", "tracks/cg.md", "tracks/zeta.md",  # course order, then others
            "lessons/sgemm/01_naive/README.md", "lessons/sgemm/05_shared_tiling/README.md",
            "lessons/bandwidth/01_transfers/README.md", "lessons/cg/01_sample/README.md", "lessons/zeta/01_x/README.md",
            "docs/architecture.md", "docs/experiments/cg.md", "results/README.md"])
        self.assertIn("common/include/tut/sgemm.hpp", inputs)
        self.assertIn("lessons/sgemm/01_naive/naive.cu", inputs)
        self.assertIn("solutions/sgemm/01_naive/naive.cu", inputs)
        doxy = self.read("inputs.doxy")
        self.assertIn('INPUT = "%s"' % os.path.join(self.out, "README.md"), doxy)
        self.assertEqual(self.read("docs/architecture.md"), "# Architecture {#architecture}\n")  # copied as is

    def test_course_and_track_pages(self):
        self.build()
        course = self.read("course.md")
        self.assertTrue(course.startswith("# The course {#course}"))
        self.assertLess(course.index("@subpage track_sgemm"), course.index("@subpage track_bandwidth"))
        self.assertIn("@subpage track_sgemm \u2014 naive -> tiles", course)
        sgemm = self.read("tracks/sgemm.md")
        self.assertTrue(sgemm.startswith("# SGEMM {#track_sgemm}"))  # the title the lessons use
        self.assertIn("**Yardstick:** cuBLAS FP32.", sgemm)
        self.assertIn('1. @subpage sgemm_01_naive \u2014 exercise @ref lessons/sgemm/01_naive/naive.cu "naive.cu"; '
                      'solution @ref solutions/sgemm/01_naive/naive.cu "naive.cu"', sgemm)
        self.assertIn("2. @subpage sgemm_05_shared_tiling", sgemm)
        self.assertIn("![sgemm: the best variant of each lesson](sgemm.svg)", sgemm)
        self.assertNotIn(".svg", self.read("tracks/cg.md"))  # no plot drawn yet
        self.assertIn('@ref track_sgemm "\u2190 SGEMM"', self.read("tracks/bandwidth.md"))

    def test_lesson_pages_get_links_and_keep_their_text(self):
        self.build()
        naive = self.read("lessons/sgemm/01_naive/README.md")
        first, nav = naive.splitlines()[0], naive.splitlines()[2]
        self.assertEqual(first, "# SGEMM 01: the naive kernel {#sgemm_01_naive}")
        self.assertIn('@ref track_sgemm "\u2190 SGEMM track"', nav)
        self.assertIn('@ref track_sgemm "SGEMM, lesson 1 of 2"', nav)
        self.assertIn('@ref sgemm_05_shared_tiling "SGEMM 05: shared-memory tiling \u2192"', nav)
        self.assertIn('**Code:** exercise @ref lessons/sgemm/01_naive/naive.cu "lessons/sgemm/01_naive/naive.cu"; '
                      'solution @ref solutions/sgemm/01_naive/naive.cu', naive)
        self.assertIn("\nBody.\n", naive)
        self.assertTrue(naive.rstrip().endswith(nav))  # the same links at the bottom
        tiling = self.read("lessons/sgemm/05_shared_tiling/README.md")
        self.assertTrue(tiling.startswith("# SGEMM 05: shared-memory tiling {#sgemm_05_shared_tiling}\n"))
        self.assertIn('@ref track_bandwidth "next track: Bandwidth \u2192"', tiling)
        sample = self.read("lessons/cg/01_sample/README.md")
        self.assertTrue(sample.startswith("# cg 01_sample {#cg_01_sample}\n"))  # no heading: one is added
        self.assertIn("Text before any heading.", sample)
        self.assertNotIn("solution @ref", sample)  # no solution file
        zeta = self.read("lessons/zeta/01_x/README.md")
        self.assertIn("\"the course \u2192\"", zeta)  # the last lesson of the last track
        self.assertIn("\u2190 Zeta track", zeta)
        zeta_track = self.read("tracks/zeta.md")
        self.assertIn('@ref track_cg "\u2190 cg"', zeta_track)  # a track without titled lessons keeps its name
        self.assertIn('@ref zeta_01_x "Zeta 1: \'quoted\' title \u2192"', zeta_track)  # quotes made safe

    def test_main_page_links_the_course(self):
        self.build()
        main = self.read("README.md")
        self.assertTrue(main.startswith("# A tutorial\n\n<span class=\"tut-nav\">@ref course \"The course\""))
        self.assertIn("| `sgemm` | naive -> tiles | cuBLAS FP32 |", main)

    def test_links_to_pages_outside_the_site_become_text(self):
        self.write("README.md", README + "\nSee [the autograder](autograder/README.md), [the results](results/README.md) "
                   "and [a site](https://example.org/x.md).\n\n```\n[kept](nowhere.md)\n```\n")
        self.write("lessons/sgemm/01_naive/README.md", "# SGEMM 01: naive {#sgemm_01_naive}\n\n"
                   "[next](../05_shared_tiling/README.md), [gone](../04_gone/README.md), "
                   "[top](../../../README.md), [arch](../../../docs/architecture.md#layout)\n")
        self.build()
        main = self.read("README.md")
        self.assertIn("See the autograder (`autograder/README.md`), [the results](results/README.md) "
                      "and [a site](https://example.org/x.md).", main)
        self.assertIn("[kept](nowhere.md)", main)  # code is left alone
        naive = self.read("lessons/sgemm/01_naive/README.md")
        # links that reach a page are written from the site's root, where Doxygen runs
        self.assertIn("[next](lessons/sgemm/05_shared_tiling/README.md), gone (`../04_gone/README.md`), "
                      "[top](README.md), [arch](docs/architecture.md#layout)", naive)

    def test_idempotent(self):
        self.build()
        before = {p: self.read(p) for p in ("README.md", "course.md", "tracks/sgemm.md", "inputs.doxy")}
        mtime = os.path.getmtime(os.path.join(self.out, "course.md"))
        self.build()
        self.assertEqual(before, {p: self.read(p) for p in before})
        self.assertEqual(mtime, os.path.getmtime(os.path.join(self.out, "course.md")))  # not rewritten



class SiteCss(unittest.TestCase):
    def test_wide_tables_scroll_sideways(self):
        with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "site.css")) as f:
            css = f.read()
        rule = css[css.index("table.markdownTable {"):]
        rule = rule[:rule.index("}")]
        self.assertIn("display: block", rule)
        self.assertIn("overflow-x: auto", rule)


if __name__ == "__main__":
    unittest.main()
