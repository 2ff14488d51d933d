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
          "cmake": "bin/cmake", "python3": "bin/python3", "libopenmpi-dev": "bin/mpicxx",
          "openmpi-bin": "bin/mpirun"}}
for package in args[1:]:
    f = fake / where[package]
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("#!/bin/true\\n")
    f.chmod(0o755)
"""


# python3, faked: "-m pip --version" answers, "-m pip install ... --target DIR WHEEL" is
# logged and, online, leaves DIR/nvidia/<name>/include behind; "-c import nvidia.X"
# fails (no wheel in any site-packages). Anything else succeeds.
FAKE_PYTHON = """#!{python}
import sys
from pathlib import Path
fake = Path({fake!r})
args = sys.argv[1:]
if args[:2] == ["-m", "pip"]:
    if args[2:3] == ["--version"]:
        sys.exit(0)
    with open(fake / "pip.log", "a") as log:
        log.write(" ".join(args[2:]) + "\\n")
    if (fake / "apt.mode").read_text().strip() == "offline":
        sys.exit(1)
    target = Path(args[args.index("--target") + 1])
    name = args[-1].split("-")[1]  # nvidia-nvshmem-cu13 -> nvshmem
    (target / "nvidia" / name / "include").mkdir(parents=True, exist_ok=True)
    sys.exit(0)
if args[:1] == ["-c"] and "import nvidia" in args[1]:
    sys.exit(1)
sys.exit(0)
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
        self.tool("mpicxx")
        self.tool("mpirun")
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

    def fake_python(self):
        self.tool("python3", FAKE_PYTHON.format(python=sys.executable, fake=str(self.fake)))

    def run_multigpu(self, command="test", **env):
        self.catch2()
        self.tool("doxygen")
        eigen = self.root / "share/eigen3/cmake/Eigen3Config.cmake"
        eigen.parent.mkdir(parents=True)
        eigen.write_text("")
        self.fake_python()
        env.setdefault("TUT_PYTHON_DEPS", str(self.fake / "wheels"))
        p, apt = self.run_deps(command, **env)
        pip = self.fake / "pip.log"
        return p, apt, pip.read_text() if pip.exists() else ""

    def test_multigpu_offline_goes_on_without_mpi_nccl_nvshmem_in_one_line(self):
        p, apt, pip = self.run_multigpu()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("install libopenmpi-dev openmpi-bin", apt)
        self.assertIn("nvidia-nccl-cu13", pip)
        self.assertIn("nvidia-nvshmem-cu13", pip)
        note = [line for line in p.stdout.splitlines() if "going on without" in line]
        self.assertEqual(len(note), 1, p.stdout)
        for part in ("MPI", "NCCL", "NVSHMEM", "pip could not install nvidia-nvshmem-cu13"):
            self.assertIn(part, note[0])

    def test_multigpu_online_installs_mpi_and_the_wheels_where_cmake_looks(self):
        self.set_apt("online")
        p, apt, pip = self.run_multigpu()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotIn("going on without", p.stdout)
        self.assertIn("--retries 0", pip)
        for name in ("nccl", "nvshmem"):
            self.assertTrue((self.fake / "wheels" / name / "nvidia" / name / "include").is_dir(), pip)
        # a second run finds everything: no apt, no pip, no output
        (self.fake / "apt.log").unlink()
        (self.fake / "pip.log").unlink()
        p, apt, pip = self.run_deps("test", TUT_PYTHON_DEPS=str(self.fake / "wheels")) + ("",)
        self.assertEqual((p.returncode, p.stdout, apt), (0, "", ""))
        self.assertFalse((self.fake / "pip.log").exists())

    def test_multigpu_wheels_follow_the_toolkit_major_version(self):
        self.tool("nvcc", f"#!{BASH}\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n")
        p, _, pip = self.run_multigpu("tour")
        self.assertIn("nvidia-nvshmem-cu12", pip)
        self.assertIn("nvidia-nccl-cu12", pip)

    def test_multigpu_no_install_runs_no_pip(self):
        p, apt, pip = self.run_multigpu(TUT_NO_INSTALL="1")
        self.assertEqual(p.returncode, 0)
        self.assertEqual((apt, pip), ("", ""))
        self.assertIn("NVSHMEM", p.stdout)

    def test_unknown_command_is_a_usage_error(self):
        p, _ = self.run_deps("everything")
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
