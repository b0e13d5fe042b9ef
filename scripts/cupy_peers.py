#!/usr/bin/env python3
"""Peers on the same GPU, for context: CuPy's cupyx.scipy.ndimage equivalents of kperf's
accurate apps, timed with CUDA events (optional; needs CuPy and a CUDA GPU).

usage: python3 scripts/cupy_peers.py --sizes 512,1024,2048,4096,8192,16384 --out peers.json

Same semantics as kperf (float32, replicate border): Gaussian 3/5 as correlate() with the
binomial kernels, Sobel 3/5 as the magnitude of two correlate() calls, median_filter(size=3),
255 - x. Each is warmed up, then timed over --reps launches with one pair of CUDA events per
launch; the median is reported with the bytes model kperf uses (one read + one write per
element) as GB/s.
"""
import argparse
import json
import sys

try:
    import cupy as cp
    import numpy as np
    from cupyx.scipy import ndimage
except ImportError as exc:
    sys.exit(f"cupy_peers.py: {exc} (CuPy and a CUDA GPU are needed)")


def kernels():
    b3 = np.array([1, 2, 1], np.float32)
    b5 = np.array([1, 4, 6, 4, 1], np.float32)
    d3 = np.array([-1, 0, 1], np.float32)
    d5 = np.array([-1, -2, 0, 2, 1], np.float32)
    g3 = cp.asarray(np.outer(b3, b3) / 16)
    g5 = cp.asarray(np.outer(b5, b5) / 256)
    sx3, sy3 = cp.asarray(np.outer(b3, d3)), cp.asarray(np.outer(d3, b3))
    sx5, sy5 = cp.asarray(np.outer(b5, d5)), cp.asarray(np.outer(d5, b5))
    near = dict(mode="nearest")
    return {
        "gaussian3": lambda x: ndimage.correlate(x, g3, **near),
        "gaussian5": lambda x: ndimage.correlate(x, g5, **near),
        "sobel3": lambda x: cp.hypot(ndimage.correlate(x, sx3, **near), ndimage.correlate(x, sy3, **near)),
        "sobel5": lambda x: cp.hypot(ndimage.correlate(x, sx5, **near), ndimage.correlate(x, sy5, **near)),
        "median": lambda x: ndimage.median_filter(x, size=3, **near),
        "inversion": lambda x: 255.0 - x,
    }


def time_ms(fn, x, warmup, reps):
    for _ in range(warmup):
        fn(x)
    samples = []
    for _ in range(reps):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn(x)
        end.record()
        end.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, end))
    return float(np.median(samples)), samples


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rng = np.random.default_rng(2019)
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        x = cp.asarray(rng.random((n, n), dtype=np.float32) * 255)
        for app, fn in kernels().items():
            median, samples = time_ms(fn, x, args.warmup, args.reps)
            gbps = 2 * 4 * n * n / (median * 1e6)
            results.append({"app": app, "size": n, "median_ms": median, "samples_ms": samples, "gbps": gbps})
            print(f"{app:10s} {n:6d}  {median:9.4f} ms  {gbps:8.1f} GB/s", flush=True)
        del x
    doc = {"tool": "cupy", "cupy_version": cp.__version__,
           "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "results": results}
    with open(args.out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
