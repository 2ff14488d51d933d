"""CPU tests of scripts/install-deps: each command asks only for what it needs, and an
offline host (apt-get cannot reach its archive) goes on with what is there.

Each test runs the script with a PATH that holds nothing but fakes written into a
temporary directory (cmake, ninja, python3, nvcc, sudo, apt-get, doxygen), and with
TUT_DEPS_ROOTS pointing at a fake prefix for Catch2's and Eigen's CMake files, so
nothing on the real machine is looked at or installed.
"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "install-deps"
BASH = shutil.which("bash") or "/bin/bash"

# apt-get, faked in Python (the PATH the script sees has no shell tools). "online": every
# package installs (its probe file appears); "offline": update fails, packages cannot be
# located. Every call is logged, one line each.
FAKE_APT = """#!{python}
import os, sys
from pathlib import Path
fake = Path({fake!r})
args = [a for a in sys.argv[1:] if a not in ("-y", "-qq", "--no-install-recommends")]
while args and args[0] == "-o":
    args = args[2:]
with open(fake / "apt.log", "a") as log:
    log.write(" ".join(args) + "\\n")
mode = (fake / "apt.mode").read_text().strip()
if args[0] == "update":
    if mode == "offline":
        print("W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving")
        print("E: Some index files failed to download.")
        sys.exit(100)
    sys.exit(0)
if mode == "offline":
    print("E: Unable to locate package " + args[1])
    sys.exit(100)
where = {{"doxygen": "bin/doxygen", "catch2": "root/lib/cmake/Catch2/Catch2Config.cmake",
          "libeigen3-dev": "root/share/eigen3/cmake/Eigen3Config.cmake", "ninja-build": "bin/ninja",
          "cmake": "bin/cmake", "python3": "bin/python3"}}
for package in args[1:]:
    f = fake / where[package]
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("#!/bin/true\\n")
    f.chmod(0o755)
"""


class InstallDeps(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.fake = Path(self.tmp.name)
        self.bin = self.fake / "bin"
        self.bin.mkdir()
        self.root = self.fake / "root"
        self.root.mkdir()
        self.addCleanup(self.tmp.cleanup)
        self.tool("apt-get", FAKE_APT.format(python=sys.executable, fake=str(self.fake)))
        self.tool("sudo", f'#!{BASH}\nshift\n"$@"\n')  # "sudo -n CMD...": runs CMD
        for name in ("ninja", "python3", "nvcc"):
            self.tool(name)
        self.cmake("3.25.1")
        self.set_apt("offline")

    def tool(self, name, text="#!/bin/true\n"):
        f = self.bin / name
        f.write_text(text)
        f.chmod(f.stat().st_mode | stat.S_IXUSR)

    def cmake(self, version):
        self.tool("cmake", f"#!{BASH}\necho 'cmake version {version}'\n")

    def catch2(self):
        f = self.root / "lib/x86_64-linux-gnu/cmake/Catch2/Catch2Config.cmake"
        f.parent.mkdir(parents=True)
        f.write_text("")

    def set_apt(self, mode):
        (self.fake / "apt.mode").write_text(mode)

    def run_deps(self, command, **env):
        e = {"PATH": str(self.bin), "TUT_DEPS_ROOTS": str(self.root), "CUDA_HOME": str(self.fake / "no-cuda")}
        e.update(env)
        p = subprocess.run([BASH, str(SCRIPT), command], capture_output=True, text=True, env=e, timeout=60)
        log = self.fake / "apt.log"
        return p, log.read_text() if log.exists() else ""

    def test_tour_needs_no_catch2_nor_doxygen_offline(self):
        p, apt = self.run_deps("tour")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotIn("catch2", apt)
        self.assertNotIn("doxygen", apt)
        self.assertIn("install libeigen3-dev", apt)  # optional: asked for, not required
        self.assertIn("going on without Eigen 3", p.stdout)
        self.assertIn("Unable to locate package libeigen3-dev", p.stdout)
        self.assertEqual(len(p.stdout.splitlines()), 2, p.stdout)  # "installing ..." and one note

    def test_test_offline_with_catch2_goes_on_without_doxygen_and_eigen(self):
        self.catch2()
        p, apt = self.run_deps("test")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("update", apt)
        note = [line for line in p.stdout.splitlines() if "going on without" in line]
        self.assertEqual(len(note), 1, p.stdout)
        self.assertIn("Doxygen", note[0])
        self.assertIn("Eigen 3", note[0])
        self.assertIn("apt-get update failed", note[0])

    def test_test_offline_without_catch2_fails_clearly(self):
        p, _ = self.run_deps("test")
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot run without", p.stderr)
        self.assertIn("Catch2", p.stderr)
        self.assertIn("apt-get install catch2", p.stderr)

    def test_online_installs_what_test_needs(self):
        self.set_apt("online")
        p, apt = self.run_deps("test")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("install catch2 doxygen libeigen3-dev", apt)
        self.assertNotIn("going on without", p.stdout)

    def test_nothing_missing_runs_no_apt_and_says_nothing(self):
        self.set_apt("online")
        self.catch2()
        self.tool("doxygen")
        eigen = self.root / "share/eigen3/cmake/Eigen3Config.cmake"
        eigen.parent.mkdir(parents=True)
        eigen.write_text("")
        p, apt = self.run_deps("test")
        self.assertEqual((p.returncode, p.stdout, p.stderr, apt), (0, "", "", ""))

    def test_missing_or_old_cmake_is_an_error(self):
        self.cmake("3.22.1")
        p, apt = self.run_deps("tour")
        self.assertEqual(p.returncode, 1)
        self.assertIn("CMake >= 3.25", p.stderr)
        self.assertIn("install cmake", apt)

    def test_missing_cuda_toolkit_is_an_error(self):
        (self.bin / "nvcc").unlink()
        p, _ = self.run_deps("tour")
        self.assertEqual(p.returncode, 1)
        self.assertIn("CUDA toolkit", p.stderr)
        cuda_bin = self.fake / "cuda/bin"
        cuda_bin.mkdir(parents=True)
        shutil.copy(self.bin / "ninja", cuda_bin / "nvcc")
        p, _ = self.run_deps("tour", CUDA_HOME=str(self.fake / "cuda"))
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_no_install_only_checks(self):
        self.catch2()
        p, apt = self.run_deps("test", TUT_NO_INSTALL="1")
        self.assertEqual(p.returncode, 0)
        self.assertEqual(apt, "")
        self.assertIn("going on without", p.stdout)

    def test_unknown_command_is_a_usage_error(self):
        p, _ = self.run_deps("everything")
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
