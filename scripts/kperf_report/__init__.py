"""kperf's report: the papers' tables and figures from kperf JSON documents (scripts/report.py is
the entry point). Modules: loading (documents and rows), plotting (figure output), one module per
part of the report (paper, harness, bilateral, syprox, tune) and main."""
import sys

try:
    import matplotlib
    import numpy  # noqa: F401

    matplotlib.use("Agg")  # before pyplot is first imported: files, no display
except ImportError as exc:  # pragma: no cover - depends on the machine
    sys.exit(f"report.py: {exc}; run with /usr/bin/python3 (apt-get install python3-numpy "
             "python3-matplotlib)")
