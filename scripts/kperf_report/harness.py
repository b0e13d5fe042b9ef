"""Harness studies: relaxed-barrier spread, the cache study, the gap probes."""

from .loading import best_rows, variant


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
