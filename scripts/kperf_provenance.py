"""Which kernels a kperf document measured, against this tree's (SPEC section 15).

A document written since kperf recorded its sources names every kernel and scheme file its
programs built in `context.sources` (path -> SHA-256 of the contents) and their digest in
`context.sources_sha256`. For the committed runs written before, `results/provenance.json`
(written by `scripts/provenance.py --backfill` from git) says what git can prove: the files at
the commit of a clean `git_sha`, or, for a `-dirty` one, that nothing can be proven, with the
commit the build stood on and any commit the run is attributed to. report.py and
scripts/provenance.py read a run's provenance through `provenance()` here.
"""
import hashlib
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(REPO, "results")
SIDECAR = os.path.join(RESULTS, "provenance.json")

# The folders of the kernel root: a file of a run there that this tree lacks has changed.
KERNEL_FOLDERS = ("kernels/", "schemes/")


def sources_sha256(sources):
    """context.sources_sha256 of `sources` (path -> SHA-256): the SHA-256 of the lines
    "<sha256>  <path>\\n" in path order (what `sha256sum FILES | sha256sum` prints)."""
    text = "".join(f"{sha}  {path}\n" for path, sha in sorted(sources.items(),
                                                              key=lambda kv: kv[0].encode()))
    return hashlib.sha256(text.encode()).hexdigest()


def file_sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Provenance:
    """One run's provenance. status: "current" (its sources are this tree's), "stale" (some
    differ: `changed`), "unproven" (no sources recorded and git cannot prove them: `note`
    says why, `claims` what the run is attributed to), "unaccounted" (no sources recorded and
    no entry in results/provenance.json), or "inconsistent" (sources whose digest is not their
    sources_sha256). basis: "recorded" (the document's context), "git" (backfilled from the
    commit of a clean git_sha), "none" or None."""

    def __init__(self, status, basis=None, commit=None, changed=(), outside=(), note="",
                 claims=()):
        self.status, self.basis, self.commit = status, basis, commit
        self.changed, self.outside = list(changed), list(outside)
        self.note, self.claims = note, list(claims)

    def summary(self):
        """One line without file names (reports quote it: it changes only with the status)."""
        if self.status == "current":
            return f"the kernels of this tree ({self.origin()})"
        if self.status == "stale":
            return f"**measured on other kernels** than this tree's ({self.origin()})"
        if self.status == "unproven":
            line = f"**sources unproven**: {self.note}"
            for c in self.claims:
                verdict = "equal" if not c["changed"] else "differ from"
                line += (f"; the files of `{c['commit'][:7]}` ({c['by']}) {verdict} this "
                         "tree's")
            return line
        if self.status == "inconsistent":
            return f"**inconsistent provenance**: {self.note}"
        return "**no provenance**: no sources recorded and none backfilled"

    def origin(self):
        if self.basis == "recorded":
            return "sources recorded by kperf"
        return f"backfilled from git at `{self.commit[:7]}`, a superset of what it built"


def compare(sources, root=REPO):
    """(changed, outside): the paths of `sources` whose contents differ from the file at that
    path under `root` (or that `root` lacks under kernels/ or schemes/), and those that name no
    file of `root` (a user app elsewhere, a built text)."""
    changed, outside = [], []
    for path, sha in sorted(sources.items()):
        here = os.path.join(root, path)
        if not os.path.isabs(path) and os.path.isfile(here):
            if file_sha256(here) != sha:
                changed.append(path)
        elif path.startswith(KERNEL_FOLDERS):
            changed.append(path)
        else:
            outside.append(path)
    return changed, outside


# The built-in apps, each compiled from kernels/<app>.cl, in every version of kperf so far.
APPS = ("gaussian3", "gaussian5", "sobel3", "sobel5", "median", "inversion", "hotspot",
        "bilateral")


def backfilled_sources(commit_files, apps, user_app_files=()):
    """A backfilled run's sources from its commit's files (path -> SHA-256): every kernel and
    scheme file but the kernel files of built-in apps the run did not measure (none left out
    when `apps` is None), and its user apps' files."""
    out = {}
    for path, sha in commit_files.items():
        name = os.path.basename(path)[:-3] if path.endswith(".cl") else None
        if path.startswith("kernels/") and name in APPS and apps is not None and name not in apps:
            continue
        if path.startswith(KERNEL_FOLDERS) or path in user_app_files:
            out[path] = sha
    return out


def load_sidecar(path=SIDECAR):
    """results/provenance.json as {run: entry}, with "sources" (path -> SHA-256) in each entry
    and claim that names a commit, made from that commit's files."""
    import json
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        data = json.load(f)
    commits = data.get("commits", {})

    def resolved(part, entry):
        if not part.get("commit"):
            return part
        return dict(part, sources=backfilled_sources(commits.get(part["commit"], {}),
                                                     entry.get("apps"),
                                                     entry.get("user_app_files", [])))

    runs = {}
    for rel, entry in data.get("runs", {}).items():
        runs[rel] = resolved(entry, entry) if entry.get("basis") == "git" else dict(entry)
        runs[rel]["claims"] = [resolved(c, entry) for c in entry.get("claims", [])]
    return runs


def dirty_note(base):
    return (f"built from uncommitted changes on top of `{base[:7]}` (a `-dirty` git_sha from "
            "before kperf recorded its sources): git cannot tell what the working tree held")


def results_key(path, results=RESULTS):
    """A run's name in results/provenance.json: its path under results/, or None outside it."""
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(results))
    return None if rel.startswith("..") else rel


def provenance(path, ctx, sidecar=None, root=REPO, results=RESULTS):
    """The Provenance of the run at `path` whose context is `ctx`, against the tree at `root`."""
    sources = ctx.get("sources")
    if isinstance(sources, dict):
        if sources_sha256(sources) != ctx.get("sources_sha256"):
            return Provenance("inconsistent", "recorded",
                              note="context.sources_sha256 is not the digest of context.sources")
        changed, outside = compare(sources, root)
        return Provenance("stale" if changed else "current", "recorded", None, changed, outside)
    if sidecar is None:
        sidecar = load_sidecar(os.path.join(results, "provenance.json"))
    key = results_key(path, results)
    entry = sidecar.get(key) if key else None
    if entry is None:
        return Provenance("unaccounted")
    if entry.get("git_sha") != ctx.get("git_sha"):
        return Provenance("inconsistent", entry.get("basis"),
                          note=f"results/provenance.json has it at git_sha {entry.get('git_sha')}, "
                               f"the run says {ctx.get('git_sha')}")
    for part in [entry] + entry.get("claims", []):
        if "sources" in part and sources_sha256(part["sources"]) != part.get("sources_sha256"):
            return Provenance("inconsistent", entry.get("basis"),
                              note="a backfilled sources_sha256 is not the digest of its sources")
    if entry["basis"] == "git":
        changed, outside = compare(entry["sources"], root)
        return Provenance("stale" if changed else "current", "git", entry["commit"], changed,
                          outside)
    claims = []
    for c in entry.get("claims", []):
        changed, _ = compare(c["sources"], root)
        claims.append(dict(c, changed=changed))
    note = dirty_note(entry["base"]) if entry.get("base") else entry.get("note", "")
    return Provenance("unproven", "none", entry.get("base"), note=note, claims=claims)


def load_context(path):
    """A document's context alone, without parsing its rows (kperf writes "context" before
    "results"); the whole document where that fails."""
    import gzip
    import json
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    text = data.decode()
    at = text.find('"context":')
    if at >= 0:
        try:
            return json.JSONDecoder().raw_decode(text[at + 10:].lstrip())[0]
        except ValueError:
            pass
    return json.loads(text).get("context", {})


def committed_runs(results=RESULTS):
    """Every run document under results/ (paths relative to it), sorted."""
    out = []
    for folder, _, files in os.walk(results):
        for name in files:
            if re.search(r"\.json(\.gz)?$", name) and name != "provenance.json":
                out.append(os.path.relpath(os.path.join(folder, name), results))
    return sorted(out)
