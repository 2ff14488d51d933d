#!/usr/bin/env bash
# Builds the Gradescope autograder zip: setup.sh and run_autograder at the root of the
# archive, and the project files scripts/grade.py needs (CMake files, common/, the
# starter lessons/, the grader). The solutions are left out: a submission's code runs in
# the grading container and could read them.
#   autograder/build_zip.sh [-o autograder.zip] [--tracks sgemm,cg] [--only sgemm/01_naive]...
# --tracks and --only choose what an assignment grades (written to autograder/config.json
# in the zip; run_autograder's TUT_AG_TRACKS and TUT_AG_ONLY override them). With both,
# each --only lesson must belong to one of the --tracks.
set -euo pipefail
usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
cd "$(dirname "$0")/.."
out=autograder.zip
tracks=""
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    -o|--output) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --tracks) [ $# -ge 2 ] || usage; tracks=$2; shift 2 ;;
    --only) [ $# -ge 2 ] || usage; only+=("$2"); shift 2 ;;
    -h|--help) usage ;;
    *) echo "build_zip.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
for t in ${tracks//,/ }; do
  [ -d "lessons/$t" ] || { echo "build_zip.sh: no track '$t' in lessons/" >&2; exit 2; }
done
for l in ${only[@]+"${only[@]}"}; do
  [ -d "lessons/$l" ] || { echo "build_zip.sh: no lesson '$l' in lessons/" >&2; exit 2; }
  # a lesson of a track the zip does not build would never be graded
  if [ -n "$tracks" ] && [[ ",$tracks," != *",${l%%/*},"* ]]; then
    echo "build_zip.sh: --only $l is not in --tracks $tracks" >&2; exit 2
  fi
done
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp autograder/setup.sh autograder/run_autograder "$stage/"
mkdir -p "$stage/scripts" "$stage/docs" "$stage/autograder"
cp CMakeLists.txt CMakePresets.json "$stage/"
cp -r cmake common lessons "$stage/"
cp docs/CMakeLists.txt docs/Doxyfile.in "$stage/docs/"
cp scripts/grade.py scripts/install-deps "$stage/scripts/"
cp autograder/setup.sh autograder/run_autograder autograder/install-cuda-toolkit.sh "$stage/autograder/"
find "$stage" \( -name __pycache__ -o -name '*.pyc' \) -prune -exec rm -rf {} +

python3 - "$stage/autograder/config.json" "$tracks" ${only[@]+"${only[@]}"} <<'PY'
import json, sys
path, tracks, only = sys.argv[1], sys.argv[2], sys.argv[3:]
conf = {"tracks": [t for t in tracks.split(",") if t], "only": only}
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
