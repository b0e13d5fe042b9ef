#!/usr/bin/python3
"""User apps end to end, through the built binary on the tests' OpenCL device (PoCL in CI):
- each example in examples/apps runs through --app-file with its accurate output equal to a
  hand-written NumPy reference (clamp-to-edge), rows saying reference "fp64-kernel" (or
  "device-accurate" on a device without fp64) and perforated errors recomputed from the outputs;
- `kperf check` passes the three examples (box5 alone in the fast tier) and fails
  tests/apps/unsafe_sharpen.cl, naming the poison check and a perforated scheme, with exit
  status 1;
- `kperf tune --app-file` chooses for a user app and report.py reports it like a built-in;
- the README's "Your own kernel" commands work as written (KPERF_TEST_FULL=1 only);
- --resume refuses a file measured with another version of the user's kernel;
- every bad app file gets one line on stderr naming it, exit 2, and no output file.

usage: user_apps_test.py KPERF_BINARY SOURCE_DIR
Exit 0 on success, 1 on a failed check, 77 when numpy is unavailable.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from checks import check, finish, full_tier, numpy_or_skip

np = numpy_or_skip()


def windows(img, r):
    """Every (dy, dx) shift of the clamp-to-edge padded image, as a function."""
    p = np.pad(img.astype(np.float64), r, mode="edge")
    h, w = img.shape
    return lambda dy, dx: p[r + dy:r + dy + h, r + dx:r + dx + w]


def box5(img):
    at = windows(img, 2)
    return sum(at(dy, dx) for dy in range(-2, 3) for dx in range(-2, 3)) / 25.0


def laplacian3(img):
    at = windows(img, 1)
    return at(-1, 0) + at(1, 0) + at(0, -1) + at(0, 1) - 4.0 * at(0, 0)


def unsharp(img, amount=1.5):
    at = windows(img, 1)
    k = [1, 2, 1]
    blur = sum(k[dy + 1] * k[dx + 1] * at(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)) / 16.0
    return at(0, 0) + amount * (at(0, 0) - blur)


REFERENCES = {"box5": box5, "laplacian3": laplacian3, "unsharp": unsharp}


def photo_like(rng, h, w):
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    f = sum(np.sin(rng.uniform(0.02, 0.3) * y + rng.uniform(0.02, 0.3) * x + rng.uniform(0, 6.3))
            for _ in range(4)) + 0.3 * rng.standard_normal((h, w))
    f = (f - f.min()) / (f.max() - f.min())
    return (10 + 235 * f).astype(np.float32)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def check_examples(binary, source, tmp, image):
    for name, ref in REFERENCES.items():
        app = os.path.join(source, "examples", "apps", name + ".cl")
        outdir, out = os.path.join(tmp, name + "-out"), os.path.join(tmp, name + ".json")
        r = run([binary, "run", "--app-file", app, "--input", image, "--schemes", "accurate,rows:2,cols:2",
                 "--recon", "nn,li", "--wg", "8x8", "--warmup", "0", "--reps", "2", "--verify", "--quiet",
                 "--save-outputs", outdir, "--out", out])
        check(r.returncode == 0, f"{name}: kperf run exits 0 ({r.stderr.strip()[-400:]})")
        if r.returncode:
            continue
        rows = json.load(open(out))["results"]
        check({row["app"] for row in rows} == {name}, f"{name}: only the user app runs without --apps")
        truth = ref(np.load(image))
        for row in rows:
            check(row["status"] == "ok", f"{name} {row['key']}: {row['status']} {row.get('reason')}")
            check(row.get("reference") in ("fp64-kernel", "device-accurate"),
                  f"{name}: reference {row.get('reference')}")
            if row["status"] != "ok":
                continue
            got = np.load(row["output_file"]).astype(np.float64)
            scale = max(1.0, np.abs(truth).max())
            if row["scheme"] == "accurate":
                err = np.abs(got - truth).max() / scale
                check(err < 1e-5, f"{name}: accurate output vs NumPy, max error {err:.3g} of the range")
            else:
                # The row's primary error recomputed from the saved output and the NumPy truth.
                metric = row["primary_metric"]
                if metric == "mre":
                    mask = np.abs(truth) > 1e-6 * np.abs(truth).max()
                    mine = np.mean(np.abs(got[mask] - truth[mask]) / np.abs(truth[mask]))
                else:
                    mine = np.mean(np.abs(got - truth)) / (truth.max() - truth.min())
                theirs = row["error"][metric]
                check(abs(mine - theirs) <= 1e-4 * max(1e-3, theirs),
                      f"{name} {row['key']}: {metric} {theirs} vs NumPy {mine}")
                check(row["model_max_abs"] <= 1e-4 * scale,
                      f"{name} {row['key']}: output vs tile model {row['model_max_abs']}")


def check_check(binary, source):
    # Every example through every check with KPERF_TEST_FULL=1 (scripts/test.sh --full, where
    # the README's own commands check box5 too); in the fast tier box5 through the poison check.
    full = full_tier()
    names = REFERENCES if full else ["box5"]
    apps = [os.path.join(source, "examples", "apps", n + ".cl") for n in names]
    r = run([binary, "check"] + sum([["--app-file", a] for a in apps], []) +
            ([] if full else ["--checks", "poison"]))
    check(r.returncode == 0, f"kperf check passes the examples (exit {r.returncode}: "
          f"{[l for l in r.stdout.splitlines() if 'FAIL' in l][:5]} {r.stderr.strip()[-300:]})")
    for n in names:
        m = re.search(rf"^{n}: perforation-safe \((\d+) checks passed\)$", r.stdout, re.M)
        check(m is not None and int(m.group(1)) > 0,
              f"kperf check says {n} is perforation-safe, with checks run ({m and m.group(0)})")
    if not full:
        check(re.search(r"^poison\s+\S+.*\spass\s", r.stdout, re.M) is not None,
              "box5's poison check ran and passed rows")
    check("FAIL" not in r.stdout, "no failed check for the examples")
    # The fast tier runs the poison check alone on the unsafe app (9 s against 28 s with PoCL's
    # cache empty), --full every check; tests/apps/mutants/ shows every other check failing.
    unsafe = os.path.join(source, "tests", "apps", "unsafe_sharpen.cl")
    r = run([binary, "check", "--app-file", unsafe] + ([] if full else ["--checks", "poison"]))
    check(r.returncode == 1, f"kperf check fails the unsafe app with exit 1 (got {r.returncode})")
    check(re.search(r"^poison\s+rows:2/nn .*FAIL", r.stdout, re.M) is not None,
          "the unsafe app's failure names the poison check and rows:2")
    check("unsafe_sharpen: NOT perforation-safe" in r.stdout, "the unsafe app's verdict")


def check_tune_and_report(binary, source, tmp, rng):
    train, test = os.path.join(tmp, "train"), os.path.join(tmp, "test")
    os.makedirs(train)
    os.makedirs(test)
    for i in range(2):
        np.save(os.path.join(train, f"t{i}.npy"), photo_like(rng, 32, 40))
        np.save(os.path.join(test, f"h{i}.npy"), photo_like(rng, 32, 40))
    out = os.path.join(tmp, "tune.json")
    app = os.path.join(source, "examples", "apps", "box5.cl")
    r = run([binary, "tune", "--app-file", app, "--budget", "0.05", "--train", train, "--test", test,
             "--wg", "8x8", "--schemes", "accurate,rows:2", "--recon", "nn", "--load", "local",
             "--output", "none", "--precision", "f32", "--perforate", "device", "--relax", "none",
             "--warmup", "0", "--reps", "2", "--quiet", "--out", out])
    check(r.returncode == 0, f"kperf tune --app-file exits 0 ({r.stderr.strip()[-400:]})")
    if r.returncode == 0:
        doc = json.load(open(out))
        check(list(doc["tune"].keys()) == ["box5"], f"the tune covers box5 alone ({list(doc['tune'])})")
        choice = doc["tune"]["box5"]["choices"][0]
        check(choice.get("chosen") is not None, "box5 gets a choice at a 5% budget")
    report = os.path.join(source, "scripts", "report.py")
    results = os.path.join(tmp, "box5.json")  # from check_examples
    rep = os.path.join(tmp, "report")
    r = run([sys.executable, report, results, "--out", rep, "--formats", "svg"])
    check(r.returncode == 0, f"report.py reads a user app's rows ({r.stderr.strip()[-300:]})")
    text = "".join(open(os.path.join(rep, f)).read() for f in os.listdir(rep) if f.endswith(".md"))
    check("box5" in text, "the report's tables name the user app")


def readme_commands(source):
    """The shell commands of the README section "Your own kernel"."""
    text = open(os.path.join(source, "README.md")).read()
    section = text.split("## Your own kernel", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def check_readme(binary, source, tmp):
    # With KPERF_TEST_FULL=1 only: the README's run sweeps every launch shape at 256x256 with the
    # default repetitions, 20 of this test's 55 s in the fast tier on 2 cores.
    if not full_tier():
        print("SKIP the README's commands: KPERF_TEST_FULL=1 (scripts/test.sh --full) runs them")
        return
    work = os.path.join(tmp, "readme")
    os.makedirs(work)
    shutil.copytree(os.path.join(source, "examples"), os.path.join(work, "examples"))
    env = dict(os.environ, PATH=os.path.dirname(binary) + os.pathsep + os.environ["PATH"])
    for command in readme_commands(source):
        command = re.sub(r"(^|\s)\S*build/kperf\b", r"\1kperf", command)
        r = subprocess.run(command, shell=True, cwd=work, env=env, capture_output=True, text=True)
        check(r.returncode == 0, f"README command `{command}` exits 0 ({r.stderr.strip()[-300:]})")
        if " check " in command:
            check(re.search(r"^\w+: perforation-safe \(", r.stdout, re.M) is not None and "FAIL" not in r.stdout,
                  f"README command `{command}` finds the example perforation-safe")


def check_resume(binary, source, tmp, image):
    """--resume refuses a file measured with another version of the user's kernel."""
    mine, out = os.path.join(tmp, "mine.cl"), os.path.join(tmp, "resume.json")
    text = open(os.path.join(source, "examples", "apps", "box5.cl")).read()
    open(mine, "w").write(text)
    args = [binary, "run", "--app-file", mine, "--input", image, "--schemes", "accurate", "--wg", "8x8",
            "--warmup", "0", "--reps", "1", "--quiet", "--out", out]
    r = run(args)
    check(r.returncode == 0, f"a first run of mine.cl ({r.stderr.strip()[-300:]})")
    doc = json.load(open(out))
    check(doc["context"]["user_apps"][0]["file"] == mine, "the context names the user app's file")
    before = open(out, "rb").read()
    open(mine, "w").write(text.replace("1.0f / 25.0f", "1.0f / 24.0f"))
    r = run(args + ["--schemes", "accurate,rows:2", "--resume"])
    check(r.returncode == 2 and "under other settings (user_apps.box5)" in r.stderr,
          f"--resume after an edit of the kernel is refused ({r.returncode}: {r.stderr.strip()})")
    check(open(out, "rb").read() == before, "the refused resume leaves the file untouched")


BAD_APPS = {
    "missing.cl": None,
    "no_manifest.cl": "// a kernel without a manifest\n#define RADIUS 1\n#include \"kperf_tile.cl\"\n",
    "no_name.cl": "// @radius 1\n#define RADIUS 1\n",
    "no_radius.cl": "// @name noradius\n#define RADIUS 1\n",
    "big_radius.cl": "// @name big\n// @radius 9\n#define RADIUS 9\n",
    "other_radius.cl": "// @name other\n// @radius 2\n#define RADIUS 1\n",
    "builtin_name.cl": "// @name gaussian3\n// @radius 1\n#define RADIUS 1\n",
}


def check_bad_input(binary, source, tmp):
    bad = os.path.join(tmp, "bad")
    os.makedirs(bad)
    box5 = os.path.join(source, "examples", "apps", "box5.cl")
    cases = []
    for name, text in BAD_APPS.items():
        path = os.path.join(bad, name)
        if text is not None:
            open(path, "w").write(text)
        cases.append(([path], path))
    cases.append(([box5, box5], box5))  # a name taken by another user app
    for command in ("run", "tune", "check"):
        for files, named in cases:
            out = os.path.join(tmp, "never.json")
            args = [binary, command] + sum([["--app-file", f] for f in files], [])
            if command != "check":
                args += ["--out", out]
            if command == "tune":
                args += ["--budget", "0.1", "--train", bad, "--test", bad]
            r = run(args)
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2, f"{command} {named}: exit 2 (got {r.returncode})")
            check(len(lines) == 1 and named in lines[0], f"{command} {named}: one line naming the file ({lines})")
            check(not os.path.exists(out), f"{command} {named}: nothing written")


def main():
    binary, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rng = np.random.default_rng(2611)
    with tempfile.TemporaryDirectory() as tmp:
        image = os.path.join(tmp, "photo.npy")
        np.save(image, photo_like(rng, 40, 56))
        check_examples(binary, source, tmp, image)
        check_resume(binary, source, tmp, image)
        check_check(binary, source)
        check_tune_and_report(binary, source, tmp, rng)
        check_readme(binary, source, tmp)
        check_bad_input(binary, source, tmp)
    return finish("user apps")


if __name__ == "__main__":
    sys.exit(main())
