#!/usr/bin/env python3
"""NVIDIA NPP's filters beside kperf's: builds npp_peers.cu with nvcc on the machine that runs
it, runs it on the inputs and turns its lines into the library's rows (a peer of
scripts/peers.sh). A missing nvcc or NPP, a failed build or a crash become rows that say so.

usage: python3 scripts/peers/npp_peers.py --inputs DIR --outputs DIR --out FILE
       --build DIR [--nvcc PATH] [--warmup N] [--reps N]

nvcc is --nvcc, else $NVCC, else the one on PATH, else /usr/local/cuda/bin/nvcc; NPP's headers
and libraries are the toolkit's beside it ($NPP_HOME/include and lib64 where NPP lives
elsewhere). The program is built with nppiFilterMedianBorder first and, where this NPP lacks
it, without (its interior median alone).
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers_common as pc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
APPS = pc.APPS + ("copy",)


def find_nvcc(given):
    for candidate in (given, os.environ.get("NVCC"), shutil.which("nvcc"),
                      "/usr/local/cuda/bin/nvcc"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def build(nvcc, build_dir):
    """(binary, log, None) or (None, log, why)."""
    home = os.environ.get("NPP_HOME") or os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    lib = next((d for d in (os.path.join(home, "lib64"), os.path.join(home, "lib"))
                if os.path.isdir(d)), os.path.join(home, "lib64"))
    os.makedirs(build_dir, exist_ok=True)
    binary, log = os.path.join(build_dir, "npp_peers"), []
    for median_border in (1, 0):
        cmd = [nvcc, "-O2", "-std=c++17", f"-DKPERF_NPP_MEDIAN_BORDER={median_border}",
               "-I", os.path.join(home, "include"), os.path.join(HERE, "npp_peers.cu"),
               "-o", binary, "-L", lib, f"-Xlinker=-rpath={lib}", "-lnppif", "-lnppc"]
        try:
            made = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            out, code = made.stdout + made.stderr, made.returncode
        except (OSError, subprocess.TimeoutExpired) as exc:
            out, code = pc.short(exc), -1
        log.append(f"$ {' '.join(cmd)}\n{out}(exit {code})\n")
        if code == 0:
            return binary, "".join(log), None
    last = [line for line in out.splitlines()
            if "error" in line.lower() or "undefined" in line] or out.splitlines()
    return None, "".join(log), "nvcc failed: " + (" ".join(last[:2]) or f"exit {code}")[:300]


def parse(lines, doc):
    """The program's lines into the document (rows, checks, versions)."""
    for line in lines:
        f = line.rstrip("\n").split("\t")
        if f[0] == "version" and len(f) == 3:
            doc["versions"][f[1]] = f[2]
        elif f[0] == "row" and len(f) == 11:
            fn = {"app": f[2], "function": f[3], "border": f[4], "region": f[5]}
            size = [int(f[6]), int(f[7])]
            samples = [float(s) for s in f[10].split(",")] if f[8] == "ok" else None
            reason = "" if f[9] == "-" else f[9]
            doc["rows"].append(pc.peer_row(f[1], fn, size, f[8], reason, samples))
        elif f[0] == "check" and len(f) == 10:
            check = {"library": f[1], "app": f[2], "function": f[3], "region": f[4],
                     "size": [int(f[5]), int(f[6])], "output_file": f[9], "status": f[7]}
            if f[8] != "-":
                check["reason"] = f[8]
            doc["checks"].append(check)
    doc["device"] = doc["versions"].pop("device", None)


def missing_rows(doc, manifest, reason):
    """Rows for the timed sizes at which the program wrote nothing of an app (it ended early)."""
    seen = {(r["app"], tuple(r["size"])) for r in doc["rows"]}
    for entry in manifest["entries"]:
        for app in APPS:
            if entry["timed"] and (app, tuple(entry["size"])) not in seen:
                library = "CUDA" if app == "copy" else "NPP"
                doc["rows"].append(pc.peer_row(library, {"app": app, "function": "-"},
                                               entry["size"], "failed", reason))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name in ("--inputs", "--outputs", "--out", "--build"):
        ap.add_argument(name, required=True)
    ap.add_argument("--nvcc")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args(argv)
    manifest = pc.load_manifest(args.inputs)
    nvcc = find_nvcc(args.nvcc)
    if not nvcc:
        doc = pc.unavailable("NPP", manifest, "no nvcc (--nvcc, $NVCC, PATH, /usr/local/cuda)")
        pc.write_json(args.out, doc)
        print(f"NPP: unavailable ({doc['reason']})")
        return 0
    binary, log, why = build(nvcc, args.build)
    with open(os.path.join(args.build, "build.log"), "w") as f:
        f.write(log)
    if not binary:
        doc = pc.unavailable("NPP", manifest, why, status="build_failed")
        pc.write_json(args.out, doc)
        print(f"NPP: build failed ({why}; {args.build}/build.log)")
        return 0
    os.makedirs(os.path.join(args.outputs, "NPP"), exist_ok=True)
    cmd = [binary, "--warmup", str(args.warmup), "--reps", str(args.reps), "--outputs",
           args.outputs]
    for e in manifest["entries"]:
        cmd += ["--input", str(e["size"][0]), str(e["size"][1]), e["path"],
                "1" if e["timed"] else "0", "1" if e["checked"] else "0"]
    doc = pc.library_doc("NPP", versions={"nvcc": nvcc})
    try:
        ran = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        lines, code, err = ran.stdout.splitlines(), ran.returncode, ran.stderr.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        lines, code, err = [], -1, pc.short(exc)
    parse(lines, doc)
    if code != 0:
        doc.update(status="failed", reason=f"npp_peers exited {code}: {err[-300:]}")
        missing_rows(doc, manifest, doc["reason"])
    pc.write_json(args.out, doc)
    ok = sum(r["status"] == "ok" for r in doc["rows"])
    print(f"NPP {doc['versions'].get('npp', '?')}: {ok} of {len(doc['rows'])} rows timed, "
          f"{len(doc['checks'])} outputs saved for the check" +
          (f"; {doc['reason']}" if code else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
