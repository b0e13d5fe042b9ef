#!/usr/bin/env python3
"""The peers document (SPEC section 15, kind "peers"): every peer library's rows, each checked
against kperf's filter on the photo, beside kperf's accurate and best approximated rows of the
same run and the device's copy (scripts/peers.sh runs it last; docs/json.md describes it).

usage: python3 scripts/peers/merge.py --inputs DIR --outputs DIR --kperf RUN.json[.gz]
       [--kperf-check CHECK.json[.gz]] [--library LIB.json]... [--steps FILE] --out PEERS.json.gz

--library: what a peer program wrote (rows, saved outputs, versions); --kperf: the kperf run of
the same call at the timed sizes (its rows, copy bandwidth and provenance); --kperf-check: kperf's
accurate kernels on the checked inputs with --save-outputs; --steps: lines "NAME EXIT SECONDS" of
peers.sh's steps. A file that is missing or unreadable is a note in the document, never a crash:
the document is written with what there is. Exit 2 for a bad command line or no inputs.
"""
import argparse
import datetime
import gzip
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers_common as pc  # noqa: E402

SCHEMA = 1
# Row fields that make a kperf row approximate when not at these values.
EXACT = {"scheme": "accurate", "precision": "f32", "output": "none", "relax": "none",
         "perforate": "device", "iterations_skip": 0, "loop_skip": 1}
DTYPE = {"f32": "float32", "f16": "float16", "f16in": "float16 in, float32 out",
         "bf16": "bfloat16"}


def read_doc(path, notes, what):
    """A JSON document (plain or gzip), or None with a note saying why."""
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        return json.loads(data)
    except (OSError, ValueError, EOFError) as exc:
        notes.append(f"{what} {path}: not read ({pc.short(exc)})")
        return None


class Checker:
    """Checks saved outputs against kperf's filters on the inputs, each reference made once."""

    def __init__(self, manifest):
        self.inputs = {tuple(e["size"]): e["path"] for e in manifest["entries"]}
        self.refs, self.grids = {}, {}

    def grid(self, size):
        if size not in self.grids:
            self.grids[size] = np.load(self.inputs[size])
        return self.grids[size]

    def run(self, app, size, path, region):
        size = tuple(size)
        if size not in self.inputs:
            return {"ok": False, "reason": f"no input at {pc.size_name(size)}"}
        if (app, size) not in self.refs:
            self.refs[(app, size)] = pc.reference(app, self.grid(size))
        try:
            out = np.load(path)
        except (OSError, ValueError) as exc:
            return {"ok": False, "reason": f"output not read: {pc.short(exc)}"}
        return pc.check(app, out, self.grid(size), region, self.refs[(app, size)])


def summarise(checks):
    """One row's `checked`: every check of its library, app and function together."""
    if not checks:
        return {"ok": False, "max_abs": None, "tolerance": None, "sizes": [],
                "reason": "no output was checked"}
    done = [c for c in checks if c.get("max_abs") is not None]
    out = {"ok": all(c.get("ok") for c in checks),
           "max_abs": max(c["max_abs"] for c in done) if done else None,
           "tolerance": min((c["tolerance"] for c in done), default=None),
           "sizes": [pc.size_name(c["size"]) for c in checks],
           "region": checks[0].get("region", "all")}
    reasons = [c["reason"] for c in checks if c.get("reason")]
    if reasons:
        out["reason"] = reasons[0]
    return out


def check_library(doc, checker, outputs_dir):
    """The library's checks, each with its result, and {(library, app, function): checked}."""
    results, by_fn = [], {}
    for c in doc.get("checks", []):
        if c.get("status") == "ok":
            res = checker.run(c["app"], c["size"], os.path.join(outputs_dir, c["output_file"]),
                              c.get("region", "all"))
        else:
            res = {"ok": False, "reason": f"{c.get('status')}: {c.get('reason', '')}"}
        entry = dict(c, **res)
        entry.setdefault("region", c.get("region", "all"))
        results.append(entry)
        by_fn.setdefault((c["library"], c["app"], c["function"]), []).append(entry)
    return results, {k: summarise(v) for k, v in by_fn.items()}


def copy_ns(kperf_doc):
    """{(W, H): the time of the run's copy kernel (the faster of scalar and float4) to move one
    float32 grid in and out}: the roofline every row's of_copy divides."""
    out = {}
    for c in ((kperf_doc or {}).get("context") or {}).get("copy") or []:
        if c.get("status", "ok") == "ok" and c.get("copy_gbps"):
            out[(c["width"], c["height"])] = 8.0 * c["width"] * c["height"] / c["copy_gbps"]
    return out


def with_copy(row, copies):
    size = tuple(row["size"])
    t = (row.get("time_ns") or {}).get("median")
    row["of_copy"] = copies[size] / t if size in copies and t else None
    return row


def is_exact(r):
    return all(r.get(k, v) == v for k, v in EXACT.items())


def variant(r):
    """The row's key without its launch shape, input and size: what a reader calls it."""
    parts = r["key"].split("/")
    return "/".join(p for p in parts[1:-2] if not p.startswith("wg:"))


def kperf_rows(kperf_doc, kperf_checked):
    """Per app and size of the run: the accurate kernel's fastest row and the fastest
    approximated one (any scheme, precision or output scheme), each at its best shape."""
    best = {}
    for r in (kperf_doc or {}).get("results", []):
        if r.get("status") != "ok" or not r.get("time_ns"):
            continue
        role = "accurate" if is_exact(r) else "best approximation"
        key = (r["app"], r["input"]["width"], r["input"]["height"], role)
        if key not in best or r["time_ns"]["median"] < best[key]["time_ns"]["median"]:
            best[key] = r
    rows = []
    for (app, w, h, role), r in sorted(best.items()):
        metric = r.get("primary_metric") or "mre"
        value = (r.get("error") or {}).get(metric)
        row = {"library": "kperf", "role": role, "app": app, "function": variant(r),
               "key": r["key"], "border": "replicate", "region": "all", "size": [w, h],
               "dtype": DTYPE.get(r.get("precision", "f32"), r.get("precision")),
               "status": "ok", "time_ns": {k: r["time_ns"][k] for k in ("median", "min", "max")},
               "error": {"metric": metric, "value": value if isinstance(value, (int, float))
                         else None}}
        if role == "accurate":
            row["checked"] = kperf_checked.get(app) or summarise([])
        rows.append(row)
    return rows


def kperf_checks(check_doc, checker):
    """kperf's accurate outputs on the checked inputs, checked as every peer's are."""
    results, by_app = [], {}
    for r in (check_doc or {}).get("results", []):
        if r.get("status") != "ok" or not is_exact(r) or not r.get("output_file"):
            continue
        size = [r["input"]["width"], r["input"]["height"]]
        res = checker.run(r["app"], size, r["output_file"], "all")
        entry = dict(library="kperf", app=r["app"], function=variant(r), size=size,
                     output_file=os.path.basename(r["output_file"]), status="ok", **res)
        results.append(entry)
        by_app.setdefault(r["app"], []).append(entry)
    return results, {app: summarise(v) for app, v in by_app.items()}


def context(args, kperf_doc, libraries, notes, steps):
    kctx = (kperf_doc or {}).get("context") or {}
    manifest = pc.load_manifest(args.inputs)
    warm = not kctx.get("cold")
    ctx = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "device": kctx.get("device"),
           "peer_devices": {d["library"]: d.get("device") for d in libraries},
           "versions": {d["library"]: d.get("versions", {}) for d in libraries},
           "library_status": {d["library"]: {"status": d.get("status", "ok"),
                                             "reason": d.get("reason", "")} for d in libraries},
           "cache": "warm" if warm else "cold",
           "timing": {
               "peers": "a CUDA event pair around each launch (the library call as a user makes "
                        "it, from Python for CuPy and PyTorch), after warm-up launches, each "
                        "behind a kernel that holds the GPU for about 1 ms so that the events "
                        "time the device's work and not the host's (versions.LIBRARY.hold says "
                        "where none could be launched); median, min and max of the samples; no "
                        "cache flush between launches",
               "kperf": "an OpenCL profiling event per launch (semantics 11)" +
                        ("" if warm else ", the cache flushed before every sample"),
               "warmup": kctx.get("warmup"), "reps": kctx.get("reps")},
           "of_copy": "the time of the run's copy kernel (the faster of scalar and float4) for "
                      "one float32 grid in and out, over the row's median time",
           "check": {"input": manifest.get("photo"),
                     "sizes": [pc.size_name(e["size"]) for e in manifest["entries"]
                               if e["checked"]],
                     "tolerance": pc.TOLERANCE_RULE,
                     "reference": "kperf's filters in float64 on the float32 input "
                                  "(semantics 1-2, scripts/peers/peers_common.py)"},
           "copy": [{"width": w, "height": h, "copy_ns": t}
                    for (w, h), t in sorted(copy_ns(kperf_doc).items())],
           "kperf": {k: kctx.get(k) for k in ("kperf_version", "git_sha", "command_line", "date")},
           "notes": notes, "steps": steps}
    ctx["kperf"]["run"] = os.path.basename(args.kperf or "")
    for k in ("git_sha", "sources", "sources_sha256"):
        if k in kctx:
            ctx[k] = kctx[k]
    return ctx


def read_steps(path, notes):
    steps = []
    if not path:
        return steps
    try:
        with open(path) as f:
            for line in f:
                name, code, seconds = (line.split() + ["", "", ""])[:3]
                steps.append({"name": name, "exit": int(code) if code.lstrip("-").isdigit()
                              else None, "seconds": float(seconds) if seconds else None})
    except OSError as exc:
        notes.append(f"steps {path}: not read ({pc.short(exc)})")
    return steps


def write(path, doc):
    data = json.dumps(doc, indent=None, separators=(",", ":"), allow_nan=False).encode()
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(gzip.compress(data, mtime=0) if path.endswith(".gz") else data)
    os.replace(tmp, path)


def summary_lines(rows):
    """Stdout: at the largest size, kperf's accurate time and each peer's speedup."""
    sizes = sorted({tuple(r["size"]) for r in rows if r["library"] == "kperf"},
                   key=lambda s: s[0] * s[1])
    if not sizes:
        return ["merge.py: no kperf rows"]
    lines = []
    for app in pc.APPS:
        here = [r for r in rows if tuple(r["size"]) == sizes[-1] and r["app"] == app
                and r["status"] == "ok"]
        acc = next((r for r in here if r.get("role") == "accurate"), None)
        if not acc:
            continue
        cells = []
        for lib in ("NPP", "CuPy", "PyTorch"):
            ok = [r for r in here if r["library"] == lib and (r.get("checked") or {}).get("ok")]
            if ok:
                best = min(ok, key=lambda r: r["time_ns"]["median"])
                cells.append(f"{lib} {best['time_ns']['median'] / 1e3:.1f} us "
                             f"({best['time_ns']['median'] / acc['time_ns']['median']:.2f}x)")
        lines.append(f"{pc.size_name(sizes[-1])} {app}: kperf {acc['time_ns']['median'] / 1e3:.1f}"
                     f" us; " + (", ".join(cells) or "no checked peer"))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--outputs", required=True)
    ap.add_argument("--kperf")
    ap.add_argument("--kperf-check")
    ap.add_argument("--library", action="append", default=[])
    ap.add_argument("--steps")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    try:
        checker = Checker(pc.load_manifest(args.inputs))
    except (OSError, ValueError, KeyError) as exc:
        print(f"merge.py: {args.inputs}: no readable manifest.json ({pc.short(exc)})",
              file=sys.stderr)
        return 2
    notes = []
    kperf_doc = read_doc(args.kperf, notes, "kperf run")
    libraries = [d for d in (read_doc(p, notes, "library") for p in args.library) if d]
    copies = copy_ns(kperf_doc)
    if kperf_doc is not None and not copies:
        notes.append("the kperf run has no copy bandwidth: of_copy is null")
    rows, checks = [], []
    kchecks, kchecked = kperf_checks(read_doc(args.kperf_check, notes, "kperf check"), checker)
    checks += kchecks
    rows += [with_copy(r, copies) for r in kperf_rows(kperf_doc, kchecked)]
    for doc in libraries:
        done, checked = check_library(doc, checker, args.outputs)
        checks += done
        for r in doc.get("rows", []):
            r = {k: v for k, v in r.items() if k != "samples_ns"}
            if r["status"] == "ok" and r["app"] != "copy":
                r["checked"] = checked.get((r["library"], r["app"], r["function"])) or \
                    summarise([])
            rows.append(with_copy(r, copies))
    order = {app: i for i, app in enumerate(pc.APPS + ("copy",))}
    rows.sort(key=lambda r: (r["size"][0] * r["size"][1], order.get(r["app"], 99), r["app"],
                             r["library"] != "kperf", r["library"], r.get("function", "")))
    doc = {"kind": "peers", "peers_schema_version": SCHEMA,
           "context": context(args, kperf_doc, libraries, notes, read_steps(args.steps, notes)),
           "results": rows, "checks": checks}
    write(args.out, doc)
    failed = [c for c in checks if not c.get("ok")]
    print("\n".join(summary_lines(rows)))
    print(f"merge.py: {len(rows)} rows, {len(checks) - len(failed)} of {len(checks)} checks "
          f"within tolerance, {len(notes)} notes -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
