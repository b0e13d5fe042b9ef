#!/usr/bin/python3
"""kperf pipeline's stage errors recomputed from its saved outputs (--save-outputs), against
truths and models written here from docs/semantics.md and docs/pipelines.md (tests/indep/),
never from kperf's C++:

- the chained truth: each stage's accurate app in float64 on the previous stage's truth;
- every saved stage output (each stage of a chain of separate launches, the last of a fused one)
  gives, by its app's primary metric (semantics §10: gaussian5 and median mre, sobel3 me) against
  that truth, the `error` its row reports for that stage, and the last stage's is `final_error`;
- each stage of a chain of separate launches equals its scheme's model applied to the output the
  stage read: stage 1 to the input, stage 2 to stage 1's saved output (so that stage 2 is held to
  its model whatever stage 1 computed), within the float32 bound of tests/indep/compare.py;
- an accurate fused chain's output is the accurate chain of separate launches' at its shape, bit
  for bit.

Known-bad cases: an output with one element moved must give another error and fail its model,
and a reported error off by 1e-7 of itself must not pass. A stage output that cannot be written
(KPERF_FAULT=save) leaves a host_error row with its measurements.

usage: pipeline_outputs_test.py KPERF_BINARY
Exit 0 on success, 1 on a failed check, 77 without numpy.
"""
import json
import os
import subprocess
import sys
import tempfile

from checks import check, finish, numpy_or_skip

np = numpy_or_skip()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from indep import compare, models  # noqa: E402

CHAINS = {"blur-edges": ("gaussian5", "sobel3"), "denoise-edges": ("median", "sobel3")}
METRIC = {"gaussian5": "mre", "median": "mre", "sobel3": "me"}


def metric(name, got, truth):
    """semantics §10 on finite elements."""
    g, t = np.asarray(got, dtype=np.float64), np.asarray(truth, dtype=np.float64)
    keep = np.isfinite(g)
    g, t = g[keep], t[keep]
    if name == "mre":
        big = np.abs(t) > 1e-6 * np.max(np.abs(t))
        return float(np.mean(np.abs(t[big] - g[big]) / np.abs(t[big])))
    span = float(np.max(t) - np.min(t))
    mean = float(np.mean(np.abs(t - g)))
    return mean / span if span > 0 else mean


def same_error(got, want):
    return abs(got - want) <= 1e-9 * abs(want) + 1e-15


def model(app, variant, img, block):
    """(values, magnitudes, exact) of one stage's variant on the grid it read."""
    scheme = variant.split("/")[0]
    if scheme == "accurate":
        values, mag = models.accurate(app, img)
        return values, mag, app == "median"
    kind, k = scheme.split(":")
    li = "/li" in variant
    values, mag = models.perforated(app, img, kind, int(k), li, block)
    return values, mag, app == "median" and not li


def block_of(wg):
    """The launch block (width, height) of a shape label such as 8x4 or 16x4v2y2."""
    x, rest = wg.split("x")
    y, vec, py = rest, 1, 1
    if "v" in rest:
        y, rest = rest.split("v")
        vec, py = (rest.split("y") + ["1"])[:2] if "y" in rest else (rest, 1)
    elif "y" in rest:
        y, py = rest.split("y")
    return int(x) * int(vec), int(y) * int(py)


def grid(h, w):
    """A photo-like input: smooth shading, edges and noise, in [0, 255]."""
    rng = np.random.default_rng(7)
    y, x = np.mgrid[0:h, 0:w]
    g = 128 + 60 * np.sin(x / 7.0) * np.cos(y / 5.0) + 40 * (x > w // 2) + rng.normal(0, 8, (h, w))
    return np.clip(g, 0, 255).astype(np.float32)


def run_chain(binary, chain, img_path, tmp):
    out, saved = os.path.join(tmp, chain + ".json"), os.path.join(tmp, chain + "-outputs")
    os.makedirs(saved)
    cmd = [binary, "pipeline", "--pipeline", chain, "--fuse", "none,all",
           "--stage", "1:--schemes accurate,rows:2 --recon nn,li --wg 8x4,16x4",
           "--stage", "2:--schemes accurate,rows:2 --recon nn --wg 8x4", "--input", img_path,
           "--size", "61x47",
           "--warmup", "0", "--reps", "1", "--quiet", "--out", out, "--save-outputs", saved]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    check(proc.returncode == 0, f"{chain}: exit {proc.returncode}: {proc.stderr.strip()[-400:]}")
    return json.load(open(out))["results"] if proc.returncode == 0 else []


def check_lost_outputs(binary, img_path, tmp):
    """A stage output that cannot be written (KPERF_FAULT=save) leaves its chain of separate
    launches a host_error row with its measurements and no row output_file."""
    out, saved = os.path.join(tmp, "lost.json"), os.path.join(tmp, "lost-outputs")
    os.makedirs(saved)
    cmd = [binary, "pipeline", "--pipeline", "blur-edges", "--stage", "1:--wg 8x4",
           "--stage", "2:--wg 8x4", "--input", img_path, "--size", "61x47", "--warmup", "0",
           "--reps", "1", "--quiet", "--out", out, "--save-outputs", saved]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ,
                                                                         KPERF_FAULT="save"))
    rows = json.load(open(out))["results"] if os.path.exists(out) else []
    check(len(rows) == 1, f"a lost output: one row, got {len(rows)} (exit {proc.returncode})")
    for r in rows:
        check(r["status"] == "host_error" and "--save-outputs: " in r.get("reason", ""),
              f"a lost output: {r['status']} {r.get('reason', '')!r}")
        check("output_file" not in r and "time_ns" in r and "final_error" in r,
              f"a lost output keeps its measurements and names no file: {sorted(r)}")


def check_chain(chain, rows, img, counts):
    apps = CHAINS[chain]
    truth = [models.accurate(apps[0], img)[0]]
    truth.append(models.accurate(apps[1], truth[0])[0])
    accurate_final = {}  # (fused?, every stage's shape) -> the accurate chain's output
    for row in (r for r in rows if r["status"] == "ok"):
        stages, label = row["stages"], row["key"]
        check(stages[-1].get("output_file") == row.get("output_file"),
              f"{label}: the last stage's output_file is the row's")
        read = img  # what the next stage read: the input, then the saved output before it
        for k, (app, stage) in enumerate(zip(apps, stages)):
            if "output_file" not in stage:
                check(row["fused"] and k < len(stages) - 1,
                      f"{label}: stage {k + 1} of a chain of separate launches saved nothing")
                continue
            out = np.load(stage["output_file"])
            err = metric(METRIC[app], out, truth[k])
            check(same_error(err, stage["error"]),
                  f"{label}: stage {k + 1} error {stage['error']!r}, recomputed {err!r}")
            counts["errors"] += 1
            if not row["fused"]:
                values, mag, exact = model(app, stage["variant"], read, block_of(stage["wg"]))
                factor = compare.FACTOR[app] * (compare.INTERP_FACTOR if "/li" in stage["variant"]
                                                else 1)
                ok, worst, detail = compare.compare(out, values, mag, exact, "f32", factor)
                check(ok, f"{label}: stage {k + 1} against its model: {detail}")
                counts["models"] += 1
                if counts["bad"] == 0:
                    known_bad(label, k, app, out, truth[k], stage["error"], values, mag, exact,
                              factor)
                    counts["bad"] += 1
            read = out.astype(np.float64)
        check(same_error(row["final_error"], stages[-1]["error"]), f"{label}: final_error")
        if row["exact"]:
            shapes = tuple(s["wg"] for s in stages)  # a fused row's every stage says the launch's
            accurate_final[(row["fused"], shapes)] = np.load(row["output_file"])
    for (fused, shapes), out in accurate_final.items():
        if fused:  # against the chain of separate launches with every stage at the fused shape
            check(compare.same_bits(out, accurate_final.get((False, shapes))),
                  f"{chain}: the accurate fused chain at {shapes} is not the unfused one's")
            counts["fused"] += 1


def known_bad(label, k, app, out, truth, error, values, mag, exact, factor):
    """One element moved by a hundredth of the grid's range must change the recomputed error
    and fail the model, or these checks could not fail."""
    bad = out.copy()
    bad[3, 5] += 0.01 * (float(np.max(truth)) - float(np.min(truth)))
    check(not same_error(metric(METRIC[app], bad, truth), error),
          f"{label}: stage {k + 1}: a moved element gave the reported error (known-bad)")
    check(not same_error(metric(METRIC[app], out, truth), error * (1 + 1e-7)),
          f"{label}: stage {k + 1}: a reported error off by 1e-7 of itself passed (known-bad)")
    ok, _, _ = compare.compare(bad, values, mag, exact, "f32", factor)
    check(not ok, f"{label}: stage {k + 1}: a moved element passed its model (known-bad)")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    counts = {"errors": 0, "models": 0, "fused": 0, "bad": 0}
    with tempfile.TemporaryDirectory() as tmp:
        img = grid(47, 61)
        path = os.path.join(tmp, "shaded.npy")
        np.save(path, img)
        for chain in CHAINS:
            check_chain(chain, run_chain(sys.argv[1], chain, path, tmp), img.astype(np.float64),
                        counts)
        check_lost_outputs(sys.argv[1], path, tmp)
    # 2 pipelines: 12 chains of separate launches (2 stage outputs each) and 3 fused ones (1 each:
    # stage 1's variants at the last stage's one shape; an input scheme at stage 2 does not fuse).
    check(counts["errors"] >= 2 * (12 * 2 + 3), f"stage errors recomputed: {counts['errors']}")
    check(counts["models"] >= 2 * 12 * 2, f"stage outputs held to their models: {counts['models']}")
    check(counts["fused"] >= 2, f"accurate fused outputs compared: {counts['fused']}")
    print(f"pipeline_outputs: {counts['errors']} stage errors recomputed, {counts['models']} "
          f"stage outputs against their models, {counts['fused']} fused outputs bit for bit")
    return finish("pipeline_outputs")


if __name__ == "__main__":
    sys.exit(main())
