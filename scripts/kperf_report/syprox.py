"""SYprox and the CUDA-aware paper: precision and host perforation end to end, hypervolumes by family, wrong elements, the output gallery."""

from collections import defaultdict
import os

import matplotlib.pyplot as plt
import numpy as np
import pareto

from .loading import APP_ORDER, primary_error
from .plotting import save


# SYprox (ICS'25 Section 7, Fig. 5): ranges over its apps on an NVIDIA V100S, skip factor 2.
PUBLISHED_SYPROX = ("host perforation: transfers 1.3-2x (float), 2.5-4.2x (half); kernels 1.7-4.2x. "
                    "Device perforation: kernels 0.5-3.5x, column schemes slowest (cache misses)")


def syprox_table(all_rows):
    """Rows timed with --transfers at their best launch shape: kernel, transfer and end-to-end
    speedups over the accurate float kernel, and the kernel's byte bound (accurate bytes over
    this configuration's bytes, stored sizes)."""
    accurate_bytes = {}
    for r in all_rows:
        if r.get("status") == "ok" and r["scheme"] == "accurate" and r["axes"] == "" and r.get("best_wg"):
            accurate_bytes[(r["device"], r["app"], r["input"]["width"], r["input"]["height"])] = r["bytes_model"]
    lines = []
    for r in all_rows:
        if r.get("status") != "ok" or not r.get("best_wg") or "end_to_end_ns" not in r:
            continue
        base = accurate_bytes.get((r["device"], r["app"], r["input"]["width"], r["input"]["height"]))
        bound = base / r["bytes_model"] if base and r.get("bytes_model") else float("nan")
        speed = r.get("speedup") or float("nan")
        recon = "" if r["scheme"] == "accurate" else "/" + r["recon"]
        lines.append(
            f"| {r['device']} | {r['app']} | {r['input']['width']}x{r['input']['height']} | {r['scheme']}{recon} | "
            f"{r.get('precision', 'f32')} | {r.get('perforate', 'device')} | {r.get('load', 'local')} | "
            f"{r['time_ns']['median'] / 1e3:.1f} | "
            f"{speed:.2f}x | {bound:.2f}x | {speed / bound:.2f} | {r.get('speedup_transfer') or float('nan'):.2f}x | "
            f"{r['host_pack_ns'] / 1e6:.2f} | {r['end_to_end_ns'] / 1e6:.2f} | "
            f"{r.get('speedup_end_to_end') or float('nan'):.2f}x | {100 * primary_error(r):.3g} % |")
    return lines


FAMILIES = ("input perforation", "output approximation", "mixed precision", "host perforation",
            "launch perforation", "combination")


def family_of(r):
    """SYprox's families: one approximation axis alone, or several combined; None for the
    accurate kernels. Rows name their family (kperf writes it, the tuner's rule); rows from before
    the field are classified here, the old way (no family for load paths, relaxed barriers and
    launch skips)."""
    if "family" in r:
        return None if r["family"] == "accurate" else r["family"]
    axes = set()
    if r["scheme"] != "accurate":
        axes.add("input")
    if r["output"] != "none":
        axes.add("output")
    if r["precision"] != "f32":
        axes.add("precision")
    if r["perforate"] == "host":
        axes.add("host")
    if r["relax"] != "none" or r["iterations_skip"]:
        return None
    named = {frozenset({"input"}): "input perforation", frozenset({"output"}): "output approximation",
             frozenset({"precision"}): "mixed precision", frozenset({"input", "host"}): "host perforation"}
    if not axes:
        return None
    return named.get(frozenset(axes), "combination")


def hypervolume_table(all_rows):
    """Per device, app and size: each family's Pareto front in (speedup, error) at best launch
    shapes, its hypervolume, and the binary coverage D(P, P_family) = HV(P) - HV(P_family) against
    the union P of every configuration; reference point (speedup 1.0, largest error seen)."""
    groups = defaultdict(list)
    for r in all_rows:
        if r.get("status") == "ok" and r.get("best_wg") and r.get("speedup"):
            groups[(r["device"], r["app"], r["input"]["width"], r["input"]["height"])].append(r)
    lines = []
    for (dev, app, w, h), rs in sorted(groups.items()):
        points = [(r["speedup"], primary_error(r)) for r in rs]
        by_family = defaultdict(list)
        for r, p in zip(rs, points):
            if family_of(r):
                by_family[family_of(r)].append(p)
        if len(by_family) < 2:
            continue
        ref = (1.0, max(e for _, e in points))
        union_hv = pareto.hypervolume(points, ref)
        # The named families first, then any other kperf writes (kernel axes), then the union.
        others = tuple(sorted(set(by_family) - set(FAMILIES)))
        for fam in FAMILIES + others + ("union",):
            pts = points if fam == "union" else by_family.get(fam, [])
            if not pts:
                continue
            front = pareto.pareto_front(pts)
            hv = pareto.hypervolume(pts, ref)
            lines.append(f"| {dev} | {app} | {w}x{h} | {fam} | {len(pts)} | {len(front)} | {hv:.4g} | "
                         f"{union_hv - hv:.4g} | ({ref[0]:.1f}, {100 * ref[1]:.3g} %) |")
    return lines


def fig_wrong_fraction(all_rows, out, written):
    """The CUDA-aware paper's view: normalised runtime (1/speedup) against the fraction of wrong
    elements, one point per configuration at its best launch shape."""
    groups = defaultdict(list)
    for r in all_rows:
        if (r.get("status") == "ok" and r.get("best_wg") and r.get("speedup") and r.get("error")
                and isinstance(r["error"].get("wrong_fraction"), (int, float))  # "nan": diverged
                and r["scheme"] + r["axes"] != "accurate"):
            groups[r["app"]].append((r["error"]["wrong_fraction"], 1.0 / r["speedup"]))
    if not groups:
        return False
    fig, ax = plt.subplots(figsize=(8.5, 5.5))
    for i, app in enumerate(a for a in APP_ORDER if a in groups):
        xs, ys = zip(*groups[app])
        ax.scatter([100 * x for x in xs], ys, color=f"C{i}", label=app, s=18)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xlabel("wrong elements (%): |T - A| > 1e-3 max(1, max|T|)")
    ax.set_ylabel("runtime / accurate runtime (1 / speedup)")
    ax.set_title("Normalised runtime against wrong elements (CUDA-aware approximate computing)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    save(fig, out, "fig_wrong_fraction", written)
    return True


def gallery(all_rows, out, written, budget=0.02):
    """For each app and input with saved outputs (--save-outputs): the accurate output, the
    fastest configuration within `budget` primary error, and |T - A| between them."""
    by_workload = defaultdict(list)
    for r in all_rows:
        if r.get("status") == "ok" and r.get("output_file") and os.path.exists(r["output_file"]):
            by_workload[(r["device"], r["app"], r["input"]["name"], r["input"]["width"], r["input"]["height"])].append(r)
    shown, apps_done = [], set()
    for (dev, app, name, w, h), rs in sorted(by_workload.items()):
        if (dev, app) in apps_done:
            continue  # one input per app and device
        accurate = [r for r in rs if r["scheme"] == "accurate" and r["axes"] == ""]
        within = [r for r in rs if not (r["scheme"] == "accurate" and r["axes"] == "") and primary_error(r) <= budget
                  and r.get("time_ns")]
        if not accurate or not within:
            continue
        chosen = min(within, key=lambda r: r["time_ns"]["median"])
        base = min(accurate, key=lambda r: r["time_ns"]["median"])
        t, a = np.load(base["output_file"]).astype(np.float64), np.load(chosen["output_file"]).astype(np.float64)
        fig, axes = plt.subplots(1, 3, figsize=(13, 4.6))
        lo, hi = float(np.nanmin(t)), float(np.nanmax(t))
        axes[0].imshow(t, cmap="gray", vmin=lo, vmax=hi)
        axes[0].set_title(f"accurate ({base['time_ns']['median'] / 1e3:.1f} us)")
        axes[1].imshow(a, cmap="gray", vmin=lo, vmax=hi)
        axes[1].set_title(f"{chosen['key'].split('/wg:')[0]}\n{chosen['time_ns']['median'] / 1e3:.1f} us, "
                          f"{100 * primary_error(chosen):.3g} % error", fontsize=9)
        diff = axes[2].imshow(np.abs(t - a), cmap="inferno")
        axes[2].set_title("|T - A|")
        fig.colorbar(diff, ax=axes[2], fraction=0.046)
        for ax in axes:
            ax.set_xticks([])
            ax.set_yticks([])
        fig.suptitle(f"{app} on {name} ({w}x{h}), {dev}: fastest configuration within {100 * budget:g} % error")
        stem = f"gallery_{app}_{name}".replace("/", "_")
        save(fig, out, stem, written)
        apps_done.add((dev, app))
        shown.append((app, name, chosen["key"], stem))
    return shown
