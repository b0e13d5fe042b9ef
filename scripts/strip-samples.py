#!/usr/bin/python3
"""Removes the raw samples from kperf result files before they are committed: every row's
samples_ns, transfer_samples_ns and round_start_ns (run and tune documents alike). The reports
(scripts/report.py) read the medians and spreads in time_ns, never the samples; a study whose
report reads samples (scripts/fig10_repeats.py) commits its runs whole. The context records the
removal, so a reader knows to look in git history or rerun for the samples.

usage: scripts/strip-samples.py FILE.json[.gz]...   (rewritten in place, gzip -9 with no name)
"""
import gzip
import json
import os
import sys

RAW = ("samples_ns", "transfer_samples_ns", "round_start_ns")


def strip(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    removed = 0
    for row in doc.get("results", []):
        for field in RAW:
            if field in row:
                removed += len(row[field]) if isinstance(row[field], list) else 1
                del row[field]
    doc.setdefault("context", {})["raw_samples"] = "removed (scripts/strip-samples.py)"
    text = json.dumps(doc, separators=(",", ":")) + "\n"
    tmp = path + ".tmp"
    if path.endswith(".gz"):
        with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", compresslevel=9,
                                                   fileobj=raw, mtime=0) as f:
            f.write(text.encode())
    else:
        with open(tmp, "w") as f:
            f.write(text)
    os.replace(tmp, path)
    return removed


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    for path in sys.argv[1:]:
        print(f"{path}: {strip(path)} samples removed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
