"""CPU tests of scripts/gpu-verify's summaries of a ctest log: the slowest tests, and the end
of each failed test's output (what a summary carries when the log itself stays behind).

Run: python3 -m unittest discover -s scripts -p "test_*.py"
"""
import os
import subprocess
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu-verify")

LOG = """Test project /tmp/build
        Start  13: solutions/sgemm/05_shared_tiling/check
        Start  14: cpu/driver-lines
 13/204 Test  #13: solutions/sgemm/05_shared_tiling/check ......***Failed    5.10 sec
Randomness seeded to: 1
first line
[performance] sgemm/05_shared_tiling: 15% of cuBLAS FP32; the gate is 16%: too slow.
test cases: 4 | 3 passed | 1 failed
 14/204 Test  #14: cpu/driver-lines .....................***Failed    0.10 sec
total       1001 (limit 1000)
        Start  15: solutions/sgemm/01_naive/check
 15/204 Test  #15: solutions/sgemm/01_naive/check ........   Passed    7.25 sec
some output a passing test printed
 16/204 Test  #16: solutions/multigpu/01_peers/check ......***Skipped   0.10 sec

99% tests passed, 2 tests failed out of 204

Total Test time (real) =  85.85 sec
"""


def run(function, *args):
    """Runs one of gpu-verify's shell functions (taken from the script) on the fake log."""
    with open(SCRIPT, encoding="utf-8") as f:
        text = f.read()
    start = text.index(function + "() {")
    body = text[start:text.index("\n}\n", start) + 3]
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as log:
        log.write(LOG)
    try:
        return subprocess.run(["bash", "-c", body + "\n" + function + ' "$@"', "gpu-verify", log.name, *args],
                              capture_output=True, text=True, check=True).stdout
    finally:
        os.remove(log.name)


class Summaries(unittest.TestCase):
    def test_each_failed_test_brings_the_end_of_its_output(self):
        out = run("failed_outputs", "2")
        self.assertIn("--- solutions/sgemm/05_shared_tiling/check", out)
        self.assertIn("the gate is 16%: too slow.", out)
        self.assertIn("test cases: 4 | 3 passed | 1 failed", out)
        self.assertNotIn("first line", out)  # only the last 2 lines of each
        self.assertIn("--- cpu/driver-lines", out)
        self.assertIn("total       1001 (limit 1000)", out)
        self.assertNotIn("01_naive", out)  # passed and skipped tests bring nothing
        self.assertNotIn("01_peers", out)
        self.assertNotIn("passing test printed", out)

    def test_the_slowest_tests_and_the_total(self):
        out = run("ctest_times", "2").splitlines()
        self.assertRegex(out[0], r"7\.25 s +Passed +solutions/sgemm/01_naive/check")
        self.assertRegex(out[1], r"5\.10 s +Failed +solutions/sgemm/05_shared_tiling/check")
        self.assertEqual(out[-1], "Total Test time (real) =  85.85 sec")


if __name__ == "__main__":
    unittest.main()
