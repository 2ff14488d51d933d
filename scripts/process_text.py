#!/usr/bin/env python3
"""Finds text about how the project was made, where only its subject belongs.

    scripts/process_text.py [--root DIR] [PATH ...]

The lessons, solutions, docs, results (logs included) and every README.md speak of
CUDA, GPUs and the lessons themselves. Talk about the project's own history does not
belong there: who asked for what ("the issue asked for 3x", "the issue's 85%"), work
sessions ("this session", "the fifth session of the day"), and earlier drafts of the
text ("the first version of this lesson"). This script prints every such line as
`path:line: matched text` and exits 1 when it finds one, 0 when the tree is clean.

The hardware sense of "issue" stays allowed: issue slots, the issue rate, dual issue,
instructions issued, "smsp__issue_active". Without PATHs it reads lessons/, solutions/,
docs/, results/ and every README.md of the repository (build folders and hidden
folders skipped).
"""
import argparse
import os
import re
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREES = ("lessons", "solutions", "docs", "results")
TEXT_EXTENSIONS = {".md", ".cu", ".cuh", ".cpp", ".hpp", ".h", ".txt", ".log", ".json", ".cmake", ".py", ".sh",
                   ".svg", ".in", ".yml", ".yaml", ".csv", ".html", ".xml"}
ORDINALS = r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|previous|next|earlier|" \
           r"later|latest|same|this|that|another|one|each|every)"

# Each pattern is one kind of process talk; all are matched case-insensitively.
PATTERNS = [
    # Who asked for what.
    r"\bthe issue['\u2019]s\b",
    r"\bissues?\s*#\s*\d+\b",
    r"\bissue \d+['\u2019]s\b",
    r"\b(?:the|in|from|see|by|per|for) issues? \d+\b",
    r"\b(?:the|this|that|an?) issue (?:asked|asks|wanted|wants|requested|requests|required|requires|said|says|"
    r"called for|calls for|demanded|demands|mentioned|mentions)\b",
    r"\bissues? asked for\b",
    r"\b(?:ticket|reviewer|the lead|the ceo|the manager|the customer)s? (?:asked|wanted|requested|said)\b",
    r"\bwho asked for\b",
    # Work sessions.
    r"\b" + ORDINALS + r" sessions?\b",
    r"\bsessions? (?:of|on) (?:the day|\d{4}-\d\d-\d\d)\b",
    r"\bsession \d{4}-\d\d-\d\d\b",
    r"\(this session",
    r"\b(?:runs?|tours?) of the day\b",
    # Earlier drafts of the text or the code.
    r"\b(?:first|earlier|previous|older|old|former|original|initial) (?:version|draft)s? of (?:this|the) "
    r"(?:lesson|page|readme|kernel|file|code|text|exercise|table)\b",
    r"\bthe story['\u2019]s version\b",
    r"\b(?:in|since|after) the last (?:session|review|round)\b",
]
COMPILED = [re.compile(p, re.IGNORECASE) for p in PATTERNS]


def find(line):
    """The first process-text match in one line of text, or None."""
    for pattern in COMPILED:
        m = pattern.search(line)
        if m:
            return m.group(0)
    return None


def is_text(path):
    name = os.path.basename(path)
    return name == "README.md" or os.path.splitext(name)[1].lower() in TEXT_EXTENSIONS


def skipped_dir(name):
    return name.startswith(".") or name.startswith("build") or name in ("__pycache__", "node_modules")


def default_files(root):
    """Every text file under the trees, and every README.md of the repository, sorted."""
    files = set()
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not skipped_dir(d))
        rel_top = os.path.relpath(top, root)
        in_tree = rel_top.split(os.sep)[0] in TREES
        for name in names:
            path = os.path.join(top, name)
            if name == "README.md" or (in_tree and is_text(path)):
                files.add(path)
    return sorted(files)


def scan(paths, root):
    """[(relative path, line number, match, line)] for every process-text line of `paths`."""
    found = []
    for path in paths:
        if os.path.isdir(path):
            found += scan(_walk(path), root)
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise SystemExit("process_text.py: error: %s" % e)
        rel = os.path.relpath(path, root)
        for number, line in enumerate(lines, 1):
            match = find(line)
            if match:
                found.append((rel, number, match, line.strip()))
    return found


def _walk(folder):
    out = []
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not skipped_dir(d))
        out += [os.path.join(top, n) for n in sorted(names) if is_text(os.path.join(top, n))]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="files or folders (default: the repository's text, see above)")
    parser.add_argument("--root", default=REPO_ROOT, help="the repository (default: this script's)")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root)
    paths = [os.path.abspath(p) for p in args.paths] or default_files(root)
    paths = [f for p in paths for f in (_walk(p) if os.path.isdir(p) else [p])]
    found = scan(paths, root)
    for rel, number, match, line in found:
        shown = line if len(line) <= 160 else line[:157] + "..."
        print('%s:%d: process text "%s": %s' % (rel, number, match, shown))
    if found:
        files = sorted({rel for rel, _, _, _ in found})
        print("process_text.py: %d line(s) in %d file(s) speak of how the project was made, not of its subject; "
              "say what is true of the code and the GPU instead" % (len(found), len(files)), file=sys.stderr)
        return 1
    print("process_text.py: %d file(s) checked, no process text" % len(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
