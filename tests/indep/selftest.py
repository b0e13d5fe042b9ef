"""Known-bad cases: the checks must report a wrong output or a wrong model as a mismatch, and an
empty or short run as a failure. Run after the families, on their own rows, so it costs no
kernel build."""
import os

import numpy as np

from . import compare, models
from .context import check_same, expected
from .output_families import check_fill_structure


def _find(ctx, **fields):
    for row in ctx.index.values():
        if row["status"] == "ok" and all(row.get(k) == v for k, v in fields.items()):
            return row
    raise LookupError(f"self-test needs a row with {fields}: the plan changed")


def _mismatch(got, row, img, perturbed_model=None):
    want, mag, exact, store, factor = perturbed_model or expected(row, img)
    return not compare.compare(got, want, mag, exact, store, factor)[0]


def _wrong_tie_model(row, img):
    """The model with nn's tie taking the row below (the tile flipped around the rebuild)."""
    original = models._rebuild_lines
    models._rebuild_lines = lambda tile, loaded, li: original(tile[::-1], loaded[::-1], li)[::-1]
    try:
        return expected(row, img)
    finally:
        models._rebuild_lines = original


def _unrounded_fill(ctx, row, img, path):
    """The row's output with its filled outputs made from the computed outputs before they were
    rounded to half (what semantics §6 says a kernel must not do); a row naming that file."""
    kind, K = row["output"].split(":")
    exact, _ = models.accurate(row["app"], models.to_f16(img))
    filled = models.to_f16(models.to_f32(models.output_scheme(exact, kind, int(K), True)))
    got = compare.load_output(row).astype(np.float64)
    computed = np.array([y % int(K) == int(K) // 2 for y in range(got.shape[0])])
    filled[computed] = got[computed]
    np.save(path, filled.astype(np.float32))
    return dict(row, output_file=path)


def _capture(ctx, fn):
    """Runs a check into a scratch tally; whether it recorded a failure."""
    real, scratch = ctx.tally, compare.Tally(quiet=True)
    ctx.tally = scratch
    try:
        fn()
    finally:
        ctx.tally = real
    return scratch.failed() > 0


def storage_rounding_cases():
    """Round to nearest even at the halfway points, by hand (IEEE 754 §4.3.1)."""
    one = 1.0
    cases = [(models.to_bf16, one + 2.0 ** -8, one),  # half an ulp of bf16 above 1: even is 1
             (models.to_bf16, one + 3 * 2.0 ** -8, one + 2.0 ** -6),  # tie up to the even one
             (models.to_bf16, one + 2.0 ** -8 + 2.0 ** -20, one + 2.0 ** -7),  # past the tie
             (models.to_bf16, -(one + 2.0 ** -8 + 2.0 ** -20), -(one + 2.0 ** -7)),
             (models.to_f16, one + 2.0 ** -11, one), (models.to_f16, one + 3 * 2.0 ** -11,
                                                       one + 2.0 ** -9)]
    return [(f"{fn.__name__}({x!r}) == {y!r}", float(fn(np.float32(x))) == y)
            for fn, x, y in cases]


def fill_plan_cases():
    """Semantics §6 by hand for 7 outputs, K = 3 (computed: 1 and 4)."""
    nn = [src for [(src, _)] in models.fill_plan(7, 3, False)]
    li2 = [(s, round(w, 9)) for s, w in models.fill_plan(7, 3, True)[2]]
    return [("nn fill plan of 7 outputs, K = 3", nn == [1, 1, 1, 4, 4, 4, 4]),
            ("li fill of output 2, K = 3", li2 == [(1, round(2 / 3, 9)), (4, round(1 / 3, 9))])]


def known_bad(ctx, name, minimum_check):
    """Each case must be caught; the family passes once per case caught."""
    fam = "known-bad"
    img = ctx.inputs[name]
    exact_row = _find(ctx, app="median", scheme="rows:2", recon="nn", load="local",
                      precision="f32", perforate="device", output="none", wg=[8, 4])
    tol_row = _find(ctx, app="gaussian3", scheme="rows:3", recon="li", load="local",
                    precision="f32", perforate="device", output="none", wg=[8, 4])
    out_row = _find(ctx, app="median", output="rows:2", output_recon="nn",
                    output_fill="fused", precision="f32", scheme="accurate")
    got = compare.load_output(exact_row)
    one_ulp = got.copy()
    one_ulp[23, 30] = np.nextafter(one_ulp[23, 30], np.float32(np.inf))
    ctx.tally.record(fam, "the exact row passes unperturbed", not _mismatch(got, exact_row, img))
    ctx.tally.record(fam, "one element one ulp off (exact check)",
                     _mismatch(one_ulp, exact_row, img))
    want, mag, _, _, factor = expected(tol_row, img)
    nudged = compare.load_output(tol_row).astype(np.float64)
    nudged[11, 40] = want[11, 40] + 2.5 * factor * compare.U32 * mag[11, 40]
    ctx.tally.record(fam, "one element 2.5 tolerances off (toleranced check)",
                     _mismatch(nudged.astype(np.float32), tol_row, img))
    ctx.tally.record(fam, "rows:2 nn modelled with the tie taking the row below",
                     _mismatch(got, exact_row, img, _wrong_tie_model(exact_row, img)))
    filled = compare.load_output(out_row).copy()
    filled[2] = filled[3]  # a tie between computed rows 1 and 3 takes row 1 (semantics §6)
    path = os.path.join(ctx.tmp, "selftest-wrong-row.npy")
    np.save(path, filled)
    wrong = dict(out_row, output_file=path)
    ctx.tally.record(fam, "rows:2 output filled from the wrong row (structure)",
                     _capture(ctx, lambda: check_fill_structure(ctx, fam, wrong)))
    ctx.tally.record(fam, "rows:2 output filled from the wrong row (model)",
                     _mismatch(filled, out_row, img))
    half_row = _find(ctx, app="gaussian5", output="rows:3", output_recon="li",
                     output_fill="fused", precision="f16", scheme="accurate")
    ctx.tally.record(fam, "an f16 li fill made from unrounded computed outputs (structure)",
                     _capture(ctx, lambda: check_fill_structure(
                         ctx, fam, _unrounded_fill(ctx, half_row, img, path))))
    np.save(path, one_ulp)
    ctx.tally.record(fam, "bit-for-bit equality of two rows one ulp apart",
                     _capture(ctx, lambda: check_same(ctx, fam, dict(exact_row, output_file=path),
                                                      exact_row, "perturbed")))
    for label, ok in storage_rounding_cases() + fill_plan_cases():
        ctx.tally.record(fam, f"model helper by hand: {label}", ok)
    ctx.tally.record(fam, "an empty run fails the minimum count",
                     bool(minimum_check(compare.Tally(quiet=True))))
