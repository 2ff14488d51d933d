"""CPU tests of the Gradescope autograder (autograder/) and the GitHub Classroom config.

validate_gradescope() checks a results.json against the fields, types and values of
Gradescope's autograder specifications. The quick tests cover it, how run_autograder
finds a submission's lessons, its results when grading fails, the zip and the Classroom
files. The end-to-end test (RunAutograder) configures and builds two lessons of a fake
submission, one pristine and one with a compile error, with the GPU hidden so that the
checks skip; it runs when TUT_AUTOGRADER_TEST=1 (CTest's cpu/autograder sets it, with
TUT_AUTOGRADER_WORK for its build dir).
"""
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
AUTOGRADER = REPO / "autograder"

# ---------------------------------------------------------------- Gradescope's format

VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
FORMATS = {"text", "html", "simple_format", "md", "ansi"}
TOP_FIELDS = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
              "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
TEST_FIELDS = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags",
               "visibility", "extra_data"}
TEST_STATUS = {"passed", "failed"}


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def validate_gradescope(data):
    """Problems with a results.json (a parsed object) as Gradescope's autograder
    specifications describe it; an empty list when it is valid."""
    problems = []
    if not isinstance(data, dict):
        return ["results.json is not a JSON object"]
    for key in sorted(set(data) - TOP_FIELDS):
        problems.append(f"unknown top-level field '{key}'")
    if "score" in data and not _number(data["score"]):
        problems.append("score is not a number")
    if "execution_time" in data and not (_number(data["execution_time"]) and data["execution_time"] >= 0):
        problems.append("execution_time is not a number of seconds")
    if "output" in data and not isinstance(data["output"], str):
        problems.append("output is not a string")
    for key in ("output_format", "test_output_format", "test_name_format"):
        if key in data and data[key] not in FORMATS:
            problems.append(f"{key} '{data[key]}' is not one of {sorted(FORMATS)}")
    for key in ("visibility", "stdout_visibility"):
        if key in data and data[key] not in VISIBILITY:
            problems.append(f"{key} '{data[key]}' is not one of {sorted(VISIBILITY)}")
    if "extra_data" in data and not isinstance(data["extra_data"], dict):
        problems.append("extra_data is not an object")
    if "leaderboard" in data:
        board = data["leaderboard"]
        if not isinstance(board, list) or not all(isinstance(e, dict) and isinstance(e.get("name"), str)
                                                  and "value" in e for e in board):
            problems.append("leaderboard is not a list of {name, value} objects")
    tests = data.get("tests")
    if tests is None:
        if "score" not in data:
            problems.append("neither a top-level score nor tests")
        return problems
    if not isinstance(tests, list):
        return problems + ["tests is not a list"]
    for i, t in enumerate(tests):
        where = f"tests[{i}]"
        if not isinstance(t, dict):
            problems.append(f"{where} is not an object")
            continue
        for key in sorted(set(t) - TEST_FIELDS):
            problems.append(f"{where}: unknown field '{key}'")
        if "score" not in data and "score" not in t:
            problems.append(f"{where}: no score, and no top-level score")
        for key in ("score", "max_score"):
            if key in t and not _number(t[key]):
                problems.append(f"{where}: {key} is not a number")
        if _number(t.get("score")) and _number(t.get("max_score")) and not 0 <= t["score"] <= t["max_score"]:
            problems.append(f"{where}: score {t['score']} outside 0..max_score {t['max_score']}")
        if "status" in t and t["status"] not in TEST_STATUS:
            problems.append(f"{where}: status '{t['status']}' is not 'passed' or 'failed'")
        for key in ("name", "number", "output"):
            if key in t and not isinstance(t[key], str):
                problems.append(f"{where}: {key} is not a string")
        for key in ("name_format", "output_format"):
            if key in t and t[key] not in FORMATS:
                problems.append(f"{where}: {key} '{t[key]}' is not one of {sorted(FORMATS)}")
        if "tags" in t and not (isinstance(t["tags"], list) and all(isinstance(x, str) for x in t["tags"])):
            problems.append(f"{where}: tags is not a list of strings")
        if "visibility" in t and t["visibility"] not in VISIBILITY:
            problems.append(f"{where}: visibility '{t['visibility']}' is not one of {sorted(VISIBILITY)}")
        if "extra_data" in t and not isinstance(t["extra_data"], dict):
            problems.append(f"{where}: extra_data is not an object")
    return problems


class Validator(unittest.TestCase):
    def test_the_specifications_example_is_valid(self):
        example = {"score": 44.0, "execution_time": 136, "output": "Text relevant to the entire submission",
                   "output_format": "simple_format", "test_output_format": "text", "test_name_format": "text",
                   "visibility": "after_due_date", "stdout_visibility": "visible", "extra_data": {},
                   "tests": [{"score": 2.0, "max_score": 2.0, "status": "passed", "name": "Your name here",
                              "name_format": "text", "number": "1.1", "output": "Giant multiline string",
                              "output_format": "text", "tags": ["tag1", "tag2"], "visibility": "visible",
                              "extra_data": {}}],
                   "leaderboard": [{"name": "Accuracy", "value": .926}, {"name": "Time", "value": 15.1,
                                                                          "order": "asc"}]}
        self.assertEqual(validate_gradescope(example), [])
        self.assertEqual(validate_gradescope({"tests": [{"name": "Compilation check", "status": "passed",
                                                         "score": 0}]}), [])

    def test_mistakes_are_found(self):
        bad = {"score": "44", "max_score": 50, "visibility": "public", "output_format": "markdown",
               "tests": [{"score": 3, "max_score": 2, "status": "ok", "number": 1.1, "tags": "sgemm",
                          "visibility": "always", "points": 2}]}
        problems = "\n".join(validate_gradescope(bad))
        for needle in ("unknown top-level field 'max_score'", "score is not a number", "visibility 'public'",
                       "output_format 'markdown'", "outside 0..max_score", "status 'ok'", "number is not a string",
                       "tags is not a list", "visibility 'always'", "unknown field 'points'"):
            self.assertIn(needle, problems)
        self.assertTrue(validate_gradescope({"output": "no score at all"}))


# ---------------------------------------------------------------- run_autograder, quick


def load_run_autograder():
    loader = importlib.machinery.SourceFileLoader("run_autograder", str(AUTOGRADER / "run_autograder"))
    spec = importlib.util.spec_from_loader("run_autograder", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class Submission(unittest.TestCase):
    """Where run_autograder finds the lessons in an upload, and what it grades."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        base = Path(self.tmp.name)
        self.ag = load_run_autograder()
        self.ag.SOURCE = base / "source"
        self.ag.SUBMISSION = base / "submission"
        self.ag.WORK = base / "work"
        for track, lesson, src in (("sgemm", "01_naive", "naive.cu"), ("sgemm", "02_unified_memory", "um.cu"),
                                   ("cg", "01_sample", "sample.cu")):
            d = self.ag.SOURCE / "lessons" / track / lesson
            d.mkdir(parents=True)
            (d / src).write_text("// starter\n")
            (d / "README.md").write_text("# lesson\n")
        self.ag.SUBMISSION.mkdir()

    def tearDown(self):
        self.tmp.cleanup()

    def put(self, rel, text="// mine\n"):
        p = self.ag.SUBMISSION / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    def graded(self, track, lesson, src):
        return (self.ag.WORK / "lessons" / track / lesson / src).read_text()

    def test_repository_layout(self):
        self.put("lessons/sgemm/01_naive/naive.cu")
        self.put("lessons/sgemm/01_naive/helpers.cuh", "// a header of mine\n")
        self.put("solutions/sgemm/01_naive/naive.cu", "// not graded\n")
        submitted, notes = self.ag.assemble([], [])
        self.assertEqual(submitted, ["sgemm/01_naive"])
        self.assertEqual(self.graded("sgemm", "01_naive", "naive.cu"), "// mine\n")
        self.assertTrue((self.ag.WORK / "lessons/sgemm/01_naive/helpers.cuh").exists())
        self.assertEqual(self.graded("sgemm", "02_unified_memory", "um.cu"), "// starter\n")
        self.assertIn("found in the submission at 'lessons'", notes[0])
        self.assertIn("2 lesson(s) not submitted", notes[1])

    def test_lessons_folder_itself_and_a_zipped_repository(self):
        self.put("sgemm/02_unified_memory/um.cu")
        self.assertEqual(self.ag.assemble([], [])[0], ["sgemm/02_unified_memory"])
        shutil.rmtree(self.ag.SUBMISSION)
        self.put("tutorial-main/lessons/cg/01_sample/sample.cu")
        submitted, notes = self.ag.assemble([], [])
        self.assertEqual(submitted, ["cg/01_sample"])
        self.assertIn("'tutorial-main/lessons'", notes[0])

    def test_loose_files_are_matched_by_name(self):
        self.put("naive.cu")
        self.put("week2/sample.cu")
        submitted, notes = self.ag.assemble([], [])
        self.assertEqual(sorted(submitted), ["cg/01_sample", "sgemm/01_naive"])
        self.assertIn("matched by name", notes[0])

    def test_a_name_shared_by_two_lessons_is_not_guessed(self):
        for track, lesson in (("cg", "08_persistent"), ("jor", "06_persistent")):
            d = self.ag.SOURCE / "lessons" / track / lesson
            d.mkdir(parents=True)
            (d / "persistent.cu").write_text("// starter\n")
        self.put("persistent.cu")
        self.put("naive.cu")
        submitted, notes = self.ag.assemble([], [])
        self.assertEqual(submitted, ["sgemm/01_naive"])
        self.assertEqual(self.graded("cg", "08_persistent", "persistent.cu"), "// starter\n")
        self.assertEqual(self.graded("jor", "06_persistent", "persistent.cu"), "// starter\n")
        note = next(n for n in notes if "'persistent.cu' was NOT graded" in n)
        self.assertIn("cg/08_persistent, jor/06_persistent", note)
        # its folder decides: the lesson's own name, or the track's
        shutil.rmtree(self.ag.SUBMISSION)
        self.put("week4/08_persistent/persistent.cu", "// cg\n")
        self.put("uploads/jor/persistent.cu", "// jor\n")
        submitted, notes = self.ag.assemble([], [])
        self.assertEqual(sorted(submitted), ["cg/08_persistent", "jor/06_persistent"])
        self.assertEqual(self.graded("cg", "08_persistent", "persistent.cu"), "// cg\n")
        self.assertEqual(self.graded("jor", "06_persistent", "persistent.cu"), "// jor\n")
        self.assertFalse(any("NOT graded" in n for n in notes))
        # only one of them in the assignment: no ambiguity
        shutil.rmtree(self.ag.SUBMISSION)
        self.put("persistent.cu")
        self.assertEqual(self.ag.assemble(["jor"], [])[0], ["jor/06_persistent"])

    def test_tracks_and_only_limit_what_is_reported(self):
        self.put("lessons/sgemm/01_naive/naive.cu")
        _, notes = self.ag.assemble(["sgemm"], ["sgemm/01_naive"])
        self.assertFalse(any("not submitted" in n for n in notes))

    def test_empty_submission(self):
        submitted, notes = self.ag.assemble([], [])
        self.assertEqual(submitted, [])
        self.assertIn("no lesson file found", notes[0])


class AutograderFailure(unittest.TestCase):
    def test_a_malformed_config_still_gives_valid_results(self):
        for text in ("{not json", '["sgemm"]', '{"tracks": "sgemm"}'):
            with tempfile.TemporaryDirectory() as d:
                d = Path(d)
                (d / "source" / "autograder").mkdir(parents=True)
                (d / "source" / "autograder" / "config.json").write_text(text)
                (d / "submission").mkdir()
                env = dict(os.environ, AUTOGRADER_ROOT=str(d), TUT_AG_SOURCE=str(d / "source"))
                env.pop("TUT_AG_TRACKS", None)
                env.pop("TUT_AG_ONLY", None)
                proc = subprocess.run([sys.executable, str(AUTOGRADER / "run_autograder")], env=env,
                                      capture_output=True, text=True, timeout=60)
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                data = json.loads((d / "results" / "results.json").read_text())
                self.assertEqual(validate_gradescope(data), [], text)
                self.assertEqual(data["score"], 0.0)
                self.assertIn("configuration", data["output"], text)

    def run_with_fake_grader(self, grader_source):
        """run_autograder on a one-lesson source tree whose scripts/grade.py is `grader_source`:
        the results.json it wrote, after checking that it exited 0 and that the file is valid."""
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            (d / "source" / "lessons" / "sgemm" / "01_naive").mkdir(parents=True)
            (d / "source" / "lessons" / "sgemm" / "01_naive" / "naive.cu").write_text("//\n")
            (d / "source" / "scripts").mkdir()
            (d / "source" / "scripts" / "grade.py").write_text(grader_source)
            (d / "submission").mkdir()
            env = dict(os.environ, AUTOGRADER_ROOT=str(d), TUT_AG_SOURCE=str(d / "source"))
            proc = subprocess.run([sys.executable, str(AUTOGRADER / "run_autograder")], env=env, capture_output=True,
                                  text=True, timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            data = json.loads((d / "results" / "results.json").read_text())
            self.assertEqual(validate_gradescope(data), [])
            return data

    def test_an_unforeseen_error_still_gives_valid_results(self):
        # a grader whose results.json is not JSON
        data = self.run_with_fake_grader(
            "import sys, pathlib\nout = pathlib.Path(sys.argv[sys.argv.index('--out') + 1])\n"
            "out.mkdir(parents=True)\n(out / 'results.json').write_text('{truncated')\n")
        self.assertEqual(data["score"], 0.0)
        self.assertIn("internal error", data["output"])

    def test_sanitize_follows_tut_ag_sanitize(self):
        grader = ("import json, sys, pathlib\nout = pathlib.Path(sys.argv[sys.argv.index('--out') + 1])\n"
                  "out.mkdir(parents=True)\n(out / 'results.json').write_text(json.dumps("
                  "{'score': 0.0, 'output': ' '.join(sys.argv[1:]), 'tests': []}))\n")
        for value, wanted in (("1", True), ("0", False)):
            saved = os.environ.get("TUT_AG_SANITIZE")
            os.environ["TUT_AG_SANITIZE"] = value
            try:
                data = self.run_with_fake_grader(grader)
            finally:
                if saved is None:
                    del os.environ["TUT_AG_SANITIZE"]
                else:
                    os.environ["TUT_AG_SANITIZE"] = saved
            self.assertEqual("--sanitize" in data["output"], wanted, value)

    def test_a_grader_that_stops_early_still_gives_valid_results(self):
        data = self.run_with_fake_grader("import sys\nprint('cmake: not found')\nsys.exit(1)\n")
        self.assertEqual(data["score"], 0.0)
        self.assertIn("could not grade", data["output"])
        self.assertIn("cmake: not found", data["output"])


class Zip(unittest.TestCase):
    def test_zip_has_the_entry_points_at_its_root_and_no_solutions(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "ag.zip"
            subprocess.run(["bash", str(AUTOGRADER / "build_zip.sh"), "-o", str(out), "--tracks", "sgemm",
                            "--only", "sgemm/01_naive"], check=True, capture_output=True, timeout=120)
            with zipfile.ZipFile(out) as z:
                names = set(z.namelist())
                for needed in ("setup.sh", "run_autograder", "CMakeLists.txt", "scripts/grade.py",
                               "common/include/tut/gpu.hpp", "lessons/sgemm/01_naive/naive.cu",
                               "common/checks/sgemm/lessons.cmake", "autograder/install-cuda-toolkit.sh"):
                    self.assertIn(needed, names)
                self.assertIn("scripts/sanitize.py", names)  # grade.py --sanitize runs it
                self.assertFalse([n for n in names if n.startswith("solutions/") or "__pycache__" in n
                                  or n.startswith("common/checks/wrong/")])
                self.assertTrue((z.getinfo("run_autograder").external_attr >> 16) & 0o111)
                conf = json.loads(z.read("autograder/config.json"))
            self.assertEqual(conf, {"tracks": ["sgemm"], "only": ["sgemm/01_naive"]})

    def test_up_to_ships_the_lessons_up_to_one_and_their_headers(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "ag.zip"
            subprocess.run(["bash", str(AUTOGRADER / "build_zip.sh"), "-o", str(out), "--up-to", "reduction/03",
                            "--tracks", "bandwidth"], check=True, capture_output=True, timeout=120)
            with zipfile.ZipFile(out) as z:
                names = set(z.namelist())
                conf = json.loads(z.read("autograder/config.json"))
        lessons = sorted({"/".join(n.split("/")[1:3]) for n in names if n.startswith("lessons/") and n.count("/") >= 3})
        self.assertEqual(lessons, [f"bandwidth/{l}" for l in sorted(os.listdir(REPO / "lessons" / "bandwidth"))
                                   if (REPO / "lessons" / "bandwidth" / l).is_dir()]
                         + ["reduction/01_interleaved_divergent", "reduction/02_interleaved_strided",
                            "reduction/03_sequential"])
        self.assertEqual(conf, {"tracks": ["reduction", "bandwidth"], "only": [], "up_to": "reduction/03"})
        for shipped in ("common/checks/reduction/check_03_sequential.cpp", "common/include/tut/reduction.hpp",
                        "common/include/tut/bandwidth.hpp", "common/checks/reduction/lessons.cmake"):
            self.assertIn(shipped, names)
        for left_out in ("common/checks/reduction/check_04_first_add_on_load.cpp", "common/checks/cg/lessons.cmake",
                         "common/include/tut/cg.hpp", "common/include/tut/jor.hpp", "common/checks/cpu/check_cg.cpp"):
            self.assertNotIn(left_out, names)
        self.assertFalse([n for n in names if n.startswith(("solutions/", "common/checks/wrong/"))])

    def test_bad_arguments(self):
        for args in (["--tracks", "nosuch"], ["--only", "sgemm/99_none"], ["--bogus"], ["-o"],
                     ["--tracks", "sgemm,bandwidth", "--only", "cg/01_sample"], ["--up-to", "sgemm/99"],
                     ["--up-to", "nosuch/01"], ["--up-to", "sgemm"], ["--up-to", "sgemm/02", "--only", "sgemm/03_unrolling"]):
            proc = subprocess.run(["bash", str(AUTOGRADER / "build_zip.sh"), *args], capture_output=True, text=True,
                                  timeout=60)
            self.assertEqual(proc.returncode, 2, args)
            self.assertIn("build_zip.sh", proc.stderr)


class Classroom(unittest.TestCase):
    def test_template_up_to_one_lesson(self):
        with tempfile.TemporaryDirectory() as d:
            dest = Path(d) / "template"
            proc = subprocess.run([sys.executable, str(AUTOGRADER / "classroom.py"), "--template", str(dest),
                                   "--up-to", "sgemm/03"], capture_output=True, text=True, timeout=120)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            self.assertFalse((dest / "solutions").exists())
            self.assertFalse((dest / "common" / "checks" / "wrong").exists())
            # the experiments' pages ship, their sources (which rebuild lessons' kernels) do not
            self.assertTrue((dest / "docs" / "experiments" / "cg.md").is_file())
            self.assertEqual(list((dest / "docs" / "experiments").glob("*.cu")), [])
            self.assertEqual(sorted(os.listdir(dest / "lessons")), ["sgemm"])
            self.assertEqual(sorted(os.listdir(dest / "lessons" / "sgemm")), ["01_naive", "02_unified_memory",
                                                                             "03_unrolling"])
            data = json.loads((dest / ".github" / "classroom" / "autograding.json").read_text())
            self.assertEqual([t["name"] for t in data["tests"]],
                             ["sgemm/01_naive", "sgemm/02_unified_memory", "sgemm/03_unrolling"])
            self.assertIn("sgemm/03_unrolling", (dest / ".github" / "workflows" / "classroom.yml").read_text())
            # the template's own copy of classroom.py agrees with the files written for it
            proc = subprocess.run([sys.executable, str(dest / "autograder" / "classroom.py"), "--check"],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            # a folder that is not empty is refused
            proc = subprocess.run([sys.executable, str(AUTOGRADER / "classroom.py"), "--template", str(dest)],
                                  capture_output=True, text=True, timeout=120)
            self.assertNotEqual(proc.returncode, 0)
            self.assertIn("not empty", proc.stdout + proc.stderr)

    def test_committed_files_are_current(self):
        proc = subprocess.run([sys.executable, str(AUTOGRADER / "classroom.py"), "--check"], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_one_test_per_lesson(self):
        sys.path.insert(0, str(AUTOGRADER))
        try:
            import classroom
        finally:
            sys.path.pop(0)
        lessons = classroom.lessons()
        self.assertGreaterEqual(len(lessons), 30)
        self.assertIn(("sgemm", "01_naive"), lessons)
        data = json.loads((REPO / ".github" / "classroom" / "autograding.json").read_text())
        self.assertEqual([t["name"] for t in data["tests"]], [f"{t}/{l}" for t, l in lessons])
        for t in data["tests"]:
            self.assertEqual(set(t), {"name", "setup", "run", "input", "output", "comparison", "timeout", "points"})
            self.assertIn(f"--only {t['name']} --require-full", t["run"])
            self.assertEqual(t["points"], 10)
        workflow = (REPO / ".github" / "workflows" / "classroom.yml").read_text()
        ids = re.findall(r"^        id: (\S+)$", workflow, re.M)
        self.assertEqual(ids[0], "student")  # the step that stops in the tutorial's own repository
        ids = ids[1:]
        self.assertEqual(len(ids), len(lessons))
        runners = re.search(r"runners: (\S+)", workflow).group(1).split(",")
        self.assertEqual(runners, ids)
        # install-deps stops without nvcc, so the toolkit is installed first
        toolkit, deps = "autograder/install-cuda-toolkit.sh", "scripts/install-deps"
        setup = data["tests"][0]["setup"]
        self.assertLess(setup.index(toolkit), setup.index(deps))
        tools = re.search(r"^        run: (.*install-deps.*)$", workflow, re.M).group(1)
        self.assertLess(tools.index(toolkit), tools.index(deps))
        for sid in ids:
            self.assertIn(f"{sid.upper()}_RESULTS: \"${{{{steps.{sid}.outputs.result}}}}\"", workflow)
        try:
            import yaml
        except ImportError:
            return
        doc = yaml.safe_load(workflow)
        self.assertEqual(doc["name"], "Autograding Tests")
        self.assertEqual(list(doc["jobs"]), ["run-autograding-tests"])
        steps = doc["jobs"]["run-autograding-tests"]["steps"]
        self.assertTrue(all("if" in step for step in steps[2:]))


# ---------------------------------------------------------------- run_autograder, end to end


@unittest.skipUnless(os.environ.get("TUT_AUTOGRADER_TEST") == "1",
                     "configures an assignment's tree: set TUT_AUTOGRADER_TEST=1 (CTest's cpu/autograder does)")
class UpToTreeConfigures(unittest.TestCase):
    """CMake on the tree of an --up-to zip: the lessons it lacks are skipped, with one line."""

    def test_configure(self):
        if not shutil.which("cmake") or not (shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").exists()):
            self.skipTest("needs cmake and nvcc")
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            subprocess.run(["bash", str(AUTOGRADER / "build_zip.sh"), "-o", str(d / "ag.zip"), "--up-to",
                            "sgemm/02"], check=True, capture_output=True, timeout=120)
            with zipfile.ZipFile(d / "ag.zip") as z:
                z.extractall(d / "src")
            cmd = ["cmake", "-S", str(d / "src"), "-B", str(d / "build"), "-DTUT_BUILD_DOCS=OFF",
                   f"-DTUT_SOLUTIONS_DIR={d / 'src' / 'lessons'}"]
            if not shutil.which("nvcc"):
                cmd.append("-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc")
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
            self.assertIn("Tracks not in this tree, skipped: bandwidth, reduction, cg, jor, multigpu", proc.stdout)
            self.assertIn("Lessons not in this tree, skipped: sgemm/03_unrolling, sgemm/04_multi_output", proc.stdout)
            manifest = json.loads((d / "build" / "tut_manifest.json").read_text())
        self.assertEqual(sorted({e["lesson"] for e in manifest}), ["01_naive", "02_unified_memory"])


BROKEN_LINE = "    const int oops = undeclared_in_this_lesson;  // deliberate compile error\n"


@unittest.skipUnless(os.environ.get("TUT_AUTOGRADER_TEST") == "1",
                     "end-to-end autograder run: set TUT_AUTOGRADER_TEST=1 (CTest's cpu/autograder does)")
class RunAutograder(unittest.TestCase):
    """run_autograder on a submission of two bandwidth lessons (configured with
    TUT_TRACKS=bandwidth): 01_transfers as handed out, 03_gather_divmod with an error."""

    def test_results_json(self):
        if not shutil.which("cmake") or not (shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").exists()):
            self.skipTest("needs cmake and nvcc")
        work = Path(os.environ.get("TUT_AUTOGRADER_WORK") or tempfile.mkdtemp(prefix="tut-autograder-"))
        base = work / "run"
        for sub in ("submission", "results"):
            shutil.rmtree(base / sub, ignore_errors=True)
        sub = base / "submission" / "lessons" / "bandwidth"
        for lesson in ("01_transfers", "03_gather_divmod"):
            shutil.copytree(REPO / "lessons" / "bandwidth" / lesson, sub / lesson)
        src = sub / "03_gather_divmod" / "gather_divmod.cu"
        lines = src.read_text().splitlines(keepends=True)
        at = next(i for i, l in enumerate(lines) if "TODO(exercise)" in l)
        lines.insert(at, BROKEN_LINE)
        src.write_text("".join(lines))
        env = dict(os.environ, AUTOGRADER_ROOT=str(base), TUT_AG_SOURCE=str(REPO), TUT_AG_WORK=str(work / "work"),
                   TUT_AG_TRACKS="bandwidth", TUT_AG_ONLY="bandwidth/01_transfers bandwidth/03_gather_divmod",
                   CUDA_VISIBLE_DEVICES="")  # no GPU: the checks skip even on a GPU machine
        env.setdefault("TUT_AG_JOBS", "2")
        proc = subprocess.run([sys.executable, str(AUTOGRADER / "run_autograder")], env=env, capture_output=True,
                              text=True, timeout=1200)
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
        data = json.loads((base / "results" / "results.json").read_text())
        self.assertEqual(validate_gradescope(data), [], proc.stdout[-3000:])
        self.assertEqual(data["score"], 0.0)
        self.assertIsInstance(data["execution_time"], int)
        self.assertIn("No CUDA GPU", data["output"])
        self.assertIn("Submission: lessons found in the submission at 'lessons'", data["output"])
        by_name = {t["name"].split(" ")[0]: t for t in data["tests"]}
        self.assertEqual(sorted(by_name), ["bandwidth/01_transfers", "bandwidth/03_gather_divmod"])
        skipped = by_name["bandwidth/01_transfers"]
        self.assertEqual((skipped["score"], skipped["max_score"], skipped["status"]), (0.0, 10.0, "failed"))
        self.assertIn("skipped", skipped["tags"])
        self.assertTrue(skipped["output"].startswith("SKIPPED"))
        broken = by_name["bandwidth/03_gather_divmod"]
        self.assertIn("compile_error", broken["tags"])
        first = broken["output"].splitlines()[0]
        self.assertEqual(first, f"bandwidth/03_gather_divmod/gather_divmod.cu:{at + 1}: error: "
                                'identifier "undeclared_in_this_lesson" is undefined')
        self.assertIn("build log:", broken["output"])
        self.assertEqual(data["extra_data"]["submitted_lessons"], ["bandwidth/01_transfers", "bandwidth/03_gather_divmod"])


if __name__ == "__main__":
    unittest.main()
