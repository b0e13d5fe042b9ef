"""kperf against the libraries a user would pick instead, on the same card (SPEC 15, kind "peers",
written by scripts/peers.sh): the headline table (report.py --table peers) and the report's
section with every peer row and check."""

import math

from kperf_json import display_name

LIBRARIES = ("NPP", "CuPy", "PyTorch")
APP_ORDER = ("gaussian3", "gaussian5", "sobel3", "median")


def _us(row):
    return f"{row['time_ns']['median'] / 1e3:.1f} us"


def _frac(row):
    v = row.get("of_copy")
    return f" ({v:.2f})" if isinstance(v, (int, float)) and not math.isnan(v) else ""


def _t(row):
    return row["time_ns"]["median"]


def _size(size):
    return f"{size[0]}^2" if size[0] == size[1] else f"{size[0]}x{size[1]}"


def _passed(r):
    return (r.get("checked") or {}).get("ok") is True


def choose(rows, library, app, size):
    """(row, why): the library's fastest row that computes kperf's filter (its outputs within
    tolerance of the reference), whole grids before interiors; or None and the word the cell
    shows (its failure, a failed check, or "-" where the library has no such filter)."""
    mine = [r for r in rows if r["library"] == library and r["app"] == app
            and tuple(r["size"]) == tuple(size)]
    ok = [r for r in mine if r["status"] == "ok" and r.get("time_ns")]
    passed = [r for r in ok if _passed(r)]
    whole = [r for r in passed if r.get("region", "all") == "all"]
    if whole or passed:
        return min(whole or passed, key=_t), ""
    if ok:
        return None, "check failed"
    if mine:
        return None, mine[0]["status"].replace("_", " ")
    return None, "-"


def _kperf(rows, app, size, role):
    return next((r for r in rows if r["library"] == "kperf" and r.get("role") == role
                 and r["app"] == app and tuple(r["size"]) == tuple(size)
                 and r["status"] == "ok"), None)


def _cells(rows, app, size):
    """The table's cells for one app and size, and the best peer row (or None)."""
    acc = _kperf(rows, app, size, "accurate")
    approx = _kperf(rows, app, size, "best approximation")
    cells, best = [], None
    for lib in LIBRARIES:
        row, why = choose(rows, lib, app, size)
        if row is None:
            cells.append(why)
            continue
        mark = " &dagger;" if row.get("region") == "interior" else ""
        speed = f", {_t(row) / _t(acc):.2f}x" if acc else ""
        cells.append(f"{_us(row)}{_frac(row)}{speed}{mark}")
        if best is None or _t(row) < _t(best):
            best = row
    head = [f"{_us(acc)}{_frac(acc)}" if acc else "-"]
    if approx:
        err = (approx.get("error") or {}).get("value")
        tail = [f"`{approx['function']}` {_us(approx)}{_frac(approx)}",
                f"{_t(best) / _t(approx):.2f}x {best['library']}" if best else "-",
                f"{100 * err:.3g} %" if isinstance(err, (int, float)) else "-"]
    else:
        tail = ["-", "-", "-"]
    return head + cells + tail, best, acc


def _copy_cell(doc, size):
    for c in doc["context"].get("copy") or []:
        if (c["width"], c["height"]) == tuple(size):
            return f"{c['copy_ns'] / 1e3:.1f} us"
    return "-"


def _sizes(rows):
    return sorted({tuple(r["size"]) for r in rows}, key=lambda s: (s[0] * s[1], s))


def _apps(rows):
    present = {r["app"] for r in rows} - {"copy"}
    return [a for a in APP_ORDER if a in present] + sorted(present - set(APP_ORDER))


def _behind(rows, size):
    """Where kperf's accurate kernel is not ahead of a peer's checked row at `size`."""
    out = []
    for app in _apps(rows):
        acc = _kperf(rows, app, size, "accurate")
        for lib in LIBRARIES:
            row, _ = choose(rows, lib, app, size)
            if acc and row and _t(row) <= _t(acc):
                out.append(f"{lib} on {app} ({_us(row)} against {_us(acc)})")
    return out


def _footnotes(doc, rows):
    """The lines under a table: what the cells mean, the verdict at the largest size, what was
    not measured and what was left out of the comparison."""
    ctx = doc["context"]
    check = ctx.get("check") or {}
    lines = ["", f"Medians, {ctx.get('cache', 'warm')} (back-to-back launches), on one card in one "
             "call: peers between CUDA events, kperf by OpenCL profiling events, each kperf "
             "variant at its fastest launch shape and load path. (0.98): the copy kernel's time "
             "over this one's; 2.26x: the peer's time over kperf's accurate kernel's. A peer's "
             "cell is its fastest function whose output is kperf's filter (checked on "
             f"{check.get('input') or 'the input'} at {', '.join(check.get('sizes') or []) or '-'}"
             f" against the float64 reference, within {check.get('tolerance', '-')})."]
    chosen = [choose(rows, lib, app, size)[0] for size in _sizes(rows) for app in _apps(rows)
              for lib in LIBRARIES]
    if any(r and r.get("region") == "interior" for r in chosen):
        lines.append("&dagger; the interior alone: this library has no border control for the "
                     "filter here, so its nearest leaves the one-element frame out.")
    sizes = [s for s in _sizes(rows) if any(r["library"] == "kperf" for r in rows
                                            if tuple(r["size"]) == s)]
    if sizes:
        behind = _behind(rows, sizes[-1])
        peers = [r for r in chosen if r and tuple(r["size"]) == sizes[-1]]
        if not peers:
            lines.append(f"No peer's output passed the check at {_size(sizes[-1])}.")
        else:
            lines.append(f"At {_size(sizes[-1])} kperf's accurate kernel is " +
                         ("ahead of every checked peer." if not behind else
                          "not ahead of " + "; ".join(behind) + "."))
    memcpy = [r for r in rows if r["library"] == "CUDA" and r["status"] == "ok"]
    if memcpy:
        lines.append("A device-to-device `cudaMemcpy` of the grid took " + ", ".join(
            f"{_us(r)} at {_size(r['size'])}" for r in memcpy) + ".")
    status = ctx.get("library_status") or {}
    down = [f"{lib}: {s['status'].replace('_', ' ')} ({s.get('reason') or '-'})"
            for lib, s in sorted(status.items()) if s.get("status") != "ok"]
    failed = sorted({f"{r['library']} `{r['function']}` on {r['app']}: {r.get('reason', '-')}"
                     for r in rows if r["status"] != "ok" and r["library"] in LIBRARIES
                     and r["function"] != "-"})
    if down or failed:
        lines.append("Not measured: " + "; ".join(down + failed) + ".")
    outside = sorted({f"{r['library']} `{r['function']}` on {r['app']} (max |diff| "
                      f"{_num(r['checked'].get('max_abs'))} > "
                      f"{_num(r['checked'].get('tolerance'))})"
                      for r in rows if r["status"] == "ok" and r.get("checked")
                      and not _passed(r)})
    if outside:
        lines.append("Left out, their outputs are not kperf's filter: " + "; ".join(outside) + ".")
    return lines


def _num(v):
    return f"{v:.3g}" if isinstance(v, (int, float)) else "-"


def peers_table(docs):
    """report.py --table peers: per size and app, kperf's accurate kernel against each peer and
    what its best approximation adds over the fastest peer."""
    lines = []
    for path, doc in docs:
        rows = doc["results"]
        if len(docs) > 1:
            lines += [f"**{(doc['context'].get('device') or {}).get('name', '?')}** "
                      f"(`{display_name(path)}`)", ""]
        lines += ["| size | app | copy | kperf accurate | " + " | ".join(LIBRARIES) +
                  " | kperf best approximation | over the fastest peer | error |",
                  "|---" * (7 + len(LIBRARIES)) + "|"]
        for size in _sizes(rows):
            for app in _apps(rows):
                if not any(r["app"] == app and tuple(r["size"]) == size for r in rows):
                    continue
                cells, _, _ = _cells(rows, app, size)
                lines.append(f"| {_size(size)} | {app} | {_copy_cell(doc, size)} | " +
                             " | ".join(cells) + " |")
        lines += _footnotes(doc, rows) + [""]
    return lines[:-1]


def peers_section(docs):
    """The report's section: the headline table, then every peer row and every check."""
    md = ["## Peers: kperf against the libraries a user would pick", ""] + peers_table(docs)
    for path, doc in docs:
        ctx = doc["context"]
        versions = "; ".join(f"{lib} " + ", ".join(f"{k} {v}" for k, v in sorted(vs.items()))
                             for lib, vs in sorted((ctx.get("versions") or {}).items()) if vs)
        md += ["", f"### Every peer row (`{display_name(path)}`)", "",
               f"Device: {(ctx.get('device') or {}).get('name', '?')}; versions: "
               f"{versions or '-'}; kperf `{(ctx.get('kperf') or {}).get('git_sha', '?')}`.", "",
               "| size | app | library | function | border | median | of copy | check | status |",
               "|---|---|---|---|---|---|---|---|---|"]
        for r in doc["results"]:
            c = r.get("checked") or {}
            check = "-" if not c else ("ok" if c.get("ok") else "**failed**") + \
                f" ({_num(c.get('max_abs'))} / {_num(c.get('tolerance'))})"
            status = r["status"] if r["status"] == "ok" else \
                f"{r['status']}: {r.get('reason', '-')}"
            md.append(f"| {_size(r['size'])} | {r['app']} | {r['library']} | "
                      f"`{r.get('function', '-')}` | {r.get('border', '-')}"
                      f"{' (interior)' if r.get('region') == 'interior' else ''} | "
                      f"{_us(r) if r.get('time_ns') else '-'} | {_num(r.get('of_copy'))} | "
                      f"{check} | {status} |")
    return md + [""]
