#!/usr/bin/python3
"""A faulting kernel loses only itself (SPEC 14), on the tests' OpenCL device (PoCL in CI), through
the built binary. Faults come from KPERF_FAULT (crash:KEY raises SIGSEGV at the first timed launch
of the configurations whose key contains KEY, as PoCL's driver dies on a wild read; lose-queue:KEY
makes that launch fail with CL_INVALID_COMMAND_QUEUE and the device stop answering, as NVIDIA's
does) and from a real kernel that reads 1.6 GB before its window (tests/apps/wild_read.cl).
- kperf run: the faulting configuration is a device_fault row with the driver's words; every
  other row equals the same run's without that configuration (status and every error metric);
  the document is complete and valid; exit 4, the last line counting the faults. Both kinds of
  fault, and the same without a supervisor (KPERF_SUPERVISE=0: the run ends there, complete
  false, exit 4).
- a compiler crash (KPERF_FAULT=crash-build:OPTIONS raises SIGSEGV where a program with those
  build options is compiled) is its configuration's device_fault row naming the build, the other
  rows as without it, exit 4: built ahead of the configurations in the measuring process (which
  the supervisor then restarts building each program in its configuration) or in a compile worker.
- three faults in a row stop the run with one line, every row measured before them written.
- the real crashing kernel beside gaussian3: gaussian3's rows equal a run of gaussian3 alone.
- kperf tune drops a faulting candidate as it drops a pruned one (recorded with its stage and
  reason), chooses among the rest and exits 4; a verdict that could not be measured prints
  "unmeasured" with its reason, never NO, and exits 4.
- kperf check reports the real crashing kernel as failed checks naming device_fault, exit 1.
- kperf pipeline: a faulting chain (fused too) is a device_fault row with the driver's words and
  every other chain's row equals the same run's without the fault, exit 4 (both kinds; without a
  supervisor the chains after the fault say they were not measured); a real crashing user-app
  stage makes its chains device_fault rows, whose truth kernel faulted first.
- kperf tune --pipeline drops a chain that faults in the screen, chooses among the rest and exits
  4.

usage: fault_test.py KPERF_BINARY SOURCE_DIR
Exit 0 on success, 1 on a failed check.
"""
import json
import os
import subprocess
import sys
import tempfile

from checks import check, finish

FAULTED = "rows:2/nn/wg:16x4"  # the configuration the injected faults hit


def run(binary, args, env_extra=None):
    env = dict(os.environ)
    env.pop("KPERF_FAULT", None)
    env.update(env_extra or {})
    return subprocess.run([binary] + args, capture_output=True, text=True, env=env, timeout=900)


def rows_by_key(path):
    doc = json.load(open(path))
    return doc, {r["key"]: r for r in doc["results"]}


def same_measurement(a, b):
    """Two rows of one configuration measured alike: status and every error metric."""
    return a["status"] == b["status"] and json.dumps(a.get("error"), sort_keys=True) == \
        json.dumps(b.get("error"), sort_keys=True)


def check_run_faults(binary, tmp):
    base = ["run", "--apps", "gaussian3", "--input", "synthetic:noise", "--size", "48x40",
            "--warmup", "1", "--reps", "3", "--wg", "16x4,8x8", "--quiet"]
    without = os.path.join(tmp, "without.json")
    r = run(binary, base + ["--schemes", "accurate,cols:2", "--out", without])
    check(r.returncode == 0, f"a run without the faulting configuration: {r.stderr}")
    # rows:2 at 8x8 stays in both runs: the fault hits its 16x4 shape alone.
    r = run(binary, base + ["--schemes", "accurate,cols:2,rows:2", "--out",
                            os.path.join(tmp, "all.json")])
    _, every = rows_by_key(os.path.join(tmp, "all.json"))
    _, reference = rows_by_key(without)
    reference.update({k: v for k, v in every.items() if "rows:2/nn/wg:8x8" in k})
    for kind in ("crash", "lose-queue"):
        out = os.path.join(tmp, f"{kind}.json")
        r = run(binary, base + ["--schemes", "accurate,rows:2,cols:2", "--out", out],
                {"KPERF_FAULT": f"{kind}:{FAULTED}"})
        check(r.returncode == 4, f"{kind}: exit 4 after a fault, got {r.returncode}: {r.stderr}")
        last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
        check("1 configuration faulted the device" in last, f"{kind}: the last line: {last!r}")
        doc, rows = rows_by_key(out)
        check(doc["context"]["complete"] is True, f"{kind}: the document is complete")
        faulted = [k for k, row in rows.items() if row["status"] == "device_fault"]
        check(len(faulted) == 1 and FAULTED in faulted[0], f"{kind}: one device_fault row: {faulted}")
        if faulted:
            reason = rows[faulted[0]]["reason"]
            words = "Segmentation fault" if kind == "crash" else "CL_INVALID_COMMAND_QUEUE"
            check(words in reason, f"{kind}: the driver's words in the reason: {reason}")
        others = {k: v for k, v in rows.items() if k not in faulted}
        check(set(others) == set(reference), f"{kind}: the other rows are the run's without it")
        for k, row in others.items():
            if k in reference:
                check(same_measurement(row, reference[k]), f"{kind}: {k} measured differently")
        check(all(r["status"] == "ok" for r in others.values()), f"{kind}: every other row ok")

    # Without a supervisor the run ends at the fault, its rows kept.
    out = os.path.join(tmp, "alone.json")
    r = run(binary, base + ["--schemes", "accurate,rows:2,cols:2", "--out", out],
            {"KPERF_FAULT": f"lose-queue:{FAULTED}", "KPERF_SUPERVISE": "0"})
    check(r.returncode == 4, f"without a supervisor: exit 4, got {r.returncode}")
    doc, rows = rows_by_key(out)
    check(doc["context"]["complete"] is False and
          doc["context"]["error"]["kind"] == "device_fault", "without a supervisor: complete false")
    check(any(row["status"] == "device_fault" for row in rows.values()),
          "without a supervisor: the fault is a row")


def check_compiler_crash(binary, tmp):
    """A compiler that crashes on one configuration's program (KPERF_FAULT=crash-build) loses that
    configuration alone: a device_fault row naming the build, whether the program was first built
    ahead of the configurations in the measuring process or in a compile worker."""
    base = ["run", "--apps", "gaussian3", "--input", "synthetic:noise", "--size", "48x40",
            "--warmup", "1", "--reps", "3", "--wg", "16x4,8x8", "--quiet",
            "--schemes", "accurate,stencil,rows:2,cols:2"]
    clean = os.path.join(tmp, "build-clean.json")
    r = run(binary, base + ["--out", clean])
    check(r.returncode == 0, f"a run without a compiler crash: {r.stderr}")
    _, reference = rows_by_key(clean)
    for where, extra in (("in the measuring process", {}),
                         ("in a compile worker", {"KPERF_COMPILE_WORKERS": "2", "TMPDIR": tmp})):
        out = os.path.join(tmp, "build-crash.json")
        env = dict(extra, KPERF_FAULT="crash-build:" + CRASH_OPTIONS)
        r = run(binary, base + ["--out", out], env)
        check(r.returncode == 4, f"compiler crash {where}: exit 4, got {r.returncode}: {r.stderr}")
        last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
        check("1 configuration faulted the device" in last, f"compiler crash {where}: {last!r}")
        # Built ahead in the measuring process, the crash restarts it building each program in
        # its configuration; a compile worker's crash leaves the program to its configuration.
        restarted = "while compiling programs ahead of their configurations" in r.stderr
        check(restarted == (not extra), f"compiler crash {where}: the prebuild's crash: {r.stderr}")
        doc, rows = rows_by_key(out)
        check(doc["context"]["complete"] is True, f"compiler crash {where}: complete")
        faulted = [k for k, row in rows.items() if row["status"] == "device_fault"]
        check(len(faulted) == 1 and FAULTED in faulted[0],
              f"compiler crash {where}: one device_fault row: {faulted}")
        for k in faulted:
            check("Segmentation fault" in rows[k]["reason"] and
                  "build and set-up" in rows[k]["reason"],
                  f"compiler crash {where}: the signal and the build phase: {rows[k]['reason']}")
        check(set(rows) == set(reference), f"compiler crash {where}: every configuration's row")
        for k, row in rows.items():
            if k not in faulted and k in reference:
                check(same_measurement(row, reference[k]), f"compiler crash {where}: {k} differs")


# Build options that the FAULTED configuration's program alone has.
CRASH_OPTIONS = "scheme_rows.cl -DSKIP=2 -DRECON_LI=0 -DWG_X=16 -DWG_Y=4"


def check_three_in_a_row(binary, tmp):
    out = os.path.join(tmp, "three.json")
    r = run(binary, ["run", "--apps", "gaussian3", "--input", "synthetic:noise", "--size", "48x40",
                     "--warmup", "1", "--reps", "3", "--wg", "16x4,8x8", "--quiet",
                     "--schemes", "accurate,rows:2,cols:2", "--out", out],
            {"KPERF_FAULT": "crash:/rows:2/"})  # both rows:2 shapes, then cols:2 is not hit
    check(r.returncode == 4, f"two faults: exit 4 ({r.returncode})")
    r = run(binary, ["run", "--apps", "gaussian3", "--input", "synthetic:noise", "--size", "48x40",
                     "--warmup", "1", "--reps", "3", "--wg", "16x4,8x8,32x2", "--quiet",
                     "--schemes", "accurate,rows:2,cols:2", "--out", out],
            {"KPERF_FAULT": "crash:/rows:2/"})
    check(r.returncode == 4, f"three faults in a row: exit 4, got {r.returncode}")
    lines = r.stderr.strip().splitlines()
    check(lines and "3 configurations in a row faulted the device" in lines[-1],
          f"three faults in a row: one line says so: {lines[-1:]}")
    doc, rows = rows_by_key(out)
    check(doc["context"]["complete"] is False, "three faults in a row: complete false")
    statuses = [row["status"] for row in doc["results"]]
    check(statuses == ["ok"] * 3 + ["device_fault"] * 3,
          f"three faults in a row: the accurate rows, then the three faults: {statuses}")


def check_real_crash(binary, root, tmp):
    app = os.path.join(root, "tests", "apps", "wild_read.cl")
    base = ["--input", "synthetic:noise", "--size", "48x40", "--warmup", "1", "--reps", "3",
            "--wg", "16x4", "--schemes", "accurate,rows:2", "--quiet"]
    alone = os.path.join(tmp, "gaussian3.json")
    r = run(binary, ["run", "--apps", "gaussian3", "--out", alone] + base)
    check(r.returncode == 0, f"gaussian3 alone: {r.stderr}")
    out = os.path.join(tmp, "wild.json")
    r = run(binary, ["run", "--app-file", app, "--apps", "wild_read,gaussian3", "--out", out] + base)
    check(r.returncode == 4, f"a crashing user kernel: exit 4, got {r.returncode}: {r.stderr}")
    doc, rows = rows_by_key(out)
    _, reference = rows_by_key(alone)
    wild = [row for row in doc["results"] if row["app"] == "wild_read"]
    check(any(row["status"] == "device_fault" and "signal 11" in row["reason"] for row in wild),
          f"wild_read: a device_fault row: {[(r['key'], r['status']) for r in wild]}")
    check(all(row["status"] != "ok" for row in wild), "wild_read: no row reported ok")
    for k, row in reference.items():
        check(k in rows and same_measurement(rows[k], row), f"gaussian3 beside the crash: {k}")

    r = run(binary, ["check", "--app-file", app])
    check(r.returncode == 1, f"kperf check on a crashing kernel: exit 1, got {r.returncode}")
    failed = [line for line in r.stdout.splitlines() if " FAIL " in line and "device_fault" in line]
    check(failed, "kperf check names the device fault in a failed check")


def check_tune(binary, root, tmp):
    sys.path.insert(0, os.path.dirname(__file__))
    import numpy as np
    rng = np.random.default_rng(5)
    dirs = {}
    for split, count in (("train", 2), ("test", 2)):
        d = os.path.join(tmp, split)
        os.makedirs(d)
        for i in range(count):
            np.save(os.path.join(d, f"{split}{i}.npy"),
                    (255 * rng.random((40, 48))).astype(np.float32))
        dirs[split] = d
    args = ["tune", "--apps", "gaussian3", "--budget", "0.05,0.5", "--train", dirs["train"],
            "--test", dirs["test"], "--wg", "8x8,16x4", "--schemes", "accurate,rows:2,cols:2",
            "--recon", "nn", "--load", "local", "--output", "none", "--precision", "f32",
            "--perforate", "device", "--relax", "none", "--warmup", "1", "--reps", "3",
            "--max-combinations", "4", "--quiet"]
    out = os.path.join(tmp, "tune.json")
    r = run(binary, args + ["--out", out], {"KPERF_FAULT": "crash:/rows:2/nn/wg:8x8/train0"})
    check(r.returncode == 4, f"tune with a fault: exit 4, got {r.returncode}: {r.stderr[-500:]}")
    doc = json.load(open(out))
    check(doc["context"]["complete"] is True and doc["tune"] is not None, "tune: complete")
    t = doc["tune"]["gaussian3"]
    dropped = [p for p in t["pruned"] if p["variant"].startswith("rows:2/nn")]
    check(dropped and dropped[0]["reason"].startswith("device_fault") and dropped[0]["at"] == "probe",
          f"tune: the faulting candidate dropped at its stage: {dropped}")
    check(not any(p["variant"].startswith("rows:2/nn") for p in t["points"]),
          "tune: the faulting candidate is no point")
    check(all(c["chosen"] is not None and c["holds"] is not None for c in t["choices"]),
          "tune: every budget chose and measured a verdict")

    check_tune_held_out(binary, args, out, tmp)

    # Every held-out output fails to save: no verdict can be measured.
    out = os.path.join(tmp, "tune-unmeasured.json")
    r = run(binary, args + ["--out", out], {"KPERF_FAULT": "save"})
    check(r.returncode == 4, f"tune with unmeasured verdicts: exit 4, got {r.returncode}")
    check("unmeasured" in r.stdout and " NO" not in r.stdout,
          f"tune: unmeasured verdicts print as such: {r.stdout}")
    doc = json.load(open(out))
    for c in doc["tune"]["gaussian3"]["choices"]:
        check(c["holds"] is None and c["verdict"].startswith("unmeasured: host_error"),
              f"tune: an unmeasured verdict says why: {c['verdict']}")


def check_tune_held_out(binary, args, faulted_out, tmp):
    """A choice that faults on a held-out input gives way to the next fastest within its budget,
    tested in turn. The tune (faulted_out, complete) is cut back to before its test stage and
    resumed, so that it makes the same first choice; KPERF_FAULT then crashes that choice's
    configuration in the test stage on the first held-out input alone."""
    doc = json.load(open(faulted_out))
    choice = next(c for c in doc["tune"]["gaussian3"]["choices"] if c["budget"] == 0.5)
    first = choice["chosen"]
    # The key up to its launch shape: "gaussian3/rows:2/nn/.../wg:8x8/".
    text = first["key"][:first["key"].index("/wg:")] + "/wg:" + first["wg"] + "/"
    cut = dict(doc, tune=None)
    cut["results"] = [r for r in doc["results"] if r["stage"] != "test"]
    cut["context"] = dict(doc["context"], complete=False)
    out = os.path.join(tmp, "tune-held-out.json")
    json.dump(cut, open(out, "w"))
    resumed = args + ["--out", out, "--resume"]
    r = run(binary, resumed, {"KPERF_FAULT": f"crash:{text};stage=test;input=test0"})
    check(r.returncode == 4, f"held-out fault: exit 4, got {r.returncode}: {r.stderr[-500:]}")
    doc = json.load(open(out))
    t = doc["tune"]["gaussian3"]
    pruned = [p for p in t["pruned"] if p["variant"] == first["variant"]]
    check(len(pruned) == 1 and pruned[0]["at"] == "test" and
          pruned[0]["reason"].startswith(f"device_fault at {first['wg']} on test0"),
          f"held-out fault: the first choice pruned at the test stage, saying so: {pruned}")
    test_rows = [r for r in doc["results"] if r["stage"] == "test"]
    faulted = [r for r in test_rows if r["status"] == "device_fault"]
    check(len(faulted) == 1 and faulted[0]["key"].startswith(text) and
          faulted[0]["input"]["name"] == "test0",
          f"held-out fault: one device_fault row, the first choice on test0: {faulted}")
    again = next(c for c in t["choices"] if c["budget"] == 0.5)
    chosen = again["chosen"]
    check(chosen is not None and chosen["variant"] != first["variant"] and
          chosen["train_error"] <= 0.5 and again["holds"] is not None,
          f"held-out fault: the budget chose again within itself and measured it: {again}")
    if chosen:
        mine = {r["input"]["name"] for r in test_rows if r["status"] == "ok" and
                r["variant"] == chosen["variant"]}
        check(mine == {"test0", "test1"}, f"held-out fault: the new choice tested on both: {mine}")
        points = {p["variant"] for p in t["points"]}
        check(chosen["variant"] in points and first["variant"] not in points,
              "held-out fault: the new choice is a point, the faulting one is not")


def check_pipeline_held_out(binary, d, stage, tmp):
    """kperf tune --pipeline: a chosen chain that faults on a held-out input leaves its budget's
    verdict unmeasured (no other chain is tried), exit 4."""
    out = os.path.join(tmp, "pipeline-held-out.json")
    r = run(binary, ["tune", "--pipeline", "blur-edges", "--budget", "0.5", "--train", d["train"],
                     "--test", d["test"], "--size", "48x40", "--warmup", "1", "--reps", "3",
                     "--quiet", "--out", out] + stage,
            {"KPERF_FAULT": "crash:blur-edges/;stage=test;input=test0"})
    check(r.returncode == 4, f"tune --pipeline held-out fault: exit 4, got {r.returncode}: "
          f"{r.stderr[-500:]}")
    doc = json.load(open(out))
    c = doc["tune"]["choices"][0]
    check(c["chosen"] is not None and c["holds"] is None and c["verdict"].startswith(
        "unmeasured: device_fault") and c["verdict"].endswith(" on test0"),
        f"tune --pipeline held-out fault: an unmeasured verdict: {c.get('verdict')}")
    test_rows = [row for row in doc["results"] if row["stage"] == "test"]
    check(len(test_rows) == 1 and test_rows[0]["status"] == "device_fault" and
          test_rows[0]["key"] == c["chosen"]["key"].rsplit("/", 2)[0] + "/test0/48x40",
          f"tune --pipeline held-out fault: the chosen chain's one test row faulted: "
          f"{[(row['key'], row['status']) for row in test_rows]}")
    check("unmeasured" in r.stdout, f"tune --pipeline held-out fault prints unmeasured: {r.stdout}")


PIPELINE_FAULTED = "gaussian5:rows:2/nn@16x4 >"  # the chain the injected faults hit


def check_cl_error(binary, tmp):
    """An OpenCL error after which the device still answers (KPERF_FAULT=cl-error:KEY: the launch
    raises CL_OUT_OF_RESOURCES, the device stays healthy) is no fault: the real probe runs, the
    row is run_failed with the error's name, the run goes on in the same process, exit 0."""
    base = ["run", "--apps", "gaussian3", "--input", "synthetic:noise", "--size", "48x40",
            "--warmup", "1", "--reps", "3", "--wg", "16x4,8x8", "--quiet",
            "--schemes", "accurate,rows:2,cols:2"]
    clean, out = os.path.join(tmp, "cl-clean.json"), os.path.join(tmp, "cl-error.json")
    r = run(binary, base + ["--out", clean])
    check(r.returncode == 0, f"a run without an OpenCL error: {r.stderr}")
    r = run(binary, base + ["--out", out], {"KPERF_FAULT": f"cl-error:{FAULTED}"})
    check(r.returncode == 0, f"cl-error: exit 0 (no fault), got {r.returncode}: {r.stderr}")
    check("device fault" not in r.stderr and "faulted" not in r.stderr,
          f"cl-error: no fault reported: {r.stderr}")
    _, reference = rows_by_key(clean)
    _, rows = rows_by_key(out)
    failed = [k for k, row in rows.items() if row["status"] != "ok"]
    check(len(failed) == 1 and FAULTED in failed[0] and rows[failed[0]]["status"] == "run_failed"
          and "CL_OUT_OF_RESOURCES" in rows[failed[0]].get("reason", ""),
          f"cl-error: one run_failed row naming the error: {[(k, rows[k]) for k in failed]}")
    check(set(rows) == set(reference), "cl-error: every configuration's row")
    for k, row in rows.items():
        if k not in failed:
            check(same_measurement(row, reference[k]), f"cl-error: {k} measured differently")

    # The same in a chain: its row run_failed, the others measured, exit 0.
    pipe = ["pipeline", "--pipeline", "blur-edges", "--input", "synthetic:noise", "--size",
            "48x40", "--warmup", "1", "--reps", "3", "--quiet",
            "--stage", "1:--schemes accurate,rows:2 --wg 16x4,8x8"]
    clean, out = os.path.join(tmp, "cl-pipe-clean.json"), os.path.join(tmp, "cl-pipe.json")
    r = run(binary, pipe + ["--out", clean])
    check(r.returncode == 0, f"pipeline without an OpenCL error: {r.stderr}")
    r = run(binary, pipe + ["--out", out], {"KPERF_FAULT": f"cl-error:{PIPELINE_FAULTED}"})
    check(r.returncode == 0, f"pipeline cl-error: exit 0, got {r.returncode}: {r.stderr}")
    _, reference = rows_by_key(clean)
    _, rows = rows_by_key(out)
    failed = [k for k, row in rows.items() if row["status"] != "ok"]
    check(len(failed) == 1 and PIPELINE_FAULTED in failed[0] and
          rows[failed[0]]["status"] == "run_failed" and
          "CL_OUT_OF_RESOURCES" in rows[failed[0]].get("reason", ""),
          f"pipeline cl-error: one run_failed chain: {[(k, rows[k].get('reason')) for k in failed]}")
    for k, row in rows.items():
        if k not in failed:
            check(k in reference and row["final_error"] == reference[k]["final_error"],
                  f"pipeline cl-error: {k} measured as without the error")


def check_nonfinite_outputs(binary, root, tmp):
    """Outputs non-finite where the truth is finite, on a finite input, are run_failed with their
    count (tests/apps/overflow.cl: infinite in float above 128, finite in its fp64 truth); on an
    input with a NaN the rule does not fire and the error counts them."""
    import numpy as np
    app = os.path.join(root, "tests", "apps", "overflow.cl")
    grid = (255 * np.random.default_rng(11).random((40, 48))).astype(np.float32)
    finite = os.path.join(tmp, "finite.npy")
    np.save(finite, grid)
    want = int((grid > 128).sum())
    base = ["run", "--app-file", app, "--apps", "overflow", "--schemes", "accurate,rows:2",
            "--wg", "8x8", "--warmup", "1", "--reps", "2", "--quiet"]
    out = os.path.join(tmp, "overflow.json")
    r = run(binary, base + ["--input", finite, "--out", out])
    check(r.returncode == 0, f"overflow: exit 0, got {r.returncode}: {r.stderr}")
    doc, rows = rows_by_key(out)
    accurate = [row for row in doc["results"] if row["scheme"] == "accurate"]
    check(accurate and accurate[0]["reference"] == "fp64-kernel",
          f"overflow: its truth is the fp64 kernel: {[row.get('reference') for row in accurate]}")
    for row in doc["results"]:
        check(row["status"] == "run_failed", f"overflow {row['key']}: run_failed ({row['status']})")
    if accurate:
        reason = accurate[0].get("reason", "")
        check(reason.startswith(f"{want} of {40 * 48} outputs are non-finite where the accurate"),
              f"overflow: the reason counts the {want} elements above 128: {reason}")

    nan_grid = grid.copy()
    nan_grid[5, 7] = np.nan
    with_nan = os.path.join(tmp, "with-nan.npy")
    np.save(with_nan, nan_grid)
    out = os.path.join(tmp, "overflow-nan.json")
    r = run(binary, base + ["--input", with_nan, "--out", out])
    check(r.returncode == 0, f"overflow on a NaN input: exit 0, got {r.returncode}: {r.stderr}")
    doc, _ = rows_by_key(out)
    for row in doc["results"]:
        check(row["status"] == "ok" and row["error"]["nonfinite"] >= want,
              f"overflow on a NaN input {row['key']}: ok, the non-finite outputs counted "
              f"({row['status']}, {row.get('error', {}).get('nonfinite')})")

    # A chain: the stage whose outputs are non-finite names itself.
    out = os.path.join(tmp, "overflow-chain.json")
    r = run(binary, ["pipeline", "--app-file", app, "--pipeline", "overflow,sobel3", "--input",
                     finite, "--size", "48x40", "--warmup", "1", "--reps", "2", "--quiet",
                     "--out", out])
    check(r.returncode == 0, f"overflow chain: exit 0, got {r.returncode}: {r.stderr}")
    doc = json.load(open(out))
    check(doc["results"] and all(
        row["status"] == "run_failed" and
        row["reason"].startswith(f"stage 1 (overflow): {want} of {40 * 48} outputs are non-finite "
                                 "where the accurate output is finite")
        for row in doc["results"]), f"overflow chain: {[row.get('reason') for row in doc['results']]}")




def check_pipeline_faults(binary, root, tmp):
    base = ["pipeline", "--pipeline", "blur-edges", "--input", "synthetic:noise", "--size",
            "48x40", "--warmup", "1", "--reps", "3", "--quiet"]
    stage = ["--stage", "1:--schemes accurate,rows:2,cols:2 --wg 16x4,8x8"]
    clean = os.path.join(tmp, "pipeline-clean.json")
    r = run(binary, base + stage + ["--out", clean])
    check(r.returncode == 0, f"pipeline without a fault: {r.stderr}")
    _, reference = rows_by_key(clean)
    for kind in ("crash", "lose-queue"):
        out = os.path.join(tmp, f"pipeline-{kind}.json")
        r = run(binary, base + stage + ["--out", out], {"KPERF_FAULT": f"{kind}:{PIPELINE_FAULTED}"})
        check(r.returncode == 4, f"pipeline {kind}: exit 4, got {r.returncode}: {r.stderr}")
        _, rows = rows_by_key(out)
        faulted = [k for k, row in rows.items() if row["status"] == "device_fault"]
        check(len(faulted) == 1 and PIPELINE_FAULTED in faulted[0],
              f"pipeline {kind}: one device_fault row: {faulted}")
        words = "Segmentation fault" if kind == "crash" else "CL_INVALID_COMMAND_QUEUE"
        check(all(words in rows[k]["reason"] for k in faulted),
              f"pipeline {kind}: the driver's words: {[rows[k]['reason'] for k in faulted]}")
        check(set(rows) == set(reference), f"pipeline {kind}: every chain has its row")
        for k, row in rows.items():
            if k not in faulted:
                check(row["status"] == "ok" and row["final_error"] == reference[k]["final_error"],
                      f"pipeline {kind}: {k} measured as without the fault")

    # A fused chain that crashes the device: its row device_fault, every other as without it.
    fused = base + ["--stage", "1:--schemes accurate,rows:2", "--stage", "2:--wg 16x4,8x8",
                    "--fuse", "all"]
    fused_key = "blur-edges/fused/gaussian5:rows:2/nn@8x8 >"
    clean = os.path.join(tmp, "pipeline-fused-clean.json")
    r = run(binary, fused + ["--out", clean])
    check(r.returncode == 0, f"fused pipeline without a fault: {r.stderr}")
    _, reference = rows_by_key(clean)
    out = os.path.join(tmp, "pipeline-fused-crash.json")
    r = run(binary, fused + ["--out", out], {"KPERF_FAULT": f"crash:{fused_key}"})
    check(r.returncode == 4, f"fused pipeline crash: exit 4, got {r.returncode}: {r.stderr}")
    _, rows = rows_by_key(out)
    faulted = [k for k, row in rows.items() if row["status"] == "device_fault"]
    check(len(faulted) == 1 and faulted[0].startswith(fused_key) and
          "Segmentation fault" in rows[faulted[0]]["reason"],
          f"fused pipeline crash: one device_fault row: {[(k, rows[k]['reason']) for k in faulted]}")
    check(set(rows) == set(reference), "fused pipeline crash: every chain has its row")
    for k, row in rows.items():
        if k not in faulted:
            check(row["status"] == "ok" and row["final_error"] == reference[k]["final_error"],
                  f"fused pipeline crash: {k} measured as without the fault")

    out = os.path.join(tmp, "pipeline-alone.json")
    r = run(binary, base + stage + ["--out", out],
            {"KPERF_FAULT": f"lose-queue:{PIPELINE_FAULTED}", "KPERF_SUPERVISE": "0"})
    check(r.returncode == 4, f"pipeline without a supervisor: exit 4, got {r.returncode}")
    doc = json.load(open(out))
    statuses = [row["status"] for row in doc["results"]]
    after = statuses[statuses.index("device_fault"):] if "device_fault" in statuses else []
    check(statuses[:2] == ["ok", "ok"] and len(after) == 4 and set(after) == {"device_fault"},
          f"pipeline without a supervisor: the accurate chains, then device_fault: {statuses}")
    check(all("not measured" in row["reason"] for row in doc["results"][3:]),
          "pipeline without a supervisor: the chains after the fault say they were not measured")

    app = os.path.join(root, "tests", "apps", "wild_read.cl")
    out = os.path.join(tmp, "pipeline-wild.json")
    r = run(binary, ["pipeline", "--app-file", app, "--pipeline", "wild_read,sobel3", "--input",
                     "synthetic:noise", "--size", "48x40", "--warmup", "1", "--reps", "3",
                     "--quiet", "--out", out])
    check(r.returncode == 4, f"pipeline with a crashing user stage: exit 4, got {r.returncode}")
    doc = json.load(open(out))
    check(doc["results"] and all(row["status"] == "device_fault" and "signal 11" in row["reason"]
                                 for row in doc["results"]),
          f"pipeline with a crashing user stage: {[r.get('reason') for r in doc['results']]}")

    import numpy as np
    rng = np.random.default_rng(7)
    d = {}
    for split in ("train", "test"):
        d[split] = os.path.join(tmp, f"pipeline-{split}")
        os.makedirs(d[split])
        for i in range(2):
            np.save(os.path.join(d[split], f"{split}{i}.npy"),
                    (255 * rng.random((40, 48))).astype(np.float32))
    out = os.path.join(tmp, "pipeline-tune.json")
    r = run(binary, ["tune", "--pipeline", "blur-edges", "--budget", "0.5", "--train", d["train"],
                     "--test", d["test"], "--size", "48x40", "--warmup", "1", "--reps", "3",
                     "--quiet", "--out", out] + stage,
            {"KPERF_FAULT": f"crash:{PIPELINE_FAULTED}"})
    check(r.returncode == 4, f"tune --pipeline with a fault: exit 4, got {r.returncode}: {r.stderr}")
    doc = json.load(open(out))
    faulted = [row for row in doc["results"] if row["status"] == "device_fault"]
    check(len(faulted) == 1 and faulted[0]["stage"] == "screen",
          f"tune --pipeline: the faulting chain's screen row: {[r['key'] for r in faulted]}")
    check(not any(PIPELINE_FAULTED in m["key"] for m in doc["tune"]["measured"]),
          "tune --pipeline: the faulting chain is not measured")
    check(all(c["chosen"] is not None and c["holds"] is not None for c in doc["tune"]["choices"]),
          "tune --pipeline: every budget chose and measured a verdict")
    check_pipeline_held_out(binary, d, stage, tmp)
    check_pipeline_resume_nan(binary, d, stage, tmp)


def check_pipeline_resume_nan(binary, d, stage, tmp):
    """kperf tune --pipeline measures on after a fault from the rows an earlier process finished,
    a NaN final_error among them (written as null): on an input that is NaN throughout, no chain
    has a finite error, and the restarted process reads the screen rows the faulting one
    journaled. The budget chooses nothing, says why, and the run exits 4 (not 1, as a null read
    back as a number did)."""
    import numpy as np
    train = os.path.join(tmp, "nan-train")
    os.makedirs(train)
    np.save(os.path.join(train, "nan0.npy"), np.full((40, 48), np.nan, np.float32))
    out = os.path.join(tmp, "pipeline-tune-nan.json")
    r = run(binary, ["tune", "--pipeline", "blur-edges", "--budget", "0.5", "--train", train,
                     "--test", d["test"], "--size", "48x40", "--warmup", "1", "--reps", "3",
                     "--quiet", "--out", out] + stage,
            {"KPERF_FAULT": f"crash:{PIPELINE_FAULTED}"})
    check(r.returncode == 4, f"tune --pipeline resumed over NaN errors: exit 4, got "
          f"{r.returncode}: {r.stderr[-400:]}")
    if not os.path.exists(out):
        check(False, "tune --pipeline resumed over NaN errors: the document was written")
        return
    doc = json.load(open(out))
    screen = [row for row in doc["results"] if row.get("stage") == "screen"]
    check(any(row["status"] == "ok" and row.get("final_error", 0) is None for row in screen),
          "tune --pipeline resumed over NaN errors: ok screen rows with a null final_error")
    check(all(c["chosen"] is None for c in doc["tune"]["choices"]),
          f"tune --pipeline resumed over NaN errors: nothing chosen "
          f"({[c.get('verdict') for c in doc['tune']['choices']]})")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, root = sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="kperf-fault-") as tmp:
        check_run_faults(binary, tmp)
        check_compiler_crash(binary, tmp)
        check_three_in_a_row(binary, tmp)
        check_real_crash(binary, root, tmp)
        check_cl_error(binary, tmp)
        check_nonfinite_outputs(binary, root, tmp)
        check_tune(binary, root, tmp)
        check_pipeline_faults(binary, root, tmp)
    return finish("fault_test")


if __name__ == "__main__":
    sys.exit(main())
