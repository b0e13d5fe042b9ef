#!/usr/bin/env bash
# The arm64 build checked under emulation: an arm64 Debian 12 root (debootstrap, cached in
# .arm64/ or $KPERF_ARM64_ROOT), kperf and its tests cross-built against it
# (cmake/aarch64-linux-gnu.cmake), then the host unit tests and a subset of the device tests run
# on aarch64 PoCL inside the root under qemu-user. Idempotent; needs root (debootstrap, chroot,
# binfmt_misc) and a Debian mirror for the first run. Exit 0: every emulated test passed.
# --skip-if-unsupported: where the machine cannot run it (not root, no binfmt_misc, no mirror for
# a root not yet cached), say so on one line and exit 0 instead of 1 (how scripts/test.sh calls
# it).
set -euo pipefail
skip_if_unsupported=0
for arg in "$@"; do
  case "$arg" in
    --skip-if-unsupported) skip_if_unsupported=1 ;;
    *) echo "check-arm64: unknown argument '$arg' (only --skip-if-unsupported)" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
repo="$(pwd)"
root="${KPERF_ARM64_ROOT:-$repo/.arm64/root}"
build="${KPERF_ARM64_BUILD:-$repo/build-arm64}"
mirror="${KPERF_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# Device tests that fit emulation (PoCL compiles every kernel under qemu: minutes, not seconds).
device_filter="${KPERF_ARM64_DEVICE_TESTS:-Gaussian3.*:AllApps/AccurateApp.MatchesReferenceAtOddSizes/*:Failures.*:DeviceMetrics.*}"

fail() { echo "check-arm64: $*" >&2; exit 1; }
step() { echo "check-arm64: $*" >&2; }
unsupported() {
  if [ "$skip_if_unsupported" = 1 ]; then
    echo "check-arm64: skipped: $*" >&2
    exit 0
  fi
  fail "$*"
}

[ "$(id -u)" = 0 ] || unsupported "needs root (debootstrap, chroot and binfmt_misc registration)"

need=()
for pkg in qemu-user-static crossbuild-essential-arm64 debootstrap cmake pkg-config; do
  dpkg -s "$pkg" > /dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  step "installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" > /dev/null ||
    unsupported "could not install ${need[*]} (no package mirror reachable?)"
fi

# The aarch64 interpreter, registered by hand where no binfmt service runs (containers).
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/register" ]; then
  mount -t binfmt_misc binfmt_misc "$binfmt" 2> /dev/null ||
    unsupported "binfmt_misc is not available and cannot be mounted at $binfmt (a container without it?)"
fi
if [ ! -e "$binfmt/qemu-aarch64" ]; then
  conf=/usr/lib/binfmt.d/qemu-aarch64.conf
  [ -r "$conf" ] || fail "$conf missing (qemu-user-static)"
  grep -v '^#' "$conf" | head -n 1 > "$binfmt/register" ||
    fail "could not register the aarch64 interpreter with binfmt_misc"
fi

# The arm64 root with PoCL and every -dev package kperf builds against.
packages=pocl-opencl-icd,ocl-icd-opencl-dev,opencl-c-headers,opencl-clhpp-headers,libcxxopts-dev
packages=$packages,nlohmann-json3-dev,libstb-dev,libgtest-dev
# One check at a time per root: the root is shared by clones (scripts/test.sh) and bind mounts
# must not interleave.
mkdir -p "$(dirname "$root")"
exec 9> "$root.lock"
flock 9
if [ ! -e "$root/.kperf-ready" ]; then
  wget -q --spider -T 30 "$mirror/dists/bookworm/Release" ||
    unsupported "no cached arm64 root in $root and the Debian mirror $mirror is unreachable"
  step "bootstrapping an arm64 Debian 12 root in $root (first run: several minutes)"
  # A bind mount left by a killed run must not be descended into.
  rm -rf --one-file-system "$root"
  debootstrap --arch=arm64 --variant=minbase --include="$packages" bookworm "$root" "$mirror" \
    > "$(dirname "$root")/debootstrap.log" 2>&1 ||
    fail "debootstrap failed (log: $(dirname "$root")/debootstrap.log)"
  touch "$root/.kperf-ready"
fi

step "cross-building kperf and its tests in $build"
export KPERF_SYSROOT="$root"
export PKG_CONFIG_SYSROOT_DIR="$root"
export PKG_CONFIG_LIBDIR="$root/usr/lib/aarch64-linux-gnu/pkgconfig:$root/usr/share/pkgconfig"
log="$(dirname "$root")/build.log"
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
  -DKPERF_SYSROOT="$root" -DCMAKE_BUILD_TYPE=Release > "$log" 2>&1 ||
  fail "configuring the arm64 build failed (log: $log)"
cmake --build "$build" -j "$(nproc)" >> "$log" 2>&1 || fail "the arm64 build failed (log: $log)"
aarch64-linux-gnu-readelf -h "$build/kperf" | grep -q AArch64 || fail "$build/kperf is not an aarch64 binary"

# The tests run inside the root, the repository mounted at its own path so the paths compiled
# into them hold; PoCL needs /proc, /sys and /dev.
mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2> /dev/null || true; done
}
trap cleanup EXIT
for m in /proc /sys /dev "$repo"; do
  mkdir -p "$root$m"
  # A killed run's mount would otherwise stay stacked under this one.
  if mountpoint -q "$root$m"; then umount -l "$root$m"; fi
  mount --bind "$m" "$root$m"
  mounts+=("$root$m")
done
in_root() { chroot "$root" /usr/bin/env HOME=/root POCL_CACHE_DIR=/root/.cache/pocl "$@"; }

step "aarch64 kperf devices"
in_root "$build/kperf" devices | sed 's/^/  /' >&2 || fail "kperf devices failed under emulation"
step "host unit tests (aarch64)"
in_root "$build/tests/kperf_unit_tests" --gtest_brief=1 || fail "unit tests failed on aarch64"
step "device tests on aarch64 PoCL: $device_filter"
KPERF_TEST_DEVICE= in_root "$build/tests/kperf_device_tests" --gtest_brief=1 \
  --gtest_filter="$device_filter" || fail "device tests failed on aarch64 PoCL"
step "a gaussian3/median/bilateral run on aarch64 PoCL"
in_root "$build/kperf" run --apps gaussian3,median,bilateral --schemes accurate,rows1 --wg 16x8 \
  --size 64 --warmup 1 --reps 3 --quiet --out /tmp/kperf-arm64.json > /dev/null ||
  fail "kperf run failed under emulation"
step "passed"
