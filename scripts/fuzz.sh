#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (+ASan/UBSan) and runs each, from the committed seed
# corpora, for RUNS executions (default 1000000) or until a crash. Findings land in
# build-fuzz/findings-<target>/; the working corpus grows in build-fuzz/corpus-<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-1000000}"
KPERF_EXTRA_PACKAGES="clang libclang-rt-14-dev" scripts/install-deps.sh
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_C_COMPILER=clang -DKPERF_FUZZ=ON -DKPERF_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz --target fuzz_readers fuzz_parsers
for target in readers parsers; do
  corpus="build-fuzz/corpus-$target" findings="build-fuzz/findings-$target"
  mkdir -p "$corpus" "$findings"
  cp -n tests/fuzz/corpus/$target/* "$corpus/" 2>/dev/null || true
  echo "== fuzz_$target: $RUNS runs" >&2
  status=0
  build-fuzz/fuzz_$target -runs="$RUNS" -max_len=65536 -artifact_prefix="$findings/" \
      -print_final_stats=1 "$corpus" > "build-fuzz/fuzz_$target.log" 2>&1 || status=$?
  grep -E "^(stat::number_of_executed_units|stat::new_units_added|Done)|ERROR|SUMMARY" \
      "build-fuzz/fuzz_$target.log" || true
  if [ "$status" -ne 0 ]; then
    echo "fuzz_$target found a failure (exit $status); inputs in $findings/, log in build-fuzz/fuzz_$target.log" >&2
    failed=1
  fi
done
exit "${failed:-0}"
