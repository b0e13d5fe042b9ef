#!/usr/bin/python3
"""kperf tune --select canary's split-conformal calibration (--canary-calibrate, on by default) on
the OpenCL device the tests use (PoCL in CI), on small generated inputs, with known-bad canaries:
KPERF_TEST_DEVICE_CANARY_SCALE=0.5 halves every device canary estimate (--canary-on device), so
the canary's own bounds miss the true errors:

- on: the app's canary block holds `calibration`, its quantile recomputed from its pairs
  (k = the ceil((n + 1) x confidence)-th smallest score (error - estimate) / raw_margin,
  scale = max(1, k)); the halved estimates need a scale above 1, and the calibrated bounds cover
  at least `confidence` of the training pairs where the raw ones cover fewer; every held-out
  margin is raw_margin x scale, and the walks pick by the calibrated bounds (tune_select_test's
  recomputation of every select block);
- off over the same rows (--resume): no calibration block and no raw_margin, the margins the
  canary's own (on's raw margins), the walks recomputed again; its held-out coverage no better;
- a bad --canary-calibrate value is refused.

usage: tune_calibrate_test.py KPERF_BINARY SOURCE_DIR
Exit 0 on success, 1 on a failed check, 77 when numpy is unavailable.
"""
import json
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import check, finish, numpy_or_skip  # noqa: E402

np = numpy_or_skip()

import tune_select_test as ts  # noqa: E402  (its field(), run() and walk recomputation)

CONFIDENCE = 0.8  # 7 training inputs: ceil((n + 1) x 0.8) <= n from n = 4 pairs on
SELECT = ["--select", "static,canary", "--canary-on", "device", "--canary-fraction", "0.1",
          "--canary-tiles", "32", "--canary-confidence", str(CONFIDENCE)]
BAD = {"KPERF_TEST_DEVICE_CANARY_SCALE": "0.5"}


def coverage(pairs, scale):
    covered = sum(p["error"] <= p["estimate"] + (p["raw_margin"] * scale if p["raw_margin"] else 0)
                  for p in pairs)
    return covered / len(pairs)


def check_calibration(t, train_names):
    cal = t["canary"].get("calibration")
    check(cal is not None, "on: the canary block holds calibration")
    if cal is None:
        return None
    check(cal["inputs"] == train_names, f"calibration inputs {cal['inputs']}")
    pairs = cal["estimates"]
    n = len(pairs)
    check(cal["pairs"] == n > 0, f"calibration pairs {cal['pairs']} against {n} listed")
    if n == 0:
        return None
    scores = sorted((p["error"] - p["estimate"]) / p["raw_margin"] for p in pairs)
    index = math.ceil((n + 1) * CONFIDENCE - 1e-9)
    check(cal["quantile_index"] == index and index <= n, f"quantile index {cal['quantile_index']}")
    k = scores[index - 1]
    check(abs(cal["score_at_quantile"] - k) <= 1e-12 * abs(k), f"k {cal['score_at_quantile']} vs {k}")
    scale = cal["scale"]
    check(scale == max(1.0, k), f"scale {scale} = max(1, {k})")
    check(scale > 1, f"halved estimates need wider margins: scale {scale}")
    raw, calibrated = coverage(pairs, 1), coverage(pairs, scale)
    check(calibrated >= CONFIDENCE and raw < calibrated,
          f"training coverage: calibrated {calibrated}, raw {raw}")
    check(cal["training_coverage"] == calibrated and cal["training_coverage_raw"] == raw,
          f"the block's coverage {cal['training_coverage']}, {cal['training_coverage_raw']}")
    for e in t["canary"]["estimates"]:
        check(abs(e["margin"] - e["raw_margin"] * scale) <= 1e-12 * e["margin"],
              f"{e['rung']} on {e['input']}: margin {e['margin']} = {e['raw_margin']} x {scale}")
    for c in t["choices"]:
        for name, pi in c["select"]["per_input"].items():
            if pi["rung"] != c["select"]["ladder"][-1]:
                check(abs(pi["margin"] - pi["raw_margin"] * scale) <= 1e-12 * pi["margin"],
                      f"{c['budget']} {name}: the walk's margin is calibrated")
    return scale


def check_off(off, on):
    t, t_on = off["tune"]["bilateral"], on["tune"]["bilateral"]
    check(off["context"]["tune"]["select"]["canary"]["calibrate"] is False, "off: the context")
    check("calibration" not in t["canary"], "off: no calibration block")
    raw = {(e["rung"], e["input"]): e.get("raw_margin") for e in t_on["canary"]["estimates"]}
    for e in t["canary"]["estimates"]:
        check("raw_margin" not in e and e["margin"] == raw.get((e["rung"], e["input"])),
              f"off: {e['rung']} on {e['input']}: the canary's own margin {e['margin']}")
    for c in t["choices"]:
        check(all("raw_margin" not in pi for pi in c["select"]["per_input"].values()),
              "off: no raw_margin per input")
    cov_on, cov_off = (x["canary"]["tracking"]["coverage"] for x in (t_on, t))
    check(cov_off <= cov_on and t_on["canary"]["tracking"].get("coverage_raw") == cov_off,
          f"held-out coverage: off {cov_off}, on {cov_on}")


def main():
    binary = sys.argv[1]
    rng = np.random.default_rng(77)
    with tempfile.TemporaryDirectory() as tmp:
        train, test = os.path.join(tmp, "train"), os.path.join(tmp, "test")
        os.makedirs(train)
        os.makedirs(test)
        names = [f"train{i}" for i in range(7)]
        for name in names:
            np.save(os.path.join(train, name + ".npy"), ts.field(rng, 64, 64))
        np.save(os.path.join(test, "smooth.npy"), ts.field(rng, 64, 64))
        np.save(os.path.join(test, "hard.npy"), ts.field(rng, 64, 64, noisy_quadrant=True))
        out = os.path.join(tmp, "on.json")
        args = ["tune", "--apps", "bilateral", "--budget", ",".join(map(str, ts.BUDGETS)),
                "--train", train, "--test", test] + ts.SPACE + SELECT
        # As in tune_select_test: with nothing on a ladder but the accurate kernel there is
        # nothing to calibrate, and the tune is timed again.
        def tune_calibrated():
            r = ts.run(binary, args + ["--out", out], BAD)
            check(r.returncode == 0, f"tune --select canary, calibrated: {r.stderr[-500:]}")
            if r.returncode != 0:
                return None
            doc = json.load(open(out))
            ts.check_selection(doc)  # every attempt's walks and ladders, a discarded one's too
            return doc

        def ladders(doc):
            return [c["select"]["ladder"] for c in doc["tune"]["bilateral"]["choices"]]

        on = ts.tune_until(tune_calibrated, lambda d: any(len(x) >= 2 for x in ladders(d)),
                           lambda d: f"every ladder holds the accurate kernel alone ({ladders(d)})")
        if on is None:
            return finish("tune_calibrate")
        check(on["tune_schema_version"] == 3, "tune_schema_version 3")
        check(any(len(c["select"]["ladder"]) >= 2 for c in on["tune"]["bilateral"]["choices"]),
              "in three tunes a ladder held an approximation to calibrate")
        check(on["context"]["tune"]["select"]["canary"]["calibrate"] is True, "on: the context")
        check_calibration(on["tune"]["bilateral"], sorted(names))
        off_path = os.path.join(tmp, "off.json")
        with open(off_path, "w") as f:
            json.dump(on, f)
        r = ts.run(binary, args + ["--out", off_path, "--resume", "--canary-calibrate", "off"], BAD)
        check(r.returncode == 0, f"--canary-calibrate off: {r.stderr[-500:]}")
        if r.returncode == 0:
            off = json.load(open(off_path))
            ts.check_selection(off)
            check_off(off, on)
        r = ts.run(binary, args + ["--out", os.path.join(tmp, "bad.json"), "--canary-calibrate",
                                   "maybe"])
        check(r.returncode == 2 and "--canary-calibrate maybe: expected on or off" in r.stderr,
              f"a bad --canary-calibrate: exit {r.returncode}, {r.stderr!r}")
    return finish("tune_calibrate")


if __name__ == "__main__":
    sys.exit(main())
