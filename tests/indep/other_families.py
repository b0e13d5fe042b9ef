"""Hotspot against the Rodinia transcription, bilateral's kernel axes, and OpenCV's filters as a
second reference for the accurate apps (and so for kperf)."""
import lzma
import os

import numpy as np

from . import compare, hotspot, models
from .context import check_model, check_same

U32 = compare.U32


def _hotspot_compare(ctx, fam, row, want, steps):
    """Each step rounds T + delta to float32 (half an ulp of T) and a few roundings inside
    delta, whose size is far below T's: allow two ulps of T per step run."""
    got = compare.load_output(row).astype(np.float64)
    tol = 2 * steps * np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    bad = ~(np.abs(got - want) <= tol)
    worst = float(np.max(np.abs(got - want)))
    detail = f"max |kperf - rodinia| {worst:.3g} over {steps} steps"
    if bad.any():
        y, x = np.argwhere(bad)[0]
        detail += f"; {int(bad.sum())} beyond, first (y={y}, x={x}) {got[y, x]!r} vs {want[y, x]!r}"
    ctx.tally.record(fam, row["key"], not bad.any(), detail)


def hotspot_family(ctx, shared_data):
    """kperf's hotspot (accurate, launch perforation, and input schemes on the temperature)
    on a chip of our own, and accurate on Rodinia's 64 x 64 inputs (also 512 with --full) when
    the shared data are present."""
    fam = "hotspot"
    temp, power = hotspot.synthetic_chip(47, 61)
    tp, pp = os.path.join(ctx.tmp, "chip_temp.npy"), os.path.join(ctx.tmp, "chip_power.npy")
    np.save(tp, temp)
    np.save(pp, power)
    iterations = 60  # Rodinia's default (hotspot.cu: total_iterations = 60)
    rows = ctx.run(["--apps", "hotspot", "--schemes", "accurate", "--temp", tp, "--power", pp,
                    "--iterations", str(iterations), "--iterations-skip", "0,0.5,0.25",
                    "--load", "local,global", "--wg", "16x8"])
    for row in ctx.ok_rows(fam, rows):
        steps = hotspot.steps_run(iterations, row["iterations_skip"])
        _hotspot_compare(ctx, fam, row, hotspot.rodinia(temp, power, steps), steps)
        if row["load"] == "global":
            check_same(ctx, fam, row, ctx.counterpart(row, load="local"), "load:local")
    # Half storage (semantics §7: temperature and power stored as half, every step's output
    # too). A step changes these temperatures by less than half a half-ulp at 256-512 K
    # (0.125), so the state never leaves the input rounded to half: the model says so too.
    for row in ctx.ok_rows(fam, ctx.run(["--apps", "hotspot", "--schemes", "accurate",
                                         "--temp", tp, "--power", pp, "--precision", "f16",
                                         "--iterations", str(iterations), "--wg", "16x8"])):
        want = hotspot.rodinia(temp, power, iterations, store=models.to_f16)
        ok, worst, detail = compare.compare(compare.load_output(row), want, np.abs(want), True,
                                            "f16", 0)
        ctx.tally.record(fam, row["key"], ok, detail if not ok else
                         f"bit for bit; {int(np.sum(want != models.to_f16(temp)))} elements "
                         "moved from the input rounded to half")
    rows = ctx.run(["--apps", "hotspot", "--schemes", "stencil,rows:2,cols:3", "--recon",
                    "nn,li" if ctx.full else "nn", "--temp", tp, "--power", pp,
                    "--iterations", "20", "--wg", "8x4"])
    for row in ctx.ok_rows(fam, rows):
        scheme = row["scheme"].split(":")[0]
        want = hotspot.perforated(temp, power, 20, scheme, row["skip"], row["recon"] == "li",
                                  models.output_block(row["wg"], row["vec"], row["py"]))
        _hotspot_compare(ctx, fam, row, want, 20)
    data = os.path.join(shared_data or "", "rodinia-hotspot")
    if not os.path.exists(os.path.join(data, "temp_64.xz")):
        print("SKIP hotspot on Rodinia's inputs: no rodinia-hotspot/temp_64.xz in the shared "
              "data directory or $KPERF_TEST_SHARED_DATA")
        return
    for n in (64, 512) if ctx.full else (64,):
        files = []
        for kind in ("temp", "power"):
            path = os.path.join(ctx.tmp, f"{kind}_{n}")
            with lzma.open(os.path.join(data, f"{kind}_{n}.xz")) as src, open(path, "wb") as dst:
                dst.write(src.read())
            files.append(path)
        grids = [np.loadtxt(f, dtype=np.float64).astype(np.float32).reshape(n, n) for f in files]
        rows = ctx.run(["--apps", "hotspot", "--schemes", "accurate", "--temp", files[0],
                        "--power", files[1], "--iterations", str(iterations), "--wg", "16x16"])
        for row in ctx.ok_rows(fam, rows):
            _hotspot_compare(ctx, fam, row, hotspot.rodinia(*grids, iterations), iterations)


def bilateral_options(ctx, name):
    """Loop perforation and computed weights at non-default sigmas (semantics §2, §9)."""
    fam = "bilateral"
    img = ctx.inputs[name]
    loads = "local,global,image" if ctx.full else "local"
    rows = ctx.run(["--apps", "bilateral", "--schemes", "accurate", "--loop-skip", "1,2",
                    "--weights", "table,computed", "--load", loads, "--bilateral-sigmas",
                    "30,1.5", "--wg", "16x8", "--input", ctx.path(name)])
    for row in ctx.ok_rows(fam, rows):
        check_model(ctx, fam, row, img, {"sigmas": (30.0, 1.5), "loop_skip": row["loop_skip"]})


def opencv_references(img):
    """OpenCV's filters with BORDER_REPLICATE, and how far each may be from the model: (values,
    exact?, tolerance factor on the model's magnitude). None without cv2."""
    try:
        import cv2
    except ImportError:
        return None
    rep = cv2.BORDER_REPLICATE
    f64, f32 = img.astype(np.float64), img.astype(np.float32)
    refs = {
        # sigma 0 with ksize 3 / 5 takes OpenCV's fixed binomial kernels, in double here.
        "gaussian3": (cv2.GaussianBlur(f64, (3, 3), 0, borderType=rep), False, 16),
        "gaussian5": (cv2.GaussianBlur(f64, (5, 5), 0, borderType=rep), False, 32),
        # medianBlur takes float32 for ksize 3 and selects an element: exact. It replicates
        # the border by definition (it has no border argument).
        "median": (cv2.medianBlur(f32, 3).astype(np.float64), True, 0),
        "inversion": (255.0 - f64, False, 2),
    }
    for k in (3, 5):
        gx = cv2.Sobel(f64, cv2.CV_64F, 1, 0, ksize=k, borderType=rep)
        gy = cv2.Sobel(f64, cv2.CV_64F, 0, 1, ksize=k, borderType=rep)
        refs[f"sobel{k}"] = (np.hypot(gx, gy), False, 40)
    # bilateralFilter computes in float32 and takes its colour weight from a table of 4096
    # bins over the image's value range, interpolated linearly (OpenCV's bilateral_filter.cpp,
    # kExpNumBinsPerChannel): its weights differ from exp() by about 1e-6 relative, and its
    # float32 sums as a kernel's do; held to the model at twice kperf's factor.
    refs["bilateral"] = (cv2.bilateralFilter(f32, 5, 25.0, 2.0, borderType=rep).astype(np.float64),
                         False, 2 * compare.FACTOR["bilateral"])
    return refs


def opencv_cross_check(ctx, name, accurate_rows):
    """OpenCV against the NumPy models, and kperf's accurate outputs against OpenCV."""
    fam = "opencv"
    img = ctx.inputs[name]
    refs = opencv_references(img)
    if refs is None:
        ctx.tally.record(fam, "import cv2", False,
                         "python3-opencv is missing (scripts/install-deps.sh installs it)")
        return
    for app, (cv, exact, factor) in sorted(refs.items()):
        want, mag = models.accurate(app, img)
        ok, worst, detail = compare.compare(cv, want, mag, exact, "f32", factor)
        ctx.tally.record(fam, f"{name}: cv2 {app} == model", ok,
                         detail if not ok else f"max |cv2 - model| {worst:.3g}{detail}")
    for row in accurate_rows:
        if row["app"] not in refs or row["load"] != "local":
            continue
        cv, exact, factor = refs[row["app"]]
        _, mag = models.accurate(row["app"], img)
        ok, worst, detail = compare.compare(compare.load_output(row), cv, mag, exact, "f32",
                                            factor + compare.FACTOR[row["app"]])
        ctx.tally.record(fam, f"{row['key']} == cv2", ok,
                         detail if not ok else f"max |kperf - cv2| {worst:.3g}{detail}")
