#!/usr/bin/python3
"""report.py on a JSON the test suite makes writes every table and figure; empty or malformed
input gets one clear error line and a non-zero exit.

usage: report_test.py KPERF_BINARY REPORT_PY
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

from checks import full_tier

FIGURES = ("fig3_speedup", "fig4_speedup_geomean", "fig5_error", "fig6_error_distribution",
           "fig8_error_vs_runtime", "fig9_workgroups", "fig10_pareto")
EXPECTED = ["report.md"] + [f"{name}.{ext}" for name in FIGURES for ext in ("png", "svg")]


def main():
    binary, report = sys.argv[1], sys.argv[2]
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        passed += ok
        failed += not ok
        print(("ok   " if ok else "FAIL ") + what)

    # The fast tier runs part of the apps and renders the figures once; KPERF_TEST_FULL=1
    # (scripts/test.sh --full) runs every app and every output format.
    full = full_tier()
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "r.json")
        subprocess.run([binary, "run", "--apps", "all" if full else "gaussian3,sobel5,median,hotspot", "--schemes", "accurate,stencil,rows1,rows2",
                        "--recon", "nn,li", "--wg", "16x8,8x4", "--input", "synthetic:all", "--size",
                        "48x40", "--iterations", "3", "--warmup", "1", "--reps", "3", "--quiet",
                        "--out", results], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out = os.path.join(tmp, "report")
        run = subprocess.run([sys.executable, report, results, "--out", out, "--formats", "svg"],
                             capture_output=True, text=True)
        check(run.returncode == 0, f"report.py exits 0 ({run.stderr.strip()})")
        for name in EXPECTED:
            path = os.path.join(out, name)
            check(os.path.exists(path) and os.path.getsize(path) > 0, f"writes {name}")
        # By default only the PNGs that report.md links are written, and the text is the same.
        if full:
            out_png = os.path.join(tmp, "report-png")
            run = subprocess.run([sys.executable, report, results, "--out", out_png], capture_output=True,
                                 text=True)
            names = sorted(os.listdir(out_png)) if run.returncode == 0 else []
            check(bool(names) and not any(n.endswith(".svg") for n in names)
                  and all(f"{n}.png" in names for n in FIGURES), "the default writes PNGs only")
            check(run.returncode == 0 and open(os.path.join(out_png, "report.md")).read()
                  == open(os.path.join(out, "report.md")).read(), "report.md does not depend on --formats")
        out_none = os.path.join(tmp, "report-none")
        run = subprocess.run([sys.executable, report, results, "--out", out_none, "--formats", "none"],
                             capture_output=True, text=True)
        check(run.returncode == 0 and sorted(os.listdir(out_none)) == ["report.md"]
              and open(os.path.join(out_none, "report.md")).read()
              == open(os.path.join(out, "report.md")).read(),
              "--formats none: report.md alone, the same text")
        run = subprocess.run([sys.executable, report, results, "--out", os.path.join(tmp, "bad"),
                              "--formats", "png,jpeg"], capture_output=True, text=True)
        check(run.returncode == 2 and run.stderr.count("\n") == 1 and "--formats" in run.stderr
              and not os.path.exists(os.path.join(tmp, "bad")), "an unknown --formats value: one line, exit 2")
        md = open(os.path.join(out, "report.md")).read() if os.path.exists(os.path.join(out, "report.md")) else ""
        for heading in ("Table I", "Table III", "Fig. 3", "Fig. 5", "Fig. 6", "Fig. 8", "Fig. 9", "Fig. 10",
                        "Local memory type", "AMD FirePro W5100"):
            check(heading in md, f"report.md mentions {heading}")
        check("needs results over at least 3 inputs" not in md and "Fig. 6: error distribution over 4 inputs" in md,
              "Fig. 6 has the 4 synthetic inputs")

        # Schema 2 axes: the Fig. 10 comparison with Paraprox and the relaxed-barrier table,
        # written by kperf compressed (--out *.json.gz).
        axes = os.path.join(tmp, "axes.json.gz")
        subprocess.run([binary, "run", "--apps", "gaussian3,median" if full else "gaussian3",
                        "--schemes", "accurate,stencil,rows1", "--load", "local,global", "--output", "none,rows:2,center:3", "--output-recon", "nn",
                        "--output-fill", "fused,shared,separate",
                        "--relax", "none,skip", "--wg", "16x8", "--input", "synthetic:smooth", "--size", "48x40",
                        "--warmup", "1", "--reps", "3", "--quiet", "--out", axes],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out2 = os.path.join(tmp, "report2")
        run = subprocess.run([sys.executable, report, axes, "--out", out2], capture_output=True, text=True)
        check(run.returncode == 0, f"report.py reads schema 2 axes ({run.stderr.strip()})")
        md2 = open(os.path.join(out2, "report.md")).read() if run.returncode == 0 else ""
        check(os.path.exists(os.path.join(out2, "fig10_paraprox.png")), "writes fig10_paraprox.png")
        check("| Paraprox rows:2/nn |" in md2 and "| Rows1 |" in md2, "Fig. 10 table lists Rows1 and Paraprox rows:2")
        check("| Paraprox rows:2/nn (2 launches) |" in md2 and "| Paraprox rows:2/nn (local, 2 launches) |" in md2,
              "Fig. 10 keeps the two-launch fill apart from the one-launch one")
        check("| Paraprox rows:2/nn (shared) |" in md2 and "| Paraprox rows:2/nn (local, shared) |" in md2,
              "Fig. 10 keeps the shared fill apart from the fused one")
        check("Relaxed barriers" in md2 and "/relax:skip/" in md2, "relaxed rows listed with their spread")
        # The same document decompressed gives the same report.
        with open(axes, "rb") as f:
            packed = f.read()
        check(packed[:2] == b"\x1f\x8b", "kperf --out x.json.gz writes gzip")
        plain = os.path.join(tmp, "axes.json")
        with open(plain, "wb") as f:
            f.write(gzip.decompress(packed))
        out2p = os.path.join(tmp, "report2-plain")
        run = subprocess.run([sys.executable, report, plain, "--out", out2p], capture_output=True, text=True)
        md2p = open(os.path.join(out2p, "report.md")).read() if run.returncode == 0 else ""
        check(bool(md2) and md2p == md2, "report from the compressed document equals the one from the plain copy")
        # --transfers rows: the SYprox table with kernel, transfer and end-to-end speedups.
        sy = os.path.join(tmp, "syprox.json")
        subprocess.run([binary, "run", "--apps", "gaussian3", "--schemes", "accurate,rows:2", "--recon", "nn",
                        "--precision", "f32,f16", "--perforate", "device,host", "--transfers", "--wg", "16x8",
                        "--input", "synthetic:smooth", "--size", "64x48", "--warmup", "1", "--reps", "3",
                        "--quiet", "--out", sy], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out3 = os.path.join(tmp, "report3")
        run = subprocess.run([sys.executable, report, sy, "--out", out3], capture_output=True, text=True)
        check(run.returncode == 0, f"report.py reads --transfers rows ({run.stderr.strip()})")
        md3 = open(os.path.join(out3, "report.md")).read() if run.returncode == 0 else ""
        table_rows = [l for l in md3.splitlines() if l.startswith("| ") and "| gaussian3 | 64x48 |" in l]
        sy_rows = [l for l in table_rows if l.count(" | ") == 15]
        check("## SYprox" in md3 and len(sy_rows) == 6, f"SYprox table has the 6 ok rows ({len(sy_rows)})")
        check(any("| rows:2/nn | f16 | host | local |" in l and "| 2.6" in l for l in sy_rows),
              "rows:2 f16 host row shows its byte bound (about 2.6x)")
        hv_rows = [l for l in table_rows if l.count(" | ") == 8]
        families = {l.split(" | ")[3] for l in hv_rows}
        check("## Hypervolume by family" in md3 and
              families == {"input perforation", "mixed precision", "host perforation", "combination", "union"},
              f"hypervolume table lists the families present {sorted(families)}")
        union = [l for l in hv_rows if "| union |" in l]
        check(len(union) == 1 and union[0].split(" | ")[7] == "0", "union's D(P, P) is 0")
        check(os.path.exists(os.path.join(out3, "fig_wrong_fraction.png")) and "wrong elements" in md3,
              "the CUDA-aware 1/speedup against wrong-fraction plot")
        # With saved outputs: the gallery shows accurate, approximate and |T - A| per app.
        saved = os.path.join(tmp, "saved.json")
        subprocess.run([binary, "run", "--apps", "gaussian3,median", "--schemes", "accurate,stencil,rows1",
                        "--wg", "16x8", "--input", "synthetic:smooth", "--size", "64x48", "--warmup", "1",
                        "--reps", "3", "--quiet", "--out", saved, "--save-outputs", os.path.join(tmp, "outs")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out4 = os.path.join(tmp, "report4")
        run = subprocess.run([sys.executable, report, saved, "--out", out4], capture_output=True, text=True)
        md4 = open(os.path.join(out4, "report.md")).read() if run.returncode == 0 else ""
        check(run.returncode == 0 and "## Gallery" in md4 and
              all(os.path.exists(os.path.join(out4, f"gallery_{a}_synthetic-smooth.png")) for a in ("gaussian3", "median")),
              f"gallery for both apps ({run.stderr.strip()})")
        # The bilateral phases preset and its perforation: both tables; a --cold run beside a warm
        # one: the size study in and out of the cache.
        ph = os.path.join(tmp, "phases.json")
        subprocess.run([binary, "run", "--preset", "bilateral-phases", "--size", "48x40,64x48", "--wg", "16x8",
                        "--input", "synthetic:smooth", "--warmup", "1", "--reps", "3", "--quiet", "--out", ph],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        runs = {}
        for mode in ("warm", "cold"):
            runs[mode] = os.path.join(tmp, f"{mode}.json")
            subprocess.run([binary, "run", "--apps", "gaussian3,bilateral", "--schemes", "accurate,rows1,rows2",
                            "--loop-skip", "1,2", "--wg", "16x8", "--input", "synthetic:smooth", "--size", "48x40,64x48",
                            "--warmup", "1", "--reps", "3", "--quiet", "--out", runs[mode]]
                           + (["--cold"] if mode == "cold" else []),
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out5 = os.path.join(tmp, "report5")
        run = subprocess.run([sys.executable, report, ph, runs["warm"], runs["cold"], "--out", out5,
                              "--formats", "none"], capture_output=True, text=True)
        md5 = open(os.path.join(out5, "report.md")).read() if run.returncode == 0 else ""
        phase_rows = [l for l in md5.splitlines() if l.startswith("| ") and l.count(" | ") == 5 and "x48 |" in l
                      or l.startswith("| ") and l.count(" | ") == 5 and "x40 |" in l]
        check(run.returncode == 0 and "SagivTech's optimisation phases" in md5 and len(phase_rows) == 2
              and all(l.count("x |") == 4 for l in phase_rows),
              f"bilateral phases table: 2 sizes x 4 phases with speedups ({run.stderr.strip()})")
        check("| bilateral + loop:2" not in md5 and "accurate + loop:2" in md5 and "rows:3/nn + loop:2" in md5,
              "bilateral perforation table lists the loop perforation alone and combined")
        cache_rows = [l for l in md5.splitlines() if l.startswith("| ") and l.count(" | ") == 8 and " us (" in l]
        check("in and out of the cache" in md5 and len(cache_rows) == 4,
              f"size study warm and cold: 2 apps x 2 sizes ({len(cache_rows)}: {cache_rows})")
        # The bandwidth-gap study: one sweep as is and under both probes; probe rows stay out of the
        # figures and fill the table with each variant's bound.
        gap_runs = []
        for name, options in (("as-is", []), ("loads", ["--cl-options=-DKPERF_PROBE_LOADS_ONLY=1"]),
                              ("no-loads", ["--cl-options=-DKPERF_PROBE_NO_LOADS=1"]),
                              ("skeleton", ["--cl-options=-DKPERF_PROBE_LOADS_ONLY=1 -DKPERF_PROBE_NO_LOADS=1"])):
            gap_runs.append(os.path.join(tmp, f"gaps-{name}.json"))
            subprocess.run([binary, "run", "--apps", "gaussian3", "--schemes", "accurate,rows1,rows2", "--wg", "16x8",
                            "--input", "synthetic:smooth", "--size", "64x48", "--warmup", "1", "--reps", "3",
                            "--quiet", "--out", gap_runs[-1]] + options,
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out6 = os.path.join(tmp, "report6")
        run = subprocess.run([sys.executable, report, *gap_runs, "--out", out6, "--formats", "none"],
                             capture_output=True, text=True)
        md6 = open(os.path.join(out6, "report.md")).read() if run.returncode == 0 else ""
        gap_rows = [l for l in md6.splitlines() if l.startswith("| ") and "| gaussian3 | 64 |" in l]
        fig5 = [l for l in md6.splitlines() if l.startswith("| gaussian3 | ") and l.endswith(" % |")]
        fig5_errors = [float(x.strip(" %")) for x in fig5[0].split("|")[2:-1]] if len(fig5) == 1 else []
        check("Bandwidth gaps" in md6 and len(gap_rows) == 1 and gap_rows[0].count("bound") == 2
              and gap_rows[0].count(" / ") == 6,
              f"bandwidth-gap table with two bounds and three probe times per variant ({gap_rows}, {run.stderr.strip()})")
        check(len(fig5_errors) == 2 and max(fig5_errors) < 50,
              f"Fig. 5 errors from the plain run, not the probes' outputs ({fig5})")
        # The same file as version 1 (axes stripped, default-axis rows only) still reads.
        doc = json.load(open(plain))
        doc["schema_version"] = 1
        doc["results"] = [{k: v for k, v in r.items() if k not in ("load", "output", "output_recon", "precision",
                                                                      "perforate", "relax", "iterations_skip", "axes", "output_fill",
                                                                      "speedup_vs_global", "error_reps",
                                                                      "error_spread")}
                          for r in doc["results"] if not r.get("axes")]
        v1 = os.path.join(tmp, "v1.json")
        json.dump(doc, open(v1, "w"))
        run = subprocess.run([sys.executable, report, v1, "--out", os.path.join(tmp, "report1"),
                              "--formats", "none"], capture_output=True, text=True)
        check(run.returncode == 0, f"report.py reads schema 1 ({run.stderr.strip()})")
        doc["schema_version"] = 7
        json.dump(doc, open(v1, "w"))
        run = subprocess.run([sys.executable, report, v1, "--out", os.path.join(tmp, "report7")],
                             capture_output=True, text=True)
        check(run.returncode != 0 and "unsupported schema_version 7" in run.stderr, "schema 7 refused")

        bad_inputs = {"empty.json": "", "garbage.json": "{not json", "other.json": json.dumps({"hello": 1}),
                      "norows.json": json.dumps({"schema_version": 1, "context": {}, "results": []}),
                      "badrow.json": json.dumps({"schema_version": 1, "context": {}, "results": [5]})}
        for name, text in bad_inputs.items():
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text)
            run = subprocess.run([sys.executable, report, path, "--out", os.path.join(tmp, "x")],
                                 capture_output=True, text=True)
            lines = run.stderr.strip().splitlines()
            check(run.returncode != 0 and len(lines) == 1 and name in lines[0],
                  f"{name} refused with one line: {run.stderr.strip()!r}")
        check(not os.path.exists(os.path.join(tmp, "x", "report.md")), "nothing written for bad input")

        # Pipeline documents: a run and a tune of blur-edges make a report with every chain that
        # ran, its stage errors, each fused chain beside its stages in separate launches, the
        # tuned choices beside their baselines, and both fronts.
        pipe = os.path.join(tmp, "pipe.json")
        subprocess.run([binary, "pipeline", "--pipeline", "blur-edges", "--stage",
                        "1:--schemes rows:2 --precision f32,f16", "--stage", "2:--schemes rows:2",
                        "--fuse", "none,all", "--input", "synthetic:smooth", "--size", "40",
                        "--warmup", "1", "--reps", "2", "--quiet", "--out", pipe], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        train, test = os.path.join(tmp, "ptrain"), os.path.join(tmp, "ptest")
        for d, names in ((train, ("smooth", "noise")), (test, ("zoneplate",))):
            os.makedirs(d)
            for n in names:
                subprocess.run([binary, "run", "--apps", "inversion", "--schemes", "accurate", "--wg", "8x8",
                                "--input", f"synthetic:{n}", "--size", "40", "--warmup", "0", "--reps", "1",
                                "--quiet", "--out", os.path.join(tmp, "x.json"), "--save-outputs", d],
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ptune = os.path.join(tmp, "ptune.json")
        made = subprocess.run([binary, "tune", "--pipeline", "blur-edges", "--budget", "0.05,0.5", "--train", train,
                               "--test", test, "--size", "40", "--stage", "1:--schemes rows:2,rows:3",
                               "--warmup", "1", "--reps", "2", "--quiet", "--out", ptune],
                              capture_output=True, text=True)
        check(made.returncode == 0, f"tune --pipeline for the report ({made.stderr.strip()})")
        out = os.path.join(tmp, "report-pipe")
        run = subprocess.run([sys.executable, report, pipe, ptune, "--out", out], capture_output=True, text=True)
        check(run.returncode == 0, f"report.py on pipeline documents ({run.stderr.strip()})")
        md = open(os.path.join(out, "report.md")).read() if run.returncode == 0 else ""
        doc = json.load(open(pipe))
        ran = [r for r in doc["results"] if r["status"] == "ok"]
        check(all(f"{100 * r['final_error']:.3g} %" in md for r in ran), "every chain that ran is in the report")
        fused = [r for r in ran if r["fused"]]
        check(len(fused) == 2, f"two fused chains ran: {len(fused)}")
        for f in fused:
            variants = [s["variant"] for s in f["stages"]]
            unfused = min((r["time_ns"]["median"] for r in ran if not r["fused"] and
                           [s["variant"] for s in r["stages"]] == variants), default=None)
            line = f"| {f['input']['name']} | `{' > '.join(variants)}` |"
            ratio = f"{unfused / f['time_ns']['median']:.2f}x |" if unfused else "?"
            check(any(l.startswith(line) and l.endswith(ratio) for l in md.splitlines()),
                  f"the fused chain beside the unfused one: {line} ... {ratio}")
        for what in ("## Pipelines", "best uniform", "costliest stage alone", "pipeline_front_0.png",
                     "pipeline_tune_front_1.png"):
            check(what in md, f"the pipeline report has {what}")
        check(all(os.path.exists(os.path.join(out, f)) for f in ("pipeline_front_0.png", "pipeline_tune_front_1.png")),
              "the pipeline fronts are drawn")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
