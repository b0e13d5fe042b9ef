#!/usr/bin/env bash
# Tests the Slurm recipe (scripts/slurm/) for real: brings up a single-node cluster (munged,
# slurmctld and slurmd with a minimal slurm.conf: one node, CPUs=2, select/cons_tres,
# proctrack/linuxproc, task/none), runs a 4-shard array of a small PoCL run with its dependent
# merge, and checks that the merged document has the configurations and statuses of one
# unsharded run. Needs root (it starts daemons and installs slurm-wlm and munge when missing);
# without root, or where they cannot be installed, it skips with one line, like check-arm64.sh.
#   scripts/check-slurm.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
kperf="$build/kperf"
[ -x "$kperf" ] || { echo "check-slurm.sh: $kperf not built" >&2; exit 2; }
if [ "$(id -u)" != 0 ]; then
  echo "check-slurm.sh: skipped (needs root to start munged, slurmctld and slurmd)"
  exit 0
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurm-wlm munge \
       >/dev/null 2>&1; then
    echo "check-slurm.sh: skipped (slurm-wlm and munge are not installed and could not be)"
    exit 0
  fi
fi

work="$(mktemp -d)"
chmod 755 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$work/slurmctld.pid" ] && kill "$(cat "$work/slurmctld.pid")" 2>/dev/null || true
  [ -f "$work/slurmd.pid" ] && kill "$(cat "$work/slurmd.pid")" 2>/dev/null || true
  [ -f "$work/munged.pid" ] && kill "$(cat "$work/munged.pid")" 2>/dev/null || true
  sleep 1
  rm -rf "$work"
}
trap cleanup EXIT

# munge: a fresh key and socket of this check's own.
mkdir -p "$work/munge"
dd if=/dev/urandom bs=1 count=1024 of="$work/munge/munge.key" 2>/dev/null
chmod 700 "$work/munge"
chmod 400 "$work/munge/munge.key"
munged --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.socket" \
  --pid-file="$work/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munge/seed"
export MUNGE_SOCKET="$work/munge/munge.socket"

node="$(hostname -s)"
mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<CONF
ClusterName=kperfcheck
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
CredType=cred/munge
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$node CPUs=2 State=UNKNOWN
PartitionName=check Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$work/slurm.conf"
slurmctld -i
slurmd
for _ in $(seq 60); do
  sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && break
  sleep 1
done
# A machine where Slurm's daemons cannot run (a container without a resolvable host name, say)
# is not a failure of the recipe: skip, with the daemons' last words.
sinfo -h -o %t | grep -qE '^(idle|mix|alloc)' || {
  echo "check-slurm.sh: skipped (the single-node cluster did not come up here)"
  tail -n 3 "$work/slurmctld.log" "$work/slurmd.log" >&2 || true
  exit 0
}

opts=(--apps gaussian3,median --schemes accurate,stencil,rows:2 --wg 8x8,16x4 --size 40x32
      --input synthetic:smooth --warmup 0 --reps 2)
cd "$work"
export KPERF="$kperf"
line="$("$root/scripts/slurm/submit.sh" 4 "$work/merged.json" "${opts[@]}")"
merge_job="$(sed -E 's/.*merge ([0-9]+).*/\1/' <<<"$line")"
for _ in $(seq 600); do
  state="$(scontrol show job "$merge_job" 2>/dev/null | grep -oE 'JobState=[A-Z_]+' | cut -d= -f2)"
  case "$state" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
  sleep 1
done
if [ "$state" != COMPLETED ]; then
  echo "check-slurm.sh: the merge job ended $state" >&2
  tail -n 5 "$work"/kperf-*.log >&2 || true
  exit 1
fi
"$kperf" run "${opts[@]}" --quiet --out "$work/single.json" >/dev/null 2>&1
/usr/bin/python3 - "$work/single.json" "$work/merged.json" <<'PY'
import json, sys
single, merged = (json.load(open(p)) for p in sys.argv[1:3])
a = {r["key"]: r["status"] for r in single["results"]}
b = {r["key"]: r["status"] for r in merged["results"]}
if a != b or len(b) != len(merged["results"]):
    sys.exit(f"check-slurm.sh: merged {len(b)} configurations differ from the unsharded run's {len(a)}")
shards = merged["context"]["merge"]["shards"]
if sorted(s["index"] for s in shards) != [0, 1, 2, 3]:
    sys.exit("check-slurm.sh: the merge does not hold shards 0-3")
print(f"check-slurm.sh: a 4-task Slurm array and its dependent merge gave the {len(a)} "
      "configurations and statuses of one unsharded run")
PY
