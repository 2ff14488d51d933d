#!/usr/bin/env python3
"""What an assignment ships: its lessons, and the files of common/ they need.

  autograder/assignment.py copy DEST [--up-to sgemm/05] [--tracks sgemm,cg]
  autograder/assignment.py list [--up-to sgemm/05] [--tracks sgemm,cg]

copy writes lessons/ and common/ of the assignment under DEST; list prints their paths.
autograder/build_zip.sh and autograder/classroom.py --template use it.

Never shipped: common/checks/wrong/, the bank of known-wrong submissions (each a diff
that puts one mistake into a solution or an exercise).

Without --up-to: every lesson, and all of common/ (the tracks to grade are chosen at
grading time). With --up-to <track>/<NN> (NN, or NN_name): the lessons of that track up to
and including NN, and every lesson of the other tracks --tracks names; no other track.
Of common/, only what those lessons need: the checks of the shipped lessons (not of the
later ones), the shipped tracks' folders of common/checks and their CPU checks, and of
the headers (.hpp, .cuh, .h) of common/include and common/checks only those that the
shipped files include, transitively: for the lessons, what
scripts/answers_in_tree.py's shipped_headers() says (what the exercises and checks of the
track's lessons up to this one include), for the other shipped sources (the checks' main(),
the tracks' device helpers, the CPU checks, common/tools) what they include. A helper that
only later lessons include could hold their answer, and is left out. CMake skips the
registered lessons and tracks that such a tree lacks.
"""
import argparse
import os
import re
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import answers_in_tree  # noqa: E402

HEADER_SUFFIXES = (".hpp", ".cuh", ".h")
SOURCE_SUFFIXES = (".cu", ".cpp")
SKIP_NAMES = {"__pycache__", ".DS_Store"}


class UsageError(Exception):
    pass


def tracks_of(root):
    """The tracks of a tree: lessons/<track>/ folders, sorted."""
    return sorted(p.name for p in (Path(root) / "lessons").iterdir() if p.is_dir())


def lessons_of(root, track):
    """The lesson folders of one track, in order."""
    return sorted(p.name for p in (Path(root) / "lessons" / track).iterdir() if p.is_dir())


def resolve_up_to(root, up_to):
    """(track, lesson) of --up-to track/NN or track/NN_name; UsageError if there is none."""
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", up_to or ""):
        raise UsageError(f"--up-to takes track/NN or track/NN_name (e.g. sgemm/05), not '{up_to}'")
    track, want = up_to.split("/")
    if track not in tracks_of(root):
        raise UsageError(f"--up-to {up_to}: no track '{track}' in lessons/")
    for lesson in lessons_of(root, track):
        if lesson == want or lesson.startswith(want + "_"):
            return track, lesson
    raise UsageError(f"--up-to {up_to}: no lesson '{want}' in lessons/{track}/")


def shipped_lessons(root, up_to=None, tracks=()):
    """[(track, lesson)] of the assignment."""
    all_tracks = tracks_of(root)
    for t in tracks:
        if t not in all_tracks:
            raise UsageError(f"no track '{t}' in lessons/")
    if not up_to:
        return [(t, l) for t in all_tracks for l in lessons_of(root, t)]
    last_track, last = resolve_up_to(root, up_to)
    out = []
    for t in all_tracks:
        if t == last_track:
            out += [(t, l) for l in lessons_of(root, t) if l <= last]
        elif t in tracks:
            out += [(t, l) for l in lessons_of(root, t)]
    return out


def walk(root, top):
    """Every file under root/top, as paths relative to root (sorted)."""
    out = []
    for folder, dirs, names in os.walk(Path(root) / top):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_NAMES)
        for name in sorted(names):
            if name not in SKIP_NAMES and not name.endswith(".pyc"):
                out.append(Path(folder, name).relative_to(root))
    return out


def select(root=REPO, up_to=None, tracks=()):
    """(lessons, files): the assignment's [(track, lesson)] and the paths, relative to root,
    of its files under lessons/ and common/."""
    root = Path(root)
    lessons = shipped_lessons(root, up_to, tracks)
    lesson_set = set(lessons)
    shipped_tracks = {t for t, _ in lessons}
    known_tracks = {p.parent.name for p in (root / "common" / "checks").glob("*/lessons.cmake")}
    files = []
    for path in walk(root, "lessons"):
        parts = path.parts
        if len(parts) >= 4 and (parts[1], parts[2]) not in lesson_set:
            continue  # a lesson's folder, not shipped
        if len(parts) >= 3 and parts[1] not in shipped_tracks:
            continue  # a track's own files (its README), track not shipped
        files.append(path)
    for path in walk(root, "common"):
        parts = path.parts
        if parts[:3] == ("common", "checks", "wrong"):
            continue
        if up_to and parts[:2] == ("common", "checks") and len(parts) >= 4:
            folder = parts[2]
            if folder in known_tracks and folder not in shipped_tracks:
                continue
            m = re.fullmatch(r"check_(\w+)\.cpp", parts[-1])
            if folder in known_tracks and len(parts) == 4 and m and (folder, m.group(1)) not in lesson_set \
                    and (root / "lessons" / folder / m.group(1)).is_dir():
                continue  # the check of a lesson that is not shipped
            if folder == "cpu" and m and m.group(1) in known_tracks and m.group(1) not in shipped_tracks:
                continue  # the CPU checks of a track that is not shipped
        files.append(path)
    if up_to:
        files = [f for f in files if f.suffix not in HEADER_SUFFIXES or f in needed_headers(root, lessons, files)]
    return lessons, files


def needed_headers(root, lessons, files):
    """The headers under common/include and common/checks that the shipped lessons and
    their checks include (answers_in_tree.shipped_headers()), and those that the other
    shipped sources include, transitively; relative paths."""
    root = Path(root)
    roots = [str(root / "common" / "include"), str(root / "common" / "checks")]
    seen = set()
    all_lessons = answers_in_tree.lessons(str(root))
    for track in sorted({t for t, _ in lessons}):
        last = max(l for t, l in lessons if t == track)
        seen |= answers_in_tree.shipped_headers(str(root), track, last, all_lessons)
    for f in files:
        if f.suffix in SOURCE_SUFFIXES:
            answers_in_tree.included_headers(str(root / f), roots, seen)
    return {Path(os.path.relpath(h, root)) for h in seen}


def copy(root, files, dest):
    for rel in files:
        target = Path(dest) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(root) / rel, target)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["copy", "list"])
    ap.add_argument("dest", nargs="?", help="copy: the folder to write lessons/ and common/ into")
    ap.add_argument("--up-to", help="the last lesson shipped, track/NN (e.g. sgemm/05)")
    ap.add_argument("--tracks", default="", help="with --up-to: other tracks shipped whole (comma-separated)")
    args = ap.parse_args(argv)
    tracks = [t for t in re.split(r"[,;\s]+", args.tracks) if t]
    if args.action == "copy" and not args.dest:
        ap.error("copy needs DEST")
    try:
        lessons, files = select(REPO, args.up_to, tracks)
    except UsageError as e:
        print(f"assignment.py: {e}", file=sys.stderr)
        return 2
    if args.action == "list":
        print("\n".join(p.as_posix() for p in files))
    else:
        copy(REPO, files, args.dest)
        print(f"assignment: {len(lessons)} lesson(s), {len(files)} file(s) of lessons/ and common/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
