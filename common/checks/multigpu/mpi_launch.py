#!/usr/bin/env python3
"""Starts a multigpu program (or its checks) on N GPUs: one process per GPU under mpirun,
or one process that uses N GPUs itself (--single). Used by CTest, scripts/grade.py,
scripts/tour.py and scripts/multigpu-verify, so that they all launch the same way.

usage: mpi_launch.py [--np N] [--need-gpus N] [--single] [--no-gpu] [--timeout SECONDS]
                     [--dry-run] -- PROGRAM [ARGS...]

- Counts the GPUs (nvidia-smi -L, or CUDA_VISIBLE_DEVICES when it lists fewer, or
  TUT_GPU_COUNT when set); with fewer than needed (max of --np and --need-gpus) it prints
  one line "SKIPPED: ..." and exits 77, the skip code of CTest and the grader. --no-gpu:
  the program needs none (the CPU tests of the MPI helpers); nothing is counted.
- Sets the safety variables NCCL_NVLS_ENABLE=0, NVSHMEM_DISABLE_NVLS=1 and
  TORCH_SYMM_MEM_DISABLE_MULTICAST=1 (NVLink multicast stays off) and passes them to every
  rank (Open MPI: -x; MPICH: -genv).
- Open MPI: --allow-run-as-root when run as root, --bind-to none (a process per GPU keeps
  NCCL's helper threads off one core), and MPIEXEC_TIMEOUT so mpirun itself ends a hung job.
- Ends the job after --timeout seconds (SIGTERM to mpirun, which stops its processes;
  SIGKILL 10 s later) and exits 124 then. A little before that, each process's own
  watchdog (TUT_MG_WATCHDOG_S, set here from --timeout unless already set, and passed to
  every rank; common/include/tut/multigpu_progress.hpp) prints where that rank is, and
  its last steps, and ends it with 124: a hang says which rank waits where.
- A job whose processes exit 77 after printing a SKIPPED line exits 77 here too, whatever
  mpirun made of it.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading

SKIP_EXIT = 77
TIMEOUT_EXIT = 124
SAFETY = {"NCCL_NVLS_ENABLE": "0", "NVSHMEM_DISABLE_NVLS": "1", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}
WATCHDOG = "TUT_MG_WATCHDOG_S"
# Variables every rank gets when they are set here (Open MPI passes only what -x names).
# The performance gates' variables (common/checks/perf_gate.hpp) go to every rank alike: a
# rank that calibrates while another does not would make different collectives.
PASSED_ON = ("LD_LIBRARY_PATH", "PATH", "CUDA_VISIBLE_DEVICES", "NCCL_DEBUG", "NVSHMEM_DEBUG", WATCHDOG,
             "TUT_PERF_REPORT", "TUT_PERF_CALIBRATE", "TUT_THRESHOLDS_DIR")


def watchdog_seconds(timeout):
    """When the processes' own watchdogs fire for a job limited to `timeout` seconds: early
    enough that their reports are printed before the launcher ends the job (a fifth of the
    limit, 3 to 15 s, before it); 0 (not armed) for no limit or one too short to split."""
    if not timeout or timeout <= 0:
        return 0
    lead = min(15.0, max(3.0, timeout / 5))
    return int(timeout - lead) if timeout - lead >= 1 else 0


def gpu_count(env=None):
    """GPUs this job may use: TUT_GPU_COUNT if set, else nvidia-smi -L's count, capped by
    the entries of CUDA_VISIBLE_DEVICES when that is set. 0 without nvidia-smi."""
    env = os.environ if env is None else env
    if env.get("TUT_GPU_COUNT", "").strip():
        try:
            return max(0, int(env["TUT_GPU_COUNT"]))
        except ValueError:
            pass
    smi = shutil.which("nvidia-smi")
    count = 0
    if smi:
        try:
            out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60).stdout
            count = sum(1 for line in out.splitlines() if line.startswith("GPU "))
        except (OSError, subprocess.SubprocessError):
            count = 0
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        entries = [v for v in visible.split(",") if v.strip() and v.strip() != "-1"]
        count = min(count, len(entries))
    return count


def mpi_flavour(mpirun):
    """'openmpi', 'mpich' or 'unknown', from `mpirun --version`."""
    try:
        text = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if "Open MPI" in text or "OpenRTE" in text or "Open RTE" in text:
        return "openmpi"
    if "HYDRA" in text or "MPICH" in text or "Intel" in text:
        return "mpich"
    return "unknown"


def mpirun_command(mpirun, flavour, np, program, timeout=None, is_root=None, env=None):
    """The mpirun command line that starts `program` (a list) on np processes, with the
    safety variables and those of PASSED_ON that are set in `env` (default: os.environ)."""
    is_root = (os.geteuid() == 0) if is_root is None else is_root
    env = os.environ if env is None else env
    cmd = [mpirun, "-np", str(np)]
    if flavour == "openmpi":
        if is_root:
            cmd.append("--allow-run-as-root")
        cmd += ["--bind-to", "none"]
        for k, v in SAFETY.items():
            cmd += ["-x", f"{k}={v}"]
        for k in PASSED_ON:
            if k in env:
                cmd += ["-x", k]  # its value in mpirun's environment, which is `env`
    elif flavour == "mpich":
        for k, v in SAFETY.items():
            cmd += ["-genv", k, v]
        if WATCHDOG in env:
            cmd += ["-genv", WATCHDOG, env[WATCHDOG]]
    return cmd + list(program)


def parse(argv):
    if "--" not in argv:
        raise SystemExit("mpi_launch.py: usage: mpi_launch.py [options] -- PROGRAM [ARGS...]")
    cut = argv.index("--")
    ap = argparse.ArgumentParser(prog="mpi_launch.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--np", type=int, default=2, help="processes (one per GPU); default 2")
    ap.add_argument("--need-gpus", type=int, default=0, help="GPUs the program needs (default: --np)")
    ap.add_argument("--single", action="store_true", help="one process that uses the GPUs itself")
    ap.add_argument("--no-gpu", action="store_true", help="the program needs no GPU (CPU tests of the MPI helpers)")
    ap.add_argument("--timeout", type=float, default=0, help="end the job after this many seconds (0: never)")
    ap.add_argument("--dry-run", action="store_true", help="print the command, run nothing")
    args = ap.parse_args(argv[:cut])
    program = argv[cut + 1:]
    if not program:
        ap.error("no program after --")
    if args.np < 1:
        ap.error("--np must be at least 1")
    return args, program


def end_group(proc, grace=10):
    """SIGTERM to the job's process group (mpirun ends its processes on it), SIGKILL after
    `grace` seconds if anything is left."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except OSError:
        return
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()


def run(cmd, env, timeout):
    """Runs cmd in a process group of its own, copying its output through and watching for
    SKIPPED lines; returns (exit code, saw a SKIPPED line, timed out). A SIGTERM or SIGINT
    sent to this script (a test runner's time limit) ends the job's whole group first."""
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", bufsize=1, start_new_session=True)
    seen = {"skipped": False}

    def forward(signum, _frame):
        end_group(proc, grace=5)
        sys.exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)

    def pump():
        for line in proc.stdout:
            if line.startswith("SKIPPED:"):
                seen["skipped"] = True
            sys.stdout.write(line)
            sys.stdout.flush()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout if timeout > 0 else None)
    except subprocess.TimeoutExpired:
        timed_out = True
        end_group(proc)
    # the group may hold the pipe open a moment longer than its leader
    try:
        os.killpg(proc.pid, 0)
        alive = True
    except OSError:
        alive = False
    if alive and proc.returncode is not None:
        end_group(proc, grace=2)
    reader.join(timeout=5)
    return proc.returncode, seen["skipped"], timed_out


def main(argv=None):
    args, program = parse(sys.argv[1:] if argv is None else argv)
    need = max(args.np, args.need_gpus)
    env = dict(os.environ)
    env.update(SAFETY)
    # Open MPI's shared-memory transport copies between processes with CMA, which
    # containers often forbid (ptrace); the lessons send MPI only a few bytes anyway. An
    # environment parameter is ignored by an MPI that does not know it.
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    if args.no_gpu:
        env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")  # more ranks than cores is fine here
    if WATCHDOG not in env and watchdog_seconds(args.timeout):
        env[WATCHDOG] = str(watchdog_seconds(args.timeout))
    have = need if args.no_gpu else gpu_count(env)
    what = os.path.basename(program[0])
    if have == 0:
        print(f"SKIPPED: {what} needs a CUDA GPU ({need} of them) and no GPU is usable here.", flush=True)
        return SKIP_EXIT
    if have < need:
        print(f"SKIPPED: {what} needs {need} GPUs ({'one process on each' if not args.single else 'in one process'}), "
              f"found {have}.", flush=True)
        return SKIP_EXIT
    if args.single:
        cmd = list(program)
    else:
        mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
        if not mpirun:
            print(f"SKIPPED: {what} runs one process per GPU under mpirun, and no mpirun (Open MPI or MPICH) is on "
                  "PATH.", flush=True)
            return SKIP_EXIT
        cmd = mpirun_command(mpirun, mpi_flavour(mpirun), args.np, program, env=env)
        if args.timeout > 0:
            env["MPIEXEC_TIMEOUT"] = str(int(args.timeout) + 5)
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    rc, skipped, timed_out = run(cmd, env, args.timeout)
    if timed_out:
        print(f"mpi_launch.py: {what} did not finish in {args.timeout:g} s; the job was ended (the 'watchdog' lines "
              "above, one per rank, say where each rank was).", flush=True)
        return TIMEOUT_EXIT
    if rc != 0 and skipped:
        return SKIP_EXIT
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
