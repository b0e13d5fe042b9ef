#!/bin/bash
# Tunes on the 15 sample photos split 10 train / 5 held-out test (every third photo by name is
# held out), the split made in a directory outside the repository.
# usage: scripts/tune-photos.sh [--split-dir DIR] KPERF_TUNE_ARGS...   (e.g. --budget 0.01,0.02,0.05
#        --size 1024 --out results/DEV/runs/tune-1024.json.gz)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
split="${TMPDIR:-/tmp}/kperf-photo-split"
if [[ "${1:-}" == "--split-dir" ]]; then split="$2"; shift 2; fi
photos="$root/datasets/images"
[[ -d "$photos" ]] || { echo "tune-photos.sh: $photos is missing" >&2; exit 2; }
rm -rf "$split/train" "$split/test"
mkdir -p "$split/train" "$split/test"
i=0
for f in $(ls "$photos" | sort); do
  if (( i % 3 == 2 )); then ln -s "$photos/$f" "$split/test/$f"; else ln -s "$photos/$f" "$split/train/$f"; fi
  i=$((i + 1))
done
echo "tune-photos.sh: train $(ls "$split/train" | tr '\n' ' '); test $(ls "$split/test" | tr '\n' ' ')" >&2
exec "${KPERF:-$root/build/kperf}" tune --train "$split/train" --test "$split/test" "$@"
