#!/usr/bin/python3
"""Cross-device fidelity: the same configurations on two devices must give the same errors.

usage: /usr/bin/python3 scripts/compare_devices.py A.json B.json [--markdown FILE]

Reads schema versions 1 and 2. Rows are matched by result key (app/scheme/recon[/axes]/wg/input/
size); relaxed-barrier rows (a race by design) are left out. For every pair that ran on both, mre
and me are compared: relative difference <= 1e-5 where the error is meaningful
(>= 1e-4), else absolute difference <= 1e-6 (accurate rows hold only float rounding, whose
relative difference between devices says nothing). Exit 0 when every pair agrees.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kperf_json import load_document  # noqa: E402

REL_TOL = 1e-5
ABS_TOL = 1e-6
MEANINGFUL = 1e-4


def load(path):
    try:
        doc = load_document(path)
        if doc.get("schema_version") not in (1, 2):
            raise ValueError(f"unsupported schema_version {doc.get('schema_version')}")
        return doc["context"]["device"]["name"], {r["key"]: r for r in doc["results"]}
    except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"compare_devices.py: {path}: not a kperf results file ({exc})")


def compare(a_rows, b_rows):
    """(pairs compared, list of disagreements, worst relative difference on meaningful errors)."""
    pairs, bad, worst = 0, [], 0.0
    for key, a in a_rows.items():
        b = b_rows.get(key)
        if not b or a.get("status") != "ok" or b.get("status") != "ok":
            continue
        if a.get("relax", "none") != "none":
            continue
        pairs += 1
        for metric in ("mre", "me"):
            x, y = a["error"][metric], b["error"][metric]
            if not all(isinstance(v, (int, float)) for v in (x, y)):
                continue
            if max(abs(x), abs(y)) >= MEANINGFUL:
                rel = abs(x - y) / max(abs(x), abs(y))
                worst = max(worst, rel)
                if rel > REL_TOL:
                    bad.append(f"{key} {metric}: {x:.9g} vs {y:.9g} (relative {rel:.2e})")
            elif abs(x - y) > ABS_TOL:
                bad.append(f"{key} {metric}: {x:.3g} vs {y:.3g} (absolute {abs(x - y):.2e})")
    return pairs, bad, worst


def verdict_markdown(name_a, name_b, pairs, bad, worst):
    head = (f"Cross-device fidelity, {name_a} vs {name_b}: {pairs} configurations ran on both; "
            f"largest relative difference in mre/me (errors >= {MEANINGFUL:g}) {worst:.2e}. ")
    if not pairs:
        return head + "**No common configurations: nothing compared.**"
    if not bad:
        return head + f"**PASS**: every pair within relative {REL_TOL:g} (absolute {ABS_TOL:g} below {MEANINGFUL:g})."
    return head + f"**FAIL**: {len(bad)} disagreements, first: " + "; ".join(bad[:5])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--markdown", help="also write the verdict to this file")
    args = ap.parse_args()
    name_a, a = load(args.a)
    name_b, b = load(args.b)
    pairs, bad, worst = compare(a, b)
    text = verdict_markdown(name_a, name_b, pairs, bad, worst)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    return 0 if pairs and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
