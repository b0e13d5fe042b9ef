#!/usr/bin/python3
"""Whether two kperf documents (run, pipeline, tune) hold the same rows, apart from what timing
changes: every row's key, status, reason and error metrics (a run row's `error`, a chain's
stages' `errors` and `final_error`), compared exactly; times, bandwidth and the context are
left out. What a refactor of the measuring code must not change (tests and docs/testing.md).

usage: same_rows.py OLD.json NEW.json [--ignore FIELD]...
  --ignore FIELD   a row or stage field a documented change explains (e.g. reference, build_log)
Prints one line per difference and a summary; exit 0 when the rows are the same, 1 otherwise.
"""
import gzip
import json
import sys

KEPT = ("status", "reason", "error", "errors", "final_error", "error_reps", "fused", "exact",
        "intermediate", "reference", "output_file", "note", "build_log")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def comparable(row, ignored):
    out = {k: row[k] for k in KEPT if k in row and k not in ignored}
    if "stages" in row:
        out["stages"] = [{k: s[k] for k in s if k not in ignored and k not in ("time_ns",)}
                         for s in row["stages"]]
    if "stage" in row:
        out["tune_stage"] = row["stage"]
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    ignored = {argv[i + 1] for i, a in enumerate(argv) if a == "--ignore"}
    paths = [a for i, a in enumerate(argv[1:], 1) if a != "--ignore" and argv[i - 1] != "--ignore"]
    old, new = (load(p) for p in paths[:2])
    keyed = []
    for doc in (old, new):
        rows = {}
        for r in doc["results"]:
            rows[(r["key"], r.get("stage", ""), r.get("round"))] = comparable(r, ignored)
        keyed.append(rows)
    differences = 0
    for key in sorted(set(keyed[0]) | set(keyed[1]), key=str):
        a, b = keyed[0].get(key), keyed[1].get(key)
        if a is None or b is None:
            print(f"{'only in ' + paths[1] if a is None else 'only in ' + paths[0]}: {key[0]}")
            differences += 1
        elif a != b:
            fields = sorted(f for f in set(a) | set(b) if a.get(f) != b.get(f))
            print(f"differs: {key[0]}: {', '.join(fields)}")
            differences += 1
    print(f"same_rows: {len(keyed[0])} and {len(keyed[1])} rows, {differences} differences")
    return 0 if differences == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
