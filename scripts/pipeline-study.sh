#!/usr/bin/env bash
# The pipeline study: kperf tune --pipeline for both shipped chains (blur-edges, denoise-edges)
# on the 15 sample photos split 10 train / 5 held out (scripts/tune-photos.sh), cold, every stage
# at one launch shape, the first stage in accurate, rows:2 and rows:3 stored in f32 or f16, the
# second in accurate and rows:2 reading f32 or f16, under end-to-end budgets of 0.1-1 %.
#
# usage: scripts/pipeline-study.sh OUT_DIR SIZE LABEL [extra kperf tune options...]
# Writes OUT_DIR/tune-pipeline-SIZE-CHAIN-LABEL.json for both chains. Called again with another
# LABEL it repeats the study in new processes, so that two answers of the same tune can be
# compared.
# PIPELINE_WG (default 32x4), PIPELINE_VEC (4), PIPELINE_PY (4), PIPELINE_BUDGETS
# (0.001,0.002,0.005,0.01) change the shape and the budgets.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="$1" size="$2" label="$3"
shift 3
mkdir -p "$out"
shape="--wg ${PIPELINE_WG:-32x4} --vec ${PIPELINE_VEC:-4} --py ${PIPELINE_PY:-4}"
for chain in blur-edges denoise-edges; do
  "$here/scripts/tune-photos.sh" --pipeline "$chain" --size "$size" --cold --quiet \
    --budget "${PIPELINE_BUDGETS:-0.001,0.002,0.005,0.01}" \
    --stage "1:--schemes accurate,rows:2,rows:3 --recon nn --precision f32,f16 $shape" \
    --stage "2:--schemes accurate,rows:2 --recon nn --precision f32,f16in $shape" \
    --out "$out/tune-pipeline-$size-$chain-$label.json" "$@"
done
