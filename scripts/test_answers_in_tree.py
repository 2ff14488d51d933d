"""Tests of answers_in_tree.py on a small made-up tree."""
import os
import tempfile
import textwrap
import unittest

import answers_in_tree

EXERCISE = textwrap.dedent("""\
    #include "tut/track.hpp"
    __global__ void kernel(float* out, const float* in, int n) {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        // TODO(exercise): scale and shift
    }
    """)
SOLUTION = textwrap.dedent("""\
    #include "tut/track.hpp"
    __global__ void kernel(float* out, const float* in, int n) {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = scale_and_shift_by_the_answer(in[i], 2.5f, -1.0f);
        out[n + i] = another_distinctive_statement(in, n);
    }
    """)
LATER = textwrap.dedent("""\
    #include "tut/track.hpp"
    #include "tut/later.hpp"
    int main() {}
    """)


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


class AnswersInTreeTest(unittest.TestCase):
    def tree(self, header_text, later_text=""):
        root = tempfile.mkdtemp()
        write(root, "lessons/t/01_a/a.cu", EXERCISE)
        write(root, "solutions/t/01_a/a.cu", SOLUTION)
        write(root, "lessons/t/02_b/b.cu", LATER)
        write(root, "solutions/t/02_b/b.cu", LATER)
        write(root, "common/include/tut/track.hpp", header_text)
        write(root, "common/include/tut/later.hpp", later_text)
        write(root, "common/checks/t/check_01_a.cpp", '#include "tut/track.hpp"\n')
        return root

    def test_answer_beside_the_lessons(self):
        answer = ("    if (i < n) out[i] = scale_and_shift_by_the_answer(in[i], 2.5f, -1.0f);\n"
                  "    out[n + i] = another_distinctive_statement(in, n);\n")
        root = self.tree("inline int x;\n")
        write(root, "docs/notes.md", "Here is how:\n\n" + answer)
        found = answers_in_tree.findings(root, 30)
        self.assertEqual(len(found), 1)
        self.assertIn("docs/notes.md:3", found[0])
        # an experiment's source is not in a student's copy; a build folder is not either
        os.remove(os.path.join(root, "docs", "notes.md"))
        write(root, "docs/experiments/reproducer.cu", answer)
        write(root, "build-x/copy.cu", answer)
        self.assertEqual(answers_in_tree.findings(root, 30), [])

    def test_answer_in_the_lessons_readme(self):
        root = self.tree("inline int x;\n")
        write(root, "lessons/t/01_a/README.md",
              "The fix:\n\n    out[n + i] = another_distinctive_statement(in, n);\n"
              "    if (i < n) out[i] = scale_and_shift_by_the_answer(in[i], 2.5f, -1.0f);\n")
        found = answers_in_tree.findings(root, 30)
        self.assertEqual(len(found), 1)
        self.assertIn("lessons/t/01_a/README.md:3", found[0])

    def test_what_ships_beside_the_lessons(self):
        ships = answers_in_tree.ships_beside_lessons
        for rel in ("README.md", "docs/experiments/cg.md", ".github/workflows/classroom.yml", "scripts/grade.py"):
            self.assertTrue(ships(rel), rel)
        for rel in ("solutions/t/01_a/a.cu", "scratch/x.cu", "docs/experiments/reproducer.cu", "build/x.cu",
                    "lessons/t/01_a/a.cu", "common/include/tut/track.hpp"):
            self.assertFalse(ships(rel), rel)

    def test_clean_tree(self):
        self.assertEqual(answers_in_tree.findings(self.tree("inline int x;\n"), 30), [])

    def test_answer_in_an_included_header(self):
        header = ("inline void f(float* out, const float* in, int n, int i) {\n"
                  "    if (i < n) out[i] = scale_and_shift_by_the_answer(in[i], 2.5f, -1.0f);\n"
                  "    out[n + i] = another_distinctive_statement(in, n);\n}\n")
        found = answers_in_tree.findings(self.tree(header), 30)
        self.assertEqual(len(found), 1)
        self.assertIn("t/01_a: 2 line(s)", found[0])
        self.assertIn("track.hpp:2", found[0])

    def test_answer_in_a_header_only_a_later_lesson_includes(self):
        later = ("inline void g(float* out, const float* in, int n, int i) {\n"
                 "    if (i < n) out[i] = scale_and_shift_by_the_answer(in[i], 2.5f, -1.0f);\n"
                 "    out[n + i] = another_distinctive_statement(in, n);\n}\n")
        root = self.tree("inline int x;\n", later)
        self.assertEqual(answers_in_tree.findings(root, 30), [])
        # ...but it ships with an assignment on the later lesson
        shipped = answers_in_tree.shipped_headers(root, "t", "02_b")
        self.assertIn(os.path.join(root, "common/include/tut/later.hpp"), shipped)
        self.assertNotIn(os.path.join(root, "common/include/tut/later.hpp"),
                         answers_in_tree.shipped_headers(root, "t", "01_a"))

    def test_one_short_line_alone_is_not_a_finding(self):
        header = "inline void h() { out[n + i] = another_distinctive_statement(in, n); }\n"
        self.assertEqual(answers_in_tree.findings(self.tree(header), 30), [])


if __name__ == "__main__":
    unittest.main()
