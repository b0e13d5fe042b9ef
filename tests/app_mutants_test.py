#!/usr/bin/python3
"""`kperf check`'s checks shown failing: tests/apps/mutants/ holds one known-bad user app per
check, each breaking the one property that check is there to catch (docs/testing.md,
"Known-bad kernels"; each file's first comment says how).

- Fast tier: each mutant through its own check (`kperf check --checks NAME`, on the smallest
  input the check takes): exit 1, failed rows of that check, and the verdict naming it.
- KPERF_TEST_FULL=1, instead: every mutant through every check in one `kperf check`: each fails
  its own check, named in its verdict, and passes every other one, so each breaks one property
  alone.
- `--checks` refuses an unknown or repeated name (one line, exit 2).

Tests elsewhere show the remaining verdicts: `runs` on a kernel that faults the device
(tests/fault_test.py, tests/apps/wild_read.cl), and the poison check on an app that reads its
centre around the contract (tests/user_apps_test.py, tests/apps/unsafe_sharpen.cl).

The reproducibility mutant's two runs differ only where two of the device's threads ran its
work-items at once: on a one-core machine it is reported as a skip.

usage: app_mutants_test.py KPERF_BINARY SOURCE_DIR
Exit 0 on success, 1 on a failed check.
"""
import os
import re
import subprocess
import sys
import time

from checks import check, finish, full_tier

# Each mutant and the one check it breaks.
MUTANTS = {
    "model_offset.cl": "model",
    "range_overshoot.cl": "range",
    "order_dependent.cl": "reproducible",
    "poison_zero_weight.cl": "poison",
    "image_path_offset.cl": "load-paths",
    "host_packing_offset.cl": "host-device",
    "separate_fill_offset.cl": "output-fills",
}
SIZE = "48x32"  # the smallest check input: each scheme still has interior groups


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def verdicts(stdout):
    """Per app: the failed checks and their counts from the verdict lines, {} where it passed;
    and the table rows as (check, config, result)."""
    failed, rows = {}, []
    for line in stdout.splitlines():
        m = re.match(r"^(\w+): NOT perforation-safe: \d+ of \d+ checks failed \((.*)\)$", line)
        if m:
            failed[m.group(1)] = {name: int(n) for name, n in
                                  (part.rsplit(" ", 1) for part in m.group(2).split(", "))}
        elif re.match(r"^(\w+): perforation-safe \(", line):
            failed[line.split(":")[0]] = {}
        else:
            m = re.match(r"^(\S+)\s+(.+?)\s+(pass|FAIL)\s", line)
            if m and m.group(1) != "check":
                rows.append(m.groups())
    return failed, rows


def one_cpu():
    return (os.cpu_count() or 1) < 2


def app_name(path):
    return os.path.basename(path)[:-3]


def one_check(binary, path, name):
    """The mutant through its own check alone."""
    start = time.monotonic()
    r = run([binary, "check", "--app-file", path, "--checks", name, "--size", SIZE])
    app = app_name(path)
    failed, rows = verdicts(r.stdout)
    tail = (r.stdout + r.stderr).strip()[-600:]
    check(r.returncode == 1, f"{app}: kperf check --checks {name} exits 1 (got {r.returncode}: "
          f"{tail})")
    check(failed.get(app) is not None and list(failed[app]) == [name],
          f"{app}: the verdict names the {name} check alone ({failed.get(app)})")
    check(any(c == name and result == "FAIL" for c, _, result in rows),
          f"{app}: a FAIL row of the {name} check")
    check({c for c, _, _ in rows} == {name},
          f"{app}: --checks {name} runs that check alone ({sorted({c for c, _, _ in rows})})")
    print(f"{app}: caught by {name} ({failed.get(app, {}).get(name)} rows), "
          f"{time.monotonic() - start:.0f} s", flush=True)


def every_check(binary, paths):
    """Every mutant through every check: its own fails, every other passes."""
    start = time.monotonic()
    r = run([binary, "check", "--size", SIZE] + sum([["--app-file", p] for p in paths], []))
    failed, rows = verdicts(r.stdout)
    check(r.returncode == 1, f"kperf check on every mutant exits 1 (got {r.returncode})")
    for path in paths:
        app, name = app_name(path), MUTANTS[os.path.basename(path)]
        allowed = ([name], []) if name == "reproducible" and one_cpu() else ([name],)
        check(failed.get(app) is not None and list(failed[app]) in allowed,
              f"{app}: {name} fails and every other check passes ({failed.get(app)})")
        print(f"{app}: failed {failed.get(app)}", flush=True)
    checks = {c for c, _, _ in rows}
    check(checks == set(MUTANTS.values()), f"every check ran ({sorted(checks)})")
    print(f"every mutant through every check: {time.monotonic() - start:.0f} s", flush=True)


def bad_checks(binary, path):
    for value, words in (("bogus", "unknown check 'bogus'"), ("range,range", "'range' twice"),
                         ("", "unknown check ''")):
        r = run([binary, "check", "--app-file", path, "--checks", value])
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and words in lines[0] and not r.stdout,
              f"--checks {value!r}: one line naming it, exit 2 ({r.returncode}: {lines})")


def main():
    binary, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    folder = os.path.join(source, "tests", "apps", "mutants")
    present = sorted(f for f in os.listdir(folder) if f.endswith(".cl"))
    check(present == sorted(MUTANTS), f"{folder} holds the mutants this test knows "
          f"({present} vs {sorted(MUTANTS)})")
    paths = [os.path.join(folder, f) for f in sorted(MUTANTS)]
    bad_checks(binary, paths[0])
    if full_tier():
        every_check(binary, paths)
        return finish("app mutants")
    for path in paths:
        name = MUTANTS[os.path.basename(path)]
        if name == "reproducible" and one_cpu():
            print(f"SKIP {app_name(path)}: one CPU, so no two work-items run at once")
            continue
        one_check(binary, path, name)
    return finish("app mutants")


if __name__ == "__main__":
    sys.exit(main())
