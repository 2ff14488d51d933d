#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image (Ubuntu;
# 22.04 is the default base image). It installs what scripts/grade.py needs: a C++
# compiler, CMake >= 3.25, Ninja, Python 3, Catch2 (2.x or 3.x), and the CUDA toolkit
# when the image has none (autograder/install-cuda-toolkit.sh; set TUT_INSTALL_CUDA=0 to
# require a base image that already has it).
#   TUT_AG_SOURCE  the unpacked zip (default /autograder/source)
set -euo pipefail
SOURCE=${TUT_AG_SOURCE:-/autograder/source}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential ca-certificates catch2 ninja-build python3 python3-pip wget >/dev/null

# CMake: the project needs 3.25 or newer; Ubuntu 22.04's apt has 3.22, so take PyPI's.
cmake_ok() {
  command -v cmake >/dev/null || return 1
  local v
  v=$(cmake --version | head -1 | sed 's/[^0-9.]*\([0-9][0-9.]*\).*/\1/')
  [ "$(printf '%s\n3.25\n' "$v" | sort -V | head -1)" = "3.25" ]
}
if ! cmake_ok; then
  $SUDO apt-get install -y -qq --no-install-recommends cmake >/dev/null || true
fi
if ! cmake_ok; then
  $SUDO python3 -m pip install --quiet "cmake>=3.25"
  hash -r
fi
cmake_ok || { echo "setup.sh: CMake 3.25 or newer is needed" >&2; exit 1; }

# The CUDA toolkit (nvcc, cuBLAS, cuSPARSE, CUB).
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  if [ "${TUT_INSTALL_CUDA:-1}" = 1 ]; then
    bash "$SOURCE/autograder/install-cuda-toolkit.sh"
  else
    echo "setup.sh: no CUDA toolkit here and TUT_INSTALL_CUDA=0: use a base image that has one" >&2
    exit 1
  fi
fi
# The multigpu track (when this assignment grades it; every track when config.json names
# none): MPI from apt, NCCL and NVSHMEM as NVIDIA's Python wheels, by scripts/install-deps.
# Without them its lessons are not built; with them, on a machine with fewer than two GPUs
# (Gradescope's have none), its checks are reported as skipped, with the reason.
tracks=$(python3 -c 'import json, sys; print(",".join(json.load(open(sys.argv[1])).get("tracks", [])))' \
         "$SOURCE/autograder/config.json" 2>/dev/null || true)
if [ -z "$tracks" ] || [[ ",$tracks," == *",multigpu,"* ]]; then
  PATH=$PATH:/usr/local/cuda/bin bash "$SOURCE/scripts/install-deps" test \
    || echo "setup.sh: the multigpu track's dependencies are incomplete; its lessons that need them are not built"
fi

PATH=$PATH:/usr/local/cuda/bin nvcc --version | tail -2
cmake --version | head -1
echo "setup.sh: done"
