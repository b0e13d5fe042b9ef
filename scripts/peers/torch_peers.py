#!/usr/bin/env python3
"""PyTorch's filters that match kperf's apps, timed with CUDA events on the same card (a peer of
scripts/peers.sh; needs PyTorch with CUDA, else its rows say unavailable).

usage: python3 scripts/peers/torch_peers.py --inputs DIR --outputs DIR --out FILE
       [--warmup N] [--reps N]

As a user writes them: F.pad(mode="replicate") for kperf's clamp-to-edge border, then conv2d
(cuDNN) with the 2-D weights; sobel3 as one conv2d with the two gradients' weights and their
hypot; median as unfold of the padded grid and median over each 3x3 window, where its nine
copies of the grid fit in the GPU's free memory (else a not_run row). cuDNN may pick its
fastest algorithm (cudnn.benchmark) but not TF32, whose 10-bit mantissa is not kperf's float
arithmetic (a TF32 output fails the check).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers_common as pc  # noqa: E402


def setup(_args):
    import numpy as np
    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False")
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_grad_enabled(False)
    dev = torch.device("cuda")

    def weights(*kernels):
        return torch.tensor(np.stack(kernels)[:, None], dtype=torch.float32, device=dev)

    def conv(w, r):
        return lambda x: F.conv2d(F.pad(x, (r, r, r, r), mode="replicate"), w)

    def sobel(w):
        def run(x):
            g = F.conv2d(F.pad(x, (1, 1, 1, 1), mode="replicate"), w)
            return torch.hypot(g[:, 0:1], g[:, 1:2])
        return run

    def median(x):
        h, w = x.shape[-2:]
        need = 9 * h * w * 4 * 2  # the unfolded windows and the sort's copy
        free, _ = torch.cuda.mem_get_info()
        if need > free:
            raise pc.NotRun(f"unfold needs about {need / 2**30:.1f} GiB, "
                            f"{free / 2**30:.1f} GiB free")
        p = F.pad(x, (1, 1, 1, 1), mode="replicate")
        return p.unfold(2, 3, 1).unfold(3, 3, 1).reshape(1, 1, h, w, 9).median(dim=-1).values

    g3 = np.outer(pc.B3, pc.B3) / 16.0
    g5 = np.outer(pc.B5, pc.B5) / 256.0
    blur = "F.pad(replicate) + conv2d"
    fns = [{"app": "gaussian3", "function": blur, "run": conv(weights(g3), 1)},
           {"app": "gaussian5", "function": blur, "run": conv(weights(g5), 2)},
           {"app": "sobel3", "function": "F.pad(replicate) + conv2d(gx, gy) + hypot",
            "run": sobel(weights(np.outer(pc.B3, pc.D3), np.outer(pc.D3, pc.B3)))},
           {"app": "median", "function": "F.pad(replicate) + unfold + median", "run": median}]

    def timer():
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def done():
            stop.record()
            stop.synchronize()
            return start.elapsed_time(stop)
        return start.record, done

    def upload(host):
        return torch.from_numpy(np.ascontiguousarray(host)).to(dev)[None, None]

    def download(out):
        return out[0, 0].cpu().numpy()

    hold, held = None, "none"
    try:  # torch.cuda._sleep spins the GPU for a number of cycles (private, long-standing)
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()
        hold, held = (lambda: torch.cuda._sleep(pc.HOLD_CYCLES)), "torch.cuda._sleep"
    except Exception as exc:  # noqa: BLE001 - timed without it, and the document says so
        held = "none: " + pc.short(exc)
    versions = {"torch": torch.__version__, "cuda_runtime": torch.version.cuda,
                "cudnn": str(torch.backends.cudnn.version()), "numpy": np.__version__,
                "settings": "cudnn.benchmark on, TF32 off", "hold": held}
    device = {"upload": upload, "download": download, "timer": timer,
              "release": torch.cuda.empty_cache, "hold": hold}
    return fns, device, versions, torch.cuda.get_device_name(0)


if __name__ == "__main__":
    sys.exit(pc.peer_main("PyTorch", sys.argv[1:], setup))
