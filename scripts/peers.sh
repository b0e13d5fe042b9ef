#!/usr/bin/env bash
# kperf beside the libraries a user would pick instead (NVIDIA NPP, CuPy, PyTorch), on the same
# card in one call: the photo's inputs, kperf's accurate kernels on the checked inputs (saved),
# `kperf run` at the timed sizes (accurate and a few approximations at its best launch shapes,
# with the copy bandwidth), each peer program (scripts/peers/), then the peers document
# (scripts/peers/merge.py; SPEC 15, docs/json.md). A peer that cannot build or run becomes rows
# that say why, and the call goes on.
#
#   source scripts/nvidia-env.sh && scripts/peers.sh OUTDIR
#
# Writes OUTDIR/peers.json.gz (the document) and OUTDIR/peers-bundle.tar.gz (the kperf run
# documents, every peer's rows, versions, build and run logs, the steps' exit statuses); the
# inputs and saved outputs stay in a scratch folder that is removed at the end. Stdout: one or
# a few lines per step. Environment (defaults): PEERS_SIZES (2048,4096,8192), PEERS_PHOTO
# (datasets/images/camera.png), PEERS_WARMUP (10), PEERS_REPS (50), PEERS_PYTHON (python3: the
# one with CuPy and PyTorch), KPERF (build/kperf), PEERS_KPERF_AXES and PEERS_KPERF_SHAPES
# (below), NVCC (nvcc on PATH, else /usr/local/cuda/bin/nvcc), NPP_HOME (beside nvcc), and
# PEERS_DEADLINE (540): the seconds the whole call may take. Each step has its own limit within
# it; the peers run before kperf's sweep, which takes the time that is left (a kperf stopped by
# its limit writes the rows it finished), and the merge and the archive always run.
# Every timing is warm (back-to-back launches, no cache flush), kperf's and the peers' alike:
# from 4096^2 up a grid is larger than an H100's or H200's L2, at 2048^2 both live in it.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: scripts/peers.sh OUTDIR" >&2
  exit 2
fi
out="$1"
py="${PEERS_PYTHON:-python3}"
kperf="${KPERF:-$root/build/kperf}"
sizes="${PEERS_SIZES:-2048,4096,8192}"
photo="${PEERS_PHOTO:-$root/datasets/images/camera.png}"
warmup="${PEERS_WARMUP:-10}"
reps="${PEERS_REPS:-50}"
apps="gaussian3,gaussian5,sobel3,median"
axes="${PEERS_KPERF_AXES:---schemes accurate,rows:2 --recon nn,li --precision f32,f16}"
axes="${PEERS_KPERF_AXES:-$axes --load local,global}"
shapes="${PEERS_KPERF_SHAPES:---wg 32x4,32x8 --vec 4 --py 2,4,8}"
mkdir -p "$out" || exit 2
scratch="$(mktemp -d "${TMPDIR:-/tmp}/kperf-peers.XXXXXX")" || exit 2
trap 'rm -rf "$scratch"' EXIT
bundle="$scratch/bundle"
mkdir -p "$bundle/logs" "$scratch/outputs" "$scratch/kperf-outputs"
steps="$bundle/steps.txt"
: >"$steps"

# step NAME LINES CAP COMMAND...: runs it for at most CAP seconds and never past the deadline
# (less the time the merge keeps), with stdout and stderr in logs/NAME.log; prints its last LINES
# lines and records "NAME EXIT SECONDS" (exit 124: stopped by its time limit, with SIGTERM, on
# which kperf writes what it finished).
step() {
  local name="$1" lines="$2" cap="$3" start end code left
  shift 3
  left=$((deadline - $(date +%s) - reserve))
  [ "$cap" -gt "$left" ] && cap="$left"
  start=$(date +%s.%N)
  if [ "$cap" -lt 5 ]; then
    echo "no time left before the deadline" >"$bundle/logs/$name.log"
    code=124
  else
    timeout -k 15 "$cap" "$@" >"$bundle/logs/$name.log" 2>&1
    code=$?
  fi
  end=$(date +%s.%N)
  echo "$name $code $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')" >>"$steps"
  echo "== $name: exit $code, $(tail -n 1 "$steps" | cut -d' ' -f3) s"
  tail -n "$lines" "$bundle/logs/$name.log" | cut -c1-200
  return "$code"
}

deadline=$(($(date +%s) + ${PEERS_DEADLINE:-540}))
reserve=45
step inputs 1 120 "$py" "$root/scripts/peers/inputs.py" --photo "$photo" --sizes "$sizes" \
  --synthetic-if-missing --out "$scratch/inputs" ||
  { echo "peers.sh: no inputs, nothing measured" >&2; exit 2; }
checked=() timed=()
while read -r path is_timed is_checked; do
  [ "$is_checked" = 1 ] && checked+=(--input "$scratch/inputs/$path")
  [ "$is_timed" = 1 ] && timed+=(--input "$scratch/inputs/$path")
done < <("$py" -c 'import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    print(e["path"], int(e["timed"]), int(e["checked"]))' "$scratch/inputs/manifest.json")

# kperf's accurate outputs on the checked inputs.
step kperf-check 2 120 "$kperf" run --quiet --apps "$apps" --schemes accurate --wg 32x8 \
  --vec 4 --py 2 --warmup 1 --reps 3 "${checked[@]}" --save-outputs "$scratch/kperf-outputs" \
  --out "$bundle/kperf-check.json.gz"

# The peers; one that ends without its rows (a crash, its time limit) gets rows saying so.
libs=()
for peer in npp cupy torch; do
  extra=()
  [ "$peer" = npp ] && extra=(--build "$bundle/npp-build")
  step "$peer" 1 180 "$py" "$root/scripts/peers/${peer}_peers.py" --inputs "$scratch/inputs" \
    --outputs "$scratch/outputs" --out "$bundle/$peer.json" --warmup "$warmup" --reps "$reps" \
    "${extra[@]}"
  code=$?
  if [ ! -s "$bundle/$peer.json" ]; then
    "$py" "$root/scripts/peers/peers_common.py" --failed "$peer" --inputs "$scratch/inputs" \
      --reason "${peer}_peers.py ended with exit $code and no rows (logs/$peer.log)" \
      --out "$bundle/$peer.json"
  fi
  [ -s "$bundle/$peer.json" ] && libs+=(--library "$bundle/$peer.json")
done
rm -f "$bundle/npp-build/npp_peers"

# kperf's sweep at the timed sizes, in the time that is left.
# shellcheck disable=SC2086  # the axes and shapes are lists of options
step kperf-run 2 600 "$kperf" run --quiet --apps "$apps" $axes $shapes --warmup "$warmup" \
  --reps "$reps" "${timed[@]}" --out "$bundle/kperf-run.json.gz"

cp "$scratch/inputs/manifest.json" "$bundle/"
reserve=5
step merge 6 60 "$py" "$root/scripts/peers/merge.py" --inputs "$scratch/inputs" \
  --outputs "$scratch/outputs" --kperf "$bundle/kperf-run.json.gz" \
  --kperf-check "$bundle/kperf-check.json.gz" "${libs[@]}" --steps "$steps" \
  --out "$out/peers.json.gz"
status=$?
tar -czf "$out/peers-bundle.tar.gz" -C "$bundle" . || status=1
echo "peers.sh: wrote $out/peers.json.gz and $out/peers-bundle.tar.gz"
exit "$status"
