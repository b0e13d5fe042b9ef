"""What every family shares: the kperf binary and input, the rows run so far (indexed by their
identity so that a row's counterpart on another axis can be found), and the check of one row
against the independent models."""
import os

import numpy as np

from . import compare, models

# Identity of a row beyond its launch shape and input (docs/json.md, "Identity").
AXES = ("app", "scheme", "recon", "load", "output", "output_recon", "output_fill", "precision",
        "perforate", "relax", "loop_skip", "weights", "iterations_skip")


def ident(row, **override):
    fields = tuple((a, override.get(a, row.get(a))) for a in AXES)
    shape = (tuple(override.get("wg", row["wg"])), override.get("vec", row["vec"]),
             override.get("py", row["py"]))
    return fields + (shape, row["input"]["name"])


def parse_line_scheme(text):
    """'rows:3' -> ('rows', 3); 'none' / None -> None."""
    if not text or text == "none":
        return None
    kind, k = text.split(":")
    return kind, int(k)


class Context:
    def __init__(self, binary, tmp, tally, full, env=None, kernel_dir=None):
        self.binary, self.tmp, self.tally, self.full, self.env = binary, tmp, tally, full, env
        # Another kernel root (a mutated copy: tests/kernel_mutants_test.py), else the binary's.
        self.root_args = ["--kernel-dir", kernel_dir] if kernel_dir else []
        self.index = {}
        self.inputs = {}  # input name -> float64 grid (the float32 values kperf reads)
        self.runs = 0

    def add_input(self, name, grid):
        np.save(self.path(name), np.asarray(grid, dtype=np.float32))
        self.inputs[name] = np.asarray(grid, dtype=np.float32).astype(np.float64)

    def path(self, name):
        return os.path.join(self.tmp, name + ".npy")

    def run(self, args, index=True):
        """kperf's rows for args; indexed for counterparts unless `index` is False (a build
        option the row's identity does not show)."""
        self.runs += 1
        rows = compare.run_kperf(self.binary, args + self.root_args, self.tmp, f"run{self.runs}",
                                 self.env)
        for row in rows if index else ():
            self.index[ident(row)] = row
        return rows

    def counterpart(self, row, **override):
        """The row that differs from `row` only in the overridden fields (None: not run)."""
        return self.index.get(ident(row, **override))

    def ok_rows(self, family, rows):
        """The rows that ran; any other status is a failure of the family."""
        good = []
        for row in rows:
            if row["status"] == "ok":
                good.append(row)
            else:
                self.tally.record(family, row["key"], False,
                                  f"status {row['status']}: {row.get('reason', '')}")
        return good


def expected(row, img, opts=None):
    """The models' output for a kperf row: (values, magnitudes, exact, stored type, factor).

    The input is rounded to the precision's input storage; the app runs on the accurate tile or
    on the input scheme's tile at the row's block (the output scheme's period included); the
    output scheme fills from the computed outputs, rounded first to the output storage."""
    app = row["app"]
    in_store, out_store = models.PRECISION[row.get("precision", "f32")]
    x = models.STORE[in_store](img)
    scheme = row["scheme"].split(":")[0]
    li_in = row["recon"] == "li" and scheme in ("rows", "cols")
    output = parse_line_scheme(row.get("output"))
    block = models.output_block(row["wg"], row["vec"], row["py"], output)
    if scheme == "accurate":
        values, mag = models.accurate(app, x, opts)
    else:
        values, mag = models.perforated(app, x, scheme, row["skip"], li_in, block, opts)
    interp = li_in
    if output:
        li_out = row["output_recon"] == "li"
        store = models.STORE[out_store]
        values = models.output_scheme(values, output[0], output[1], li_out,
                                      lambda v: store(models.to_f32(v)))
        mag = models.output_scheme(mag, output[0], output[1], li_out)
        interp = interp or li_out
    exact = app in models.SELECTION_APPS and not interp
    factor = compare.FACTOR[app] + (compare.INTERP_FACTOR if interp else 0)
    return values, mag, exact, out_store, factor


def check_model(ctx, family, row, img, opts=None):
    """One kperf row against the models; the row's `block` field against docs/json.md: the
    work-items' outputs (wx vec) x (wy py), which an output scheme's period multiplies into the
    block the group covers (semantics §3, §6; the models use the latter)."""
    shape_block = models.output_block(row["wg"], row["vec"], row["py"])
    if list(row["block"]) != list(shape_block):
        ctx.tally.record("block", row["key"], False,
                         f"block {row['block']} where docs/json.md gives {list(shape_block)}")
    want, mag, exact, out_store, factor = expected(row, img, opts)
    ok, worst, detail = compare.compare(compare.load_output(row), want, mag, exact, out_store,
                                        factor)
    if not ok:
        ctx.tally.record(family, row["key"], False, detail)
        return
    mode = "exact" if exact else f"tolerance {factor}u x magnitude{detail}"
    ctx.tally.record(family, row["key"], True, f"max |kperf - model| {worst:.3g} ({mode})")


def check_same(ctx, family, row, other, what, tolerance_ulps=0):
    """Two kperf rows that semantics says are equal: bit for bit, or within a few units in the
    last place of the stored type (the separate fill under li)."""
    label = f"{row['key']} == {what}"
    if other is None:
        ctx.tally.record(family, label, False, "counterpart row was not run (test plan error)")
        return
    if other["status"] != "ok":
        ctx.tally.record(family, label, False, f"counterpart {other['status']}")
        return
    a, b = compare.load_output(row), compare.load_output(other)
    if tolerance_ulps == 0:
        ok = compare.same_bits(a, b)
        detail = "" if ok else compare.first_difference(a, b)
    else:
        store = models.PRECISION[row.get("precision", "f32")][1]
        ulp = models.storage_ulp(np.maximum(np.abs(a), np.abs(b)), store)
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        ok = a.shape == b.shape and bool(np.all(diff <= tolerance_ulps * ulp))
        detail = "" if ok else compare.first_difference(a, b)
    ctx.tally.record(family, label, ok, detail)
