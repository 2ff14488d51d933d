"""CPU tests of scripts/perf_gates.py: the threshold rule on synthetic reports, the merge with an
existing file, the committed thresholds files (well formed, reproduced from the tour's results
while they still come from it), and the [performance] cases of the check files against them.

Run: python3 -m unittest discover -s scripts -p "test_*.py"
"""
import json
import math
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf_gates  # noqa: E402
import tour  # noqa: E402

REPO = perf_gates.REPO
GPU = "Test GPU 80GB"


def report(gate, ratio, measure="% of cuBLAS FP32", size="N = 4096", **extra):
    r = {"lesson": gate.split(":")[0], "gate": gate, "case": gate + ": speed", "measure": measure, "size": size,
         "ratio": ratio, "status": "unscored", "gpu": GPU, "spread_floor": 0.03}
    r.update(extra)
    return r


class Rule(unittest.TestCase):
    def test_midway_between_the_slowest_run_and_the_previous_approach(self):
        threshold, reason, note, spread = perf_gates.decide([0.83, 0.82, 0.84], 0.62, 0.03, "% of cuBLAS FP32")
        self.assertEqual(reason, "")
        self.assertAlmostEqual(threshold, round((0.82 * 0.62) ** 0.5, 3), places=3)
        self.assertLess(threshold, 0.82 * (1 - 0.03))
        self.assertGreater(threshold, 0.62 * (1 + 0.03))

    def test_too_close_or_slower_is_unscored_with_the_reason(self):
        threshold, reason, _, _ = perf_gates.decide([0.92], 0.90, 0.03, "% of cuBLAS FP32")
        self.assertIsNone(threshold)
        self.assertIn("too close", reason)
        threshold, reason, _, _ = perf_gates.decide([0.78], 0.82, 0.03, "% of cuBLAS FP32")
        self.assertIsNone(threshold)
        self.assertIn("as fast as", reason)

    def test_a_measured_spread_larger_than_the_floor_counts(self):
        # runs 0.70 .. 0.80: spread 0.133 > 0.03; gap 0.70 / 0.62 - 1 = 12.9% < 2 x 13.3%
        threshold, reason, _, spread = perf_gates.decide([0.70, 0.75, 0.80], 0.62, 0.03, "% of cuBLAS FP32")
        self.assertIsNone(threshold)
        self.assertGreater(spread, 0.13)
        # fewer than MIN_RUNS runs: the floor alone
        _, _, _, spread = perf_gates.decide([0.70, 0.80], 0.5, 0.03, "% of cuBLAS FP32")
        self.assertEqual(spread, 0.03)

    def test_no_previous_approach_gates_below_the_solution(self):
        threshold, reason, note, _ = perf_gates.decide([1.0, 1.01, 1.02], None, 0.05, "x speed")
        self.assertEqual(reason, "")
        self.assertAlmostEqual(threshold, 0.9)
        self.assertIn("not measured", note)


class WriteThresholds(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "thresholds", "Test_GPU_80GB.json")
        self.refs = os.path.join(self.tmp.name, "references")  # other GPUs' files; none unless a test writes them
        os.makedirs(self.refs)

    def write(self, reports, out=None):
        return perf_gates.write_thresholds(reports, GPU, out or self.out, reference_dir=self.refs)

    def reference(self, gpu, lessons):
        with open(os.path.join(self.refs, perf_gates.gpu_file_name(gpu)), "w") as f:
            json.dump({"gpu": gpu, "lessons": lessons}, f)

    def tearDown(self):
        self.tmp.cleanup()

    def test_reports_of_several_runs_make_a_file_the_checker_accepts(self):
        reports = []
        for i in range(20):
            reports.append(report("sgemm/10_warp_tiling", 0.62 + 0.001 * (i % 3)))
            reports.append(report("sgemm/11_double_buffering", 0.83 - 0.001 * (i % 4),
                                  previous_from="sgemm/10_warp_tiling"))
            reports.append(report("sgemm/06_granularity", 0.225, previous_measured=0.16))
            reports.append(report("sgemm/14_tuning", 0.92, previous_measured=0.90))
            reports.append(report("cg/10_one_round", 1.59, measure="x the grid-barrier variant's speed per iteration",
                                  size="default problem", previous_measured=1.0, spread_floor=0.05))
        reports.append(dict(report("sgemm/11_double_buffering", 0.1), gpu="Another GPU"))  # not this GPU's
        data = self.write(reports)
        with open(self.out) as f:
            self.assertEqual(json.load(f), data)
        self.assertEqual(perf_gates.check_file(self.out), [])
        lessons = data["lessons"]
        e11 = lessons["sgemm/11_double_buffering"]
        self.assertEqual(e11["runs"], 20)
        self.assertAlmostEqual(e11["previous"], 0.621, places=3)
        self.assertIn("sgemm/10_warp_tiling", e11["previous_source"])
        self.assertGreater(e11["threshold"], e11["previous"])
        self.assertLess(e11["threshold"], e11["solution_min"])
        self.assertIsNone(lessons["sgemm/14_tuning"]["threshold"])
        self.assertTrue(lessons["sgemm/14_tuning"]["reason"])
        # no previous approach for lesson 10 (lesson 09 was not run): a note, and a gate below it
        self.assertIn("note", lessons["sgemm/10_warp_tiling"])
        self.assertAlmostEqual(lessons["cg/10_one_round"]["threshold"], round((1.59 * 1.0) ** 0.5, 2), places=2)
        self.assertTrue(data["source"].startswith("calibration "))
        # the track order: sgemm before cg
        keys = list(lessons)
        self.assertLess(keys.index("sgemm/14_tuning"), keys.index("cg/10_one_round"))

    def test_gates_without_reports_are_kept_and_the_previous_approach_is_remembered(self):
        self.write([report("sgemm/06_granularity", 0.225, previous_measured=0.16),
                    report("sgemm/07_volkov_ilp", 0.44, previous_measured=0.18)])
        data = self.write([report("sgemm/07_volkov_ilp", 0.45)])
        self.assertIn("sgemm/06_granularity", data["lessons"])
        self.assertAlmostEqual(data["lessons"]["sgemm/07_volkov_ilp"]["previous"], 0.18)
        self.assertAlmostEqual(data["lessons"]["sgemm/07_volkov_ilp"]["solution"], 0.45)

    def test_a_gate_whose_runs_gave_no_ratio_is_unscored(self):
        data = self.write([report("cg/08_persistent", None)])
        entry = data["lessons"]["cg/08_persistent"]
        self.assertIsNone(entry["threshold"])
        self.assertIn("no run", entry["reason"])

    def unscored_06(self, previous=0.72, source="measured: lesson 6's kernel with the loop kept"):
        return {"measure": "% of cudaMemcpy D2D bandwidth", "size": "n = 2^26 floats", "solution": 0.72,
                "previous": previous, "previous_source": source, "threshold": None, "source": "tour",
                "reason": "the previous lesson's approach is as fast"}

    def reports_05_06(self):
        red = dict(measure="% of cudaMemcpy D2D bandwidth", size="n = 2^26 floats")
        return ([report("reduction/05_unroll_last_warp", 0.668, **red) for _ in range(5)] +
                [report("reduction/06_complete_unroll", 0.723, previous_from="reduction/05_unroll_last_warp", **red)
                 for _ in range(5)])

    def test_a_gate_every_reference_gpu_leaves_unscored_stays_unscored_on_a_new_gpu(self):
        # Lesson 05's solution in its own case (0.668) stands in for the previous approach, but
        # in lesson 06's own case that approach is as fast as the solution on both references.
        self.reference("GPU A", {"reduction/06_complete_unroll": self.unscored_06()})
        self.reference("GPU B", {"reduction/06_complete_unroll": self.unscored_06(0.54)})
        entry = self.write(self.reports_05_06())["lessons"]["reduction/06_complete_unroll"]
        self.assertIsNone(entry["threshold"])
        self.assertIn("GPU A", entry["reason"])
        self.assertIn("GPU B", entry["reason"])
        self.assertEqual(entry["runs"], 5)
        self.assertEqual(perf_gates.check_file(self.out), [])

    def test_a_reference_that_gates_it_or_a_previous_approach_measured_beside_decides_by_the_rule(self):
        self.reference("GPU A", {"reduction/06_complete_unroll": self.unscored_06()})
        self.reference("GPU B", {"reduction/06_complete_unroll": dict(self.unscored_06(0.6), threshold=0.66)})
        entry = self.write(self.reports_05_06())["lessons"]["reduction/06_complete_unroll"]
        self.assertAlmostEqual(entry["previous"], 0.668)
        self.assertIsNotNone(entry["threshold"])
        os.remove(os.path.join(self.refs, perf_gates.gpu_file_name("GPU B")))
        os.remove(self.out)
        beside = [dict(r, previous_measured=0.5) for r in self.reports_05_06()]
        entry = self.write(beside)["lessons"]["reduction/06_complete_unroll"]
        self.assertAlmostEqual(entry["previous"], 0.5)
        self.assertIsNotNone(entry["threshold"])

    def test_the_faster_of_the_stand_in_and_an_earlier_rendition_in_the_lessons_own_case_counts(self):
        os.makedirs(os.path.dirname(self.out))

        def previous_with(value, source):
            with open(self.out, "w") as f:
                json.dump({"gpu": GPU, "lessons": {"reduction/06_complete_unroll": self.unscored_06(value, source)}}, f)
            return self.write(self.reports_05_06())["lessons"]["reduction/06_complete_unroll"]

        entry = previous_with(0.72, "measured: lesson 6's kernel with the loop kept")  # faster than the stand-in
        self.assertAlmostEqual(entry["previous"], 0.72)
        self.assertTrue(entry["previous_source"].startswith("measured:"))
        self.assertIsNone(entry["threshold"])
        entry = previous_with(0.5, "bank: previous_lesson.diff, 20 runs")  # slower: the stand-in sets the gate
        self.assertAlmostEqual(entry["previous"], 0.668)
        self.assertGreater(entry["threshold"], 0.668)
        entry = previous_with(0.72, "tour: x")  # an earlier tour value gives way to the same runs' stand-in
        self.assertAlmostEqual(entry["previous"], 0.668)

    def test_the_checker_finds_a_threshold_outside_its_bounds(self):
        os.makedirs(os.path.dirname(self.out))
        with open(self.out, "w") as f:
            json.dump({"gpu": GPU, "lessons": {
                "sgemm/11_double_buffering": {"measure": "m", "size": "s", "solution": 0.8, "previous": 0.6,
                                              "threshold": 0.85, "source": "x"},
                "sgemm/13_cp_async": {"measure": "m", "size": "s", "threshold": None, "source": "x"},
                "not a lesson": {"measure": "m", "size": "s", "threshold": 0.5, "source": "x"}}}, f)
        problems = "\n".join(perf_gates.check_file(self.out))
        self.assertIn("not below the solution", problems)
        self.assertIn("unscored without a reason", problems)
        self.assertIn("not a lesson id", problems)


class Summary(unittest.TestCase):
    def test_repeated_runs_are_tallied_per_gate(self):
        reports = [dict(report("sgemm/11_double_buffering", 0.80 + 0.01 * i), status="pass", threshold=0.715)
                   for i in range(3)]
        reports.append(dict(report("sgemm/11_double_buffering", 0.62), status="fail", threshold=0.715))
        reports.append(dict(report("sgemm/14_tuning", 0.92), status="unscored"))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "perf.jsonl")
            with open(path, "w") as f:
                f.write("not json\n" + "".join(json.dumps(r) + "\n" for r in reports))
            lines = perf_gates.summary(perf_gates.read_reports([path]))
        self.assertEqual(len(lines), 2)
        self.assertIn("sgemm/11_double_buffering: 4 runs, 3 pass, 1 fail, 0 unscored; ratio 62% .. 80% .. 82%; "
                      "threshold 72%", lines[0])
        self.assertIn("threshold none", lines[1])


class CommittedFiles(unittest.TestCase):
    def test_the_file_names_are_results_file_names(self):
        for gpu in ("NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA GeForce RTX 4090 (rev. a)"):
            self.assertEqual(perf_gates.gpu_file_name(gpu), tour.gpu_file_name(gpu))

    def test_every_committed_file_is_well_formed(self):
        self.assertEqual(perf_gates.main(["--check"]), 0)

    def test_a_gate_that_needs_confirmation_takes_no_threshold_from_a_tour(self):
        with tempfile.TemporaryDirectory() as tmp:
            data = perf_gates.thresholds_from_tour(os.path.join(REPO, "results", "NVIDIA_H200.json"),
                                                   os.path.join(tmp, "t.json"))
        for gate in ("cg/03_device_pointer_mode", "cg/04_own_dot"):
            e = data["lessons"][gate]
            self.assertIsNone(e["threshold"])
            self.assertTrue(e["reason"].startswith("one tour run ("), e["reason"])
            self.assertIsNotNone(e["solution"])  # the tour's figures stay, for the confirmation to judge
        self.assertIsNotNone(data["lessons"]["jor/04_fused"]["threshold"])

    def test_files_from_the_tour_are_what_the_tour_gives(self):
        for name in sorted(os.listdir(perf_gates.THRESHOLDS_DIR)):
            if not name.endswith(".json"):
                continue
            with open(os.path.join(perf_gates.THRESHOLDS_DIR, name)) as f:
                committed = json.load(f)
            results = os.path.join(REPO, "results", name)
            if not str(committed.get("source", "")).startswith("tour ") or not os.path.exists(results):
                continue  # calibrated since: the instructor's measurements stand
            with tempfile.TemporaryDirectory() as tmp:
                again = perf_gates.thresholds_from_tour(results, os.path.join(tmp, name))
            self.assertEqual(again, committed, "%s is not what scripts/perf_gates.py --from-tour %s writes"
                             % (name, os.path.relpath(results, REPO)))



class Confirmation(unittest.TestCase):
    """A thresholds file after 20 runs of each side (scripts/grade.py --confirm-gates)."""

    def entry(self, threshold=0.7, spread=0.03):
        return {"measure": "% of cuBLAS FP32", "size": "N = 4096", "solution": 0.9, "previous": 0.5,
                "threshold": threshold, "spread": spread, "source": "tour 2026-01-01"}

    def row(self, solution, submission, lesson="sgemm/05_shared_tiling", file="previous_lesson.diff"):
        return {"lesson": lesson, "measure": "% of cuBLAS FP32", "size": "N = 4096", "submission": file,
                "solution_ratios": solution, "submission_ratios": submission}

    def test_a_threshold_that_held_stands_with_its_evidence(self):
        out = perf_gates.confirm_entry(self.entry(), self.row([0.8] * 20, [0.6] * 20), "2026-02-02")
        self.assertEqual(out["threshold"], 0.7)
        self.assertEqual(out["confirmed"]["runs"], 20)
        self.assertEqual(out["confirmed"]["submission_max"], 0.6)

    def test_one_that_held_without_half_the_floor_to_spare_is_set_again(self):
        out = perf_gates.confirm_entry(self.entry(), self.row([0.705] * 20, [0.6] * 20), "2026-02-02")
        self.assertNotIn("confirmed", out)
        self.assertAlmostEqual(out["threshold"], round(math.sqrt(0.705 * 0.6), 3), places=3)
        out = perf_gates.confirm_entry(self.entry(), self.row([0.8] * 20, [0.695] * 20), "2026-02-02")
        self.assertNotIn("confirmed", out)

    def test_one_that_did_not_hold_moves_between_the_ranges_or_goes_unscored(self):
        # one solution run under the threshold: the midpoint of the slowest solution run and the
        # fastest previous run (previous_lesson.diff is sgemm/05's previous-lesson file)
        out = perf_gates.confirm_entry(self.entry(), self.row([0.8] * 19 + [0.68], [0.6] * 20), "2026-02-02")
        self.assertAlmostEqual(out["threshold"], round(math.sqrt(0.68 * 0.6), 3), places=3)
        self.assertEqual(out["source"], "confirmation 2026-02-02")
        self.assertNotIn("confirmed", out)
        self.assertEqual(perf_gates.check_file_entry_problems(out), [])
        # ranges closer than 2 x the spread floor: unscored, with the reason
        out = perf_gates.confirm_entry(self.entry(), self.row([0.8] * 19 + [0.62], [0.6] * 20), "2026-02-02")
        self.assertIsNone(out["threshold"])
        self.assertIn("too close to gate reliably", out["reason"])
        # the previous approach as fast as the solution in some run
        out = perf_gates.confirm_entry(self.entry(), self.row([0.8] * 20, [0.6] * 19 + [0.85]), "2026-02-02")
        self.assertIsNone(out["threshold"])
        self.assertIn("ran as fast as the solution", out["reason"])

    def test_the_previous_lessons_solution_counts_as_the_previous_approach(self):
        earlier = self.row([0.72] * 20, [0.3] * 20, lesson="sgemm/04_multi_output")
        out = perf_gates.confirm_entry(self.entry(), self.row([0.8] * 20, [0.6] * 20), "2026-02-02", earlier)
        self.assertNotIn("confirmed", out)  # 0.72 reaches the gate of 0.7
        self.assertAlmostEqual(out["threshold"], round(math.sqrt(0.8 * 0.72), 3), places=3)
        self.assertIn("sgemm/04_multi_output's solution", out["previous_source"])
        # the same runs carried in the row itself (a previous lesson that has no gate here)
        row = dict(self.row([0.8] * 20, [0.6] * 20), previous_lesson="sgemm/04_multi_output",
                   previous_lesson_ratios=[0.72] * 20)
        self.assertEqual(perf_gates.confirm_entry(self.entry(), row, "2026-02-02")["threshold"], out["threshold"])
        rows = [earlier, self.row([0.8] * 20, [0.6] * 20)]
        self.assertIs(perf_gates.previous_lesson_row(rows[1], rows), earlier)
        self.assertIsNone(perf_gates.previous_lesson_row(earlier, rows))

    def test_too_few_runs_or_another_kind_of_submission_change_nothing(self):
        self.assertIsNone(perf_gates.confirm_entry(self.entry(), self.row([0.68] * 5, [0.6] * 5), "2026-02-02"))
        # bandwidth/03's file is a mistake of its own (kind other), not the previous approach
        row = self.row([0.8] * 19 + [0.68], [0.6] * 20, lesson="bandwidth/03_gather_divmod",
                       file="rows_across_lanes.diff")
        self.assertIsNone(perf_gates.confirm_entry(self.entry(), row, "2026-02-02"))
        # ... unless the previous lesson's solution, measured alike, ran beside it
        row = dict(row, previous_lesson="bandwidth/02_copy_kernels", previous_lesson_ratios=[0.5] * 20)
        out = perf_gates.confirm_entry(self.entry(), row, "2026-02-02")
        self.assertAlmostEqual(out["threshold"], round(math.sqrt(0.68 * 0.5), 3), places=3)
        self.assertEqual(out["previous_source"], "bandwidth/02_copy_kernels's solution, 20 runs")

    def test_an_unscored_gate_gets_a_threshold_when_its_runs_separate(self):
        out = perf_gates.confirm_entry(self.entry(threshold=None), self.row([0.8] * 20, [0.6] * 20), "2026-02-02")
        self.assertAlmostEqual(out["threshold"], round(math.sqrt(0.8 * 0.6), 3), places=3)
        self.assertIn("the gate was unscored before", out["note"])

    def test_confirmations_of_one_gpu_merge_lesson_by_lesson(self):
        a = {"gpu": "G", "date": "2026-02-01", "lessons": [self.row([0.8] * 3, [0.6] * 3, file="old.diff"),
                                                         self.row([0.9], [0.5], lesson="cg/03_x")]}
        b = {"gpu": "G", "date": "2026-02-02T08:00Z", "lessons": [self.row([0.7] * 2, [0.4] * 2)]}
        merged = perf_gates.merge_confirmations([b, a])
        self.assertEqual(merged["date"], "2026-02-02T08:00Z")
        rows = {r["lesson"]: r for r in merged["lessons"]}
        # the solution's runs add up; another bank file's runs do not count for the newest one
        self.assertEqual(rows["sgemm/05_shared_tiling"]["solution_ratios"], [0.8] * 3 + [0.7] * 2)
        self.assertEqual(rows["sgemm/05_shared_tiling"]["submission_ratios"], [0.4] * 2)
        self.assertEqual(rows["sgemm/05_shared_tiling"]["submission"], "previous_lesson.diff")
        self.assertEqual(rows["cg/03_x"]["solution_ratios"], [0.9])
        self.assertEqual(rows["cg/03_x"]["date"], "2026-02-01")  # no newer runs of it
        self.assertEqual(rows["sgemm/05_shared_tiling"]["date"], "2026-02-02T08:00Z")
        b2 = dict(b, lessons=[self.row([0.7] * 2, [0.4] * 2, file="old.diff")])
        rows = {r["lesson"]: r for r in perf_gates.merge_confirmations([a, b2])["lessons"]}
        self.assertEqual(rows["sgemm/05_shared_tiling"]["submission_ratios"], [0.6] * 3 + [0.4] * 2)
        with self.assertRaises(ValueError):
            perf_gates.merge_confirmations([a, dict(b, gpu="H")])

    def test_a_gate_that_changed_its_measure_drops_its_older_runs(self):
        a = {"gpu": "G", "date": "2026-02-01", "lessons": [dict(self.row([0.02] * 3, [0.5] * 3), measure="% of x")]}
        b = {"gpu": "G", "date": "2026-02-02T08:00Z", "lessons": [self.row([0.8] * 2, [0.6] * 2)]}
        row = perf_gates.merge_confirmations([a, b])["lessons"][0]
        self.assertEqual((row["solution_ratios"], row["submission_ratios"]), ([0.8] * 2, [0.6] * 2))

    def test_only_runs_newer_than_the_threshold_can_confirm_it(self):
        with tempfile.TemporaryDirectory() as d:
            thresholds = os.path.join(d, "G.json")
            paths = [os.path.join(d, n) for n in ("a.json", "b.json", "c.json")]

            def write(path, date, solution, submission):
                with open(path, "w") as f:
                    json.dump({"gpu": "G", "date": date, "lessons": [self.row(solution, submission)]}, f)

            def entry():
                with open(thresholds) as f:
                    return json.load(f)["lessons"]["sgemm/05_shared_tiling"]

            with open(thresholds, "w") as f:
                json.dump({"gpu": "G", "source": "tour 2026-01-01",
                           "lessons": {"sgemm/05_shared_tiling": self.entry(threshold=0.9)}}, f)
            # 20 runs that move the threshold to their midpoint, sqrt(0.8 x 0.6)
            write(paths[0], "2026-02-01T08:00Z", [0.8] * 20, [0.6] * 20)
            perf_gates.apply_confirmation(paths[:1], thresholds)
            self.assertEqual(entry()["source"], "confirmation 2026-02-01T08:00Z")
            # 9 later runs held: with the 20 that set it they would be 29, but only the 9 count
            write(paths[1], "2026-02-02T08:00Z", [0.8] * 9, [0.6] * 9)
            what = perf_gates.apply_confirmation(paths[:2], thresholds)
            self.assertTrue(what["sgemm/05_shared_tiling"].startswith("unchanged"))
            self.assertNotIn("confirmed", entry())
            # 11 more: 20 later runs confirm it, the evidence theirs alone
            write(paths[2], "2026-02-03T08:00Z", [0.75] * 11, [0.62] * 11)
            what = perf_gates.apply_confirmation(paths, thresholds)
            self.assertEqual(what["sgemm/05_shared_tiling"], "confirmed")
            self.assertEqual((entry()["confirmed"]["runs"], entry()["confirmed"]["solution_min"]), (20, 0.75))
            self.assertEqual(entry()["confirmed"]["submission_max"], 0.62)

    def test_applied_twice_from_the_same_runs_it_changes_nothing_more(self):
        with tempfile.TemporaryDirectory() as d:
            thresholds = os.path.join(d, "G.json")
            with open(thresholds, "w") as f:
                json.dump({"gpu": "G", "source": "tour 2026-01-01",
                           "lessons": {"sgemm/05_shared_tiling": self.entry()}}, f)
            conf = os.path.join(d, "c.json")
            with open(conf, "w") as f:
                json.dump({"gpu": "G", "date": "2026-02-02T08:00Z",
                           "lessons": [self.row([0.8] * 19 + [0.68], [0.6] * 20)]}, f)
            what = perf_gates.apply_confirmation([conf], thresholds)
            self.assertTrue(what["sgemm/05_shared_tiling"].startswith("threshold "))
            with open(thresholds) as f:
                first = f.read()
            self.assertIn("confirmation 2026-02-02T08:00Z", first)
            perf_gates.apply_confirmation(conf, thresholds)
            with open(thresholds) as f:
                self.assertEqual(f.read(), first)



def mg_record(lesson, variant, size, **fields):
    extra = fields.pop("extra", {})
    r = {"track": "multigpu", "lesson": lesson, "variant": variant, "size": size, "extra": dict(extra, gpus=2)}
    r.update(fields)
    return r


class MultigpuGates(unittest.TestCase):
    """The multigpu gates come from the 2-GPU tour beside the single-GPU results file."""

    def tours(self, gpu=GPU, gpus=2):
        single = {"gpu": gpu, "date": "2026-01-01", "records": []}
        multi = {"gpu": gpu, "gpus": gpus, "date": "2026-01-02",
                 "updates": [{"date": "2026-01-03", "gpu": gpu, "lessons": ["multigpu/02_allreduce"]}],
                 "records": [
                     mg_record("02_allreduce", "nccl", "268435456", ratio_to_library=1.0),
                     mg_record("02_allreduce", "gather", "268435456", ratio_to_library=0.56),
                     mg_record("02_allreduce", "ring", "268435456", ratio_to_library=0.93),
                     mg_record("02_allreduce", "ring", "67108864", ratio_to_library=0.5),
                     mg_record("05_overlap", "sequential", "weak", extra={"us_per_iter": 300.0}),
                     mg_record("05_overlap", "overlap", "weak", extra={"us_per_iter": 250.0}),
                 ]}
        return single, multi

    def test_the_ring_against_nccl_and_the_overlap_against_sequential(self):
        single, multi = self.tours()
        reports, missing = perf_gates.reports_from_tour(single, multi)
        by_gate = {r["gate"]: r for r in reports}
        ring = by_gate["multigpu/02_allreduce"]
        self.assertAlmostEqual(ring["ratio"], 0.93)
        self.assertAlmostEqual(ring["previous_measured"], 0.56)
        self.assertEqual(ring["size"], "256 MiB, 2 GPUs")
        self.assertEqual(ring["source_label"], "tour 2026-01-03, 2 GPUs")  # the lesson's update
        overlap = by_gate["multigpu/05_overlap"]
        self.assertAlmostEqual(overlap["ratio"], 300.0 / 250.0)
        self.assertEqual(overlap["previous_measured"], 1.0)
        self.assertEqual(overlap["spread_floor"], perf_gates.HOST_SPREAD)
        self.assertEqual(overlap["source_label"], "tour 2026-01-02, 2 GPUs")
        self.assertNotIn("multigpu/02_allreduce", [s["gate"] for s in missing])
        # Without the multigpu tour the gates are missing, not read from the single-GPU file.
        _, missing = perf_gates.reports_from_tour(single)
        self.assertTrue({"multigpu/02_allreduce", "multigpu/05_overlap"} <= {s["gate"] for s in missing})

    def test_from_tour_finds_the_two_gpu_tour_beside_the_results(self):
        single, multi = self.tours()
        with tempfile.TemporaryDirectory() as tmp:
            stem = perf_gates.gpu_file_name(GPU)[:-len(".json")]
            os.makedirs(os.path.join(tmp, "multigpu"))
            with open(os.path.join(tmp, stem + ".json"), "w") as f:
                json.dump(single, f)
            with open(os.path.join(tmp, "multigpu", stem + "-x2.json"), "w") as f:
                json.dump(multi, f)
            out = os.path.join(tmp, "out", stem + ".json")
            os.makedirs(os.path.dirname(out))
            data = perf_gates.thresholds_from_tour(os.path.join(tmp, stem + ".json"), out)
            ring = data["lessons"]["multigpu/02_allreduce"]
            self.assertAlmostEqual(ring["threshold"], perf_gates.round3((0.93 * 0.56) ** 0.5))
            self.assertEqual(ring["source"], "tour 2026-01-03, 2 GPUs")
            self.assertEqual(data["source"], "tour 2026-01-01")  # the file's: the single-GPU tour
            # 1.2x against 1.0x is more than twice the 5% spread of host-paced solves: gated
            self.assertAlmostEqual(data["lessons"]["multigpu/05_overlap"]["threshold"],
                                   perf_gates.round3(1.2 ** 0.5))
            self.assertEqual(perf_gates.check_file(out), [])
            # A tour on another GPU count is refused: its thresholds would not be the 2-GPU ones.
            with open(os.path.join(tmp, "x4.json"), "w") as f:
                json.dump(self.tours(gpus=4)[1], f)
            with self.assertRaises(ValueError):
                perf_gates.thresholds_from_tour(os.path.join(tmp, stem + ".json"), os.path.join(tmp, "u.json"),
                                                os.path.join(tmp, "x4.json"))

    def test_a_gate_beside_a_baseline_reads_its_own_record_else_the_earlier_lessons(self):
        def rec(lesson, variant, us):
            return {"track": "jor", "lesson": lesson, "variant": variant, "size": "512 float",
                    "extra": {"us_per_iter": us}}
        spec = next(s for s in perf_gates.TOUR_GATES if s["gate"] == "jor/05_graph_loop")
        self.assertEqual(spec["measure"], "x the one-look-per-sweep variant's speed per iteration")
        results = {"records": [rec("04_fused", "fused", 20.0), rec("05_graph_loop", "while graph", 10.0)]}
        read = perf_gates._reader(spec, results)
        self.assertAlmostEqual(read(perf_gates.find_record(results, spec["record"])), 2.0)
        results["records"].append(rec("05_graph_loop", "one look per sweep", 15.0))  # the same run's own baseline
        self.assertAlmostEqual(read(perf_gates.find_record(results, spec["record"])), 1.5)

    def test_from_tour_only_rewrites_the_gates_it_names(self):
        single, multi = self.tours()
        with tempfile.TemporaryDirectory() as tmp:
            stem = perf_gates.gpu_file_name(GPU)[:-len(".json")]
            results = os.path.join(tmp, stem + ".json")
            with open(results, "w") as f:
                json.dump(single, f)
            out = os.path.join(tmp, "t.json")
            with open(out, "w") as f:
                json.dump({"gpu": GPU, "source": "tour 2025-12-31",
                           "lessons": {"multigpu/05_overlap": {"measure": "m", "size": "s", "threshold": 9.0},
                                       "sgemm/05_shared_tiling": {"measure": "m", "size": "s", "threshold": 0.5}}}, f)
            data = perf_gates.thresholds_from_tour(results, out,
                                                   only=["sgemm/05_shared_tiling"])
            self.assertEqual(data["lessons"]["multigpu/05_overlap"]["threshold"], 9.0)  # kept as it was
            self.assertEqual(data["source"], "tour 2025-12-31")
            self.assertNotEqual(data["lessons"]["sgemm/05_shared_tiling"]["measure"], "m")
            with self.assertRaises(ValueError):
                perf_gates.thresholds_from_tour(results, out, only=["sgemm/99_none"])

    def test_committed_multigpu_gates_name_two_gpus(self):
        for gpu_file in ("NVIDIA_H100_80GB_HBM3.json", "NVIDIA_H200.json"):
            with open(os.path.join(perf_gates.THRESHOLDS_DIR, gpu_file)) as f:
                lessons = json.load(f)["lessons"]
            for gate in ("multigpu/02_allreduce", "multigpu/05_overlap"):
                with self.subTest(gpu=gpu_file, gate=gate):
                    self.assertIn(gate, lessons)
                    self.assertTrue(lessons[gate]["size"].endswith(", 2 GPUs"))
                    self.assertTrue(lessons[gate]["source"].endswith(", 2 GPUs"))


def performance_cases():
    """(lesson, measure literals, size literals) of every check file with a [performance] case."""
    found = []
    checks = os.path.join(REPO, "common", "checks")
    for track in sorted(os.listdir(checks)):
        folder = os.path.join(checks, track)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            m = re.match(r"check_(\d\d_\w+)\.cpp$", name)
            if not m:
                continue
            with open(os.path.join(folder, name)) as f:
                text = f.read()
            if "[performance]" not in text or not re.search(r"\b(perf_gate|mg_perf)::", text):
                continue  # a speed check of its own, without a threshold
            measures = re.findall(r'\bmeasure = "([^"]*)"', text)
            sizes = [lit for stmt in re.findall(r'\bsize = ([^;]*);', text) for lit in re.findall(r'"([^"]*)"', stmt)]
            found.append(("%s/%s" % (track, m.group(1)), measures, sizes))
    return found


class PerformanceCases(unittest.TestCase):
    def test_every_performance_case_has_an_entry_of_its_measure_and_size(self):
        cases = performance_cases()
        self.assertGreater(len(cases), 30)
        for gpu_file in ("NVIDIA_H100_80GB_HBM3.json", "NVIDIA_H200.json"):
            with open(os.path.join(perf_gates.THRESHOLDS_DIR, gpu_file)) as f:
                lessons = json.load(f)["lessons"]
            for lesson, measures, sizes in cases:
                with self.subTest(lesson=lesson, gpu=gpu_file):
                    self.assertTrue(lesson in lessons, "a [performance] case without thresholds")
                    self.assertTrue(lessons[lesson]["measure"] in measures,
                                    "%r not among the case's measures %r" % (lessons[lesson]["measure"], measures))
                    self.assertTrue(lessons[lesson]["size"] in sizes,
                                    "%r not among the case's sizes %r" % (lessons[lesson]["size"], sizes))

    def test_every_gate_has_its_case(self):
        lessons = {lesson for lesson, _, _ in performance_cases()}
        for spec in perf_gates.TOUR_GATES:
            self.assertIn(spec["gate"].split(":")[0], lessons)


if __name__ == "__main__":
    unittest.main()


class GatesTable(unittest.TestCase):
    def test_cells(self):
        scored = {"measure": "% of cuBLAS FP32", "threshold": 0.72, "solution": 0.82, "previous": 0.62}
        self.assertEqual(perf_gates.gate_cell(scored), "**72%** (82% / 62%)")
        speed = {"measure": "x the double variant's speed", "threshold": 1.37, "solution": 1.86, "previous": 1.0}
        self.assertEqual(perf_gates.gate_cell(speed), "**1.37x** (1.86x / 1.00x)")
        self.assertEqual(perf_gates.gate_cell({"measure": "%", "threshold": None, "solution": 0.8}), "unscored")
        self.assertEqual(perf_gates.gate_cell({"measure": "%", "threshold": None, "solution": None}),
                         "not measured yet")

    def test_committed_readme_table_is_current(self):
        path = os.path.join(perf_gates.THRESHOLDS_DIR, "README.md")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(perf_gates.readme_with_table(text, perf_gates.gates_table()), text,
                         "the table of gates in %s is stale: run scripts/perf_gates.py --readme" % path)
