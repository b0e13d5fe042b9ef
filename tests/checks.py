"""What the script tests share: failures collected by check() (each printed as it happens), the
exit status they add up to, numpy or a skip (exit 77) where python3-numpy is missing, and which
tier runs."""
import os
import sys

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, file=sys.stderr)


def full_tier():
    """Whether KPERF_TEST_FULL asks for the whole matrix (`scripts/test.sh --full` sets it to 1),
    as the C++ suites read it (test_support.hpp's full_matrix()): set, non-empty and not 0."""
    return os.environ.get("KPERF_TEST_FULL", "0") not in ("", "0")


def numpy_or_skip():
    try:
        import numpy
    except ImportError:
        print("numpy missing: install python3-numpy", file=sys.stderr)
        sys.exit(77)
    return numpy


def finish(name):
    """The exit status: 1 after any failed check, else 0 with one line saying so."""
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print(f"{name}: all checks passed")
    return 0
