#!/usr/bin/python3
"""The headline tables of results/README.md against their runs, recomputed here from the rows
alone (docs/semantics.md section 12, docs/json.md), without scripts/report.py: committed_reports
holds every table to what report.py makes of its runs, so a report.py bug would change the table
and its check alike; this test would not follow it. For each kind of table, every row's numbers
that the runs determine:
- fig10: Paraprox's baseline (the accurate f32 kernel on the global path, fastest shape), the
  fastest input perforation and output scheme, their speedups over it and their errors;
- half: each cell's fastest time, load path and fraction of the copy (bytes_model / median /
  copy_gbps), the later file's rows of an app replacing the earlier's;
- syprox: the accurate f32 end-to-end time and each family's fastest, its end-to-end speedup and
  error;
- sizes: the accurate kernel's fastest median over rows:2/nn's, per app and size;
- energy: the accurate kernel's joules per launch and the fastest row's speedup, energy saving
  and error;
- tune: the held-out percentile error of every choice (from its per-input errors, at the tune's
  --percentile) and its verdict;
- tune-agreement: how many cells two tunes chose alike, and in how many their speedups lie
  within 3 %;
- cache-repeat: per cache, the range over runs of the median over inputs of accurate / rows:2;
- fused: per chain of stage variants, the fastest unfused chain, the fastest fused one of each
  design (tiles, rolling) and the ratios of the fastest;
- pipeline-tune: each choice's rank speedup (the medians of the rank stage's samples of the
  accurate chain and of the chosen one), training and held-out errors and verdict;
- targets: Paraprox's rows:2 and rows:3 output schemes against the global baseline, inversion
  rows:3 against the accurate kernel.
Known-bad cases: a table with one number changed must fail (checked here, every kind).

usage: headline_numbers_test.py SOURCE_DIR
Exit 0 on success, 1 on a failed check.
"""
import functools
import gzip
import json
import os
import re
import statistics
import sys

from checks import check, finish

BLOCK = re.compile(r"<!-- table ([\w-]+): ([^>]*?) -->\n(.*?)<!-- end table -->", re.S)
# The defaults of rows written before documents carried their own (context.axis_defaults).
LEGACY_DEFAULTS = {"load": "local", "output": "none", "output_recon": "none", "precision": "f32",
                   "perforate": "device"}


@functools.lru_cache(maxsize=None)
def load_text(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return f.read()


def load(path):
    return json.loads(load_text(path))


def rows_of(paths):
    rows = []
    for path in paths:
        doc = load(path)
        defaults = doc["context"].get("axis_defaults") or LEGACY_DEFAULTS
        for r in doc["results"]:
            rows.append(dict(defaults, **r, source=path, cold=bool(doc["context"].get("cold"))))
    return rows


def ok(rows):
    return [r for r in rows if r.get("status") == "ok" and r.get("time_ns")]


def med(r):
    return r["time_ns"]["median"]


def fastest(rows):
    return min(rows, key=med) if rows else None


def label(r):
    base = r["scheme"] if r["scheme"] in ("accurate", "stencil") else f"{r['scheme']}/{r['recon']}"
    return f"{base}/{r['axes']}" if r.get("axes") else base


def err(r):
    return r["error"][r.get("primary_metric") or "mre"]


def x(v):
    return f"{v:.2f}x"


def pct(v):
    return f"{100 * v:.3g} %"


def percentile(values, p):
    v = sorted(values)
    pos = p / 100 * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def cells(text):
    """The table's body rows, each a list of its cells."""
    out = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            out.append([c.strip() for c in line.strip().strip("|").split("|")])
    return out[1:]  # without the header


MISMATCHES = []  # what the last table's check found


def expect(where, got, want):
    if got != want:
        MISMATCHES.append(f"{where}: the table says {got!r}, the rows give {want!r}")


def fig10(paths, text):
    rows = ok(rows_of(paths))
    for size, app, base_t, inp, inp_x, inp_e, out, out_x, out_e in cells(text):
        side = int(size.split("^")[0])
        mine = [r for r in rows if r["app"] == app and r["input"]["width"] == side]
        base = fastest([r for r in mine if r["scheme"] == "accurate" and r["output"] == "none"
                        and r["load"] == "global" and r["precision"] == "f32"])
        expect(f"fig10 {size} {app} baseline", base_t, f"{med(base) / 1e3:.1f} us")
        for what, keep, name, sx, se in (
                ("input perforation", lambda r: r["scheme"] != "accurate" and r["output"] == "none",
                 inp, inp_x, inp_e),
                ("output scheme", lambda r: r["scheme"] == "accurate" and r["output"] != "none",
                 out, out_x, out_e)):
            best = fastest([r for r in mine if keep(r)])
            expect(f"fig10 {size} {app} {what}", name, f"`{label(best)}`")
            expect(f"fig10 {size} {app} {what} speedup", sx, x(med(base) / med(best)))
            expect(f"fig10 {size} {app} {what} error", se, pct(err(best)))


def half(paths, text):
    rows = rows_of(paths)
    last = {r["app"]: r["source"] for r in rows}  # a later file's app replaces an earlier's
    rows = [r for r in ok(rows) if r["source"] == last[r["app"]] and r["output"] == "none"
            and r["perforate"] == "device"]
    variants = [("accurate", "none"), ("rows:2", "nn"), ("rows:2", "li")]
    for line in cells(text):
        app = line[0]
        for (scheme, recon), cell in zip(variants, line[1:]):
            for prec, part in zip(("f32", "f16in", "f16"), cell.split(" / ")):
                best = fastest([r for r in rows if r["app"] == app and r["scheme"] == scheme and
                                r["recon"] == recon and r["precision"] == prec])
                fraction = best["bytes_model"] / med(best) / best["copy_gbps"]
                number = f"{fraction:.2f}"
                if prec != "f32" and fraction >= 0.85:
                    number = f"**{number}**"
                expect(f"half {app} {scheme} {recon} {prec}", part,
                       f"{med(best) / 1e3:.1f} {best['load'][0]} {number}")


def syprox(paths, text):
    rows = [r for r in ok(rows_of(paths)) if r.get("end_to_end_ns")]
    families = [lambda r: r["scheme"] != "accurate" and r["perforate"] == "device",
                lambda r: r["perforate"] == "host",
                lambda r: r["scheme"] == "accurate" and r["precision"] != "f32"]
    for app, base_t, *rest in cells(text):
        mine = [r for r in rows if r["app"] == app]
        e2e = lambda r: r["end_to_end_ns"]
        base = min((r for r in mine if r["scheme"] == "accurate" and r["precision"] == "f32"), key=e2e)
        expect(f"syprox {app} accurate", base_t, f"{e2e(base) / 1e6:.2f} ms")
        for keep, cell in zip(families, rest):
            best = min((r for r in mine if keep(r)), key=e2e)
            want = f"`{label(best)}` {x(e2e(base) / e2e(best))} ("
            expect(f"syprox {app} {label(best)}", cell[:len(want)], want)
            expect(f"syprox {app} {label(best)} error", cell.rsplit(", ", 1)[1], pct(err(best)) + ")")


def sizes(paths, text):
    rows = [r for r in ok(rows_of(paths)) if not r.get("axes")]
    head = [c.strip() for c in text.splitlines()[0].strip().strip("|").split("|")]
    for line in cells(text):
        app = line[0]
        for size, cell in zip(head[1:], line[1:]):
            side = int(size.split("^")[0])
            mine = [r for r in rows if r["app"] == app and r["input"]["width"] == side]
            acc = fastest([r for r in mine if r["scheme"] == "accurate"])
            rows2 = fastest([r for r in mine if label(r) == "rows:2/nn"])
            expect(f"sizes {app} {size}", cell, x(med(acc) / med(rows2)))


def energy(paths, text):
    rows = [r for r in ok(rows_of(paths)) if isinstance(r.get("energy"), dict)]
    for app, base_j, name, speedup, saved, error in cells(text):
        mine = [r for r in rows if r["app"] == app]
        base = fastest([r for r in mine if r["scheme"] == "accurate" and not r.get("axes")])
        best = fastest(mine)
        jb, jf = base["energy"]["j_per_launch"], best["energy"]["j_per_launch"]
        expect(f"energy {app} accurate", base_j, f"{jb * 1e3:.2f} mJ")
        expect(f"energy {app} fastest", name, f"`{label(best)}`")
        expect(f"energy {app} speedup", speedup, x(med(base) / med(best)))
        expect(f"energy {app} saved", saved, x(jb / jf))
        expect(f"energy {app} error", error, pct(err(best)))


def tune(paths, text):
    lines = cells(text)
    at = 0
    for path in paths:
        doc = load(path)
        p = doc["context"]["tune"].get("percentile", 95)
        for app, t in doc["tune"].items():
            for c in t["choices"]:
                line = next(ln for ln in lines[at:] if ln[1] == app and
                            ln[2] == f"{100 * c['budget']:g} %")
                at = lines.index(line) + 1
                ch = c["chosen"]
                if not ch:
                    continue
                where = f"tune {app} {c['budget']}"
                expect(f"{where} chosen", line[3], f"`{ch['variant']}` {ch['wg']}")
                # The speedup: the accurate kernel's fastest median over the choice's, in the rank
                # stage where it ran (the finalists timed again), else in the sweep.
                stage = "rank" if any(r["stage"] == "rank" for r in doc["results"]) else "sweep"
                timed = [r for r in doc["results"] if r["stage"] == stage and r["status"] == "ok"]
                acc = fastest([r for r in timed if r["app"] == app and r["variant"] == "accurate/none"])
                mine = fastest([r for r in timed if r["key"] == ch["key"]])
                expect(f"{where} speedup", line[4], x(med(acc) / med(mine)))
                # The training error: the percentile over the training inputs at the chosen shape
                # (the probe's rows, or the confirm stage's at another shape).
                prefix = ch["key"].rsplit("/", 2)[0] + "/"
                train = {r["input"]["name"]: err(r) for st in ("probe", "confirm")
                         for r in doc["results"] if r["stage"] == st and r["status"] == "ok"
                         and r["key"].startswith(prefix)}
                expect(f"{where} train", line[5], pct(percentile(list(train.values()), p)))
                errors = [e["error"] for e in c["test"]["errors"].values()]
                held = percentile(errors, p)
                expect(f"{where} held-out", line[6], pct(held))
                expect(f"{where} holds", line[7], "yes" if held <= c["budget"] else "NO")


def tune_agreement(paths, text):
    docs = [load(p) for p in paths]
    first = docs[0]["tune"]
    keys = [(app, i) for app in first for i in range(len(first[app]["choices"]))]

    def chosen(doc, app, i):
        choices = doc["tune"].get(app, {}).get("choices", [])
        return (choices[i].get("chosen") or {}) if i < len(choices) else {}

    got = [ln for ln in text.splitlines() if ln.startswith("- run ")]
    n = 0
    for i in range(len(docs)):
        for j in range(i + 1, len(docs)):
            pairs = [(chosen(docs[i], a, k), chosen(docs[j], a, k)) for a, k in keys]
            same = sum(1 for a, b in pairs if a.get("variant") and a.get("variant") == b.get("variant"))
            near = sum(1 for a, b in pairs if a.get("speedup") and b.get("speedup") and
                       abs(a["speedup"] - b["speedup"]) <= 0.03 * max(a["speedup"], b["speedup"]))
            want = (f"- run {i + 1} and run {j + 1}: the same choice in **{same} of {len(pairs)}** "
                    f"cells, speedups within 3 % in **{near} of {len(pairs)}**;")
            expect(f"tune-agreement {i + 1}-{j + 1}", got[n][:len(want)] if n < len(got) else None, want)
            n += 1


def cache_repeat(paths, text):
    rows = [r for r in ok(rows_of(paths)) if r["scheme"] in ("accurate", "rows:2") and
            r["output"] == "none"]
    head = [c.strip() for c in text.splitlines()[0].strip().strip("|").split("|")][2:]
    for line in cells(text):
        cache, runs = line[0], int(line[1])
        sources = sorted({r["source"] for r in rows if r["cold"] == (cache == "cold")})
        expect(f"cache-repeat {cache} runs", runs, len(sources))
        for group, cell in zip(head, line[2:]):
            app, prec = group.split()
            per_run = []
            for s in sources:
                by_input = {}
                for r in rows:
                    if r["source"] == s and r["app"] == app and r["precision"] == prec:
                        by_input.setdefault(r["input"]["name"], {})[r["scheme"]] = med(r)
                per_run.append(statistics.median(m["accurate"] / m["rows:2"] for m in by_input.values()))
            expect(f"cache-repeat {cache} {group}", cell.split(" (")[0],
                   f"{min(per_run):.2f}-{max(per_run):.2f}x")


def pipeline_tune(paths, text):
    lines = cells(text)
    seen = set()
    for path in paths:
        doc = load(path)
        name = doc["context"]["tune_pipeline"]["name"]
        if name in seen:
            continue  # the table shows the first document of each chain
        seen.add(name)
        p = doc["context"]["tune_pipeline"]["percentile"]
        # The rank stage's time of the accurate chain (every stage accurate/none), as measured.
        accurate = next(m for m in doc["tune"]["measured"]
                        if all(s["variant"] == "accurate/none" for s in m["stages"]))

        def final_errors(key, stages):
            """A chain's last-stage error per input, from its rows of those stages."""
            prefix = key.rsplit("/", 2)[0] + "/"
            return {r["input"]["name"]: r["final_error"] for r in doc["results"]
                    if r["stage"] in stages and r["status"] == "ok" and r["key"].startswith(prefix)}

        for c in doc["tune"]["choices"]:
            line = next(ln for ln in lines if ln[0] == name and ln[1] == f"{100 * c['budget']:g} %")
            ch = c["chosen"]
            where = f"pipeline-tune {name} {c['budget']}"
            expect(f"{where} chosen", line[2], "`" + " > ".join(s["variant"] for s in ch["stages"]) + "`")
            expect(f"{where} speedup", line[3], x(accurate["rank_time_ns"] / ch["rank_time_ns"]))
            train = final_errors(ch["key"], ("screen", "measure"))
            expect(f"{where} training inputs", sorted(train),
                   sorted(doc["context"]["tune_pipeline"]["train"]))
            expect(f"{where} train", line[4], pct(percentile(list(train.values()), p)))
            test = final_errors(ch["key"], ("test",))
            held = percentile(list(test.values()), p)
            expect(f"{where} held out", line[5], pct(held))
            expect(f"{where} holds", line[6], "yes" if held <= c["budget"] else "NO")


def targets(paths, text):
    rows = ok(rows_of(paths))
    lines = cells(text)
    big = [r for r in rows if r["input"]["width"] == 8192]
    # Paraprox's output schemes rows:2 and rows:3 at their best over the global baseline, each
    # against the baseline of its own run (speedups are taken within one run's device).
    base = {}
    for b in big:
        if b["scheme"] == "accurate" and b["output"] == "none" and b["load"] == "global" and \
                b["precision"] == "f32":
            k = (b["source"], b["app"])
            base[k] = min(base.get(k, med(b)), med(b))
    speedups = []
    for app in ("gaussian3", "median"):
        for out in ("rows:2", "rows:3"):
            mine = [base[(r["source"], app)] / med(r) for r in big if r["app"] == app and
                    r["scheme"] == "accurate" and r["output"] == out and (r["source"], app) in base]
            if mine:
                speedups.append(max(mine))
    lo, hi = min(speedups), max(speedups)
    expect("targets Paraprox rows", lines[0][1], x(lo) if lo == hi else f"{lo:.2f}-{hi:.2f}x")
    inv = [r for r in big if r["app"] == "inversion" and r["output"] == "none" and r["precision"] == "f32"]
    acc = fastest([r for r in inv if r["scheme"] == "accurate"])
    rows3 = fastest([r for r in inv if r["scheme"] == "rows:3" and r["recon"] == "nn" and
                     r["perforate"] == "device"])
    s = med(acc) / med(rows3)
    expect("targets inversion rows:3", lines[1][1], f"{x(s)} ({s / 1.5:.2f} of the bound)")


def harness(paths, text):
    """Each run's row: its configurations, builds, wall time and phases from context.harness."""
    lines = cells(text)
    expect("harness rows", len(lines), len(paths))
    for line, path in zip(lines, paths):
        doc = load(path)
        h = doc["context"]["harness"]
        phases = h["phases_s"]
        shown = ("compile", "reference", "timed_launches", "metrics")
        other = sum(v for k, v in phases.items() if k not in shown)
        # A tune's harness counts no configurations: its rows (every stage's) stand for them.
        configurations = len(doc["results"]) if doc.get("kind") == "tune" else h["configurations"]
        want = [str(configurations), str(h["builds"]), f"{h['wall_s']:.1f} s"] + \
            [f"{phases[k]:.1f} s" for k in shown] + [f"{other:.1f} s"]
        expect(f"harness {os.path.basename(path)}", line[3:], want)


def peers(paths, text):
    """Per size and app: kperf's accurate time and fraction of copy, and each library's fastest
    checked function with its fraction of copy and kperf's speedup over it."""
    rows = [r for p in paths for r in load(p)["results"] if r.get("status") == "ok"]
    libraries = ["NPP", "CuPy", "PyTorch"]
    for line in cells(text):
        w = int(line[0].split("^")[0])
        app = line[1]
        here = [r for r in rows if r["app"] == app and r["size"] == [w, w]]
        acc = [r for r in here if r["library"] == "kperf" and r.get("role") == "accurate"]
        best = min(acc, key=lambda r: r["time_ns"]["median"]) if acc else None
        if best:
            t = best["time_ns"]["median"]
            expect(f"peers {w} {app} kperf", line[3], f"{t / 1e3:.1f} us ({best['of_copy']:.2f})")
        for col, lib in zip(line[4:7], libraries):
            mine = [r for r in here if r["library"] == lib and r.get("checked", {}).get("ok")]
            if not mine or not best:
                expect(f"peers {w} {app} {lib}", col.split(" us")[0], "-")
                continue
            f = min(mine, key=lambda r: r["time_ns"]["median"])
            ratio = f["time_ns"]["median"] / best["time_ns"]["median"]
            expect(f"peers {w} {app} {lib}", col,
                   f"{f['time_ns']['median'] / 1e3:.1f} us ({f['of_copy']:.2f}), {ratio:.2f}x")


def tune_select(paths, text):
    """Per chain (or app) and budget: both verdicts, the static choice's speedup beside the canary's
    net and kernel speedups, and the canary's held-out percentile error recomputed from the error
    of the rung that ran on each input."""
    lines = iter(cells(text))
    for path in paths:
        doc = load(path)
        if doc["kind"] == "pipeline-tune":
            blocks = [doc["tune"]["choices"]]
            pct_of = doc["context"]["tune_pipeline"]["percentile"]
        else:
            blocks = [t["choices"] for t in doc["tune"].values()]
            pct_of = doc["context"]["tune"]["percentile"]
        for choices in blocks:
            for c in choices:
                sel = c.get("select")
                if not sel:
                    continue
                line = next(lines)
                errors = [v["error"] for v in sel["per_input"].values()]
                yes = {True: "yes", False: "NO", None: "unmeasured"}
                expect(f"tune-select {line[2]} {line[3]}", [line[4], line[5], line[6], line[7], line[8], line[9]],
                       [yes[c.get("holds")], x(sel["speedup_static"]), yes[sel.get("holds")],
                        pct(percentile(errors, pct_of)), x(sel["speedup_net"]),
                        x(sel["speedup_kernel"])])


def fused(paths, text):
    """Per chain and stage variants: the fastest unfused medians over their shapes, the fastest
    fused ones of each design (tiles; rolling, with its strip height), the fastest fused over the
    unfused, and the fastest fused over the fastest accurate f32 chain of separate launches on its
    input (of fused ones where the run has none), found here among the rows (not read from
    accurate_time_ns)."""
    rows = [r for p in paths for r in load(p)["results"] if r.get("status") == "ok"]

    def fastest(pick):
        mine = [r for r in rows if pick(r)]
        return min(mine, key=lambda r: r["time_ns"]["median"]) if mine else None

    def us(r):
        return "-" if r is None else f"{r['time_ns']['median'] / 1e3:.1f} us"
    for line in cells(text):
        chain, name, variants = line[0], line[1], tuple(line[2].strip("`").split(" > "))

        def same(r, design):
            kind = ("rolling" if r.get("fuse_rows") else "tiles") if r.get("fused") else None
            return (r["pipeline"] == chain and r["input"]["name"] == name and
                    kind in design and tuple(s["variant"] for s in r["stages"]) == variants)

        def exact(r, is_fused):
            return (r["pipeline"] == chain and r["input"]["name"] == name and
                    bool(r.get("fused")) == is_fused and
                    all(s["variant"] == "accurate/none" and s["precision"] == "f32"
                        for s in r["stages"]))
        unfused = fastest(lambda r: same(r, (None,)))
        tiles, rolling = fastest(lambda r: same(r, ("tiles",))), fastest(lambda r: same(r, ("rolling",)))
        best = fastest(lambda r: same(r, ("tiles", "rolling")))
        accurate = fastest(lambda r: exact(r, False)) or fastest(lambda r: exact(r, True))
        if best is None:
            expect(f"fused {chain} {line[2]}", "a fused row", "none in the runs")
            continue
        t = best["time_ns"]["median"]
        expect(f"fused {chain} {line[2]}", line[3:9],
               [us(unfused), us(tiles),
                "-" if rolling is None else f"{us(rolling)} ({rolling['fuse_rows']} rows)",
                "-" if unfused is None else x(unfused["time_ns"]["median"] / t),
                "-" if accurate is None else x(accurate["time_ns"]["median"] / t),
                pct(best["final_error"])])


KINDS = {"fused": fused, "tune-select": tune_select, "harness": harness, "peers": peers, "fig10": fig10, "half": half, "syprox": syprox, "sizes": sizes, "energy": energy,
         "tune": tune, "tune-agreement": tune_agreement, "cache-repeat": cache_repeat,
         "pipeline-tune": pipeline_tune, "targets": targets}


def changed(text):
    """The table with one number changed (a known-bad table): in the first body row, the first
    number with two decimals after its first cell; in a list, the first count in bold."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.startswith("|") or line.startswith("|---") or i == 0:
            continue
        first, _, rest = line[1:].partition("|")
        bumped = re.sub(r"(\d+\.\d\d)", lambda m: f"{float(m.group(1)) + 0.01:.2f}", rest, count=1)
        if bumped == rest:  # a table of one-decimal numbers (seconds)
            bumped = re.sub(r"(\d+\.\d)\b", lambda m: f"{float(m.group(1)) + 0.1:.1f}", rest,
                            count=1)
        if bumped != rest:
            lines[i] = "|" + first + "|" + bumped
            return "\n".join(lines)
    return re.sub(r"\*\*(\d+)", lambda m: f"**{int(m.group(1)) + 1}", text, count=1)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    results = os.path.join(sys.argv[1], "results")
    text = open(os.path.join(results, "README.md")).read()
    done = set()
    for kind, runs, body in BLOCK.findall(text):
        paths = [os.path.join(results, r) for r in runs.split()]
        if kind not in KINDS:
            check(False, f"table {kind}: no independent check")
            continue
        if not all(os.path.exists(p) for p in paths):
            check(False, f"table {kind}: a run is missing ({runs})")
            continue
        KINDS[kind](paths, body)
        for m in MISMATCHES:
            check(False, m)
        MISMATCHES.clear()
        done.add(kind)
        # The known-bad case: the same table with one number changed fails.
        bad = changed(body)
        check(bad != body, f"table {kind}: no number to change")
        KINDS[kind](paths, bad)
        check(bool(MISMATCHES), f"table {kind} ({runs}): a changed number went unnoticed")
        MISMATCHES.clear()
    # Every table README.md holds was checked (a kind without a table here has none to check).
    present = {kind for kind, _, _ in BLOCK.findall(text)}
    check(done == present, f"kinds checked: {sorted(done)} of {sorted(present)}")
    return finish("headline_numbers")


if __name__ == "__main__":
    sys.exit(main())
