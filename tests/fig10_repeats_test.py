#!/usr/bin/python3
"""fig10_repeats.py on two hand-made runs: each cell's speedup is over its own run's global
accurate baseline at the cell's best shape, load path and one-launch fill (fused or shared; one of
them with --fills), the separate fill and other schemes are left out, and the counts add up; a
file that is not a run, or an unknown fill, gets one error line and exit 2. --bracket compares
each cell with the mean of its run's baseline before and after (RUN-baseline-after.json). A run
timed in rounds adds the least and greatest round median of each baseline.

usage: fig10_repeats_test.py FIG10_REPEATS_PY
"""
import json
import os
import subprocess
import sys
import tempfile

from checks import check, finish


def row(output, load, fill, t, scheme="accurate", recon="nn"):
    return {"status": "ok", "app": "gaussian3", "scheme": scheme, "output": output,
            "output_recon": recon if output != "none" else "none", "load": load,
            "output_fill": fill, "time_ns": {"median": t}}


def main():
    script = sys.argv[1]
    runs = [
        # baseline 100 (the local accurate kernel at 80 is not Paraprox's baseline); rows:2 nn at
        # its best of two shapes and both load paths, 80; the separate fill and stencil ignored.
        [row("none", "global", None, 100), row("none", "global", None, 120),
         row("none", "local", None, 80), row("rows:2", "global", "fused", 90),
         row("rows:2", "local", "fused", 80), row("rows:2", "global", "separate", 10),
         row("none", "global", None, 10, scheme="stencil"),
         row("cols:2", "global", "fused", 125)],
        [row("none", "global", None, 90), row("rows:2", "global", "fused", 100),
         row("cols:2", "global", "fused", 72), {"status": "failed", "app": "gaussian3"},
         row("cols:2", "local", "shared", 60)],
    ]
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, rows in enumerate(runs):
            paths.append(os.path.join(tmp, f"r{i}.json"))
            with open(paths[-1], "w") as f:
                json.dump({"results": rows}, f)
        run = subprocess.run([sys.executable, script] + paths, capture_output=True, text=True)
        check(run.returncode == 0, f"two runs: exit 0 ({run.stderr.strip()})")
        lines = run.stdout.splitlines()
        check("| gaussian3/rows:2/nn | 1.25 | 0.90 | 1.07 | 1 of 2 |" in lines,
              "rows:2 nn: 100/80 and 90/100, median and count")
        check("| gaussian3/cols:2/nn | 0.80 | 1.50 | 1.15 | 1 of 2 |" in lines,
              "cols:2 nn: 100/125 and 90/60 (the shared fill's)")
        check("| gaussian3 baseline, us | 0.10 | 0.09 | 0.10 | |" in lines,
              "each run's baseline: its best global accurate time (100 and 90 ns), and their median")
        check(lines.index("| gaussian3 baseline, us | 0.10 | 0.09 | 0.10 | |") == 2,
              "the baselines head the table")
        check(not any("separate" in l or "stencil" in l for l in lines), "only fused output schemes")
        check("2 cells: 0 hold in every run, 0 in none; cells that hold, run by run: 1, 1." in lines,
              "summary line")
        run = subprocess.run([sys.executable, script, "--fills", "fused"] + paths,
                             capture_output=True, text=True)
        check("| gaussian3/cols:2/nn | 0.80 | 1.25 | 1.02 | 1 of 2 |" in run.stdout.splitlines(),
              "--fills fused: cols:2 nn 100/125 and 90/72")
        run = subprocess.run([sys.executable, script, "--fills", "fused,twice"] + paths,
                             capture_output=True, text=True)
        check(run.returncode == 2 and run.stdout == "" and "'twice'" in run.stderr,
              "an unknown fill: one error line naming it, exit 2")
        # --bracket: each run's baseline timed again after the output schemes (120 and 90 ns),
        # beside it as RUN-baseline-after.json; each cell over the mean of the two.
        for path, t in zip(paths, (120, 90)):
            with open(path[:-len(".json")] + "-baseline-after.json", "w") as f:
                json.dump({"results": [row("none", "global", None, t),
                                       row("none", "local", None, 1)]}, f)
        run = subprocess.run([sys.executable, script, "--bracket"] + paths, capture_output=True,
                             text=True)
        lines = run.stdout.splitlines()
        check(run.returncode == 0, f"--bracket: exit 0 ({run.stderr.strip()})")
        check("| gaussian3/rows:2/nn | 1.38 | 0.90 | 1.14 | 1 of 2 |" in lines,
              "--bracket: rows:2 nn over (100 + 120) / 2 and (90 + 90) / 2")
        check("| gaussian3 baseline after, us | 0.12 | 0.09 | 0.10 | |" in lines,
              "--bracket: the baseline after heads the table too")
        run = subprocess.run([sys.executable, script, "--fills", "fused", "--bracket"] + paths,
                             capture_output=True, text=True)
        check("| gaussian3/cols:2/nn | 0.88 | 1.25 | 1.06 | 1 of 2 |" in run.stdout.splitlines(),
              "--fills and --bracket together")
        os.remove(paths[1][:-len(".json")] + "-baseline-after.json")
        run = subprocess.run([sys.executable, script, "--bracket"] + paths, capture_output=True,
                             text=True)
        check(run.returncode == 2 and run.stdout == "" and len(run.stderr.splitlines()) == 1 and
              "r1-baseline-after.json" in run.stderr,
              f"--bracket without a run's baseline after: one line naming it, exit 2 "
              f"({run.stderr.strip()})")
        # Runs timed in rounds: each baseline's least and greatest round median under it (here
        # rounds of samples [0, 2) and [2, 5): medians 15 and 40 ns); a run without rounds: "-".
        rounds_run = os.path.join(tmp, "rounds.json")
        baseline = row("none", "global", None, 30)
        baseline["samples_ns"] = [10, 20, 40, 30, 50]
        with open(rounds_run, "w") as f:
            json.dump({"context": {"rounds": {"rounds": 2}, "reps": 5},
                       "results": [baseline, row("rows:2", "global", "fused", 25)]}, f)
        run = subprocess.run([sys.executable, script, rounds_run, paths[0]], capture_output=True,
                             text=True)
        lines = run.stdout.splitlines()
        check(run.returncode == 0, f"a run in rounds: exit 0 ({run.stderr.strip()})")
        check("| gaussian3 baseline's rounds, us | 0.01-0.04 | - | | |" in lines,
              "a run in rounds: its baseline's round medians 15 and 40 ns; the other run none")
        check(lines.index("| gaussian3 baseline's rounds, us | 0.01-0.04 | - | | |") == 3,
              "the rounds' row is under the baseline")
        run = subprocess.run([sys.executable, script] + paths, capture_output=True, text=True)
        check("rounds" not in run.stdout, "no rounds' row where no run has rounds")
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write("{")
        run = subprocess.run([sys.executable, script, bad], capture_output=True, text=True)
        check(run.returncode == 2 and run.stdout == "" and len(run.stderr.splitlines()) == 1,
              f"malformed input: one line, exit 2 ({run.stderr.strip()})")
    sys.exit(finish("fig10_repeats_test.py"))


if __name__ == "__main__":
    main()
