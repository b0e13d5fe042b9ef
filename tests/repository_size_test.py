#!/usr/bin/python3
"""The tracked tree stays small enough to clone and read: the files `git ls-files` lists, at
their apparent size, are at most 30 MiB. A failure names the largest files. Results of a new
study replace the runs they supersede, which stay in git history (results/HISTORY.md).

usage: repository_size_test.py SOURCE_DIR [LIMIT_MIB]
Exit 0 within the limit, 1 above it, 77 when SOURCE_DIR is not a git checkout.
"""
import os
import subprocess
import sys


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    limit = float(sys.argv[2]) if len(sys.argv) == 3 else 30.0
    listed = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True)
    if listed.returncode != 0:
        print(f"{root} is not a git checkout: tracked size not checked", file=sys.stderr)
        return 77
    sizes = []
    for name in listed.stdout.decode().split("\0"):
        path = os.path.join(root, name)
        if name and os.path.isfile(path) and not os.path.islink(path):
            sizes.append((os.path.getsize(path), name))
    total = sum(s for s, _ in sizes) / 2**20
    print(f"tracked tree: {len(sizes)} files, {total:.1f} MiB (limit {limit:g} MiB)")
    if total <= limit:
        return 0
    print(f"the tracked tree is {total:.1f} MiB, above {limit:g} MiB; the largest files:",
          file=sys.stderr)
    for size, name in sorted(sizes, reverse=True)[:10]:
        print(f"  {size / 2**20:8.2f} MiB  {name}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
