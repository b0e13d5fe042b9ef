#!/usr/bin/python3
"""Holds kperf's kernels to independent NumPy models of every scheme family, written from
docs/semantics.md (and the specification's sections 2-4, 10, 11) and never from kperf's C++ or
OpenCL (tests/indep/):

- accurate: every image app on the local tile and the global load path; hotspot against a
  transcription of Rodinia 3.1's own solver (tests/indep/hotspot.py cites the sources);
- stencil; rows:k and cols:k (k = 2, 3) with nn and li at four launch shapes whose blocks
  (8x4, 32x6, 16x8, 8x10 on a 61 x 47 grid) put the tile's edges at different residues of k
  and leave partial blocks; the global and image load paths, bit for bit those of the tile;
- Paraprox's output schemes rows:K, cols:K, center:K with nn and li under each fill (fused,
  shared, separate), against the models, against the kernel's own computed lines, and against
  each other; an input scheme under an output scheme;
- f16in, f16 and bf16 storage (numpy's float16; bfloat16 rounded by integer operations);
- host perforation, bit for bit device perforation and the models;
- bilateral's loop perforation and computed weights at non-default sigmas; hotspot's launch
  perforation, input schemes and half storage; build options that semantics says change how,
  not what (bit for bit against the default build); the configurations semantics refuses (their
  statuses); the sample photo, decoded and resized (bilinear, half-pixel centres);
- OpenCV (GaussianBlur, Sobel, medianBlur, bilateralFilter with BORDER_REPLICATE) against the
  models and against kperf's accurate outputs (python3-opencv; a failure when it is missing);
- known-bad cases (tests/indep/selftest.py): an output one ulp off, one 2.5 tolerances off, a
  rows:2 model whose tie takes the wrong row, an output-scheme output filled from the wrong row,
  two rows one ulp apart, hand-rounded half / bfloat16 values, and an empty tally must each be
  reported.

The sample (the fast tier; KPERF_TEST_FULL=1 runs every app at every shape, K = 4, more fills
and load paths, Rodinia's 512 x 512 input): every app appears in the accurate, rows/cols and
stencil-or-output families; median is the main sample app because a selection makes its outputs
exact under nn, so a one-ulp error fails; gaussian3/5 (r = 1, 2) and sobel hold the arithmetic
apps to a float32 bound; inversion (r = 0) checks the halo-less path and stencil's
not_applicable row. Exact comparisons are bit for bit; the others allow the classical float32
bound (factor x 2^-24 x the sum of absolute terms; tests/indep/compare.py), plus one ulp of a
16-bit stored output.

usage: independent_refs.py KPERF_BINARY PHOTO_DIR [SHARED_DATA_DIR] [-v]
                          [--kernel-dir DIR] [--families F,F...]
(SHARED_DATA_DIR/rodinia-hotspot, else $KPERF_TEST_SHARED_DATA/rodinia-hotspot, holds Rodinia's
inputs; without them the real-data hotspot check is reported as skipped.) --kernel-dir runs the
kernels of another root (tests/kernel_mutants_test.py holds a mutated copy to these models);
--families runs only those families (their minimums still hold).
The run fails when fewer comparisons than each family's minimum were made. Exit 0 on agreement,
1 on a mismatch or a short run, 77 when numpy is unavailable.
"""
import os
import sys
import tempfile
import time
import traceback

try:
    import numpy as np
except ImportError:
    print("numpy missing: install python3-numpy", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from indep import compare, input_families, other_families, output_families  # noqa: E402
from indep.context import Context, check_model  # noqa: E402
from indep.selftest import known_bad  # noqa: E402
from checks import full_tier  # noqa: E402

# Comparisons each family must make (the plan's count: a row lost, a family skipped or an
# empty run fails). KPERF_TEST_FULL=1 runs more and must make at least as many.
MINIMUM = {"accurate": 14, "opencv": 14, "stencil": 8, "rows/cols": 56, "load": 31,
           "storage": 21, "host": 27, "statuses": 14, "output": 72, "fills": 28, "in+out": 24,
           "build": 20, "bilateral": 4, "hotspot": 13, "known-bad": 17}
MINIMUM_FULL = dict(MINIMUM, **{"stencil": 28, "rows/cols": 168, "storage": 24, "output": 324,
                                "fills": 144, "in+out": 120, "bilateral": 12, "hotspot": 16})


def synthetic_grid(height=47, width=61, seed=2019):
    """Smooth structure, sharp edges and noise in [0, 255], so that schemes and filters differ
    everywhere and no two neighbours tie."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    g = 127 + 90 * np.sin(x / 4.3) * np.cos(y / 6.1) + 40 * (x > width // 2) - 30 * (y > 30)
    return np.clip(g + rng.uniform(-12, 12, (height, width)), 0, 255).astype(np.float32)


def load_luminance(path):
    from PIL import Image  # python3-pil comes with python3-matplotlib

    img = np.asarray(Image.open(path)).astype(np.float64)
    if img.ndim == 2:
        return img
    return 0.299 * img[..., 0] + 0.587 * img[..., 1] + 0.114 * img[..., 2]


def resize_bilinear(img, width, height):
    """Semantics §1: bilinear with half-pixel centres (output x samples the source at
    (x + 0.5) w / W - 0.5), neighbours clamped to the grid, no prefilter."""
    h, w = img.shape
    ys = np.clip((np.arange(height) + 0.5) * h / height - 0.5, 0, h - 1)
    xs = np.clip((np.arange(width) + 0.5) * w / width - 0.5, 0, w - 1)
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    fy, fx = (ys - y0)[:, None], (xs - x0)[None, :]
    top = img[y0][:, x0] * (1 - fx) + img[y0][:, x1] * fx
    bottom = img[y1][:, x0] * (1 - fx) + img[y1][:, x1] * fx
    return top * (1 - fy) + bottom * fy


def photo_family(ctx, photo_dir):
    """The accurate apps on the sample photo camera.png (512 x 512, 8-bit grey, so its
    luminance is exact whatever the arithmetic), kperf's decoding included, against the models
    and OpenCV; and the photo resized (--size, down and up) through inversion."""
    path = os.path.join(photo_dir, "camera.png")
    if not os.path.exists(path):
        print(f"SKIP photo: {path} not found (datasets/fetch_images.sh)")
        return
    ctx.inputs["camera"] = load_luminance(path).astype(np.float32).astype(np.float64)
    rows = ctx.run(["--apps", ",".join(input_families.IMAGE_APPS), "--schemes", "accurate",
                    "--wg", "16x8", "--input", path])
    rows = ctx.ok_rows("photo", rows)
    for row in rows:
        check_model(ctx, "photo", row, ctx.inputs["camera"])
    other_families.opencv_cross_check(ctx, "camera", rows)
    for row in ctx.ok_rows("photo", ctx.run(["--apps", "inversion", "--schemes", "accurate",
                                             "--size", "61x47,700x300", "--wg", "16x8",
                                             "--input", path])):
        want = 255.0 - resize_bilinear(ctx.inputs["camera"], row["input"]["width"],
                                       row["input"]["height"])
        # The float32 blend of four pixels of at most 255: a few roundings of 255.
        ok, worst, detail = compare.compare(compare.load_output(row), want,
                                            np.full(want.shape, 255.0), False, "f32", 8)
        ctx.tally.record("photo", f"{row['key']} (resize)", ok,
                         detail if not ok else f"max |kperf - model| {worst:.3g}{detail}")


def minimum_problems(tally, minimum):
    return [f"{fam}: {sum(tally.counts.get(fam, (0, 0)))} comparisons, at least {n} expected"
            for fam, n in minimum.items() if sum(tally.counts.get(fam, (0, 0))) < n]


def option(argv, name):
    """The value of `name VALUE` in argv (both removed), or None."""
    if name not in argv:
        return None
    i = argv.index(name)
    value = argv[i + 1] if i + 1 < len(argv) else None
    del argv[i:i + 2]
    return value


def main():
    argv = sys.argv[1:]
    kernel_dir, only = option(argv, "--kernel-dir"), option(argv, "--families")
    args = [a for a in argv if a != "-v"]
    if len(args) < 2 or (only is not None and not only):
        print("usage: independent_refs.py KPERF_BINARY PHOTO_DIR [SHARED_DATA_DIR] [-v] "
              "[--kernel-dir DIR] [--families F,F...]", file=sys.stderr)
        return 2
    binary, photo_dir = args[0], args[1]
    # Rodinia's inputs: the directory given (ctest: ../shared/data beside the tree), else
    # $KPERF_TEST_SHARED_DATA (a clone elsewhere).
    shared = next((d for d in args[2:3] + [os.environ.get("KPERF_TEST_SHARED_DATA")]
                   if d and os.path.isdir(os.path.join(d, "rodinia-hotspot"))), None)
    full = full_tier()
    minimum = dict(MINIMUM_FULL if full else MINIMUM)
    if shared is None:
        # Without Rodinia's inputs (a clone with no ../shared/data) their comparisons are
        # skipped, with a SKIP line: the synthetic chip's stay counted (15 under
        # KPERF_TEST_FULL=1, of the 16 with Rodinia's 512 x 512 input).
        minimum["hotspot"] = min(minimum["hotspot"], 15 if full else MINIMUM["hotspot"])
    if only is not None:
        minimum = {fam: n for fam, n in minimum.items() if fam in only.split(",")}
    tally = compare.Tally(verbose="-v" in sys.argv)
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Context(binary, tmp, tally, full, kernel_dir=kernel_dir)
        ctx.add_input("grid", synthetic_grid())
        families = [
            ("accurate", lambda: other_families.opencv_cross_check(
                ctx, "grid", input_families.accurate_apps(ctx, "grid"))),
            ("photo", lambda: photo_family(ctx, photo_dir)),
            ("stencil", lambda: input_families.stencil(ctx, "grid")),
            ("rows/cols", lambda: input_families.rows_cols(ctx, "grid")),
            ("load", lambda: input_families.load_paths(ctx, "grid")),
            ("storage", lambda: input_families.storage(ctx, "grid")),
            ("host", lambda: input_families.host_perforation(ctx, "grid")),
            ("statuses", lambda: input_families.statuses(ctx, "grid")),
            ("output", lambda: output_families.output_schemes(ctx, "grid")),
            ("in+out", lambda: output_families.input_under_output(ctx, "grid")),
            ("build", lambda: output_families.build_variants(ctx, "grid")),
            ("bilateral", lambda: other_families.bilateral_options(ctx, "grid")),
            ("hotspot", lambda: other_families.hotspot_family(ctx, shared)),
            ("known-bad", lambda: known_bad(ctx, "grid",
                                            lambda t: minimum_problems(t, minimum))),
        ]
        unknown = set(only.split(",")) - {fam for fam, _ in families} if only else set()
        if unknown:
            print(f"--families: unknown {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        for fam, run in families:
            if only is not None and fam not in only.split(","):
                continue
            before = os.times()
            try:
                run()
            except Exception as e:  # a crashed family is a failure, the others still run
                traceback.print_exc()
                tally.record(fam, "family", False, f"{type(e).__name__}: {e}")
            after = os.times()
            print(f"{fam}: {after.elapsed - before.elapsed:.1f} s, numpy "
                  f"{after.user - before.user:.1f} s, "
                  f"kperf {after.children_user - before.children_user:.1f} s", flush=True)
    print(f"{'family':12s} {'passed':>7s} {'failed':>7s}")
    for fam, (passed, failed) in tally.counts.items():
        print(f"{fam:12s} {passed:7d} {failed:7d}")
    short = minimum_problems(tally, minimum)
    for line in short:
        print(f"FAIL too few comparisons: {line}")
    print(f"{tally.total() - tally.failed()} passed, {tally.failed()} failed, "
          f"{ctx.runs} kperf runs, {time.time() - start:.0f} s"
          f"{' (KPERF_TEST_FULL)' if full else ''}")
    return 1 if tally.failed() or short else 0


if __name__ == "__main__":
    sys.exit(main())
