#!/usr/bin/env bash
# Where kperf run's time goes on a device: the main job (kperf run with no arguments, timed as a
# user would time it), the HPCS'19 method (--preset paper: 512^2, its seven apps, four schemes,
# the full launch-shape sweep) and the same sweep of its six image apps at 8192^2, where every
# kernel reads memory rather than the cache. Each document keeps its phases (context.harness);
# results/README.md's harness table shows them (scripts/report.py --table harness).
#
# usage: scripts/harness-study.sh OUT_DIR LABEL [kperf binary]
# Writes OUT_DIR/default-LABEL.{json,txt} (the summary and `time`'s line), OUT_DIR/paper-512-LABEL.json
# and OUT_DIR/paper-8192-LABEL.json. The paper run goes first, on whatever caches the machine
# has; the others reuse the programs it compiled. hotspot is left out at 8192^2: its 60 steps
# a sample make it a study of its own there (minutes of launches), not a sweep.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="$1" label="$2" kperf="${3:-$here/build/kperf}"
mkdir -p "$out"
photo="$here/datasets/images/camera.png"
"$kperf" run --preset paper --input "$photo" --quiet --out "$out/paper-512-$label.json"
{ time "$kperf" run --out "$out/default-$label.json"; } >"$out/default-$label.txt" 2>&1
"$kperf" run --preset paper --input "$photo" --size 8192 \
  --apps gaussian3,gaussian5,sobel3,sobel5,median,inversion --quiet \
  --out "$out/paper-8192-$label.json"
