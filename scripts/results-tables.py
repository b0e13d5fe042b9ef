#!/usr/bin/python3
"""Fills the headline tables of results/README.md from the committed runs: every block

    <!-- table KIND: RUN... -->
    ...
    <!-- end table -->

gets what `scripts/report.py --table KIND RUN...` prints (RUN paths relative to results/). With
--check nothing is written, and every block that differs is named (exit 1).
scripts/make-reports.sh runs it after the reports.

usage: scripts/results-tables.py [--check] README
"""
import os
import re
import subprocess
import sys

BLOCK = re.compile(r"(<!-- table ([\w-]+): ([^>]*?) -->\n)(.*?)(<!-- end table -->)", re.S)


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    check = "--check" in sys.argv[1:]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    readme = args[0]
    results = os.path.dirname(os.path.abspath(readme))
    report = os.path.join(os.path.dirname(os.path.abspath(__file__)), "report.py")
    text = open(readme).read()
    problems = []

    def fill(match):
        head, kind, runs, body, tail = match.groups()
        paths = [os.path.join(results, r) for r in runs.split()]
        missing = [r for r, p in zip(runs.split(), paths) if not os.path.exists(p)]
        if missing:
            problems.append(f"table {kind}: {', '.join(missing)} missing")
            return match.group(0)
        made = subprocess.run([sys.executable, report, "--table", kind] + paths,
                              capture_output=True, text=True)
        if made.returncode != 0:
            problems.append(f"table {kind}: report.py failed: {made.stderr.strip()}")
            return match.group(0)
        if check and made.stdout != body:
            problems.append(f"table {kind} ({runs}) is not what report.py makes of its runs")
        return head + made.stdout + tail

    filled = BLOCK.sub(fill, text)
    for p in problems:
        print(f"results-tables.py: {readme}: {p}", file=sys.stderr)
    if not check and filled != text and not problems:
        with open(readme + ".tmp", "w") as f:
            f.write(filled)
        os.replace(readme + ".tmp", readme)
    count = len(BLOCK.findall(text))
    if not problems:
        print(f"results-tables.py: {count} tables {'equal' if check else 'written'}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
