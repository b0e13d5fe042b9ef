"""What the script tests share: failures collected by check() (each printed as it happens), the
exit status they add up to, and numpy or a skip (exit 77) where python3-numpy is missing."""
import sys

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, file=sys.stderr)


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
