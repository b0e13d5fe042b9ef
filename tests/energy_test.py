#!/usr/bin/python3
"""--energy end to end on the tests' OpenCL device with a fake sensor: a thread plays a hwmon
energy counter (energy1_input, microjoules) of a constant 50 W that updates every 100 ms, as
NVML's does on an H200. Then:
- `kperf run --energy hwmon:PATH` gives every row an energy object whose windows are at least
  --energy-window long, whose average power is the sensor's 50 W, and whose joules per launch
  are that power over the launches each window counted; the context has the idle power (also
  50 W here) and the counter's 100 ms period;
- `kperf tune --objective energy` ranks by joules per launch and chooses within the budget.

usage: energy_test.py KPERF_BINARY
Exit 0 on success, 1 on a failed check, 77 when numpy is unavailable.
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from checks import check, finish, numpy_or_skip

np = numpy_or_skip()

WATTS, PERIOD = 50.0, 0.1


def fake_sensor(path, stop):
    start = time.monotonic()
    published = -1
    while not stop.is_set():
        now = time.monotonic() - start
        if int(now / PERIOD) != published:
            published = int(now / PERIOD)
            # The energy up to the moment the value is written, as a real counter holds: where
            # this thread is starved and writes an update late (2 busy cores, sanitizers), any
            # two updates still read WATTS over the time between them.
            with open(path + ".tmp", "w") as f:
                f.write(f"{int(round(now * WATTS * 1e6))}\n")
            os.replace(path + ".tmp", path)  # readers see a whole value
        time.sleep(0.002)


def main():
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        sensor = os.path.join(tmp, "energy1_input")
        stop = threading.Event()
        thread = threading.Thread(target=fake_sensor, args=(sensor, stop), daemon=True)
        thread.start()
        time.sleep(0.05)
        try:
            out = os.path.join(tmp, "run.json")
            # 1 s windows: a window edge read late by a starved poll (sanitizers on two busy
            # cores) shifts its power by that share of the window: 58.1 W was seen with 0.5 s.
            r = subprocess.run([binary, "run", "--energy", f"hwmon:{sensor}", "--energy-window", "1",
                                "--energy-reps", "2", "--apps", "gaussian3", "--schemes", "accurate,rows:2",
                                "--wg", "8x8", "--size", "64", "--warmup", "2", "--reps", "5", "--quiet",
                                "--out", out], capture_output=True, text=True)
            check(r.returncode == 0, f"run --energy hwmon exits 0 ({r.stderr.strip()[-300:]})")
            if r.returncode == 0:
                doc = json.load(open(out))
                ctx = doc["context"]["energy"]
                check(ctx["source"] == "hwmon" and ctx["counter"]["sensor"] == sensor, f"context {ctx}")
                check(abs(ctx["counter_period_s"] - PERIOD) < 0.02, f"counter period {ctx['counter_period_s']}")
                check(abs(ctx["idle_power_w"] - WATTS) < 0.1 * WATTS, f"idle power {ctx['idle_power_w']}")
                for row in doc["results"]:
                    e = row.get("energy")
                    check(isinstance(e, dict), f"{row['key']}: energy {e} ({row.get('energy_problem')})")
                    if not isinstance(e, dict):
                        continue
                    check(len(e["windows"]) == 2, f"{row['key']}: {len(e['windows'])} windows")
                    for w in e["windows"]:
                        check(w["seconds"] >= 1, f"{row['key']}: a window of {w['seconds']} s")
                        check(abs(w["joules"] / w["seconds"] - WATTS) < 0.1 * WATTS,
                              f"{row['key']}: {w['joules'] / w['seconds']:.1f} W in a window")
                        check(w["launches"] > 0, f"{row['key']}: no launches")
                    per = sorted(w["joules"] / w["launches"] for w in e["windows"])
                    check(abs(e["j_per_launch"] - sum(per) / 2) < 1e-12, f"{row['key']}: median of two")
                    check(abs(e["dynamic_j_per_launch"]) < 0.2 * e["j_per_launch"],
                          f"{row['key']}: dynamic energy {e['dynamic_j_per_launch']} with idle = load power")
                    width = row["input"]["width"] * row["input"]["height"]
                    check(abs(e["nj_per_output"] - 1e9 * e["j_per_launch"] / width) < 1e-6 * e["nj_per_output"],
                          f"{row['key']}: nJ per output")
                check(doc["context"]["fingerprint"]["options"]["energy"]["source"] == "hwmon", "fingerprint")

            train, test = os.path.join(tmp, "train"), os.path.join(tmp, "test")
            rng = np.random.default_rng(5)
            for d, names in ((train, ("a", "b")), (test, ("c",))):
                os.makedirs(d)
                for name in names:
                    np.save(os.path.join(d, name + ".npy"), (255 * rng.random((32, 40))).astype(np.float32))
            tune = os.path.join(tmp, "tune.json")
            r = subprocess.run([binary, "tune", "--apps", "gaussian3", "--budget", "0.5", "--train", train,
                                "--test", test, "--wg", "8x8", "--schemes", "accurate,rows:2", "--recon", "nn",
                                "--load", "local", "--output", "none", "--precision", "f32",
                                "--perforate", "device", "--relax", "none", "--warmup", "1", "--reps", "3",
                                "--objective", "energy", "--energy", f"hwmon:{sensor}", "--energy-window", "0.3",
                                "--energy-reps", "1", "--quiet", "--out", tune], capture_output=True, text=True)
            check(r.returncode == 0, f"tune --objective energy exits 0 ({r.stderr.strip()[-300:]})")
            if r.returncode == 0:
                doc = json.load(open(tune))
                check(doc["context"]["tune"]["objective"] == "energy", "the tune says its objective")
                energy_of = {(row["stage"], row["key"]): row["energy"]["j_per_launch"] for row in doc["results"]
                             if isinstance(row.get("energy"), dict)}
                check(len(energy_of) >= 2, f"the timed stages measured energy ({len(energy_of)} rows)")
                checked = 0
                for p in doc["tune"]["gaussian3"]["points"]:
                    joules = [j for (stage, key), j in energy_of.items() if key == p["key"]]
                    if joules:
                        checked += 1
                        check(any(abs(p["time_ns"] - 1e9 * j) <= 1e-6 * p["time_ns"] for j in joules),
                              f"point {p['key']} ranks by nJ per launch ({p['time_ns']} vs {joules})")
                check(checked >= 2, f"{checked} points matched to their energy rows")
                check(doc["tune"]["gaussian3"]["choices"][0].get("chosen") is not None, "a choice at 50 %")
        finally:
            stop.set()
            thread.join()
    return finish("energy")


if __name__ == "__main__":
    sys.exit(main())
