"""Report sections of kperf pipeline and kperf tune --pipeline documents: every chain's stage
times and errors against the chained truth, each fused chain beside the same stages in separate
launches, the front of speedup against final error, and the tuned choices beside the best
uniform chain and the costliest stage approximated alone."""

import os

from .plotting import plt, save
from .select import select_sections


def _design(c):
    """A fused chain's design: "fused", or "fused-rows:H" for the rolling design's strips."""
    return f"fused-rows:{c['fuse_rows']}" if c.get("fuse_rows") else "fused"


def _chain(c):
    """A chain (a row or a tune's candidate) as its stages; a fused one's launch shape once."""
    if c.get("fused"):
        return (_design(c) + " " + " > ".join(s["variant"] for s in c["stages"]) +
                f"@{c['stages'][-1]['wg']}")
    return " > ".join(f"{s['variant']}@{s['wg']}" for s in c["stages"])


def _time(s):
    return f"{s['time_ns']['median'] / 1e3:.1f} us" if "time_ns" in s else "-"


def _fused_beside(rows):
    """Per input and stage variants, the fastest chain of separate launches beside the fastest
    fused one (each over its launch shapes), where the run has both."""
    best = {}
    for r in rows:
        key = (r["input"]["name"], tuple(s["variant"] for s in r["stages"]), bool(r.get("fused")))
        if key not in best or r["time_ns"]["median"] < best[key]["time_ns"]["median"]:
            best[key] = r
    md = ["Fused beside unfused: each chain of stage variants at its fastest shapes in separate "
          "launches and in one fused launch (the intermediate stays in local memory).", "",
          "| input | stages | unfused | shapes | error | fused | shape | error | fused over unfused |",
          "|---|---|---|---|---|---|---|---|---|"]
    for (name, variants, fused), r in sorted(best.items(), key=lambda kv: kv[1]["time_ns"]["median"]):
        if fused or (name, variants, True) not in best:
            continue
        f = best[(name, variants, True)]
        md.append(f"| {name} | `{' > '.join(variants)}` | {_time(r)} | "
                  f"{', '.join(s['wg'] for s in r['stages'])} | {_pct(r['final_error'])} | "
                  f"{_time(f)} | {f['stages'][-1]['wg']}"
                  f"{' ' + _design(f) if f.get('fuse_rows') else ''} | {_pct(f['final_error'])} | "
                  f"{r['time_ns']['median'] / f['time_ns']['median']:.2f}x |")
    return md + [""] if len(md) > 4 else []


def _speedup(c):
    """The rank stage's speedup where it timed the chain, else the screen's."""
    return c.get("rank_speedup", c["speedup"])


def _pct(x):
    return "-" if x is None else f"{100 * x:.3g} %"


def _front(points):
    """Indices of the (speedup, error) points no other beats on both."""
    keep = []
    for i, (s, e) in enumerate(points):
        if not any((s2 >= s and e2 <= e) and (s2 > s or e2 < e) for s2, e2 in points):
            keep.append(i)
    return keep


def _figure(name, title, points, labels, xlabel, out, written):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    front = set(_front(points))
    ax.scatter([100 * e for _, e in points], [s for s, _ in points], s=14, color="0.6",
               label="chains")
    on = sorted((points[i] for i in front), key=lambda p: p[1])
    ax.plot([100 * e for _, e in on], [s for s, _ in on], "o-", color="C3", label="front")
    for i in front:
        ax.annotate(labels[i], (100 * points[i][1], points[i][0]), fontsize=6,
                    xytext=(3, 3), textcoords="offset points")
    ax.set_xscale("symlog", linthresh=0.01)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("speedup over the accurate chain")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    save(fig, out, name, written)


def _run_section(path, doc, index, out, written):
    ctx = doc["context"]
    p = ctx["pipeline"]
    rows = [r for r in doc["results"] if r["status"] == "ok"]
    failed = len(doc["results"]) - len(rows)
    md = [f"### `{p['name']}` ({' > '.join(p['stages'])}) on {ctx['device']['name']}", "",
          f"`{os.path.basename(path)}`: {len(doc['results'])} chains ({failed} not run: stages "
          f"that do not connect, or failures, with their reasons in the document), "
          f"{'cold' if p['cold'] else 'warm'}, medians over {p['reps']} runs. Errors: each stage's "
          "by its own metric against the chained truth.", "",
          "| input | chain | between | " + " | ".join(f"stage {k + 1} time | error"
                                                      for k in range(len(p["stages"])))
          + " | chain | speedup | final error |",
          "|---|---|---|" + "---|---|" * len(p["stages"]) + "---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["input"]["name"], r["time_ns"]["median"])):
        stages = " | ".join(f"{_time(s)} | {_pct(s.get('error'))}" for s in r["stages"])
        md.append(f"| {r['input']['name']} | `{_chain(r)}` | {', '.join(r['intermediate'])} | "
                  f"{stages} | {r['time_ns']['median'] / 1e3:.1f} us | "
                  f"{r.get('speedup', 0):.2f}x | {_pct(r['final_error'])} |")
    md += ["", "A fused chain is one launch: its stages have no times of their own, and its "
           "stages before the last no outputs to measure (-)."] if any(
               r.get("fused") for r in rows) else []
    md += [""] + _fused_beside(rows)
    name = f"pipeline_front_{index}"
    _figure(name, f"{p['name']} on {ctx['device']['name']}",
            [(r.get("speedup", 0), r["final_error"]) for r in rows],
            [_chain(r) for r in rows], "final error (%)", out, written)
    return md + [f"![front of {p['name']}]({name}.png)", ""]


def _tune_section(path, doc, index, out, written):
    ctx, tune = doc["context"], doc["tune"]
    t = ctx["tune_pipeline"]
    md = [f"### `kperf tune --pipeline {t['name']}` ({' > '.join(t['stages'])}) on "
          f"{ctx['device']['name']}", "",
          f"`{os.path.basename(path)}`: {t['chains']} chains screened on `{t['train'][0]}`, "
          f"{t['measured']} measured on {len(t['train'])} training inputs, held-out "
          f"{', '.join(t['test'])}; size {t['size'][0]}x{t['size'][1]}, p{t['percentile']:g}; the "
          f"costliest stage of the accurate chain: {t['costliest_stage']}. Speedups are the rank "
          "stage's (the finalists, the baselines and the accurate chain timed again in interleaved "
          "rounds) where it timed the chain, else the screen's.", "",
          "| budget | chosen | speedup | train | held out | holds | best uniform | speedup | "
          "costliest stage alone | speedup |", "|---|---|---|---|---|---|---|---|---|---|"]

    def cell(c):
        return ("none", "-") if not c else (f"`{_chain(c)}`", f"{_speedup(c):.2f}x")

    for c in tune["choices"]:
        chosen, flat, alone = cell(c["chosen"]), cell(c["best_uniform"]), \
            cell(c["best_costliest_stage_alone"])
        held = c.get("test", {}).get("percentile_error")
        holds = "-" if c["holds"] is None else "yes" if c["holds"] else "NO"
        md.append(f"| {100 * c['budget']:g} % | {chosen[0]} | {chosen[1]} | "
                  f"{_pct(c['chosen']['train_error']) if c['chosen'] else '-'} | {_pct(held)} | "
                  f"{holds} | {flat[0]} | {flat[1]} | {alone[0]} | {alone[1]} |")
    harness = ctx.get("harness", {})
    if harness:
        phases = ", ".join(f"{k} {v:.1f} s" for k, v in harness.get("phases_s", {}).items())
        md += ["", f"Wall time {harness['wall_s']:.1f} s ({phases}); of it decoding and resizing "
               f"the inputs {harness.get('inputs_s', 0):.1f} s, their truths "
               f"{harness.get('truth_s', 0):.1f} s."]
    md += ["", "Finalists per budget (rank speedup, training error):", ""]
    for c in tune["choices"]:
        finals = "; ".join(f"`{_chain(f)}` {_speedup(f):.2f}x {_pct(f['train_error'])}"
                           for f in c.get("finalists", []))
        md.append(f"- {100 * c['budget']:g} %: {finals or 'none'}")
    measured = tune["measured"]
    name = f"pipeline_tune_front_{index}"
    _figure(name, f"tune --pipeline {t['name']} on {ctx['device']['name']}",
            [(m["speedup"], m["train_error"]) for m in measured],
            [_chain(m) for m in measured], f"p{t['percentile']:g} training error (%)",
            out, written)
    return md + ["", f"![front of {t['name']}]({name}.png)", ""]


def pipeline_sections(pipelines, out, written):
    """The report's pipeline sections, one per document."""
    md = ["## Pipelines: chains of apps (docs/pipelines.md)", ""]
    for i, (path, doc) in enumerate(pipelines):
        section = _tune_section if doc["kind"] == "pipeline-tune" else _run_section
        md += section(path, doc, i, out, written)
    tuned = [(p, d) for p, d in pipelines if d["kind"] == "pipeline-tune"]
    return md + select_sections(tuned, out, written, "select_estimates_pipeline")


def fused_table(docs):
    """results/README.md's fused table: per kperf pipeline document and chain of stage variants
    run both ways, the fastest chain of separate launches beside the fastest fused launch of each
    design (the tile design, and the rolling one at its fastest strip height, where the document
    has it), and the fastest fused one's speedup over the fastest accurate chain of separate
    launches (the row's own baseline, accurate_time_ns) with its final error."""
    md = ["| chain | input | stages | unfused | fused, tiles | fused, rolling | fastest fused over "
          "unfused | over the accurate chain | final error |",
          "|---|---|---|---|---|---|---|---|---|"]
    for _, doc in docs:
        best = {}
        for r in doc["results"]:
            if r["status"] != "ok":
                continue
            design = ("rolling" if r.get("fuse_rows") else "tile") if r.get("fused") else None
            key = (r["input"]["name"], tuple(s["variant"] for s in r["stages"]), design)
            if key not in best or r["time_ns"]["median"] < best[key]["time_ns"]["median"]:
                best[key] = r
        chains = {}
        for (name, variants, design), r in best.items():
            if design:
                chains.setdefault((name, variants), []).append(r)
        order = sorted(chains.items(), key=lambda kv: min(r["time_ns"]["median"] for r in kv[1]))
        for (name, variants), fused in order:
            f = min(fused, key=lambda r: r["time_ns"]["median"])
            u = best.get((name, variants, None))
            tile, rolling = best.get((name, variants, "tile")), best.get((name, variants, "rolling"))
            t = f["time_ns"]["median"]
            ratio = f"{u['time_ns']['median'] / t:.2f}x" if u else "-"
            base = f.get("accurate_time_ns")
            over = f"{base / t:.2f}x" if base else "-"
            rolled = f"{_time(rolling)} ({rolling['fuse_rows']} rows)" if rolling else "-"
            md.append(f"| {f['pipeline']} | {name} | `{' > '.join(variants)}` | "
                      f"{_time(u) if u else '-'} | {_time(tile) if tile else '-'} | {rolled} | "
                      f"{ratio} | {over} | {_pct(f['final_error'])} |")
    return md
