#!/usr/bin/python3
"""Fig. 10's output schemes over repeated runs of scripts/fig10.sh: for each app, output scheme
and reconstruction, the speedup over that run's own Paraprox baseline (accurate, no output
scheme, global load path, at its best launch shape) of the fastest one-launch configuration
(the fused and shared fills, at their best shape and load path), run by run; their median; and
in how many runs it is not slower than the baseline. Each app's baseline time per run heads the
table. Where kernels take a few microseconds (1024^2 on a large GPU), one run's ranking moves
with the run-to-run spread; a cell that holds in every run does not depend on it.

--bracket also reads each run's RUN-baseline-after.json[.gz] (fig10.sh's third pass: the same
baseline timed again after the output schemes) and compares each cell with the mean of the two
baseline times, the one before and the one after it, so that a device whose speed drifted
during the run moves both sides alike; both baselines head the table.

Runs timed in rounds (kperf run --rounds, FIG10_ROUNDS) add a row per app under its baseline:
the least and the greatest median of the baseline's rounds, how far the reference moved within
the run while every cell's rounds were timed in turn with it.

usage: fig10_repeats.py [--fills fused,shared] [--bracket] RUN.json[.gz] [RUN.json[.gz] ...]
  (a markdown table on stdout; --fills: the output fills a cell takes its best of)
"""
import gzip
import json
import statistics
import sys


def fail(message):
    print(f"fig10_repeats.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_doc(path):
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            doc = json.load(f)
        doc["results"]  # a run file has rows
        return doc
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{path}: not a kperf run file ({e})")


def read_rows(path):
    return read_doc(path)["results"]


def round_medians(row, context):
    """The median of each round's samples (kperf run --rounds), or None without rounds."""
    rounds = (context.get("rounds") or {}).get("rounds", 1)
    samples = row.get("samples_ns", [])
    if rounds <= 1 or not samples:
        return None
    reps = len(samples)
    return [statistics.median(samples[reps * r // rounds:reps * (r + 1) // rounds])
            for r in range(rounds)]


def baseline_after_path(path):
    """fig10.sh's third pass: RUN.json[.gz] -> RUN-baseline-after.json[.gz]."""
    stem = path[:-3] if path.endswith(".gz") else path
    base = stem[:-5] if stem.endswith(".json") else stem
    return base + "-baseline-after.json" + path[len(stem):]


def load(path, fills):
    doc = read_doc(path)
    baseline, best, by_round = {}, {}, {}
    for r in doc["results"]:
        if r.get("status") != "ok" or r.get("scheme") != "accurate":
            continue
        t = r["time_ns"]["median"]
        if r["output"] == "none":
            if r["load"] == "global" and t < baseline.get(r["app"], float("inf")):
                baseline[r["app"]] = t
                by_round[r["app"]] = round_medians(r, doc.get("context", {}))
        elif r.get("output_fill") in fills:
            cell = (r["app"], r["output"], r["output_recon"])
            best[cell] = min(best.get(cell, float("inf")), t)
    best = {c: t for c, t in best.items() if c[0] in baseline}
    if not best:
        fail(f"{path}: no output scheme filled by {','.join(fills)} with its global accurate "
             "baseline")
    return best, baseline, by_round


def load_baseline_after(path, apps):
    after_path = baseline_after_path(path)
    after = {}
    for r in read_rows(after_path):
        if (r.get("status") == "ok" and r.get("scheme") == "accurate" and
                r.get("output") == "none" and r.get("load") == "global"):
            after[r["app"]] = min(after.get(r["app"], float("inf")), r["time_ns"]["median"])
    missing = sorted(set(apps) - set(after))
    if missing:
        fail(f"{after_path}: no global accurate baseline of {missing[0]}")
    return after


def main(args):
    fills = ["fused", "shared"]
    bracket = False
    while args[:1] in (["--fills"], ["--bracket"]):
        if args[0] == "--bracket":
            bracket = True
            args = args[1:]
            continue
        if len(args) < 2:
            fail("--fills needs a list (fused, shared, separate)")
        fills = args[1].split(",")
        bad = [f for f in fills if f not in ("fused", "shared", "separate")]
        if bad:
            fail(f"unknown fill '{bad[0]}' (valid: fused, shared, separate)")
        args = args[2:]
    paths = args
    if not paths:
        fail("usage: fig10_repeats.py [--fills fused,shared] [--bracket] RUN.json[.gz] "
             "[RUN.json[.gz] ...]")
    loaded = [load(p, fills) for p in paths]
    afters = [load_baseline_after(p, baseline) if bracket else None
              for p, (_, baseline, _) in zip(paths, loaded)]
    runs = []
    for (best, baseline, _), after in zip(loaded, afters):
        reference = {app: (t + after[app]) / 2 if after else t for app, t in baseline.items()}
        runs.append({c: reference[c[0]] / t for c, t in best.items()})
    cells = sorted(set.intersection(*(set(r) for r in runs)))
    if not cells:
        fail("the runs share no cell")
    print("| cell | " + " | ".join(f"run {i + 1}" for i in range(len(runs))) +
          " | median | runs >= 1.00 |")
    print("|---" * (len(runs) + 3) + "|")
    # Each run's baselines first: how far the runs' reference itself moved.
    for app in sorted({c[0] for c in cells}):
        sides = [("baseline", [b[app] for _, b, _ in loaded])]
        if bracket:
            sides.append(("baseline after", [a[app] for a in afters]))
        for name, values in sides:
            times = [t / 1e3 for t in values]
            print(f"| {app} {name}, us | " + " | ".join(f"{t:.2f}" for t in times) +
                  f" | {statistics.median(times):.2f} | |")
        spans = [r[app] for _, _, r in loaded]
        if any(spans):
            print(f"| {app} baseline's rounds, us | " +
                  " | ".join(f"{min(m) / 1e3:.2f}-{max(m) / 1e3:.2f}" if m else "-"
                             for m in spans) + " | | |")
    always = never = 0
    for cell in cells:
        ratios = [r[cell] for r in runs]
        holds = sum(x >= 1.0 for x in ratios)
        always += holds == len(runs)
        never += holds == 0
        print(f"| {'/'.join(cell)} | " + " | ".join(f"{x:.2f}" for x in ratios) +
              f" | {statistics.median(ratios):.2f} | {holds} of {len(runs)} |")
    per_run = ", ".join(str(sum(r[c] >= 1.0 for c in cells)) for r in runs)
    print(f"\n{len(cells)} cells: {always} hold in every run, {never} in none; "
          f"cells that hold, run by run: {per_run}.")


if __name__ == "__main__":
    main(sys.argv[1:])
