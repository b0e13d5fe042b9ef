"""Bilateral: SagivTech's optimisation phases and perforation of a compute-bound filter."""

from collections import defaultdict

from .loading import best_rows, primary_error


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
