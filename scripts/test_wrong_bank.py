"""CPU tests of scripts/wrong_bank.py (the headers, lessons and harness of the bank of
known-wrong submissions), on small made-up trees."""
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


def header(lesson="demo/01_first", caught="matches the CPU reference", kind="edges"):
    return f"// wrong: {lesson}: forgot the tail\n// caught by: {caught}\n// kind: {kind}\n"


class Tree:
    """A repository root with lessons demo/01_first and demo/02_second and a bank."""

    def __init__(self, d):
        self.root = Path(d)
        for lesson in ("01_first", "02_second"):
            folder = self.root / "lessons" / "demo" / lesson
            folder.mkdir(parents=True)
            (folder / "k.cu").write_text(EXERCISE)

    def bank(self, rel, text):
        path = self.root / "common" / "checks" / "wrong" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
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
        for name in ("a.cu", "b.cu"):
            self.tree.bank(f"demo/01_first/{name}", header() + EXERCISE.replace("TODO(exercise)", "wrong"))
        problems, notes = self.problems(require_two=True)
        self.assertEqual(len(problems), 1)  # 02_second has none
        self.assertIn("demo/02_second (0)", problems[0])
        self.assertIn("2 file(s) for 1 lesson(s) of 2", notes[-1])

    def test_each_kind_of_problem(self):
        self.tree.bank("demo/01_first/other_lesson.cu", header("demo/02_second") + EXERCISE)
        self.tree.bank("demo/01_first/no_divider.cu", header() + EXERCISE.replace(DIVIDER, "// harness"))
        self.tree.bank("demo/01_first/harness.cu", header() + EXERCISE.replace("int main() {}", "int main() { 1; }"))
        self.tree.bank("demo/09_none/x.cu", header("demo/09_none") + EXERCISE)
        self.tree.bank("demo/stray.cu", header() + EXERCISE)
        problems, _ = self.problems()
        text = "\n".join(problems)
        self.assertIn("other_lesson.cu: its first line names demo/02_second", text)
        self.assertIn("no_divider.cu: the exercise's divider line is missing", text)
        self.assertIn("harness.cu: the harness below the divider differs", text)
        self.assertIn("x.cu: there is no lesson demo/09_none", text)
        self.assertIn("demo/stray.cu: not in a <track>/<lesson>/ folder", text)
        self.assertEqual(len(problems), 5)

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


if __name__ == "__main__":
    unittest.main()
