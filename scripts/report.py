#!/usr/bin/python3
"""Turns kperf JSON results into the papers' tables and figures.

usage: /usr/bin/python3 scripts/report.py RESULTS.json [RESULTS.json ...] --out DIR

Writes DIR/report.md and, as PNG (--formats png,svg adds SVG): Table I (devices), Table III (runtime at the best
work-group), Figs. 3/4 (speedups, geometric mean), Fig. 5 (primary error), Fig. 6 (error over
many inputs), Fig. 8 (error against runtime), Fig. 9 (work-group heat maps) and Fig. 10 (error
against speedup with the Pareto front); from rows with the SPEC 10 axes (schema 2), the CGO'18
Fig. 10 comparison with Paraprox's output schemes (speedups over the global-memory baseline,
beside the published points), the spread of relaxed-barrier rows, the SYprox table of
transfers and end-to-end speedups (--transfers rows), hypervolumes by approximation family, the
CUDA-aware paper's runtime against wrong elements, and a gallery of accurate, approximate and
|T - A| images (runs with --save-outputs). From `kperf tune` documents: the choice per budget
with its held-out verdict, the fronts, hypervolumes by family, the Paraprox comparison and a
gallery of each choice on a held-out input. Reads schema versions 1
and 2; the papers' figures use the rows whose SPEC 10 axes are at their defaults. Needs Debian's
python3-numpy and python3-matplotlib. The code is the kperf_report package beside this file.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kperf_report.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
