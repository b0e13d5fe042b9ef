#!/usr/bin/python3
"""The test suite's checks shown failing on known-bad copies of the shipped kernels: each mutant
of tests/kernel_mutants.py (one line of kernels/ or schemes/ changed, in a copy of the kernel
root) through the checks that must catch it (docs/testing.md, "Known-bad kernels"):

- the C++ device tests (the suite's binary with KPERF_TEST_KERNEL_DIR set to the copy): the
  named test fails and gtest names it; the same tests pass on the shipped root in the suite;
- `kperf run --verify`: the row's model_max_abs exceeds kperf check's model tolerance (1e-4 of
  the output's scale), where the same configuration of the shipped root stays within it;
- tests/independent_refs.py --families F --kernel-dir COPY: exit 1 with a failure naming the
  mutated app (the shipped root passes in the independent_numpy_references test).
Oclgrind's catchers run in tests/oclgrind_test.py --mutants; the mutants' "full" catchers with
KPERF_TEST_FULL=1 alone. The catchers themselves run at the fast tier's sample (KPERF_TEST_FULL
is not passed on): the full matrix would add cost, not proof. Every mutant's text must be found,
once, in the tree: a mutant whose line changed fails here, in every tier.

usage: kernel_mutants_test.py KPERF_BINARY SOURCE_DIR TEST_BINARY_DIR PHOTO_DIR
Exit 0 on success, 1 on a failed check, 77 when numpy is unavailable.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

from checks import check, finish, full_tier, numpy_or_skip
from kernel_mutants import MUTANTS, apply, mutated_root

np = numpy_or_skip()
HERE = os.path.dirname(os.path.abspath(__file__))
FULL = full_tier()
SAMPLE_ENV = {k: v for k, v in os.environ.items() if k != "KPERF_TEST_FULL"}


def table_is_current(source):
    for m in MUTANTS:
        try:
            with open(os.path.join(source, m.path)) as f:
                apply(m, f.read())
        except (OSError, ValueError) as e:
            check(False, str(e))


def gtest(test_bin, root, mutant, suite, name):
    binary = os.path.join(test_bin, f"kperf_{suite}_tests")
    env = dict(SAMPLE_ENV, KPERF_TEST_KERNEL_DIR=root, KPERF_TEST_EVERY_APP="1")
    r = subprocess.run([binary, f"--gtest_filter={name}"], capture_output=True, text=True,
                       env=env)
    out = r.stdout + r.stderr
    check(f"[ RUN      ] {name}" in out, f"{mutant.name}: {suite} test {name} ran")
    check(r.returncode == 1 and f"[  FAILED  ] {name}" in out,
          f"{mutant.name}: {suite} test {name} fails and is named (exit {r.returncode}: "
          f"{out.strip()[-500:]})")
    first = next((line.strip() for line in out.splitlines() if "Failure" in line or
                  "elements off" in line), "")
    return f"{suite} {name} failed: {first[:120]}"


def model_max_abs(binary, root, args, tmp, tag):
    """(model_max_abs, kperf check's tolerance) of the one row of `kperf run --verify ARGS`."""
    out, saved = os.path.join(tmp, tag + ".json"), os.path.join(tmp, tag + "-out")
    cmd = [binary, "run", "--kernel-dir", root, "--input", "synthetic:noise", "--verify",
           "--warmup", "0", "--reps", "1", "--quiet", "--save-outputs", saved, "--out", out] + args
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        check(False, f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
        return None, None
    rows = json.load(open(out))["results"]
    check(len(rows) == 1 and rows[0]["status"] == "ok", f"{tag}: one ok row ({rows})")
    if len(rows) != 1 or rows[0]["status"] != "ok":
        return None, None
    output = np.load(rows[0]["output_file"])
    scale = max(1.0, float(np.abs(output[np.isfinite(output)]).max()))
    return rows[0]["model_max_abs"], 1e-4 * scale


def verify(binary, root, shipped, mutant, args, tmp):
    bad, tol = model_max_abs(binary, root, args, tmp, mutant.name)
    good, good_tol = model_max_abs(binary, shipped, args, tmp, mutant.name + "-shipped")
    if bad is None or good is None:
        return "no rows"
    check(bad > tol, f"{mutant.name}: --verify model_max_abs {bad:.3g} exceeds {tol:.3g}")
    check(good <= good_tol, f"{mutant.name}: the shipped root's model_max_abs {good:.3g} is "
          f"within {good_tol:.3g} ({' '.join(args)})")
    return f"--verify model_max_abs {bad:.3g} (shipped {good:.3g}, limit {tol:.3g})"


def indep(binary, root, mutant, family, photos):
    app = mutant.path.split("/")[-1][:-3] if mutant.path.startswith("kernels/") else None
    cmd = [sys.executable, os.path.join(HERE, "independent_refs.py"), binary, photos,
           "--kernel-dir", root, "--families", family]
    r = subprocess.run(cmd, capture_output=True, text=True, env=SAMPLE_ENV)
    fails = [line for line in r.stdout.splitlines() if line.startswith("FAIL")]
    check(r.returncode == 1 and fails, f"{mutant.name}: independent references' {family} "
          f"family fails (exit {r.returncode}: {(r.stdout + r.stderr).strip()[-400:]})")
    if app:
        check(any(app in line for line in fails), f"{mutant.name}: a failure names {app}")
    return f"independent {family}: {len(fails)} failures, first: {fails[0][:100] if fails else ''}"


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    binary, source, test_bin, photos = (os.path.abspath(a) for a in sys.argv[1:])
    table_is_current(source)
    with tempfile.TemporaryDirectory() as tmp:
        shipped = mutated_root(source, None, tmp)
        for mutant in MUTANTS:
            catchers = [c for c in mutant.catchers + (mutant.full if FULL else ())
                        if c[0] != "oclgrind"]
            if not catchers:
                continue
            root = mutated_root(source, mutant, tmp)
            for catcher in catchers:
                start = time.monotonic()
                if catcher[0] == "gtest":
                    said = gtest(test_bin, root, mutant, catcher[1], catcher[2])
                elif catcher[0] == "verify":
                    said = verify(binary, root, shipped, mutant, catcher[1], tmp)
                else:
                    said = indep(binary, root, mutant, catcher[1], photos)
                print(f"{mutant.name}: {said} ({time.monotonic() - start:.0f} s)", flush=True)
    return finish("kernel mutants")


if __name__ == "__main__":
    sys.exit(main())
