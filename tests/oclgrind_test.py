#!/usr/bin/python3
"""Every kernel under Oclgrind: kperf runs on Oclgrind's simulated device, which checks every
memory access (invalid reads and writes outside buffers and local arrays), uninitialised values,
data races, barrier divergence and API errors. Any diagnostic fails the test and names the
configuration.

Coverage:
- a pairwise covering array (every pair of axis values that some valid configuration holds) over
  the input scheme with its reconstruction, load path, output scheme, output reconstruction,
  output fill, storage precision, perforation site, launch shape (vec/py) and barrier relaxation,
  plus the app's own kernel axes, for one app of each kind: radius 1 (gaussian3), radius 2
  (gaussian5), median, inversion, bilateral and hotspot;
- every value of every axis at least once for every other kernel file: sobel3, sobel5 and the
  example user apps, with the error metrics on the device (metrics.cl); copy.cl runs in every
  configuration (the copy bandwidth), probe_half_image.cl wherever a half image is read;
- the device canary (schemes/groups_sampled.cl's sampled launches, kernels/canary.cl's reduction):
  its device test DeviceCanary.SmallLadderForOclgrind, a ladder of two rungs (half storage, and
  an output scheme along both axes, whose launch adds the neighbouring groups) on a 40x24 grid;
- fused chains (`kperf pipeline --fuse all`, schemes/fuse_*.cl): the first stage's input schemes
  with nn and li, f16 and bf16 storage, launch shapes with vec and py, three stages, a user app
  and one app twice, and the rolling design (`--fuse-rows`, schemes/fuse_roll*.cl: rows:3 li in
  f16, two strips a group, strips of 6 rows on a grid of 17) (FUSED; the fast tier runs the first
  three).
The configurations that can run come from `kperf run --dry-run` over the whole cross product on
Oclgrind's device, so the array never spends a row on a combination kperf refuses.

How each runs: `oclgrind --check-api --uninitialized --data-races --build-options -cl-opt-disable`
around `kperf run` on a 23x17 grid, one launch: odd, so that every launch shape has partial
groups, and small, since Oclgrind's time grows with the work-items (one configuration took 9.7 s
at 37x29 and 1.9 s at 21x15). Relaxed barriers race by design: their rows run
without --data-races, every other check kept. -cl-opt-disable because Debian's Oclgrind 21.10
cannot interpret LLVM's `freeze` instruction, which the optimiser emits for some kernels
("OCLGRIND FATAL ERROR ... Unsupported instruction: freeze"); the unoptimised kernel makes the
same memory accesses as the source. A fatal error fails the row like any other diagnostic.

Known-bad kernels (--mutants): each mutant of tests/kernel_mutants.py that Oclgrind must catch
(an out-of-bounds read in the separate output fill, the tile's barrier removed, a tile row never
loaded) runs its one configuration on a mutated copy of the kernel root, and its log must hold
the diagnostic it is there to show ("Invalid read", "data race", "Uninitialized value"), where
the same configurations of the shipped kernels leave the log empty. A harness whose diagnostics
stopped reaching the log would fail here, not pass every row.

usage: oclgrind_test.py KPERF_BINARY SOURCE_DIR [--all] [--mutants] [--jobs N]
  --all, or KPERF_TEST_FULL=1 (scripts/test.sh --full): the whole array; default: the first rows
  of each app's array and one configuration of every other kernel file (about a minute on two
  cores). --mutants: the known-bad kernels instead.
Exit 0 on success, 1 on a failed check, 77 when oclgrind or numpy is missing.
"""
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from checks import check, finish, full_tier, numpy_or_skip

np = numpy_or_skip()

GRID = "23x17"
# One launch shape per vec/py value, so that the shape is one parameter of the array.
SHAPES = ["8x4", "16x2v4", "8x4v2y3", "4x8y4", "8x2v8y2"]
STRUCTURAL = {
    "input": ["accurate", "stencil", "rows:2/nn", "rows:2/li", "rows:3/nn", "rows:3/li",
              "cols:2/nn", "cols:2/li", "cols:3/nn", "cols:3/li"],
    "load": ["local", "global", "image"],
    "output": ["none", "rows:2", "rows:3", "cols:2", "cols:3", "center:2", "center:3"],
    "output_recon": ["nn", "li"],
    "output_fill": ["fused", "shared", "separate"],
    "precision": ["f32", "f16in", "f16", "bf16"],
    "perforate": ["device", "host"],
    "shape": SHAPES,
    "relax": ["none", "skip"],
}
# The kernel axes of the apps they apply to (kperf's own flags and row fields).
APP_AXES = {
    "bilateral": {"loop_skip": ["1", "2"], "weights": ["table", "computed"]},
    "hotspot": {"iterations_skip": ["0", "0.5"]},
}
PAIRWISE_APPS = ["gaussian3", "gaussian5", "median", "inversion", "bilateral", "hotspot"]
# The other kernel files, each with the valid configurations of the app of its kind (the same
# radius, no axes of its own).
EACH_VALUE_APPS = {"sobel3": "gaussian3", "sobel5": "gaussian5", "box5": "gaussian5",
                   "laplacian3": "gaussian3", "unsharp": "gaussian3"}
SAMPLE_ROWS = 6  # per pairwise app in the fast tier
SAMPLE_SHAPES = ["8x4", "8x4v2y3"]  # the fast tier's arrays: fewer shapes, a smaller dry run
# Fused chains: (pipeline, stage options..., extra arguments). Every chain of each is fused; the
# accurate f32 kernel added to every stage makes some chains not connect (not_applicable rows).
FUSED = [
    ("blur-edges", ["1:--schemes rows:2 --recon li --precision f16",
                    "2:--precision f16 --wg 8x4 --vec 2 --py 3"], []),
    ("denoise-edges", ["1:--schemes stencil,cols:3 --recon nn", "2:--wg 16x2 --vec 4"], []),
    ("blur-edges", ["1:--schemes rows:3 --recon li --precision f16",
                    "2:--precision f16 --wg 8x2 --vec 4 --py 2"], ["--fuse-rows", "6"]),
    ("gaussian3,median,sobel3", ["1:--schemes rows:3 --recon li", "3:--wg 4x8 --py 4"], []),
    ("box5,sobel3", ["1:--schemes rows:2 --precision f16in", "2:--wg 8x2 --vec 8 --py 2"],
     ["--app-file", "examples/apps/box5.cl"]),
    ("sobel3,sobel3", ["1:--schemes cols:2 --recon li", "2:--wg 8x4"], []),
    ("blur-edges", ["1:--precision bf16", "2:--precision bf16 --wg 8x4 --vec 4"], []),
]
SAMPLE_FUSED = 3
# The error metrics on the device (metrics.cl) run once, on a grid just large enough for SSIM's
# 11x11 window: every kernel of it in one group.
METRICS_GRID = "16x12"


def flag(name):
    return "--" + name.replace("_", "-")


def axis_flags(values):
    """kperf run's options for lists of values (one axis a list, crossed)."""
    args = []
    schemes = sorted({v.split("/")[0] for v in values["input"]})
    recons = sorted({v.split("/")[1] for v in values["input"] if "/" in v}) or ["nn"]
    args += ["--schemes", ",".join(schemes), "--recon", ",".join(recons)]
    args += ["--wg", ",".join(sorted({s.split("v")[0].split("y")[0] for s in values["shape"]}))]
    args += ["--vec", ",".join(sorted({shape_part(s, "v") for s in values["shape"]}))]
    args += ["--py", ",".join(sorted({shape_part(s, "y") for s in values["shape"]}))]
    for name, vals in values.items():
        if name not in ("input", "shape"):
            args += [flag(name), ",".join(vals)]
    return args


def shape_part(shape, letter):
    """The vec ("v") or py ("y") of a shape label such as 8x4v2y3."""
    rest = shape.split("x", 1)[1]
    if letter == "v":
        return rest.split("v")[1].split("y")[0] if "v" in rest else "1"
    return rest.split("y")[1] if "y" in rest else "1"


def row_values(row, names):
    """The array's parameter values of a --dry-run row; '-' where a parameter does not apply."""
    out = {}
    recon = row["recon"]
    out["input"] = row["scheme"] + ("" if row["scheme"] in ("accurate", "stencil") else "/" + recon)
    out["load"] = row["load"]
    out["output"] = row["output"]
    none = row["output"] == "none"
    out["output_recon"] = "-" if none else row["output_recon"]
    out["output_fill"] = "-" if none else row.get("output_fill", "fused")
    out["precision"] = row["precision"]
    out["perforate"] = row["perforate"]
    wg = f"{row['wg'][0]}x{row['wg'][1]}"
    out["shape"] = wg + (f"v{row['vec']}" if row["vec"] != 1 else "") + (
        f"y{row['py']}" if row["py"] != 1 else "")
    out["relax"] = row.get("relax", "-")
    for name in names:
        if name not in out:
            out[name] = str(row.get(name, "-")).replace(".0", "") if name != "iterations_skip" \
                else ("0" if float(row.get(name, 0)) == 0 else str(row[name]))
    return tuple(out[n] for n in names)


def oclgrind_checks(params):
    """Oclgrind's checks for one configuration: every one, but --data-races and --uninitialized
    under a relaxed barrier (the race by design: a work-item reads tile elements the others have
    not written yet, which Oclgrind's one-work-item-at-a-time execution always shows as
    uninitialised), and --uninitialized on the image load path (Oclgrind 21.10 does not track an
    image's contents: it marks every read_imagef result uninitialised once it is stored to local
    memory, whatever the image holds)."""
    checks = ["--check-api"]
    if params.get("relax") != ["skip"]:
        checks.append("--data-races")
        if params.get("load") != ["image"]:
            checks.append("--uninitialized")
    return checks


class Runner:
    def __init__(self, kperf, kernel_root, scratch):
        self.kperf = kperf
        self.root = kernel_root
        self.scratch = scratch
        self.count = 0

    def kperf_args(self, app, grid=GRID):
        args = ["run", "--apps", app, "--size", grid, "--warmup", "0", "--reps", "1", "--quiet",
                "--kernel-dir", self.root]
        if app == "hotspot":
            args += ["--iterations", "2"]
        elif app in ("box5", "laplacian3", "unsharp"):
            args += ["--app-file", os.path.join(self.root, "examples", "apps", app + ".cl"),
                     "--input", "synthetic:noise"]
        else:
            args += ["--input", "synthetic:noise"]
        return args

    def dry_run(self, app, params, names):
        """The array's values of every configuration kperf would run over the cross product of
        params (--dry-run), one launch shape at a time (--wg, --vec and --py would cross)."""
        rows = set()
        for shape in params["shape"]:
            one = dict(params, shape=[shape])
            cmd = ["oclgrind", self.kperf] + self.kperf_args(app) + axis_flags(one) + ["--dry-run"]
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            if out.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
            for line in out.stdout.splitlines():
                row = json.loads(line)
                if row["status"] == "planned":
                    rows.add(row_values(row, names))
        return sorted(rows)

    def run_one(self, app, names, values, metrics_on="host"):
        """Runs one configuration under Oclgrind; returns (label, problems)."""
        self.count += 1
        tag = f"{app}-{self.count}"
        log = os.path.join(self.scratch, tag + ".log")
        out_json = os.path.join(self.scratch, tag + ".json")
        params = {n: [v] for n, v in zip(names, values) if v != "-"}
        if "input" in params and "/" not in params["input"][0]:
            params["input"] = [params["input"][0]]
        checks = oclgrind_checks(params)
        grid = METRICS_GRID if metrics_on == "device" else GRID
        cmd = (["oclgrind", "--log", log, "--num-threads", "1", "--build-options",
                "-cl-opt-disable"] + checks + [self.kperf] + self.kperf_args(app, grid) +
               axis_flags(params) + ["--metrics-on", metrics_on, "--out", out_json])
        label = app + " " + " ".join(f"{n}={v}" for n, v in zip(names, values) if v != "-")
        label += f" metrics-on={metrics_on} {grid}"
        start = time.monotonic()
        proc, problems = run_under_oclgrind(cmd, log, label)
        if proc is None:
            return label, problems, 900.0
        if proc.returncode == 0:
            rows = json.load(open(out_json))["results"]
            check(len(rows) == 1, f"{label}: one row expected, got {len(rows)}")
            for r in rows:
                if r["status"] != "ok":
                    problems.append(f"row {r['key']} is {r['status']}: {r.get('reason', '')[:300]}")
            ctx = json.load(open(out_json))["context"]
            for c in ctx.get("copy", []):
                if c["status"] != "ok":
                    problems.append(f"copy kernel: {c['status']}")
        for path in (log, out_json):
            if os.path.exists(path):
                os.remove(path)
        return label, problems, time.monotonic() - start


def run_under_oclgrind(cmd, log, label):
    """Runs kperf under Oclgrind (cmd) once, or twice where the simulator itself crashed before
    any kernel ran (seen once in its compiler, under load, not reproducible; a second crash
    counts). Returns (the process or None after a timeout, problems: the log's diagnostics and a
    failed exit)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0 and "outside any configuration" in proc.stderr:
            print(f"{label}: Oclgrind crashed outside any kernel; running it again", flush=True)
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return None, ["timed out after 900 s"]
    problems = []
    diagnostics = open(log).read().strip() if os.path.exists(log) else ""
    if diagnostics:
        problems.append("Oclgrind: " + diagnostic_kinds(diagnostics) + "\n    " +
                        "\n    ".join(diagnostics.splitlines()[:14]))
    if proc.returncode != 0:
        problems.append(f"kperf exit {proc.returncode}: {proc.stderr.strip()[-600:]}")
    return proc, problems


def diagnostic_kinds(log):
    """Each kind of diagnostic in an Oclgrind log and how often it occurs ("Read-write data race
    x850, Uninitialized value written x150"), so that the kinds past the first lines show."""
    kinds = collections.Counter(re.split(r" (?:at|of size|to|from) ", line, 1)[0]
                                for line in log.splitlines() if line and not line[0].isspace())
    return ", ".join(f"{kind} x{n}" for kind, n in kinds.most_common())


def run_fused(runner, pipeline, stages, extra):
    """One `kperf pipeline --fuse all` under Oclgrind's checks; returns (label, problems, s)."""
    runner.count += 1
    tag = f"fused-{runner.count}"
    log = os.path.join(runner.scratch, tag + ".log")
    out_json = os.path.join(runner.scratch, tag + ".json")
    args = ["pipeline", "--pipeline", pipeline, "--fuse", "all", "--size", GRID, "--input",
            "synthetic:noise", "--warmup", "0", "--reps", "1", "--quiet", "--kernel-dir",
            runner.root, "--out", out_json]
    for stage in stages:
        args += ["--stage", stage]
    args += [os.path.join(runner.root, a) if a.endswith(".cl") else a for a in extra]
    cmd = (["oclgrind", "--log", log, "--num-threads", "1", "--build-options", "-cl-opt-disable",
            "--check-api", "--data-races", "--uninitialized", runner.kperf] + args)
    label = f"fused {pipeline} " + " ".join(f"'{s}'" for s in stages + extra)
    start = time.monotonic()
    proc, problems = run_under_oclgrind(cmd, log, label)
    if proc is None:
        return label, problems, 900.0
    if proc.returncode == 0:
        rows = json.load(open(out_json))["results"]
        ok = [r for r in rows if r["status"] == "ok"]
        check(ok and all(r["fused"] for r in rows), f"{label}: fused chains ran: {len(ok)} ok")
        for r in rows:
            if r["status"] not in ("ok", "not_applicable"):
                problems.append(f"row {r['key']} is {r['status']}: {r.get('reason', '')[:300]}")
    for path in (log, out_json):
        if os.path.exists(path):
            os.remove(path)
    return label, problems, time.monotonic() - start


def run_device_canary(runner):
    """The device canary's device test under every check of Oclgrind (the canary has no command of
    its own yet); returns (label, problems, s)."""
    binary = os.path.join(os.path.dirname(runner.kperf), "tests", "kperf_device_canary_tests")
    name = "DeviceCanary.SmallLadderForOclgrind"
    label = f"device canary ({name})"
    if not os.path.exists(binary):
        return label, [f"{binary} is missing"], 0.0
    log = os.path.join(runner.scratch, "device-canary.log")
    cmd = ["oclgrind", "--log", log, "--num-threads", "1", "--build-options", "-cl-opt-disable",
           "--check-api", "--data-races", "--uninitialized", binary, f"--gtest_filter={name}"]
    start = time.monotonic()
    proc, problems = run_under_oclgrind(cmd, log, label)
    if proc is not None and "[  PASSED  ] 1 test." not in proc.stdout:
        problems.append(f"the test did not pass: {proc.stdout.strip()[-600:]}")
    if os.path.exists(log):
        os.remove(log)
    return label, problems, time.monotonic() - start


def cover(candidates, strength):
    """Greedy covering array over candidate rows (tuples): every value (strength 1) or every pair
    of values (strength 2) that some candidate holds, '-' excepted. Returns the chosen rows, the
    rows covering most new pairs first."""
    width = len(candidates[0])
    codes = {}
    def code(*parts):
        return codes.setdefault(parts, len(codes))
    rows = []
    for cand in candidates:
        if strength == 1:
            rows.append([code(i, v) if v != "-" else -1 for i, v in enumerate(cand)])
        else:
            rows.append([code(i, cand[i], j, cand[j]) if "-" not in (cand[i], cand[j]) else -1
                         for i in range(width) for j in range(i + 1, width)])
    matrix = np.array(rows, dtype=np.int64)
    valid = matrix >= 0
    safe = np.where(valid, matrix, 0)
    covered = np.zeros(len(codes), dtype=bool)
    chosen = []
    while True:
        gain = (valid & ~covered[safe]).sum(axis=1)
        best = int(gain.argmax())
        if gain[best] == 0:
            break
        chosen.append(candidates[best])
        covered[safe[best][valid[best]]] = True
    return chosen, len(codes)


# The array's values of a mutant's configuration: its CONFIG over these defaults.
MUTANT_DEFAULTS = {"input": "accurate", "load": "local", "output": "none", "output_recon": "-",
                   "output_fill": "-", "precision": "f32", "perforate": "device", "shape": "8x4",
                   "relax": "none"}


def mutants(kperf, source, jobs):
    """Each Oclgrind mutant's configuration on its mutated root must log its diagnostic; the
    shipped root's runs of those configurations must log nothing."""
    from kernel_mutants import mutated_root, with_catcher

    scratch = tempfile.mkdtemp(prefix="kperf-oclgrind-mutants-")
    names = list(STRUCTURAL)
    work = []  # (runner, app, values, expected diagnostic or None, name)
    shipped = Runner(kperf, source, tempfile.mkdtemp(dir=scratch))
    baselines = set()
    for mutant, catchers in with_catcher("oclgrind"):
        root = mutated_root(source, mutant, scratch)
        runner = Runner(kperf, root, root)  # its logs beside its kernels: no two runners share
        for _, diagnostic, config in catchers:
            values = tuple(config.get(n, MUTANT_DEFAULTS[n]) for n in names)
            work.append((runner, config["app"], values, diagnostic, mutant.name))
            if (config["app"], values) not in baselines:
                baselines.add((config["app"], values))
                work.append((shipped, config["app"], values, None, "shipped"))
    print(f"{len(work)} runs under Oclgrind ({len(baselines)} of the shipped kernels)", flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(r.run_one, app, names, values): (diagnostic, name)
                   for r, app, values, diagnostic, name in work}
        for fut in concurrent.futures.as_completed(futures):
            diagnostic, name = futures[fut]
            label, problems, seconds = fut.result()
            logged = [p for p in problems if p.startswith("Oclgrind: ")]
            if diagnostic is None:
                check(not problems, f"shipped kernels, {label}: clean ({problems})")
                print(f"shipped: {label}: {'clean' if not problems else 'NOT clean'} "
                      f"({seconds:.0f} s)", flush=True)
                continue
            caught = any(diagnostic in p for p in logged)
            check(caught, f"mutant {name}, {label}: Oclgrind logs \"{diagnostic}\" "
                  f"({[p[:300] for p in problems]})")
            print(f"{name}: {label}: {'caught' if caught else 'NOT caught'}, \"{diagnostic}\" "
                  f"({seconds:.0f} s)", flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    return finish("oclgrind mutants")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    everything = "--all" in sys.argv or full_tier()
    jobs = os.cpu_count() or 2
    if "--jobs" in sys.argv:
        jobs = int(sys.argv[sys.argv.index("--jobs") + 1])
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    kperf, root = args
    if not shutil.which("oclgrind"):
        print("oclgrind missing: install Debian's oclgrind (scripts/install-deps.sh)",
              file=sys.stderr)
        return 77
    if "--mutants" in sys.argv:
        return mutants(kperf, root, jobs)
    scratch = tempfile.mkdtemp(prefix="kperf-oclgrind-")
    runner = Runner(kperf, root, scratch)
    work = []  # (app, names, values, metrics_on)
    made = time.monotonic()
    valid = {}  # the valid configurations of each pairwise app
    for app in PAIRWISE_APPS + list(EACH_VALUE_APPS):
        pairwise = app in PAIRWISE_APPS
        params = dict(STRUCTURAL, shape=SHAPES if everything else SAMPLE_SHAPES)
        params.update(APP_AXES.get(app, {}))
        names = list(params)
        candidates = runner.dry_run(app, params, names) if pairwise else valid[EACH_VALUE_APPS[app]]
        valid[app] = candidates
        check(candidates, f"{app}: --dry-run planned no configuration")
        if not candidates:
            continue
        rows, targets = cover(candidates, 2 if pairwise else 1)
        print(f"{app}: {len(candidates)} valid configurations, {len(rows)} rows cover "
              f"{targets} {'pairs' if pairwise else 'values'}", flush=True)
        if not everything:
            rows = rows[:SAMPLE_ROWS] if pairwise else rows[:1]
        work += [(app, names, values, "host") for values in rows]
    # metrics.cl on the device, under every check: the accurate kernel's errors and SSIM.
    names = list(STRUCTURAL)
    work.append(("gaussian3", names, ("accurate", "local", "none", "-", "-", "f32", "device",
                                      "8x4", "none"), "device"))
    fused = FUSED if everything else FUSED[:SAMPLE_FUSED]
    print(f"{len(work)} configurations, {len(fused)} fused pipelines and the device canary under "
          f"Oclgrind, {jobs} at "
          f"a time (arrays made in {time.monotonic() - made:.0f} s)", flush=True)
    failed = 0
    times = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(runner.run_one, *item) for item in work]
        futures += [pool.submit(run_fused, runner, *item) for item in fused]
        futures.append(pool.submit(run_device_canary, runner))
        for fut in concurrent.futures.as_completed(futures):
            label, problems, seconds = fut.result()
            times.append((seconds, label))
            if problems:
                failed += 1
            for p in problems:
                check(False, f"{label}: {p}")
    times.sort(reverse=True)
    print(f"{len(work) + len(fused) + 1 - failed} of {len(work) + len(fused) + 1} runs clean; "
          f"{sum(t for t, _ in times):.0f} s under Oclgrind, the slowest:", flush=True)
    for seconds, label in times[:3]:
        print(f"  {seconds:.1f} s  {label}")
    shutil.rmtree(scratch, ignore_errors=True)
    return finish("oclgrind")


if __name__ == "__main__":
    sys.exit(main())
