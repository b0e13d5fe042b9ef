#!/usr/bin/env bash
# Installs the Debian 12 packages kperf needs (build, PoCL device, Oclgrind for the memory-safety
# tests, report scripts, OpenCV's Python module for the independent references' cross-check),
# only those that are missing. Needs root (or sudo) when something is missing.
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config git xz-utils
          ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers pocl-opencl-icd
          libcxxopts-dev nlohmann-json3-dev libstb-dev libgtest-dev oclgrind
          python3 python3-numpy python3-matplotlib python3-opencv)
[ "${KPERF_EXTRA_PACKAGES:-}" ] && packages+=(${KPERF_EXTRA_PACKAGES})

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
