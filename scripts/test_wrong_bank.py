"""CPU tests of scripts/wrong_bank.py (the bank of known-wrong submissions: its diffs and
how they apply, its headers, lessons and harness), on small made-up trees, and of the
repository's bank."""
import contextlib
import io
import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wrong_bank  # noqa: E402

DIVIDER = "// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ===="
EXERCISE = f"// demo/01_first: what it adds\n__global__ void k() {{ /* TODO(exercise) */ }}\n{DIVIDER}\nint main() {{}}\n"
SOLUTION = EXERCISE.replace("/* TODO(exercise) */", "the answer();")


def header(lesson="demo/01_first", caught="matches the CPU reference", kind="edges"):
    return f"// wrong: {lesson}: forgot the tail\n// caught by: {caught}\n// kind: {kind}\n"


class Tree:
    """A repository root with lessons demo/01_first and demo/02_second and a bank."""

    def __init__(self, d):
        self.root = Path(d)
        for lesson in ("01_first", "02_second"):
            for tree, text in (("lessons", EXERCISE), ("solutions", SOLUTION)):
                folder = self.root / tree / "demo" / lesson
                folder.mkdir(parents=True)
                (folder / "k.cu").write_text(text)

    def bank(self, rel, text, base="solution"):
        """Writes the submission `text` (header block, then the file) as the bank file `rel`
        (.diff: against `base` of demo/01_first; .cu: as it is)."""
        path = self.root / wrong_bank.BANK / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".diff":
            header, body = wrong_bank.split_submission(text, "demo/01_first")
            name = f"{wrong_bank.BASES[base]}/demo/01_first/k.cu"
            text = header + f"// base: {base}\n" + "".join(wrong_bank.unified_diff((self.root / name).read_text(),
                                                                                   body, name))
        path.write_text(text)
        return path


class Headers(unittest.TestCase):
    def test_good_header(self):
        fields, problems = wrong_bank.parse_header(header() + EXERCISE)
        self.assertEqual(problems, [])
        self.assertEqual(fields, {"lesson": "demo/01_first", "mistake": "forgot the tail",
                                  "caught_by": "matches the CPU reference", "kind": "edges"})

    def test_bad_headers(self):
        cases = {"": 3, "// wrong: demo/01_first\n// caught by: x\n// kind: race\n": 1,
                 header(kind="typo"): 1, header(caught=""): 1, "// kind: race\n" + header(): 3}
        for text, count in cases.items():
            _, problems = wrong_bank.parse_header(text)
            self.assertEqual(len(problems), count, (text, problems))


class Check(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.tree = Tree(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def problems(self, require_two=False):
        return wrong_bank.check(self.tree.root, require_two)

    def test_empty_bank_is_fine_unless_two_are_required(self):
        problems, notes = self.problems()
        self.assertEqual(problems, [])
        self.assertIn("2 lesson(s) with fewer than two known-wrong submissions: demo/01_first (0), demo/02_second (0)",
                      notes[0])
        problems, _ = self.problems(require_two=True)
        self.assertEqual(len(problems), 1)

    def test_good_files(self):
        self.tree.bank("demo/01_first/a.diff", header() + EXERCISE.replace("TODO(exercise)", "wrong"))
        self.tree.bank("demo/01_first/b.diff", header() + SOLUTION.replace("answer", "wrong"), base="exercise")
        problems, notes = self.problems(require_two=True)
        self.assertEqual(len(problems), 1)  # 02_second has none
        self.assertIn("demo/02_second (0)", problems[0])
        self.assertIn("2 file(s) for 1 lesson(s) of 2", notes[-1])

    def test_each_kind_of_problem(self):
        self.tree.bank("demo/01_first/other_lesson.diff", header("demo/02_second") + EXERCISE)
        self.tree.bank("demo/01_first/no_divider.diff", header() + EXERCISE.replace(DIVIDER, "// harness"))
        self.tree.bank("demo/01_first/harness.diff", header() + EXERCISE.replace("int main() {}", "int main() { 1; }"))
        self.tree.bank("demo/01_first/full_copy.cu", header() + EXERCISE)
        self.tree.bank("demo/09_none/x.diff", header("demo/09_none") + EXERCISE)
        self.tree.bank("demo/stray.diff", header() + EXERCISE)
        drift = self.tree.bank("demo/01_first/drift.diff", header() + EXERCISE)
        drift.write_text(drift.read_text().replace(" int main() {}", " int main() { }"))
        problems, _ = self.problems()
        text = "\n".join(problems)
        self.assertIn("other_lesson.diff: its first line names demo/02_second", text)
        self.assertIn("no_divider.diff: the exercise's divider line is missing", text)
        self.assertIn("harness.diff: the harness below the divider differs", text)
        self.assertIn("full_copy.cu: a full submission: the bank holds .diff files", text)
        self.assertIn("x.diff: there is no lesson demo/09_none", text)
        self.assertIn("demo/stray.diff: not in a <track>/<lesson>/ folder", text)
        self.assertIn("drift.diff: hunk 1 '@@ -1,4 +1,4 @@' (line 7), line 12: solutions/demo/01_first/k.cu line 4 "
                      "should read 'int main() { }\\n', but is 'int main() {}\\n'", text)
        self.assertEqual(len(problems), 7)

    def test_main_exit_codes_and_the_environment_switch(self):
        argv = ["--root", str(self.tree.root)]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(wrong_bank.main(argv), 0)
            self.assertEqual(wrong_bank.main(argv + ["--require-two"]), 1)
            saved = os.environ.get("TUT_WRONG_BANK_REQUIRE_TWO")
            os.environ["TUT_WRONG_BANK_REQUIRE_TWO"] = "1"
            try:
                self.assertEqual(wrong_bank.main(argv), 1)
            finally:
                if saved is None:
                    del os.environ["TUT_WRONG_BANK_REQUIRE_TWO"]
                else:
                    os.environ["TUT_WRONG_BANK_REQUIRE_TWO"] = saved


class Diffs(unittest.TestCase):
    """How a bank file applies to its base, and how a full submission becomes one."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.tree = Tree(self.tmp.name)
        self.root = self.tree.root

    def tearDown(self):
        self.tmp.cleanup()

    def diff_file(self, text, rel="demo/01_first/m.diff"):
        path = self.root / wrong_bank.BANK / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def test_round_trip_of_both_bases_and_the_smaller_diff(self):
        for body, base in ((SOLUTION.replace("answer", "wrong"), "solution"),
                           (EXERCISE + "// one more line\n", "exercise"),
                           (SOLUTION, "solution"), (SOLUTION + "// no newline at the end", "solution"),
                           ("#include <cstdio>\n" + SOLUTION, "solution"), ("", "solution")):
            text = header() + "// why it is wrong\n" + body
            lesson, diff = wrong_bank.to_diff(text, self.root)
            self.assertEqual(lesson, "demo/01_first")
            self.assertIn(f"// why it is wrong\n// base: {base}\n--- a/{wrong_bank.BASES[base]}/demo/01_first/k.cu\n",
                          diff)
            self.assertEqual(wrong_bank.materialize(self.diff_file(diff), self.root), text, body)

    def test_strict_application(self):
        _, good = wrong_bank.to_diff(header() + SOLUTION.replace("answer", "wrong"), self.root)
        cases = {
            "no '// base: solution' or '// base: exercise' line": good.replace("// base: solution\n", ""),
            "line 4: the lines above '// base:' must be // comment lines": good.replace("// base:", "x\n// base:"),
            "base 'neither' is not one of": good.replace("// base: solution", "// base: neither"),
            "the diff is of lessons/demo/01_first/k.cu, but its base (solution) is solutions/demo/01_first/k.cu":
                good.replace("--- a/solutions", "--- a/lessons"),
            "hunk 1 '@@ -1,4 +1,4 @@' (line 7): the file ends 1 base and 1 result line(s) short":
                good.rsplit("\n", 2)[0] + "\n",
            "line 9: a hunk's line starts with ' ', '-' or '+'": good.replace("\n-__global__", "\n*__global__"),
            "hunk 1 '@@ -9,4 +9,4 @@' (line 7): starts at line 9 of solutions/demo/01_first/k.cu, which has 4 lines":
                good.replace("@@ -1,4 +1,4 @@", "@@ -9,4 +9,4 @@"),
            "hunk 1 '@@ -1,4 +1,4 @@' (line 7), line 9: solutions/demo/01_first/k.cu line 2 should read "
            "'__global__ void k() { the wrong(); }\\n', but is '__global__ void k() { the answer(); }\\n'":
                good.replace("-__global__ void k() { the answer", "-__global__ void k() { the wrong"),
        }
        for message, text in cases.items():
            with self.assertRaises(wrong_bank.DiffError, msg=message) as caught:
                wrong_bank.materialize(self.diff_file(text), self.root)
            self.assertIn("common/checks/wrong/demo/01_first/m.diff: ", str(caught.exception))
            self.assertIn(message, str(caught.exception))

    def test_the_command_line(self):
        full = self.root / "full" / "anywhere.cu"
        full.parent.mkdir()
        text = header() + SOLUTION.replace("answer", "wrong")
        full.write_text(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(wrong_bank.main(["--root", str(self.root), "--to-diff", str(full)]), 0)
            made = self.root / "made"
            self.assertEqual(wrong_bank.main(["--root", str(self.root), "--materialize", str(made)]), 0)
            self.assertEqual((made / "demo" / "01_first" / "anywhere.cu").read_text(), text)
            (self.root / "solutions" / "demo" / "01_first" / "k.cu").write_text(SOLUTION.replace("the", "an"))
            self.assertEqual(wrong_bank.main(["--root", str(self.root), "--materialize", str(made)]), 1)
            self.assertEqual(wrong_bank.main(["--root", str(self.root), "--materialize", str(made), "nothing.diff"]), 1)
        self.assertIn("common/checks/wrong/demo/01_first/anywhere.diff (", out.getvalue())


class TheBank(unittest.TestCase):
    """The repository's own bank."""

    def test_every_submission_keeps_its_exercises_harness(self):
        by_lesson, stray = wrong_bank.bank_files(wrong_bank.REPO)
        self.assertEqual(stray, [])
        lessons = wrong_bank.exercises(wrong_bank.REPO)
        count = 0
        for lesson, files in by_lesson.items():
            divider, harness = wrong_bank.divider_and_harness(lessons[lesson].read_text())
            for path in files:
                text = wrong_bank.materialize(path)
                self.assertTrue(text.startswith(f"// wrong: {lesson}: "), path)
                self.assertEqual(wrong_bank.divider_and_harness(text), (divider, harness), path)
                count += 1
        self.assertGreaterEqual(count, 2 * len(lessons))


if __name__ == "__main__":
    unittest.main()
