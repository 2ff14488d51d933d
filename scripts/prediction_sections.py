#!/usr/bin/env python3
"""Checks that every lesson README asks for a prediction and stops there.

    scripts/prediction_sections.py [--root DIR] [--tracks a,b] [README ...]

A lesson README (lessons/<track>/<NN_name>/README.md) asks the student to write down a
number, with its reason, before the measured table; the model's own derivation and its
number come after the table, under "Did the prediction hold?". This script holds every
lesson README to that shape:

- Exactly one prediction section: a `##` or `###` heading that starts with "Predict"
  ("## Prediction", "## Predict first") or "Before you run". It ends at the next heading
  of the same or a higher level, or at the measured table, and it must come before the
  measured table.
- A measured table: the `<!-- measured:begin ... -->` / `<!-- measured:end -->` block that
  scripts/lesson_tables.py fills.
- Exactly one "Did the prediction hold?" (or "Did it hold?") after the measured table: a
  heading (`##` to `####`) or a paragraph that opens with it in bold.
- The prediction section gives inputs, not the answer. Its text (inline code, fenced
  code, link targets and HTML comments left out) may hold sizes (`N = 4096`), byte counts
  (64 MiB), hardware figures with their unit (3,352 GB/s, 132 SMs), lesson numbers and
  plain counts. It fails on a sentence that states a result:
    * a percentage ("80%", "a few percent", "a few points");
    * a speedup ("1.6x", "2 x faster", "3 times slower");
    * an approximate or expected figure: "about", "around", "roughly", "nearly",
      "close to", "of the order of", "~", "≈", "expect", "predict", "guess" or "estimate"
      followed within three words by a number or a number word ("about a tenth",
      "expect 1.1 ms"), byte counts, sizes and lesson numbers after them excepted;
    * a range with a unit ("1.1 to 1.3 ms", "50-57 GB/s");
    * a computed result: `... x 2 = 12.5` (an "=" whose left side is not a plain name,
      as `N = 4096` is);
    * an announced answer ("Ours:", "the model's number", "The model:"), with or without
      a figure.
  A clause (between commas, semicolons and colons) that names an earlier lesson
  ("lesson 10's warp 32x64 reached about 60% of cuBLAS") quotes a measurement the
  student needs, and is exempt from the first five rules, unless it also compares
  ("faster than lesson 04", "a gain over") or speaks of expecting, predicting or the
  model. A lesson's own number is no earlier lesson.

Prints `path:line: what is wrong` for each finding and exits 1 when there is one, 0 when
every README checked passes; 2 for a track that does not exist. Without README paths it
reads every lesson README of the tracks (--tracks, default all of lessons/).
"""
import argparse
import os
import re
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LESSON_DIR = re.compile(r"^(\d+)_\w+$")

PREDICTION_HEADING = re.compile(r"^(#{2,3})\s+(?:predict\w*|before you run)\b", re.IGNORECASE)
HEADING = re.compile(r"^(#{1,6})\s")
HOLD = re.compile(r"^(?:#{2,4}\s+|\*\*\s*)did (?:the prediction|it) hold\?", re.IGNORECASE)
BEGIN = "<!-- measured:begin"
END = "<!-- measured:end -->"
FENCE = re.compile(r"^\s*(```|~~~)")

NUMBER_WORDS = (r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|"
                r"hundred|hundreds|thousand|thousands|dozen|dozens|half|halves|third|thirds|quarter|quarters|"
                r"fifth|fifths|tenth|tenths|hundredth|twice|thrice")
NUMBER = re.compile(r"^(?:\d[\d,.]*|(?:" + NUMBER_WORDS + r"))$", re.IGNORECASE)
# Units that make a number a size or a byte count, which a prediction may quote.
SIZE_UNITS = {"b", "byte", "bytes", "kb", "kib", "mb", "mib", "gb", "gib", "tb", "tib", "kbyte", "mbyte",
              "elements", "element", "floats", "float", "doubles", "rows", "columns", "bits", "bit"}

PERCENT = re.compile(r"(?<![\w.,])\d[\d,.]*\s*%|\bper\s?cent\b"
                     r"|\b(?:\d[\d.]*|a few|several|a couple of)\s+(?:percentage\s+)?points?\b", re.IGNORECASE)
SPEEDUP = re.compile(r"(?<![\w.])\d+(?:\.\d+)?[x\u00d7](?![\w])"
                     r"|(?<![\w.])\d+(?:\.\d+)?\s[x\u00d7]\s+(?:faster|slower|speedup|better|worse|over)\b"
                     r"|\b(?:\d+(?:\.\d+)?|" + NUMBER_WORDS + r")\s+times\s+(?:faster|slower|as\b|more|less|fewer|"
                     r"higher|lower|larger|smaller|better|worse|lesson|that of|over)",
                     re.IGNORECASE)
APPROX = re.compile(r"(?:\babout|\baround|\broughly|\bapproximately|\bapprox\.?|\bnearly|\balmost|\bclose to|"
                    r"\bof the order of|\border of|~|\u2248|\u2243|\u223c|\bexpect\w*|\bpredict\w*|"
                    r"\bguess\w*|\bestimat\w*)(?=[\s\d])",
                    re.IGNORECASE)
RANGE = re.compile(r"(?<![\w.])\d[\d,.]*\s*(?:to|-|\u2013)\s*\d[\d,.]*\s*"
                   r"(?:%|x\b|\u00d7|ms\b|\u00b5s\b|us\b|ns\b|s\b|[kMGT]B/s|[kMGT]iB/s|[GT]FLOP/s|times\b)")
EQUALS = re.compile(r"(?<![=!<>])=(?!=)\s*[~\u2248]?\s*(\d)")
ANNOUNCED = re.compile(r"\bours\s*:|\bour (?:answer|guess|prediction|estimate|number|figure)s?\b|"
                       r"\bthe model(?:'s|\u2019s)? (?:answer|number|guess|prediction|estimate|figure|result)s?\b|"
                       r"\bthe model\s*:", re.IGNORECASE)
EARLIER_LESSON = re.compile(r"\blessons?\s+(\d+)\b", re.IGNORECASE)
ANSWER_WORDS = re.compile(r"\b(?:expect\w*|predict\w*|model\w*|guess\w*|estimat\w*|ours?|we|should|would|will|"
                          r"likely|probably|hence|therefore|faster|slower|than|over|gains?|speedup|better|worse)\b",
                          re.IGNORECASE)
INLINE_CODE = re.compile(r"`[^`]*`")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+", re.MULTILINE)
EMPHASIS = re.compile(r"[*\\]")
SENTENCE_END = re.compile(r"[.!?](?=\s+\S)")
ABBREVIATIONS = ("e.g", "i.e", "vs", "cf", "etc", "approx", "fig", "no", "eq")
CLAUSE_END = re.compile(r"[,;:](?=\s)|\s(?=(?:so|which|hence|thus|therefore)\b)")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def lesson_readmes(root, tracks=None):
    """Every lessons/<track>/<NN_name>/README.md of the given tracks (all when None), sorted."""
    top = os.path.join(root, "lessons")
    found = []
    names = sorted(os.listdir(top)) if os.path.isdir(top) else []
    for track in names if tracks is None else tracks:
        folder = os.path.join(top, track)
        if not os.path.isdir(folder):
            raise ValueError("no track '%s' under %s" % (track, top))
        for lesson in sorted(os.listdir(folder)):
            path = os.path.join(folder, lesson, "README.md")
            if LESSON_DIR.match(lesson) and os.path.isfile(path):
                found.append(path)
    return found


def lesson_number(path):
    m = LESSON_DIR.match(os.path.basename(os.path.dirname(path)))
    return int(m.group(1)) if m else None


def blank(text, pattern, keep=""):
    """`text` with every match of `pattern` turned into spaces (newlines kept), so offsets hold."""
    def spaces(m):
        return "".join(c if c == "\n" or c in keep else " " for c in m.group(0))
    return pattern.sub(spaces, text)


def clean(text):
    """The prose of a paragraph, same length: comments, inline code, link targets, list markers
    and emphasis marks turned into spaces."""
    for pattern in (COMMENT, INLINE_CODE, LINK_TARGET, LIST_ITEM, EMPHASIS):
        text = blank(text, pattern, "]" if pattern is LINK_TARGET else "")
    return text


def paragraphs(numbered_lines):
    """[(cleaned text, first line number)]: paragraphs, list items and table rows."""
    out, block = [], []

    def flush():
        if block:
            out.append((clean("\n".join(line for _, line in block)), block[0][0]))
            block.clear()

    for number, line in numbered_lines:
        if not line.strip():
            flush()
            continue
        if line.lstrip().startswith("|") or LIST_ITEM.match(line):
            flush()
        block.append((number, line))
        if line.lstrip().startswith("|"):
            flush()
    flush()
    return out


def spans(text, pattern, start=0, stop=None):
    """[(begin, end)] of the pieces of text[start:stop] between matches of `pattern`."""
    stop = len(text) if stop is None else stop
    out, begin = [], start
    for m in pattern.finditer(text, start, stop):
        if pattern is SENTENCE_END:
            word = re.search(r"([\w.]+)$", text[begin:m.start()])
            if word and word.group(1).lower().rstrip(".") in ABBREVIATIONS:
                continue
        out.append((begin, m.end()))
        begin = m.end()
    out.append((begin, stop))
    return [(b, e) for b, e in out if text[b:e].strip()]


def number_after(text, start, words=3):
    """The first number within `words` words after text[start:], unless it is a size, a byte
    count, a parameter's value (`N = 4096`) or a lesson number: (offset, token), or None."""
    tokens = list(re.finditer(r"\S+", text[start:]))[:words + 1]
    for i, t in enumerate(tokens[:words]):
        token = t.group(0).strip("(),;:.!?")
        if NUMBER.match(token):
            before = tokens[i - 1].group(0).lower().strip("(") if i > 0 else ""
            after = tokens[i + 1].group(0).lower().strip("(),;:.") if i + 1 < len(tokens) else ""
            if before not in ("lesson", "lessons", "=") and after not in SIZE_UNITS:
                return start + t.start(), token
        if re.search(r"[.;!?]$", t.group(0)):
            return None  # the clause ends before a number
    return None


def quotes_earlier_lesson(clause, own_lesson):
    """True when a clause names an earlier lesson and does not speak of expecting or the model:
    its figures are that lesson's measurements, which a prediction may use."""
    named = [int(n) for n in EARLIER_LESSON.findall(clause)]
    return any(n != own_lesson for n in named) and not ANSWER_WORDS.search(clause)


def paragraph_findings(text, first_line, own_lesson):
    """[(line, matched text, rule)] for what one paragraph of a prediction section states."""
    found = []

    def add(offset, match, rule):
        found.append((first_line + text.count("\n", 0, offset), " ".join(match.split()), rule))

    for m in ANNOUNCED.finditer(text):
        add(m.start(), m.group(0), "announces the answer")
    for s_begin, s_end in spans(text, SENTENCE_END):
        clauses = spans(text, CLAUSE_END, s_begin, s_end)
        exempt = [(b, e) for b, e in clauses if quotes_earlier_lesson(text[b:e], own_lesson)]

        def quoted(offset):
            return any(b <= offset < e for b, e in exempt)

        hits = []
        for pattern, rule in ((PERCENT, "a percentage"), (SPEEDUP, "a speedup"), (RANGE, "a range of results")):
            hits += [(m.start(), m.group(0), rule) for m in pattern.finditer(text, s_begin, s_end)]
        for m in APPROX.finditer(text, s_begin, s_end):
            hit = number_after(text[:s_end], m.end())
            if hit:
                hits.append((m.start(), text[m.start():hit[0] + len(hit[1])], "an approximate or expected figure"))
        for m in EQUALS.finditer(text, s_begin, s_end):
            left = text[s_begin:m.start()].split()
            last = left[-1] if left else ""
            prior = left[-2] if len(left) > 1 else ""
            if re.fullmatch(r"[A-Za-z_][\w']*", last) and not NUMBER.match(prior.strip("(,")):
                continue  # a parameter's value: N = 4096, kMulti = 8
            shown = " ".join(left[-4:]) + " = " + re.match(r"[\d,.]*", text[m.start(1):]).group(0)
            hits.append((m.start(), shown, "a computed result"))
        for offset, match, rule in hits:
            if not quoted(offset):
                add(offset, match, rule)
    return found


def structure(lines):
    """(prediction headings [(index, level)], measured (first begin, last end) or None, holds
    [index]), fenced code and the generated blocks' insides skipped."""
    predictions, holds = [], []
    begin = end = None  # the first block's begin, the last block's end
    fenced = inside = False
    for i, line in enumerate(lines):
        if FENCE.match(line) and not inside:
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.startswith(BEGIN):
            begin = i if begin is None else begin
            inside = True
            continue
        if line.strip() == END:
            end = i
            inside = False
            continue
        if inside:
            continue  # a generated block
        m = PREDICTION_HEADING.match(line)
        if m:
            predictions.append((i, len(m.group(1))))
        if HOLD.match(line):
            holds.append(i)
    measured = (begin, end) if begin is not None and end is not None else None
    return predictions, measured, holds


def section_lines(lines, start, level):
    """[(line number, line)] of the section under the heading at `start`."""
    out = []
    fenced = False
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        m = HEADING.match(line)
        if (m and len(m.group(1)) <= level) or line.startswith(BEGIN):
            break
        if m:
            continue
        out.append((i + 1, line))
    return out


def check_readme(path, root):
    """The findings of one README, in line order."""
    rel = os.path.relpath(path, root)
    lines = read(path)
    out = []

    def add(line, message):
        out.append((line, f"{rel}:{line}: {message}"))

    predictions, measured, holds = structure(lines)
    if not predictions:
        add(1, "no prediction section (a '## Prediction' heading before the measured table)")
    for i, _ in predictions[1:]:
        add(i + 1, "a second prediction section; a lesson has exactly one")
    if measured is None:
        add(1, f"no measured table ({BEGIN} ... --> and {END})")
    else:
        if predictions and predictions[0][0] > measured[0]:
            add(predictions[0][0] + 1, "the prediction section comes after the measured table")
        after = [i for i in holds if i > measured[1]]
        if not after:
            add(measured[1] + 1, "no 'Did the prediction hold?' after the measured table (a heading, or a paragraph "
                                 "that opens with it in bold, with the model's derivation and its number)")
        for i in after[1:]:
            add(i + 1, "a second 'Did the prediction hold?'; a lesson has exactly one")
        for i in holds:
            if i < measured[0]:
                add(i + 1, "'Did the prediction hold?' before the measured table")
    if predictions:
        start, level = predictions[0]
        seen = set()
        for text, first_line in paragraphs(section_lines(lines, start, level)):
            for line, match, rule in paragraph_findings(text, first_line, lesson_number(path)):
                if (line, match) not in seen:
                    seen.add((line, match))
                    add(line, f"the prediction section states a result ({rule}: \"{match}\"); give the inputs "
                              "there, and the model's figure under 'Did the prediction hold?'")
    return [message for _, message in sorted(out, key=lambda item: item[0])]


def findings(root, tracks=None, paths=None):
    paths = paths if paths else lesson_readmes(root, tracks)
    out = []
    for path in paths:
        out += check_readme(path, root)
    return out, len(paths)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="lesson READMEs (default: every lesson README of the tracks)")
    parser.add_argument("--root", default=REPO_ROOT, help="the repository (default: this script's)")
    parser.add_argument("--tracks", help="comma-separated tracks to read (default: every track under lessons/)")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root)
    tracks = [t.strip() for t in args.tracks.split(",") if t.strip()] if args.tracks else None
    try:
        found, count = findings(root, tracks, [os.path.abspath(p) for p in args.paths])
    except (ValueError, OSError) as e:
        print("prediction_sections.py: error: %s" % e, file=sys.stderr)
        return 2
    for line in found:
        print(line)
    if found:
        files = sorted({f.split(":")[0] for f in found})
        print("prediction_sections.py: %d finding(s) in %d of %d README(s)" % (len(found), len(files), count),
              file=sys.stderr)
        return 1
    print("prediction_sections.py: %d README(s) ask for a prediction and answer it after the measured table" % count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
