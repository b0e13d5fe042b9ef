#!/usr/bin/env bash
# Source this on a machine with NVIDIA's driver but no registered OpenCL ICD (containers often
# ship libnvidia-opencl.so.1 without /etc/OpenCL/vendors/nvidia.icd): registers it, and turns
# off NVIDIA's compute cache, which does not notice edits to #included .cl files.
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  mkdir -p /etc/OpenCL/vendors
  echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
export CUDA_CACHE_DISABLE=1
# A kperf built on another machine may bring its libstb beside it (build/lib).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ -d "$here/build/lib" ] && export LD_LIBRARY_PATH="$here/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
