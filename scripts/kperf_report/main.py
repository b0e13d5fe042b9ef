"""Turns kperf JSON results into the papers' tables and figures (the report.py entry point)."""

import argparse
import os
import sys

from kperf_json import display_name
import compare_devices

from .energy import energy_repeatability, energy_summary, energy_table, fig_energy_vs_error
from .bilateral import bilateral_perforation_table, bilateral_phases_table
from .harness import cache_table, gaps_table, relaxed_table
from .loading import (PAPER_NAMES, ReportError, apps_in, by_device, load, order_variants,
    status_summary, variant_label)
from .paper import (PUBLISHED_ERROR_BANDS, PUBLISHED_FIG10, fig_error, fig_error_distribution,
    fig_error_vs_runtime, fig_heatmaps, fig_paraprox, fig_pareto, fig_sizes, fig_speedups,
    published_table3, table1, table3)
from .plotting import FIGURE_FORMATS
from .syprox import PUBLISHED_SYPROX, fig_wrong_fraction, gallery, hypervolume_table, syprox_table
from .headlines import (TABLES, harness_table, pipeline_tune_table, tune_agreement,
                        tune_repeat_table, tune_table)
from .peers import peers_section, peers_table
from .pipeline import fused_table, pipeline_sections
from .provenance import provenance_note, provenance_section
from .select import has_selections, select_table
from .tune import tune_device, tune_sections


def print_table(kind, paths):
    """One headline table on stdout (scripts/make-reports.sh splices it into results/README.md)."""
    tunes, pipelines, peers = [], [], []
    try:
        rows, _ = load(paths, tunes, pipelines, peers)
    except ReportError as exc:
        print(f"report.py: {exc}", file=sys.stderr)
        return 2
    if (kind == "peers") != bool(peers) or (peers and (rows or tunes or pipelines)):
        print("report.py: --table peers reads peers documents (scripts/peers.sh), and only them",
              file=sys.stderr)
        return 2
    if kind == "peers":
        print("\n".join(peers_table(peers) + provenance_note(paths)))
        return 0
    if kind == "pipeline-tune":
        docs = [(p, d) for p, d in pipelines if d["kind"] == "pipeline-tune"]
        if not docs:
            print("report.py: --table pipeline-tune needs kperf tune --pipeline documents",
                  file=sys.stderr)
            return 2
        print("\n".join(pipeline_tune_table(docs) + provenance_note(paths)))
        return 0
    if kind == "fused":
        docs = [(p, d) for p, d in pipelines if d["kind"] == "pipeline"]
        if not docs:
            print("report.py: --table fused needs kperf pipeline documents", file=sys.stderr)
            return 2
        print("\n".join(fused_table(docs) + provenance_note(paths)))
        return 0
    if kind == "harness":
        from .loading import load_document
        print("\n".join(harness_table([(p, load_document(p)) for p in paths]) +
                        provenance_note(paths)))
        return 0
    if kind == "tune-select":
        docs = tunes + [(p, d) for p, d in pipelines if d["kind"] == "pipeline-tune"]
        if not has_selections(docs):
            print("report.py: --table tune-select needs documents of kperf tune --select canary",
                  file=sys.stderr)
            return 2
        print("\n".join(select_table(docs) + provenance_note(paths)))
        return 0
    if kind.startswith("tune") and not tunes:
        print(f"report.py: --table {kind} needs kperf tune documents", file=sys.stderr)
        return 2
    if kind in ("tune-repeat", "tune-agreement") and len(tunes) < 2:
        print(f"report.py: --table {kind} needs two or more kperf tune documents", file=sys.stderr)
        return 2
    tune_tables = {"tune": tune_table, "tune-repeat": tune_repeat_table,
                   "tune-agreement": tune_agreement}
    lines = tune_tables[kind](tunes) if kind in tune_tables else TABLES[kind](rows)
    print("\n".join(lines + provenance_note(paths)))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Turns kperf JSON results into the papers' tables and figures.")
    ap.add_argument("results", nargs="+", help="kperf JSON result files")
    ap.add_argument("--out", help="output directory")
    ap.add_argument("--table", choices=sorted(TABLES) + ["tune", "tune-repeat", "tune-agreement",
                                                        "pipeline-tune", "harness", "peers", "fused",
                                                        "tune-select"],
                    help="print one headline table of results/README.md (markdown) instead of a "
                         "report")
    ap.add_argument("--formats", default="png",
                    help="comma-separated figure formats (png, svg, pdf); report.md links the PNGs, "
                         "so png is always written (default: png); none: report.md alone, its "
                         "figure links left unwritten (make-reports.sh --check compares only it)")
    args = ap.parse_args(argv)
    if args.table:
        return print_table(args.table, args.results)
    if not args.out:
        ap.error("--out is required (or --table)")
    formats = [f for f in args.formats.split(",") if f]
    if formats == ["none"]:
        FIGURE_FORMATS[:] = []
    elif not formats or any(f not in ("png", "svg", "pdf") for f in formats):
        print(f"report.py: --formats {args.formats!r}: expected a list of png, svg, pdf, or none",
              file=sys.stderr)
        return 2
    else:
        FIGURE_FORMATS[:] = ["png"] + [f for f in dict.fromkeys(formats) if f != "png"]
    tunes, pipelines, peers = [], [], []
    try:
        all_rows, devices = load(args.results, tunes, pipelines, peers)
    except ReportError as exc:
        print(f"report.py: {exc}", file=sys.stderr)
        return 2
    if not all_rows:  # tune, pipeline and peers documents only
        os.makedirs(args.out, exist_ok=True)
        written = []
        devices_named = sorted({tune_device(d) for _, d in tunes} |
                               {d["context"]["device"]["name"] for _, d in pipelines} |
                               {(d["context"].get("device") or {}).get("name", "unknown device")
                                for _, d in peers})
        kind = " and ".join(k for k, docs in (("tune", tunes), ("pipeline", pipelines),
                                              ("peers", peers)) if docs)
        md = [f"# kperf {kind} report: {', '.join(devices_named)}", "",
              f"Generated by `scripts/report.py` from {', '.join(display_name(p) for p in args.results)}.", ""]
        md += provenance_section(args.results)
        if tunes:
            md += tune_sections(tunes, args.out, written)
        if pipelines:
            md += pipeline_sections(pipelines, args.out, written)
        if peers:
            md += peers_section(peers)
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
    others = {p for p, _ in tunes + pipelines + peers}
    run_paths = [p for p in args.results if p not in others]
    if len(run_paths) >= 2:
        loaded = [(p,) + compare_devices.load(p) for p in run_paths]
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
    energy = energy_table(all_rows)
    has_energy_fig = fig_energy_vs_error(all_rows, args.out, written) if energy else False

    md = [f"# kperf report: {', '.join(devices)}", "",
          f"Generated by `scripts/report.py` from {', '.join(display_name(p) for p in args.results)}: "
          f"{len(all_rows)} result rows ({status_summary(all_rows)}). Times are medians of OpenCL profiling-event "
          "samples at each variant's best work-group; speedups are the papers' definition (accurate at its "
          "best work-group over the variant at its best); errors are against the double-precision CPU "
          "reference (MRE, ME for Sobel).", ""] + provenance_section(args.results) + [
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
               "| device | app | size | scheme | precision | perforate | load | kernel us | kernel speedup | byte "
               "bound | of bound | transfer speedup | host pack ms | end-to-end ms | end-to-end speedup | error |",
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"] + syprox
        md += ["", "Published (SYprox, ICS'25, other hardware): " + PUBLISHED_SYPROX + "."]
    if energy:
        md += ["", "## Energy beside time (`--energy`)", "",
               "Each configuration after its timed samples: back-to-back launches in windows aligned to "
               "the energy counter's updates (`--energy-window`, `--energy-reps`); medians over windows, "
               "runs and inputs. Speedups are the accurate f32 kernel's time, joules per launch and "
               "dynamic joules per launch (above the idle power) over this configuration's, at the same "
               "launch shape. Byte ratio: the accurate kernel's modelled bytes over this one's (what "
               "energy would save if it followed the bytes not moved). busy: launches x median kernel "
               "time / window (1: the device never idled).", "",
               "| device | app | size | configuration | byte ratio | kernel us | time speedup | mJ/launch | energy speedup "
               "| dynamic energy speedup | W | busy | nJ/output | error | throttled |",
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"] + energy
        md += ["", "Geometric means over apps:", "",
               "| device | configuration | apps | byte ratio | time speedup | energy speedup | "
               "dynamic energy speedup |",
               "|---|---|---|---|---|---|---|"] + energy_summary(all_rows)
        for dev, (med, worst, n) in energy_repeatability(all_rows).items():
            md += ["", f"Repeatability on {dev}: {n} configurations measured by two runs differ in joules per "
                       f"launch by {100 * med:.2f} % (median), {100 * worst:.2f} % at most."]
        if has_energy_fig:
            md += ["", "![energy against error](fig8_energy_vs_error.png)"]
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
    if peers:
        md += [""] + peers_section(peers)
    md.append("")
    with open(os.path.join(args.out, "report.md.tmp"), "w") as f:
        f.write("\n".join(md))
    os.replace(os.path.join(args.out, "report.md.tmp"), os.path.join(args.out, "report.md"))
    print(f"report.py: wrote report.md and {len(written)} figure files to {args.out}", file=sys.stderr)
    return 0
