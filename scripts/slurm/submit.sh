#!/usr/bin/env bash
# Submits a sharded kperf run to Slurm: an array of N shards, then a merge that runs once every
# shard succeeded. Prints the two job ids.
#   scripts/slurm/submit.sh N OUT [kperf run options]
# Environment: GRES (e.g. gpu:1, one GPU per shard), PARTITION, KPERF (the binary),
# SBATCH_ARGS (more sbatch options for both jobs).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
n="${1:?usage: submit.sh N OUT [kperf run options]}"
out="${2:?usage: submit.sh N OUT [kperf run options]}"
shift 2
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: N must be a positive integer, not '$n'" >&2; exit 2; }
outdir="${out%.json}-shards"
common=(${PARTITION:+--partition="$PARTITION"} ${SBATCH_ARGS:-})
array=$(sbatch --parsable --array=0-$((n - 1)) ${GRES:+--gres="$GRES"} "${common[@]}" \
  "$here/run-shard.sbatch" "$outdir" "$@")
array="${array%%;*}"
merge=$(sbatch --parsable --dependency=afterok:"$array" "${common[@]}" \
  "$here/merge.sbatch" "$out" "$outdir")
echo "array $array, merge ${merge%%;*}: $out once every shard is done"
