#!/usr/bin/env bash
# SYprox (ICS'25) setting: host vs device perforation (rows:2, cols:2, nn and li) at float, half
# input and half input/output storage, with transfers timed end to end (pinned host memory) and
# host packing held to a memcpy of the same bytes, against the accurate float kernel; kernel,
# transfer and end-to-end speedups per row. Every configuration sweeps the launch shapes (half
# storage is best at other shapes than float) and both buffer load paths (local tile, global
# with wide row loads; half storage is best on the global one for the 3x3 filters on an H200),
# so each is compared at its own best.
#
# usage: scripts/syprox.sh OUT.json[.gz] SIZE [INPUT] [extra kperf run options...]
# Resumable: after an interruption the same command goes on where it stopped.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
kperf="${KPERF:-$here/build/kperf}"
out="$1" size="$2"
input="${3:-$here/datasets/images/camera.png}"
shift $(($# < 3 ? $# : 3))
"$kperf" run --apps "${SYPROX_APPS:-gaussian3,gaussian5,sobel3,median}" --input "$input" \
  --size "$size" --wg "${SYPROX_WG:-32x4,64x2,32x8}" --vec "${SYPROX_VEC:-4,8}" --py "${SYPROX_PY:-2,4,6}" \
  --schemes accurate,rows:2,cols:2 --recon nn,li --precision f32,f16in,f16 --load "${SYPROX_LOAD:-local,global}" \
  --perforate device,host --transfers --warmup "${SYPROX_WARMUP:-20}" \
  --reps "${SYPROX_REPS:-20}" --quiet --resume --out "$out" "$@"
