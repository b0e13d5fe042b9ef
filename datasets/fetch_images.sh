#!/usr/bin/env bash
# Extracts the CC0 / public-domain sample photos shipped in Debian's python3-skimage package
# into datasets/images/ (git-ignored), by downloading and unpacking the .deb only: none of its
# Python dependencies are installed. Idempotent; exits non-zero when the archive is unreachable.
set -euo pipefail
cd "$(dirname "$0")"

photos=(astronaut.png brick.png camera.png cell.png chelsea.png clock_motion.png coffee.png
        coins.png grass.png gravel.png hubble_deep_field.jpg moon.png retina.jpg rocket.jpg
        text.png)

have_all=1
for p in "${photos[@]}"; do [ -s "images/$p" ] || have_all=0; done
[ "$have_all" = 1 ] && exit 0

mkdir -p .cache images
cd .cache
if ! ls python3-skimage_*.deb >/dev/null 2>&1; then
  apt-get download python3-skimage >/dev/null 2>&1 ||
    { [ "$(id -u)" -eq 0 ] && apt-get update -qq && apt-get download python3-skimage >/dev/null 2>&1; } ||
    { echo "fetch_images: cannot download python3-skimage from the Debian archive" >&2; exit 1; }
fi
rm -rf unpacked
dpkg-deb -x python3-skimage_*.deb unpacked
data=unpacked/usr/lib/python3/dist-packages/skimage/data
for p in "${photos[@]}"; do cp "$data/$p" "../images/$p"; done
rm -rf unpacked
echo "fetch_images: ${#photos[@]} photos in datasets/images/" >&2
