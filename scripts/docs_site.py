#!/usr/bin/env python3
"""Lays out the Doxygen site's pages in the order of the course (build step of `docs`).

    scripts/docs_site.py --src REPO --out BUILD/docs/site

Doxygen lists top-level pages in the order of its INPUT and subpages in the order of
their `@subpage` commands. This script writes, under --out, a copy of every page the site
shows, arranged so that the site reads as the course:

- `README.md`, the main page, with a line of links to the course and the other pages;
- `course.md`, "The course": one subpage per track, in the course's order;
- `tracks/<track>.md`, one page per track: its lessons as subpages, in order, each with
  links to its exercise and solution sources, and the track's plot (docs/plots/<track>.svg);
- every lesson README, unchanged except for a line of links at its top and bottom
  (previous lesson, the track, next lesson; the exercise and solution `.cu`);
- the other pages (docs/*.md, docs/experiments/*.md, results/README.md) and the sources
  the site browses (the lessons' and solutions' .cu files, common/include/tut/*.hpp),
  copied at the same relative paths so that links between pages resolve as in the tree;
- `inputs.doxy`, the INPUT list in that order, which the Doxyfile includes.

Nothing in the source tree is changed. Deterministic: the same tree gives the same files.
"""
import argparse
import glob
import os
import re
import shutil
import sys

# The course's order; a track not named here comes after these, alphabetically.
COURSE_ORDER = ["sgemm", "bandwidth", "reduction", "cg", "jor"]
HEADING = re.compile(r"^#\s+(.*?)\s*(?:\{#([A-Za-z0-9_]+)\})?\s*$")
SOURCE_PATTERNS = ("*.cu", "*.cuh")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write_if_changed(path, text):
    """Writes `text` unless the file already holds it (keeps timestamps for incremental builds)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path) and read(path) == text:
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def copy_if_changed(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.exists(dst):
        with open(src, "rb") as a, open(dst, "rb") as b:
            if a.read() == b.read():
                return
    shutil.copyfile(src, dst)


MD_LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\(([^)\s#]+\.md)(#[^)\s]*)?\)")


def unlink_missing_pages(text, page_rel, site_pages):
    """`text` with its markdown links to .md files that are not pages of the site written as
    plain text, 'label (`path`)': Doxygen resolves a link to a .md file as a reference to
    its page, and a reference it cannot resolve is a warning, which fails the build. Links
    resolve against the repository root first, then the page's folder, as Doxygen does;
    those that reach a page of the site are rewritten relative to the site's root.
    Fenced code blocks are left alone."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```") or line.lstrip().startswith("~~~"):
            fenced = not fenced
        if not fenced and ".md" in line:
            def plain(m):
                target = m.group(2)
                if "://" in target:
                    return m.group(0)
                candidates = [os.path.normpath(target),
                              os.path.normpath(os.path.join(os.path.dirname(page_rel), target))]
                for c in candidates:
                    c = c.replace(os.sep, "/")
                    if c in site_pages:
                        # Written relative to the site's root, the folder Doxygen runs in: it
                        # tries a link's path from there too, and a path that climbs out of
                        # the site could reach the source tree's copy of the page instead.
                        return "[%s](%s%s)" % (m.group(1), c, m.group(3) or "")
                return "%s (`%s`)" % (m.group(1), target)
            line = MD_LINK.sub(plain, line)
        out.append(line)
    return "\n".join(out)


def quoted(text):
    """Text for the quoted label of a Doxygen @ref."""
    return text.replace('"', "'").replace("\\", "/").strip()


class Lesson:
    def __init__(self, src, track, name):
        self.track, self.name = track, name
        self.readme_rel = "lessons/%s/%s/README.md" % (track, name)
        text = read(os.path.join(src, self.readme_rel))
        first = text.split("\n", 1)[0]
        m = HEADING.match(first)
        self.has_heading = bool(m)
        self.title = (m.group(1) if m else "") or "%s %s" % (track, name)
        self.id = (m.group(2) if m else None) or "%s_%s" % (track, name)
        self.text = text

        def sources(tree):
            found = []
            for pattern in SOURCE_PATTERNS:
                found += glob.glob(os.path.join(src, tree, track, name, pattern))
            return sorted(os.path.relpath(p, src).replace(os.sep, "/") for p in found)

        self.exercise = sources("lessons")
        self.solution = sources("solutions")


class Track:
    def __init__(self, src, name, lessons, description):
        self.name, self.lessons = name, lessons
        self.id = "track_%s" % name
        first = lessons[0].title if lessons else ""
        m = re.match(r"^(.*?)\s+\d+\s*:", first)
        self.title = m.group(1) if m else name
        self.steps, self.yardstick = description
        self.plot = "%s.svg" % name if os.path.exists(os.path.join(src, "docs", "plots", name + ".svg")) else None


def track_descriptions(readme):
    """{track: (steps, yardstick)} from the README's table of tracks (| `sgemm` | steps | yardstick |)."""
    out = {}
    for line in readme.splitlines():
        m = re.match(r"^\|\s*`([A-Za-z0-9_]+)`\s*\|(.*)\|\s*$", line)
        if m:
            cells = [c.strip() for c in m.group(2).split("|")]
            out[m.group(1)] = (cells[0] if cells else "", cells[1] if len(cells) > 1 else "")
    return out


def find_tracks(src):
    readme = read(os.path.join(src, "README.md"))
    descriptions = track_descriptions(readme)
    names = sorted(d for d in os.listdir(os.path.join(src, "lessons"))
                   if os.path.isdir(os.path.join(src, "lessons", d)) and not d.startswith("."))
    names.sort(key=lambda t: (COURSE_ORDER.index(t) if t in COURSE_ORDER else len(COURSE_ORDER), t))
    tracks = []
    for name in names:
        lesson_names = sorted(d for d in os.listdir(os.path.join(src, "lessons", name))
                              if os.path.isfile(os.path.join(src, "lessons", name, d, "README.md")))
        if lesson_names:
            lessons = [Lesson(src, name, n) for n in lesson_names]
            tracks.append(Track(src, name, lessons, descriptions.get(name, ("", ""))))
    return tracks


def nav_div(links):
    """A line of links in its own box (a <span>, styled as a block: Doxygen 1.9.4 empties a <div> or a <p>
    written in markdown)."""
    return '<span class="tut-nav">%s</span>' % links


def code_links(lesson, full=True):
    """'exercise @ref lessons/.../x.cu "lessons/.../x.cu"; solution ...' (labels: file names when not full)."""
    parts = []
    for what, files in (("exercise", lesson.exercise), ("solution", lesson.solution)):
        if files:
            label = (lambda f: f) if full else os.path.basename
            parts.append("%s %s" % (what, ", ".join('@ref %s "%s"' % (f, label(f)) for f in files)))
    return "; ".join(parts)


def lesson_nav(tracks, t, i):
    """The line of links at the top and bottom of lesson i of track t."""
    track = tracks[t]
    lessons = track.lessons
    if i > 0:
        prev = '@ref %s "\u2190 %s"' % (lessons[i - 1].id, quoted(lessons[i - 1].title))
    else:
        prev = '@ref %s "\u2190 %s track"' % (track.id, quoted(track.title))
    if i + 1 < len(lessons):
        nxt = '@ref %s "%s \u2192"' % (lessons[i + 1].id, quoted(lessons[i + 1].title))
    elif t + 1 < len(tracks):
        nxt = '@ref %s "next track: %s \u2192"' % (tracks[t + 1].id, quoted(tracks[t + 1].title))
    else:
        nxt = '@ref course "the course \u2192"'
    up = '@ref %s "%s, lesson %d of %d"' % (track.id, quoted(track.title), i + 1, len(lessons))
    return "%s \u00b7 %s \u00b7 %s" % (prev, up, nxt)


def wrapped_readme(tracks, t, i):
    """A lesson README with its navigation and code links; its text is otherwise unchanged."""
    lesson = tracks[t].lessons[i]
    nav = lesson_nav(tracks, t, i)
    code = code_links(lesson)
    head = [nav_div(nav), ""]
    if code:
        head += ["**Code:** " + code + ".", ""]
    if lesson.has_heading:
        first, _, rest = lesson.text.partition("\n")
        if "{#" not in first:
            first = "%s {#%s}" % (first.rstrip(), lesson.id)
    else:
        first, rest = "# %s {#%s}" % (lesson.title, lesson.id), lesson.text
    body = rest.rstrip("\n")
    return "\n".join([first, ""] + head + [body.lstrip("\n"), "", nav_div(nav), ""])


def track_page(tracks, t):
    track = tracks[t]
    links = []
    if t > 0:
        links.append('@ref %s "\u2190 %s"' % (tracks[t - 1].id, quoted(tracks[t - 1].title)))
    links.append('@ref course "the course, track %d of %d"' % (t + 1, len(tracks)))
    if track.lessons:
        links.append('@ref %s "%s \u2192"' % (track.lessons[0].id, quoted(track.lessons[0].title)))
    lines = ["# %s {#%s}" % (track.title, track.id), "",
             nav_div(" \u00b7 ".join(links)), ""]
    if track.steps:
        lines += ["**Steps:** %s." % track.steps.rstrip("."), ""]
    if track.yardstick:
        lines += ["**Yardstick:** %s." % track.yardstick.rstrip("."), ""]
    lines += ["Each lesson starts from the solution of an earlier lesson, named at the top of its page and of "
              "its `.cu` file, and adds one idea. Read the page, then open the exercise and look for "
              "`TODO(exercise)`; the solution is the same file, completed.", "",
              "## Lessons", ""]
    for k, lesson in enumerate(track.lessons):
        code = code_links(lesson, full=False)
        lines.append("%d. @subpage %s%s" % (k + 1, lesson.id, (" \u2014 " + code) if code else ""))
    lines.append("")
    if track.plot:
        lines += ["## Measured", "",
                  "The best variant of each lesson on each reference GPU, beside the library and the hardware "
                  "peak (the tables are on the main page and on each lesson's page).", "",
                  "![%s: the best variant of each lesson](%s)" % (track.name, track.plot), ""]
    return "\n".join(lines)


def course_page(tracks):
    lines = ["# The course {#course}", "",
             "The tracks, in the order a student takes them. Each is a numbered sequence of lessons, one idea "
             "each, measured beside the library that does the same job and the hardware's ceiling.", ""]
    for track in tracks:
        extra = " \u2014 %s" % track.steps if track.steps else ""
        lines.append("- @subpage %s%s" % (track.id, extra))
    lines += ["", "How the project is laid out, built, checked and graded: @ref architecture \"Architecture\". "
              "How to look at a lesson in Nsight Compute and Nsight Systems: @ref md_docs_profiling \"Profiling\".", ""]
    return "\n".join(lines)


def main_page(readme, tracks):
    """The README with a line of links under its title."""
    first, _, rest = readme.partition("\n")
    links = ['@ref course "The course"'] + ['@ref %s "%s"' % (t.id, quoted(t.title)) for t in tracks]
    line = nav_div(" \u00b7 ".join(links)) + "\n"
    return first + "\n\n" + line + rest


def build(src, out):
    """Writes the site's pages and inputs.doxy under `out`; returns the INPUT list."""
    src, out = os.path.abspath(src), os.path.abspath(out)
    tracks = find_tracks(src)
    pages = sorted(glob.glob(os.path.join(src, "docs", "*.md")))
    pages += sorted(glob.glob(os.path.join(src, "docs", "experiments", "*.md")))
    if os.path.exists(os.path.join(src, "results", "README.md")):
        pages.append(os.path.join(src, "results", "README.md"))
    other_pages = [os.path.relpath(p, src).replace(os.sep, "/") for p in pages]
    lesson_pages = [lesson.readme_rel for track in tracks for lesson in track.lessons]
    site_pages = set(["README.md", "course.md"] + ["tracks/%s.md" % t.name for t in tracks]
                     + lesson_pages + other_pages)
    inputs = []

    def put(rel, text):
        write_if_changed(os.path.join(out, rel), unlink_missing_pages(text, rel, site_pages))
        inputs.append(os.path.join(out, rel))

    def copy(rel):
        copy_if_changed(os.path.join(src, rel), os.path.join(out, rel))
        inputs.append(os.path.join(out, rel))

    put("README.md", main_page(read(os.path.join(src, "README.md")), tracks))
    put("course.md", course_page(tracks))
    for t, track in enumerate(tracks):
        put("tracks/%s.md" % track.name, track_page(tracks, t))
    for t, track in enumerate(tracks):
        for i, lesson in enumerate(track.lessons):
            put(lesson.readme_rel, wrapped_readme(tracks, t, i))
    for rel in other_pages:
        put(rel, read(os.path.join(src, rel)))
    for header in sorted(glob.glob(os.path.join(src, "common", "include", "tut", "*.hpp"))):
        copy(os.path.relpath(header, src))
    for track in tracks:
        for lesson in track.lessons:
            for rel in lesson.exercise + lesson.solution:
                copy(rel)
    lines = ["# Generated by scripts/docs_site.py: the site's pages in the order of the course."]
    lines.append("INPUT = " + " \\\n        ".join('"%s"' % p for p in inputs))
    # Always written, even when unchanged: the build runs Doxygen when this file is newer than
    # the site, and a page may have changed while the list of pages did not.
    with open(os.path.join(out, "inputs.doxy"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return inputs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the repository (default: this script's)")
    parser.add_argument("--out", required=True, help="where the site's pages go (a build folder)")
    args = parser.parse_args(argv)
    try:
        inputs = build(args.src, args.out)
    except OSError as e:
        print("docs_site.py: error: %s" % e, file=sys.stderr)
        return 2
    print("docs_site.py: %d input files listed in %s" % (len(inputs), os.path.join(args.out, "inputs.doxy")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
