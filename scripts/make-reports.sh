#!/usr/bin/env bash
# Regenerates every committed report (results/reports.txt lists each and its run files) with
# scripts/report.py, or with --check regenerates them in a scratch directory and fails, naming
# each report whose report.md differs from the committed one (figures are not compared: their
# bytes follow matplotlib's version, the numbers they draw are the ones report.md tabulates).
# Without REPORT_DIR arguments it also fills (--check: compares) the headline tables of
# results/README.md (scripts/results-tables.py).
#
#   scripts/make-reports.sh [--check] [REPORT_DIR...]   (REPORT_DIR as in results/reports.txt)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python=/usr/bin/python3
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
wanted=" $* "
jobs=()
while read -r dir runs; do
  [[ -z "$dir" || "$dir" == \#* ]] && continue
  [[ $# -gt 0 && "$wanted" != *" $dir "* ]] && continue
  for r in $runs; do
    [ -f "$root/results/$r" ] || { echo "make-reports.sh: results/$r (for $dir) is missing" >&2; exit 2; }
  done
  jobs+=("$dir")
  echo "$dir $runs" >"$scratch/job-${#jobs[@]}"
done <"$root/results/reports.txt"
[ ${#jobs[@]} -gt 0 ] || { echo "make-reports.sh: no report named $* in results/reports.txt" >&2; exit 2; }

# One report.py per report, as many at a time as there are cores. --check compares report.md
# alone, so it draws no figures.
formats=""
[ "$check" = 1 ] && formats="--formats none"
ls "$scratch"/job-* | xargs -P "$(nproc)" -I{} bash -c '
  read -r dir runs <"$1"
  args=(); for r in $runs; do args+=("$2/results/$r"); done
  out="$3/out/$dir"
  mkdir -p "$(dirname "$out")"
  if ! '"$python"' "$2/scripts/report.py" "${args[@]}" --out "$out" $4 >"$out.log" 2>&1; then
    echo "make-reports.sh: report.py failed for $dir:" >&2; cat "$out.log" >&2; exit 255
  fi' _ {} "$root" "$scratch" "$formats"

status=0
for dir in "${jobs[@]}"; do
  if [ "$check" = 1 ]; then
    if ! cmp -s "$scratch/out/$dir/report.md" "$root/results/$dir/report.md"; then
      echo "make-reports.sh: results/$dir/report.md differs from what report.py makes of its runs:" >&2
      diff "$root/results/$dir/report.md" "$scratch/out/$dir/report.md" | head -20 >&2 || true
      status=1
    fi
  else
    # Replace the directory whole, so figures report.py no longer writes do not linger.
    rm -rf "$root/results/$dir.old"
    [ -d "$root/results/$dir" ] && mv "$root/results/$dir" "$root/results/$dir.old"
    mv "$scratch/out/$dir" "$root/results/$dir"
    rm -rf "$root/results/$dir.old"
  fi
done
if [ "$check" = 1 ] && [ "$status" = 0 ]; then
  echo "make-reports.sh: ${#jobs[@]} reports equal what report.py makes of their runs" >&2
fi
# The headline tables of results/README.md, when every report was asked for.
if [ $# -eq 0 ]; then
  if [ "$check" = 1 ]; then
    "$python" "$root/scripts/results-tables.py" --check "$root/results/README.md" || status=1
  else
    "$python" "$root/scripts/results-tables.py" "$root/results/README.md" || status=1
  fi
fi
exit "$status"
