#!/usr/bin/python3
"""scripts/peers/ and the peers table on the CPU, without a GPU or any peer library: the check
against kperf's filters passes float32 implementations and fails known-bad ones (zero borders,
NPP's own 5x5 Gaussian, TF32 rounding, Scharr weights, a median one ulp off, a NaN, a wrong
shape); the PNG decoder and resize equal kperf's (through its inversion kernel on PoCL); a
library run on numpy with a wrong, a raising and a skipped function; the NPP program's lines;
the merge of a synthetic kperf run with those libraries (of_copy, the checks, kperf's best rows,
a library that is unavailable); report.py --table peers and the report's section on it,
including where kperf is not ahead; and scripts/peers.sh end to end on PoCL at 32^2, where the
peers without a GPU fail soft (about 10 s, most of it kperf's kernels compiling).

usage: peers_test.py KPERF_BINARY
"""
import gzip
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "scripts", "peers"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import kperf_provenance  # noqa: E402
import merge  # noqa: E402
import npp_peers  # noqa: E402
import peers_common as pc  # noqa: E402

passed = failed = 0


def check(ok, what):
    global passed, failed
    passed += bool(ok)
    failed += not ok
    print(("ok   " if ok else "FAIL ") + what)


def grid(h=37, w=45, seed=7):
    """Structure, edges and noise in [0, 255], no two neighbours tied."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    g = 127 + 90 * np.sin(x / 3.1) * np.cos(y / 4.7) + 40 * (x > w // 2)
    return np.clip(g + rng.uniform(-9, 9, (h, w)), 0, 255).astype(np.float32)


def f32_filter(app, x, weights=None, border="edge"):
    """The app in float32 arithmetic (what a correct GPU library computes), or with other
    weights or borders (what a wrong one does)."""
    r = 2 if app == "gaussian5" else 1
    p = np.pad(x, r, mode=border).astype(np.float32)
    h, w = x.shape

    def corr(k):
        out = np.zeros((h, w), np.float32)
        for i in range(k.shape[0]):
            for j in range(k.shape[1]):
                out += np.float32(k[i, j]) * p[i:i + h, j:j + w]
        return out
    if app == "median":
        return np.median(np.stack([p[i:i + h, j:j + w] for i in range(3) for j in range(3)]), 0)
    if app == "sobel3":
        kx = weights if weights is not None else np.outer(pc.B3, pc.D3)
        return np.hypot(corr(kx), corr(kx.T))
    b = pc.B3 if app == "gaussian3" else pc.B5
    k = weights if weights is not None else np.outer(b, b) / np.sum(b) ** 2
    return corr(np.asarray(k, np.float32))


NPP_GAUSS5 = np.array([[2, 7, 12, 7, 2], [7, 31, 52, 31, 7], [12, 52, 127, 52, 12],
                       [7, 31, 52, 31, 7], [2, 7, 12, 7, 2]]) / 571.0


def tf32(a):
    """float32 values with TF32's 10-bit mantissa (truncated)."""
    return (np.asarray(a, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def test_check():
    x = grid()
    for app in pc.APPS:
        res = pc.check(app, f32_filter(app, x), x)
        check(res["ok"], f"float32 {app} passes the check (max_abs {res['max_abs']:.3g} <= "
              f"{res['tolerance']:.3g})")
    bad = [("gaussian3", f32_filter("gaussian3", x, border="constant"), "zero borders"),
           ("gaussian5", f32_filter("gaussian5", x, NPP_GAUSS5), "NPP's own 5x5 Gaussian"),
           ("gaussian3", f32_filter("gaussian3", tf32(x)), "TF32 inputs"),
           ("sobel3", f32_filter("sobel3", x, np.array([[-3, 0, 3], [-10, 0, 10], [-3, 0, 3]])),
            "Scharr weights"),
           ("sobel3", f32_filter("gaussian3", x), "a blur for a gradient")]
    median = f32_filter("median", x)
    median[5, 7] = np.nextafter(median[5, 7], np.float32(1e9))
    bad.append(("median", median, "a median one ulp off at one element"))
    nan = f32_filter("gaussian3", x)
    nan[0, 0] = np.nan
    bad += [("gaussian3", nan, "one NaN"), ("gaussian3", f32_filter("gaussian3", x)[:, 1:],
                                             "a narrower output")]
    for app, out, what in bad:
        res = pc.check(app, out, x)
        check(not res["ok"], f"known-bad {app} ({what}) fails the check: max_abs "
              f"{res['max_abs']} > {res['tolerance']:.3g}, nonfinite {res['nonfinite']}")
    framed = f32_filter("median", x)
    framed[0, :] = -1.0
    check(pc.check("median", framed, x, "interior")["ok"] and
          not pc.check("median", framed, x)["ok"],
          "a wrong frame passes the interior check and fails the whole one")


def png_bytes(img, colour):
    """A PNG with every row filter (0-4 in turn), written here from the PNG specification."""
    h, w = img.shape[:2]
    bpp = img.shape[2] if img.ndim == 3 else 1
    raw, prior = b"", np.zeros(w * bpp, np.int32)
    for y in range(h):
        line = img[y].reshape(-1).astype(np.int32)
        left = np.concatenate([np.zeros(bpp, np.int32), line[:-bpp]])
        upleft = np.concatenate([np.zeros(bpp, np.int32), prior[:-bpp]])
        kind = y % 5
        if kind == 4:
            p = left + prior - upleft
            pa, pb, pc_ = abs(p - left), abs(p - prior), abs(p - upleft)
            pred = np.where((pa <= pb) & (pa <= pc_), left, np.where(pb <= pc_, prior, upleft))
        else:
            pred = [0 * line, left, prior, (left + prior) // 2][kind]
        raw += bytes([kind]) + ((line - pred) & 255).astype(np.uint8).tobytes()
        prior = line

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    head = struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(raw)) +
            chunk(b"IEND", b""))


def test_png_and_resize(binary, tmp):
    rng = np.random.default_rng(3)
    grey = rng.integers(0, 256, (23, 31)).astype(np.uint8)
    rgb = rng.integers(0, 256, (19, 17, 3)).astype(np.uint8)
    for name, img, colour in (("grey", grey, 0), ("rgb", rgb, 2)):
        path = os.path.join(tmp, f"{name}.png")
        with open(path, "wb") as f:
            f.write(png_bytes(img, colour))
        want = img.astype(np.float32) if colour == 0 else (
            0.299 * img[..., 0].astype(np.float64) + 0.587 * img[..., 1] +
            0.114 * img[..., 2]).astype(np.float32)
        check(np.array_equal(pc.read_png_luminance(path), want),
              f"the {name} PNG (filters 0-4) decodes to its luminance")
    path = os.path.join(tmp, "grey.png")
    got = os.path.join(tmp, "inv")
    run = subprocess.run([binary, "run", "--quiet", "--apps", "inversion", "--schemes",
                          "accurate", "--wg", "16x4", "--input", path, "--size", "61x47,12x9",
                          "--warmup", "1", "--reps", "1", "--save-outputs", got, "--out",
                          os.path.join(tmp, "inv.json")], capture_output=True, text=True)
    check(run.returncode == 0, f"kperf inverts the PNG ({run.stderr.strip()[-200:]})")
    for w, h in ((61, 47), (12, 9)):
        mine = pc.resize_bilinear(pc.read_png_luminance(path), w, h, rows_per_chunk=5)
        name = f"inversion__accurate__none__wg-16x4__grey__{w}x{h}.npy"
        kperf = np.load(os.path.join(got, name)) if os.path.exists(os.path.join(got, name)) \
            else None
        check(kperf is not None and np.array_equal(np.float32(255) - mine, kperf),
              f"decode and resize to {w}x{h} equal kperf's, bit for bit (its inversion)")


CLOCK = {"ms": 0.0}


def costs(fn, ms):
    """fn, each launch of which advances the fake device clock by the next of `ms` (cycling)."""
    calls = {"n": 0}

    def run(x):
        CLOCK["ms"] += ms[calls["n"] % len(ms)]
        calls["n"] += 1
        return fn(x)
    return run


def numpy_device(warmup=2, reps=5):
    """A device on numpy whose events read the fake clock the functions advance."""
    def timer():
        at = {}

        def start():
            at["ms"] = CLOCK["ms"]
        return start, lambda: CLOCK["ms"] - at["ms"]
    def hold():  # the GPU held for 1 ms before each sample: outside the sample's events
        CLOCK["ms"] += 1.0
        CLOCK["holds"] = CLOCK.get("holds", 0) + 1
    return {"upload": lambda a: a, "download": lambda a: a, "timer": timer, "hold": hold,
            "release": lambda: None, "warmup": warmup, "reps": reps}


def write_inputs(tmp, sizes=((40, 40), (24, 24))):
    """A manifest like inputs.py's: the first size checked only, the second timed and checked,
    and a third timed only."""
    folder = os.path.join(tmp, "inputs")
    entries = []
    for i, size in enumerate(list(sizes) + [(32, 32)]):
        rel = f"{size[0]}x{size[1]}/photo.npy"
        os.makedirs(os.path.join(folder, os.path.dirname(rel)), exist_ok=True)
        np.save(os.path.join(folder, rel), grid(size[1], size[0], seed=i))
        entries.append({"size": list(size), "path": rel, "timed": i > 0, "checked": i < 2})
    pc.write_json(os.path.join(folder, "manifest.json"),
                  {"photo": "photo.png", "input": "photo", "entries": entries})
    return folder


def numpy_library(folder, outputs):
    """CuPy's stand-in: a right gaussian3 (5 us, samples 3-7 us), a wrong faster gaussian5
    (NPP's weights, 2 us) beside a right one (5 us), a sobel3 that raises, a median that cannot
    run and an interior median faster than kperf's (1.5 us)."""
    def raises(_x):
        raise RuntimeError("CUDNN_STATUS_NOT_SUPPORTED")

    def not_run(_x):
        raise pc.NotRun("needs 9 GiB, 1 GiB free")
    fns = [{"app": "gaussian3", "function": "float32 correlate", "run":
            costs(lambda x: f32_filter("gaussian3", x), [0.003, 0.005, 0.007, 0.004, 0.006])},
           {"app": "gaussian5", "function": "NPP's 5x5", "run":
            costs(lambda x: f32_filter("gaussian5", x, NPP_GAUSS5), [0.002])},
           {"app": "gaussian5", "function": "float32 correlate", "run":
            costs(lambda x: f32_filter("gaussian5", x), [0.005])},
           {"app": "sobel3", "function": "raises", "run": raises},
           {"app": "median", "function": "unfold", "run": not_run},
           {"app": "median", "function": "interior", "region": "interior", "border": "none",
            "run": costs(lambda x: f32_filter("median", x), [0.0015])}]
    doc = pc.library_doc("CuPy", versions={"cupy": "0-test"}, device="numpy")
    pc.run_library(doc, fns, pc.load_manifest(folder), outputs, numpy_device(), lambda _: None)
    return doc


def test_library(folder, outputs):
    doc = numpy_library(folder, outputs)
    rows = {(r["function"], r["size"][0]): r for r in doc["rows"]}
    check(len(doc["rows"]) == 12 and all(r["size"][0] != 40 for r in doc["rows"]),
          f"rows at the timed sizes only, six functions each ({len(doc['rows'])})")
    ok = next((r for r in doc["rows"] if r["app"] == "gaussian3" and r["size"] == [24, 24]), {})
    got = {k: round(v, 3) for k, v in (ok.get("time_ns") or {}).items()}
    check(ok.get("status") == "ok" and ok.get("reps") == 5 and
          got == {"median": 5000.0, "min": 3000.0, "max": 7000.0},
          "a row's time: reps samples after the warm-up, median/min/max in ns, the hold "
          "before each sample outside it")
    check(CLOCK.get("holds") == 5 * 4 * 2, f"one hold per timed sample ({CLOCK.get('holds')})")
    check(rows[("raises", 24)]["status"] == "failed" and
          "CUDNN_STATUS_NOT_SUPPORTED" in rows[("raises", 24)]["reason"],
          "a function that raises is a failed row with its words")
    check(rows[("unfold", 32)]["status"] == "not_run" and "GiB" in rows[("unfold", 32)]["reason"],
          "a function that cannot run here is a not_run row")
    saved = [c for c in doc["checks"] if c["status"] == "ok"]
    check(len(doc["checks"]) == 12 and len(saved) == 8 and
          all(os.path.exists(os.path.join(outputs, c["output_file"])) for c in saved),
          f"checked sizes save each output once ({len(saved)} of {len(doc['checks'])})")
    return doc


NPP_LINES = """version\tnpp\t13.0.1
version\tdevice\tNVIDIA H100 80GB HBM3
row\tCUDA\tcopy\tcudaMemcpy device to device\t-\tall\t24\t24\tok\t-\t100,300,200
row\tNPP\tgaussian3\tnppiFilterGaussBorder 3x3\treplicate\tall\t24\t24\tok\t-\t900,1000,1100
row\tNPP\tmedian\tnppiFilterMedianBorder 3x3\treplicate\tall\t24\t24\tfailed\tNppStatus -8\t-
check\tNPP\tgaussian3\tnppiFilterGaussBorder 3x3\tall\t24\t24\tok\t-\tNPP/g3.npy
check\tNPP\tgaussian3\tnppiFilterGaussBorder 3x3\tall\t40\t40\tok\t-\tNPP/g3-40.npy
""".splitlines()


def npp_library(folder, outputs):
    doc = pc.library_doc("NPP")
    npp_peers.parse(NPP_LINES, doc)
    for c in doc["checks"]:
        np.save(os.path.join(outputs, c["output_file"]),
                f32_filter("gaussian3", np.load(os.path.join(folder, "{0}x{1}/photo.npy".format(
                    *c["size"])))))
    npp_peers.missing_rows(doc, pc.load_manifest(folder), "npp_peers exited -11")
    return doc


def test_npp_lines(folder, outputs):
    os.makedirs(os.path.join(outputs, "NPP"), exist_ok=True)
    doc = npp_library(folder, outputs)
    copy = [r for r in doc["rows"] if r["app"] == "copy" and r["size"] == [24, 24]]
    check(doc["versions"] == {"npp": "13.0.1"} and doc["device"] == "NVIDIA H100 80GB HBM3",
          "the program's version lines")
    check(len(copy) == 1 and copy[0]["library"] == "CUDA" and
          copy[0]["time_ns"]["median"] == 200.0, "a row line: library, app, samples")
    med = [r for r in doc["rows"] if r["app"] == "median" and r["size"] == [24, 24]]
    check(med and med[0]["status"] == "failed" and med[0]["reason"] == "NppStatus -8",
          "a failed function's line keeps NPP's words")
    gone = [r for r in doc["rows"] if r["size"] == [32, 32]]
    check(len(gone) == 5 and all(r["status"] == "failed" and "-11" in r["reason"] for r in gone),
          "an app the program never reached is a failed row with its exit status")
    return doc


def kperf_doc(tmp, folder):
    """A kperf run at the timed sizes (rows as kperf writes them) and its check run."""
    rows, check_rows = [], []
    for (w, h), scale in (((24, 24), 1.0), ((32, 32), 2.0)):
        for app in pc.APPS:
            for scheme, precision, wg, t, err in (("accurate", "f32", "32x4", 1200, 0.0),
                                                  ("accurate", "f32", "32x8", 1000, 0.0),
                                                  ("rows:2", "f16", "32x4", 600, 0.002),
                                                  ("rows:2", "f32", "32x4", 700, 0.001)):
                axes = "/f16" if precision == "f16" else ""
                recon = "none" if scheme == "accurate" else "nn"
                rows.append({"key": f"{app}/{scheme}/{recon}{axes}/wg:{wg}v4y2/photo/{w}x{h}",
                             "app": app, "scheme": scheme, "recon": recon,
                             "precision": precision, "output": "none", "status": "ok",
                             "input": {"name": "photo", "width": w, "height": h},
                             "time_ns": {"median": t * scale, "min": t * scale - 10,
                                         "max": t * scale + 10},
                             "primary_metric": "mre", "error": {"mre": err}})
            rows.append(dict(rows[-1], key=rows[-1]["key"] + "x", status="build_failed",
                             time_ns=None))
    out_dir = os.path.join(tmp, "kperf-outputs")
    os.makedirs(out_dir, exist_ok=True)
    for (w, h) in ((40, 40), (24, 24)):
        x = np.load(os.path.join(folder, f"{w}x{h}/photo.npy"))
        for app in pc.APPS:
            path = os.path.join(out_dir, f"{app}__{w}x{h}.npy")
            # kperf's sobel3 here is known-bad (a blur): its accurate row must say so.
            np.save(path, f32_filter(app, x) if app != "sobel3" else f32_filter("gaussian3", x))
            check_rows.append({"key": f"{app}/accurate/none/wg:32x8v4y2/photo/{w}x{h}",
                               "app": app, "scheme": "accurate", "precision": "f32",
                               "status": "ok", "output_file": path,
                               "input": {"name": "photo", "width": w, "height": h}})
    sources = {"kernels/gaussian3.cl": "0" * 64}
    ctx = {"device": {"name": "Test GPU"}, "git_sha": "abc1234", "kperf_version": "0.2.0",
           "warmup": 2, "reps": 5, "cold": False, "sources": sources,
           "sources_sha256": kperf_provenance.sources_sha256(sources),
           "copy": [{"width": 24, "height": 24, "copy_gbps": 8 * 24 * 24 / 800.0, "status": "ok"},
                    {"width": 32, "height": 32, "copy_gbps": 8 * 32 * 32 / 1600.0,
                     "status": "ok"}]}
    run, chk = os.path.join(tmp, "run.json.gz"), os.path.join(tmp, "check.json")
    with open(run, "wb") as f:
        f.write(gzip.compress(json.dumps({"kind": "run", "context": ctx,
                                          "results": rows}).encode()))
    with open(chk, "w") as f:
        json.dump({"kind": "run", "context": ctx, "results": check_rows}, f)
    return run, chk


def test_merge(tmp, folder, outputs, libraries):
    run, chk = kperf_doc(tmp, folder)
    paths = []
    for doc in libraries + [pc.unavailable("PyTorch", pc.load_manifest(folder),
                                           "ModuleNotFoundError: No module named 'torch'")]:
        paths += ["--library", os.path.join(tmp, f"{doc['library']}.json")]
        pc.write_json(paths[-1], doc)
    steps = os.path.join(tmp, "steps.txt")
    with open(steps, "w") as f:
        f.write("inputs 0 1.5\nkperf-run 4 60.2\n")
    out = os.path.join(tmp, "peers.json.gz")
    code = merge.main(["--inputs", folder, "--outputs", outputs, "--kperf", run, "--kperf-check",
                       chk, "--steps", steps, "--out", out] + paths +
                      ["--library", os.path.join(tmp, "missing.json")])
    doc = json.loads(gzip.decompress(open(out, "rb").read()))
    rows = doc["results"]

    def find(**kv):
        return [r for r in rows if all(r.get(k) == v for k, v in kv.items())]
    check(code == 0 and doc["kind"] == "peers" and doc["peers_schema_version"] == 1,
          "merge writes a peers document")
    acc = find(library="kperf", role="accurate", app="gaussian3", size=[24, 24])
    apx = find(library="kperf", role="best approximation", app="gaussian3", size=[24, 24])
    check(len(acc) == 1 and acc[0]["time_ns"]["median"] == 1000 and
          acc[0]["key"].endswith("wg:32x8v4y2/photo/24x24") and acc[0]["dtype"] == "float32",
          "kperf's accurate row: its fastest shape")
    check(len(apx) == 1 and apx[0]["function"] == "rows:2/nn/f16" and
          apx[0]["dtype"] == "float16" and apx[0]["error"] == {"metric": "mre", "value": 0.002},
          "kperf's best approximation: the fastest approximate row, with its error")
    check(abs(acc[0]["of_copy"] - 0.8) < 1e-12 and
          abs(find(library="kperf", role="accurate", app="median", size=[32, 32])[0]["of_copy"]
              - 0.8) < 1e-12, "of_copy: the copy kernel's time over the row's, per size")
    check(acc[0]["checked"]["ok"] and
          not find(library="kperf", role="accurate", app="sobel3", size=[24, 24])[0]["checked"]
          ["ok"], "kperf's accurate outputs are checked like the peers' (a wrong one fails)")
    good = find(library="CuPy", function="float32 correlate", app="gaussian5", size=[24, 24])
    npp5 = find(library="CuPy", function="NPP's 5x5", size=[32, 32])
    check(good and good[0]["checked"]["ok"] and good[0]["checked"]["sizes"] == ["40x40", "24x24"],
          "a peer's right filter passes at both checked sizes")
    check(npp5 and not npp5[0]["checked"]["ok"] and npp5[0]["checked"]["max_abs"] > 0.01,
          "a peer's other filter fails the check, on its rows at every size")
    interior = find(library="CuPy", function="interior", size=[24, 24])
    check(interior and interior[0]["checked"]["ok"] and
          interior[0]["checked"]["region"] == "interior", "an interior function is checked inside")
    npp = find(library="NPP", app="gaussian3", size=[24, 24])
    check(npp and npp[0]["checked"]["ok"] and abs(npp[0]["of_copy"] - 0.8) < 1e-12,
          "NPP's rows from its program's lines, checked, with of_copy")
    torch = find(library="PyTorch")
    check(len(torch) == 8 and all(r["status"] == "unavailable" for r in torch),
          "an unavailable library: a row per app and timed size saying so")
    ctx = doc["context"]
    check(ctx["sources_sha256"] == kperf_provenance.sources_sha256(ctx["sources"]) and
          ctx["git_sha"] == "abc1234" and ctx["cache"] == "warm" and
          [s["exit"] for s in ctx["steps"]] == [0, 4] and
          any("missing.json" in n for n in ctx["notes"]),
          "context: kperf's provenance, the cache, the steps, a note for an unreadable file")
    check(all(set(r) >= {"library", "app", "size", "dtype", "status", "of_copy"} for r in rows),
          "every row has SPEC 15's fields")
    bad = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "peers", "merge.py"),
                          "--inputs", os.path.join(tmp, "nowhere"), "--outputs", outputs,
                          "--out", os.path.join(tmp, "never.json")], capture_output=True,
                         text=True)
    check(bad.returncode == 2 and bad.stderr.count("\n") == 1 and
          not os.path.exists(os.path.join(tmp, "never.json")),
          "merge without inputs: one line, exit 2, nothing written")
    return out, run


def test_report(tmp, peers, run):
    report = [sys.executable, os.path.join(ROOT, "scripts", "report.py")]
    made = subprocess.run(report + ["--table", "peers", peers], capture_output=True, text=True)
    text = made.stdout
    line = next((x for x in text.splitlines() if x.startswith("| 24^2 | gaussian3 |")), "")
    check(made.returncode == 0 and line.startswith(
        "| 24^2 | gaussian3 | 0.8 us | 1.0 us (0.80) | 1.0 us (0.80), 1.00x | 5.0 us (0.16), 5.00x"
        " | unavailable | `rows:2/nn/f16` 0.6 us (1.33) | 1.67x NPP | 0.2 % |"),
        f"the table's gaussian3 row: kperf, each peer, the approximation over the fastest "
        f"peer ({line})")
    g5 = next((x for x in text.splitlines() if x.startswith("| 24^2 | gaussian5 |")), "")
    check("| failed | 5.0 us (0.16), 5.00x |" in g5,
          f"a library's fastest checked function counts, not its faster wrong one ({g5})")
    med = next((x for x in text.splitlines() if x.startswith("| 32^2 | median |")), "")
    check("&dagger;" in med and "the interior alone" in text,
          f"an interior-only peer is marked ({med})")
    check("At 32^2 kperf's accurate kernel is not ahead of CuPy on median (1.5 us against "
          "2.0 us)." in text, "the run says where kperf's accurate kernel is not ahead")
    check("PyTorch: unavailable (ModuleNotFoundError" in text and
          "`raises` on sobel3: RuntimeError: CUDNN_STATUS_NOT_SUPPORTED" in text,
          "the table says what was not measured and why")
    check("Left out, their outputs are not kperf's filter: CuPy `NPP's 5x5` on gaussian5" in text,
          "the table names the peer functions that failed the check")
    check("`cudaMemcpy` of the grid took 0.2 us at 24^2" in text,
          "the table quotes the cudaMemcpy of the grid")
    out = os.path.join(tmp, "report")
    made = subprocess.run(report + [peers, "--out", out], capture_output=True, text=True)
    md = open(os.path.join(out, "report.md")).read() if made.returncode == 0 else ""
    check("## Peers: kperf against the libraries" in md and "### Every peer row" in md and
          "## Provenance" in md, "report.py --out: a peers section and provenance")
    for args, what in ((["--table", "peers", run], "--table peers on a run document"),
                       (["--table", "fig10", peers], "--table fig10 on a peers document")):
        made = subprocess.run(report + args, capture_output=True, text=True)
        check(made.returncode == 2 and made.stderr.count("\n") == 1,
              f"{what}: one line, exit 2 ({made.stderr.strip()})")


def test_peers_sh(binary, tmp):
    """The whole call on PoCL: no NPP, no CuPy, no PyTorch; each says so and kperf's rows,
    checks and the bundle are there."""
    photo = os.path.join(tmp, "photo.png")
    with open(photo, "wb") as f:
        f.write(png_bytes(grid(40, 48).astype(np.uint8), 0))
    # A python3 under which the PyTorch peer dies at once, as a crash would leave it.
    python = os.path.join(tmp, "python3")
    with open(python, "w") as f:
        f.write(f'#!/bin/sh\ncase "$1" in *torch_peers.py) exit 139;; esac\n'
                f'exec {sys.executable} "$@"\n')
    os.chmod(python, 0o755)
    env = dict(os.environ, PEERS_PYTHON=python, KPERF=binary, PEERS_SIZES="32",
               PEERS_PHOTO=photo, PEERS_WARMUP="1", PEERS_REPS="2", NVCC="/nonexistent",
               PATH="/usr/bin:/bin", PEERS_KPERF_AXES="--schemes accurate,rows:2 --recon nn",
               PEERS_KPERF_SHAPES="--wg 16x4 --vec 4 --py 2")
    out = os.path.join(tmp, "sh")
    made = subprocess.run([os.path.join(ROOT, "scripts", "peers.sh"), out], env=env,
                          capture_output=True, text=True)
    peers = os.path.join(out, "peers.json.gz")
    doc = json.loads(gzip.decompress(open(peers, "rb").read())) if os.path.exists(peers) else {}
    rows = doc.get("results", [])
    status = (doc.get("context") or {}).get("library_status", {})
    check(made.returncode == 0 and len(made.stdout.splitlines()) < 30,
          f"peers.sh exits 0 with a short stdout ({len(made.stdout.splitlines())} lines)")
    down = {lib: s for lib, s in status.items() if s["status"] != "ok"}
    check(sorted(status) == ["CuPy", "NPP", "PyTorch"] and all(
        s["reason"] and all(r["status"] == s["status"] for r in rows if r["library"] == lib)
        for lib, s in down.items()), f"a peer that cannot run fails soft, saying why: {down}")
    torch = [r for r in rows if r["library"] == "PyTorch"]
    check(status.get("PyTorch", {}).get("status") == "failed" and torch and
          all("exit 139" in r["reason"] for r in torch),
          "a peer that dies without its rows: failed rows naming its exit status")
    check(len([r for r in rows if r["library"] == "kperf"]) == 8 and
          all(r["checked"]["ok"] for r in rows if r.get("role") == "accurate"),
          "kperf's accurate and best approximated rows, its accurate outputs checked")
    listed = subprocess.run(["tar", "tzf", os.path.join(out, "peers-bundle.tar.gz")],
                            capture_output=True, text=True).stdout
    check(all(n in listed for n in ("kperf-run.json.gz", "kperf-check.json.gz", "steps.txt",
                                    "logs/npp.log", "torch.json", "manifest.json")),
          "the bundle holds the runs, every peer's rows, the logs and the steps")


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        test_check()
        test_png_and_resize(binary, tmp)
        folder, outputs = write_inputs(tmp), os.path.join(tmp, "outputs")
        libraries = [test_library(folder, outputs), test_npp_lines(folder, outputs)]
        peers, run = test_merge(tmp, folder, outputs, libraries)
        test_report(tmp, peers, run)
        test_peers_sh(binary, tmp)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
