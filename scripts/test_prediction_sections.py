"""Tests of prediction_sections.py on small made-up lesson READMEs."""
import contextlib
import io
import os
import tempfile
import textwrap
import unittest

import prediction_sections as ps

GOOD = textwrap.dedent("""\
    # T 02: a lesson

    **Goal.** Copy faster.

    ## What changed

    Every thread now moves 16 bytes.

    ## Prediction

    Write down the share of `cudaMemcpy` you expect, with its reason. The H100's DRAM peak
    is 3,352 GB/s; at N = 4096 the kernel moves 128 MiB, with 132 SMs x 4 schedulers and
    blocks of 16 x 16 threads (`kTile = 16`, `0.5 * x`). Lesson 01 reached about 60% of
    the copy with 4-byte loads.

    ```sh
    ./copy --n 4096   # expect about 95% here: code is not prose
    ```

    ## Measured

    <!-- measured:begin -->
    | variant | size | H100 |
    |---|---|---:|
    | copy | 4096 | 2,900 GB/s |
    <!-- measured:end -->

    **Did the prediction hold?** The model said about 95%, and it held.

    ## Exercise

    Write the kernel.
    """)


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


class PredictionSectionsTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()

    def check(self, text, lesson="t/02_copy"):
        path = write(self.root, "lessons/%s/README.md" % lesson, text)
        return ps.check_readme(path, self.root)

    def with_prediction(self, body, lesson="t/02_copy"):
        """`GOOD` with its prediction section's text replaced by `body`."""
        start = GOOD.index("Write down")
        end = GOOD.index("## Measured")
        return self.check(GOOD[:start] + textwrap.dedent(body) + "\n" + GOOD[end:], lesson)

    # -- the shape --------------------------------------------------------------------

    def test_good_readme_passes(self):
        self.assertEqual(self.check(GOOD), [])

    def test_other_heading_and_hold_forms_pass(self):
        text = GOOD.replace("## Prediction", "## Predict first")
        text = text.replace("**Did the prediction hold?** The model", "### Did the prediction hold?\n\nThe model")
        self.assertEqual(self.check(text), [])
        self.assertEqual(self.check(GOOD.replace("## Prediction", "### Before you run")), [])
        self.assertEqual(self.check(GOOD.replace("**Did the prediction hold?**", "**Did it hold?**")), [])
        text = GOOD.replace("**Did the prediction hold?**", "## Did the prediction hold?\n")
        self.assertEqual(self.check(text), [])

    def test_no_prediction_section_fails(self):
        found = self.check(GOOD.replace("## Prediction", "## Thoughts"))
        self.assertEqual(len(found), 1)
        self.assertIn("no prediction section", found[0])
        self.assertTrue(found[0].startswith("lessons/t/02_copy/README.md:1:"))

    def test_two_prediction_sections_fail(self):
        text = GOOD.replace("## Measured", "## Predict first\n\nAgain.\n\n## Measured")
        found = self.check(text)
        self.assertEqual(len(found), 1)
        self.assertIn("a second prediction section", found[0])

    def test_no_hold_after_the_table_fails(self):
        found = self.check(GOOD.replace("**Did the prediction hold?** ", ""))
        self.assertEqual(len(found), 1)
        self.assertIn("no 'Did the prediction hold?'", found[0])
        # before the table it does not count, and is itself a finding
        text = GOOD.replace("**Did the prediction hold?** ", "").replace(
            "## Measured\n", "## Measured\n\n**Did it hold?** Early.\n")
        found = self.check(text)
        self.assertEqual(len(found), 2)
        self.assertTrue(any("before the measured table" in f for f in found))

    def test_hold_inside_the_generated_block_does_not_count(self):
        text = GOOD.replace("**Did the prediction hold?** ", "").replace(
            "<!-- measured:end -->", "**Did it hold?** inside\n<!-- measured:end -->")
        found = self.check(text)
        self.assertTrue(any("no 'Did the prediction hold?'" in f for f in found))

    def test_two_holds_fail(self):
        text = GOOD.replace("## Exercise", "**Did it hold?** Again.\n\n## Exercise")
        found = self.check(text)
        self.assertEqual(len(found), 1)
        self.assertIn("a second 'Did the prediction hold?'", found[0])

    def test_several_measured_blocks(self):
        second = "\n<!-- measured:begin -->\n**Did it hold?** generated\n<!-- measured:end -->\n"
        # a hold between two blocks is not after the measured tables
        text = GOOD.replace("## Exercise", second + "\n## Exercise")
        found = self.check(text)
        self.assertTrue(any("no 'Did the prediction hold?'" in f for f in found), found)
        text = GOOD.replace("**Did the prediction hold?**", second + "\n**Did the prediction hold?**")
        self.assertEqual(self.check(text), [])

    def test_no_measured_table_fails(self):
        text = GOOD.replace("<!-- measured:begin -->\n", "").replace("<!-- measured:end -->\n", "")
        found = self.check(text)
        self.assertEqual(len(found), 1)
        self.assertIn("no measured table", found[0])

    def test_prediction_after_the_table_fails(self):
        text = GOOD.replace("## Prediction\n", "## Notes\n")
        text = text.replace("## Exercise", "## Prediction\n\nLate.\n\n## Exercise")
        found = self.check(text)
        self.assertTrue(any("comes after the measured table" in f for f in found))

    # -- what the prediction section may say --------------------------------------------

    def assert_states_result(self, body, rule, line=None, lesson="t/02_copy"):
        found = self.with_prediction(body, lesson)
        self.assertTrue(found, "expected a finding for: %r" % body)
        self.assertTrue(any(rule in f for f in found), found)
        if line is not None:
            self.assertIn("README.md:%d:" % line, found[0])

    def test_answers_fail(self):
        self.assert_states_result("Write down a number. Expect about 95% of cuBLAS.", "a percentage")
        self.assert_states_result("Write down a number. The model says 2.4x.", "a speedup")
        self.assert_states_result("Write down a number. It takes \u2248 3.1 \u00b5s.",
                                  "an approximate or expected figure")
        self.assert_states_result("Write down a number. Expect 80 GB/s.", "an approximate or expected figure")
        self.assert_states_result("Write down a number. At most 1 / (4 x 2) = 12.5 of it.", "a computed result")
        self.assert_states_result("Write down a number. A copy takes 1.1 to 1.3 ms.", "a range of results")
        self.assert_states_result("Write down a number. It runs three times faster.", "a speedup")
        self.assert_states_result("Write down a number. Within a few percent of the copy.", "a percentage")
        self.assert_states_result("Write down a number. The naive kernel lands at about a tenth of it.",
                                  "an approximate or expected figure")
        self.assert_states_result("Write down a number. Ours: slower.", "announces the answer")
        self.assert_states_result("Write down a number. The model's number: the same as before.",
                                  "announces the answer")

    def test_findings_name_the_line(self):
        # the prediction section's text starts on line 11 of GOOD
        self.assert_states_result("Write down a number.\nThe copy reaches\nabout 90% of the link.", "a percentage",
                                  line=13)

    def test_inputs_pass(self):
        bodies = [
            "Write down a number. The DRAM peak is 3,352 GB/s and PCIe 5.0 x16 carries 63.0 GB/s.",
            "Write down a number. At N = 4096 and kMulti = 8 the kernel reads 64 MiB, 2 x kMulti sectors.",
            "Write down a number. A 4x4 thread does 128 FFMAs per tile; 8x8 does 512.",
            "Write down a number. The TF32 rate is 495 TFLOP/s, 2,048 flops per SM and clock.",
            "Write down a number. At 8192 the transpose moves four times the bytes.",
            "Write down a number. Lesson 10's warp 32x64 reached about 60% of cuBLAS.",
            "Write down a number. cuBLAS runs at about 76% of peak (lesson 08), and the tile is new.",
            "Write down a number. Reads in flight, against about 2.4 MB needed.",
            "Write down a number. Count with `ratio = 0.83 * 0.89 = 74%` in mind.",
            "Write down a number.\n\n```\nexpect 95% and 2.4x\n```",
            "Write down a number, e.g. the share of `cudaMemcpy`. What changes?",
        ]
        for body in bodies:
            self.assertEqual(self.with_prediction(body), [], body)

    def test_table_rows_are_checked(self):
        body = ("Write down a number per row.\n\n| variant | in flight | predicted |\n|---|---|---|\n"
                "| float | 1.1 MB | about 50% |\n")
        self.assert_states_result(body, "a percentage")
        body = "Write down a number per row.\n\n| variant | in flight |\n|---|---|\n| float | 1.1 MB |\n"
        self.assertEqual(self.with_prediction(body), [])

    def test_an_earlier_lesson_does_not_excuse_a_comparison_or_the_lesson_itself(self):
        self.assert_states_result("Write down a number. About 10% faster than lesson 01.", "a percentage")
        self.assert_states_result("Write down a number. Lesson 01 reached 60%, so expect 90%.", "a percentage")
        self.assert_states_result("Write down a number. Lesson 02 reaches 95% of the copy.", "a percentage",
                                  lesson="t/02_copy")
        self.assertEqual(self.with_prediction("Write down a number. Lesson 02 reaches 95% of the copy.",
                                              lesson="t/03_gather"), [])

    def test_the_section_ends_at_the_next_heading(self):
        text = GOOD.replace("## Measured", "## Notes\n\nAbout 95%, say the notes.\n\n## Measured")
        self.assertEqual(self.check(text), [])
        text = GOOD.replace("## Measured", "### A subsection\n\nAbout 95%, says the subsection.\n\n## Measured")
        self.assertTrue(any("a percentage" in f for f in self.check(text)))

    # -- the command line ---------------------------------------------------------------

    def run_main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = ps.main(["--root", self.root] + list(args))
        return code, out.getvalue(), err.getvalue()

    def test_main_reads_the_tracks_it_is_given(self):
        write(self.root, "lessons/a/05_x/README.md", GOOD)
        write(self.root, "lessons/b/05_y/README.md", GOOD.replace("## Prediction", "## Thoughts"))
        write(self.root, "lessons/b/README.md", "# the track's own page: not a lesson\n")
        code, out, _ = self.run_main()
        self.assertEqual(code, 1)
        self.assertIn("lessons/b/05_y/README.md:1: no prediction section", out)
        self.assertNotIn("lessons/a/", out)
        code, out, _ = self.run_main("--tracks", "a")
        self.assertEqual(code, 0)
        self.assertIn("1 README(s)", out)
        code, _, err = self.run_main("--tracks", "a,nope")
        self.assertEqual(code, 2)
        self.assertIn("no track 'nope'", err)

    def test_main_takes_paths(self):
        good = write(self.root, "lessons/a/05_x/README.md", GOOD)
        bad = write(self.root, "lessons/a/06_y/README.md", GOOD.replace("## Prediction", "## Thoughts"))
        self.assertEqual(self.run_main(good)[0], 0)
        self.assertEqual(self.run_main(good, bad)[0], 1)


if __name__ == "__main__":
    unittest.main()
