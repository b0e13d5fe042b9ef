#!/usr/bin/env bash
# Installs what is missing, builds, and runs the tests.
#
#   scripts/test.sh [--full] [ctest options...]
#
# The fast tier (no --full): host unit tests, device tests on PoCL (every app against its double
# reference, every scheme and axis against its CPU model, NaN poisoning, canaries), command-line
# and script tests, Oclgrind on a sample of configurations; per-app suites run a sample of the
# apps, matrix tests a sample of their launch shapes, each shape for some variant; the tests
# labelled `full` (report and tune scripts end to end, energy, shards) wait for --full. --full runs, in order:
#   - every test that KPERF_TEST_FULL=1 widens, widened: every launch shape of the matrix tests,
#     every app of every per-app suite, the whole Oclgrind covering array, every host, command-line
#     and script test; the device tests it does not change run in the next pass alone;
#   - every device suite (ctest -L device) at the fast tier's shapes and apps, built with PoCL's
#     optimiser as users build them;
#   - AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/): the host tests, every device
#     suite as in the pass before, the command line, the tuner's selection and workers, shards
#     and energy (KPERF_SANITIZE=0 skips it).
# Every other pass builds the kernels unoptimised on PoCL (POCL_EXTRA_BUILD_FLAGS=
# -cl-opt-disable): PoCL then compiles three times faster, and the tests check what a kernel
# computes, which optimisation does not change. KPERF_TEST_OPTIMISED=1 keeps the optimiser.
# Every test process shares PoCL's kernel cache (by source and options), so each distinct
# program compiles once per machine. (kperf's own binary cache, KPERF_BINARY_CACHE=DIR, serves
# the same purpose on other drivers; on PoCL it cost more than it saved: storing a binary makes
# PoCL generate code it would otherwise compile only on first launch.)
# The platform checks are separate commands, run as root: scripts/check-arm64.sh (the arm64
# build on aarch64 PoCL under qemu) and scripts/check-slurm.sh build (a 4-shard Slurm array).
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
if [ "${1:-}" = "--full" ]; then
  full=1
  shift
fi
scripts/install-deps.sh
scripts/build.sh
datasets/fetch_images.sh || echo "sample photos unavailable; photo tests use synthetic inputs" >&2

if [ "${KPERF_TEST_OPTIMISED:-0}" = 0 ]; then
  export POCL_EXTRA_BUILD_FLAGS="${POCL_EXTRA_BUILD_FLAGS:+$POCL_EXTRA_BUILD_FLAGS }-cl-opt-disable"
fi

if [ "$full" = 0 ]; then
  (cd build && ctest --output-on-failure --parallel 2 -LE '^full$' "$@")
  exit 0
fi

# The device tests that KPERF_TEST_FULL=1 widens (tests/full_tier_test.py holds this list to
# the tests' sources: every test that reads full_matrix(), samples its apps or its shapes).
widened='^AllApps/|^(Bilateral\.LoopPerforation|OutputScheme\.(Shared|RowsOutside)|Probes\.LoadsOnly'
widened+='|UserApp\.UnseenKernel|HalfPairs\.MedianSelects)'
echo "== every launch shape and app of the matrix tests (KPERF_TEST_FULL=1), and every other test but the device ones" >&2
# One ctest call, so that the long script tests run beside the device ones: every test but the
# device tests outside $widened, named exactly.
same=$(cd build && ctest -N -L device | sed -n 's/^ *Test *#[0-9]*: //p' | { grep -Ev "$widened" || true; } |
       sed 's/[][\.*^$()+?{}|/"]/\\&/g' | paste -sd'|')
(cd build && KPERF_TEST_FULL=1 ctest --output-on-failure --parallel 2 ${same:+-E "^($same)\$"} "$@")

echo "== every device suite at the fast tier's shapes and apps, optimised" >&2
(cd build && env -u POCL_EXTRA_BUILD_FLAGS ctest --output-on-failure --parallel 2 -L device "$@")

if [ "${KPERF_SANITIZE:-1}" != 0 ]; then
  echo "== host tests, every device suite, the command line and some scripts under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)" >&2
  # -O1, so that the CPU models and references the tests compute take seconds, not minutes; the
  # sanitizers check the same code paths. -g1 (line tables, for the reports' stack traces) and
  # -O1 compile in half the time of RelWithDebInfo's -O2 -g: 26 s against 49 s for one of the
  # larger files.
  # The commands, the tuner, the sessions, main.cpp and the test suites' files at -O0: their run
  # time is small beside the models' and PoCL's, and they are most of the build
  # (KPERF_GLUE_COMPILE_OPTIONS).
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DKPERF_GLUE_COMPILE_OPTIONS=-O0 \
        -DKPERF_SANITIZE=ON >/dev/null
  cmake --build build-asan --parallel
  # Host suites whole; every device suite at the fast tier's shapes and apps, optimised as in
  # the pass before, whose programs PoCL's cache then holds (all 120 took 1 min 23 s so in a
  # --full run, against 8 min 51 s with the cache empty: PoCL's compiler runs slower in a
  # sanitized process); the command line, the tuner's selection and its workers on other devices, shards
  # and energy end to end, unoptimised as in the widened pass, whose programs the cache holds.
  # (The photo-tuning script, tune_script, drives the same `kperf tune` as tune_select at more
  # cost; it runs in the widened pass.)
  scripts='^Cli\.|^(tune_devices|tune_select|shard_merge|energy_fake_sensor)$'
  # Leaks inside the OpenCL driver stack (PoCL, LLVM) are suppressed; kperf's own are not.
  # use_tls=0: LeakSanitizer's stop-the-world tracer crashes reading a PoCL thread's TLS at the
  # exit of some runs ("Tracer caught signal 11", google/sanitizers#1353; reproducible with a run
  # resumed from a file cut during compilation). Not scanning TLS can only add leak reports,
  # never hide one.
  (cd build-asan &&
   export ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$PWD/../tests/lsan.supp:use_tls=0:print_suppressions=0" \
          UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 &&
   ctest --output-on-failure --parallel 2 -L host "$@" &&
   env -u POCL_EXTRA_BUILD_FLAGS ctest --output-on-failure --parallel 2 -L device "$@" &&
   ctest --output-on-failure --parallel 2 -R "$scripts" "$@")
fi
