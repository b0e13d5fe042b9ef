#!/usr/bin/env bash
# CGO'18 Fig. 10 setting: kperf's input perforation (stencil, rows1, rows2 on the local tile)
# against Paraprox's output schemes (rows:2/3, cols:2/3, center:3, nn and li), every speedup over
# Paraprox's baseline (accurate, --load global) at its best launch shape. The output schemes run
# on both load paths and every fill: in one launch (fused, as Paraprox runs them; shared, each
# computed output computed once per work-group) and with the second, timed fill launch
# (separate), so the implementations stand side by side.
#
# usage: scripts/fig10.sh OUT.json[.gz] SIZE [INPUT] [extra kperf run options...]
# Two passes write one file: the second (--resume) reuses the first's accurate baselines, so
# every row's speedup_vs_global is against the same measurement. A third times Paraprox's
# baseline again after the output schemes, into OUT-baseline-after.json[.gz]: where kernels take
# microseconds the device's speed moves during a run, and the output schemes, timed between the
# two baselines, are then compared with both (scripts/fig10_repeats.py --bracket). Every pass
# resumes: after an interruption, the same command goes on where it stopped.
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
       --quiet)
common=("${shape[@]}" --out "$out" "$@")
# Pass 1: input perforation on the tile and straight from global memory (SYprox's device
# perforation), with both accurate baselines.
"$kperf" run "${common[@]}" --resume --schemes accurate,stencil,rows1,rows2 --recon nn --load local,global
# Pass 2: Paraprox's output schemes, each fill, on both load paths.
"$kperf" run "${common[@]}" --resume --schemes accurate --load global,local \
  --output none,rows:2,rows:3,cols:2,cols:3,center:3 --output-recon nn,li \
  --output-fill fused,shared,separate
# Pass 3: Paraprox's baseline once more, after the output schemes.
"$kperf" run "${shape[@]}" --out "$after" "$@" --resume --schemes accurate --load global
