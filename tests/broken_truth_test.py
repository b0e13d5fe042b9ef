#!/usr/bin/python3
"""A broken truth is never `ok` (SPEC 15), in every command, with tests/apps/nan_truth.cl: a 3x3
box mean whose value is 0/0 wherever its centre is above 128, so that its own fp64 truth kernel
computes NaN there on a finite input.

- kperf run: every nan_truth row is reference_failed, its reason counting exactly the elements
  above 128 of the input (counted here with NumPy) and naming the truth; gaussian3 beside it is
  measured as without it; exit 4 and one line saying so. On an input with no element above 128
  the same app is ok (the check is about the truth, not the app).
- kperf tune: trained on inputs at most 120 (a sound truth) and tested on inputs reaching 245
  (a broken one), the choice's verdict is `unmeasured: ... reference_failed`, never NO; trained
  on broken inputs, no configuration is chosen and every verdict is unmeasured; exit 4 both times.
- kperf pipeline: nan_truth as stage 1 and as stage 2 (after box5, whose output keeps values
  above 128) gives reference_failed rows naming that stage; exit 4.
- kperf tune --pipeline: no chain is chosen from broken training inputs; exit 4.
- Every document above holds its error metrics as numbers or null, never strings (SPEC 15).
- The check of that visits every error field: sound pipeline and pipeline-tune documents (on
  inputs below 128) have their stages' scalar errors, final_error and the tune's training and
  held-out errors visited, and copies of them with one such field set to the string "nan" (the
  known-bad cases) fail the check naming that field.

usage: broken_truth_test.py KPERF_BINARY SOURCE_DIR
Exit 0 on success, 1 on a failed check, 77 when numpy is unavailable.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

from checks import check, finish, numpy_or_skip

np = numpy_or_skip()

METRICS = ("mre", "me", "mae", "psnr_db", "max_abs", "wrong_fraction", "ssim")
QUICK = ["--warmup", "0", "--reps", "2", "--quiet"]
STAGES = ["--stage", "1:--schemes accurate,rows:2 --wg 8x8", "--stage", "2:--wg 8x8"]


def run(binary, args):
    return subprocess.run([binary] + args, capture_output=True, text=True)


# Scalar error fields (pipeline stages' `error`, `final_error`, the tunes' training and held-out
# errors, a canary's estimate for an input) and lists of errors; a held-out or select block's
# `max` and `mean` beside its `percentile_error`. A canary block's `margin` is words, not a number.
SCALAR_ERRORS = ("error", "final_error", "train_error", "percentile_error", "estimate")
ERROR_LISTS = ("errors", "train_errors", "error_reps")


def error_fields(node, path="$"):
    """(path, value) of every error value in a document: the metrics of error objects (run rows,
    pipeline stages' `errors`), and every scalar error field and list of errors of run, tune,
    pipeline and pipeline-tune documents."""
    if isinstance(node, dict):
        for key, value in node.items():
            at = f"{path}.{key}"
            if key in ("error", "errors") and isinstance(value, dict):
                yield from ((f"{at}.{m}", value[m]) for m in METRICS if m in value)
            elif isinstance(value, list) and key in ERROR_LISTS:
                yield from ((f"{at}[{i}]", v) for i, v in enumerate(value)
                            if not isinstance(v, (dict, list)))
            elif not isinstance(value, (dict, list)) and (
                    key in SCALAR_ERRORS or (key in ("max", "mean") and "percentile_error" in node)):
                yield at, value
            elif key == "error_spread" and isinstance(value, dict):
                yield from ((f"{at}.{m}", v) for m, v in value.items())
            yield from error_fields(value, at)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from error_fields(value, f"{path}[{i}]")


def metric_strings(node):
    """Paths of every error value in a document that is neither a number nor null."""
    return [path for path, value in error_fields(node)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)))]


def load(path, what):
    if not os.path.exists(path):
        check(False, f"{what}: the document was written")
        return {"results": [], "tune": {}}
    doc = json.load(open(path))
    bad = metric_strings(doc)
    check(not bad, f"{what}: every metric a number or null ({bad[:3]})")
    return doc


def field(seed, h, w, top):
    """A smooth, photo-like finite field in [10, top]."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    f = sum(np.sin(rng.uniform(0.05, 0.3) * y + rng.uniform(0.05, 0.3) * x + rng.uniform(0, 6.3))
            for _ in range(3))
    f = (f - f.min()) / (f.max() - f.min())
    return (10 + (top - 10) * f).astype(np.float32)


def check_run(binary, app, tmp):
    image = os.path.join(tmp, "bright.npy")
    grid = field(1, 37, 45, 245)
    np.save(image, grid)
    above = int((grid > 128).sum())
    check(0 < above < grid.size, f"the input has some elements above 128 ({above})")
    out = os.path.join(tmp, "run.json")
    r = run(binary, ["run", "--app-file", app, "--apps", "gaussian3,nan_truth", "--input", image,
                     "--schemes", "accurate,rows:2", "--wg", "8x8", "--out", out] + QUICK)
    check(r.returncode == 4, f"run: exit 4 (got {r.returncode}: {r.stderr.strip()[-300:]})")
    check("reference_failed" in r.stderr, f"run: a line names reference_failed ({r.stderr[-200:]})")
    rows = load(out, "run")["results"]
    mine = [row for row in rows if row["app"] == "nan_truth"]
    check(len(mine) == 2 and all(row["status"] == "reference_failed" for row in mine),
          f"run: every nan_truth row is reference_failed ({[row['status'] for row in mine]})")
    want = f"non-finite in {above} of {grid.size} elements"
    check(all(want in row["reason"] and "fp64-kernel" in row["reason"] for row in mine),
          f"run: the reason counts {above} of {grid.size} and names the truth "
          f"({[row['reason'] for row in mine]})")
    others = [row for row in rows if row["app"] == "gaussian3"]
    check(len(others) == 2 and all(row["status"] == "ok" for row in others),
          "run: gaussian3 beside it is measured")

    dim = os.path.join(tmp, "dim.npy")
    np.save(dim, field(2, 37, 45, 120))
    out = os.path.join(tmp, "run-dim.json")
    r = run(binary, ["run", "--app-file", app, "--input", dim, "--schemes", "accurate,rows:2",
                     "--wg", "8x8", "--out", out] + QUICK)
    check(r.returncode == 0, f"run on an input below 128: exit 0 ({r.stderr.strip()[-300:]})")
    rows = load(out, "run below 128")["results"] if r.returncode == 0 else []
    check(rows and all(row["status"] == "ok" for row in rows),
          "run on an input below 128: the app is measured (its truth is sound there)")


def folder(tmp, name, seeds, top):
    path = os.path.join(tmp, name)
    os.makedirs(path)
    for seed in seeds:
        np.save(os.path.join(path, f"{name}{seed}.npy"), field(seed, 32, 40, top))
    return path


def check_tune(binary, app, tmp):
    dim_train = folder(tmp, "dimtrain", (11, 12), 120)
    bright_test = folder(tmp, "brighttest", (13, 14), 245)
    tune = ["tune", "--app-file", app, "--budget", "0.05", "--wg", "8x8", "--schemes",
            "accurate,rows:2", "--recon", "nn", "--load", "local", "--output", "none",
            "--precision", "f32", "--perforate", "device", "--relax", "none"] + QUICK
    out = os.path.join(tmp, "tune-heldout.json")
    r = run(binary, tune + ["--train", dim_train, "--test", bright_test, "--out", out])
    check(r.returncode == 4, f"tune, broken held-out truth: exit 4 (got {r.returncode}: "
          f"{r.stderr.strip()[-300:]})")
    doc = load(out, "tune, broken held-out truth")
    choice = doc["tune"]["nan_truth"]["choices"][0]
    check(choice["chosen"] is not None, "tune: a choice from sound training truths")
    check(choice["holds"] is None and choice["verdict"].startswith("unmeasured")
          and "reference_failed" in choice["verdict"],
          f"tune: the held-out verdict is unmeasured, naming reference_failed ({choice['verdict']})")
    test_rows = [t for t in doc["results"] if t["stage"] == "test"]
    check(test_rows and all(t["status"] == "reference_failed" for t in test_rows),
          f"tune: every held-out row is reference_failed ({[t['status'] for t in test_rows]})")

    bright_train = folder(tmp, "brighttrain", (15, 16), 245)
    out = os.path.join(tmp, "tune-training.json")
    r = run(binary, tune + ["--train", bright_train, "--test", bright_test, "--out", out])
    check(r.returncode == 4, f"tune, broken training truth: exit 4 (got {r.returncode})")
    doc = load(out, "tune, broken training truth")
    choice = doc["tune"]["nan_truth"]["choices"][0]
    check(choice["chosen"] is None and choice["holds"] is None
          and choice["verdict"].startswith("unmeasured: reference_failed"),
          f"tune: nothing chosen from broken training truths ({choice})")
    check(not any(t["status"] == "ok" for t in doc["results"] if t["app"] == "nan_truth"),
          "tune: no nan_truth row is ok")
    return bright_train, bright_test


def check_the_check(binary, app, tmp, dim_train):
    """The metric check catches a string in every scalar error field of pipeline documents."""
    image, dim_test = os.path.join(tmp, "dim.npy"), folder(tmp, "dimtest", (17, 18), 120)
    docs = {}
    for name, args in (("pipeline", ["pipeline", "--input", image]),
                       ("pipeline-tune", ["tune", "--budget", "0.05", "--train", dim_train,
                                          "--test", dim_test, "--size", "40x32"])):
        out = os.path.join(tmp, f"sound-{name}.json")
        r = run(binary, args[:1] + ["--pipeline", "nan_truth,sobel3", "--app-file", app]
                + args[1:] + STAGES + ["--out", out] + QUICK)
        check(r.returncode == 0, f"sound {name}: exit 0 ({r.stderr.strip()[-300:]})")
        docs[name] = load(out, f"sound {name}")
    rows = [row for row in docs["pipeline"]["results"] if row["status"] == "ok"]
    check(len(rows) == 2, f"sound pipeline: both chains ok ({len(rows)})")
    bad_cases = []
    for i, row in enumerate(rows[:1]):
        bad_cases.append(("pipeline", f"$.results[{i}].final_error",
                          lambda d, i=i: d["results"][i].update(final_error="nan")))
        for k in range(len(row["stages"])):
            bad_cases.append(("pipeline", f"$.results[{i}].stages[{k}].error",
                              lambda d, i=i, k=k: d["results"][i]["stages"][k].update(error="nan")))
    tune = docs["pipeline-tune"].get("tune", {})
    check(tune.get("front") and tune.get("choices") and "test" in tune["choices"][0],
          "sound pipeline-tune: a front and a tested choice")
    if tune.get("front") and tune.get("choices") and "test" in tune["choices"][0]:
        first_test = next(iter(tune["choices"][0]["test"]["errors"]))
        bad_cases += [
            ("pipeline-tune", "$.tune.front[0].train_error",
             lambda d: d["tune"]["front"][0].update(train_error="nan")),
            ("pipeline-tune", "$.tune.front[0].train_errors[0]",
             lambda d: d["tune"]["front"][0]["train_errors"].__setitem__(0, "nan")),
            ("pipeline-tune", "$.tune.choices[0].test.percentile_error",
             lambda d: d["tune"]["choices"][0]["test"].update(percentile_error="nan")),
            ("pipeline-tune", f"$.tune.choices[0].test.errors.{first_test}.error",
             lambda d: d["tune"]["choices"][0]["test"]["errors"][first_test].update(error="nan")),
            ("pipeline-tune", "$.tune.choices[0].test.max",
             lambda d: d["tune"]["choices"][0]["test"].update(max="nan"))]
    for kind, path, spoil in bad_cases:
        bad = copy.deepcopy(docs[kind])
        spoil(bad)
        found = metric_strings(bad)
        check(found == [path], f"known-bad {kind} document: the check names {path} ({found[:3]})")


def check_pipelines(binary, app, box5, tmp, train, test):
    image = os.path.join(tmp, "bright.npy")
    for chain, stage in (("nan_truth,sobel3", 1), ("box5,nan_truth", 2)):
        out = os.path.join(tmp, f"pipeline-{stage}.json")
        r = run(binary, ["pipeline", "--app-file", app, "--app-file", box5, "--pipeline", chain,
                         "--input", image] + STAGES + ["--out", out] + QUICK)
        check(r.returncode == 4, f"pipeline {chain}: exit 4 (got {r.returncode}: "
              f"{r.stderr.strip()[-300:]})")
        rows = load(out, f"pipeline {chain}")["results"]
        check(rows and all(row["status"] == "reference_failed"
                           and f"stage {stage}:" in row["reason"] for row in rows),
              f"pipeline {chain}: every chain reference_failed at stage {stage} "
              f"({[(row['status'], row.get('reason', '')[:60]) for row in rows]})")
    out = os.path.join(tmp, "tune-pipeline.json")
    r = run(binary, ["tune", "--pipeline", "nan_truth,sobel3", "--app-file", app, "--budget",
                     "0.05", "--train", train, "--test", test, "--size", "40x32"] + STAGES
            + ["--out", out] + QUICK)
    check(r.returncode == 4, f"tune --pipeline: exit 4 (got {r.returncode}: "
          f"{r.stderr.strip()[-300:]})")
    doc = load(out, "tune --pipeline")
    choices = doc["tune"]["choices"]
    check(choices and all(c["chosen"] is None and c["holds"] is None
                          and c["verdict"].startswith("unmeasured: reference_failed")
                          for c in choices),
          f"tune --pipeline: nothing chosen, verdicts unmeasured ({[c['verdict'] for c in choices]})")
    check(not any(row["status"] == "ok" for row in doc["results"]), "tune --pipeline: no ok row")


def main():
    binary, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    app = os.path.join(source, "tests", "apps", "nan_truth.cl")
    box5 = os.path.join(source, "examples", "apps", "box5.cl")
    with tempfile.TemporaryDirectory(prefix="kperf-broken-truth-") as tmp:
        check_run(binary, app, tmp)
        train, test = check_tune(binary, app, tmp)
        check_pipelines(binary, app, box5, tmp, train, test)
        check_the_check(binary, app, tmp, os.path.join(tmp, "dimtrain"))
    return finish("broken_truth")


if __name__ == "__main__":
    sys.exit(main())
