#!/usr/bin/python3
"""Which kernels each committed run measured, against this tree's (SPEC section 15).

usage: scripts/provenance.py [RUN...]           list every committed run (or each RUN)
       scripts/provenance.py --backfill         rewrite results/provenance.json from git

Lists each run with its status: `current` (its sources are this tree's), `stale` (measured on
other kernels: the files that differ follow), `unproven` (written from a dirty tree before kperf
recorded its sources: git cannot tell what it built), or `unaccounted` (no sources recorded and
none backfilled). The basis says where the sources come from: `recorded` (the document's
context.sources) or `git` (results/provenance.json, from the commit of a clean git_sha). Exits 1
when a run is unaccounted, or when recorded or backfilled sources do not match their digest or,
where git has the commits, what git holds (ctest `provenance`).

--backfill writes results/provenance.json for the committed runs without context.sources: for a
clean git_sha, every kernel and scheme file at that commit but the kernel files of apps the run
did not measure (a superset of what it built; kperf did not record the options it built with);
for a -dirty one, no sources, the commit the build stood on and the commit the run's file name
gives, each with its files for comparison. It needs git history; the check does not (a shallow
clone reads the committed file).
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kperf_provenance as kp  # noqa: E402
from kperf_json import load_document  # noqa: E402

class Git:
    """Blobs and trees of this repository's history through one `git cat-file --batch`."""

    def __init__(self, root):
        self.root = root
        self.proc = subprocess.Popen(["git", "-C", root, "cat-file", "--batch"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.trees = {}

    def object(self, name):
        """The bytes of `name` (COMMIT:PATH, a blob id), or None where history lacks it."""
        self.proc.stdin.write(name.encode() + b"\n")
        self.proc.stdin.flush()
        head = self.proc.stdout.readline().split()
        if len(head) < 3 or head[1] == b"missing":
            return None
        data = self.proc.stdout.read(int(head[2]))
        self.proc.stdout.read(1)
        return data

    def commit(self, short):
        """The full id of a commit named by a prefix, or None."""
        made = subprocess.run(["git", "-C", self.root, "rev-parse", "--verify", "-q",
                               short + "^{commit}"], capture_output=True, text=True)
        return made.stdout.strip() if made.returncode == 0 else None

    def files(self, commit):
        """Every file path of the commit's tree."""
        if commit not in self.trees:
            made = subprocess.run(["git", "-C", self.root, "ls-tree", "-r", "--name-only", commit],
                                  capture_output=True, text=True, check=True)
            self.trees[commit] = made.stdout.split("\n")
        return self.trees[commit]

    def sha256(self, commit, path):
        import hashlib
        return hashlib.sha256(self.object(f"{commit}:{path}")).hexdigest()


def apps_of(doc):
    """The apps whose kernels a document measured: its rows' apps, a chain's stage apps, its
    user apps; None when it names none."""
    apps = set()
    for row in doc.get("results", []):
        if isinstance(row.get("app"), str):
            apps.add(row["app"])
        key = row.get("key", "")
        if doc.get("kind") in ("pipeline", "pipeline-tune"):
            apps.update(re.findall(r"(?:^[^/]*/|> )(\w+):", key))
    return apps or None


def user_app_files(tree, ctx):
    """The paths in `tree` of a context's user apps (the longest tail of each file's path that
    the tree holds)."""
    out = []
    for app in ctx.get("user_apps", []):
        parts = app.get("file", "").strip("/").split("/")
        for i in range(len(parts)):
            if "/".join(parts[i:]) in tree:
                out.append("/".join(parts[i:]))
                break
    return sorted(out)


def backfill_entry(git, rel, ctx, apps, commits):
    """results/provenance.json's entry of one run without context.sources; the files of each
    commit it names go to `commits` (commit -> {path: SHA-256}): every kernel and scheme file,
    and the run's user apps'."""
    git_sha = ctx.get("git_sha", "")
    base = git.commit(git_sha.removesuffix("-dirty")) if git_sha else None
    entry = {"git_sha": git_sha, "apps": sorted(apps) if apps is not None else None}

    def part(commit):
        tree = git.files(commit)
        users = user_app_files(tree, ctx)
        if users:
            entry["user_app_files"] = users
        known = commits.setdefault(commit, {})
        for f in tree:
            if (f.startswith(kp.KERNEL_FOLDERS) or f in users) and f not in known:
                known[f] = git.sha256(commit, f)
        sources = kp.backfilled_sources(known, apps, users)
        return {"commit": commit, "sources_sha256": kp.sources_sha256(sources)}

    if base is None:
        return dict(entry, basis="none", base=None, claims=[],
                    note=f"git_sha {git_sha or '(none)'} names no commit of this history")
    if not git_sha.endswith("-dirty"):
        return dict(entry, basis="git", **part(base))
    claims = [dict(part(base), by="the commit its build stood on")]
    named = [git.commit(t) for t in re.findall(r"-([0-9a-f]{7})(?=[-.])", os.path.basename(rel))]
    named = [c for c in named if c]
    if named and named[-1] != base:
        claims.append(dict(part(named[-1]), by="its file name"))
    return dict(entry, basis="none", base=base, claims=claims)


ABOUT = ("The provenance of the committed runs written before kperf recorded context.sources "
         "(SPEC section 15), from git: for a clean git_sha (basis git), every kernel and scheme "
         "file at its commit but the kernels of built-in apps the run did not measure, a superset "
         "of what it built (kperf did not record the build options); for a -dirty one (basis "
         "none), nothing is proven: the commit its build stood on and the commit its file name "
         "gives are claims, listed for comparison. commits: each commit's files by SHA-256 of "
         "their contents. Written by scripts/provenance.py --backfill; read by report.py and the "
         "ctest provenance.")


def backfill(results):
    git = Git(kp.REPO)
    runs, commits = {}, {}
    for rel in kp.committed_runs(results):
        doc = load_document(os.path.join(results, rel))
        ctx = doc.get("context", {})
        if not isinstance(ctx.get("sources"), dict):
            runs[rel] = backfill_entry(git, rel, ctx, apps_of(doc), commits)
    out = {"about": ABOUT, "commits": commits, "runs": runs}
    with open(os.path.join(results, "provenance.json.tmp"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(os.path.join(results, "provenance.json.tmp"),
               os.path.join(results, "provenance.json"))
    print(f"provenance.py: {len(runs)} runs backfilled in {results}/provenance.json",
          file=sys.stderr)
    return 0


def against_git(git, rel, ctx, entry):
    """Where git has the commits an entry names, whether the entry and its commits' files are
    what git gives (None: no history to tell)."""
    commits = [entry.get("commit") or entry.get("base")] + [c["commit"] for c in
                                                           entry.get("claims", [])]
    if any(c is None or git.object(c) is None for c in commits):
        return None
    fresh_commits = {}
    fresh = backfill_entry(git, rel, ctx, set(entry["apps"]) if entry["apps"] is not None
                           else None, fresh_commits)
    drop = ("sources", "changed")
    stored = {k: v for k, v in entry.items() if k not in drop}
    stored["claims"] = [{k: v for k, v in c.items() if k not in drop}
                        for c in entry.get("claims", [])]
    if entry.get("basis") == "git":
        del stored["claims"]
    return fresh == stored and all(
        kp.backfilled_sources(fresh_commits[c.get("commit")], entry["apps"],
                              entry.get("user_app_files", [])) == c["sources"]
        for c in [entry] + entry.get("claims", []) if c.get("commit"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*", help="run documents (default: every one under results/)")
    ap.add_argument("--backfill", action="store_true",
                    help="rewrite results/provenance.json from git history")
    ap.add_argument("--results", default=kp.RESULTS, help=argparse.SUPPRESS)  # tests
    ap.add_argument("--root", default=kp.REPO, help=argparse.SUPPRESS)  # tests
    args = ap.parse_args(argv)
    if args.backfill:
        return backfill(args.results)
    sidecar = kp.load_sidecar(os.path.join(args.results, "provenance.json"))
    paths = args.runs or [os.path.join(args.results, r) for r in kp.committed_runs(args.results)]
    git = None  # where history is at hand, the backfill is checked against it
    if os.path.exists(os.path.join(args.root, ".git")):
        try:
            git = Git(args.root)
        except OSError:
            pass
    counts, bad, unverified = {}, 0, 0
    for path in paths:
        ctx = kp.load_context(path)
        p = kp.provenance(path, ctx, sidecar, args.root, args.results)
        key = kp.results_key(path, args.results)
        if p.basis in ("git", "none") and git is not None and key in sidecar:
            same = against_git(git, key, ctx, sidecar[key])
            if same is False:
                p = kp.Provenance("inconsistent", p.basis,
                                  note="results/provenance.json differs from what git holds "
                                       "(scripts/provenance.py --backfill rewrites it)")
            unverified += same is None
        counts[p.status] = counts.get(p.status, 0) + 1
        bad += p.status in ("unaccounted", "inconsistent")
        where = f" at {p.commit[:7]}" if p.commit else ""
        print(f"{p.status:12} {p.basis or '-':9} {key or path}{where}")
        if p.changed:
            print(f"{'':22}differ from this tree's: {', '.join(p.changed)}")
        if p.outside:
            print(f"{'':22}outside this tree: {', '.join(p.outside)}")
        if p.status in ("unproven", "unaccounted", "inconsistent"):
            print(f"{'':22}{p.summary()}")
    print("provenance.py: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) +
          (f"; {unverified} backfills not checked against git (history absent)"
           if unverified else ""), file=sys.stderr)
    stale_sidecar = sorted(set(sidecar) - set(kp.committed_runs(args.results)))
    for rel in stale_sidecar if not args.runs else []:
        print(f"provenance.py: results/provenance.json names {rel}, which is not under "
              f"{args.results}", file=sys.stderr)
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
