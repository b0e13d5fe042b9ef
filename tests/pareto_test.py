#!/usr/bin/python3
"""Unit tests of scripts/pareto.py on hand-computed fronts and hypervolumes."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import pareto  # noqa: E402

failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    failures += not cond


# Front: (speedup, error). (3, 0.5) and (2, 0.1) and (1.5, 0.05) are optimal; (2, 0.6) is
# dominated by (3, 0.5); (1.5, 0.1) by (2, 0.1).
pts = [(2.0, 0.6), (3.0, 0.5), (2.0, 0.1), (1.5, 0.1), (1.5, 0.05)]
check(pareto.pareto_front(pts) == [1, 2, 4], f"front of a mixed set {pareto.pareto_front(pts)}")
# Duplicates once (the first given); ties in one objective: the better in the other wins.
dup = [(2.0, 0.1), (2.0, 0.1), (2.0, 0.2), (1.0, 0.1)]
check(pareto.pareto_front(dup) == [0], f"duplicates and ties {pareto.pareto_front(dup)}")
check(pareto.pareto_front([]) == [], "empty set")
check(pareto.pareto_front([(1.0, 1.0)]) == [0], "single point")
# No point of the front dominates another.
front = [pts[i] for i in pareto.pareto_front(pts)]
check(not any(pareto.dominates(a, b) for a in front for b in front), "front has no dominated point")

# Hypervolume with reference (1, 1): rectangles [1, s] x [e, 1].
# One point (3, 0.5): 2 * 0.5 = 1.
check(abs(pareto.hypervolume([(3.0, 0.5)], (1.0, 1.0)) - 1.0) < 1e-12, "one rectangle")
# (3, 0.5) and (2, 0.1): union = 2*0.5 + 1*0.9 - overlap 1*0.5 = 1.4.
hv = pareto.hypervolume([(3.0, 0.5), (2.0, 0.1)], (1.0, 1.0))
check(abs(hv - 1.4) < 1e-12, f"two overlapping rectangles {hv}")
# Dominated and out-of-reference points add nothing.
hv2 = pareto.hypervolume([(3.0, 0.5), (2.0, 0.1), (2.0, 0.6), (0.8, 0.0), (5.0, 1.0)], (1.0, 1.0))
check(abs(hv2 - 1.4) < 1e-12, f"dominated and outside points ignored {hv2}")
# Three steps: (4, 0.8), (3, 0.5), (2, 0.2): 1*0.2 + 1*0.5 + 1*0.8 = 1.5.
hv3 = pareto.hypervolume([(2.0, 0.2), (4.0, 0.8), (3.0, 0.5)], (1.0, 1.0))
check(abs(hv3 - 1.5) < 1e-12, f"staircase {hv3}")
check(pareto.hypervolume([], (1.0, 1.0)) == 0.0, "empty set has no volume")
# Binary coverage: the family {(3, 0.5)} misses 0.4 of the union's 1.4; the family holding the
# whole front misses nothing.
check(abs(pareto.binary_coverage(pts, [(3.0, 0.5)], (1.0, 1.0)) - (pareto.hypervolume(pts, (1.0, 1.0)) - 1.0)) < 1e-12,
      "coverage of a partial family")
check(pareto.binary_coverage(pts, front, (1.0, 1.0)) == 0.0, "coverage of the front itself is 0")

print(f"{failures} failed")
sys.exit(1 if failures else 0)
