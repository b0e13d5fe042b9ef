#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (host units and PoCL device tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
datasets/fetch_images.sh || echo "sample photos unavailable; photo tests use synthetic inputs" >&2
cd build
ctest --output-on-failure --parallel 2 "$@"
