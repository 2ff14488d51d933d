"""Tests of lesson_shape.py on a small made-up tree."""
import os
import tempfile
import textwrap
import unittest

import lesson_shape

GOOD = textwrap.dedent("""\
    // t/01_a: one thread per element
    #include "tut/bench.hpp"
    namespace {
    __global__ void k() {}
    // TODO(exercise): write k
    }  // namespace

    {divider}

    namespace lesson {
    std::vector<tut::Variant<void()>> variants() { return {{"k", run_k}}; }
    }  // namespace lesson

    int main(int argc, char** argv) {
        for (const auto& v : variants) {
            if (!bench.runs(v)) continue;
            const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(v.run); });
            const tut::Timing timing = bench.time(v.name, [&] { problem.run(v.run); });
        }
        return bench.exit_code();
    }
    """).replace("{divider}", lesson_shape.DIVIDER)
BENCH = "template <class Run>\nstruct Variant {\n};\n"


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


class LessonShapeTest(unittest.TestCase):
    def tree(self, lesson_text, header_text=""):
        root = tempfile.mkdtemp()
        write(root, "lessons/t/01_a/a.cu", lesson_text)
        write(root, "solutions/t/01_a/a.cu", GOOD)
        write(root, "common/include/tut/bench.hpp", BENCH)
        write(root, "common/include/tut/track.hpp", header_text)
        return root

    def test_good_lesson(self):
        self.assertEqual(lesson_shape.findings(self.tree(GOOD)), [])

    def test_another_variant_shape_fails(self):
        found = lesson_shape.findings(self.tree(GOOD, "struct CopyVariant {\n};\n"))
        self.assertEqual(len(found), 1)
        self.assertIn("CopyVariant", found[0])
        found = lesson_shape.findings(self.tree(GOOD.replace("namespace {", "namespace {\nstruct MyVariant {};")))
        self.assertTrue(any("MyVariant" in f for f in found))

    def test_a_driver_entry_point_fails(self):
        found = lesson_shape.findings(self.tree(GOOD, "inline int copy_main(int argc, char** argv) { return 0; }\n"))
        self.assertTrue(any("copy_main" in f for f in found))

    def test_a_main_that_hides_its_loop_fails(self):
        hidden = GOOD[:GOOD.index("int main")] + "int main(int argc, char** argv) {\n    return run_all(argc, argv);\n}\n"
        found = lesson_shape.findings(self.tree(hidden))
        self.assertTrue(any("must show its loop" in f for f in found))

    def test_first_line_divider_and_todo(self):
        found = lesson_shape.findings(self.tree(GOOD.replace("// t/01_a:", "// Lesson 1:")))
        self.assertTrue(any("first line" in f for f in found))
        found = lesson_shape.findings(self.tree(GOOD.replace(lesson_shape.DIVIDER, "// ----")))
        self.assertTrue(any("divider" in f for f in found))
        late_todo = GOOD.replace("int main(int argc, char** argv) {", "// TODO(exercise): more\nint main(int argc, char** argv) {")
        found = lesson_shape.findings(self.tree(late_todo))
        self.assertTrue(any("below the divider" in f for f in found))


if __name__ == "__main__":
    unittest.main()
