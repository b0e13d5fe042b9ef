"""The headline tables of results/README.md, one per kind, each made from committed runs alone
(report.py --table KIND RUNS...; scripts/make-reports.sh splices them in and --check holds them)."""

import math
import os
import statistics
from collections import defaultdict

from .loading import APP_ORDER, primary_error
from .tune import tune_size
from kperf_json import display_name

HALF_VARIANTS = [("accurate", "none"), ("rows:2", "nn"), ("rows:2", "li")]
HALF_TARGET = 0.85  # f16in and f16 at 0.85 of the float4 copy, at the stored sizes


def _apps(rows):
    present = {r["app"] for r in rows}
    return [a for a in APP_ORDER if a in present] + sorted(present - set(APP_ORDER))


def _ok(rows):
    return [r for r in rows if r.get("status") == "ok" and r.get("time_ns")]


def _median(r):
    return r["time_ns"]["median"]


def _pct(v):
    return f"{100 * v:.3g} %" if isinstance(v, (int, float)) and not math.isnan(v) else "-"


def _x(v):
    return f"{v:.2f}x" if isinstance(v, (int, float)) and not math.isnan(v) else "-"


def _size(r):
    return f"{r['input']['width']}^2" if r["input"]["width"] == r["input"]["height"] else \
        f"{r['input']['width']}x{r['input']['height']}"


def _later_apps_win(rows):
    """Rows of an app measured in a later file replace that app's rows of earlier files."""
    last = {}
    for r in rows:
        last[r["app"]] = r["source"]
    return [r for r in rows if r["source"] == last[r["app"]]]


def _fastest(rows, keep):
    best = None
    for r in rows:
        if keep(r) and (best is None or _median(r) < _median(best)):
            best = r
    return best


def _label(r):
    base = r["scheme"] if r["scheme"] in ("accurate", "stencil") else f"{r['scheme']}/{r['recon']}"
    return f"{base}/{r['axes']}" if r.get("axes") else base


def fig10_table(rows):
    """Per size and app: Paraprox's baseline (accurate, global path) and the fastest input
    perforation and output scheme over it, each at its best launch shape, load path and fill."""
    lines = ["| size | app | Paraprox baseline | best input perforation | speedup | error | "
             "best output scheme | speedup | error |", "|---|---|---|---|---|---|---|---|---|"]
    ok = _ok(rows)
    sizes = sorted({(r["input"]["width"], r["input"]["height"]) for r in ok}, key=lambda s: s[0] * s[1])
    for size in sizes:
        here = [r for r in ok if (r["input"]["width"], r["input"]["height"]) == size]
        for app in _apps(here):
            mine = [r for r in here if r["app"] == app]
            base = _fastest(mine, lambda r: r["scheme"] == "accurate" and r["output"] == "none"
                            and r["load"] == "global" and r["precision"] == "f32")
            if not base:
                continue
            inp = _fastest(mine, lambda r: r["scheme"] != "accurate" and r["output"] == "none")
            out = _fastest(mine, lambda r: r["scheme"] == "accurate" and r["output"] != "none")
            cell = lambda r: (f"`{_label(r)}`", _x(_median(base) / _median(r)), _pct(primary_error(r))) \
                if r else ("-", "-", "-")
            lines.append(f"| {_size(base)} | {app} | {_median(base) / 1e3:.1f} us | " +
                         " | ".join(cell(inp) + cell(out)) + " |")
    return lines


def half_cells(rows):
    """{(app, scheme, recon, precision): fastest row over shapes and load paths}."""
    cells = {}
    for r in _ok(_later_apps_win(rows)):
        if r["output"] != "none" or r.get("perforate") != "device":
            continue
        k = (r["app"], r["scheme"], r["recon"], r["precision"])
        if k not in cells or _median(r) < _median(cells[k]):
            cells[k] = r
    return cells


def half_table(rows):
    """Half storage at the fastest shape and load path: time and fraction of the float4 copy at
    the stored sizes (roofline), bold where f16in or f16 meets 0.85."""
    cells = half_cells(rows)
    head = ["| app |"] + [f" {s} {rc if rc != 'none' else ''} f32 / f16in / f16 |".replace("  ", " ")
                          for s, rc in HALF_VARIANTS]
    lines = ["".join(head), "|---|" + "---|" * len(HALF_VARIANTS)]
    met = total = 0
    for app in sorted({k[0] for k in cells}, key=lambda a: (APP_ORDER + [a]).index(a)):
        parts = []
        for scheme, recon in HALF_VARIANTS:
            texts = []
            for prec in ("f32", "f16in", "f16"):
                r = cells.get((app, scheme, recon, prec))
                if not r:
                    texts.append("-")
                    continue
                text = f"{_median(r) / 1e3:.1f} {r['load'][0]} {r['roofline']:.2f}"
                if prec != "f32":
                    total += 1
                    if r["roofline"] >= HALF_TARGET:
                        met += 1
                        text = f"{_median(r) / 1e3:.1f} {r['load'][0]} **{r['roofline']:.2f}**"
                texts.append(text)
            parts.append(" / ".join(texts))
        lines.append(f"| {app} | " + " | ".join(parts) + " |")
    lines.append("")
    lines.append(f"Times in us at 8192^2 (l: local tile, g: global path), then the fraction of the "
                 f"float4 copy; **{met} of {total}** half cells meet {HALF_TARGET}.")
    return lines


def syprox_table(rows):
    """SYprox end to end (--transfers): per app, the accurate f32 time end to end and the
    fastest configuration of each family by end-to-end time, with its kernel speedup."""
    ok = [r for r in _ok(rows) if r.get("end_to_end_ns")]
    lines = ["| app | accurate end to end | device perforation | host perforation | "
             "half storage alone |", "|---|---|---|---|---|"]
    for app in _apps(ok):
        mine = [r for r in ok if r["app"] == app]
        base = min((r for r in mine if r["scheme"] == "accurate" and r["precision"] == "f32"),
                   key=lambda r: r["end_to_end_ns"], default=None)
        if not base:
            continue
        families = [
            lambda r: r["scheme"] != "accurate" and r["perforate"] == "device",
            lambda r: r["perforate"] == "host",
            lambda r: r["scheme"] == "accurate" and r["precision"] != "f32",
        ]
        cells = []
        for keep in families:
            best = min((r for r in mine if keep(r)), key=lambda r: r["end_to_end_ns"], default=None)
            cells.append(f"`{_label(best)}` {_x(base['end_to_end_ns'] / best['end_to_end_ns'])} "
                         f"(kernel {_x(best.get('speedup'))}, {_pct(primary_error(best))})"
                         if best else "-")
        lines.append(f"| {app} | {base['end_to_end_ns'] / 1e6:.2f} ms | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("End-to-end speedups: host packing or conversion, upload, launches and download "
                 "against the accurate f32 kernel's; in brackets the kernel speedup and the error.")
    return lines


def tune_table(tunes):
    """Per tune document, app and budget: the choice, its speedup, training error and held-out
    verdict."""
    lines = ["| size | app | budget | chosen | speedup | train | held-out | holds |",
             "|---|---|---|---|---|---|---|---|"]
    for _, doc in tunes:
        where = tune_size(doc)
        for app in [a for a in APP_ORDER if a in doc["tune"]] + \
                sorted(set(doc["tune"]) - set(APP_ORDER)):
            for c in doc["tune"][app]["choices"]:
                ch = c.get("chosen")
                budget = f"{100 * c['budget']:g} %"
                if not ch:
                    lines.append(f"| {where} | {app} | {budget} | none within the budget | | | | |")
                    continue
                test = c.get("test", {})
                held = test.get("percentile_error", test.get("p95"))
                holds = "unmeasured" if c.get("holds") is None else "yes" if c["holds"] else "NO"
                lines.append(f"| {where} | {app} | {budget} | `{ch['variant']}` {ch['wg']} | "
                             f"{_x(ch.get('speedup'))} | {_pct(ch['train_error'])} | {_pct(held)} | "
                             f"{holds} |")
    return lines


def _repeat_cells(tunes):
    """Per app and budget of the first tune: each tune's choice for that cell (None where the tune
    has none)."""
    first = tunes[0][1]
    cells = []
    for app in [x for x in APP_ORDER if x in first["tune"]] + sorted(set(first["tune"]) - set(APP_ORDER)):
        for i, c in enumerate(first["tune"][app]["choices"]):
            per = []
            for _, doc in tunes:
                choices = doc["tune"].get(app, {}).get("choices", [])
                per.append(choices[i] if i < len(choices) else None)
            cells.append((app, c["budget"], per))
    return cells


def _within(speedups, tolerance=0.03):
    """Whether every speedup was measured and they lie within `tolerance` of the largest."""
    if not speedups or not all(isinstance(s, (int, float)) for s in speedups):
        return False
    return max(speedups) - min(speedups) <= tolerance * max(speedups)


def _speedup(c):
    return ((c or {}).get("chosen") or {}).get("speedup")


def _variant(c):
    return ((c or {}).get("chosen") or {}).get("variant")


def tune_agreement(tunes):
    """For every pair of tunes of the same command: in how many cells (app, budget) they chose
    alike and their speedups lie within 3 %, and the largest gap between their speedups."""
    cells = _repeat_cells(tunes)
    lines = []
    for i in range(len(tunes)):
        for j in range(i + 1, len(tunes)):
            pairs = [(c[i], c[j]) for _, _, c in cells]
            same = sum(_variant(a) is not None and _variant(a) == _variant(b) for a, b in pairs)
            near = sum(_within([_speedup(a), _speedup(b)]) for a, b in pairs)
            gaps = [abs(_speedup(a) - _speedup(b)) / max(_speedup(a), _speedup(b))
                    for a, b in pairs if _within([_speedup(a), _speedup(b)], 1.0)]
            worst = f"{100 * max(gaps):.1f} %" if gaps else "none measured"
            lines.append(f"- run {i + 1} and run {j + 1}: the same choice in **{same} of {len(pairs)}** "
                         f"cells, speedups within 3 % in **{near} of {len(pairs)}**; the largest gap "
                         f"{worst}.")
    return lines


def tune_repeat_table(tunes):
    """Tunes of the same command side by side: per app and budget each run's choice, speedup
    and held-out verdict, whether all chose alike and whether all their speedups lie within 3 %
    of the largest; then every pair's agreement (tune_agreement)."""
    def held(c):
        if c is None:
            return "none"
        return "unmeasured" if c.get("holds") is None else "yes" if c["holds"] else "NO"

    runs = range(1, len(tunes) + 1)
    lines = ["| app | budget | " + " | ".join(f"run {n} | speedup | holds" for n in runs) +
             " | same | within 3 % |",
             "|---|---|" + "---|---|---|" * len(tunes) + "---|---|"]
    for app, budget, per in _repeat_cells(tunes):
        alike = _variant(per[0]) is not None and all(_variant(c) == _variant(per[0]) for c in per)
        cols = " | ".join(f"`{_variant(c) or 'none'}` | {_x(_speedup(c))} | {held(c)}" for c in per)
        lines.append(f"| {app} | {100 * budget:g} % | {cols} | {'yes' if alike else 'no'} | "
                     f"{'yes' if _within([_speedup(c) for c in per]) else 'no'} |")
    lines.append("")
    lines += [f"Run {n}: `{os.path.basename(path)}`." for n, (path, _) in zip(runs, tunes)]
    lines.append("")
    return lines + tune_agreement(tunes)


def energy_headline(rows):
    """Energy per launch against time: per app, the fastest configuration's speedup and its
    energy saving over the accurate kernel (median over the energy windows)."""
    ok = [r for r in _ok(rows) if isinstance(r.get("energy"), dict)]
    lines = ["| app | accurate J/launch | fastest configuration | speedup | energy saved | error |",
             "|---|---|---|---|---|---|"]
    for app in _apps(ok):
        mine = [r for r in ok if r["app"] == app]
        base = _fastest(mine, lambda r: r["scheme"] == "accurate" and not r.get("axes"))
        best = _fastest(mine, lambda r: True)
        if not base or not best:
            continue
        eb, e = base["energy"]["j_per_launch"], best["energy"]["j_per_launch"]
        lines.append(f"| {app} | {eb * 1e3:.2f} mJ | `{_label(best)}` | "
                     f"{_x(_median(base) / _median(best))} | {_x(eb / e)} | {_pct(primary_error(best))} |")
    return lines


def sizes_table(rows, scheme="rows:2/nn"):
    """Speedup of one scheme (every other axis at its default) over the accurate kernel, each at
    its best shape, by input size, per app."""
    ok = [r for r in _ok(rows) if not r.get("axes") and r.get("best_wg") and _label(r) == scheme]
    sizes = sorted({r["input"]["width"] for r in ok})
    lines = [f"| {scheme} | " + " | ".join(f"{s}^2" for s in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    grid = defaultdict(dict)
    for r in ok:
        grid[r["app"]][r["input"]["width"]] = r.get("speedup")
    for app in _apps(ok):
        lines.append(f"| {app} | " + " | ".join(_x(grid[app].get(s)) for s in sizes) + " |")
    return lines


def _best_by(rows, key, value):
    """{key(r): the row with the largest value(r)} over rows where value(r) is a number."""
    out = {}
    for r in rows:
        v = value(r)
        if isinstance(v, (int, float)) and not math.isnan(v):
            k = key(r)
            if k not in out or v > value(out[k]):
                out[k] = r
    return out


def _span(values):
    values = sorted(values)
    return "-" if not values else _x(values[0]) if values[0] == values[-1] else \
        f"{values[0]:.2f}-{values[-1]:.2f}x"


def targets_table(rows):
    """Where each target stands, computed from the Fig. 10 (8192^2 and 1024^2), half-storage and
    SYprox runs given; a target whose runs are not among them says so."""
    ok = _ok(rows)
    at = lambda size: [r for r in ok if r["input"]["width"] == size]
    outs = lambda rs: [r for r in rs if r["scheme"] == "accurate" and r["output"] != "none"]
    lines = ["| target | measured | status |", "|---|---|---|"]

    def add(name, measured, met):
        status = "not measured here" if met is None else "met" if met else "not met"
        lines.append(f"| {name} | {measured} | {status} |")

    big = _best_by([r for r in outs(at(8192)) if r["app"] in ("gaussian3", "median")
                    and r["output"].split(":")[0] == "rows"],
                   lambda r: (r["app"], r["output"]), lambda r: r.get("speedup_vs_global"))
    vals = [r["speedup_vs_global"] for r in big.values()]
    add("Paraprox rows:2 and rows:3 (gaussian3, median) >= 0.95x the global baseline, 8192^2",
        _span(vals), min(vals) >= 0.95 if vals else None)

    inv = [r for r in at(8192) if r["app"] == "inversion"]
    acc = _fastest(inv, lambda r: r["scheme"] == "accurate" and r["output"] == "none"
                   and r["precision"] == "f32")
    rows3 = _fastest(inv, lambda r: r["scheme"] == "rows:3" and r["recon"] == "nn"
                     and r["output"] == "none" and r["precision"] == "f32" and r["perforate"] == "device")
    if acc and rows3:
        s = _median(acc) / _median(rows3)
        add("inversion rows:3 nn >= 0.90 of its 1.5x byte bound, 8192^2",
            f"{_x(s)} ({s / 1.5:.2f} of the bound)", s / 1.5 >= 0.90)
    else:
        add("inversion rows:3 nn >= 0.90 of its 1.5x byte bound, 8192^2", "-", None)

    cells = _best_by(outs(at(1024)), lambda r: (r["app"], r["output"], r["output_recon"]),
                     lambda r: r.get("speedup_vs_global"))
    under = sorted((r["speedup_vs_global"], f"{a} {o} {rc}") for (a, o, rc), r in cells.items()
                   if r["speedup_vs_global"] < 1.0)
    worst = f"; the slowest {under[0][1]} {under[0][0]:.2f}x" if under else ""
    add("1024^2: no output scheme slower than the global baseline (best fill and load path)",
        f"{len(cells) - len(under)} of {len(cells)} cells{worst}" if cells else "-",
        not under if cells else None)

    sweeps = _half_sources(rows)
    half = half_cells([r for r in rows if r["source"] in sweeps and r["input"]["width"] == 8192])
    halves = [r for k, r in half.items() if k[3] != "f32"]
    met = sum(r["roofline"] >= HALF_TARGET for r in halves)
    add(f"f16in and f16 >= {HALF_TARGET} of the float4 copy, 8192^2",
        f"{met} of {len(halves)} cells" if halves else "-", met == len(halves) if halves else None)
    slower = [k for k, r in half.items() if k[3] != "f32" and (k[0], k[1], k[2], "f32") in half
              and _median(r) > _median(half[(k[0], k[1], k[2], "f32")])]
    add("half storage never slower than f32 with the same scheme",
        f"{len(halves) - len(slower)} of {len(halves)} cells" if halves else "-",
        not slower if halves else None)
    li = [(_median(half[(a, "accurate", "none", "f32")]) / _median(r))
          for (a, s, rc, p), r in half.items() if (s, rc, p) == ("rows:2", "li", "f32")
          and (a, "accurate", "none", "f32") in half]
    add("kperf rows:2 li >= 1.15x the accurate kernel, f32, 8192^2", _span(li),
        min(li) >= 1.15 if li else None)

    # Each packing configuration's median over the runs given (repeats of one sweep).
    packs = defaultdict(list)
    for r in ok:
        if isinstance(r.get("host_pack"), dict) and isinstance(r["host_pack"].get("of_memcpy"), (int, float)):
            packs[(r["app"], r["scheme"], r["recon"], r["precision"])].append(r["host_pack"]["of_memcpy"])
    medians = [sorted(v)[len(v) // 2] if len(v) % 2 else sum(sorted(v)[len(v) // 2 - 1:len(v) // 2 + 1]) / 2
               for v in packs.values()]
    add("host packing >= 0.50 of memcpy (--transfers; median over the runs)",
        f"{min(medians):.2f}-{max(medians):.2f} of memcpy" if medians else "no host_pack rows",
        min(medians) >= 0.5 if medians else None)
    return lines


def _half_sources(rows):
    """The half-storage sweeps among the runs: kernel timing (no --transfers), no output scheme,
    and half precisions beside f32."""
    by = defaultdict(list)
    for r in rows:
        by[r["source"]].append(r)
    return {s for s, rs in by.items()
            if not any(r.get("end_to_end_ns") or r["output"] != "none" for r in rs)
            and any(r["precision"] != "f32" for r in rs)}


def cache_repeat_table(rows, scheme="rows:2"):
    """Runs of one command repeated, warm and cold (kperf run --cold): per cache, app and
    precision, the range over the runs of each run's median over inputs of the accurate kernel's
    time over `scheme`'s (each input a workload of its own buffers), and the largest spread of
    that ratio over one run's inputs (sd / median)."""
    ok = [r for r in _ok(rows) if r["scheme"] in ("accurate", scheme) and r["output"] == "none"]
    apps = _apps(ok)
    groups = sorted({(r["app"], r["precision"]) for r in ok}, key=lambda g: (apps.index(g[0]), g[1]))
    lines = ["| cache | runs | " + " | ".join(f"{a} {p}" for a, p in groups) + " |",
             "|---|---|" + "---|" * len(groups)]
    for cache in ("warm", "cold"):
        sources = sorted({r["source"] for r in ok if r["cache"] == cache})
        if not sources:
            continue
        cells = []
        for app, prec in groups:
            medians, spreads = [], []
            for source in sources:
                by_input = defaultdict(dict)
                for r in ok:
                    if r["source"] == source and r["app"] == app and r["precision"] == prec:
                        by_input[r["input"]["name"]][r["scheme"]] = _median(r)
                ratios = [m["accurate"] / m[scheme] for m in by_input.values() if len(m) == 2]
                if ratios:
                    medians.append(statistics.median(ratios))
                    spreads.append(statistics.pstdev(ratios) / medians[-1])
            cells.append(f"{min(medians):.2f}-{max(medians):.2f}x (± {100 * max(spreads):.0f} %)"
                         if medians else "-")
        lines.append(f"| {cache} | {len(sources)} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Each cell: the accurate kernel's median time over `{scheme}`'s, the median over "
                 "a run's inputs, from the lowest run to the highest; in brackets the largest "
                 "spread over one run's inputs (sd / median).")
    return lines


def _chain(c):
    if not c:
        return "none"
    return ("fused " if c.get("fused") else "") + " > ".join(f"{s['variant']}" for s in c["stages"])


def _chain_speedup(c):
    return c.get("rank_speedup", c["speedup"]) if c else None


def pipeline_tune_table(docs):
    """Per chain and budget of kperf tune --pipeline documents (the first of each chain): the
    choice with its rank speedup, training and held-out error and verdict, the best uniform chain
    and the costliest stage alone within the same budget, and whether the chain's other documents
    (the same tune repeated) chose alike with speedups within 3 %."""
    by_chain = defaultdict(list)
    for _, doc in docs:
        by_chain[doc["context"]["tune_pipeline"]["name"]].append(doc)
    lines = ["| chain | budget | chosen | speedup | train | held out | holds | best uniform | "
             "speedup | costliest stage alone | speedup | repeats alike |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, runs in by_chain.items():
        for i, c in enumerate(runs[0]["tune"]["choices"]):
            ch, flat, alone = c["chosen"], c["best_uniform"], c["best_costliest_stage_alone"]
            holds = "unmeasured" if c.get("holds") is None else "yes" if c["holds"] else "NO"
            others = [r["tune"]["choices"][i]["chosen"] for r in runs[1:]]
            alike = all(o and _chain(o) == _chain(ch) and
                        _within([_chain_speedup(o), _chain_speedup(ch)]) for o in others)
            repeats = f"{'yes' if alike else 'no'} ({len(others)})" if others else "-"
            lines.append(
                f"| {name} | {100 * c['budget']:g} % | `{_chain(ch)}` | {_x(_chain_speedup(ch))} | "
                f"{_pct(ch['train_error'] if ch else None)} | "
                f"{_pct(c.get('test', {}).get('percentile_error'))} | {holds} | `{_chain(flat)}` | "
                f"{_x(_chain_speedup(flat))} | `{_chain(alone)}` | {_x(_chain_speedup(alone))} | "
                f"{repeats} |")
    return lines


def harness_table(docs):
    """Where each run's wall time went (its context's harness block): the configurations, the
    programs built, the wall time and its phases."""
    lines = ["| run | device | sizes | configurations | builds | wall | compile | truths | timed launches "
             "| metrics | other |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for path, doc in docs:
        ctx = doc["context"]
        h = ctx.get("harness", {})
        phases = h.get("phases_s", {})
        shown = ("compile", "reference", "timed_launches", "metrics")
        other = sum(v for k, v in phases.items() if k not in shown and isinstance(v, (int, float)))
        sizes = sorted({(r["input"]["width"], r["input"]["height"]) for r in doc["results"]
                        if isinstance(r.get("input"), dict)})
        size_text = ", ".join(f"{w}^2" if w == h_ else f"{w}x{h_}" for w, h_ in sizes)
        cells = [f"{phases[k]:.1f} s" if k in phases else "-" for k in shown]
        lines.append(f"| `{display_name(path)}` | {ctx.get('device', {}).get('name', '?')} | "
                     f"{size_text} | {h.get('configurations', len(doc['results']))} | "
                     f"{h.get('builds', '-')} | {h.get('wall_s', float('nan')):.1f} s | "
                     + " | ".join(cells) + f" | {other:.1f} s |")
    return lines


TABLES = {"fig10": fig10_table, "half": half_table, "syprox": syprox_table, "energy": energy_headline,
          "sizes": sizes_table, "targets": targets_table, "cache-repeat": cache_repeat_table}
