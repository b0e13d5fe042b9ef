#!/usr/bin/python3
"""A document's provenance (SPEC 15), through the built binary on the tests' OpenCL device (PoCL
in CI), with the kernels copied to a scratch kernel root:
- context.sources names every file the run built, each by the SHA-256 of its contents (hashlib
  here): the app's kernel, the scheme files its options chose and what they include, the copy
  kernel; not another app's kernel nor a scheme value the run did not build.
- context.sources_sha256 is the SHA-256 of sha256sum's lines for them, in path order.
- an edit of one included scheme file changes sources_sha256 and that file's entry alone; an
  edit of a scheme file the run does not build changes nothing.
- a run restarted after a fault lists what its first process built too (the ledger), and a
  --resume keeps the sources and builds of the rows it resumes.
- context.builds lists every program built with its options as the compiler got them, and
  context.builds_sha256 is docs/json.md's recipe over sources and builds: two runs that differ
  only in --cl-options, or only in --bilateral-sigmas, have equal sources_sha256 and different
  builds_sha256.
- a fused pipeline's program text, which no file holds (`text:SHA-256` in sources), is written
  to $KPERF_DUMP_PROGRAMS as SHA-256.cl, and `sha256sum` of that file reproduces the digest.
- cmake/git_sha.cmake adds -dirty only for an edit or a new file under host/, kernels/ or
  schemes/, not for one elsewhere.

usage: provenance_test.py KPERF_BINARY SOURCE_DIR
Exit 0 on success, 1 on a failed check, 77 when no OpenCL device answers.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, finish

RUN = ["run", "--apps", "gaussian3", "--schemes", "accurate,rows:2", "--precision", "f32",
       "--input", "synthetic:noise", "--size", "32x24", "--warmup", "1", "--reps", "2",
       "--wg", "8x8", "--quiet"]


def kperf(binary, args, env_extra=None):
    env = dict(os.environ)
    env.pop("KPERF_FAULT", None)
    env.update(env_extra or {})
    return subprocess.run([binary] + args, capture_output=True, text=True, env=env, timeout=600)


def digest(sources):
    lines = "".join(f"{sha}  {path}\n" for path, sha in sorted(sources.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


def builds_digest(ctx):
    """docs/json.md's recipe for context.builds_sha256."""
    lines = [f"{sha}  {path}\n" for path, sha in sorted(ctx["sources"].items())]
    lines += [f"{b['source']}  {b['options']}\n" for b in ctx["builds"]]
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def docs_recipe(source_dir, doc, root, dump):
    """The two digests docs/json.md's recipe prints for `doc`, running its block as written."""
    text = open(os.path.join(source_dir, "docs", "json.md")).read()
    section = text[text.index("### Reproducing `sources_sha256` and `builds_sha256`"):]
    block = section[section.index("```python\n") + len("```python\n"):]
    block = block[:block.index("```")]
    r = subprocess.run([sys.executable, "-", doc, root, dump], input=block, capture_output=True,
                       text=True)
    check(r.returncode == 0, f"docs/json.md's recipe runs: {r.stderr[-300:]}")
    return r.stdout.split()


def sha_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def context_of(binary, root, out, args=RUN, env_extra=None):
    r = kperf(binary, args + ["--kernel-dir", root, "--out", out], env_extra)
    if r.returncode not in (0, 4):
        check(False, f"kperf {' '.join(args[:3])} ... exited {r.returncode}: {r.stderr[-400:]}")
        return None, r
    return json.load(open(out))["context"], r


def check_sources(ctx, root):
    sources = ctx.get("sources", {})
    check(ctx.get("sources_sha256") == digest(sources),
          "sources_sha256 is the SHA-256 of sha256sum's lines in path order")
    for path, sha in sources.items():
        check(os.path.isfile(os.path.join(root, path)) and sha_of(os.path.join(root, path)) == sha,
              f"{path}: the SHA-256 of the file under the kernel root")
    for path in ("kernels/gaussian3.cl", "kernels/copy.cl", "schemes/kperf_tile.cl",
                 "schemes/kperf_windows.cl", "schemes/scheme_accurate.cl", "schemes/scheme_rows.cl",
                 "schemes/perforate_lines.cl", "schemes/precision_f32.cl"):
        check(path in sources, f"the sources name {path}")
    for path in ("kernels/inversion.cl", "schemes/precision_bf16.cl", "schemes/scheme_cols.cl"):
        check(path not in sources, f"the sources do not name {path}, which the run did not build")


def check_edits(binary, root, tmp, first):
    with open(os.path.join(root, "schemes/scheme_rows.cl"), "a") as f:
        f.write("// an edit\n")
    edited, _ = context_of(binary, root, os.path.join(tmp, "edited.json"))
    if edited is None:
        return
    check(edited["sources_sha256"] != first["sources_sha256"],
          "an edit of an included scheme file changes sources_sha256")
    differ = sorted(p for p in set(first["sources"]) | set(edited["sources"])
                    if first["sources"].get(p) != edited["sources"].get(p))
    check(differ == ["schemes/scheme_rows.cl"], f"only the edited file's entry changes ({differ})")
    with open(os.path.join(root, "schemes/precision_bf16.cl"), "a") as f:
        f.write("// an edit of a file the run does not build\n")
    again, _ = context_of(binary, root, os.path.join(tmp, "again.json"))
    if again is not None:
        check(again["sources_sha256"] == edited["sources_sha256"],
              "an edit of a scheme file the run does not build changes nothing")


def check_builds(binary, root, tmp, first, source_dir):
    check(first.get("builds_sha256") is not None and first["builds_sha256"] == builds_digest(first),
          "builds_sha256 is the SHA-256 of sources' lines, then builds' lines")
    recipe = docs_recipe(source_dir, os.path.join(tmp, "first.json"), root, tmp)
    check(recipe == [first["sources_sha256"], first.get("builds_sha256")],
          f"docs/json.md's recipe gives the run's two digests from the files ({recipe})")
    app_builds = [b for b in first.get("builds", []) if b["source"] == "kernels/gaussian3.cl"]
    check(len(app_builds) == 2 and all("-DWG_X=8" in b["options"] and "-I schemes" in b["options"]
                                       for b in app_builds),
          f"builds: gaussian3's two programs with their options, -I relative to the kernel root "
          f"({app_builds[:1]})")
    for name, args, same in (
            ("cl-options", RUN + ["--cl-options", "-DKPERF_UNUSED=1"], first),
            ("bilateral", RUN[:2] + ["bilateral"] + RUN[3:], None)):
        ctx, _ = context_of(binary, root, os.path.join(tmp, f"{name}.json"), args)
        if ctx is None:
            return
        if same is None:
            same, _ = context_of(binary, root, os.path.join(tmp, f"{name}-other.json"),
                                 args + ["--bilateral-sigmas", "30,3"])
            if same is None:
                return
        check(ctx.get("sources_sha256") == same.get("sources_sha256"),
              f"{name}: the two runs built the same files (equal sources_sha256)")
        check(ctx.get("builds_sha256") is not None and
              ctx.get("builds_sha256") != same.get("builds_sha256"),
              f"{name}: the two runs' builds differ (builds_sha256 {ctx.get('builds_sha256')} and "
              f"{same.get('builds_sha256')})")
        check(ctx.get("builds_sha256") == builds_digest(ctx) if "builds" in ctx else False,
              f"{name}: builds_sha256 by the recipe")
    ctx = json.load(open(os.path.join(tmp, "cl-options.json")))["context"]
    check(all("-DKPERF_UNUSED=1" in b["options"] for b in ctx.get("builds", [])
              if b["source"] == "kernels/gaussian3.cl"),
          "--cl-options: every build of the app carries it")


def check_dumped_fused_text(binary, root, tmp, source_dir):
    dump, out = os.path.join(tmp, "programs"), os.path.join(tmp, "fused.json")
    ctx, r = context_of(binary, root, out,
                        ["pipeline", "--pipeline", "blur-edges", "--fuse", "all", "--input",
                         "synthetic:smooth", "--size", "40", "--warmup", "0", "--reps", "1",
                         "--quiet"], {"KPERF_DUMP_PROGRAMS": dump})
    if ctx is None:
        return
    texts = [p[len("text:"):] for p in ctx["sources"] if p.startswith("text:")]
    check(len(texts) >= 1, f"the fused chain's program is a text: entry ({sorted(ctx['sources'])})")
    for sha in texts:
        check(any(b["source"] == "text:" + sha for b in ctx.get("builds", [])),
              f"text:{sha[:12]}...: its build and options are in builds")
    listed = subprocess.run("sha256sum *.cl", shell=True, cwd=dump, capture_output=True,
                            text=True) if os.path.isdir(dump) else None
    digests = dict(line.split("  ", 1)[::-1] for line in listed.stdout.splitlines()) \
        if listed and listed.returncode == 0 else {}
    for sha in texts:
        check(digests.get(f"{sha}.cl") == sha,
              f"sha256sum {os.path.basename(dump)}/*.cl reproduces text:{sha[:12]}... ({digests})")
    for b in ctx.get("builds", []):
        sha = ctx["sources"].get(b["source"])
        check(digests.get(f"{sha}.cl") == sha, f"the dump holds {b['source']}'s text too")
    recipe = docs_recipe(source_dir, out, root, dump)
    check(recipe == [ctx["sources_sha256"], ctx.get("builds_sha256")],
          f"docs/json.md's recipe gives the fused pipeline's two digests from the files and the "
          f"dumped text ({recipe})")


def check_restart_and_resume(binary, root, tmp):
    # The crash in inversion's workload restarts the measuring process, which builds only what
    # is still to measure: gaussian3's kernel is in the ledger of the first process alone.
    args = RUN[:2] + ["gaussian3,inversion"] + RUN[3:]
    ctx, r = context_of(binary, root, os.path.join(tmp, "restarted.json"), args,
                        {"KPERF_FAULT": "crash:inversion/rows:2"})
    check(r.returncode == 4 and "measuring on in a new process" in r.stderr,
          f"the fault restarted the measuring process ({r.stderr[-300:]})")
    if ctx is not None:
        for path in ("kernels/gaussian3.cl", "kernels/inversion.cl"):
            check(path in ctx["sources"], f"after the restart, the sources still name {path}")
    out = os.path.join(tmp, "resumed.json")
    first, _ = context_of(binary, root, out)
    resumed, _ = context_of(binary, root, out, RUN + ["--resume"])
    if first is not None and resumed is not None:
        check(resumed["sources"] == first["sources"],
              "a --resume with nothing left to build keeps the sources of the rows it resumes")
        check(resumed.get("builds") == first.get("builds") and "builds" in first,
              "a --resume with nothing left to build keeps the builds of the rows it resumes")


def check_git_sha_rule(source_dir, tmp):
    repo = os.path.join(tmp, "repo")
    for d in ("host", "kernels", "schemes", "results"):
        os.makedirs(os.path.join(repo, d))
        with open(os.path.join(repo, d, "f.txt"), "w") as f:
            f.write("committed\n")
    git = ["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "c"], check=True)
    header = os.path.join(tmp, "sha.h")

    def sha():
        subprocess.run(["cmake", f"-DSRC={repo}", f"-DOUT={header}", "-P",
                        os.path.join(source_dir, "cmake/git_sha.cmake")], check=True)
        return open(header).read()

    check("-dirty" not in sha(), "a clean tree: no -dirty")
    with open(os.path.join(repo, "results/f.txt"), "a") as f:
        f.write("an edit outside host, kernels and schemes\n")
    with open(os.path.join(repo, "results/new.txt"), "w") as f:
        f.write("a new file there\n")
    check("-dirty" not in sha(), "edits outside host/, kernels/, schemes/: no -dirty")
    for d in ("host", "kernels", "schemes"):
        with open(os.path.join(repo, d, "f.txt"), "a") as f:
            f.write("an edit\n")
        check("-dirty" in sha(), f"an edit under {d}/: -dirty")
        subprocess.run(git + ["checkout", "-q", "--", d], check=True)
    check("-dirty" not in sha(), "the edits undone: no -dirty")
    with open(os.path.join(repo, "schemes/new.cl"), "w") as f:
        f.write("// untracked\n")
    check("-dirty" in sha(), "a new file under schemes/: -dirty")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, source_dir = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        check_git_sha_rule(source_dir, tmp)
        root = os.path.join(tmp, "root")
        for d in ("kernels", "schemes"):
            shutil.copytree(os.path.join(source_dir, d), os.path.join(root, d))
        probe = kperf(binary, ["devices"])
        if probe.returncode != 0:
            print(f"no OpenCL device: {probe.stderr.strip()}", file=sys.stderr)
            return 77
        first, _ = context_of(binary, root, os.path.join(tmp, "first.json"))
        if first is not None:
            check_sources(first, root)
            check_builds(binary, root, tmp, first, source_dir)
            check_edits(binary, root, tmp, first)
        check_dumped_fused_text(binary, root, tmp, source_dir)
        check_restart_and_resume(binary, root, tmp)
    return finish("provenance")


if __name__ == "__main__":
    sys.exit(main())
