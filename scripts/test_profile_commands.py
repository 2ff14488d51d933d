"""CPU tests of scripts/profile_commands.py: finding the READMEs' profiler commands,
pointing them at a build folder, and judging their output."""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import profile_commands as pc  # noqa: E402

README = """# A lesson

```sh
ncu --clock-control none --metrics gpu__time_duration.sum,\\
dram__throughput.avg.pct_of_peak_sustained_elapsed \\
    build/solutions/reduction/02_x/x --profile
ncu -i saved.ncu-rep --page details
```

- In a list, indented:

    ncu -k regex:reduce_ -c 1 --metrics smsp__inst_executed.sum \\
        ./x --profile --type float

Text that mentions ncu in passing, and `ncu --set full` in backticks.
compute-sanitizer --tool racecheck ./x --n 33
"""


class Find(unittest.TestCase):
    def test_commands_with_continuations_indentation_and_tools(self):
        found = pc.commands_in(README, "reduction", "02_x")
        self.assertEqual([c.tool for c in found], ["ncu", "ncu", "compute-sanitizer"])
        self.assertEqual(found[0].text, "ncu --clock-control none --metrics gpu__time_duration.sum,\\\n"
                                        "dram__throughput.avg.pct_of_peak_sustained_elapsed \\\n"
                                        "    build/solutions/reduction/02_x/x --profile")
        # the indented block's continuation keeps its own indentation beyond the first line's
        self.assertEqual(found[1].text, "ncu -k regex:reduce_ -c 1 --metrics smsp__inst_executed.sum \\\n"
                                        "    ./x --profile --type float")
        self.assertFalse(found[0].runs_in_lesson_dir())
        self.assertTrue(found[1].runs_in_lesson_dir())
        self.assertTrue(found[2].runs_in_lesson_dir())

    def test_every_readme_command_names_a_known_tool(self):
        for c in pc.all_commands():
            self.assertIn(c.tool, pc.TOOLS, c.text)


class BuildDir(unittest.TestCase):
    def test_build_paths_move_and_other_words_do_not(self):
        text = "ncu -o rebuild/x build/solutions/a/b/c --json build/x.jsonl"
        self.assertEqual(pc.with_build_dir(text, "/tmp/bg"),
                         "ncu -o rebuild/x /tmp/bg/solutions/a/b/c --json /tmp/bg/x.jsonl")


class Figures(unittest.TestCase):
    def test_report_kept_with_nvtx_once_and_the_rest_as_printed(self):
        text = 'ncu --clock-control none --nvtx --nvtx-include "a/b/" \\\n    ./x --profile'
        self.assertEqual(pc.figures_command(text, "/l/03-a-b"),
                         'ncu -f -o /l/03-a-b --clock-control none --nvtx --nvtx-include "a/b/" \\\n    ./x --profile')
        self.assertEqual(pc.figures_command("ncu -k regex:k /b/x --profile", "/l/r"),
                         "ncu --nvtx -f -o /l/r -k regex:k /b/x --profile")
        raw, named = pc.export_commands("/l/r")
        self.assertEqual(raw, ["ncu", "-i", "/l/r.ncu-rep", "--csv", "--page", "raw", "--print-units", "base"])
        self.assertEqual(named[-2:], ["--print-nvtx-rename", "kernel"])

    def test_no_report_no_results(self):
        self.assertEqual(pc.collect_figures("/nonexistent/report", "/nonexistent/log"), [])


class Verdict(unittest.TestCase):
    def test_outcomes(self):
        ok = "==PROF== Connected\n==PROF== Profiling \"k\": 100%\n"
        self.assertEqual(pc.verdict("ncu", 0, ok), "ok")
        self.assertEqual(pc.verdict("ncu", 0, "==ERROR== Failed to find metric foo\n"),
                         "==ERROR== Failed to find metric foo")
        self.assertEqual(pc.verdict("ncu", 2, ok), "exit code 2")
        self.assertIn("no kernel was profiled", pc.verdict("ncu", 0, "==WARNING== No kernels were profiled.\n"))
        self.assertEqual(pc.verdict("compute-sanitizer", 0, "========= RACECHECK SUMMARY: 0 hazards displayed"), "ok")
        self.assertEqual(pc.verdict("compute-sanitizer", 0, "========= ERROR SUMMARY: 3 errors"),
                         "ERROR SUMMARY: 3 errors")


class BadInput(unittest.TestCase):
    def test_unknown_track_and_missing_build(self):
        self.assertEqual(pc.main(["--tracks", "nosuch", "--list"]), 2)
        self.assertEqual(pc.main(["--build-dir", "/nonexistent/build"]), 2)
        self.assertEqual(pc.main(["--timeout", "0"]), 2)


if __name__ == "__main__":
    unittest.main()
