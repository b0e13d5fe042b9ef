"""kperf tune documents: choices with held-out verdicts, fronts, hypervolumes, the Paraprox comparison, galleries."""

from collections import defaultdict
import os

from kperf_json import display_name
import matplotlib.pyplot as plt
import numpy as np
import pareto

from .loading import APP_ORDER
from .plotting import no_data, save
from .select import select_sections


def tune_device(doc):
    return doc["context"].get("device", {}).get("name", "unknown device")


def tune_size(doc):
    """The inputs' size, and the time ranked where it is not the kernel's."""
    size = doc["context"]["tune"].get("size")
    text = f"{size[0]}x{size[1]}" if size else "native"
    return text + (" end to end" if doc["context"]["tune"].get("objective") == "end-to-end" else "")


def tune_choices_table(tunes):
    lines = []
    for path, doc in tunes:
        for app, t in doc["tune"].items():
            for c in t["choices"]:
                head = f"| {tune_device(doc)} | {tune_size(doc)} | {app} | {100 * c['budget']:g} % |"
                ch = c.get("chosen")
                if not ch:
                    lines.append(head + f" none | | | | | | | | {c['verdict']} |")
                    continue
                test = c.get("test", {})
                fmt = lambda v: f"{100 * v:.3g} %" if isinstance(v, (int, float)) else "-"
                spd = lambda v: f"{v:.2f}x" if isinstance(v, (int, float)) else "-"
                lines.append(head + f" `{ch['variant']}` | {ch['wg']} | {spd(ch.get('speedup'))} | "
                             f"{spd(ch.get('speedup_vs_global'))} | {fmt(ch['train_error'])} | "
                             f"{fmt(test.get('mean'))} | {fmt(test.get('percentile_error', test.get('p95')))} | {fmt(test.get('max'))} | "
                             f"{'holds' if c.get('holds') else 'DOES NOT HOLD'}: {c['verdict']} |")
    return lines


def fig_tune_fronts(tunes, out, written):
    """Per tune run and app: every point (median time against training error, log error
    axis), the Pareto front, the choice per budget and the budgets."""
    stems = []
    for n, (path, doc) in enumerate(tunes):
        apps = [a for a in APP_ORDER if a in doc["tune"]] + sorted(set(doc["tune"]) - set(APP_ORDER))
        if not apps:
            continue
        cols = min(3, len(apps))
        rows_n = (len(apps) + cols - 1) // cols
        fig, axes = plt.subplots(rows_n, cols, figsize=(5.2 * cols, 4.2 * rows_n), squeeze=False)
        floor = 1e-7  # exact configurations sit at float rounding; drawn at this floor
        for ax, app in zip(axes.flat, apps):
            t = doc["tune"][app]
            pts = t["points"]
            if not pts:
                no_data(ax, f"{app}: no point")
                continue
            fam_colors = {}
            for p in pts:
                fam = p["family"]
                color = fam_colors.setdefault(fam, f"C{len(fam_colors)}")
                ax.scatter(p["time_ns"] / 1e3, max(p["train_error"], floor), s=14, color=color, alpha=0.5,
                           label=fam if list(fam_colors).count(fam) == 1 and fam not in ax.get_legend_handles_labels()[1] else None)
            front = sorted(t["front"], key=lambda p: p["time_ns"])
            ax.step([p["time_ns"] / 1e3 for p in front], [max(p["train_error"], floor) for p in front],
                    where="post", color="k", lw=1.2, label="Pareto front")
            for i, c in enumerate(t["choices"]):
                ax.axhline(c["budget"], color="grey", ls=":", lw=0.8)
                if c.get("chosen"):
                    ax.scatter(c["chosen"]["time_ns"] / 1e3, max(c["chosen"]["train_error"], floor), marker="*",
                               s=160, color="red", edgecolor="k", zorder=5,
                               label="chosen (per budget)" if i == 0 else None)
            ax.set_yscale("log")
            ax.set_xlabel("median time (us), first training input")
            ax.set_ylabel(f"p{doc['context']['tune']['percentile']:g} training error ({t['primary_metric']})")
            ax.set_title(app)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6)
        for ax in list(axes.flat)[len(apps):]:
            ax.axis("off")
        fig.suptitle(f"kperf tune on {tune_device(doc)}, {tune_size(doc)}: fronts and choices "
                     f"(budgets {', '.join(f'{100 * b:g} %' for b in doc['context']['tune']['budgets'])})")
        fig.tight_layout()
        stem = f"tune_fronts_{n}"
        save(fig, out, stem, written)
        stems.append((stem, path))
    return stems


def tune_hypervolume_table(tunes):
    """SYprox Table 3 on tune points: each family's front in (speedup, training error), its HV
    and D(P, P_family); reference (speedup 1.0, the largest budget)."""
    lines = []
    tune_families = ("input perforation", "host perforation", "output approximation", "mixed precision",
                     "relaxed barrier", "loop perforation", "combination")
    for path, doc in tunes:
        ref_e = max(doc["context"]["tune"]["budgets"])
        for app, t in doc["tune"].items():
            pts = [p for p in t["points"] if isinstance(p.get("speedup"), (int, float))]
            union = [(p["speedup"], p["train_error"]) for p in pts]
            union_hv = pareto.hypervolume(union, (1.0, ref_e))
            for fam in tune_families + ("union",):
                fp = union if fam == "union" else [(p["speedup"], p["train_error"]) for p in pts if p["family"] == fam]
                if not fp:
                    continue
                hv = pareto.hypervolume(fp, (1.0, ref_e))
                lines.append(f"| {tune_device(doc)} | {tune_size(doc)} | {app} | {fam} | {len(fp)} | "
                             f"{len(pareto.pareto_front(fp))} | {hv:.4g} | {union_hv - hv:.4g} | "
                             f"(1.0, {100 * ref_e:g} %) |")
    return lines


def fig_tune_paraprox(tunes, out, written):
    """CGO'18 Fig. 10 on tune points: input perforation against Paraprox's output schemes,
    speedup over Paraprox's baseline (accurate, global loads) against training error."""
    groups = []
    for path, doc in tunes:
        for app, t in doc["tune"].items():
            pts = [p for p in t["points"] if isinstance(p.get("speedup_vs_global"), (int, float))
                   and p["family"] in ("input perforation", "output approximation", "accurate")]
            if pts:
                groups.append((f"{app}, {tune_device(doc)}, {tune_size(doc)}", pts))
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(8.5, 5.5))
    for i, (label, pts) in enumerate(groups):
        for fam, marker in (("input perforation", "x"), ("output approximation", "o"), ("accurate", "s")):
            sel = [p for p in pts if p["family"] == fam]
            if sel:
                ax.scatter([p["speedup_vs_global"] for p in sel], [max(100 * p["train_error"], 1e-5) for p in sel],
                           marker=marker, color=f"C{i % 10}", s=22, label=f"{label}: {fam}")
    ax.set_yscale("log")
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xlabel("speedup over Paraprox's baseline (accurate, --load global)")
    ax.set_ylabel("training error (%)")
    ax.set_title("Input perforation (x) against Paraprox output schemes (o), tune points")
    ax.legend(fontsize=6)
    ax.grid(alpha=0.3)
    save(fig, out, "tune_paraprox", written)
    return "tune_paraprox"


def tune_gallery(tunes, out, written):
    """Per tune run and app, on the first test input: the accurate output, each budget's choice
    and |T - A|."""
    shown = []
    for n, (path, doc) in enumerate(tunes):
        test_inputs = doc["context"]["tune"]["test"]["inputs"]
        if not test_inputs:
            continue
        name = test_inputs[0]
        for app, t in doc["tune"].items():
            acc = (t.get("accurate_test_outputs") or {}).get(name, {}).get("output_file")
            picks, seen = [], set()
            for c in t["choices"]:
                ch = c.get("chosen")
                f = ((c.get("test") or {}).get("errors") or {}).get(name, {}).get("output_file")
                if ch and f and not c.get("exact") and (ch["variant"], ch["wg"]) not in seen:
                    seen.add((ch["variant"], ch["wg"]))
                    picks.append((c, f))
            if not acc or not os.path.exists(acc) or not picks:
                continue
            truth = np.load(acc).astype(np.float64)
            lo, hi = float(np.nanmin(truth)), float(np.nanmax(truth))
            fig, axes = plt.subplots(len(picks), 3, figsize=(13, 4.4 * len(picks)), squeeze=False)
            for row, (c, f) in zip(axes, picks):
                approx = np.load(f).astype(np.float64)
                row[0].imshow(truth, cmap="gray", vmin=lo, vmax=hi)
                row[0].set_title("accurate")
                row[1].imshow(approx, cmap="gray", vmin=lo, vmax=hi)
                row[1].set_title(f"budget {100 * c['budget']:g} %: {c['chosen']['variant']} ({c['chosen']['wg']})\n"
                                 f"{c['chosen'].get('speedup') or float('nan'):.2f}x, test error "
                                 f"{100 * c['test']['errors'][name]['error']:.3g} %", fontsize=9)
                d = row[2].imshow(np.abs(truth - approx), cmap="inferno")
                row[2].set_title("|T - A|")
                fig.colorbar(d, ax=row[2], fraction=0.046)
                for ax in row:
                    ax.set_xticks([])
                    ax.set_yticks([])
            fig.suptitle(f"{app} on held-out {name}, {tune_device(doc)}, {tune_size(doc)}")
            stem = f"tune_gallery_{n}_{app}"
            save(fig, out, stem, written)
            shown.append((app, name, stem))
    return shown


def harness_sessions(harness):
    """A tune's harness block and those of the sessions --resume continued, newest first."""
    while isinstance(harness, dict) and harness:
        yield harness
        harness = harness.get("resumed_from")


def tune_harness_table(tunes):
    """Where each tune's wall time went: its stages' sum and the runner's phases (summed over the
    sessions of a resumed tune), the programs built and how many came from the binary cache."""
    lines = ["| run | sweep | wall | builds | cache hits | compile | reference | upload | metrics "
             "| timed launches | truths kept |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for path, doc in tunes:
        ctx = doc["context"]
        wall, builds, phases = 0.0, 0, defaultdict(float)
        for e in harness_sessions(ctx.get("harness", {})):
            wall += e.get("wall_s", 0.0)
            builds += e.get("builds", 0)
            for k, v in e.get("phases_s", {}).items():
                phases[k] += v
        cache = ctx.get("binary_cache")
        hits = cache.get("hits", 0) if isinstance(cache, dict) else "off"
        truths = ctx.get("harness", {}).get("truth_cache", {}).get("grids", "-")
        lines.append(f"| `{display_name(path)}` | {ctx['tune'].get('sweep', 'every')} | {wall:.0f} s | "
                     f"{builds} | {hits} | {phases['compile']:.0f} s | {phases['reference']:.0f} s | "
                     f"{phases['upload']:.0f} s | {phases['metrics']:.0f} s | "
                     f"{phases['timed_launches']:.1f} s | {truths} |")
    return lines


def tune_sections(tunes, out, written):
    md = ["## Tuning under an error budget (kperf tune, SPEC 12)", ""]
    for path, doc in tunes:
        ctx, tc = doc["context"], doc["context"]["tune"]
        sessions, wall, builds, stages = 0, 0.0, 0, defaultdict(float)
        for e in harness_sessions(ctx.get("harness", {})):
            sessions += 1
            wall += e.get("wall_s", 0.0)
            builds += e.get("builds", 0)
            for k, v in e.get("stages_s", {}).items():
                stages[k] += v
        md += [f"- `{display_name(path)}`: {tune_device(doc)}, inputs {tune_size(doc)}, "
               f"{len(tc['train']['inputs'])} training inputs ({', '.join(tc['train']['inputs'])}), "
               f"{len(tc['test']['inputs'])} held-out ({', '.join(tc['test']['inputs'])}); "
               f"statistic p{tc['percentile']:g} over inputs; {len(doc['results'])} rows, "
               f"{builds} builds, {wall:.0f} s wall in {sessions} session(s) "
               f"(stages: {', '.join(f'{k} {v:.0f} s' for k, v in stages.items())})."]
    md += ["", "Method: " + tunes[0][1]["context"]["tune"]["method"], "",
           "| device | size | app | budget | chosen | wg | speedup | vs Paraprox baseline | train error "
           "| test mean | test percentile | test max | verdict |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    md += tune_choices_table(tunes)
    md += ["", "Where the time went (the runner's phases summed over the stages; under --devices, over "
           "every device's processes; cache hits: programs loaded from kperf's binary cache, "
           "compiled by worker processes or an earlier run):", ""] + tune_harness_table(tunes)
    if len(tunes) > 1 and len({(tune_size(d), tuple(d["context"]["tune"]["budgets"]))
                               for _, d in tunes}) == 1:
        from .headlines import tune_repeat_table  # headlines imports this module
        md += ["", "### The same tune, repeated", "",
               "Per app and budget, each run's choice, its rank-stage speedup and its held-out "
               "verdict; `within 3 %`: every run's speedup within 3 % of the largest.", ""]
        md += tune_repeat_table(tunes)
    md += ["", "Pruned during the search (per run and app): " + "; ".join(
        f"{app} {len(t['pruned'])} of {len(t['pruned']) + len({p['variant'] for p in t['points']})}"
        for _, doc in tunes for app, t in doc["tune"].items()), ""]
    for stem, path in fig_tune_fronts(tunes, out, written):
        md += [f"![fronts of {display_name(path)}]({stem}.png)", ""]
    hv = tune_hypervolume_table(tunes)
    if hv:
        md += ["### Hypervolume by family (SYprox Table 3)", "",
               "Points: every surviving configuration (speedup over the accurate kernel, p95 training error). "
               "HV: the area dominated up to the reference point (speedup 1.0, error = the largest budget), "
               "exact by a sorted sweep (`scripts/pareto.py`); D(P, P_family) = HV(union) - HV(family).", "",
               "| device | size | app | family | points | front | HV | D(P, P_family) | reference |",
               "|---|---|---|---|---|---|---|---|---|"] + hv + [""]
    pp = fig_tune_paraprox(tunes, out, written)
    if pp:
        md += ["### CGO'18 Fig. 10 on the tune points", "", f"![Paraprox]({pp}.png)", ""]
    md += select_sections(tunes, out, written)
    shown = tune_gallery(tunes, out, written)
    if shown:
        md += ["### Gallery: accurate, chosen and |T - A| on a held-out input", ""]
        md += [f"![{app} on {name}]({stem}.png)" for app, name, stem in shown]
        md.append("")
    return md
