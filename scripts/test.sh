#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (host units, PoCL device tests,
# command-line and script tests); then builds again with AddressSanitizer and
# UndefinedBehaviorSanitizer (build-asan/) and runs the whole suite under them; last, where the
# machine allows it (root, binfmt_misc), the arm64 build under emulation (scripts/check-arm64.sh)
# with its Debian root cached in ~/.cache/kperf so that clones share it.
# KPERF_SANITIZE=0 skips the sanitizer pass, KPERF_ARM64=0 the arm64 check.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
datasets/fetch_images.sh || echo "sample photos unavailable; photo tests use synthetic inputs" >&2
(cd build && ctest --output-on-failure --parallel 2 "$@")

if [ "${KPERF_SANITIZE:-1}" != 0 ]; then
  echo "== the same tests under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)" >&2
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKPERF_SANITIZE=ON >/dev/null
  cmake --build build-asan --parallel
  # Leaks inside the OpenCL driver stack (PoCL, LLVM) are suppressed; kperf's own are not.
  # use_tls=0: LeakSanitizer's stop-the-world tracer crashes reading a PoCL thread's TLS at the
  # exit of some runs ("Tracer caught signal 11", google/sanitizers#1353; reproducible with a run
  # resumed from a file cut during compilation). Not scanning TLS can only add leak reports,
  # never hide one.
  (cd build-asan &&
   ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$PWD/../tests/lsan.supp:use_tls=0" \
   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
   ctest --output-on-failure --parallel 2 "$@")
fi

if [ "${KPERF_ARM64:-1}" != 0 ]; then
  echo "== the arm64 build on aarch64 PoCL under qemu (scripts/check-arm64.sh)" >&2
  KPERF_ARM64_ROOT="${KPERF_ARM64_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/kperf/arm64-bookworm}" \
    scripts/check-arm64.sh --skip-if-unsupported
fi
