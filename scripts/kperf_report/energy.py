"""Energy beside time (kperf run --energy): joules per launch with the energy and dynamic-energy
speedups over the accurate kernel, energy against error per app, and how far two identical runs'
energies lie apart."""

from collections import defaultdict
import math

import matplotlib.pyplot as plt
import numpy as np

from .loading import apps_in, order_variants, primary_error, variant
from .plotting import save


def energy_rows(rows):
    return [r for r in rows if r.get("status") == "ok" and isinstance(r.get("energy"), dict)
            and r["energy"].get("j_per_launch")]


def _medians(rows):
    """{(device, app, size, variant): medians over runs (documents) and inputs}."""
    acc = defaultdict(lambda: defaultdict(list))
    for r in energy_rows(rows):
        e = r["energy"]
        k = (r["device"], r["app"], (r["input"]["width"], r["input"]["height"]), variant(r))
        m = acc[k]
        m["t"].append(r["time_ns"]["median"])
        m["bytes"].append(r.get("bytes_model") or float("nan"))
        m["j"].append(e["j_per_launch"])
        m["dyn"].append(e["dynamic_j_per_launch"])
        m["w"].append(e["avg_power_w"])
        m["nj"].append(e["nj_per_output"])
        if e.get("busy_fraction") is not None:
            m["busy"].append(e["busy_fraction"])
        m["err"].append(primary_error(r))
        m["throttled"].append(1.0 if e.get("throttled") else 0.0)
    return {k: {f: float(np.median(v)) if v else float("nan") for f, v in m.items()} for k, m in acc.items()}


def energy_table(rows):
    """Markdown rows: every configuration with energy, against the accurate f32 kernel of its app."""
    med = _medians(rows)
    lines = []
    for (dev, app, size, v), m in sorted(med.items(), key=lambda kv: (kv[0][0], apps_in([{"app": kv[0][1]}])[0],
                                                                      kv[0][2], order_variants([kv[0][3]]))):
        base = med.get((dev, app, size, "accurate"))
        ratio = (lambda f: f"{base[f] / m[f]:.2f}x") if base else (lambda f: "-")
        err = "-" if math.isnan(m["err"]) else f"{100 * m['err']:.2f} %"
        lines.append(f"| {dev} | {app} | {size[0]}x{size[1]} | {v} | {ratio('bytes')} | {m['t'] / 1e3:.1f} | {ratio('t')} | "
                     f"{1e3 * m['j']:.1f} | {ratio('j')} | {ratio('dyn')} | {m['w']:.0f} | "
                     f"{m['busy']:.2f} | {m['nj']:.2f} | "
                     f"{err} | "
                     f"{'yes' if m['throttled'] > 0 else 'no'} |")
    return lines


def energy_summary(rows):
    """Geometric means over apps of time, energy and dynamic-energy speedups, per variant."""
    med = _medians(rows)
    by_variant = defaultdict(lambda: defaultdict(list))
    for (dev, app, size, v), m in med.items():
        base = med.get((dev, app, size, "accurate"))
        if not base or v == "accurate":
            continue
        for f in ("bytes", "t", "j", "dyn"):
            by_variant[(dev, v)][f].append(base[f] / m[f])
    out = []
    for (dev, v), s in sorted(by_variant.items(), key=lambda kv: (kv[0][0], order_variants([kv[0][1]]))):
        g = {f: float(np.exp(np.mean(np.log(x)))) for f, x in s.items()}
        out.append(f"| {dev} | {v} | {len(s['t'])} | {g['bytes']:.2f}x | {g['t']:.2f}x | {g['j']:.2f}x | "
                   f"{g['dyn']:.2f}x |")
    return out


def energy_repeatability(rows):
    """Per device: the relative difference of joules per launch between the first two documents
    that measured the same configuration (median, max, count)."""
    by_key = defaultdict(dict)
    for r in energy_rows(rows):
        by_key[(r["device"], r["key"])].setdefault(r["source"], r["energy"]["j_per_launch"])
    diffs = defaultdict(list)
    for (dev, _), per_source in by_key.items():
        if len(per_source) >= 2:
            a, b = list(per_source.values())[:2]
            diffs[dev].append(abs(b - a) / a)
    return {dev: (float(np.median(d)), max(d), len(d)) for dev, d in diffs.items()}


def fig_energy_vs_error(rows, out, written):
    """Fig. 8's layout with energy on the x-axis: per app, joules per launch against error."""
    med = _medians(rows)
    apps = apps_in([{"app": k[1]} for k in med])
    if not apps:
        return False
    cols = min(3, len(apps))
    nrows = (len(apps) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(4.8 * cols, 3.8 * nrows), squeeze=False)
    for ax, app in zip(axes.flat, apps):
        for (dev, a, size, v), m in sorted(med.items()):
            if a != app:
                continue
            err = 0.0 if math.isnan(m["err"]) else 100 * m["err"]
            ax.scatter(1e3 * m["j"], err, s=22)
            ax.annotate(v, (1e3 * m["j"], err), fontsize=6, xytext=(3, 2), textcoords="offset points")
        ax.set_title(app)
        ax.set_xlabel("mJ per launch")
        ax.set_ylabel("primary error (%)")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(apps):]:
        ax.set_visible(False)
    fig.tight_layout()
    save(fig, out, "fig8_energy_vs_error", written)
    return True
