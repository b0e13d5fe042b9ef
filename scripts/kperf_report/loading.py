"""Reading kperf documents: rows normalised with their axis defaults, variants, best launch shapes, medians over inputs."""

from collections import defaultdict
import math

from kperf_json import load_document
import numpy as np


APP_ORDER = ["gaussian3", "gaussian5", "sobel3", "sobel5", "median", "inversion", "hotspot"]


PAPER_NAMES = {"accurate": "Baseline", "stencil": "Stencil", "rows:2": "Rows1", "rows:3": "Rows2"}


SUPPORTED_SCHEMAS = (1, 2)


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


def load(paths, tunes=None, pipelines=None, peers=None):
    """Rows from every file, each tagged with its device name; `kperf tune` documents go to
    `tunes`, `kperf pipeline` and `kperf tune --pipeline` documents to `pipelines` and peers
    documents (scripts/peers.sh) to `peers` (when given) instead."""
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
        if isinstance(doc, dict) and doc.get("kind") in ("pipeline", "pipeline-tune"):
            if pipelines is None:
                raise ReportError(f"{path}: a {doc['kind']} document (report.py --out reads it)")
            pipelines.append((path, doc))
            continue
        if isinstance(doc, dict) and doc.get("kind") == "peers":
            if peers is None:
                raise ReportError(f"{path}: a peers document (report.py --table peers reads it)")
            if not isinstance(doc.get("results"), list) or not isinstance(doc.get("context"), dict):
                raise ReportError(f"{path}: a peers document without 'context'/'results'")
            peers.append((path, doc))
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
    if not rows and not tunes and not pipelines and not peers:
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


def fmt_bytes(n):
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def sizes_of(rows):
    return sorted({(r["input"]["width"], r["input"]["height"]) for r in rows},
                  key=lambda s: (s[0] * s[1], s))


def geomean(values):
    vals = [v for v in values if v and v > 0 and not math.isnan(v)]
    return float(np.exp(np.mean(np.log(vals)))) if vals else float("nan")


def status_summary(rows):
    counts = defaultdict(int)
    for r in rows:
        counts[r.get("status", "?")] += 1
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
