"""CPU tests of the Gradescope results format.

validate_gradescope() checks a results.json against the fields, types and values of
Gradescope's autograder specifications.
"""
import unittest

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


if __name__ == "__main__":
    unittest.main()
