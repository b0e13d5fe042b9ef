"""Pareto fronts and exact 2-D hypervolume for kperf's speedup (higher is better) against error
(lower is better), as SPEC section 12 and SYprox's Table 3 use them.

A point dominates another when it is at least as fast and at most as wrong, and strictly better
in one of the two. The front keeps one point of each group of duplicates (the first given).
The hypervolume of a set is the area of the union of the rectangles [ref_speedup, s] x
[e, ref_error] of its points, computed by a sweep over speedups in decreasing order; points at
or below the reference speedup, or at or above the reference error, add nothing.
"""


def dominates(a, b):
    """a = (speedup, error) dominates b."""
    return a[0] >= b[0] and a[1] <= b[1] and (a[0] > b[0] or a[1] < b[1])


def pareto_front(points):
    """Indices of the non-dominated points, duplicates once (the first), by decreasing speedup."""
    order = sorted(range(len(points)), key=lambda i: (-points[i][0], points[i][1], i))
    front, best_error, seen = [], float("inf"), set()
    for i in order:
        s, e = points[i]
        if (s, e) in seen:
            continue
        seen.add((s, e))
        # Sorted by speedup down, then error up: i is dominated exactly when an earlier point
        # (at least as fast) has an error at most e; the equal-point case was handled above.
        if e < best_error:
            front.append(i)
            best_error = e
    return front


def hypervolume(points, ref):
    """Exact area dominated by `points` within the reference point ref = (speedup, error)."""
    ref_s, ref_e = ref
    pts = sorted(((s, e) for s, e in points if s > ref_s and e < ref_e), key=lambda p: -p[0])
    area, best_error = 0.0, ref_e
    for k, (s, e) in enumerate(pts):
        best_error = min(best_error, e)
        next_s = pts[k + 1][0] if k + 1 < len(pts) else ref_s
        area += (s - next_s) * (ref_e - best_error)
    return area


def binary_coverage(union_points, family_points, ref):
    """SYprox's D(P, P_family) = HV(P) - HV(P_family): what the union covers that the family
    does not (0 when the family's front dominates everything else)."""
    return hypervolume(union_points, ref) - hypervolume(family_points, ref)
