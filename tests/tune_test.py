#!/usr/bin/python3
"""End-to-end check of `kperf tune` on the OpenCL device the tests use (PoCL in CI): a small
search over generated .npy inputs, then, from the JSON and the saved outputs alone:
- every front point is non-dominated and every other point is dominated (or a duplicate);
- each choice is within its budget on the training inputs and is the fastest such point;
- the training error is the 95th percentile of the per-input errors;
- the reported test errors equal an independent recomputation: numpy's own Gaussian and median
  of the test inputs, against the saved outputs (SPEC 5 MRE);
- the report renders; a tune stopped after N rows (KPERF_FAULT=interrupt-after:N, and
  kill-after:N with a checkpoint after every row) keeps exactly N and resumes to a complete file
  with every row once, the kept ones as they were, every row it shares with the uninterrupted
  tune equal in status and errors; resuming a complete file measures nothing new;
- the screen is on by default (3 x --max-combinations): the kept combinations are the fastest
  screened, the others pruned at the screen with their predictions; 0 turns it off;
- --objective end-to-end ranks each point by its end-to-end median (host packing or conversion,
  upload, launches, download), and a kernel-objective document does not resume as one;
- with --devices (ctest tune_devices), alone: --devices over two PoCL devices
  (POCL_DEVICES="pthread pthread"): every configuration measured once, on one of them; the other
  device's sweep rows put on the first's scale by its own accurate kernel; training errors equal
  to those measured on one device; a two-device tune interrupted after 5 rows resumes; bad
  --devices values are refused.

usage: tune_test.py KPERF_BINARY REPORT_PY [--devices]
Exit 0 on success, 1 on a failed check, 77 (skipped, with a line saying why) when numpy is
unavailable or, with --devices, when PoCL does not give two devices.
"""
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from checks import FAILURES, check, finish, numpy_or_skip

np = numpy_or_skip()


def field(rng, h, w):
    """A smooth field in [20, 235]: a few random sinusoids plus a little noise."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    f = np.zeros((h, w))
    for _ in range(4):
        fy, fx, ph = rng.uniform(0.02, 0.25), rng.uniform(0.02, 0.25), rng.uniform(0, 6.3)
        f += np.sin(fy * y + fx * x + ph)
    f += 0.3 * rng.standard_normal((h, w))
    f = (f - f.min()) / (f.max() - f.min())
    return (20 + 215 * f).astype(np.float32)


def gaussian3(img):
    p = np.pad(img.astype(np.float64), 1, mode="edge")
    h, w = img.shape
    k = [1, 2, 1]
    return sum(k[i] * k[j] * p[i:i + h, j:j + w] for i in range(3) for j in range(3)) / 16.0


def median3(img):
    p = np.pad(img.astype(np.float64), 1, mode="edge")
    h, w = img.shape
    return np.median(np.stack([p[i:i + h, j:j + w] for i in range(3) for j in range(3)]), axis=0)


def mre(truth, approx):
    approx = approx.astype(np.float64)
    keep = np.abs(truth) > 1e-6 * np.abs(truth).max()
    return float(np.mean(np.abs(truth[keep] - approx[keep]) / np.abs(truth[keep])))


def dominated(a, b):
    """b dominates a (time, error), strictly in one."""
    return b[0] <= a[0] and b[1] <= a[1] and (b[0] < a[0] or b[1] < a[1])


def check_ranked_choice(doc, app, t, c, within):
    """The rank stage's rule, recomputed: the finalists are the points within the budget whose sweep
    time is within the band of the fastest (at most max_finalists, fastest first); of those within
    the tie tolerance of the fastest rank-stage time, the lowest training error is chosen (equal
    errors: the faster). The choice's speedup is the accurate kernel's rank time over its own."""
    rank = doc["context"]["tune"]["rank"]
    ch, where = c["chosen"], f"{app} {c['budget']}"
    fastest = min(p["time_ns"] for p in within)
    expected = [(p["variant"], p["wg"]) for p in sorted(within, key=lambda p: p["time_ns"])
                if p["time_ns"] <= fastest * (1 + rank["finalist_band"])][:rank["max_finalists"]]
    finalists = c["rank"]["finalists"]
    check(sorted((f["variant"], f["wg"]) for f in finalists) == sorted(expected),
          f"{where}: finalists {[(f['variant'], f['wg']) for f in finalists]}, expected {expected}")
    for f in finalists:
        check(f["ranked_time_ns"] > 0, f"{where}: {f['variant']} timed in the rank stage")
    best = min(f["ranked_time_ns"] for f in finalists)
    tied = [f for f in finalists if f["ranked_time_ns"] <= best * (1 + rank["tie_tolerance"])]
    pick = min(tied, key=lambda f: (f["train_error"], f["ranked_time_ns"]))
    check((ch["variant"], ch["wg"]) == (pick["variant"], pick["wg"]),
          f"{where}: chose {ch['variant']} {ch['wg']}, the rule picks {pick['variant']} {pick['wg']}")
    check(ch["ranked_time_ns"] == pick["ranked_time_ns"], f"{where}: the choice's rank time")
    check(abs(ch["speedup"] - c["rank"]["accurate_time_ns"] / ch["ranked_time_ns"]) <= 1e-9 * ch["speedup"],
          f"{where}: speedup from the rank stage")
    check(rank["rounds"] > 1 and rank["reps"] >= rank["rounds"], f"{where}: interleaved rounds")
    timed = [r for r in doc["results"] if r["stage"] == "rank" and r["app"] == app]
    check(any(r["variant"] == "accurate/none" for r in timed), f"{where}: accurate kernel in the rank stage")
    check(all(len(r.get("samples_ns", [])) in (0, rank["reps"]) for r in timed), f"{where}: rank reps")


def neighbours(shape, shapes):
    """The shapes one step from `shape`: another work-group, vec or py, the other two kept."""
    def parts(label):
        m = re.fullmatch(r"(\d+x\d+)(?:v(\d+))?(?:y(\d+))?", label)
        return m.group(1), m.group(2) or "1", m.group(3) or "1"
    a = parts(shape)
    return [s for s in shapes if sum(x != y for x, y in zip(a, parts(s))) == 1]


def check_climb(doc):
    """The sweep's climb: both baselines at every shape; every other survivor at its probe shape and,
    while it lies within climb_band of the fastest of a budget its probe error meets, at every
    neighbour of its fastest; with vec 1,2 on two work-groups, not at every shape."""
    tune = doc["context"]["tune"]
    shapes, band, budgets = tune["shapes"], tune["climb_band"], tune["budgets"]
    check(tune["sweep"] == "climb", "the default sweep climbs")
    partial = stopped = 0
    for app, t in doc["tune"].items():
        swept, probe_errors = {}, {}
        for r in doc["results"]:
            if r["app"] != app:
                continue
            if r["stage"] == "sweep":
                swept.setdefault(r["variant"], {})[r["wg_label"] if "wg_label" in r else label(r)] = r
            if r["stage"] == "probe" and r["status"] == "ok":
                probe_errors.setdefault(r["variant"], []).append(r["error"][r["primary_metric"]])
        baselines = ("accurate/none", "accurate/none/load:global")
        fastest = {}
        for variant, rows in swept.items():
            ok = [r["time_ns"]["median"] for r in rows.values() if r["status"] == "ok"]
            if ok:
                fastest[variant] = min(ok)
        pct = tune["percentile"]
        meets = {v: [b for b in budgets if v in baselines or np.percentile(probe_errors.get(v, [np.inf]), pct) <= b]
                 for v in fastest}
        climbed = {p["variant"]: p["climbed"] for p in t["points"]}
        for variant, rows in swept.items():
            if variant in baselines:
                check(sorted(rows) == sorted(shapes), f"{app} {variant}: a baseline at every shape")
                continue
            if variant not in fastest:
                continue
            best = min((s for s, r in rows.items() if r["status"] == "ok"), key=lambda s: rows[s]["time_ns"]["median"])
            missing = [s for s in neighbours(best, shapes) if s not in rows]
            near = [b for b in meets[variant]
                    if fastest[variant] <= (1 + band) * min(fastest[v] for v in fastest if b in meets[v])]
            if near:
                check(not missing, f"{app} {variant}: within the band at {near}, neighbours {missing} of its fastest "
                                   f"{best} not timed")
            check(variant not in climbed or (not missing or not climbed[variant]) and (not near or climbed[variant]),
                  f"{app} {variant}: climbed {climbed.get(variant)}, {len(missing)} neighbours untimed, near {near}")
            partial += climbed.get(variant, True) and len(rows) < len(shapes)
            stopped += bool(missing)
    check(partial > 0, "a climb that went on to its end left some shape untimed")
    return stopped


def label(row):
    return f"{row['wg'][0]}x{row['wg'][1]}" + (f"v{row['vec']}" if row["vec"] > 1 else "") + \
        (f"y{row['py']}" if row["py"] > 1 else "")


def check_document(doc, test_dir):
    check(doc.get("kind") == "tune" and doc["context"]["complete"], "complete tune document")
    budgets = doc["context"]["tune"]["budgets"]
    refs = {"gaussian3": gaussian3, "median": median3}
    for app, t in doc["tune"].items():
        pts = t["points"]
        check(len(pts) >= 3, f"{app}: at least three points ({len(pts)})")
        front = {(p["key"], p["wg"]) for p in t["front"]}
        for p in pts:
            xy = (p["time_ns"], p["train_error"])
            errs = list(p["train_errors"].values())
            check(abs(np.percentile(errs, 95) - p["train_error"]) <= 1e-12 * max(1, p["train_error"]),
                  f"{app} {p['variant']}: p95 of {errs} is {np.percentile(errs, 95)}, reported {p['train_error']}")
            beaten = [q for q in pts if dominated(xy, (q["time_ns"], q["train_error"]))]
            if (p["key"], p["wg"]) in front:
                check(not beaten, f"{app}: front point {p['key']} is dominated by {[q['key'] for q in beaten]}")
            else:
                dup = any((q["time_ns"], q["train_error"]) == xy for q in t["front"])
                check(beaten or dup, f"{app}: {p['key']} is off the front yet not dominated")
            check(p["pareto"] == ((p["key"], p["wg"]) in front), f"{app}: pareto flag of {p['key']}")
        for c in t["choices"]:
            within = [p for p in pts if p["train_error"] <= c["budget"]]
            ch = c["chosen"]
            check(ch is not None and within, f"{app} {c['budget']}: a choice")
            if not ch:
                continue
            check(ch["train_error"] <= c["budget"], f"{app} {c['budget']}: chosen within budget")
            check_ranked_choice(doc, app, t, c, within)
            test = c["test"]
            errs = []
            for name, e in test["errors"].items():
                out = np.load(e["output_file"])
                truth = refs[app](np.load(os.path.join(test_dir, name + ".npy")))
                mine = mre(truth, out)
                errs.append(mine)
                check(abs(mine - e["error"]) <= 1e-9 * max(1e-6, mine),
                      f"{app} {c['budget']} {name}: recomputed MRE {mine} against reported {e['error']}")
            p = test["percentile_error"]
            check(abs(p - np.percentile(errs, 95)) <= 1e-9 * max(1e-6, p), f"{app}: test percentile error")
            check(abs(test["max"] - max(errs)) <= 1e-9 * max(1e-6, test["max"]), f"{app}: test max")
            check(c["holds"] == (p <= c["budget"]), f"{app}: verdict")
    check(sorted(budgets) == budgets, "budgets ascending")


def check_screen(doc, limit, scale):
    """Per app with more than `limit` combinations: every combination timed once in the screen, at
    the shape its probe then used; the ones searched on are the `limit` fastest of them (times
    through `scale`, a row's factor onto the first device), and every other is pruned at the
    screen, with its prediction. An app with no more is not screened. Returns the apps screened."""
    check(doc["context"]["tune"]["screen_combinations"] > limit, "screen_combinations in the context")
    screened_apps = []
    for app, t in doc["tune"].items():
        rows = [r for r in doc["results"] if r["app"] == app]
        screen = {r["variant"]: r for r in rows if r["stage"] == "screen"}
        combinations = {p["variant"] for p in t["points"] + t["pruned"] if p["origin"] == "combination"}
        if not screen:
            check(len(combinations) <= limit, f"{app}: {len(combinations)} combinations, none screened")
            continue
        screened_apps.append(app)
        pruned = {p["variant"] for p in t["pruned"] if p["at"] == "screen"}
        check(all("predicted" in p for p in t["pruned"] if p["at"] == "screen"),
              f"{app}: a combination pruned at the screen without its prediction")
        kept = set(screen) - pruned
        check(len(screen) > limit and len(kept) == limit,
              f"{app}: {len(screen)} screened, {len(kept)} kept (limit {limit})")
        times = {v: r["time_ns"]["median"] * scale(r) for v, r in screen.items() if r["status"] == "ok"}
        check(all(k in times for k in kept) and
              all(times[k] <= times[p] for k in kept for p in pruned if p in times),
              f"{app}: the kept combinations are the fastest screened ({times}, kept {kept})")
        probed = {r["variant"]: tuple(r["wg"]) + (r["vec"], r["py"]) for r in rows if r["stage"] == "probe"}
        check(all(v in probed and probed[v] == tuple(screen[v]["wg"]) + (screen[v]["vec"], screen[v]["py"])
                  for v in kept), f"{app}: each kept combination probed at its screen shape")
        check(not any(r["variant"] in pruned for r in rows if r["stage"] in ("probe", "sweep")),
              f"{app}: a combination pruned at the screen was measured again")
    return screened_apps


def check_cut_and_resumed(args, out, doc, test_dir, tmp):
    """A tune stopped after N finished rows (KPERF_FAULT=interrupt-after:N: Ctrl-C through the
    supervisor, in the probe stage; kill-after:N with a checkpoint after every row: SIGKILL of the
    whole command, half way) keeps exactly those N rows, and --resume completes it: every kept row
    as it was (not measured again), each (stage, key) once, every row it shares with the
    uninterrupted tune `doc` equal in status and errors."""
    whole = {(r["stage"], r["key"]): r for r in doc["results"]}
    # The atoms' probe rows do not depend on timing: every resumed tune has them.
    atoms = {(app, e["variant"]) for app, t in doc["tune"].items()
             for e in t["points"] + t["pruned"] if e["origin"].startswith("atom")}
    atom_probes = {k for k, r in whole.items() if k[0] == "probe" and (r["app"], r["variant"]) in atoms}
    check(len(atom_probes) > 7, f"the first cut falls in the atoms' probe ({len(atom_probes)} rows)")
    for fault, rows, env in (("interrupt-after", 7, {}),
                             ("kill-after", len(doc["results"]) // 2, {"KPERF_CHECKPOINT_S": "0"})):
        what = f"{fault}:{rows}"
        cut_out = os.path.join(tmp, f"cut-{fault}.json")
        cut_args = [a if a != out else cut_out for a in args]
        cut = subprocess.run(cut_args, capture_output=True, text=True,
                             env=dict(os.environ, KPERF_FAULT=what, **env))
        want = -signal.SIGKILL if fault == "kill-after" else 130
        check(cut.returncode == want, f"{what}: exit {cut.returncode}, not {want}: {cut.stderr}")
        if not os.path.exists(cut_out):
            check(False, f"{what}: no file")
            continue
        part = json.load(open(cut_out))
        check(len(part["results"]) == rows and part["context"]["complete"] is False and
              part["tune"] is None, f"{what}: {len(part['results'])} rows kept, the tune unfinished")
        res = subprocess.run(cut_args + ["--resume"], capture_output=True, text=True)
        check(res.returncode == 0, f"{what}: resumed tune: {res.stderr}")
        final = json.load(open(cut_out))
        keys = [(r["stage"], r["key"]) for r in final["results"]]
        check(len(keys) == len(set(keys)), f"{what}: the resumed tune repeats rows")
        check(final["context"]["complete"], f"{what}: the resumed tune is complete")
        check(final["results"][:rows] == part["results"],
              f"{what}: the kept rows are kept as they were, not measured again")
        check(atom_probes <= set(keys), f"{what}: every atom's probe rows")
        shared = [(r, whole[(r["stage"], r["key"])]) for r in final["results"]
                  if (r["stage"], r["key"]) in whole]
        for a, b in shared:
            check(a["status"] == b["status"] and a.get("error") == b.get("error"),
                  f"{what}: {a['stage']} {a['key']} differs from the uninterrupted tune")
        check_document(final, test_dir)


TWO_DEVICES = dict(os.environ, POCL_DEVICES="pthread pthread")


def two_devices(binary):
    """Whether PoCL gives two pthread devices here (POCL_DEVICES="pthread pthread")."""
    listed = subprocess.run([binary, "devices"], capture_output=True, text=True, env=TWO_DEVICES)
    return "0:1" in listed.stdout and "pthread" in listed.stdout


def check_devices(binary, args, one_device_out, test_dir, tmp):
    """kperf tune --devices on two PoCL devices of one model."""
    env = TWO_DEVICES
    slot = lambda r: r.get("device_slot", 0)

    def tune_on_two(name, app_list, extra=()):
        out = os.path.join(tmp, name)
        run_args = [a if a != one_device_out else out for a in args] + ["--devices", "all"]
        run_args[run_args.index("--apps") + 1] = app_list
        for option, value in zip(extra[::2], extra[1::2]):
            if option in run_args:
                run_args[run_args.index(option) + 1] = value
            else:
                run_args += [option, value]
        run = subprocess.run(run_args, capture_output=True, text=True, env=env)
        check(run.returncode == 0, f"tune --apps {app_list} --devices all: {run.stderr}")
        if run.returncode != 0:
            return None, run_args
        doc = json.load(open(out))
        check_document(doc, test_dir)
        devices = doc["context"]["tune"]["devices"]
        check([d["device"] for d in devices] == ["0:0", "0:1"], f"devices in the context: {devices}")
        measured = [(r["stage"], r["key"]) for r in doc["results"]
                    if not r["stage"].startswith("sweep-baseline:")]
        check(len(measured) == len(set(measured)), "a configuration measured twice across devices")
        return doc, run_args

    # Two apps on two devices: each app at home on one device, every row of it measured there, so
    # its points are its raw times, as in a one-device tune.
    doc, _ = tune_on_two("two-devices.json", "gaussian3,median")
    at_home = doc  # each app's rows measured on one device alone, as in a one-device tune
    if doc:
        rows = doc["results"]
        homes = {app: {slot(r) for r in rows if r["app"] == app} for app in doc["tune"]}
        check(sorted(map(tuple, homes.values())) == [(0,), (1,)], f"apps at home: {homes}")
        # The stage workers append what they build to the command's ledger (SPEC 15).
        sources = doc["context"].get("sources", {})
        check("kernels/gaussian3.cl" in sources and "kernels/median.cl" in sources,
              f"the sources name both apps' kernels, each built on its own device ({sorted(sources)})")
        check(not any(r["stage"].startswith("sweep-baseline:") for r in rows), "no scale rows")
        by_key = {r["key"]: r for r in rows if r["stage"] == "sweep"}
        for app, t in doc["tune"].items():
            check((t["device_slot"],) == tuple(homes[app]), f"{app}: device_slot {t['device_slot']}")
            for p in t["points"]:
                check(p["time_ns"] == by_key[p["key"]]["time_ns"]["median"], f"{p['key']}: raw time")

    # One app on two devices: its units spread over both; the accurate kernel swept on the first.
    # The second device's points are on the first's scale: its row's median times the median over
    # the shapes of the first device's accurate time over its own (measured in the same stage).
    doc, unit_args = tune_on_two("one-app-two-devices.json", "gaussian3")
    if not doc:
        return
    rows = doc["results"]
    for stage in ("probe", "sweep"):  # (confirm may hold a single unit)
        check({slot(r) for r in rows if r["stage"] == stage} == {0, 1}, f"{stage} spread over both")
    check(all(slot(r) == 0 for r in rows if r["stage"] == "sweep" and r["variant"] == "accurate/none"),
          "the accurate kernel is swept on the first device")
    by_key = {r["key"]: r for r in rows if r["stage"] == "sweep"}

    def accurate(app, stage, device):
        return {(tuple(r["wg"]), r["vec"], r["py"]): r["time_ns"]["median"] for r in rows
                if r["stage"] == stage and slot(r) == device and r["app"] == app and
                r["variant"] == "accurate/none" and r["status"] == "ok"}

    def scale(app, stage):
        first, own = accurate(app, "sweep", 0), accurate(app, stage, 1)
        ratios = [first[s] / own[s] for s in first if s in own]
        return float(np.median(ratios)) if ratios else None

    scaled = 0
    for app, t in doc["tune"].items():
        for p in t["points"]:
            row = by_key[p["key"]]
            check(p.get("device_slot") == slot(row), f"{p['key']}: point's device")
            want = row["time_ns"]["median"]
            if slot(row) == 1:
                origin = "combination" if p["origin"] == "combination" else "atom"
                factor = scale(app, "sweep-baseline:" + origin)
                check(factor is not None, f"{app}: second device's {origin} baseline")
                want = want * factor if factor else float("nan")
                scaled += 1
            check(abs(p["time_ns"] - want) <= 1e-9 * want, f"{p['key']}: time {p['time_ns']}, want {want}")
        base = {d["slot"]: d for d in t["device_baselines"]}
        check(base[0]["atom_accurate_time_ns"] == min(accurate(app, "sweep", 0).values()),
              f"{app}: device_baselines")
    check(scaled > 0, "some point was timed on the second device")
    # Errors do not depend on which device of a model measured them: gaussian3 spread over both
    # devices against gaussian3 at home on one.
    one = {(r["stage"], r["key"]): r for r in (at_home or {"results": []})["results"]}
    same = [(r, one[(r["stage"], r["key"])]) for r in rows if r["stage"] == "probe" and
            (r["stage"], r["key"]) in one and r["status"] == "ok"]
    check(len(same) >= 10 and all(a["error"] == b["error"] for a, b in same),
          f"probe errors equal to those measured on one device ({len(same)} compared)")

    # A screen spread over both devices: the second device's screen rows are put on the first's
    # scale by its own accurate kernel (stage screen-baseline) before they are ranked.
    screen_doc, _ = tune_on_two("two-devices-screen.json", "gaussian3",
                                ["--max-combinations", "2", "--screen-combinations", "5"])
    if screen_doc:
        srows = screen_doc["results"]
        check({slot(r) for r in srows if r["stage"] == "screen"} == {0, 1}, "screen spread over both")
        first = {(tuple(r["wg"]), r["vec"], r["py"]): r["time_ns"]["median"] for r in srows
                 if r["stage"] == "sweep" and slot(r) == 0 and r["variant"] == "accurate/none"
                 and r["status"] == "ok"}
        own = {(tuple(r["wg"]), r["vec"], r["py"]): r["time_ns"]["median"] for r in srows
               if r["stage"] == "screen-baseline" and slot(r) == 1 and r["status"] == "ok"}
        ratios = [first[k] / own[k] for k in first if k in own]
        check(bool(ratios), "the second device timed its accurate kernel for the screen")
        factor = float(np.median(ratios)) if ratios else float("nan")
        check_screen(screen_doc, 2, lambda r: factor if slot(r) == 1 else 1.0)

    # Interrupted after 5 rows (of the first device's process or the worker's, whichever finishes
    # them first), then resumed: complete, each configuration once, on the same devices only.
    cut = os.path.join(tmp, "two-cut.json")
    cut_args = unit_args[:]
    cut_args[cut_args.index("--out") + 1] = cut
    proc = subprocess.run(cut_args, capture_output=True, text=True,
                          env=dict(env, KPERF_FAULT="interrupt-after:5"))
    check(proc.returncode == 130, f"interrupted two-device tune exit {proc.returncode}: {proc.stderr}")
    part = json.load(open(cut)) if os.path.exists(cut) else {"results": [], "context": {}}
    check(5 <= len(part["results"]) < len(doc["results"]) and part["context"].get("complete") is False,
          f"interrupted two-device tune: {len(part['results'])} of {len(doc['results'])} rows kept")
    res = subprocess.run(cut_args + ["--resume"], capture_output=True, text=True, env=env)
    check(res.returncode == 0, f"resumed two-device tune: {res.stderr}")
    final = json.load(open(cut))
    keys = [(r["stage"], r["key"], r.get("device_slot", 0)) for r in final["results"]]
    check(len(keys) == len(set(keys)), "resumed two-device tune repeats rows")
    check(final["context"]["complete"], "resumed two-device tune complete")
    check_document(final, test_dir)
    before = open(cut, "rb").read()
    other = subprocess.run([a for a in cut_args if a not in ("--devices", "all")] + ["--resume"],
                           capture_output=True, text=True, env=env)
    check(other.returncode == 2 and "devices" in other.stderr and open(cut, "rb").read() == before,
          f"a two-device tune resumed on one device: exit {other.returncode}, {other.stderr}")

    # Bad --devices: one line, exit 2, no file.
    for bad, says in (("0:7", "no device 0:7"), ("0:0,0:0", "twice"), (",", "expected all")):
        path = os.path.join(tmp, "bad-devices.json")
        r = subprocess.run([a if a != one_device_out else path for a in args] + ["--devices", bad],
                           capture_output=True, text=True, env=env)
        check(r.returncode == 2 and says in r.stderr and r.stderr.count("\n") == 1 and
              not os.path.exists(path), f"--devices {bad}: exit {r.returncode}, {r.stderr!r}")


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["--devices"]):
        print(__doc__, file=sys.stderr)
        return 2
    binary, report = sys.argv[1], sys.argv[2]
    devices = sys.argv[3:] == ["--devices"]
    if devices and not two_devices(binary):
        print("SKIP: PoCL does not give two pthread devices here (POCL_DEVICES=\"pthread pthread\"); "
              "kperf tune --devices not checked", file=sys.stderr)
        return 77
    rng = np.random.default_rng(2026)
    with tempfile.TemporaryDirectory() as tmp:
        train, test = os.path.join(tmp, "train"), os.path.join(tmp, "test")
        os.makedirs(train)
        os.makedirs(test)
        for i in range(3):
            np.save(os.path.join(train, f"train{i}.npy"), field(rng, 36, 40))
        for i in range(2):
            np.save(os.path.join(test, f"held{i}.npy"), field(rng, 33, 45))
        out = os.path.join(tmp, "tune.json")
        args = [binary, "tune", "--apps", "gaussian3,median", "--budget", "0.02,0.5", "--train", train,
                "--test", test, "--wg", "8x8,16x4", "--schemes", "accurate,stencil,rows:2", "--recon", "nn",
                "--perforate", "device,host", "--load", "local,global", "--output", "none,rows:2",
                "--output-recon", "nn", "--precision", "f32,f16", "--relax", "none", "--warmup", "1",
                "--reps", "3", "--max-combinations", "4", "--quiet", "--out", out]
        if devices:
            check_devices(binary, args, out, test, tmp)
            return finish("tune --devices checks")
        t0 = time.time()
        run = subprocess.run(args, capture_output=True, text=True)
        print(f"tune took {time.time() - t0:.1f} s", file=sys.stderr)
        if run.returncode != 0:
            print(run.stdout, run.stderr, file=sys.stderr)
            return 1
        doc = json.load(open(out))
        check_document(doc, test)
        stages = {r["stage"] for r in doc["results"]}
        check({"probe", "sweep", "rank", "test"} <= stages, f"stages {stages}")
        # The climb, on a grid of shapes where a neighbour is not every other shape.
        climb_out = os.path.join(tmp, "climb.json")
        climb = subprocess.run([binary, "tune", "--apps", "gaussian3", "--budget", "0.5", "--train", train,
                                "--test", test, "--wg", "8x8,16x4", "--vec", "1,2", "--py", "1,2", "--schemes",
                                "accurate,rows:2", "--recon", "nn", "--load", "local,global",
                                "--output", "none", "--precision", "f32,f16", "--relax", "none", "--climb-band",
                                "0.05", "--warmup", "1", "--reps", "3", "--quiet", "--out", climb_out,
                                "--binary-cache", os.path.join(tmp, "climb-binaries"), "--cache", "cold"],
                               capture_output=True, text=True,
                               env=dict(os.environ, KPERF_COMPILE_WORKERS="2"))
        check(climb.returncode == 0, f"tune on a grid of shapes: {climb.stderr}")
        if climb.returncode == 0:
            climbed = json.load(open(climb_out))
            # Its compile workers start once and serve every round of the climb: a pool restarted
            # for each batch would count two starts a round.
            workers = climbed["context"]["harness"]["compile_workers"]
            check(workers["starts"] == 2 and workers["processes"] == 2 and workers["batches"] >= 2,
                  f"the climb's compile workers: {workers}")
            stopped = check_climb(climbed)
            check(stopped > 0 and climbed["context"]["tune"]["climb_band"] == 0.05,
                  f"--climb-band 0.05 stopped {stopped} climbs")
            # The same rows read with a band wide enough for every variant: a climb stopped inside
            # the band must fail the check.
            wide = json.loads(json.dumps(climbed))
            wide["context"]["tune"]["climb_band"] = 100.0
            failures_before = len(FAILURES)
            with contextlib.redirect_stderr(io.StringIO()):  # its failures are the expected ones
                check_climb(wide)
            caught = len(FAILURES) > failures_before
            del FAILURES[failures_before:]
            check(caught or not stopped, "a climb stopped inside the band passes check_climb")
            cache = climbed["context"]["tune"]["cache"]
            check(cache["mode"] == "cold" and cache["cold"] and cache["flush_bytes"] >= 256 << 20,
                  f"--cache cold in the context: {cache}")
            # Timings taken cold do not resume as warm ones.
            before = open(climb_out, "rb").read()
            warm = subprocess.run(climb.args[:-1] + ["warm", "--resume"], capture_output=True, text=True)
            check(warm.returncode == 2 and "cache" in warm.stderr and open(climb_out, "rb").read() == before,
                  f"a cold tune resumed warm: exit {warm.returncode}, {warm.stderr!r}")
        check(any(p["origin"] == "combination" for t in doc["tune"].values() for p in t["points"]),
              "some combination survived")
        # The screen is on by default: three times --max-combinations.
        check(doc["context"]["tune"]["screen_combinations"] == 12, "the default screen is 3 x 4")
        # A CPU device times warm by default: a flush would cost more than its kernels.
        cache = doc["context"]["tune"]["cache"]
        check(cache["mode"] == "auto" and cache["cold"] is False and cache["flush_bytes"] == 0,
              f"--cache auto on a CPU: {cache}")
        check(bool(check_screen(doc, 4, lambda r: 1.0)), "the default screen timed some app")

        rep = subprocess.run(["/usr/bin/python3", report, out, "--out", os.path.join(tmp, "report")],
                             capture_output=True, text=True)
        check(rep.returncode == 0, f"report.py: {rep.stderr}")
        md = open(os.path.join(tmp, "report", "report.md")).read() if rep.returncode == 0 else ""
        for what in ("Tuning under an error budget", "tune_fronts_0.png", "Hypervolume by family", "held-out"):
            check(what in md, f"report mentions {what}")

        # Resuming a complete file measures nothing again and chooses the same.
        again = subprocess.run(args + ["--resume"], capture_output=True, text=True)
        check(again.returncode == 0, f"resume of a complete tune: {again.stderr}")
        redo = json.load(open(out))
        check(len(redo["results"]) == len(doc["results"]), "resume of a complete tune added rows")
        check(json.dumps(redo["tune"], sort_keys=True) == json.dumps(doc["tune"], sort_keys=True),
              "resume of a complete tune changed the result")

        check_cut_and_resumed(args, out, doc, test, tmp)

        # The end-to-end objective: every timed row carries transfer samples, each point's time is
        # its sweep row's end-to-end median, and the choices follow those times.
        e2e_out = os.path.join(tmp, "e2e.json")
        e2e_args = [binary, "tune", "--apps", "gaussian3", "--budget", "0.02,0.5", "--train", train,
                    "--test", test, "--wg", "8x8,16x4", "--schemes", "accurate,rows:2", "--recon", "nn",
                    "--perforate", "device,host", "--load", "local", "--output", "none",
                    "--precision", "f32,f16", "--relax", "none", "--warmup", "1", "--reps", "3",
                    "--max-combinations", "2", "--screen-combinations", "0", "--objective", "end-to-end",
                    "--quiet", "--out", e2e_out]
        run = subprocess.run(e2e_args, capture_output=True, text=True)
        check(run.returncode == 0, f"tune --objective end-to-end: {run.stderr}")
        if run.returncode == 0:
            e2e = json.load(open(e2e_out))
            check_document(e2e, test)
            check(e2e["context"]["tune"]["objective"] == "end-to-end", "objective in the context")
            check(not any(r["stage"] == "screen" for r in e2e["results"]), "--screen-combinations 0 screens")
            sweep = {r["key"]: r for r in e2e["results"] if r["stage"] == "sweep" and r["status"] == "ok"}
            check(bool(sweep) and all("transfer_samples_ns" in r for r in sweep.values()),
                  "end-to-end sweep rows carry transfer samples")
            pts = e2e["tune"]["gaussian3"]["points"]
            check(any("/host" in p["variant"] or p["variant"].endswith("host") for p in pts) or
                  any("host" in p["key"] for p in pts), "a host-perforated point is ranked")
            for p in pts:
                row = sweep.get(p["key"])
                want = float(np.median(row["transfer_samples_ns"]["end_to_end"])) if row else None
                check(want is not None and abs(p["time_ns"] - want) <= 1e-9 * want,
                      f"{p['key']}: time {p['time_ns']} is the end-to-end median {want}")
        # --screen-combinations: more combinations timed at their probe shape, the fastest
        # --max-combinations of them searched on; a screen that would not exceed it is refused.
        screen_out = os.path.join(tmp, "screen.json")
        screen_args = [a if a != out else screen_out for a in args]
        screen_args[screen_args.index("--apps") + 1] = "gaussian3"
        screen_args[screen_args.index("--max-combinations") + 1] = "2"
        run = subprocess.run(screen_args + ["--screen-combinations", "5"], capture_output=True, text=True)
        check(run.returncode == 0, f"tune --screen-combinations: {run.stderr}")
        if run.returncode == 0:
            screened = json.load(open(screen_out))
            check_document(screened, test)
            check_screen(screened, 2, lambda r: 1.0)
        bad = subprocess.run(screen_args + ["--screen-combinations", "2", "--out", screen_out + ".bad"],
                             capture_output=True, text=True)
        check(bad.returncode == 2 and "--screen-combinations 2" in bad.stderr and
              bad.stderr.count("\n") == 1 and not os.path.exists(screen_out + ".bad"),
              f"--screen-combinations not above --max-combinations: exit {bad.returncode}, {bad.stderr!r}")
        for flag, value, says in (("--sweep", "sideways", "expected climb or every"),
                                  ("--tie-tolerance", "2", "--tie-tolerance"),
                                  ("--climb-band", "0", "--climb-band 0: expected a fraction above 0"),
                                  ("--climb-band", "wide", "--climb-band wide: expected"),
                                  ("--cache", "lukewarm", "expected auto, cold or warm")):
            bad = subprocess.run(screen_args + [flag, value, "--out", screen_out + ".bad"],
                                 capture_output=True, text=True)
            check(bad.returncode == 2 and says in bad.stderr and bad.stderr.count("\n") == 1 and
                  not os.path.exists(screen_out + ".bad"), f"{flag} {value}: exit {bad.returncode}, {bad.stderr!r}")
        # A document tuned on kernel time does not resume under the other objective.
        before = open(out, "rb").read()
        mixed = subprocess.run(args + ["--resume", "--objective", "end-to-end"], capture_output=True, text=True)
        check(mixed.returncode == 2 and "objective" in mixed.stderr and mixed.stderr.count("\n") == 1
              and open(out, "rb").read() == before,
              f"kernel-objective document resumed as end-to-end: exit {mixed.returncode}, {mixed.stderr}")
    return finish("tune checks")


if __name__ == "__main__":
    sys.exit(main())
