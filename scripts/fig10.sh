#!/usr/bin/env bash
# CGO'18 Fig. 10 setting: kperf's input perforation (stencil, rows1, rows2 on the local tile)
# against Paraprox's output schemes (rows:2/3, cols:2/3, center:3, nn and li), every speedup over
# Paraprox's baseline (accurate, --load global) at its best launch shape. The output schemes run
# on both load paths and every fill: in one launch (fused, as Paraprox runs them; shared, each
# computed output computed once per work-group) and with the second, timed fill launch
# (separate), so the implementations stand side by side.
#
# usage: scripts/fig10.sh OUT.json[.gz] SIZE [INPUT] [extra kperf run options...]
# Three passes, every one resuming (after an interruption the same command goes on where it
# stopped):
#   1. Paraprox's output schemes on both load paths, every fill, with both accurate baselines
#      (output none), into OUT;
#   2. Paraprox's baseline once more, after the output schemes, into
#      OUT-baseline-after.json[.gz]: where kernels take microseconds the device's speed moves
#      during a run, and each output scheme is then compared with both baselines
#      (scripts/fig10_repeats.py --bracket);
#   3. kperf's input perforation on the tile and straight from global memory (SYprox's device
#      perforation) into OUT, against pass 1's baselines.
# FIG10_ROUNDS=R (default 1) times each pass's configurations in R interleaved rounds (kperf run
# --rounds): pass 1's baselines are then timed in turn with the output schemes they are the
# reference of, so a drift of the device's speed reaches both alike.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
kperf="${KPERF:-$here/build/kperf}"
out="$1" size="$2"
input="${3:-$here/datasets/images/camera.png}"
shift $(($# < 3 ? $# : 3))
stem="${out%.gz}"
after="${stem%.json}-baseline-after.json${out#"$stem"}"
shape=(--apps gaussian3,median,inversion --input "$input" --size "$size"
       --wg "${FIG10_WG:-32x4,32x8,64x4,128x2,16x8}" --vec "${FIG10_VEC:-1,2,4}" --py "${FIG10_PY:-1,2,4}"
       --rounds "${FIG10_ROUNDS:-1}" --quiet)
common=("${shape[@]}" --out "$out" "$@")
# Pass 1: Paraprox's output schemes, each fill, on both load paths, and the accurate baselines.
"$kperf" run "${common[@]}" --resume --schemes accurate --load global,local \
  --output none,rows:2,rows:3,cols:2,cols:3,center:3 --output-recon nn,li \
  --output-fill fused,shared,separate
# Pass 2: Paraprox's baseline once more, after the output schemes.
"$kperf" run "${shape[@]}" --out "$after" "$@" --resume --schemes accurate --load global
# Pass 3: input perforation on the tile and straight from global memory.
"$kperf" run "${common[@]}" --resume --schemes accurate,stencil,rows1,rows2 --recon nn --load local,global
