"""Paraprox's output schemes (semantics §6): rows:K, cols:K and center:K with nn and li
reconstruction under each fill (fused, shared, separate), held three ways:

- to the models: the app's outputs at the computed lines, the rest filled from them;
- to their own computed lines: under nn every other output is a bit-for-bit copy of the kernel's
  nearest computed output, under li the interpolation of the kernel's two nearest computed
  outputs (x first, then y) within a few float32 roundings, or under f16 / bf16 that
  interpolation of the stored computed outputs rounded once to the stored type; this holds the
  fill's structure whatever the app's arithmetic;
- to each other: shared and fused bit for bit, separate and fused bit for bit under nn and
  within one unit in the last place of the stored type under li.

An input scheme under an output scheme is the output scheme applied to the input scheme's
outputs at the block multiplied by the period (semantics §6, last paragraphs).
"""
import numpy as np

from . import compare, models
from .context import check_model, check_same, parse_line_scheme
from .input_families import shape_args

FILLS = ("fused", "shared", "separate")


def check_fill_structure(ctx, family, row):
    """The kernel's filled outputs against its own computed outputs."""
    kind, K = parse_line_scheme(row["output"])
    li = row["output_recon"] == "li"
    got = compare.load_output(row).astype(np.float64)
    store = models.PRECISION[row.get("precision", "f32")][1]
    want = models.output_scheme(got, kind, K, li)
    if li and store == "f32":
        # Mixing two float32 values by weights adds at most 3 roundings of their magnitude.
        bad = ~(np.abs(got - want) <= 4 * compare.U32 * np.abs(want))
    elif li:
        # A 16-bit output: the fill made from the stored computed lines (semantics §6-7),
        # rounded once to the stored type; the kernel's float32 mix may round the other way
        # only where the exact mix lies within those roundings of a rounding midpoint.
        rnd = models.STORE[store]
        near = rnd(want * (1 + 4 * compare.U32)) != rnd(want * (1 - 4 * compare.U32))
        want = rnd(models.to_f32(want))
        bad = (got != want) & ~near
    else:
        bad = got != want
    detail = ""
    if bad.any():
        y, x = np.argwhere(bad)[0]
        detail = (f"{int(bad.sum())} filled outputs are not what their computed lines give, "
                  f"first at (y={y}, x={x}): kperf {got[y, x]!r}, from its computed lines "
                  f"{want[y, x]!r}")
    ctx.tally.record(family, f"{row['key']} fill", not bad.any(), detail)


def check_output_rows(ctx, family, rows, img):
    for row in ctx.ok_rows(family, rows):
        check_model(ctx, family, row, img)
        check_fill_structure(ctx, family, row)
        if row["output_fill"] != "fused":
            ulps = 1 if (row["output_fill"] == "separate" and row["output_recon"] == "li") else 0
            check_same(ctx, "fills", row, ctx.counterpart(row, output_fill="fused"),
                       "output_fill:fused", ulps)


def output_schemes(ctx, name):
    """rows/cols/center with K = 2 and 3 (K = 4 with --full), nn and li, every fill. The fast
    tier runs median (exact under nn) at shape A with rows:2, cols:3, center:3 and gaussian3
    at shape B (vec 2, py 3: several computed lines per work-item) with rows:3, cols:2,
    center:2; --full runs them and sobel5 (r = 2, vec 4) at C with every K of 2, 3, 4."""
    fam = "output"
    img = ctx.inputs[name]
    plans = [("median", "A", "rows:2,cols:3,center:3"),
             ("gaussian3", "B", "rows:3,cols:2,center:2")]
    if ctx.full:
        every = ",".join(f"{d}:{k}" for d in ("rows", "cols", "center") for k in (2, 3, 4))
        plans = [("median", "A", every), ("gaussian3", "B", every), ("sobel5", "C", every)]
    for app, s, outputs in plans:
        rows = ctx.run(["--apps", app, "--schemes", "accurate", "--output", outputs,
                        "--output-recon", "nn,li", "--output-fill", ",".join(FILLS),
                        "--input", ctx.path(name)] + shape_args(s))
        check_output_rows(ctx, fam, rows, img)


def input_under_output(ctx, name):
    """An input scheme under an output scheme: semantics §6's example (stencil under rows:2 at
    8x4 is stencil on 8 x 8 blocks, then rows:2), rows:3 li under cols:2, and f16 / bf16 under
    li output reconstruction (the computed outputs rounded to the stored type first)."""
    fam = "in+out"
    img = ctx.inputs[name]
    runs = [["--apps", "gaussian3", "--schemes", "stencil", "--output", "rows:2",
             "--output-recon", "nn,li", "--wg", "8x4"],
            ["--apps", "median", "--schemes", "rows:3", "--recon", "li", "--output", "cols:2",
             "--output-recon", "nn,li"] + shape_args("A"),
            ["--apps", "gaussian5", "--schemes", "accurate", "--output", "rows:3,center:2",
             "--output-recon", "li", "--precision", "f16,bf16", "--output-fill",
             "fused,separate"] + shape_args("A")]
    if ctx.full:
        runs.append(["--apps", "sobel3", "--schemes", "cols:2,rows:2", "--recon", "nn,li",
                     "--output", "center:3,rows:2", "--output-recon", "nn,li",
                     "--output-fill", ",".join(FILLS)] + shape_args("B"))
    for args in runs:
        rows = ctx.run(args + ["--input", ctx.path(name)])
        check_output_rows(ctx, fam, rows, img)


def build_variants(ctx, name):
    """Build options that semantics says change how, not what (each row against the models and
    bit for bit against the default build): rows rebuilt into local memory first (§4,
    KPERF_MATERIALIZE_ROWS=1); each computed column's or row's window gathered on its own
    (§6, KPERF_SHARED_X_WINDOW=0, KPERF_SHARED_Y_WINDOW=0 on the global load path); median's
    packed-half selection emulated on any device (§7, KPERF_HALF_PAIR_OPS=1, outputs those of
    the float selection where §7 says it is used)."""
    fam = "build"
    img = ctx.inputs[name]
    path = ctx.path(name)
    plans = [(["--apps", "median", "--schemes", "rows:2,rows:3", "--recon", "li"] +
              shape_args("A"), "-DKPERF_MATERIALIZE_ROWS=1"),
             (["--apps", "gaussian3", "--schemes", "accurate", "--output", "cols:2,center:2",
               "--output-recon", "li"] + shape_args("B"), "-DKPERF_SHARED_X_WINDOW=0"),
             (["--apps", "gaussian3", "--schemes", "accurate", "--output", "rows:3",
               "--output-recon", "nn,li", "--load", "global"] + shape_args("B"),
              "-DKPERF_SHARED_Y_WINDOW=0"),
             (["--apps", "median", "--schemes", "accurate,rows:2", "--recon", "li",
               "--precision", "f16", "--load", "local,global"] + shape_args("C"),
              "-DKPERF_HALF_PAIR_OPS=1")]
    for args, option in plans:
        args = args + ["--input", path]
        default = {r["key"]: r for r in ctx.run(args)}
        for row in ctx.ok_rows(fam, ctx.run(args + [f"--cl-options={option}"], index=False)):
            check_model(ctx, fam, row, img)
            check_same(ctx, fam, row, default.get(row["key"]), f"the build without {option}")
