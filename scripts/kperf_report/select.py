"""kperf tune --select canary (SPEC 15), of kperf tune and kperf tune --pipeline documents: holds
and speedups of the per-input choices beside the static choice, and the canary's estimates
against the true errors."""

import os

from kperf_json import display_name
import matplotlib.pyplot as plt
import numpy as np

from .plotting import save


def _blocks(path, doc):
    """(what, choice, select block, canary block) of a document, per app (or chain) and budget."""
    if doc["kind"] == "pipeline-tune":
        canary = doc["tune"].get("canary")
        name = doc["context"]["tune_pipeline"]["name"]
        for c in doc["tune"]["choices"]:
            if "select" in c:
                yield name, c, c["select"], canary
        return
    for app, t in doc["tune"].items():
        for c in t["choices"]:
            if "select" in c:
                yield app, c, c["select"], t.get("canary")


def has_selections(docs):
    return any(True for path, doc in docs for _ in _blocks(path, doc))


def _size(doc):
    if doc["kind"] == "pipeline-tune":
        size = doc["context"]["tune_pipeline"]["size"]
    else:
        size = doc["context"]["tune"].get("size")
    return f"{size[0]}x{size[1]}" if size else "native"


def _x(v):
    return f"{v:.2f}x" if isinstance(v, (int, float)) else "-"


def _pct(v):
    return f"{100 * v:.3g} %" if isinstance(v, (int, float)) else "-"


def _holds(j):
    return "-" if j.get("holds") is None else "yes" if j["holds"] else "NO"


def _median(values):
    return float(np.median(values)) if values else None


def select_table(docs):
    """Per run, app (or chain) and budget: the static choice's verdict and held-out speedup beside
    the canary's verdict, test percentile error, net speedup (the canary's time counted), kernel
    speedup (not counted), net over static, the median canary time and the coverage of its
    bounds."""
    lines = ["| run | size | app | budget | static holds | static speedup | canary holds | "
             "canary test error | net speedup | kernel speedup | net / static | canary time | "
             "bounds held |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for path, doc in docs:
        for what, c, s, canary in _blocks(path, doc):
            net, fixed = s.get("speedup_net"), s.get("speedup_static")
            ratio = net / fixed if isinstance(net, (int, float)) and isinstance(fixed, (int, float)) \
                and fixed > 0 else None
            times = [pi["canary_ns"] for pi in s["per_input"].values() if "canary_ns" in pi]
            t = _median(times)
            tr = (canary or {}).get("tracking", {})
            held = f"{tr['covered']} of {tr['pairs']}" if tr.get("pairs") else "-"
            lines.append(f"| `{display_name(path)}` | {_size(doc)} | {what} | {100 * c['budget']:g} % | "
                         f"{_holds(c)} | {_x(fixed)} | {_holds(s)} | {_pct(s.get('percentile_error'))} | "
                         f"{_x(net)} | {_x(s.get('speedup_kernel'))} | {_x(ratio)} | "
                         f"{'-' if t is None else f'{t / 1e3:.0f} us'} | {held} |")
    return lines


def select_summary(docs):
    """The counts the issue's targets ask for, per run: cells that hold, static and canary."""
    lines = []
    for path, doc in docs:
        cells = list(_blocks(path, doc))
        if not cells:
            continue
        static = sum(1 for _, c, _, _ in cells if c.get("holds") is True)
        canary = sum(1 for _, _, s, _ in cells if s.get("holds") is True)
        ratios = [s["speedup_net"] / s["speedup_static"] for _, c, s, _ in cells
                  if c.get("holds") is True and isinstance(s.get("speedup_net"), (int, float))
                  and isinstance(s.get("speedup_static"), (int, float)) and s["speedup_static"] > 0]
        worst = f"; where the static choice holds, net / static is at least {min(ratios):.2f}x " \
                f"(median {_median(ratios):.2f}x)" if ratios else ""
        lines.append(f"- `{display_name(path)}` ({_size(doc)}): the canary holds in {canary} of "
                     f"{len(cells)} cells, the static choice in {static}{worst}.")
    return lines


def fig_select_estimates(docs, out, written, stem="select_estimates"):
    """Every canary estimate against the true error of its rung on its input (both axes log),
    the bound (estimate + margin) as a bar above each point; below the diagonal the bound held."""
    pairs = []
    for path, doc in docs:
        blocks = [(doc["context"]["tune_pipeline"]["name"], doc["tune"].get("canary"))] \
            if doc["kind"] == "pipeline-tune" else [(app, t.get("canary")) for app, t in doc["tune"].items()]
        for what, canary in blocks:
            for e in (canary or {}).get("estimates", []):
                if all(isinstance(e.get(k), (int, float)) for k in ("estimate", "margin", "error")):
                    pairs.append((what, e))
    if not pairs:
        return None
    floor = 1e-6
    fig, ax = plt.subplots(figsize=(7, 6))
    colours = {}
    for what, e in pairs:
        first = what not in colours
        colour = colours.setdefault(what, f"C{len(colours) % 10}")
        x, lo, hi = max(e["error"], floor), max(e["estimate"], floor), max(e["estimate"] + e["margin"], floor)
        ax.plot([x, x], [lo, hi], color=colour, lw=0.8, alpha=0.6)
        ax.scatter(x, lo, s=12, color=colour, label=what if first else None)
    lim = [min(floor * 10, min(max(e["error"], floor) for _, e in pairs)),
           max(max(e["error"], e["estimate"] + e["margin"]) for _, e in pairs) * 1.5]
    ax.plot(lim, lim, color="k", lw=0.8, ls="--", label="estimate = true error")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("true whole-input error of the rung (held-out input)")
    ax.set_ylabel("canary estimate (dot) and its bound (bar top)")
    held = sum(e["error"] <= e["estimate"] + e["margin"] for _, e in pairs)
    ax.set_title(f"Canary estimates: the bound held for {held} of {len(pairs)}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, out, stem, written)
    return stem


def select_sections(docs, out, written, stem="select_estimates"):
    """The report's section on per-input selection, when some document has select blocks."""
    if not has_selections(docs):
        return []
    md = ["### Per-input selection by canaries (--select canary, SPEC 15)", "",
          "Per budget a ladder of the front's configurations (the static choice among them, the "
          "accurate one last) is timed on every held-out input; on each, the fastest rung whose "
          "canary bound (estimate plus margin, from a sample of its tiles) is within the budget "
          "runs. `holds`: the held-out percentile of the true errors of the rungs that ran. "
          "Speedups are medians over the held-out inputs of the accurate time over the rung's "
          "(static: the static choice's on the same inputs); `net` counts the canary's cost "
          "(`canary_ns`: on the device its launches and the host's time outside them, on the host "
          "the walk's wall time), `kernel` does not. `bounds held`: the canaries whose bound was "
          "at or above the rung's true error, over every rung and input.", ""]
    md += select_summary(docs) + [""] + select_table(docs) + [""]
    stem = fig_select_estimates(docs, out, written, stem)
    if stem:
        md += [f"![canary estimates against true errors]({stem}.png)", ""]
    return md
