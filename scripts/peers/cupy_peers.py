#!/usr/bin/env python3
"""CuPy's cupyx.scipy.ndimage filters that match kperf's apps, timed with CUDA events on the same
card (a peer of scripts/peers.sh; needs CuPy and a CUDA GPU, else its rows say unavailable).

usage: python3 scripts/peers/cupy_peers.py --inputs DIR --outputs DIR --out FILE
       [--warmup N] [--reps N]

mode="nearest" is kperf's clamp-to-edge border. Each app as a user writes it: the 2-D weights
through correlate(), and the same weights as two correlate1d() passes; sobel3 as the hypot of
two sobel() calls and as generic_gradient_magnitude(sobel); median_filter(size=3).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers_common as pc  # noqa: E402


def setup(_args):
    import cupy as cp
    import numpy as np
    from cupyx.scipy import ndimage

    near = {"mode": "nearest"}
    fns = []
    for app, taps, norm in (("gaussian3", pc.B3, 4.0), ("gaussian5", pc.B5, 16.0)):
        row = cp.asarray(np.array(taps, np.float32) / np.float32(norm))
        square = cp.asarray(np.outer(taps, taps).astype(np.float32) / np.float32(norm * norm))
        fns.append({"app": app, "function": "correlate (2-D weights)",
                    "run": lambda x, k=square: ndimage.correlate(x, k, **near)})
        fns.append({"app": app, "function": "correlate1d x2 (separable)",
                    "run": lambda x, k=row: ndimage.correlate1d(
                        ndimage.correlate1d(x, k, axis=0, **near), k, axis=1, **near)})
    fns.append({"app": "sobel3", "function": "hypot(sobel x, sobel y)",
                "run": lambda x: cp.hypot(ndimage.sobel(x, axis=1, **near),
                                          ndimage.sobel(x, axis=0, **near))})
    fns.append({"app": "sobel3", "function": "generic_gradient_magnitude(sobel)",
                "run": lambda x: ndimage.generic_gradient_magnitude(x, ndimage.sobel, **near)})
    fns.append({"app": "median", "function": "median_filter(size=3)",
                "run": lambda x: ndimage.median_filter(x, size=3, **near)})

    def timer():
        start, stop = cp.cuda.Event(), cp.cuda.Event()

        def done():
            stop.record()
            stop.synchronize()
            return cp.cuda.get_elapsed_time(start, stop)
        return start.record, done

    def release():
        cp.get_default_memory_pool().free_all_blocks()

    hold, held = None, "none"
    try:
        spin = cp.RawKernel(r"""extern "C" __global__ void hold(long long cycles) {
            long long start = clock64();
            while (clock64() - start < cycles) {}
        }""", "hold")
        spin((1,), (1,), (np.int64(pc.HOLD_CYCLES),))
        cp.cuda.Device().synchronize()
        hold, held = lambda: spin((1,), (1,), (np.int64(pc.HOLD_CYCLES),)), "a spinning kernel"
    except Exception as exc:  # noqa: BLE001 - timed without it, and the document says so
        held = "none: " + pc.short(exc)

    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    runtime = cp.cuda.runtime.runtimeGetVersion()
    versions = {"cupy": cp.__version__, "numpy": np.__version__,
                "cuda_runtime": f"{runtime // 1000}.{runtime % 1000 // 10}", "hold": held}
    device = {"upload": cp.asarray, "download": cp.asnumpy, "timer": timer, "release": release,
              "hold": hold}
    return fns, device, versions, name


if __name__ == "__main__":
    sys.exit(pc.peer_main("CuPy", sys.argv[1:], setup))
