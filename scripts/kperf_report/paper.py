"""The HPCS'19 and CGO'18 sections: Tables I and III, Figs. 3-10, and CGO'18 Fig. 10 against Paraprox."""

from collections import defaultdict
import math

import matplotlib.pyplot as plt
import numpy as np
import pareto

from .loading import (APP_ORDER, PAPER_NAMES, apps_in, best_rows, by_device, fmt_bytes, geomean,
    median_over_inputs, order_variants, primary_error, sizes_of, variant, variant_label)
from .plotting import grouped_bars, no_data, save


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


# HPCS'19 Fig. 5 / Section V-D error bands (percent), as stated in the text.
PUBLISHED_ERROR_BANDS = {
    "stencil": "< 1 % for Gaussian3/5 and Median; about 5 % for Sobel3/5",
    "rows:2": "4-5 %; more than 5 % for Sobel3",
    "rows:3": "< 10 % for most apps; more than 20 % for Sobel3/5",
}


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
        # The fill is part of the name: two fills must never share a median. Rows from before
        # --output-fill have no field and were filled by a second launch.
        notes = [r["load"]] if r["load"] != "global" else []
        if r["output_fill"] == "separate":
            notes.append("2 launches")
        elif r["output_fill"] == "shared":
            notes.append("shared")
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
