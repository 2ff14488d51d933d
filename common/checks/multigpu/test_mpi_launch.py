"""CPU tests of mpi_launch.py: GPU counting, the skip with its reason, the mpirun command
line (safety variables, root, Open MPI and MPICH, the watchdog's limit), skips reported by
the job, time-outs. A fake mpirun in a temporary PATH runs the program once per rank; no
MPI, no GPU needed.

RealMpi runs the track's CPU check of its MPI helpers (check-multigpu-mpi-cpu, named by
TUT_MG_MPI_CPU_CHECK, which CTest sets) under the real mpirun on 2 processes: a rank that
hangs, throws or fails alone must end the job quickly, with every rank saying where it was.
Skipped without that program or without mpirun.
"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import mpi_launch  # noqa: E402

LAUNCHER = HERE / "mpi_launch.py"

# A fake Open MPI mpirun: prints its version, or runs the program -np times with the -x
# variables set, and exits with the first non-zero exit code.
FAKE_MPIRUN = """#!{python}
import os, subprocess, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("mpirun (Open MPI) 4.1.4")
    sys.exit(0)
with open(os.path.join(os.path.dirname(__file__), "mpirun.log"), "a") as f:
    f.write(" ".join(args) + "\\n")
np, env, i = 1, dict(os.environ), 0
while i < len(args) and args[i].startswith("-"):
    a = args[i]
    if a == "-np":
        np = int(args[i + 1]); i += 2
    elif a == "-x":
        k, _, v = args[i + 1].partition("=")
        if v:
            env[k] = v
        i += 2
    elif a in ("--bind-to",):
        i += 2
    elif a == "--mca":
        i += 3
    else:
        i += 1
rc = 0
for r in range(np):
    env["OMPI_COMM_WORLD_RANK"] = str(r)
    code = subprocess.run(args[i:], env=env).returncode
    rc = rc or code
sys.exit(rc)
"""


class Launch(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.bin = Path(self.tmp.name)
        mpirun = self.bin / "mpirun"
        mpirun.write_text(FAKE_MPIRUN.format(python=sys.executable))
        mpirun.chmod(mpirun.stat().st_mode | stat.S_IXUSR)

    def script(self, name, body):
        f = self.bin / name
        f.write_text(f"#!{sys.executable}\nimport os, sys, time\n{body}\n")
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
        return str(f)

    def launch(self, *args, gpus="4", **env):
        e = dict(os.environ)
        e["PATH"] = str(self.bin) + os.pathsep + e.get("PATH", "")
        e["TUT_GPU_COUNT"] = gpus
        e.pop("CUDA_VISIBLE_DEVICES", None)
        e.update(env)
        return subprocess.run([sys.executable, str(LAUNCHER), *args], capture_output=True, text=True, env=e,
                              timeout=120)

    def test_gpu_count_override_and_visible_devices(self):
        self.assertEqual(mpi_launch.gpu_count({"TUT_GPU_COUNT": "3"}), 3)
        self.assertEqual(mpi_launch.gpu_count({"TUT_GPU_COUNT": "0"}), 0)

    def test_too_few_gpus_skips_with_the_reason(self):
        p = self.launch("--np", "2", "--", "prog", gpus="1")
        self.assertEqual(p.returncode, 77, p.stdout + p.stderr)
        self.assertIn("SKIPPED: prog needs 2 GPUs", p.stdout)
        self.assertIn("found 1", p.stdout)

    def test_no_gpu_at_all_says_so(self):
        p = self.launch("--np", "2", "--", "prog", gpus="0")
        self.assertEqual(p.returncode, 77)
        self.assertIn("no GPU is usable here", p.stdout)

    def test_need_gpus_above_np(self):
        p = self.launch("--np", "1", "--need-gpus", "2", "--", "prog", gpus="1")
        self.assertEqual(p.returncode, 77)

    def test_command_line_sets_the_safety_variables(self):
        cmd = mpi_launch.mpirun_command("mpirun", "openmpi", 4, ["./a", "--x"], is_root=True)
        self.assertEqual(cmd[:4], ["mpirun", "-np", "4", "--allow-run-as-root"])
        for kv in ("NCCL_NVLS_ENABLE=0", "NVSHMEM_DISABLE_NVLS=1", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1"):
            self.assertIn(kv, cmd)
            self.assertEqual(cmd[cmd.index(kv) - 1], "-x")
        self.assertEqual(cmd[-2:], ["./a", "--x"])
        self.assertNotIn("--allow-run-as-root", mpi_launch.mpirun_command("mpirun", "openmpi", 2, ["a"], is_root=False))
        mpich = mpi_launch.mpirun_command("mpiexec", "mpich", 2, ["a"], is_root=True)
        self.assertIn("-genv", mpich)
        self.assertNotIn("-x", mpich)

    def test_runs_every_rank_with_the_variables(self):
        prog = self.script("prog", "print('rank', os.environ['OMPI_COMM_WORLD_RANK'], os.environ['NCCL_NVLS_ENABLE'],"
                                   " os.environ['NVSHMEM_DISABLE_NVLS'])")
        p = self.launch("--np", "2", "--", prog, NCCL_NVLS_ENABLE="1")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("rank 0 0 1", p.stdout)
        self.assertIn("rank 1 0 1", p.stdout)

    def test_a_job_that_skips_exits_77(self):
        prog = self.script("prog", "print('SKIPPED: no peer access'); sys.exit(77 if os.environ['OMPI_COMM_WORLD_RANK'] == '0' else 1)")
        p = self.launch("--np", "2", "--", prog)
        self.assertEqual(p.returncode, 77, p.stdout)

    def test_a_failure_keeps_its_exit_code(self):
        prog = self.script("prog", "sys.exit(3)")
        p = self.launch("--np", "2", "--", prog)
        self.assertEqual(p.returncode, 3)

    def test_single_runs_without_mpirun(self):
        prog = self.script("prog", "print('alone', 'OMPI_COMM_WORLD_RANK' in os.environ, os.environ['NCCL_NVLS_ENABLE'])")
        p = self.launch("--single", "--need-gpus", "2", "--", prog)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("alone False 0", p.stdout)
        self.assertFalse((self.bin / "mpirun.log").exists())

    def test_timeout_ends_the_job(self):
        prog = self.script("prog", "time.sleep(60)")
        p = self.launch("--np", "1", "--timeout", "2", "--", prog)
        self.assertEqual(p.returncode, 124)
        self.assertIn("did not finish in 2 s", p.stdout)

    def test_the_watchdog_fires_a_little_before_the_time_limit(self):
        self.assertEqual(mpi_launch.watchdog_seconds(45), 36)
        self.assertEqual(mpi_launch.watchdog_seconds(60), 48)
        self.assertEqual(mpi_launch.watchdog_seconds(140), 125)
        self.assertEqual(mpi_launch.watchdog_seconds(10), 7)
        self.assertEqual(mpi_launch.watchdog_seconds(2), 0)
        self.assertEqual(mpi_launch.watchdog_seconds(0), 0)

    def test_every_rank_gets_the_watchdog_limit(self):
        prog = self.script("prog", "print('rank', os.environ['OMPI_COMM_WORLD_RANK'], 'watchdog',"
                                   " os.environ.get('TUT_MG_WATCHDOG_S'))")
        p = self.launch("--np", "2", "--timeout", "45", "--", prog)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("rank 0 watchdog 36", p.stdout)
        self.assertIn("rank 1 watchdog 36", p.stdout)
        self.assertIn("-x TUT_MG_WATCHDOG_S", (self.bin / "mpirun.log").read_text())
        # One set by the caller is kept; no limit, no watchdog.
        p = self.launch("--np", "1", "--timeout", "45", "--", prog, TUT_MG_WATCHDOG_S="5")
        self.assertIn("rank 0 watchdog 5", p.stdout)
        p = self.launch("--np", "1", "--", prog)
        self.assertIn("rank 0 watchdog None", p.stdout)
        mpich = mpi_launch.mpirun_command("mpiexec", "mpich", 2, ["a"], env={"TUT_MG_WATCHDOG_S": "36"})
        self.assertIn("TUT_MG_WATCHDOG_S", mpich)

    def test_no_gpu_programs_run_without_gpus(self):
        prog = self.script("prog", "print('ran on the CPU')")
        p = self.launch("--np", "2", "--no-gpu", "--", prog, gpus="0")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.count("ran on the CPU"), 2)

    def test_no_mpirun_skips(self):
        e = {"PATH": "/nonexistent"}
        p = subprocess.run([sys.executable, str(LAUNCHER), "--np", "1", "--", "prog"], capture_output=True, text=True,
                           env={**e, "TUT_GPU_COUNT": "2"}, timeout=60)
        self.assertEqual(p.returncode, 77)
        self.assertIn("no mpirun", p.stdout)

    def test_usage(self):
        p = subprocess.run([sys.executable, str(LAUNCHER), "--np", "2"], capture_output=True, text=True, timeout=60)
        self.assertNotEqual(p.returncode, 0)


CPU_CHECK = os.environ.get("TUT_MG_MPI_CPU_CHECK", "")


@unittest.skipUnless(CPU_CHECK and Path(CPU_CHECK).is_file() and (shutil.which("mpirun") or shutil.which("mpiexec")),
                     "needs check-multigpu-mpi-cpu (TUT_MG_MPI_CPU_CHECK) and mpirun")
class RealMpi(unittest.TestCase):
    """The MPI helpers' CPU check on 2 real processes: how a job ends when a rank hangs,
    throws or fails alone."""

    def run_check(self, *catch_args, timeout=60, **env):
        e = dict(os.environ)
        e.setdefault("OMPI_MCA_mca_base_component_show_load_errors", "0")
        e.update(env)
        start = time.monotonic()
        p = subprocess.run([sys.executable, str(LAUNCHER), "--np", "2", "--no-gpu", "--timeout", str(timeout), "--",
                            CPU_CHECK, *catch_args], capture_output=True, text=True, env=e, timeout=timeout + 60)
        return p.returncode, p.stdout + p.stderr, time.monotonic() - start

    def test_the_helpers_pass_on_two_processes(self):
        rc, out, _ = self.run_check()
        self.assertEqual(rc, 0, out)
        self.assertIn("All tests passed", out)

    def test_a_failure_on_one_rank_fails_every_rank_without_a_hang(self):
        rc, out, took = self.run_check("[.disagree]")
        self.assertNotIn(rc, (0, 124), out)
        self.assertLess(took, 30, out)
        self.assertIn("rank 1: rank 1 saw a wrong value", out)
        # Each rank's own line: its view and where it was.
        self.assertRegex(out, r"\[rank 0 of 2, [^]]*\] check failed \(rank 1: rank 1 saw a wrong value\); this rank: "
                              r"passed here; at: the verdict of a check that fails on rank 1 only")
        self.assertRegex(out, r"\[rank 1 of 2, [^]]*\] check failed .*this rank: rank 1 saw a wrong value")

    def test_a_rank_that_throws_alone_ends_the_job_with_its_message(self):
        rc, out, took = self.run_check("[.abort]")
        self.assertNotIn(rc, (0, 124), out)
        self.assertLess(took, 30, out)
        self.assertRegex(out, r"\[rank 1 of 2, [^]]*\] a lesson call threw: a made-up lesson failure")
        self.assertIn("this rank at: rank 1 throws while rank 0 waits in a barrier", out)

    def test_the_watchdog_says_where_every_rank_waits(self):
        rc, out, took = self.run_check("[.watchdog]", timeout=40, TUT_MG_WATCHDOG_S="4")
        self.assertEqual(rc, 124, out)
        self.assertLess(took, 30, out)
        self.assertRegex(out, r"\[rank 0 of 2, [^]]*\] watchdog: still running .* at: rank 0 sleeps, as if its GPU "
                              r"never finished")
        self.assertRegex(out, r"\[rank 1 of 2, [^]]*\] watchdog: still running .* at: waiting in MPI_Barrier for rank 0")


if __name__ == "__main__":
    unittest.main()
