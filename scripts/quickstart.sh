#!/usr/bin/env bash
# The main job: install what is missing, build, fetch the sample photos when the Debian
# archive is reachable, then run the default benchmark on the default device.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
datasets/fetch_images.sh || echo "sample photos unavailable; using a built-in synthetic input" >&2
exec build/kperf run "$@"
