#!/usr/bin/env python3
"""The inputs every library and kperf read in a peers run (scripts/peers.sh): a photo as kperf
decodes it (semantics §1), at its own size for the check and resized to each timed size, each a
float32 .npy, and manifest.json naming them.

usage: python3 scripts/peers/inputs.py --photo PNG --sizes 2048,4096,8192 [--check-sizes 2048]
       [--synthetic-if-missing] --out DIR

Every size is square. The photo at its own size is checked, never timed; --check-sizes names the
timed sizes whose outputs are checked too (the smallest by default: the references of larger
grids cost the device's host more than the check adds).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers_common as pc  # noqa: E402


def sizes(text):
    out = [int(s) for s in text.split(",") if s.strip()]
    if not out or any(n < 3 or n > 46340 for n in out):
        raise argparse.ArgumentTypeError(f"{text!r}: sides from 3 to 46340, comma-separated")
    return out


def synthetic(side=512, seed=2019):
    """Smooth structure, edges and noise in [0, 255]: a stand-in where no photo was carried."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:side, 0:side]
    g = 127 + 90 * np.sin(x / 9.3) * np.cos(y / 13.1) + 40 * (x > side // 2) - 30 * (y > side // 3)
    return np.clip(g + rng.uniform(-12, 12, (side, side)), 0, 255).astype(np.float32)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--photo", required=True)
    ap.add_argument("--sizes", type=sizes, required=True)
    ap.add_argument("--check-sizes", type=sizes, default=None)
    ap.add_argument("--out", required=True)
    ap.add_argument("--synthetic-if-missing", action="store_true",
                    help="a synthetic 512x512 image where the photo is missing, said so")
    args = ap.parse_args(argv)
    name = os.path.splitext(os.path.basename(args.photo))[0]
    if os.path.exists(args.photo) or not args.synthetic_if_missing:
        try:
            photo = pc.read_png_luminance(args.photo)
        except (OSError, ValueError) as exc:
            print(f"inputs.py: {exc}", file=sys.stderr)
            return 2
    else:
        print(f"inputs.py: {args.photo} is missing: a synthetic image instead (no photo)",
              file=sys.stderr)
        photo, name = synthetic(), "synthetic"
    checked = set(args.check_sizes if args.check_sizes is not None else [min(args.sizes)])
    h, w = photo.shape
    plan = [((w, h), False, True)] + [((n, n), True, n in checked) for n in args.sizes]
    os.makedirs(args.out, exist_ok=True)
    entries = []
    for size, timed, check in plan:
        rel = os.path.join(pc.size_name(size), f"{name}.npy")
        os.makedirs(os.path.join(args.out, pc.size_name(size)), exist_ok=True)
        np.save(os.path.join(args.out, rel), pc.resize_bilinear(photo, *size))
        entries.append({"size": list(size), "path": rel, "timed": timed, "checked": check})
    pc.write_json(os.path.join(args.out, "manifest.json"),
                  {"photo": os.path.basename(args.photo) if name != "synthetic" else None,
                   "input": name, "entries": entries})
    print(f"inputs.py: {name} at {', '.join(pc.size_name(e['size']) for e in entries)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
