#!/usr/bin/env bash
# Builds the Gradescope autograder zip: setup.sh and run_autograder at the root of the
# archive, and the project files scripts/grade.py needs (CMake files, common/, the
# starter lessons/, the grader). The solutions and the known-wrong submissions are left
# out: a submission's code runs in the grading container and could read them.
#   autograder/build_zip.sh [-o autograder.zip] [--tracks sgemm,cg] [--only sgemm/01_naive]...
#                           [--up-to sgemm/05]
# --tracks and --only choose what an assignment grades (written to autograder/config.json
# in the zip; run_autograder's TUT_AG_TRACKS and TUT_AG_ONLY override them). With both,
# each --only lesson must belong to one of the --tracks. --up-to ships the lessons of one
# track up to and including that one (and the other tracks --tracks names, whole), with
# only the headers that they and their checks include (autograder/assignment.py).
set -euo pipefail
usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
cd "$(dirname "$0")/.."
out=autograder.zip
tracks=""
up_to=""
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    -o|--output) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --tracks) [ $# -ge 2 ] || usage; tracks=$2; shift 2 ;;
    --only) [ $# -ge 2 ] || usage; only+=("$2"); shift 2 ;;
    --up-to) [ $# -ge 2 ] || usage; up_to=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "build_zip.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
for t in ${tracks//,/ }; do
  [ -d "lessons/$t" ] || { echo "build_zip.sh: no track '$t' in lessons/" >&2; exit 2; }
done
# The assignment's lessons and files (all of them without --up-to); exit 2 on a bad --up-to.
select=()
if [ -n "$up_to" ]; then
  select=(--up-to "$up_to" --tracks "$tracks")
  shipped=$(python3 autograder/assignment.py list "${select[@]}") \
    || { echo "build_zip.sh: --up-to $up_to names no lesson (see above)" >&2; exit 2; }
  # the tracks to grade: the --up-to lesson's, then the others --tracks names
  tracks=$(printf '%s\n' "${up_to%%/*}" ${tracks//,/ } | awk '!seen[$0]++' | paste -sd, -)
fi
for l in ${only[@]+"${only[@]}"}; do
  [ -d "lessons/$l" ] || { echo "build_zip.sh: no lesson '$l' in lessons/" >&2; exit 2; }
  # a lesson of a track the zip does not build would never be graded
  if [ -n "$tracks" ] && [[ ",$tracks," != *",${l%%/*},"* ]]; then
    echo "build_zip.sh: --only $l is not in --tracks $tracks" >&2; exit 2
  fi
  if [ -n "$up_to" ] && ! grep -q "^lessons/$l/" <<< "$shipped"; then
    echo "build_zip.sh: --only $l is not shipped with --up-to $up_to" >&2; exit 2
  fi
done
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp autograder/setup.sh autograder/run_autograder "$stage/"
mkdir -p "$stage/scripts" "$stage/docs" "$stage/autograder"
cp CMakeLists.txt CMakePresets.json "$stage/"
cp -r cmake "$stage/"
python3 autograder/assignment.py copy "$stage" ${select[@]+"${select[@]}"} > /dev/null
cp docs/CMakeLists.txt docs/Doxyfile.in "$stage/docs/"
cp scripts/grade.py scripts/sanitize.py scripts/install-deps "$stage/scripts/"
cp autograder/setup.sh autograder/run_autograder autograder/install-cuda-toolkit.sh "$stage/autograder/"
find "$stage" \( -name __pycache__ -o -name '*.pyc' \) -prune -exec rm -rf {} +

python3 - "$stage/autograder/config.json" "$tracks" "$up_to" ${only[@]+"${only[@]}"} <<'PY'
import json, sys
path, tracks, up_to, only = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
conf = {"tracks": [t for t in tracks.split(",") if t], "only": only}
if up_to:
    conf["up_to"] = up_to
open(path, "w").write(json.dumps(conf, indent=2) + "\n")
PY

rm -f "$out"
# Python's zipfile keeps the files' modes, so run_autograder stays executable.
(cd "$stage" && python3 - "$out" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for top in sorted(os.listdir(".")):
        paths = [top] if os.path.isfile(top) else sorted(
            os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs)
        for p in paths:
            z.write(p, p)
PY
)
echo "wrote $out ($(python3 -c 'import sys, zipfile; print(len(zipfile.ZipFile(sys.argv[1]).namelist()))' "$out") files)"
