#!/usr/bin/python3
"""Sharded runs on the tests' OpenCL device (PoCL in CI): `kperf run --shard I/N` for N = 3, then
`kperf merge`, against one unsharded run of the same options:
- the merged document has exactly the single run's configurations and statuses, each once, and
  every row's error metrics equal the single run's;
- every shard measured the accurate baselines its configurations need, and kept them apart;
- every derived field is what the merged rows give: the best shape per variant, and each
  speedup the accurate kernel's best median over the variant's best, on the same device;
- the merged sources are the union of the shards' (SPEC 15), with their digest;
- bad merges (a missing shard, a shard twice, two shards holding one configuration, another
  fingerprint, a shard that built a file with other contents, a file that is not a shard) and bad --shard values get one line, exit 2, no file.

usage: shard_test.py KPERF_BINARY
Exit 0 on success, 1 on a failed check.
"""
import copy
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

from checks import check, finish



def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def expect_refused(binary, tmp, args, needle, what):
    out = os.path.join(tmp, "refused.json")
    r = run([binary] + args[:1] + ([out] if args[0] == "merge" else []) + args[1:] +
            (["--out", out] if args[0] == "run" else []))
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2, f"{what}: exit 2 (got {r.returncode}: {r.stderr.strip()})")
    check(len(lines) == 1 and needle in lines[0], f"{what}: one line with '{needle}' ({lines})")
    check(not os.path.exists(out), f"{what}: nothing written")


def check_derived(doc):
    rows = [r for r in doc["results"] + doc.get("baselines", []) if r["status"] == "ok"]
    best = {}
    for r in rows:
        group = (r.get("device_id"), r["app"], r["input"]["name"], r["variant"])
        if group not in best or r["time_ns"]["median"] < best[group]["time_ns"]["median"]:
            best[group] = r
    for r in doc["results"]:
        if r["status"] != "ok":
            continue
        group = (r.get("device_id"), r["app"], r["input"]["name"], r["variant"])
        check(r["best_wg"] == (best[group] is r or best[group]["key"] == r["key"]), f"{r['key']}: best_wg")
        base = next(b for (dev, app, inp, _), b in best.items()
                    if (dev, app, inp) == group[:3] and b["scheme"] == "accurate" and b.get("axes", "") == "")
        want = base["time_ns"]["median"] / best[group]["time_ns"]["median"]
        check(abs(r["speedup"] - want) <= 1e-12 * want, f"{r['key']}: speedup {r['speedup']} vs {want}")


def check_merged_sources(merged, shards):
    """The merged run built what its shards built: the union of their sources and of their builds,
    with their digests (SPEC 15 and docs/json.md: the SHA-256 of sha256sum's lines in path order;
    then of the builds' lines)."""
    union = {}
    for s in shards:
        union.update(s["context"]["sources"])
    sources = merged["context"].get("sources")
    check(sources == union, "the merged sources are the union of the shards'")
    lines = "".join(f"{sha}  {path}\n" for path, sha in sorted(union.items()))
    check(merged["context"].get("sources_sha256") == hashlib.sha256(lines.encode()).hexdigest(),
          "the merged sources_sha256 is the digest of the union")
    builds = sorted({(b["source"], b["options"]) for s in shards for b in s["context"]["builds"]})
    check([(b["source"], b["options"]) for b in merged["context"].get("builds", [])] == builds,
          "the merged builds are the union of the shards', sorted")
    lines += "".join(f"{source}  {options}\n" for source, options in builds)
    check(merged["context"].get("builds_sha256") == hashlib.sha256(lines.encode()).hexdigest(),
          "the merged builds_sha256 is the digest of the unions")


def main():
    binary = os.path.abspath(sys.argv[1])
    opts = ["--apps", "gaussian3,median,inversion", "--schemes", "accurate,stencil,rows:2,cols:2",
            "--load", "local,global", "--wg", "8x8,16x4", "--size", "48x40", "--input", "synthetic:smooth",
            "--warmup", "0", "--reps", "3", "--quiet"]
    with tempfile.TemporaryDirectory() as tmp:
        single = os.path.join(tmp, "single.json")
        r = run([binary, "run"] + opts + ["--out", single])
        check(r.returncode == 0, f"single run ({r.stderr.strip()[-300:]})")
        shards = []
        for i in range(3):
            shards.append(os.path.join(tmp, f"s{i}.json"))
            r = run([binary, "run"] + opts + ["--shard", f"{i}/3", "--out", shards[-1]])
            check(r.returncode == 0, f"shard {i} ({r.stderr.strip()[-300:]})")
        merged = os.path.join(tmp, "merged.json")
        r = run([binary, "merge", merged] + shards[::-1])  # any order
        check(r.returncode == 0, f"merge ({r.stderr.strip()[-300:]})")
        if r.returncode == 0:
            a, m = json.load(open(single)), json.load(open(merged))
            keys = [x["key"] for x in m["results"]]
            check(len(keys) == len(set(keys)), "every configuration once")
            check({x["key"]: x["status"] for x in a["results"]} == {x["key"]: x["status"] for x in m["results"]},
                  "the merged configurations and statuses are the single run's")
            # Errors do not depend on which process measured a configuration: every row's error
            # metrics (and reason, where it failed) are the single run's, exactly.
            single_rows = {x["key"]: x for x in a["results"]}
            for x in m["results"]:
                want = single_rows.get(x["key"], {})
                check(x.get("error") == want.get("error") and x.get("reason") == want.get("reason"),
                      f"{x['key']}: merged error {x.get('error')} != the single run's {want.get('error')}")
            check(sum(1 for x in m["results"] if x.get("error")) >= len(m["results"]) // 2,
                  "most merged rows carry errors to compare")
            check(m["context"]["complete"] and "shard" not in m["context"], "a complete, unsharded context")
            check(len(m["context"]["merge"]["shards"]) == 3, "the context lists the shards")
            check_merged_sources(m, [json.load(open(p)) for p in shards])
            check_derived(m)
            owned = defaultdict(int)
            for i, path in enumerate(shards):
                s = json.load(open(path))
                copies = [x for x in s["results"] if x.get("shard_baseline")]
                check(all(x["scheme"] == "accurate" for x in copies), f"shard {i}: only baselines copied")
                apps = {u.split("/")[0] for u in s["context"]["shard"]["owned"]}
                for app in apps:  # the baselines its speedups need, measured here
                    check(any(x["app"] == app and x["scheme"] == "accurate" and x.get("axes", "") == ""
                              for x in s["results"]), f"shard {i}: accurate {app} measured")
                for u in s["context"]["shard"]["owned"]:
                    owned[u] += 1
            check(all(n == 1 for n in owned.values()), "each unit in one shard")

        # Bad merges and bad --shard values.
        expect_refused(binary, tmp, ["merge"] + shards[:2], "missing shard 2 of 3", "a missing shard")
        expect_refused(binary, tmp, ["merge", shards[0], shards[1], shards[1], shards[2]],
                       "shard 1 is given twice", "a duplicated shard")
        expect_refused(binary, tmp, ["merge"] + shards + [single], "not a shard", "a file that is not a shard")
        doc = json.load(open(shards[2]))
        overlap = copy.deepcopy(doc)
        overlap["context"]["shard"]["owned"].append(json.load(open(shards[1]))["context"]["shard"]["owned"][0])
        bad = os.path.join(tmp, "overlap.json")
        json.dump(overlap, open(bad, "w"))
        expect_refused(binary, tmp, ["merge", shards[0], shards[1], bad], "both hold", "overlapping shards")
        built_otherwise = copy.deepcopy(doc)  # one file of shard 2 with other contents
        first = sorted(built_otherwise["context"]["sources"])[0]
        built_otherwise["context"]["sources"][first] = "0" * 64
        bad = os.path.join(tmp, "built-otherwise.json")
        json.dump(built_otherwise, open(bad, "w"))
        expect_refused(binary, tmp, ["merge", shards[0], shards[1], bad], "measured other kernels",
                       "a shard that built a file with other contents")
        other = os.path.join(tmp, "other.json")
        r = run([binary, "run"] + opts[:-3] + ["--reps", "2", "--quiet", "--shard", "2/3", "--out", other])
        expect_refused(binary, tmp, ["merge", shards[0], shards[1], other], "measured under other settings",
                       "another fingerprint")
        for value, needle in (("3/3", "I must be in 0..2"), ("0/0", "N must be in"), ("a/b", "expected I/N"),
                              ("1", "expected I/N"), ("-1/2", "I must be in")):
            expect_refused(binary, tmp, ["run", "--shard", value] + opts, needle, f"--shard {value}")
    return finish("shards")


if __name__ == "__main__":
    sys.exit(main())
