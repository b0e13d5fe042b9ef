#!/usr/bin/python3
"""kperf's processes end with their parent and lose no signal, through the built binary on the
tests' OpenCL device (PoCL in CI).
- A SIGTERM that reaches the supervisor while its measuring process starts (KPERF_FAULT=slow-spawn
  holds that window open for 2 s) is forwarded once the child's pid is known: the command stops
  (exit 130) instead of running to its end.
- kperf tune --devices on two PoCL devices (POCL_DEVICES="pthread pthread"): when the measuring
  process is killed while a stage worker measures, the worker and its own measuring process end
  within seconds, and at no moment do two workers run for one device slot (the restarted
  measuring process waits for the slot). Skipped, and said so, where PoCL gives no two devices.
- A compile worker that hangs on a program (KPERF_FAULT=hang-compile:TEXT) is killed after
  KPERF_COMPILE_TIMEOUT seconds: that configuration is a build_failed row saying so, every other
  row equals a run without the hang.
- kperf tune --devices on two PoCL devices, its stage worker hung in the probe
  (KPERF_FAULT=hang-stage:probe): the tune waits KPERF_STAGE_TIMEOUT seconds, kills the worker
  (no process of it is left), and goes on: every configuration of that share is a run_failed row
  saying why, the other device's app is tuned and chosen as usual, exit 0. Skipped, and said so,
  where PoCL gives no two devices.

usage: process_test.py KPERF_BINARY
Exit 0 on success, 1 on a failed check.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from checks import check, finish, numpy_or_skip


def clean_env(extra=None):
    env = dict(os.environ)
    for name in ("KPERF_FAULT", "KPERF_BINARY_CACHE", "KPERF_COMPILE_WORKERS", "KPERF_SUPERVISE"):
        env.pop(name, None)
    env.update(extra or {})
    return env


def processes():
    """{pid: (ppid, argv, state)} of every live process, zombies left out."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] in ("Z", "X"):
            continue
        table[int(entry)] = (int(fields[1]), argv, fields[0])
    return table


def children(table, pid):
    return [p for p, (ppid, _, _) in table.items() if ppid == pid]


def check_signal_while_starting(binary, tmp):
    out = os.path.join(tmp, "term.json")
    # A run of about 10 s on PoCL, so that the child is still measuring when the signal reaches it.
    proc = subprocess.Popen([binary, "run", "--apps", "gaussian3", "--input", "synthetic:noise",
                             "--size", "256", "--warmup", "1", "--reps", "200", "--schemes",
                             "accurate,rows:2", "--quiet", "--out", out],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=clean_env({"KPERF_FAULT": "slow-spawn"}))
    # The child exists from the start of the 2 s window in which its pid is not yet recorded.
    deadline = time.time() + 2
    while time.time() < deadline and not children(processes(), proc.pid):
        time.sleep(0.01)
    check(bool(children(processes(), proc.pid)), "slow-spawn: the measuring process started")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    check(proc.returncode == 130,
          f"a SIGTERM while the measuring process starts stops the command (exit 130), got "
          f"{proc.returncode}: {err}")


def stage_slot(argv):
    """The --devices position of a stage worker (its request file names it), else None."""
    if len(argv) < 3 or argv[1] != "__tune-stage":
        return None
    m = re.search(r"/stage-(\d+)-[^/]*\.request\.json$", argv[2])
    return int(m.group(1)) if m else None


def check_stage_workers(binary, tmp):
    env = clean_env({"POCL_DEVICES": "pthread pthread"})
    listed = subprocess.run([binary, "devices"], capture_output=True, text=True, env=env)
    if "0:1" not in listed.stdout:
        print("process_test: SKIP stage workers: PoCL gives no two devices here", file=sys.stderr)
        return
    np = numpy_or_skip()
    rng = np.random.default_rng(3)
    dirs = {}
    for split in ("train", "test"):
        dirs[split] = os.path.join(tmp, split)
        os.makedirs(dirs[split])
        for i in range(2):
            np.save(os.path.join(dirs[split], f"{split}{i}.npy"),
                    (255 * rng.random((384, 512))).astype(np.float32))
    out = os.path.join(tmp, "tune.json")
    proc = subprocess.Popen(
        [binary, "tune", "--apps", "gaussian3", "--budget", "0.05,0.5", "--train", dirs["train"],
         "--test", dirs["test"], "--wg", "8x8,16x4,32x2", "--schemes", "accurate,rows:2,cols:2",
         "--recon", "nn,li", "--warmup", "1", "--reps", "5", "--quiet", "--devices", "all",
         "--out", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    killed_at, gone_at, old, most = None, None, set(), {}
    while proc.poll() is None or (old and gone_at is None and time.time() - killed_at < 5):
        table = processes()
        # A worker is a __tune-stage process whose parent is none (its measuring process is).
        workers = {p: stage_slot(argv) for p, (ppid, argv, _) in table.items()
                   if stage_slot(argv) is not None and
                   stage_slot(table.get(ppid, (0, [], ""))[1]) is None}
        for slot in set(workers.values()):
            most[slot] = max(most.get(slot, 0), list(workers.values()).count(slot))
        if killed_at is None:
            measuring = children(table, proc.pid)
            busy = [w for w in workers if children(table, w)]  # its own measuring process runs
            if measuring and busy:
                old = set(busy) | {c for w in busy for c in children(table, w)}
                os.kill(measuring[0], signal.SIGKILL)
                killed_at = time.time()
        elif gone_at is None and not old & set(table):
            gone_at = time.time()
        time.sleep(0.02)
    err = proc.stderr.read()
    # The killed process's worker and its measuring process end with it, at once.
    check(killed_at is None or (gone_at is not None and gone_at - killed_at < 1),
          f"stage worker processes {sorted(old)} outlived their parent: killed at {killed_at}, "
          f"gone at {gone_at}")
    for pid in old & set(processes()):
        os.kill(pid, signal.SIGKILL)
    check(killed_at is not None, f"a stage worker was seen measuring: {err[-500:]}")
    check(all(n == 1 for n in most.values()), f"at most one worker per device slot at a time: {most}")
    check(proc.returncode == 1 and "stopped: the measuring process was killed by signal 9" in err,
          f"the killed measuring process stops the tune (exit 1), got {proc.returncode}: {err[-500:]}")
    check(json.load(open(out))["context"]["complete"] is False, "the stopped tune: complete false")


def check_compile_timeout(binary, tmp):
    base = ["run", "--apps", "gaussian3", "--input", "synthetic:noise", "--size", "48x40",
            "--warmup", "1", "--reps", "3", "--wg", "16x4,8x8", "--quiet",
            "--schemes", "accurate,stencil,rows:2,cols:2"]
    env = {"KPERF_COMPILE_WORKERS": "2", "TMPDIR": tmp}
    clean = os.path.join(tmp, "workers.json")
    r = subprocess.run([binary] + base + ["--out", clean], capture_output=True, text=True,
                       env=clean_env(env))
    check(r.returncode == 0, f"compile workers without a hang: {r.stderr}")
    hung = os.path.join(tmp, "hung.json")
    start = time.time()
    r = subprocess.run([binary] + base + ["--out", hung], capture_output=True, text=True,
                       env=clean_env(dict(env, KPERF_COMPILE_TIMEOUT="3",
                                          KPERF_FAULT="hang-compile:" + HUNG_OPTIONS)))
    took = time.time() - start
    check(r.returncode == 0, f"a hung compile worker: exit 0, got {r.returncode}: {r.stderr}")
    if r.returncode != 0:
        return
    rows = {row["key"]: row for row in json.load(open(hung))["results"]}
    reference = {row["key"]: row for row in json.load(open(clean))["results"]}
    check(set(rows) == set(reference), "a hung compile worker: every configuration has its row")
    failed = [k for k, row in rows.items() if row["status"] != "ok"]
    check(len(failed) == 1 and HUNG in failed[0], f"a hung compile worker: one row lost: {failed}")
    for k in failed:
        check(rows[k]["status"] == "build_failed" and
              "did not finish this program in 3 s" in rows[k]["reason"],
              f"a hung compile worker: the row says why: {rows[k]['status']}, {rows[k]['reason']}")
    for k, row in rows.items():
        if k not in failed:
            check(row["status"] == reference[k]["status"] and row["error"] == reference[k]["error"],
                  f"a hung compile worker: {k} measured as without it")
    check(took < 120, f"a hung compile worker did not hold the run: {took:.0f} s")


def check_hung_stage_worker(binary, tmp):
    env = clean_env({"POCL_DEVICES": "pthread pthread"})
    if "0:1" not in subprocess.run([binary, "devices"], capture_output=True, text=True,
                                   env=env).stdout:
        print("process_test: SKIP hung stage worker: PoCL gives no two devices here",
              file=sys.stderr)
        return
    np = numpy_or_skip()
    rng = np.random.default_rng(5)
    scratch = os.path.join(tmp, "hung-stage")
    dirs = {}
    for split in ("train", "test"):
        dirs[split] = os.path.join(scratch, split)
        os.makedirs(dirs[split])
        np.save(os.path.join(dirs[split], f"{split}.npy"),
                (255 * rng.random((48, 64))).astype(np.float32))
    out = os.path.join(scratch, "tune.json")
    # Two apps on two devices: gaussian3 at home on the first, median on the second, whose worker
    # hangs in the probe.
    proc = subprocess.Popen(
        [binary, "tune", "--apps", "gaussian3,median", "--budget", "0.5", "--train", dirs["train"],
         "--test", dirs["test"], "--wg", "8x8,16x4", "--schemes", "accurate,rows:2", "--recon",
         "nn", "--load", "local", "--output", "none", "--precision", "f32", "--perforate",
         "device", "--relax", "none", "--warmup", "0", "--reps", "2", "--quiet", "--devices",
         "all", "--out", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=dict(env, KPERF_FAULT="hang-stage:probe", KPERF_STAGE_TIMEOUT="3", TMPDIR=scratch),
        start_new_session=True)
    start = time.time()
    try:
        _, err = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the tune and every process it started
        _, err = proc.communicate()
        check(False, f"a hung stage worker held the tune past 240 s: {err[-500:]}")
        return
    took = time.time() - start
    left = [p for p, (_, argv, _) in processes().items()
            if len(argv) > 2 and argv[1] == "__tune-stage" and argv[2].startswith(scratch)]
    check(not left, f"the hung stage worker was killed: processes {left} are left")
    check(proc.returncode == 0, f"a hung stage worker: exit 0, got {proc.returncode}: {err[-500:]}")
    check("did not finish its share of stage probe" in err,
          f"a hung stage worker: one line says so: {err[-500:]}")
    if proc.returncode != 0:
        return
    doc = json.load(open(out))
    hung = [r for r in doc["results"] if r["app"] == "median" and r["stage"] == "probe"]
    check(hung and all(r["status"] == "run_failed" and r.get("device_slot") == 1 and
                       "did not finish its share of stage probe within 3 s" in r["reason"]
                       for r in hung),
          f"a hung stage worker: its share's configurations are run_failed rows saying why: "
          f"{[(r['key'], r['status'], r.get('reason', '')[:80]) for r in hung][:3]}")
    check(not any(r["status"] == "ok" for r in doc["results"] if r["app"] == "median"),
          "a hung stage worker: nothing of its app measured")
    chosen = doc["tune"]["gaussian3"]["choices"][0]["chosen"]
    check(chosen is not None, "a hung stage worker: the other device's app is tuned and chosen")
    check(took < 120, f"a hung stage worker did not hold the tune: {took:.0f} s")


HUNG = "cols:2/nn/wg:8x8"  # the configuration whose program hangs its compile worker
HUNG_OPTIONS = "scheme_cols.cl -DSKIP=2 -DRECON_LI=0 -DWG_X=8 -DWG_Y=8"


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="kperf-process-") as tmp:
        check_signal_while_starting(binary, tmp)
        check_compile_timeout(binary, tmp)
        check_stage_workers(binary, tmp)
        check_hung_stage_worker(binary, tmp)
    return finish("process_test")


if __name__ == "__main__":
    sys.exit(main())
