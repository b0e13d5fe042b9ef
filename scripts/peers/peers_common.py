"""What every peer program shares (scripts/peers/): the inputs, kperf's filters in float64, the
check of an output against them, and the rows a peer writes. It runs on Debian's python3 (the
tests) and on the GPU machine's (with CuPy and PyTorch beside it), so it needs numpy alone.

Semantics (docs/semantics.md §1-2): a photo is its luminance 0.299 R + 0.587 G + 0.114 B as
float32, resized bilinearly with half-pixel centres; every border is clamp-to-edge (replicate);
gaussian3/5 are binomial blurs, sobel3 the magnitude of the 3x3 Sobel gradient, median the
median of the 3x3 window. The references compute in float64 from the float32 input, as kperf's
CPU references do.
"""
import json
import os
import statistics
import struct
import zlib

import numpy as np

# The apps a peer library may have, in the order the tables show them.
APPS = ("gaussian3", "gaussian5", "sobel3", "median")
B3, D3 = (1.0, 2.0, 1.0), (-1.0, 0.0, 1.0)
B5 = (1.0, 4.0, 6.0, 4.0, 1.0)

# A float32 filter of n terms of at most M in magnitude is within a few n 2^-24 M of the float64
# result; 2^-16 M times the sum of the absolute weights leaves room for any summation order and
# for a square root, yet a filter with other weights, other borders or TF32 arithmetic (10-bit
# mantissa: 2^-11 M) fails it. A median is a selection: exact.
TOLERANCE_SCALE = 2.0 ** -16
WEIGHT_SUM = {"gaussian3": 1.0, "gaussian5": 1.0, "sobel3": 16.0, "median": 0.0}
TOLERANCE_RULE = ("2^-16 x max|input| x the sum of the absolute weights (gaussian 1, sobel3 "
                  "16: both gradients); median exact")


# ---------------------------------------------------------------- the photo

def _unfilter(raw, width, height, bpp):
    """PNG scanline filters (None, Sub, Up, Average, Paeth) undone, as uint8 rows."""
    stride = width * bpp
    out = np.zeros((height, stride), np.uint8)
    prior = np.zeros(stride, np.int32)
    pos = 0
    for y in range(height):
        kind, line = raw[pos], np.frombuffer(raw, np.uint8, stride, pos + 1).astype(np.int32)
        pos += stride + 1
        if kind == 0:
            row = line
        elif kind == 2:
            row = (line + prior) & 255
        elif kind == 1:
            row = line.copy()
            for c in range(bpp):
                row[c::bpp] = np.cumsum(line[c::bpp]) & 255
        elif kind in (3, 4):
            row = line.copy()
            for x in range(stride):
                a = int(row[x - bpp]) if x >= bpp else 0
                b = int(prior[x])
                if kind == 3:
                    row[x] = (line[x] + (a + b) // 2) & 255
                    continue
                c = int(prior[x - bpp]) if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                row[x] = (line[x] + pred) & 255
        else:
            raise ValueError(f"PNG filter type {kind} is not one of 0-4")
        out[y] = row
        prior = row
    return out


def read_png_luminance(path):
    """An 8-bit, non-interlaced PNG (grey, grey + alpha, RGB, RGBA) as kperf reads it: grey as
    it is, colour as 0.299 R + 0.587 G + 0.114 B in double, then float32 (semantics §1)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError(f"{path}: no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    channels = {0: 1, 4: 2, 2: 3, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"{path}: only 8-bit non-interlaced grey or RGB(A) PNGs are read here "
                         f"(depth {depth}, colour type {colour}, interlace {interlace})")
    rows = _unfilter(zlib.decompress(b"".join(idat)), width, height, channels)
    pixels = rows.reshape(height, width, channels).astype(np.float64)
    if channels < 3:
        return pixels[..., 0].astype(np.float32)
    lum = 0.299 * pixels[..., 0] + 0.587 * pixels[..., 1] + 0.114 * pixels[..., 2]
    return lum.astype(np.float32)


def resize_bilinear(img, width, height, rows_per_chunk=512):
    """kperf's resize (semantics §1): half-pixel centres, neighbours clamped, blended in double
    and stored as float32; in chunks of rows so that 8192^2 fits in little memory."""
    h, w = img.shape
    if (w, h) == (width, height):
        return img.astype(np.float32)
    src = img.astype(np.float64)
    xs = np.clip((np.arange(width) + 0.5) * (w / width) - 0.5, 0.0, w - 1)
    x0 = xs.astype(np.int64)
    x1, fx = np.minimum(x0 + 1, w - 1), (xs - x0)[None, :]
    out = np.empty((height, width), np.float32)
    for start in range(0, height, rows_per_chunk):
        ys = np.arange(start, min(start + rows_per_chunk, height))
        fys = np.clip((ys + 0.5) * (h / height) - 0.5, 0.0, h - 1)
        y0 = fys.astype(np.int64)
        y1, fy = np.minimum(y0 + 1, h - 1), (fys - y0)[:, None]
        top = src[y0][:, x0] * (1 - fx) + src[y0][:, x1] * fx
        bottom = src[y1][:, x0] * (1 - fx) + src[y1][:, x1] * fx
        out[start:start + len(ys)] = top * (1 - fy) + bottom * fy
    return out


# ---------------------------------------------------------------- kperf's filters in float64

def _correlate(padded, r, ky, kx):
    h, w = padded.shape[0] - 2 * r, padded.shape[1] - 2 * r
    out = np.zeros((h, w))
    for i, a in enumerate(ky):
        for j, b in enumerate(kx):
            if a * b:
                out += (a * b) * padded[i:i + h, j:j + w]
    return out


def reference(app, img):
    """kperf's accurate output of `app` on the float32 grid `img`, in float64 (semantics §2)."""
    x = np.asarray(img, np.float32).astype(np.float64)
    r = 2 if app == "gaussian5" else 1
    p = np.pad(x, r, mode="edge")
    if app == "gaussian3":
        return _correlate(p, r, B3, B3) / 16.0
    if app == "gaussian5":
        return _correlate(p, r, B5, B5) / 256.0
    if app == "sobel3":
        return np.hypot(_correlate(p, r, B3, D3), _correlate(p, r, D3, B3))
    if app == "median":
        h, w = x.shape
        stack = np.stack([p[i:i + h, j:j + w] for i in range(3) for j in range(3)])
        return np.partition(stack, 4, axis=0)[4]
    raise ValueError(f"no reference for app {app!r}")


def tolerance(app, img):
    return TOLERANCE_SCALE * WEIGHT_SUM[app] * float(np.max(np.abs(img))) if img.size else 0.0


def check(app, output, img, region="all", ref=None):
    """{max_abs, tolerance, ok, region, nonfinite}: the output against kperf's filter on `img`;
    region "interior" compares all but the one-element frame (a library that leaves borders
    out). A shape that differs, or any non-finite element, fails."""
    ref = reference(app, img) if ref is None else ref
    tol = tolerance(app, img)
    out = np.asarray(output)
    result = {"max_abs": None, "tolerance": tol, "ok": False, "region": region, "nonfinite": 0}
    if out.shape != ref.shape:
        result["reason"] = f"shape {list(out.shape)}, expected {list(ref.shape)}"
        return result
    if region == "interior":
        out, ref = out[1:-1, 1:-1], ref[1:-1, 1:-1]
    out = out.astype(np.float64)
    finite = np.isfinite(out)
    result["nonfinite"] = int(out.size - np.count_nonzero(finite))
    diff = np.abs(out - ref)[finite]
    result["max_abs"] = float(diff.max()) if diff.size else None
    result["ok"] = result["nonfinite"] == 0 and diff.size > 0 and result["max_abs"] <= tol
    return result


# ---------------------------------------------------------------- inputs and rows

def load_manifest(inputs_dir):
    """The inputs scripts/peers/inputs.py wrote: [{size: [W, H], path, timed, checked}]."""
    with open(os.path.join(inputs_dir, "manifest.json")) as f:
        manifest = json.load(f)
    for entry in manifest["entries"]:
        entry["path"] = os.path.join(inputs_dir, entry["path"])
    return manifest


def size_name(size):
    return f"{size[0]}x{size[1]}"


def output_name(library, app, function, size):
    """The file a peer saves a checked output under, relative to the outputs folder."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in function)
    return f"{library}/{app}.{safe}.{size_name(size)}.npy"


def stats_ns(samples_ns):
    return {"median": float(statistics.median(samples_ns)), "min": float(min(samples_ns)),
            "max": float(max(samples_ns))}


# Before each timed launch a kernel that spins for about 1 ms (2e6 clock cycles) holds the GPU,
# so that the library's host work (Python, argument checks, several launches) is done while the
# GPU waits, and the events time the device's work alone, as kperf's profiling events do (the
# blocking kernel of NVIDIA's NVBench does the same).
HOLD_CYCLES = 2_000_000


def time_launches(launch, timer, warmup, reps, hold=None):
    """Every launch's time in ns: `warmup` untimed launches, then `reps` each between its own
    pair of events (timer() -> (record_start, record_end_and_wait) where the second returns
    the milliseconds between them), each after hold() where given (HOLD_CYCLES)."""
    for _ in range(warmup):
        launch()
    samples = []
    for _ in range(reps):
        start, stop = timer()
        if hold:
            hold()
        start()
        launch()
        samples.append(stop() * 1e6)
    return samples


def peer_row(library, fn, size, status, reason="", samples_ns=None, warmup=0):
    """One raw row (scripts/peers/merge.py adds of_copy and the check)."""
    row = {"library": library, "app": fn["app"], "function": fn["function"],
           "border": fn.get("border", "replicate"), "region": fn.get("region", "all"),
           "size": list(size), "dtype": "float32", "status": status}
    if fn.get("note"):
        row["note"] = fn["note"]
    if reason:
        row["reason"] = reason
    if samples_ns:
        row.update(time_ns=stats_ns(samples_ns), samples_ns=samples_ns, warmup=warmup,
                   reps=len(samples_ns))
    return row


def write_json(path, doc):
    """The document at `path`, atomically (a temporary file, then a rename)."""
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, allow_nan=False)
    os.replace(tmp, path)


def short(exc, limit=300):
    """An exception as one short line for a row's reason."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---------------------------------------------------------------- one library's run

class NotRun(Exception):
    """A function the library has but that cannot run here (say, too little memory): a row
    with status not_run and the reason."""


def library_doc(library, status="ok", reason="", versions=None, device=None):
    """What one peer program writes for scripts/peers/merge.py."""
    return {"library": library, "status": status, "reason": reason, "versions": versions or {},
            "device": device, "rows": [], "checks": []}


def unavailable(library, manifest, reason, status="unavailable", apps=APPS):
    """The document of a library that cannot run at all: one row per app and timed size."""
    doc = library_doc(library, status, reason)
    for entry in manifest["entries"]:
        if entry["timed"]:
            for app in apps:
                doc["rows"].append(peer_row(library, {"app": app, "function": "-"},
                                            entry["size"], status, reason))
    return doc


def run_library(doc, functions, manifest, outputs_dir, device, log):
    """Every function at every input: a checked input's output is saved (one launch) for the
    merge to check, a timed input's launches are timed. `device` gives upload(host) -> x,
    download(out) -> numpy, timer() and hold() (see time_launches; hold may be None),
    release() between inputs, warmup and reps. A function that raises is a failed row; the
    others go on."""
    for entry in manifest["entries"]:
        size = entry["size"]
        try:
            x = device["upload"](np.load(entry["path"]))
        except Exception as exc:  # noqa: BLE001 - every failure becomes rows
            for fn in functions:
                if entry["timed"]:
                    doc["rows"].append(peer_row(doc["library"], fn, size, "failed",
                                                "input: " + short(exc)))
            continue
        for fn in functions:
            _run_function(doc, fn, x, entry, outputs_dir, device, log)
        del x
        device["release"]()


def _run_function(doc, fn, x, entry, outputs_dir, device, log):
    size, library = entry["size"], doc["library"]
    if entry["checked"]:
        rel = output_name(library, fn["app"], fn["function"], size)
        check = {"library": library, "app": fn["app"], "function": fn["function"],
                 "region": fn.get("region", "all"), "size": list(size), "output_file": rel,
                 "status": "ok"}
        try:
            out = device["download"](fn["run"](x))
            os.makedirs(os.path.dirname(os.path.join(outputs_dir, rel)), exist_ok=True)
            np.save(os.path.join(outputs_dir, rel), np.asarray(out, np.float32))
        except Exception as exc:  # noqa: BLE001
            check.update(status="not_run" if isinstance(exc, NotRun) else "failed",
                         reason=short(exc))
        doc["checks"].append(check)
    if not entry["timed"]:
        return
    try:
        samples = time_launches(lambda: fn["run"](x), device["timer"], device["warmup"],
                                device["reps"], device.get("hold"))
        row = peer_row(library, fn, size, "ok", samples_ns=samples, warmup=device["warmup"])
        log(f"{library} {fn['app']} {fn['function']} {size_name(size)}: "
            f"{row['time_ns']['median'] / 1e3:.1f} us")
    except Exception as exc:  # noqa: BLE001
        row = peer_row(library, fn, size, "not_run" if isinstance(exc, NotRun) else "failed",
                       short(exc))
        log(f"{library} {fn['app']} {fn['function']} {size_name(size)}: {row['reason']}")
    doc["rows"].append(row)


def peer_main(library, argv, setup):
    """The command line every Python peer shares:

        PEER.py --inputs DIR --outputs DIR --out FILE [--warmup N] [--reps N]

    `setup(args)` imports the library and returns (functions, device, versions, device_name);
    an exception there (no library, no GPU) makes every row unavailable with its words."""
    import argparse
    import sys
    ap = argparse.ArgumentParser(description=f"{library}'s filters beside kperf's")
    ap.add_argument("--inputs", required=True, help="scripts/peers/inputs.py's folder")
    ap.add_argument("--outputs", required=True, help="where checked outputs are saved")
    ap.add_argument("--out", required=True, help="the library's rows (JSON)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args(argv)
    manifest = load_manifest(args.inputs)

    def log(line):
        print(line, file=sys.stderr, flush=True)

    try:
        functions, device, versions, name = setup(args)
    except Exception as exc:  # noqa: BLE001
        doc = unavailable(library, manifest, short(exc))
        write_json(args.out, doc)
        print(f"{library}: unavailable ({doc['reason']})")
        return 0
    doc = library_doc(library, versions=versions, device=name)
    device.update(warmup=args.warmup, reps=args.reps)
    run_library(doc, functions, manifest, args.outputs, device, log)
    write_json(args.out, doc)
    ok = sum(r["status"] == "ok" for r in doc["rows"])
    print(f"{library}: {ok} of {len(doc['rows'])} rows timed, {len(doc['checks'])} outputs "
          f"saved for the check")
    return 0


LIBRARY_NAMES = {"npp": "NPP", "cupy": "CuPy", "torch": "PyTorch"}


def failed_main(argv):
    """scripts/peers.sh's fallback for a peer that ended without writing its rows:

        peers_common.py --failed npp|cupy|torch --inputs DIR --reason TEXT --out FILE
    """
    import argparse
    ap = argparse.ArgumentParser(description="rows for a peer that wrote none")
    ap.add_argument("--failed", required=True, choices=sorted(LIBRARY_NAMES))
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--reason", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    write_json(args.out, unavailable(LIBRARY_NAMES[args.failed], load_manifest(args.inputs),
                                     args.reason, status="failed"))
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(failed_main(sys.argv[1:]))
