#!/usr/bin/python3
"""Holds kperf's accurate kernels against independent numpy implementations of the OpenCV /
SciPy semantics (replicate border): GaussianBlur 3/5, Sobel magnitude 3/5, 3x3 median, 255-x,
bilateralFilter d = 5 (SPEC 11, with and without loop perforation, at non-default sigmas);
and its half-precision, host-perforated kernels against a numpy model of SPEC sections 3, 4 and
10 (numpy's float16 rounding, tile-local reconstruction of rows:k / cols:k).

usage: independent_refs.py KPERF_BINARY PHOTO_DIR
Uses PNG photos from PHOTO_DIR when present (luminance computed here with PIL), else a
generated field. Exit 0 on agreement, 1 on a mismatch, 77 when numpy is unavailable.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("numpy missing: install python3-numpy", file=sys.stderr)
    sys.exit(77)


def load_luminance(path):
    from PIL import Image  # python3-pil comes with python3-matplotlib

    img = np.asarray(Image.open(path)).astype(np.float64)
    if img.ndim == 2:
        return img
    return 0.299 * img[..., 0] + 0.587 * img[..., 1] + 0.114 * img[..., 2]


def correlate(img, ky, kx):
    """Separable correlation with replicate border (cv2.BORDER_REPLICATE, mode='nearest')."""
    r = len(ky) // 2
    p = np.pad(img, r, mode="edge")
    h, w = img.shape
    out = np.zeros_like(img)
    for i, a in enumerate(ky):
        for j, b in enumerate(kx):
            out += a * b * p[i:i + h, j:j + w]
    return out


def bilateral(img, sigma_color=25.0, sigma_space=2.0, loop_skip=1):
    """SPEC 11: OpenCV's round d = 5 window (dy^2 + dx^2 <= 4), replicate border; with loop
    perforation only every loop_skip-th tap in row-major order, weights renormalised."""
    h, w = img.shape
    p = np.pad(img, 2, mode="edge")
    taps = [(dy, dx) for dy in range(-2, 3) for dx in range(-2, 3) if dy * dy + dx * dx <= 4]
    num, den = np.zeros_like(img), np.zeros_like(img)
    for dy, dx in taps[::loop_skip]:
        q = p[2 + dy:2 + dy + h, 2 + dx:2 + dx + w]
        weight = (np.exp(-(dy * dy + dx * dx) / (2 * sigma_space ** 2)) *
                  np.exp(-(q - img) ** 2 / (2 * sigma_color ** 2)))
        num += weight * q
        den += weight
    return num / den


def run_rows(binary, args, tmp, name):
    """Runs kperf with `args`, outputs saved, and returns its result rows."""
    out = os.path.join(tmp, name + ".json")
    cmd = [binary, "run"] + args + ["--warmup", "0", "--reps", "1", "--quiet", "--out", out,
                                    "--save-outputs", os.path.join(tmp, "out-" + name)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.load(open(out))["results"]


def check_bilateral_options(binary, path, img, tmp):
    """Loop perforation and computed weights at sigmas 30,1.5 against the numpy filter."""
    rows = run_rows(binary, ["--apps", "bilateral", "--schemes", "accurate", "--loop-skip", "1,2",
                             "--weights", "table,computed", "--load", "local,global,image",
                             "--bilateral-sigmas", "30,1.5", "--wg", "16x8", "--input", path],
                    tmp, "bilateral")
    passed = failures = 0
    for row in rows:
        if row["status"] != "ok":
            print(f"FAIL {row['key']}: {row['status']} {row.get('reason', '')}")
            failures += 1
            continue
        want = bilateral(img, 30.0, 1.5, row["loop_skip"])
        got = read_npy_output(row["output_file"])
        worst = float(np.max(np.abs(got - want)))
        ok = bool(np.all(np.abs(got - want) <= np.maximum(1e-3, 1e-5 * np.abs(want))))
        failures += not ok
        passed += ok
        print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(path):16s} {row['key']:60s} max |kperf - numpy| = {worst:.3g}")
    return passed, failures


def references(img):
    b3, d3 = [1, 2, 1], [-1, 0, 1]
    b5, d5 = [1, 4, 6, 4, 1], [-1, -2, 0, 2, 1]
    p = np.pad(img, 1, mode="edge")
    h, w = img.shape
    stack = np.stack([p[i:i + h, j:j + w] for i in range(3) for j in range(3)])
    return {
        "gaussian3": correlate(img, b3, b3) / 16.0,
        "gaussian5": correlate(img, b5, b5) / 256.0,
        "sobel3": np.hypot(correlate(img, b3, d3), correlate(img, d3, b3)),
        "sobel5": np.hypot(correlate(img, b5, d5), correlate(img, d5, b5)),
        "median": np.median(stack, axis=0),
        "inversion": 255.0 - img,
        "bilateral": bilateral(img),
    }


def opencv_references(img):
    """The same semantics through OpenCV itself, where cv2 is installed (optional)."""
    try:
        import cv2
    except ImportError:
        return {}
    rep = cv2.BORDER_REPLICATE
    f = img.astype(np.float64)
    refs = {
        "gaussian3": cv2.GaussianBlur(f, (3, 3), 0, borderType=rep),
        "gaussian5": cv2.GaussianBlur(f, (5, 5), 0, borderType=rep),
        "inversion": 255.0 - f,
    }
    for k in (3, 5):
        gx = cv2.Sobel(f, cv2.CV_64F, 1, 0, ksize=k, borderType=rep)
        gy = cv2.Sobel(f, cv2.CV_64F, 0, 1, ksize=k, borderType=rep)
        refs[f"sobel{k}"] = np.hypot(gx, gy)
    if np.all(f == np.round(f)):  # medianBlur takes 8-bit images: exact for integer inputs
        refs["median"] = cv2.medianBlur(f.astype(np.uint8), 3).astype(np.float64)
    return refs


def reconstructed_lines(img, r, k, block, li):
    """SPEC 4 on the row axis: out[d][y] is row y + d (d in -r..r) as the tile of y's block
    holds it (tile rows (gy + r) mod k == 0 loaded, the rest nearest / interpolated from loaded
    rows of the same tile), each row clamped to the grid."""
    h = img.shape[0]
    out = {}
    for d in range(-r, r + 1):
        rows = np.empty_like(img)
        for y in range(h):
            gy0 = (y // block) * block - r  # global row of tile row 0
            n = block + 2 * r
            t = y + d - gy0
            loaded = [u for u in range(n) if (gy0 + u + r) % k == 0]
            row = lambda u: img[min(max(gy0 + u, 0), h - 1)]
            if t in loaded:
                rows[y] = row(t)
                continue
            above = max([u for u in loaded if u < t], default=None)
            below = min([u for u in loaded if u > t], default=None)
            if above is None or below is None:
                rows[y] = row(below if above is None else above)
            elif li:
                w = (t - above) / (below - above)
                rows[y] = row(above) + w * (row(below) - row(above))
            else:
                rows[y] = row(above) if t - above <= below - t else row(below)
        out[d] = rows
    return out


def perforated_model(app, img, scheme, k, li, block_x, block_y):
    """The app on a rows:k / cols:k perforated input (cols: the same on the transpose)."""
    r = {"gaussian3": 1, "median": 1, "inversion": 0}[app]
    cols = scheme == "cols"
    src = img.T if cols else img
    lines = reconstructed_lines(src, r, k, block_x if cols else block_y, li)
    w = src.shape[1]
    win = {}
    for d in range(-r, r + 1):
        for e in range(-r, r + 1):
            idx = np.clip(np.arange(w) + e, 0, w - 1)
            win[(d, e)] = lines[d][:, idx]
            if cols:
                win[(d, e)] = win[(d, e)].T
    if cols:  # on the transpose, d ran along x and e along y
        win = {(e, d): v for (d, e), v in win.items()}
    if app == "inversion":
        return 255.0 - win[(0, 0)]
    if app == "median":
        return np.median(np.stack([win[(d, e)] for d in (-1, 0, 1) for e in (-1, 0, 1)]), axis=0)
    wts = {-1: 1.0, 0: 2.0, 1: 1.0}
    return sum(wts[d] * wts[e] * win[(d, e)] for d in (-1, 0, 1) for e in (-1, 0, 1)) / 16.0


def check_half_and_host(binary, path, img, tmp):
    """f16in / f16 storage with host perforation against the numpy model: inputs rounded by
    numpy's float16 (round to nearest even), f16 outputs compared in half ulps."""
    rows = run_rows(binary, ["--apps", "gaussian3,median,inversion", "--schemes", "rows:2,cols:3",
                             "--recon", "nn,li", "--precision", "f16in,f16", "--perforate", "host",
                             "--wg", "16x8", "--input", path], tmp, "half")
    rounded = img.astype(np.float32).astype(np.float16).astype(np.float64)
    passed = failures = 0
    for row in rows:
        if row["status"] != "ok":
            print(f"FAIL {row['key']}: {row['status']} {row.get('reason', '')}")
            failures += 1
            continue
        got = read_npy_output(row["output_file"])
        want = perforated_model(row["app"], rounded, row["scheme"].split(":")[0], row["skip"],
                                row["recon"] == "li", 16, 8)
        if row["precision"] == "f16":
            # float (kernel) and double (model) may round to neighbouring halves.
            ulp = np.spacing(np.abs(want).astype(np.float16)).astype(np.float64)
            ok = bool(np.all(np.abs(got - want.astype(np.float16).astype(np.float64)) <= ulp))
        else:
            ok = bool(np.all(np.abs(got - want) <= np.maximum(1e-3, 1e-5 * np.abs(want))))
        worst = float(np.max(np.abs(got - want)))
        failures += not ok
        passed += ok
        print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(path):16s} {row['key']:60s} max |kperf - model| = {worst:.3g}")
    return passed, failures


def read_npy_output(path):
    return np.load(path).astype(np.float64)


def main():
    binary, photo_dir = sys.argv[1], sys.argv[2]
    photos = []
    if os.path.isdir(photo_dir):
        photos = [os.path.join(photo_dir, f) for f in sorted(os.listdir(photo_dir))
                  if f in ("camera.png", "astronaut.png", "coffee.png", "coins.png")]
    failures = passed = 0
    with tempfile.TemporaryDirectory() as tmp:
        inputs = []
        for p in photos:
            inputs.append((p, load_luminance(p)))
        if not inputs:
            rng = np.random.default_rng(2019)
            field = np.cumsum(np.cumsum(rng.normal(size=(203, 317)), 0), 1)
            field = (field - field.min()) / (field.max() - field.min()) * 255.0
            path = os.path.join(tmp, "field.npy")
            np.save(path, field.astype(np.float32))
            inputs.append((path, field.astype(np.float32).astype(np.float64)))
        for path, img in inputs:
            out_dir = os.path.join(tmp, "out")
            cmd = [binary, "run", "--apps",
                   "gaussian3,gaussian5,sobel3,sobel5,median,inversion,bilateral", "--schemes", "accurate", "--wg", "16x8", "--input", path, "--warmup", "0",
                   "--reps", "1", "--quiet", "--out", os.path.join(tmp, "r.json"),
                   "--save-outputs", out_dir]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            rows = json.load(open(os.path.join(tmp, "r.json")))["results"]
            checks = [("numpy", references(img))]
            if opencv_references(img):
                checks.append(("opencv", opencv_references(img)))
            for (source, refs), row in ((c, r) for c in checks for r in rows):
                if row["app"] not in refs:
                    continue
                got = read_npy_output(row["output_file"])
                want = refs[row["app"]]
                # SPEC tolerance: relative 1e-5 or absolute 1e-3 on the [0, 255] scale; outputs
                # with a wider range (Sobel 5x5) get the absolute part scaled to their range.
                scale = max(1.0, float(want.max() - want.min()) / 255.0)
                tol = np.maximum(1e-3 * scale, 1e-5 * np.abs(want))
                worst = float(np.max(np.abs(got - want)))
                ok = bool(np.all(np.abs(got - want) <= tol))
                failures += not ok
                passed += ok
                print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(path):16s} {row['app']:10s} "
                      f"max |kperf - {source}| = {worst:.3g}")
        for check in (check_half_and_host, check_bilateral_options):
            p, f = check(binary, inputs[0][0], inputs[0][1], tmp)
            passed += p
            failures += f
    print(f"{passed} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
