#!/usr/bin/env bash
# Installs the CUDA toolkit from NVIDIA's apt repository (the "network repo" of NVIDIA's
# Linux installation guide) on Ubuntu or Debian, unless nvcc is already there. Used by
# autograder/setup.sh (Gradescope) and the GitHub Classroom workflow.
#   TUT_CUDA_PACKAGE  the package to install (default cuda-toolkit-13-0)
# A GPU is not needed to compile; the lessons' checks need one to run.
set -euo pipefail
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-cuda-toolkit.sh: nvcc is already installed"
  exit 0
fi
PACKAGE=${TUT_CUDA_PACKAGE:-cuda-toolkit-13-0}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
. /etc/os-release
case "$(uname -m)" in
  x86_64) arch=x86_64 ;;
  aarch64) arch=sbsa ;;
  *) echo "install-cuda-toolkit.sh: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac
distro="${ID}${VERSION_ID//./}"   # ubuntu2204, ubuntu2404, debian12
keyring=cuda-keyring_1.1-1_all.deb
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "install-cuda-toolkit.sh: installing $PACKAGE from NVIDIA's $distro/$arch repository"
wget -q -O "$tmp/$keyring" "https://developer.download.nvidia.com/compute/cuda/repos/$distro/$arch/$keyring"
$SUDO dpkg -i "$tmp/$keyring" >/dev/null
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$PACKAGE" >/dev/null
/usr/local/cuda/bin/nvcc --version | tail -2
