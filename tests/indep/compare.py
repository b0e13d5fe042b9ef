"""Running kperf and holding its saved outputs to a model: tolerances, tallies per family.

A comparison is exact (bit for bit on the stored float32 / half / bfloat16 value) where the
semantics make the output one rounding of an exact value: a selection or copy of input elements
(median, a nearest-neighbour rebuild or fill), `255 - v`. Elsewhere the kernel computes in
float32 and the model in float64, and the tolerance is the classical bound on float32 rounding:
`factor * u * magnitude` with u = 2^-24 and `magnitude` the model's sum of absolute terms at the
element (models.py), plus one unit in the last place of a 16-bit stored output (the float and
the double value may round to neighbouring halves).
"""
import json
import os
import subprocess

import numpy as np

from . import models

U32 = 2.0 ** -24

# Roundings a kernel's float32 evaluation may accumulate per unit of magnitude: a weighted sum
# of n taps is within n u of the sum of its absolute terms (Higham, Accuracy and Stability of
# Numerical Algorithms, eq. 3.5), a few more for the weights' products, the hypot of Sobel and
# bilateral's exp (OpenCL's exp is within 3 ulp) and its division.
FACTOR = {"gaussian3": 16, "gaussian5": 32, "sobel3": 24, "sobel5": 40, "median": 1,
          "inversion": 2, "bilateral": 48, "hotspot": 8}
# A linear interpolation (of an input line or an output line) adds three roundings of the
# values it mixes, whose magnitude the model's magnitudes bound.
INTERP_FACTOR = 4


class Tally:
    """Counts comparisons per family; each failure is printed with what differed."""

    def __init__(self, verbose=False, quiet=False):
        self.counts = {}
        self.failures = []
        self.verbose, self.quiet = verbose, quiet

    def record(self, family, label, ok, detail=""):
        passed, failed = self.counts.get(family, (0, 0))
        self.counts[family] = (passed + ok, failed + (not ok))
        if not ok:
            self.failures.append(f"{family}: {label}: {detail}")
        if not ok and not self.quiet:
            print(f"FAIL {family:12s} {label} {detail}", flush=True)
        elif ok and self.verbose:
            print(f"ok   {family:12s} {label} {detail}", flush=True)

    def total(self):
        return sum(p + f for p, f in self.counts.values())

    def failed(self):
        return sum(f for _, f in self.counts.values())


def run_kperf(binary, args, tmp, name, env=None):
    """kperf run with `args`, one untimed warm-up-free sample, outputs saved; its rows."""
    out = os.path.join(tmp, name + ".json")
    cmd = [binary, "run"] + args + ["--warmup", "0", "--reps", "1", "--quiet", "--out", out,
                                    "--save-outputs", os.path.join(tmp, "out-" + name)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}: {proc.stderr.strip()}")
    with open(out) as f:
        return json.load(f)["results"]


def load_output(row):
    return np.load(row["output_file"])


def compare(got, want, mag, exact, out_store, factor):
    """(ok, worst |got - want|, where) of a kernel output against a model.

    exact: got must equal the model's value rounded as the kernel stores it (to float32 once,
    then to the stored type). Otherwise |got - want| <= factor u mag (+ one stored ulp)."""
    got = np.asarray(got)
    if got.shape != want.shape:
        return False, float("inf"), f"shape {got.shape} != {want.shape}"
    g = got.astype(np.float64)
    if exact:
        want = models.STORE[out_store](models.to_f32(want))
        bad = g != want
        ratio = ""
    else:
        tol = factor * U32 * mag
        if out_store != "f32":
            tol = tol + models.storage_ulp(want, out_store)
        bad = ~(np.abs(g - want) <= tol)
        ratio = f", {float(np.max(np.abs(g - want) / np.maximum(tol, 1e-300))):.2f} of it"
    worst = float(np.max(np.abs(g - want))) if g.size else 0.0
    if not bad.any():
        return True, worst, ratio
    y, x = np.argwhere(bad)[0]
    return False, worst, (f"{int(bad.sum())} elements differ, first at (y={y}, x={x}): "
                          f"kperf {g[y, x]!r}, model {want[y, x]!r}"
                          f"{' (exact)' if exact else ''}")


def same_bits(a, b):
    """Two kperf outputs bit for bit (a NaN equal to itself)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


def first_difference(a, b):
    a, b = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    if a.shape != b.shape:
        return f"shape {a.shape} != {b.shape}"
    diff = np.argwhere(a.view(np.uint32) != b.view(np.uint32))
    if not diff.size:
        return "equal"
    y, x = diff[0]
    return f"{len(diff)} elements differ, first at (y={y}, x={x}): {a[y, x]!r} vs {b[y, x]!r}"
