#!/usr/bin/python3
"""Turns kperf JSON results into the papers' tables and figures.

usage: /usr/bin/python3 scripts/report.py RESULTS.json [RESULTS.json ...] --out DIR

Writes DIR/report.md and, as PNG and SVG: Table I (devices), Table III (runtime at the best
work-group), Figs. 3/4 (speedups, geometric mean), Fig. 5 (primary error), Fig. 6 (error over
many inputs), Fig. 8 (error against runtime), Fig. 9 (work-group heat maps) and Fig. 10 (error
against speedup with the Pareto front); from rows with the SPEC 10 axes (schema 2), the CGO'18
Fig. 10 comparison with Paraprox's output schemes (speedups over the global-memory baseline,
beside the published points), the spread of relaxed-barrier rows, the SYprox table of
transfers and end-to-end speedups (--transfers rows), hypervolumes by approximation family, the
CUDA-aware paper's runtime against wrong elements, and a gallery of accurate, approximate and
|T - A| images (runs with --save-outputs). From `kperf tune` documents: the choice per budget
with its held-out verdict, the fronts, hypervolumes by family, the Paraprox comparison and a
gallery of each choice on a held-out input. Reads schema versions 1
and 2; the papers' figures use the rows whose SPEC 10 axes are at their defaults. Needs Debian's
python3-numpy and python3-matplotlib.
"""
import argparse
import json
import math
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kperf_json import display_name, load_document  # noqa: E402
import pareto  # noqa: E402  (the one Pareto front and hypervolume of kperf's Python)

try:
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as exc:  # pragma: no cover - depends on the machine
    sys.exit(f"report.py: {exc}; run with /usr/bin/python3 (apt-get install python3-numpy "
             "python3-matplotlib)")

APP_ORDER = ["gaussian3", "gaussian5", "sobel3", "sobel5", "median", "inversion", "hotspot"]
PAPER_NAMES = {"accurate": "Baseline", "stencil": "Stencil", "rows:2": "Rows1", "rows:3": "Rows2"}

# HPCS'19 Table III, "RUNTIME (1/100 S)"; the values are milliseconds (its text: desktop runs
# take 30-60 us, and the W5100 column reads 0.049), so they are quoted here as ms.
PUBLISHED_TABLE3 = {
    "Qualcomm Adreno 506": {
        "gaussian3": [2.707, 2.415, 2.515, 2.471], "gaussian5": [6.165, 4.560, 5.288, 4.703],
        "sobel3": [2.711, 2.419, 2.522, 2.471], "sobel5": [6.177, 4.488, 5.275, 4.670],
        "inversion": [0.487, None, 0.605, 0.721], "median": [3.027, 2.668, 2.821, 2.953]},
    "ARM Mali T860 MP2": {
        "gaussian3": [7.556, 6.133, 6.300, 9.802], "gaussian5": [13.801, 11.250, 11.659, 11.963],
        "sobel3": [7.594, 6.113, 6.256, 9.616], "sobel5": [13.751, 11.468, 11.621, 11.832],
        "inversion": [0.445, None, 1.460, None], "median": [7.013, 9.427, 9.395, None]},
    "AMD FirePro W5100": {
        "gaussian3": [0.049, 0.039, 0.036, 0.038], "gaussian5": [0.057, 0.055, 0.054, 0.053],
        "sobel3": [0.050, 0.039, 0.037, 0.039], "sobel5": [0.057, 0.055, 0.054, 0.053],
        "inversion": [0.027, None, 0.021, 0.022], "median": [0.062, 0.054, 0.049, 0.050]},
}
# CGO'18 Fig. 10 (Section 6.4), speedup over Paraprox's baseline and error (percent), as its text
# states them: (label, speedup, error %).
PUBLISHED_FIG10 = {
    "gaussian3": [("Stencil1", 2.1, 0.45), ("Rows1", 2.2, 2.9), ("Paraprox Rows", 2.08, 7.5)],
    "median": [("Stencil1", 1.29, 0.5), ("Rows1", 1.36, 3.3)],
}
SUPPORTED_SCHEMAS = (1, 2)

# HPCS'19 Fig. 5 / Section V-D error bands (percent), as stated in the text.
PUBLISHED_ERROR_BANDS = {
    "stencil": "< 1 % for Gaussian3/5 and Median; about 5 % for Sobel3/5",
    "rows:2": "4-5 %; more than 5 % for Sobel3",
    "rows:3": "< 10 % for most apps; more than 20 % for Sobel3/5",
}


class ReportError(Exception):
    pass


# Runs built with these --cl-options: the in-place rows reconstruction and the two differential
# probes (schemes/kperf_tile.cl), whose outputs are not the app's.
BUILD_TAGS = (("-DKPERF_PROBE_LOADS_ONLY=1", "loads-only"), ("-DKPERF_PROBE_NO_LOADS=1", "no-loads"),
              ("-DKPERF_MATERIALIZE_ROWS=1", "materialised"))


def build_tag(options):
    tags = [tag for flag, tag in BUILD_TAGS if flag in options.split()]
    return "+".join(tags) if tags else ("other" if options.strip() else "")


# The value of an absent axis field, for documents written before kperf put its own table in the
# context ("axis_defaults"); newer documents are read with theirs.
LEGACY_AXIS_DEFAULTS = {"load": "local", "output": "none", "output_recon": "none", "precision": "f32",
                        "perforate": "device", "iterations_skip": 0, "relax": "none", "loop_skip": 1,
                        "weights": "table"}


def with_axis_defaults(r, defaults):
    """The row with every absent axis field at its default: an absent output_fill is "separate"
    under an output scheme (the only fill before the axis existed)."""
    out = dict(defaults, **r)
    if "output_fill" not in r and out["output"] != "none":
        out["output_fill"] = "separate"
    return out


def load(paths, tunes=None):
    """Rows from every file, each tagged with its device name; `kperf tune` documents go to
    `tunes` (when given) instead."""
    rows, devices = [], {}
    for path in paths:
        try:
            doc = load_document(path)
        except (OSError, EOFError, ValueError) as exc:  # gzip and JSON errors are ValueErrors
            raise ReportError(f"{path}: not readable JSON ({exc})")
        if tunes is not None and isinstance(doc, dict) and doc.get("kind") == "tune":
            if not isinstance(doc.get("tune"), dict):
                raise ReportError(f"{path}: an unfinished kperf tune (continue it with --resume)")
            tunes.append((path, doc))
            continue
        if not isinstance(doc, dict) or "results" not in doc or "context" not in doc:
            raise ReportError(f"{path}: not a kperf results file (no 'context'/'results')")
        if doc.get("schema_version") not in SUPPORTED_SCHEMAS:
            raise ReportError(f"{path}: unsupported schema_version {doc.get('schema_version')} "
                              f"(this report reads {', '.join(map(str, SUPPORTED_SCHEMAS))})")
        dev = doc["context"].get("device", {})
        name = dev.get("name", "unknown device")
        devices.setdefault(name, dict(dev, copy_gbps=doc["context"].get("copy_gbps")))
        cache = "cold" if doc["context"].get("cold") else "warm"  # --cold runs flush the cache
        build = build_tag(doc["context"].get("extra_build_options") or "")
        defaults = doc["context"].get("axis_defaults") or LEGACY_AXIS_DEFAULTS
        for r in doc["results"]:
            if not isinstance(r, dict) or "key" not in r:
                raise ReportError(f"{path}: malformed result row")
            # Version 1 rows have every SPEC 10 axis at its default.
            rows.append(dict(with_axis_defaults(r, defaults), device=name, axes=r.get("axes", ""),
                             cache=cache, build=build, source=path))
    if not rows and not tunes:
        raise ReportError("no result rows in " + ", ".join(paths))
    return rows, devices


def variant(r):
    """The scheme and reconstruction, then the other axes where any differs from its default, so
    that medians and tables never merge, say, f16 rows with load:global ones."""
    base = r["scheme"] if r["scheme"] in ("accurate", "stencil") else f"{r['scheme']}/{r['recon']}"
    return f"{base}/{r['axes']}" if r.get("axes") else base


def variant_label(v):
    scheme, _, recon = v.partition("/")
    name = PAPER_NAMES.get(scheme, scheme)
    return f"{name}:{recon}" if recon and recon != "nn" else name


def order_variants(vs):
    def key(v):
        s, _, rec = v.partition("/")
        fam, _, k = s.partition(":")
        return ({"accurate": 0, "stencil": 1, "rows": 2, "cols": 3}.get(fam, 9), int(k or 0), rec != "nn", rec)
    return sorted(vs, key=key)


def apps_in(rows):
    present = {r["app"] for r in rows}
    return [a for a in APP_ORDER if a in present] + sorted(present - set(APP_ORDER))


def primary_error(r):
    e = r.get("error") or {}
    v = e.get(r.get("primary_metric") or "mre")
    return v if isinstance(v, (int, float)) else float("nan")


def best_rows(rows):
    """The best_wg row of every (device, app, variant, input, size)."""
    return [r for r in rows if r.get("status") == "ok" and r.get("best_wg")]


def by_device(rows):
    out = defaultdict(list)
    for r in rows:
        out[r["device"]].append(r)
    return out


def median_over_inputs(rows, value):
    """{(app, variant): median over inputs of value(row)} for best-work-group rows."""
    acc = defaultdict(list)
    for r in best_rows(rows):
        v = value(r)
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            acc[(r["app"], variant(r))].append(v)
    return {k: float(np.median(v)) for k, v in acc.items()}


FIGURE_FORMATS = ["png"]  # report.md links the PNGs; --formats png,svg adds vector copies


def save(fig, out, name, written):
    for ext in FIGURE_FORMATS:
        fig.savefig(os.path.join(out, f"{name}.{ext}"), dpi=110, bbox_inches="tight")
        written.append(f"{name}.{ext}")
    plt.close(fig)


def no_data(ax, why):
    ax.text(0.5, 0.5, why, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def fmt_bytes(n):
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def table1(devices):
    lines = ["| | " + " | ".join(devices) + " |", "|---" * (len(devices) + 1) + "|"]
    fields = [("Vendor", lambda d: d.get("vendor", "")), ("Type", lambda d: d.get("type", "")),
              ("Driver", lambda d: d.get("driver_version", "")),
              ("OpenCL C", lambda d: d.get("opencl_c_version", "")),
              ("Compute units", lambda d: d.get("compute_units", "")),
              ("Max clock", lambda d: f"{d.get('max_clock_mhz', '')} MHz"),
              ("Global memory", lambda d: fmt_bytes(d.get("global_mem_size", 0))),
              ("Max allocation", lambda d: fmt_bytes(d.get("max_mem_alloc_size", 0))),
              ("Local memory", lambda d: fmt_bytes(d.get("local_mem_size", 0))),
              ("Local memory type", lambda d: d.get("local_mem_type", "")),
              ("Unified memory", lambda d: "yes" if d.get("unified_memory") else "no"),
              ("Max work-group size", lambda d: d.get("max_work_group_size", "")),
              ("Max work-item sizes", lambda d: "x".join(map(str, d.get("max_work_item_sizes", [])))),
              ("Timer resolution", lambda d: f"{d.get('profiling_timer_resolution_ns', '')} ns"),
              ("Copy bandwidth (measured)", lambda d: f"{d['copy_gbps']:.1f} GB/s" if d.get("copy_gbps") else "-")]
    for label, get in fields:
        lines.append(f"| {label} | " + " | ".join(str(get(d)) for d in devices.values()) + " |")
    return "\n".join(lines)


def sizes_of(rows):
    return sorted({(r["input"]["width"], r["input"]["height"]) for r in rows},
                  key=lambda s: (s[0] * s[1], s))


def table3(rows, device):
    """One table per input size (times across sizes do not mix)."""
    out = []
    for w, h in sizes_of(rows):
        out.append(table3_one(
            [r for r in rows if (r["input"]["width"], r["input"]["height"]) == (w, h)], f"{device}, {w}x{h}"))
    return "\n\n".join(out)


def table3_one(rows, device):
    times = median_over_inputs(rows, lambda r: r["time_ns"]["median"] / 1e6)
    variants = order_variants({v for (_, v) in times})
    inputs = sorted({f"{r['input']['name']}@{r['input']['width']}x{r['input']['height']}" for r in best_rows(rows)})
    n_per_app = max((sum(1 for r in best_rows(rows) if r["app"] == app and r["scheme"] == "accurate")
                     for app in apps_in(rows)), default=0)
    head = (f"**{device}** (each app's median over its {n_per_app} input(s); inputs: "
            f"{', '.join(inputs[:4])}{'...' if len(inputs) > 4 else ''})\n\n")
    lines = ["| app | " + " | ".join(variant_label(v) for v in variants) + " |",
             "|---" * (len(variants) + 1) + "|"]
    for app in apps_in(rows):
        cells = []
        for v in variants:
            t = times.get((app, v))
            cells.append("-" if t is None else f"{t:.4f}")
        lines.append(f"| {app} | " + " | ".join(cells) + " |")
    return head + "\n".join(lines)


def published_table3():
    short = {"Qualcomm Adreno 506": "Adreno", "ARM Mali T860 MP2": "Mali", "AMD FirePro W5100": "W5100"}
    lines = ["| app | " + " | ".join(f"{short[dev]} {s}" for dev in PUBLISHED_TABLE3 for s in ("Base", "Sten", "R1", "R2")) + " |",
             "|---" * (1 + 4 * len(PUBLISHED_TABLE3)) + "|"]
    for app in ["gaussian3", "gaussian5", "sobel3", "sobel5", "inversion", "median"]:
        cells = []
        for dev in PUBLISHED_TABLE3.values():
            cells += ["n/a" if v is None else f"{v:.3f}" for v in dev[app]]
        lines.append(f"| {app} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def grouped_bars(ax, apps, variants, value, ylabel, log=False, percent=False):
    width = 0.8 / max(1, len(variants))
    x = np.arange(len(apps))
    for i, v in enumerate(variants):
        ys = [value(a, v) for a in apps]
        ys = [np.nan if y is None else (100 * y if percent else y) for y in ys]
        ax.bar(x + (i - (len(variants) - 1) / 2) * width, ys, width, label=variant_label(v))
    ax.set_xticks(x)
    ax.set_xticklabels(apps, rotation=20)
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.grid(axis="y", alpha=0.3)


def geomean(values):
    vals = [v for v in values if v and v > 0 and not math.isnan(v)]
    return float(np.exp(np.mean(np.log(vals)))) if vals else float("nan")


def fig_speedups(rows, out, written):
    devs = by_device(rows)
    fig, axes = plt.subplots(len(devs), 1, figsize=(11, 3.6 * len(devs)), squeeze=False)
    geo = {}
    for ax, (dev, drows) in zip(axes[:, 0], devs.items()):
        sp = median_over_inputs(drows, lambda r: r.get("speedup"))
        variants = order_variants({v for (_, v) in sp if v != "accurate"})
        apps = apps_in(drows) + ["geomean"]
        geo[dev] = {v: geomean([sp.get((a, v)) for a in apps[:-1]]) for v in variants}
        if not variants:
            no_data(ax, f"{dev}: no perforated variant with an accurate baseline")
            continue
        grouped_bars(ax, apps, variants, lambda a, v: geo[dev][v] if a == "geomean" else sp.get((a, v)),
                     "speedup over accurate (x)")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_title(f"Fig. 3: speedup at each variant's best work-group vs accurate at its best - {dev}")
        ax.legend(ncol=min(6, len(variants)), fontsize=8)
    save(fig, out, "fig3_speedup", written)

    fig, ax = plt.subplots(figsize=(9, 3.8))
    variants = order_variants({v for g in geo.values() for v in g})
    if variants:
        width = 0.8 / max(1, len(geo))
        x = np.arange(len(variants))
        for i, (dev, g) in enumerate(geo.items()):
            ax.bar(x + (i - (len(geo) - 1) / 2) * width, [g.get(v, np.nan) for v in variants], width, label=dev[:40])
        ax.set_xticks(x)
        ax.set_xticklabels([variant_label(v) for v in variants])
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_ylabel("geometric-mean speedup (x)")
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    else:
        no_data(ax, "no speedups in these results")
    ax.set_title("Fig. 4: geometric-mean speedup over all apps, per device")
    save(fig, out, "fig4_speedup_geomean", written)
    return geo


def fig_error(rows, out, written):
    err = median_over_inputs(rows, primary_error)
    variants = order_variants({v for (_, v) in err if v != "accurate"})
    apps = [a for a in apps_in(rows) if any((a, v) in err for v in variants)]
    fig, ax = plt.subplots(figsize=(11, 4))
    if variants:
        grouped_bars(ax, apps, variants, lambda a, v: err.get((a, v)),
                     "primary error (%): MRE, ME for Sobel", log=True, percent=True)
        ax.legend(ncol=min(6, len(variants)), fontsize=8)
    else:
        no_data(ax, "no perforated variants in these results")
    ax.set_title("Fig. 5: error per app and scheme (median over inputs; " + ", ".join(by_device(rows)) + ")")
    save(fig, out, "fig5_error", written)
    return err


def fig_error_distribution(rows, out, written):
    acc = defaultdict(list)
    for r in best_rows(rows):
        if r["scheme"] != "accurate":
            acc[(r["app"], variant(r))].append(100 * primary_error(r))
    apps = apps_in(rows)
    variants = order_variants({v for (_, v) in acc})
    n_inputs = max((len(v) for v in acc.values()), default=0)
    fig, ax = plt.subplots(figsize=(12, 4.2))
    if n_inputs >= 3:
        data, labels, positions = [], [], []
        pos = 0
        for a in apps:
            for v in variants:
                if (a, v) in acc:
                    data.append(acc[(a, v)])
                    labels.append(f"{a}\n{variant_label(v)}")
                    positions.append(pos)
                    pos += 1
            pos += 1
        ax.boxplot(data, positions=positions, widths=0.7, showfliers=True)
        ax.set_xticks(positions)
        ax.set_xticklabels(labels, rotation=90, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("primary error (%)")
        ax.grid(axis="y", alpha=0.3)
    else:
        no_data(ax, f"needs results over at least 3 inputs (found at most {n_inputs})")
    ax.set_title(f"Fig. 6: error distribution over {n_inputs} inputs (best work-group rows)")
    save(fig, out, "fig6_error_distribution", written)
    return n_inputs


def fig_error_vs_runtime(rows, out, written):
    wanted = ["stencil", "rows:2/nn", "rows:3/nn", "rows:2/li"]
    time = median_over_inputs(rows, lambda r: r["time_ns"]["median"] / 1e6)
    err = median_over_inputs(rows, primary_error)
    fig, ax = plt.subplots(figsize=(8, 5))
    markers = "osD^v<>p"
    plotted = 0
    for i, app in enumerate(apps_in(rows)):
        base = time.get((app, "accurate"))
        for j, v in enumerate(wanted):
            if base and (app, v) in time and (app, v) in err:
                ax.scatter(time[(app, v)] / base, 100 * err[(app, v)], marker=markers[i % len(markers)],
                           color=f"C{j}", label=f"{variant_label(v)}" if i == 0 else None)
                ax.annotate(app, (time[(app, v)] / base, 100 * err[(app, v)]), fontsize=6, alpha=0.7)
                plotted += 1
    if plotted:
        ax.set_yscale("log")
        ax.set_xlabel("runtime relative to accurate (best work-groups)")
        ax.set_ylabel("primary error (%)")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    else:
        no_data(ax, "needs accurate and stencil/rows1/rows2 (nn) and rows1 (li) results")
    ax.set_title("Fig. 8: error against runtime - " + ", ".join(by_device(rows)))
    save(fig, out, "fig8_error_vs_runtime", written)


def fig_heatmaps(rows, out, written):
    ok = [r for r in rows if r.get("status") == "ok"]
    devs = by_device(ok)
    files = []
    for dev, drows in devs.items():
        # One map per app and variant, on each app's first input (largest size, then name).
        def in_key(r):
            return (-r["input"]["width"] * r["input"]["height"], r["input"]["name"])
        first = {}
        for r in drows:
            first[r["app"]] = min(first.get(r["app"], in_key(r)), in_key(r))
        sel = [r for r in drows if in_key(r) == first[r["app"]]]
        apps = apps_in(sel)
        variants = order_variants({variant(r) for r in sel})
        fig, axes = plt.subplots(len(apps), len(variants), figsize=(2.6 * len(variants) + 1, 2.2 * len(apps) + 1),
                                 squeeze=False)
        for i, a in enumerate(apps):
            for j, v in enumerate(variants):
                ax = axes[i, j]
                cells = {(r["wg"][0], r["wg"][1]): r["time_ns"]["median"] / 1e6
                         for r in sel if r["app"] == a and variant(r) == v}
                if len(cells) < 2:
                    no_data(ax, "one work-group" if cells else "-")
                else:
                    xs = sorted({c[0] for c in cells})
                    ys = sorted({c[1] for c in cells})
                    grid = np.full((len(ys), len(xs)), np.nan)
                    for (wx, wy), t in cells.items():
                        grid[ys.index(wy), xs.index(wx)] = t
                    im = ax.imshow(grid, origin="lower", cmap="viridis_r", aspect="auto")
                    ax.set_xticks(range(len(xs)))
                    ax.set_xticklabels(xs, fontsize=6)
                    ax.set_yticks(range(len(ys)))
                    ax.set_yticklabels(ys, fontsize=6)
                    fig.colorbar(im, ax=ax, fraction=0.046).ax.tick_params(labelsize=6)
                    best = min(cells, key=cells.get)
                    ax.scatter([xs.index(best[0])], [ys.index(best[1])], marker="*", color="red", s=40)
                if i == len(apps) - 1:
                    ax.set_xlabel("wx", fontsize=7)
                if j == 0:
                    name, side = first[a][1], int(math.sqrt(-first[a][0]))
                    ax.set_ylabel(f"{a}\n{name[:14]} ~{side}^2\nwy", fontsize=7)
                if i == 0:
                    ax.set_title(variant_label(v), fontsize=8)
        fig.suptitle(f"Fig. 9: median kernel time (ms) per work-group (wx x wy) - {dev}"
                     " (red star: best)", fontsize=9)
        name = "fig9_workgroups" + ("" if len(devs) == 1 else "_" + "".join(c if c.isalnum() else "-" for c in dev.lower())[:40])
        save(fig, out, name, written)
        files.append(name)
    if not devs:
        fig, ax = plt.subplots()
        no_data(ax, "no ok results")
        save(fig, out, "fig9_workgroups", written)
        files.append("fig9_workgroups")
    return files


def fig_sizes(rows, out, written):
    """Size study: speedup of each variant and roofline of accurate against the input size."""
    ok = best_rows(rows)
    sizes = sorted({r["input"]["width"] * r["input"]["height"] for r in ok})
    if len(sizes) < 2:
        return False
    apps = apps_in(ok)
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    for i, app in enumerate(apps):
        for v, style in (("rows:2/nn", "-"), ("rows:3/nn", "--"), ("stencil", ":")):
            pts = sorted((r["input"]["width"] * r["input"]["height"], r["speedup"]) for r in ok
                         if r["app"] == app and variant(r) == v and r.get("speedup"))
            if pts:
                axes[0].plot([math.sqrt(p[0]) for p in pts], [p[1] for p in pts], style, color=f"C{i}",
                             marker="o", ms=3, label=f"{app} {variant_label(v)}")
        pts = sorted((r["input"]["width"] * r["input"]["height"], r["roofline"]) for r in ok
                     if r["app"] == app and r["scheme"] == "accurate")
        if pts:
            axes[1].plot([math.sqrt(p[0]) for p in pts], [p[1] for p in pts], color=f"C{i}", marker="o", label=app)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("input side N (N x N grid)")
        ax.grid(alpha=0.3)
    axes[0].axhline(1.0, color="k", lw=0.8)
    axes[0].set_ylabel("speedup over accurate (x)")
    axes[0].legend(fontsize=6, ncol=2)
    axes[1].set_ylabel("accurate: fraction of copy bandwidth (roofline)")
    axes[1].legend(fontsize=7)
    fig.suptitle("Size study: speedup (left) and accurate roofline (right) - " + ", ".join(by_device(rows)))
    save(fig, out, "fig_sizes", written)
    return True


def front_by_speedup(points):
    """Indices of the (speedup, error) points on the Pareto front by ascending speedup, with
    pareto.py's rules (duplicates once, the first)."""
    return sorted(pareto.pareto_front(points), key=lambda i: points[i][0])


def fig_pareto(rows, out, written):
    sp = median_over_inputs(rows, lambda r: r.get("speedup"))
    err = median_over_inputs(rows, primary_error)
    apps = apps_in(rows)
    fig, ax = plt.subplots(figsize=(8.5, 5.5))
    fronts = {}
    plotted = False
    for i, a in enumerate(apps):
        pts = [(sp[(a, v)], 100 * err[(a, v)], v) for (aa, v) in sp if aa == a and v != "accurate" and (a, v) in err
               and err[(a, v)] > 0]
        if not pts:
            continue
        plotted = True
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], color=f"C{i}", label=a, s=18)
        idx = front_by_speedup([(p[0], p[1]) for p in pts])
        ax.plot([pts[k][0] for k in idx], [pts[k][1] for k in idx], color=f"C{i}", lw=1)
        ax.scatter([pts[k][0] for k in idx], [pts[k][1] for k in idx], s=70, facecolors="none",
                   edgecolors=f"C{i}", label=f"{a} Pareto front" if i == 0 else None)
        fronts[a] = [pts[k][2] for k in idx]
    if plotted:
        ax.set_yscale("log")
        ax.axvline(1.0, color="k", lw=0.8)
        ax.set_xlabel("speedup over accurate (x)")
        ax.set_ylabel("primary error (%)")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    else:
        no_data(ax, "needs perforated variants with an accurate baseline")
    ax.set_title("Fig. 10: error against speedup; lines join each app's Pareto front - " + ", ".join(by_device(rows)))
    save(fig, out, "fig10_pareto", written)
    return fronts


def paraprox_label(r):
    """How CGO'18 Fig. 10 names a configuration, or None when it is not one of its kind."""
    if r["axes"] == "" and r["scheme"] in ("stencil", "rows:2", "rows:3"):
        return PAPER_NAMES[r["scheme"]] + (":li" if r["recon"] == "li" else "")
    out = r["output"]
    if r["scheme"] == "accurate" and out != "none" and r["relax"] == "none":
        # The fill is part of the name: one launch and two must never share a median. Rows from
        # before --output-fill have no field and were filled by a second launch.
        notes = [r["load"]] if r["load"] != "global" else []
        if r["output_fill"] == "separate":
            notes.append("2 launches")
        return f"Paraprox {out}/{r['output_recon']}" + (f" ({', '.join(notes)})" if notes else "")
    return None


def fig_paraprox(all_rows, out, written):
    """CGO'18 Fig. 10: input perforation against Paraprox's output schemes, speedup over the
    global-memory baseline; one panel per (size, app), the published points as stars."""
    pts = defaultdict(list)  # (device, size, app) -> [(speedup, error %, label, is_input)]
    for r in all_rows:
        if r.get("status") != "ok" or not r.get("best_wg") or r.get("speedup_vs_global") is None:
            continue
        label = paraprox_label(r)
        err = primary_error(r)
        if label is None or not (err == err):
            continue
        size = f"{r['input']['width']}x{r['input']['height']}"
        pts[(r["device"], size, r["app"])].append(
            (r["speedup_vs_global"], 100 * err, label, not label.startswith("Paraprox"), r["input"]["name"]))
    # Median over inputs of each configuration.
    panels = {}
    for k, v in pts.items():
        acc = defaultdict(list)
        for sp, e, label, is_input, _ in v:
            acc[(label, is_input)].append((sp, e))
        panels[k] = [(float(np.median([a for a, _ in xs])), float(np.median([b for _, b in xs])), label, is_input)
                     for (label, is_input), xs in acc.items()]
    keys = sorted(panels, key=lambda k: (k[0], int(k[1].split("x")[0]), apps_in([{"app": k[2]}])[0]))
    cols = sorted({k[2] for k in keys}, key=lambda a: APP_ORDER.index(a) if a in APP_ORDER else 99)
    rowkeys = sorted({(k[0], k[1]) for k in keys}, key=lambda k: (k[0], int(k[1].split("x")[0])))
    fig, axes = plt.subplots(max(1, len(rowkeys)), max(1, len(cols)),
                             figsize=(4.6 * max(1, len(cols)), 3.8 * max(1, len(rowkeys))), squeeze=False)
    table = []
    if not keys:
        no_data(axes[0][0], "needs accurate rows with --load global and perforated or --output rows")
    for i, (dev, size) in enumerate(rowkeys):
        for j, app in enumerate(cols):
            ax = axes[i][j]
            p = panels.get((dev, size, app))
            if not p:
                no_data(ax, "no data")
                continue
            positive = [q for q in p if q[1] > 0]
            for sp, e, label, is_input in positive:
                ax.scatter([sp], [e], marker="x" if is_input else "o", color="C0" if is_input else "C3", s=30)
                ax.annotate(label.replace("Paraprox ", ""), (sp, e), fontsize=6, xytext=(3, 2),
                            textcoords="offset points")
            idx = front_by_speedup([(q[0], q[1]) for q in positive])
            ax.plot([positive[k][0] for k in idx], [positive[k][1] for k in idx], "--", color="gray", lw=1)
            for label, sp, e in PUBLISHED_FIG10.get(app, []):
                ax.scatter([sp], [e], marker="*", s=80, color="C2")
                ax.annotate("CGO'18 " + label, (sp, e), fontsize=6, color="C2", xytext=(3, -8),
                            textcoords="offset points")
            ax.set_yscale("log")
            ax.axvline(1.0, color="k", lw=0.6)
            ax.set_title(f"{app} {size}", fontsize=9)
            ax.set_xlabel("speedup over Paraprox baseline (x)", fontsize=8)
            ax.set_ylabel("primary error (%)", fontsize=8)
            ax.grid(alpha=0.3)
            front = {positive[k][2] for k in idx}
            for sp, e, label, is_input in sorted(p, key=lambda q: -q[0]):
                table.append(f"| {dev} | {app} | {size} | {label} | {sp:.2f}x | {e:.3g} % | "
                             f"{'yes' if label in front else ''} |")
    fig.suptitle("CGO'18 Fig. 10: x input perforation (local tile), o Paraprox output schemes, "
                 "* published; dashed: Pareto front", fontsize=10)
    fig.tight_layout()
    save(fig, out, "fig10_paraprox", written)
    return table


def relaxed_table(all_rows):
    lines = []
    for r in all_rows:
        if r.get("status") == "ok" and r["relax"] == "skip" and r.get("error_spread") and r.get("best_wg"):
            s = r["error_spread"]
            lines.append(f"| {r['device']} | {r['key']} | {100 * s['min']:.3g} % | {100 * s['max']:.3g} % | "
                         f"{len(r.get('error_reps', []))} | {r.get('speedup') or float('nan'):.2f}x |")
    return lines


def cache_table(all_rows):
    """The size study warm and cold (--cold: the cache flushed before every sample): accurate's
    median and roofline, and the rows1/rows2 speedups, per app and size, where both exist."""
    cell = {}
    for r in best_rows(all_rows):
        if r["axes"] == "":
            cell[(r["device"], r["app"], r["input"]["width"], variant(r), r["cache"])] = r
    lines = []
    for dev, app, width in sorted({(d, a, w) for d, a, w, _, _ in cell}):
        acc = [cell.get((dev, app, width, "accurate", c)) for c in ("warm", "cold")]
        if not all(acc):
            continue
        out = [f"| {dev} | {app} | {width} |"]
        for c in acc:
            out.append(f" {c['time_ns']['median'] / 1e3:.1f} us ({c.get('roofline') or float('nan'):.2f}) |")
        for v in ("rows:2/nn", "rows:3/nn"):
            for c in ("warm", "cold"):
                r = cell.get((dev, app, width, v, c))
                out.append(f" {r['speedup']:.2f}x |" if r and r.get("speedup") else " - |")
        lines.append("".join(out))
    return lines


def gaps_table(all_rows):
    """The bandwidth-gap study: per app and size, accurate's time and roofline, the rows:2 and
    rows:3 speedups fused and materialised, and the two probes' times (loads only: the memory
    path alone; no loads: everything but the global loads) and, where it was run, the skeleton
    (both probes at once: tile traffic, barrier and stores). A variant cannot be faster than its
    slower probe, so the speedup bound is accurate over that probe's time."""
    cell = {}
    for r in best_rows(all_rows):
        if r["axes"] == "" and r["cache"] == "warm":
            cell[(r["device"], r["app"], r["input"]["width"], variant(r), r["build"])] = r
    if not any(b in ("loads-only", "no-loads") for *_, b in cell):
        return []
    ms = lambda r: r["time_ns"]["median"] / 1e6
    skeleton = "loads-only+no-loads"
    builds = ("loads-only", "no-loads") + ((skeleton,) if any(k[4] == skeleton for k in cell) else ())
    lines = []
    for dev, app, width in sorted({k[:3] for k in cell}):
        acc = cell.get((dev, app, width, "accurate", ""))
        if not acc:
            continue
        out = [f"| {dev} | {app} | {width} | {ms(acc):.4f} ({acc.get('roofline') or float('nan'):.2f}) |"]
        for v in ("rows:2/nn", "rows:3/nn"):
            for b in ("", "materialised"):
                r = cell.get((dev, app, width, v, b))
                out.append(f" {r['speedup']:.2f}x |" if r and r.get("speedup") else " - |")
        for v in ("accurate", "rows:2/nn", "rows:3/nn"):
            probes = [cell.get((dev, app, width, v, b)) for b in builds]
            text = " / ".join(f"{ms(p):.4f}" if p else "-" for p in probes)
            bound = (f", bound {ms(acc) / max(ms(p) for p in probes[:2]):.2f}x"
                     if v != "accurate" and all(probes[:2]) else "")
            out.append(f" {text}{bound} |")
        lines.append("".join(out))
    return lines


# SagivTech's optimisation phases of the bilateral filter (SPEC 11), by load path and weights.
BILATERAL_PHASES = {("global", "computed"): 1, ("global", "table"): 2, ("local", "table"): 3,
                    ("image", "table"): 4}


def bilateral_plain(r):
    """An accurate-output bilateral row with every axis but load path and weights at its default."""
    return (r["app"] == "bilateral" and r["output"] == "none"
            and r["precision"] == "f32" and r["perforate"] == "device"
            and r["relax"] == "none")


def bilateral_phases_table(all_rows):
    """Phase x size: median (mean) ms of the accurate filter at each phase's best launch shape,
    and its speedup over phase 1 at that size."""
    cells = defaultdict(dict)
    for r in best_rows(all_rows):
        if not bilateral_plain(r) or r["scheme"] != "accurate" or r["loop_skip"] != 1:
            continue
        phase = BILATERAL_PHASES.get((r["load"], r["weights"]))
        if phase:  # per file: a phases run is read apart from other runs of the same filter
            dev = r["device"] + (" (cold)" if r["cache"] == "cold" else "")
            cells[(dev, r["input"]["width"], r["input"]["height"], r["source"])][phase] = r["time_ns"]
    lines = []
    for (dev, w, h, _), phases in sorted(cells.items()):
        if len(phases) < 2:  # not a phases run: the plain filter alone
            continue
        base = phases.get(1, {}).get("median")
        out = [f"| {dev} | {w}x{h} |"]
        for p in (1, 2, 3, 4):
            t = phases.get(p)
            if not t:
                out.append(" - |")
                continue
            speed = f", {base / t['median']:.2f}x" if base else ""
            out.append(f" {t['median'] / 1e6:.4f} ({t['mean'] / 1e6:.4f}){speed} |")
        lines.append("".join(out))
    return lines


def bilateral_perforation_table(all_rows):
    """Perforation on bilateral (local tile, weight table): each input scheme and the window loop
    perforation at its best launch shape, speedup over the accurate filter, and its error."""
    lines = []
    for r in sorted(best_rows(all_rows), key=lambda r: (r["device"], r["input"]["width"],
                                                        r["input"]["name"], r["scheme"], r["loop_skip"])):
        if (not bilateral_plain(r) or r["load"] != "local"
                or r["weights"] != "table"
                or (r["scheme"] == "accurate" and r["loop_skip"] == 1)):
            continue
        variant_name = r["scheme"] + ("" if r["scheme"] == "accurate" else "/" + r["recon"])
        if r["loop_skip"] > 1:
            variant_name += f" + loop:{r['loop_skip']}"
        dev = r["device"] + (" (cold)" if r["cache"] == "cold" else "")
        lines.append(f"| {dev} | {r['input']['name']} | {r['input']['width']}x{r['input']['height']} | "
                     f"{variant_name} | {r['time_ns']['median'] / 1e6:.4f} | "
                     f"{r.get('speedup') or float('nan'):.2f}x | {100 * primary_error(r):.3g} % |")
    return lines


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
            f"{r.get('precision', 'f32')} | {r.get('perforate', 'device')} | {r['time_ns']['median'] / 1e3:.1f} | "
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


def tune_sections(tunes, out, written):
    md = ["## Tuning under an error budget (kperf tune, SPEC 12)", ""]
    for path, doc in tunes:
        ctx, tc = doc["context"], doc["context"]["tune"]
        h = ctx.get("harness", {})
        sessions, wall, builds, stages, e = 0, 0.0, 0, defaultdict(float), h
        while isinstance(e, dict) and e:  # this session and the ones --resume continued
            sessions += 1
            wall += e.get("wall_s", 0.0)
            builds += e.get("builds", 0)
            for k, v in e.get("stages_s", {}).items():
                stages[k] += v
            e = e.get("resumed_from")
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
    shown = tune_gallery(tunes, out, written)
    if shown:
        md += ["### Gallery: accurate, chosen and |T - A| on a held-out input", ""]
        md += [f"![{app} on {name}]({stem}.png)" for app, name, stem in shown]
        md.append("")
    return md


def status_summary(rows):
    counts = defaultdict(int)
    for r in rows:
        counts[r.get("status", "?")] += 1
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="+", help="kperf JSON result files")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--formats", default="png",
                    help="comma-separated figure formats (png, svg, pdf); report.md links the PNGs, "
                         "so png is always written (default: png)")
    args = ap.parse_args(argv)
    formats = [f for f in args.formats.split(",") if f]
    if not formats or any(f not in ("png", "svg", "pdf") for f in formats):
        print(f"report.py: --formats {args.formats!r}: expected a list of png, svg, pdf", file=sys.stderr)
        return 2
    FIGURE_FORMATS[:] = ["png"] + [f for f in dict.fromkeys(formats) if f != "png"]
    tunes = []
    try:
        all_rows, devices = load(args.results, tunes)
    except ReportError as exc:
        print(f"report.py: {exc}", file=sys.stderr)
        return 2
    if not all_rows:  # tune documents only
        os.makedirs(args.out, exist_ok=True)
        written = []
        md = [f"# kperf tune report: {', '.join(sorted({tune_device(d) for _, d in tunes}))}", "",
              f"Generated by `scripts/report.py` from {', '.join(display_name(p) for p in args.results)}.", ""]
        md += tune_sections(tunes, args.out, written)
        with open(os.path.join(args.out, "report.md.tmp"), "w") as f:
            f.write("\n".join(md))
        os.replace(os.path.join(args.out, "report.md.tmp"), os.path.join(args.out, "report.md"))
        print(f"report.py: wrote report.md and {len(written)} figure files to {args.out}", file=sys.stderr)
        return 0
    # The papers' figures: configurations with every SPEC 10 axis at its default.
    rows = [r for r in all_rows if r["axes"] == ""] or all_rows
    rows = [r for r in rows if r["build"] == ""] or rows  # probes and variants by --cl-options apart
    if {r["cache"] for r in rows} == {"warm", "cold"}:  # both: the figures show the warm runs
        rows = [r for r in rows if r["cache"] == "warm"]
    fidelity = []
    if len(args.results) >= 2:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import compare_devices
        loaded = [(p,) + compare_devices.load(p) for p in args.results]
        for i, (pa, na, ra) in enumerate(loaded):
            for pb, nb, rb in loaded[i + 1:]:
                if na != nb:
                    pairs, bad, worst = compare_devices.compare(ra, rb)
                    if pairs:
                        fidelity.append(f"- `{display_name(pa)}` vs `{display_name(pb)}`: "
                                        + compare_devices.verdict_markdown(na, nb, pairs, bad, worst))
    os.makedirs(args.out, exist_ok=True)
    written = []
    geo = fig_speedups(rows, args.out, written)
    err = fig_error(rows, args.out, written)
    n_inputs = fig_error_distribution(rows, args.out, written)
    fig_error_vs_runtime(rows, args.out, written)
    heatmaps = fig_heatmaps(rows, args.out, written)
    fronts = fig_pareto(rows, args.out, written)
    has_sizes = fig_sizes(rows, args.out, written)
    has_axes = any(r["axes"] for r in all_rows)
    paraprox = fig_paraprox(all_rows, args.out, written) if has_axes else []
    relaxed = relaxed_table(all_rows)
    phases = bilateral_phases_table(all_rows)
    cache = cache_table(all_rows)
    gaps = gaps_table(all_rows)
    bilateral_perforation = bilateral_perforation_table(all_rows)
    syprox = syprox_table(all_rows)
    hv_lines = hypervolume_table(all_rows) if has_axes else []
    has_wrong = fig_wrong_fraction(all_rows, args.out, written)
    shown = gallery(all_rows, args.out, written)

    md = [f"# kperf report: {', '.join(devices)}", "",
          f"Generated by `scripts/report.py` from {', '.join(display_name(p) for p in args.results)}: "
          f"{len(all_rows)} result rows ({status_summary(all_rows)}). Times are medians of OpenCL profiling-event "
          "samples at each variant's best work-group; speedups are the papers' definition (accurate at its "
          "best work-group over the variant at its best); errors are against the double-precision CPU "
          "reference (MRE, ME for Sobel).", "",
          "## Table I: devices", "", table1(devices), "",
          "## Table III: runtime (ms) at the optimal work-group", ""]
    for dev, drows in by_device(rows).items():
        md += [table3(drows, dev), ""]
    md += ["Published (HPCS'19 Table III, 512x512, other hardware: Qualcomm Adreno 506, ARM Mali T860 MP2, AMD FirePro W5100). Its header says \"1/100 s\", but its "
           "text puts desktop runs at 30-60 us and its W5100 column reads 0.049, so its values only make "
           "sense as milliseconds; they are quoted as ms here:", "", published_table3(), "",
           "## Figs. 3/4: speedup", "", "![Fig. 3](fig3_speedup.png)", "", "![Fig. 4](fig4_speedup_geomean.png)", ""]
    for dev, g in geo.items():
        md.append(f"- {dev}: geometric-mean speedup " + ", ".join(f"{variant_label(v)} {x:.2f}x" for v, x in g.items()))
    md += ["", "## Fig. 5: error per app and scheme", "", "![Fig. 5](fig5_error.png)", "",
           "| app | " + " | ".join(variant_label(v) for v in order_variants({v for (_, v) in err if v != 'accurate'})) + " |",
           "|---" * (1 + len({v for (_, v) in err if v != 'accurate'})) + "|"]
    for app in apps_in(rows):
        md.append(f"| {app} | " + " | ".join(
            "-" if (app, v) not in err else f"{100 * err[(app, v)]:.2f} %"
            for v in order_variants({v for (_, v) in err if v != 'accurate'})) + " |")
    md += ["", "Published error bands (HPCS'19 Section V-D, other hardware; error is nearly platform-agnostic):", ""]
    md += [f"- {PAPER_NAMES[s]}: {band}" for s, band in PUBLISHED_ERROR_BANDS.items()]
    md += ["", f"## Fig. 6: error distribution over {n_inputs} inputs", "", "![Fig. 6](fig6_error_distribution.png)", "",
           "## Fig. 8: error against runtime", "", "![Fig. 8](fig8_error_vs_runtime.png)", "",
           "## Fig. 9: work-group sweep", ""]
    md += [f"![Fig. 9]({h}.png)" for h in heatmaps]
    md += ["", "## Fig. 10: error against speedup, Pareto fronts", "", "![Fig. 10](fig10_pareto.png)", ""]
    md += [f"- {a}: " + " -> ".join(variant_label(v) for v in f) for a, f in fronts.items()]
    if has_sizes:
        md += ["", "## Size study", "", "![sizes](fig_sizes.png)"]
    if has_axes:
        md += ["", "## CGO'18 Fig. 10: input perforation against Paraprox's output schemes", "",
               "Speedups over Paraprox's baseline (accurate, `--load global`, each at its best work-group); "
               "error is the app's primary metric, median over inputs. x: kperf's input schemes on the local "
               "tile; o: Paraprox's output schemes (`--output`, one output line in K computed, the rest copied "
               "(nn) or interpolated (li)); stars: CGO'18's published points (other hardware: the error is "
               "comparable, the speedup only in kind).", "", "![Fig. 10 Paraprox](fig10_paraprox.png)", "",
               "| device | app | size | configuration | speedup over Paraprox baseline | error | Pareto |",
               "|---|---|---|---|---|---|---|"] + paraprox
        md += ["", "Published (CGO'18 Section 6.4): " + "; ".join(
            f"{app}: " + ", ".join(f"{l} {e} % at {s}x" for l, s, e in pts) for app, pts in PUBLISHED_FIG10.items())]
    if syprox:
        md += ["", "## SYprox: precision, host perforation and transfers (end to end)", "",
               "Rows timed with `--transfers`, each at its best launch shape. Kernel speedup: accurate f32 "
               "kernel over this one; byte bound: accurate f32 bytes over this configuration's (stored sizes: "
               "half input halves the input bytes); transfer speedup: accurate f32 (upload + download) over "
               "this one's; end to end: host packing + upload + kernels + download, medians.", "",
               "| device | app | size | scheme | precision | perforate | kernel us | kernel speedup | byte bound "
               "| of bound | transfer speedup | host pack ms | end-to-end ms | end-to-end speedup | error |",
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"] + syprox
        md += ["", "Published (SYprox, ICS'25, other hardware): " + PUBLISHED_SYPROX + "."]
    if hv_lines:
        md += ["", "## Hypervolume by family (SYprox Table 3)", "",
               "Points: every configuration at its best launch shape, (speedup over the accurate kernel, "
               "primary error). HV: area dominated up to the reference point (speedup 1.0, the largest "
               "error seen for that app and size), exact by a sorted sweep (`scripts/pareto.py`). "
               "D(P, P_family) = HV(union) - HV(family): what the family misses (0: its front dominates "
               "everything).", "",
               "| device | app | size | family | points | front | HV | D(P, P_family) | reference |",
               "|---|---|---|---|---|---|---|---|---|"] + hv_lines
    if has_wrong:
        md += ["", "## Normalised runtime against wrong elements (CUDA-aware paper)", "",
               "![wrong elements](fig_wrong_fraction.png)"]
    if shown:
        md += ["", "## Gallery: accurate, approximate and |T - A|", "",
               "For each app (first input with saved outputs), the fastest configuration within 2 % primary "
               "error, beside the accurate output and the absolute difference.", ""]
        for app, name, key, stem in shown:
            md += [f"- {app} on {name}: `{key}`", "", f"![{app}]({stem}.png)", ""]
    if relaxed:
        md += ["", "## Relaxed barriers: error over repeated launches", "",
               "| device | configuration | min error | max error | downloads | speedup |", "|---|---|---|---|---|---|"]
        md += relaxed
    if cache:
        md += ["", "## Size study in and out of the cache", "",
               "Warm: consecutive launches, the input may stay in the last-level cache; cold: a fill "
               "larger than that cache before every timed sample (`--cold`). Accurate's median at its "
               "best launch shape with its roofline (fraction of copy bandwidth), and the rows1/rows2 "
               "speedups, warm and cold.", "",
               "| device | app | N | accurate warm | accurate cold | rows1 warm | rows1 cold | "
               "rows2 warm | rows2 cold |", "|---|---|---|---|---|---|---|---|---|"] + cache
    if gaps:
        md += ["", "## Bandwidth gaps: where a perforated kernel's time goes", "",
               "Runs of the same sweep built four ways (`--cl-options`): as is (rows rebuilt in the "
               "window read), with the rows rebuilt in place in local memory (`-DKPERF_MATERIALIZE_ROWS=1`), "
               "and the two differential probes: loads only (`-DKPERF_PROBE_LOADS_ONLY=1`: each output is "
               "its own window element, so the load path, the scheme and the stores) and no loads "
               "(`-DKPERF_PROBE_NO_LOADS=1`: every input read replaced by a value made from its index, so "
               "the addresses, local memory, reconstruction, arithmetic and stores without global loads); "
               "where it was run, a third probe time is the skeleton, both probes at once (no global loads "
               "and no arithmetic: the tile traffic, the barrier and the stores). Accurate: ms and roofline; "
               "speedups over accurate at each one's best launch shape; probes: ms loads only / no loads "
               "[/ skeleton], and the bound accurate over the slower of the first two (a kernel that does "
               "both cannot beat the one that does either).", "",
               "| device | app | N | accurate ms | rows1 | rows1 materialised | rows2 | rows2 materialised | "
               "accurate probes | rows1 probes | rows2 probes |", "|---|---|---|---|---|---|---|---|---|---|---|"] + gaps
    if phases:
        md += ["", "## Bilateral: SagivTech's optimisation phases", "",
               "The note's method: each phase 10 warm-up launches, then 50 timed (it reports the mean; "
               "here the median of the profiling-event samples, the mean in parentheses), at each "
               "phase's best launch shape. Phase 1 reads global memory and computes every weight with "
               "exp(); 2 takes the spatial weights from a table; 3 loads a local-memory tile; 4 fills "
               "the tile from an image object. ms, speedup over phase 1.", "",
               "| device | size | 1: global, exp() | 2: global, table | 3: local tile | 4: image tile |",
               "|---|---|---|---|---|---|"] + phases
    if bilateral_perforation:
        md += ["", "## Bilateral: perforation of a compute-bound filter", "",
               "Input schemes and the window-loop perforation (every other tap, weights renormalised) "
               "on the local tile with the weight table; speedup over the accurate filter at its "
               "best launch shape.", "",
               "| device | input | size | configuration | median ms | speedup | MRE |",
               "|---|---|---|---|---|---|---|"] + bilateral_perforation
    if fidelity:
        md += ["", "## Cross-device fidelity (scripts/compare_devices.py)", ""] + fidelity
    if tunes:
        md += [""] + tune_sections(tunes, args.out, written)
    md.append("")
    with open(os.path.join(args.out, "report.md.tmp"), "w") as f:
        f.write("\n".join(md))
    os.replace(os.path.join(args.out, "report.md.tmp"), os.path.join(args.out, "report.md"))
    print(f"report.py: wrote report.md and {len(written)} figure files to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
