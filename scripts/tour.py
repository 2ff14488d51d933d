#!/usr/bin/env python3
"""The tour: build every solution, run each at its default size on the GPU, print the
progression table of each track and write results/<gpu>.json.

usage: scripts/tour.py [--build-dir build] [--tracks sgemm,bandwidth] [--results-dir results]
                       [--no-build] [--no-docs] [--docs-only]

Per track the table shows, lesson by lesson: time, value (GFLOP/s, GB/s, solves/s),
% of the library (cuBLAS, cudaMemcpy, CUB, Eigen) and % of the hardware peak, both
from the same run, and the speedup of each lesson's best variant over the previous
lesson's best. The JSON holds, at the top, gpu, cuda, date and the device's ceilings,
then one record per lesson variant (see common/include/tut/report.hpp). Afterwards the
SVG plots (docs/plots/), the README's results table and the lesson READMEs' measured
tables are regenerated from every results file in --results-dir (one per GPU).
Without a GPU it builds only device_info, says so and exits 77. Bad input (a build
directory that is not configured, an unknown track, no results files) exits 2.

The multigpu track (manifest entries with a "launch" field) runs apart: each lesson on
G = 1, 2, 4, ... GPUs up to those present (--gpu-counts to choose), under mpirun -np G
through the track's launcher (common/checks/multigpu/mpi_launch.py; lesson 1, one process,
gets --gpus G), with NVLink multicast kept off (NCCL_NVLS_ENABLE=0, NVSHMEM_DISABLE_NVLS=1,
TORCH_SYMM_MEM_DISABLE_MULTICAST=1, set for every program of the tour). It prints one table
per GPU count and writes results/multigpu/<gpu>-x<G>.json (same layout as results/<gpu>.json,
plus "gpus": G); results/<gpu>.json never holds multigpu records.
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import results_json as rj  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SKIP_EXIT = 77
# NVLink multicast stays off in every program the tour starts (see common/include/tut/multigpu.hpp).
SAFETY_ENV = {"NCCL_NVLS_ENABLE": "0", "NVSHMEM_DISABLE_NVLS": "1", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}


def sh(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], **kw)


def gpu_file_name(gpu):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", gpu).strip("_") + ".json"


def fmt_value(v, digits=0):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if abs(v) >= 100 or digits == 0 and abs(v) >= 10:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def fmt_pct(r):
    return "-" if r is None else f"{100 * r:.1f}%"


def progression_table(track, records):
    """Rows for one track: every record, and for each lesson's best (marked *) its speedup
    over the previous lesson's best. The best is chosen as in the README table
    (results_json.best_per_lesson: the track's main unit, steps of the progression first);
    baselines (lessons 00_*) and records outside the progression are not steps."""
    lessons = rj.by_track(records).get(track, {})
    best = dict(rj.best_per_lesson(lessons, rj.main_unit(lessons)))
    rows = []
    prev_best = None
    for lesson, recs in lessons.items():
        b = best.get(lesson)
        is_step = b is not None and rj.in_progression(b) and not lesson.startswith("00")
        for r in recs:
            speedup = "-"
            if r is b and is_step and prev_best is not None and prev_best.get("value"):
                speedup = f"{r['value'] / prev_best['value']:.2f}x"
            rows.append([lesson, r.get("variant", ""), str(r.get("size", "")),
                         fmt_value(r.get("time_ms"), 3) if r.get("time_ms") is not None else "-",
                         f"{fmt_value(r.get('value'))} {r.get('unit', '')}",
                         fmt_pct(r.get("ratio_to_library")), fmt_pct(r.get("ratio_to_peak")),
                         speedup + (" *" if r is b else "")])
        if is_step and b.get("value") is not None:
            prev_best = b
    return rows


def resources_table(records):
    """Rows of what each kernel uses of an SM, for the records that report an occupancy (the
    SGEMM lessons): lesson, variant, size, registers per thread, shared memory per block and
    occupancy (resident warps / the SM's maximum). Size-sweep records repeat the kernel: left out."""
    rows = []
    for r in records:
        extra = r.get("extra") if isinstance(r.get("extra"), dict) else {}
        if "occupancy" not in extra or extra.get("sweep"):
            continue
        regs, smem, occ = extra.get("registers"), extra.get("shared_bytes"), extra.get("occupancy")
        rows.append([r.get("lesson", ""), r.get("variant", ""), str(r.get("size", "")),
                     "-" if regs is None or regs < 0 else str(int(regs)),
                     "-" if smem is None or smem < 0 else f"{int(smem):,}",
                     "-" if occ is None or occ < 0 else f"{100 * occ:.1f}%"])
    return rows


def print_table(title, header, rows):
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    print(f"\n{title}")
    line = lambda r: "  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def print_tour(results):
    records = results["records"]
    tracks = []
    for r in records:
        if r["track"] not in tracks:
            tracks.append(r["track"])
    d = results.get("device", {})
    print(f"\n=== Tour on {results['gpu']} | CUDA {results['cuda']} | {results['date']} ===")
    print(f"FP32 peak {fmt_value(d.get('fp32_peak_gflops'))} GFLOP/s | DRAM {fmt_value(d.get('dram_peak_gbs'))} GB/s "
          f"theoretical, {fmt_value(d.get('measured_d2d_gbs'))} GB/s measured (cudaMemcpy D2D, read + write)")
    header = ["lesson", "variant", "size", "time ms", "value", "% library", "% peak", "speedup"]
    for t in tracks:
        recs = [r for r in records if r["track"] == t]
        libs = sorted({r.get("library", "") for r in recs if r.get("library")})
        print_table(f"[{t}] library: {', '.join(libs) or '-'}   (* = best variant of the lesson; speedup over the "
                    f"previous lesson's best)", header, progression_table(t, recs))
        resources = resources_table(recs)
        if resources:
            print_table(f"[{t}] what each kernel uses of an SM (occupancy: resident warps / the SM's maximum)",
                        ["lesson", "variant", "size", "registers", "shared B", "occupancy"], resources)
    print_jor_summary(records)
    if results.get("skipped"):
        print("\nSKIPPED runs (the program names what this GPU lacks):")
        for f in results["skipped"]:
            print(f"  {f['track']}/{f['lesson']}")
    if results.get("failures"):
        print("\nFAILED runs:")
        for f in results["failures"]:
            print(f"  {f['track']}/{f['lesson']}: {f['why']}")


def jor_summary(records):
    """The JOR track's crossover table: per type and size, the best CPU version against the
    fastest GPU lesson (A resident on the GPU), and the crossover N: the smallest N of the
    run from which on the fastest GPU lesson beats the best CPU version at every larger N
    (the 2015 report: 2048 for double, 4096 for float)."""
    jor = [r for r in records if r["track"] == "jor" and r.get("extra", {}).get("type")]
    out = {}
    for typ in ("float", "double"):
        cpu, gpu = {}, {}
        for r in jor:
            e = r["extra"]
            if e["type"] != typ or e.get("stop", "norm") != "norm" or r.get("time_ms") is None:
                continue
            n = int(e["n"])
            side = cpu if r["lesson"].startswith("00") else gpu
            if n not in side or r["time_ms"] < side[n]["time_ms"]:
                side[n] = r
        sizes = sorted(set(cpu) & set(gpu))
        rows, crossover = [], None
        for n in sizes:
            c, g = cpu[n], gpu[n]
            rows.append([str(n), f"{c['variant']} {c['time_ms']:.4g} ms", f"{g['lesson']} / {g['variant']} "
                         f"{g['time_ms']:.4g} ms", f"{c['time_ms'] / g['time_ms']:.1f}x"])
        for n in sizes:
            if all(gpu[m]["time_ms"] < cpu[m]["time_ms"] for m in sizes if m >= n):
                crossover = n
                break
        out[typ] = (rows, crossover)
    return out


def print_jor_summary(records):
    for typ, (rows, crossover) in jor_summary(records).items():
        if rows:
            print_table(f"[jor] {typ}: the fastest GPU lesson against the best CPU version (crossover N = "
                        f"{crossover if crossover else 'none'}; the 2015 report: "
                        f"{4096 if typ == 'float' else 2048})", ["N", "best CPU", "fastest GPU", "GPU speedup"], rows)


def gpu_count():
    """GPUs this machine offers the multigpu track: TUT_GPU_COUNT when set, else the lines of
    `nvidia-smi -L` (capped by CUDA_VISIBLE_DEVICES when it is set); 0 without nvidia-smi."""
    if os.environ.get("TUT_GPU_COUNT", "").strip():
        try:
            return max(0, int(os.environ["TUT_GPU_COUNT"]))
        except ValueError:
            pass
    count = 0
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60).stdout
            count = sum(1 for line in out.splitlines() if line.startswith("GPU "))
        except (OSError, subprocess.SubprocessError):
            count = 0
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        count = min(count, len([v for v in visible.split(",") if v.strip() and v.strip() != "-1"]))
    return count


def multigpu_counts(have, wanted=None):
    """The GPU counts to run the multigpu track on: `wanted` (a list) capped at `have`, else
    1, 2, 4, 8, ... up to `have`."""
    if wanted:
        return [g for g in wanted if 1 <= g <= have]
    counts, g = [], 1
    while g <= have:
        counts.append(g)
        g *= 2
    return counts


def multigpu_command(e, gpus, jsonl, timeout):
    """The command that runs multigpu lesson `e` on `gpus` GPUs through its launcher."""
    launcher = [sys.executable, e["launcher"]]
    program = [e["exe"], "--json", str(jsonl), *e.get("tour_args", [])]
    if e.get("launch") == "single":
        return launcher + ["--single", "--need-gpus", str(max(gpus, int(e.get("gpus", 1)))), "--timeout",
                           str(timeout), "--"] + program + ["--gpus", str(gpus)]
    return launcher + ["--np", str(gpus), "--timeout", str(timeout), "--"] + program


def multigpu_rows(records):
    """Rows of a multigpu table: time and value beside the library and the peak, and for the
    solvers microseconds per iteration (compute, communication), speedup and efficiency."""
    rows = []
    for r in records:
        e = r.get("extra") if isinstance(r.get("extra"), dict) else {}
        def num(key, digits=1, pct=False):
            v = rj.number(e.get(key))
            if v is None:
                return "-"
            return f"{100 * v:.1f}%" if pct else f"{v:.{digits}f}"
        rows.append([r.get("lesson", ""), r.get("variant", ""), str(r.get("size", "")),
                     fmt_value(r.get("time_ms"), 3) if r.get("time_ms") is not None else "-",
                     f"{fmt_value(r.get('value'))} {r.get('unit', '')}", fmt_pct(r.get("ratio_to_library")),
                     fmt_pct(r.get("ratio_to_peak")), num("us_per_iter"), num("compute_us_per_iter"),
                     num("comm_us_per_iter"), num("speedup", 2), num("parallel_efficiency", pct=True)])
    return rows


def print_multigpu(results):
    g = results["gpus"]
    print(f"\n=== multigpu on {g} x {results['gpu']} | CUDA {results['cuda']} | {results['date']} ===")
    header = ["lesson", "variant", "size", "time ms", "value", "% library", "% peak", "us/iter", "compute",
              "comm", "speedup", "efficiency"]
    print_table(f"[multigpu] {g} GPU(s): % library = the library measured in the same run (NCCL, cudaMemcpyPeer) "
                f"or, for the solvers, {g} x the same lesson on one GPU (so it equals the parallel efficiency)",
                header, multigpu_rows(results["records"]))
    for key, what in (("skipped", "SKIPPED"), ("failures", "FAILED")):
        for f in results.get(key, []):
            print(f"  {what}: {f['lesson']}: {f['why']}")


def merge_partial(results, old, entries, keep, lessons=()):
    """A partial tour's `results` merged with the results file `old`: the failures and skipped
    lessons of the lessons not run now are kept, and with `lessons` (a tour of some lessons)
    the file's date, CUDA and device too (those of the tour that measured the rest), the
    lessons run now added to its "updates" list. Returns the old records to keep: those of
    the lessons not run (`entries`) for which keep(record) holds."""
    ran = {(e["track"], e["lesson"]) for e in entries}
    for key in ("failures", "skipped"):
        results[key] = [f for f in old.get(key, []) if (f["track"], f["lesson"]) not in ran] + results[key]
    if lessons:
        update = {"date": results["date"], "gpu": results["device"].get("gpu"), "lessons": list(lessons)}
        for key in ("date", "cuda", "device"):
            if key in old:
                results[key] = old[key]
        results["updates"] = old.get("updates", []) + [update]
    return [r for r in old.get("records", []) if (r["track"], r["lesson"]) not in ran and keep(r)]


def run_multigpu(entries, device, build, results_dir, timeout, wanted_counts, partial=False):
    """Runs the multigpu lessons on every GPU count; writes one results file per count
    (partial: keeps the records of the lessons not run). Returns (files written, failures)."""
    have = gpu_count()
    counts = multigpu_counts(have, wanted_counts)
    written, all_failures = [], []
    if not counts:
        print(f"\nmultigpu: no GPU count to run on ({have} GPU(s) here)")
        return written, all_failures
    out_dir = Path(results_dir) / "multigpu"
    for g in counts:
        jsonl = build / f"tour_records_multigpu_x{g}.jsonl"
        jsonl.unlink(missing_ok=True)
        failures, skipped = [], []
        for e in entries:
            name = f"{e['track']}/{e['lesson']}"
            print(f"\n##### {name} on {g} GPU(s) #####", flush=True)
            start = time.monotonic()
            outcome = "done"
            try:
                p = sh(multigpu_command(e, g, jsonl, timeout), timeout=timeout + 30)
                if p.returncode == SKIP_EXIT:
                    outcome = "SKIPPED"
                    skipped.append({"track": e["track"], "lesson": e["lesson"], "why": f"skipped on {g} GPU(s) (exit 77)"})
                elif p.returncode == 124:  # the launcher's time limit (each rank's watchdog says where it was)
                    outcome = f"TIMED OUT (limit {timeout} s; the watchdog lines above say where each rank was)"
                    failures.append({"track": e["track"], "lesson": e["lesson"], "why": f"timed out on {g} GPU(s)"})
                elif p.returncode != 0:
                    outcome = f"FAILED (exit {p.returncode})"
                    failures.append({"track": e["track"], "lesson": e["lesson"], "why": f"exit code {p.returncode} on {g} GPU(s)"})
            except subprocess.TimeoutExpired:
                outcome = f"TIMED OUT after {timeout + 30} s"
                failures.append({"track": e["track"], "lesson": e["lesson"], "why": f"timed out on {g} GPU(s)"})
            except OSError as err:
                outcome = f"FAILED ({err.strerror or err})"
                failures.append({"track": e["track"], "lesson": e["lesson"], "why": err.strerror or str(err)})
            # One line per program: how long it took, for the time budget of the tour.
            print(f"##### {name} on {g} GPU(s): {outcome} in {time.monotonic() - start:.1f} s", flush=True)
        records = [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()] if jsonl.exists() else []
        all_failures += failures
        out = out_dir / gpu_file_name(device["gpu"]).replace(".json", f"-x{g}.json")
        if not records:
            print(f"multigpu on {g} GPU(s): no program wrote a record; {out} left as it was")
            continue
        results = {"gpu": device["gpu"], "cuda": device["cuda"], "date": device["date"], "device": device, "gpus": g,
                   "records": records, "failures": failures, "skipped": skipped}
        if partial and out.exists():
            names = sorted({f"{e['track']}/{e['lesson']}" for e in entries})
            kept = merge_partial(results, json.loads(out.read_text()), entries, lambda r: True, names)
            results["records"] = sorted(kept + records, key=lambda r: r["lesson"])  # NN_name: the track's order
        out_dir.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=1) + "\n")
        print_multigpu(results)
        print(f"wrote {out}")
        written.append(out)
    return written, all_failures


def fail(message, code=2):
    """One line on stderr instead of a traceback; returns the exit code."""
    print(f"tour: {message}", file=sys.stderr)
    return code


def configure(build):
    """Configures `build` as scripts/tour always has: Release, no checks and no docs (so
    that the tour needs neither Catch2 nor Doxygen), Ninja when it is installed."""
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    return sh(["cmake", "-S", REPO, "-B", build, *gen, "-DCMAKE_BUILD_TYPE=Release",
               "-DTUT_BUILD_CHECKS=OFF", "-DTUT_BUILD_DOCS=OFF"]).returncode


def main(argv=None):
    # No abbreviations: scripts/tour spots --help and --docs-only by their full names.
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 allow_abbrev=False)
    ap.add_argument("--build-dir", default=str(REPO / "build"),
                    help="configured here (without checks and docs) when it has no CMakeCache.txt")
    ap.add_argument("--tracks", default="", help="comma-separated subset of tracks (default: all built)")
    ap.add_argument("--lessons", default="",
                    help="comma-separated lessons (track/NN_name) to run; the results files keep every other "
                         "lesson's records")
    ap.add_argument("--results-dir", default=str(REPO / "results"))
    ap.add_argument("--no-build", action="store_true", help="use the binaries already in --build-dir")
    ap.add_argument("--no-docs", action="store_true",
                    help="do not regenerate the plots, the README table and the lesson tables")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per lesson run")
    ap.add_argument("--gpu-counts", default="",
                    help="multigpu track: comma-separated GPU counts to run on (default 1, 2, 4, ... up to the GPUs here)")
    ap.add_argument("--docs-only", action="store_true",
                    help="run nothing: regenerate the plots, the README table and the lesson tables from the "
                         "results files already in --results-dir (after a tour run with --no-docs)")
    args = ap.parse_args(argv)
    os.environ.update(SAFETY_ENV)
    try:
        wanted_counts = [int(g) for g in args.gpu_counts.split(",") if g.strip()]
    except ValueError:
        return fail(f"--gpu-counts takes whole numbers separated by commas, not '{args.gpu_counts}'")
    if args.docs_only:
        return regenerate_docs(Path(args.results_dir))
    build = Path(args.build_dir)

    if not args.no_build and not (build / "CMakeCache.txt").exists():
        if configure(build):
            return 1
    manifest_file = build / "tut_manifest.json"
    if not manifest_file.exists():
        return fail(f"{manifest_file} not found: {build} is not a configured build of this project"
                    + (" (leave out --no-build to configure and build it)" if args.no_build else ""))
    manifest = json.loads(manifest_file.read_text())
    built = list(dict.fromkeys(e["track"] for e in manifest if e["tree"] == "solutions"))
    tracks = [t for t in args.tracks.split(",") if t]
    unknown = [t for t in tracks if t not in built]
    if unknown:
        return fail(f"unknown track(s) {', '.join(unknown)}; the tracks of {build}: {', '.join(built) or 'none'}")
    entries = [e for e in manifest if e["tree"] == "solutions" and (not tracks or e["track"] in tracks)]
    lessons = [n for n in args.lessons.split(",") if n]
    if lessons:
        known = {f"{e['track']}/{e['lesson']}" for e in entries}
        missing = [n for n in lessons if n not in known]
        if missing:
            return fail(f"unknown lesson(s) {', '.join(missing)} (track/NN_name, among the solutions of {build})")
        entries = [e for e in entries if f"{e['track']}/{e['lesson']}" in lessons]
    if not entries:
        return fail(f"{build} has no solutions to run")

    # device_info alone first: without a GPU the tour stops before compiling any solution.
    if not args.no_build and sh(["cmake", "--build", build, "--target", "device_info"]).returncode:
        return 1
    if not (build / "device_info").exists():
        return fail(f"{build / 'device_info'} not found (leave out --no-build to build it)")
    info = subprocess.run([str(build / "device_info")], capture_output=True, text=True)
    if info.returncode == SKIP_EXIT:
        print(info.stderr.strip() or "SKIPPED: no CUDA GPU")
        print("SKIPPED: the tour runs every solution on the GPU, and no CUDA GPU is usable here (exit 77).")
        return SKIP_EXIT
    if info.returncode != 0:
        print(info.stdout, info.stderr)
        return 1
    device = json.loads(info.stdout)
    if not args.no_build:
        if sh(["cmake", "--build", build, "--target", *[e["target"] for e in entries]]).returncode:
            return 1

    # The multigpu track runs apart, on every GPU count, into results/multigpu/.
    multigpu = [e for e in entries if e.get("launch")]
    entries = [e for e in entries if not e.get("launch")]
    mg_written, mg_failures = [], []
    if multigpu:
        mg_written, mg_failures = run_multigpu(multigpu, device, build, args.results_dir, args.timeout, wanted_counts,
                                               partial=bool(lessons))
        if not entries:
            docs = 0 if args.no_docs or not mg_written else regenerate_docs(Path(args.results_dir))
            return 1 if mg_failures or docs else (0 if mg_written else 1)

    jsonl = build / "tour_records.jsonl"
    jsonl.unlink(missing_ok=True)
    failures, skipped = [], []
    t0 = time.time()
    for e in entries:
        name = f"{e['track']}/{e['lesson']}"
        print(f"\n##### {name} #####", flush=True)
        cmd = [e["exe"], "--json", str(jsonl), *e.get("tour_args", [])]
        try:
            p = sh(cmd, timeout=args.timeout)
            if p.returncode == SKIP_EXIT:  # the lesson needs what this GPU lacks, and said so
                skipped.append({"track": e["track"], "lesson": e["lesson"], "why": "skipped on this GPU (exit 77)"})
            elif p.returncode != 0:
                failures.append({"track": e["track"], "lesson": e["lesson"], "why": f"exit code {p.returncode}"})
        except subprocess.TimeoutExpired:
            failures.append({"track": e["track"], "lesson": e["lesson"], "why": f"timed out after {args.timeout} s"})
        except OSError as err:  # a program missing from the build (--no-build)
            failures.append({"track": e["track"], "lesson": e["lesson"], "why": err.strerror or str(err)})
    print(f"\n(tour ran {len(entries)} programs in {time.time() - t0:.0f} s)")

    records = [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()] if jsonl.exists() else []
    out_dir = Path(args.results_dir)
    out = out_dir / gpu_file_name(device["gpu"])
    if not records:
        # A run that measured nothing must not replace the last good results (nor their date).
        for f in failures:
            print(f"  {f['track']}/{f['lesson']}: {f['why']}")
        return fail(f"no program wrote a record; {out} left as it was", 1)
    results = {"gpu": device["gpu"], "cuda": device["cuda"], "date": device["date"], "device": device,
               "records": records, "failures": failures, "skipped": skipped}
    out_dir.mkdir(parents=True, exist_ok=True)
    if (tracks or lessons) and out.exists():  # a partial tour updates only its tracks' (lessons') records
        kept = merge_partial(results, json.loads(out.read_text()), entries,
                             lambda r: bool(lessons) or r["track"] not in tracks, lessons)
        # Keep the tracks in the build's order (the tables and plots follow the file's order).
        order = list(dict.fromkeys(e["track"] for e in manifest))
        rank = {t: i for i, t in enumerate(order)}
        # ... and each track's lessons in the build's order, where a lesson's records were replaced
        lesson_rank = {(e["track"], e["lesson"]): i for i, e in enumerate(manifest) if e["tree"] == "solutions"}
        results["records"] = sorted(kept + records, key=lambda r: (rank.get(r["track"], len(order)),
                                                                   lesson_rank.get((r["track"], r["lesson"]), 0)
                                                                   if lessons else 0))
    out.write_text(json.dumps(results, indent=1) + "\n")
    print_tour(results)
    print(f"\nwrote {out}")

    docs = 0 if args.no_docs else regenerate_docs(out_dir)
    return 1 if failures or mg_failures or docs else 0


def regenerate_docs(results_dir):
    """Redraws what is generated from every results file of `results_dir` (one per GPU):
    the plots, the README's results table and every lesson README's measured table.
    Returns the exit code: 2 when the folder has no results file, 1 when a generator fails."""
    files = rj.results_files(str(results_dir))
    multigpu_dir = Path(results_dir) / "multigpu"
    multigpu = rj.results_files(str(multigpu_dir))
    if not files and not multigpu:
        # The generators would fall back to results/ (or stop with a usage error).
        return fail(f"no results files (*.json) in {results_dir}")
    mg_args = ["--multigpu-results", multigpu_dir] if multigpu else []
    if files:
        steps = (("plots.py", files + ["--out", REPO / "docs" / "plots"]),
                 ("readme_table.py", files + ["--readme", REPO / "README.md"]),
                 ("lesson_tables.py", ["--results", *files, *mg_args]))
    else:  # only the multigpu track's files: only its lesson tables
        readmes = sorted(str(p) for p in (REPO / "lessons" / "multigpu").glob("*/README.md"))
        steps = (("lesson_tables.py", [*mg_args, *readmes]),)
    failed = []
    for script, script_args in steps:
        if (REPO / "scripts" / script).exists():
            rc = sh([sys.executable, REPO / "scripts" / script, *script_args]).returncode
            if rc:
                failed.append(f"{script} (exit {rc})")
    if failed:
        return fail(f"regenerating the docs failed: {', '.join(failed)}", 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
