#!/usr/bin/python3
"""scripts/provenance.py and the provenance report.py writes (SPEC 15), on a scratch results
folder and a scratch tree, with no device and no git history:
- a run whose recorded sources are the tree's is current; one whose file differs is stale, and
  the listing names that file; one backfilled from git (results/provenance.json) is compared the
  same way; a dirty one backfilled without sources is unproven, with its claims.
- the check fails, naming the run, for a run with no provenance (the known-bad case of the ctest
  provenance), for recorded or backfilled sources whose digest is not their sources_sha256, for
  a backfill at another git_sha than the run's, and for a backfill of a run that is gone.
- report.py puts a Provenance section in a report and, under a headline table, a line naming the
  runs measured on other kernels; none under a table whose runs are all current.

usage: provenance_script_test.py SOURCE_DIR
Exit 0 on success, 1 on a failed check.
"""
import copy
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile

from checks import check, finish


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


def digest(sources):
    return sha("".join(f"{s}  {p}\n" for p, s in sorted(sources.items())))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def run_doc(sources=None, git_sha="0123456789ab"):
    """A minimal kperf run document (one ok row) with these recorded sources."""
    ctx = {"git_sha": git_sha, "device": {"name": "Test device"}, "copy_gbps": 1.0}
    if sources is not None:
        ctx.update(sources=sources, sources_sha256=digest(sources))
    row = {"key": "gaussian3/accurate/none/wg:8x8/noise/32x24", "app": "gaussian3",
           "scheme": "accurate", "skip": 1, "recon": "none", "status": "ok", "vec": 1, "py": 1,
           "wg": [8, 8], "width": 32, "height": 24, "input": "noise", "best_wg": True,
           "time_ns": {"median": 1000.0, "min": 900.0, "max": 1100.0}, "speedup": 1.0,
           "error": {"mre": 0.0}, "primary_metric": "mre"}
    return {"schema_version": 2, "kind": "run", "context": ctx, "results": [row]}


def save(results, rel, doc):
    path = os.path.join(results, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    return path


def provenance(script, results, root, *runs):
    return subprocess.run([sys.executable, script, "--results", results, "--root", root] +
                          list(runs), capture_output=True, text=True)


def status_of(listing, rel):
    for line in listing.splitlines():
        words = line.split()
        if len(words) >= 3 and words[2] == rel:
            return words[0]
    return None


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    source_dir = sys.argv[1]
    script = os.path.join(source_dir, "scripts/provenance.py")
    with tempfile.TemporaryDirectory() as tmp:
        root, results = os.path.join(tmp, "tree"), os.path.join(tmp, "tree", "results")
        write(os.path.join(root, "kernels/gaussian3.cl"), "// today's gaussian3\n")
        write(os.path.join(root, "schemes/kperf_tile.cl"), "// today's tile\n")
        today = {"kernels/gaussian3.cl": sha("// today's gaussian3\n"),
                 "schemes/kperf_tile.cl": sha("// today's tile\n")}
        older = dict(today, **{"schemes/kperf_tile.cl": sha("// an older tile\n")})
        save(results, "dev/runs/current.json.gz", run_doc(today))
        save(results, "dev/runs/stale.json.gz", run_doc(older))
        save(results, "dev/runs/backfilled.json.gz", run_doc(None, "aaaaaaaaaaaa"))
        save(results, "dev/runs/dirty.json.gz", run_doc(None, "bbbbbbbbbbbb-dirty"))
        commit_a, commit_b = "a" * 40, "b" * 40
        sidecar = {"about": "test", "commits": {commit_a: older, commit_b: today}, "runs": {
            "dev/runs/backfilled.json.gz": {"git_sha": "aaaaaaaaaaaa", "apps": ["gaussian3"],
                                            "basis": "git", "commit": commit_a,
                                            "sources_sha256": digest(older)},
            "dev/runs/dirty.json.gz": {"git_sha": "bbbbbbbbbbbb-dirty", "apps": ["gaussian3"],
                                       "basis": "none", "base": commit_b, "claims": [
                                           {"commit": commit_b, "by": "its base",
                                            "sources_sha256": digest(today)}]}}}
        write(os.path.join(results, "provenance.json"), json.dumps(sidecar))

        r = provenance(script, results, root)
        check(r.returncode == 0, f"every run accounted for: exit 0 ({r.stderr.strip()})")
        for rel, want in (("current", "current"), ("stale", "stale"), ("backfilled", "stale"),
                          ("dirty", "unproven")):
            got = status_of(r.stdout, f"dev/runs/{rel}.json.gz")
            check(got == want, f"{rel}: {want} ({got})")
        stale_lines = [l for l in r.stdout.splitlines() if "differ from this tree's" in l]
        check(len(stale_lines) == 2 and all("schemes/kperf_tile.cl" in l and "gaussian3" not in l
                                            for l in stale_lines),
              f"the stale runs name the file that differs, and only it ({stale_lines})")

        # Known-bad cases: each fails the check and names the run.
        save(results, "dev/runs/orphan.json.gz", run_doc(None, "cccccccccccc"))
        r = provenance(script, results, root)
        check(r.returncode == 1 and status_of(r.stdout, "dev/runs/orphan.json.gz") == "unaccounted",
              f"a run with no provenance fails the check ({r.returncode}: {r.stdout[-300:]})")
        os.remove(os.path.join(results, "dev/runs/orphan.json.gz"))
        tampered = run_doc(today)
        tampered["context"]["sources"]["kernels/gaussian3.cl"] = sha("something else")
        save(results, "dev/runs/tampered.json.gz", tampered)
        r = provenance(script, results, root)
        check(r.returncode == 1 and status_of(r.stdout, "dev/runs/tampered.json.gz") ==
              "inconsistent", "recorded sources that are not their digest's fail the check")
        os.remove(os.path.join(results, "dev/runs/tampered.json.gz"))
        for what, edit in (
                ("a backfilled file's hash changed",
                 lambda s: s["commits"][commit_a].update({"kernels/gaussian3.cl": sha("x")})),
                ("a backfill at another git_sha",
                 lambda s: s["runs"]["dev/runs/backfilled.json.gz"].update(git_sha="dddddddddddd")),
                ("a backfill of a run that is gone",
                 lambda s: s["runs"].update({"dev/runs/gone.json.gz": {"git_sha": "x",
                                                                      "basis": "none"}}))):
            bad = copy.deepcopy(sidecar)
            edit(bad)
            write(os.path.join(results, "provenance.json"), json.dumps(bad))
            r = provenance(script, results, root)
            check(r.returncode == 1,
                  f"{what} fails the check ({r.stdout[-200:]} {r.stderr[-200:]})")
        write(os.path.join(results, "provenance.json"), json.dumps(sidecar))
    check_reports(source_dir)
    return finish("provenance_script")


def check_reports(source_dir):
    """report.py on this repository's results: a section in every report, a line under a table
    of runs measured on other kernels (every committed run is accounted for, ctest provenance)."""
    report = os.path.join(source_dir, "scripts/report.py")
    # Two committed runs of older kernels: the H100's HPCS'19 run (stale: git proves its files
    # differ) and PoCL's bilateral phases (unproven: built from a -dirty tree).
    h100 = os.path.join(source_dir, "results/nvidia-h100/runs")
    stale = subprocess.run([sys.executable, report, "--table", "harness",
                            os.path.join(h100, "paper-512-cold.json.gz")],
                           capture_output=True, text=True)
    check(stale.returncode == 0 and stale.stdout.rstrip().splitlines()[-1].startswith(
        "**Provenance**: measured on other kernels than this tree's: `paper-512-cold.json`"),
        f"a headline table of a run on other kernels says so ({stale.stdout[-300:]})")
    pocl = os.path.join(source_dir, "results/pocl-cpu/runs")
    with tempfile.TemporaryDirectory() as tmp:
        made = subprocess.run([sys.executable, report,
                               os.path.join(pocl, "bilateral-phases.json.gz"),
                               "--out", tmp, "--formats", "none"], capture_output=True, text=True)
        md = open(os.path.join(tmp, "report.md")).read() if made.returncode == 0 else ""
        check("## Provenance" in md and "- `bilateral-phases.json`: **sources unproven**" in md,
              f"a report has a Provenance section naming each run ({made.stderr[-300:]})")
    # Runs whose recorded sources are this tree's files, whatever the tree holds today: copies
    # of committed runs with context.sources set to the tree's contents of the files they built.
    sys.path.insert(0, os.path.join(source_dir, "scripts"))
    import kperf_provenance
    sidecar = kperf_provenance.load_sidecar(os.path.join(source_dir, "results/provenance.json"))
    with tempfile.TemporaryDirectory() as tmp:
        current = []
        for c in ("warm", "cold"):
            for i in (1, 2, 3, 4):
                name = f"cache-2048-{c}{i}-7b14ae6.json.gz"
                doc = json.loads(gzip.decompress(open(os.path.join(h100, name), "rb").read()))
                files = sidecar.get(f"nvidia-h100/runs/{name}", {}).get("sources", {})
                check(files, f"results/provenance.json proves the files {name} built")
                here = {f: sha(open(os.path.join(source_dir, f)).read()) for f in files
                        if os.path.isfile(os.path.join(source_dir, f))}
                doc["context"]["sources"], doc["context"]["sources_sha256"] = here, digest(here)
                current.append(os.path.join(tmp, name))
                with gzip.open(current[-1], "wt") as f:
                    json.dump(doc, f)
        table = subprocess.run([sys.executable, report, "--table", "cache-repeat"] + current,
                               capture_output=True, text=True)
    check(table.returncode == 0 and "Provenance" not in table.stdout,
          f"no line under a table whose runs are all current ({table.stdout[-200:]})")

if __name__ == "__main__":
    sys.exit(main())
