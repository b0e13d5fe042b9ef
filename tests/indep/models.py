"""Independent NumPy models of what kperf computes, written from docs/semantics.md (sections 1-8)
and the specification's sections 2-4, 10 and 11, never from kperf's C++ or OpenCL: the apps on
a clamp-to-edge grid, the work-group tile and the input schemes that perforate it, Paraprox's
output schemes and their reconstruction, and half / bfloat16 storage.

Every model computes in float64 and returns, beside its values, a per-element magnitude: the
scale of the float32 rounding a kernel may accumulate at that element (the sum of the absolute
terms of its weighted sum, the largest window element of a selection). compare.py turns it into a
tolerance; elements whose value the semantics make exact (a selection, a copy, 255 - v) are
compared bit for bit instead.
"""
import numpy as np

RADIUS = {"gaussian3": 1, "gaussian5": 2, "sobel3": 1, "sobel5": 2, "median": 1,
          "inversion": 0, "bilateral": 2, "hotspot": 1}
# Apps whose output is one window element, or one float operation on it: exact when every
# window element is an exact copy of an input element (semantics §2).
SELECTION_APPS = ("median", "inversion")

B3, D3 = [1, 2, 1], [-1, 0, 1]
B5, D5 = [1, 4, 6, 4, 1], [-1, -2, 0, 2, 1]


# ---------------------------------------------------------------- apps on a padded window

def _correlate_valid(p, r, ky, kx):
    """Separable weights ky (along y) x kx (along x) over the valid part of p (border r)."""
    h, w = p.shape[0] - 2 * r, p.shape[1] - 2 * r
    out, mag = np.zeros((h, w)), np.zeros((h, w))
    for i, a in enumerate(ky):
        for j, b in enumerate(kx):
            term = a * b * p[i:i + h, j:j + w]
            out += term
            mag += np.abs(term)
    return out, mag


def bilateral_valid(p, sigma_color=25.0, sigma_space=2.0, loop_skip=1):
    """Semantics §2 / SPEC 11: OpenCV's round d = 5 window {dy^2 + dx^2 <= 4}, weights
    exp(-d^2 / 2S^2) exp(-(I(q) - I(p))^2 / 2C^2), normalised; --loop-skip 2 (semantics §9)
    visits every other tap in row-major order and renormalises over the taps visited."""
    r = 2
    h, w = p.shape[0] - 2 * r, p.shape[1] - 2 * r
    centre = p[r:r + h, r:r + w]
    taps = [(dy, dx) for dy in range(-r, r + 1) for dx in range(-r, r + 1)
            if dy * dy + dx * dx <= r * r]
    num, den = np.zeros((h, w)), np.zeros((h, w))
    lo, hi, arg = centre.copy(), centre.copy(), np.zeros((h, w))
    for dy, dx in taps[::loop_skip]:
        q = p[r + dy:r + dy + h, r + dx:r + dx + w]
        colour = (q - centre) ** 2 / (2 * sigma_color ** 2)
        weight = np.exp(-(dy * dy + dx * dx) / (2 * sigma_space ** 2)) * np.exp(-colour)
        num += weight * q
        den += weight
        lo, hi, arg = np.minimum(lo, q), np.maximum(hi, q), np.maximum(arg, colour)
    # A weight's relative rounding (its exp's argument carries relative error, so an absolute
    # one of arg u) moves the normalised mean by at most that much of the window's range.
    return num / den, (hi - lo) * (1.0 + arg) + np.abs(num / den)


def app_valid(app, p, opts=None):
    """The app's outputs over the valid part of p, a grid padded by the app's radius; with the
    clamped input padded by edge replication this is the accurate app (semantics §1-2)."""
    opts = opts or {}
    r = RADIUS[app]
    h, w = p.shape[0] - 2 * r, p.shape[1] - 2 * r
    if app in ("gaussian3", "gaussian5"):
        b, norm = (B3, 16.0) if app == "gaussian3" else (B5, 256.0)
        out, mag = _correlate_valid(p, r, b, b)
        return out / norm, mag / norm
    if app in ("sobel3", "sobel5"):
        b, d = (B3, D3) if app == "sobel3" else (B5, D5)
        gx, mx = _correlate_valid(p, r, b, d)  # smoothing along y, derivative along x
        gy, my = _correlate_valid(p, r, d, b)
        return np.hypot(gx, gy), mx + my
    if app == "median":
        stack = np.stack([p[i:i + h, j:j + w] for i in range(3) for j in range(3)])
        return np.median(stack, axis=0), np.max(np.abs(stack), axis=0)
    if app == "inversion":
        return 255.0 - p, 255.0 + np.abs(p)
    if app == "bilateral":
        return bilateral_valid(p, *opts.get("sigmas", (25.0, 2.0)), opts.get("loop_skip", 1))
    raise ValueError(app)


def accurate(app, img, opts=None):
    """The accurate app on img with clamp-to-edge borders (semantics §1: every border)."""
    r = RADIUS[app]
    return app_valid(app, np.pad(img, r, mode="edge"), opts)


# ---------------------------------------------------------------- the tile (semantics §3-4)

def _rebuild_lines(tile, loaded, li):
    """Rebuilds the tile's rows that are not `loaded` (a bool per row) from its loaded rows:
    the nearest (a tie takes the row above), or under li the interpolation by distance between
    the loaded rows above and below, the nearest where only one side has one (semantics §4)."""
    idx = np.flatnonzero(loaded)
    if idx.size == 0:
        raise ValueError("no loaded line in the tile: the kernel must refuse this shape")
    out = tile.copy()
    for t in range(tile.shape[0]):
        if loaded[t]:
            continue
        above, below = idx[idx < t], idx[idx > t]
        a = above[-1] if above.size else None
        b = below[0] if below.size else None
        if a is None or b is None:
            out[t] = tile[b if a is None else a]
        elif li:
            wgt = (t - a) / (b - a)
            out[t] = (1.0 - wgt) * tile[a] + wgt * tile[b]
        else:
            out[t] = tile[a] if t - a <= b - t else tile[b]
    return out


def perforated_tile(img, scheme, k, li, r, by, bx, bh, bw):
    """Tile of block (by, bx) of a bh x bw block: (bh + 2r) x (bw + 2r) elements, element
    (ty, tx) standing for global (by bh + ty - r, bx bw + tx - r), holding it clamped to the
    grid where loaded, rebuilt from the tile's loaded elements where the scheme skipped it.
    Returns the tile and whether any element was interpolated (inexact)."""
    h, w = img.shape
    gy = by * bh + np.arange(bh + 2 * r) - r  # unclamped global rows of the tile
    gx = bx * bw + np.arange(bw + 2 * r) - r
    full = img[np.clip(gy, 0, h - 1)][:, np.clip(gx, 0, w - 1)]
    if scheme == "accurate":
        return full
    if scheme == "stencil":  # the core element at the clamped tile coordinates
        ty = np.clip(np.arange(bh + 2 * r), r, r + bh - 1)
        tx = np.clip(np.arange(bw + 2 * r), r, r + bw - 1)
        return full[ty][:, tx]
    if scheme == "rows":
        return _rebuild_lines(full, (gy + r) % k == 0, li)
    if scheme == "cols":
        return _rebuild_lines(full.T, (gx + r) % k == 0, li).T
    raise ValueError(scheme)


def perforated(app, img, scheme, k, li, block, opts=None):
    """The app under an input scheme at a launch block (bw, bh): every block's outputs from its
    own perforated tile (semantics §3-4). Returns (values, magnitudes)."""
    bw, bh = block
    h, w = img.shape
    r = RADIUS[app]
    out, mag = np.empty((h, w)), np.empty((h, w))
    for by in range(-(-h // bh)):
        for bx in range(-(-w // bw)):
            tile = perforated_tile(img, scheme, k, li, r, by, bx, bh, bw)
            v, m = app_valid(app, tile, opts)
            ys = slice(by * bh, min((by + 1) * bh, h))
            xs = slice(bx * bw, min((bx + 1) * bw, w))
            out[ys, xs] = v[:ys.stop - ys.start, :xs.stop - xs.start]
            mag[ys, xs] = m[:ys.stop - ys.start, :xs.stop - xs.start]
    return out, mag


# ---------------------------------------------------------------- output schemes (semantics §6)

def computed_lines(n, K):
    """Indices of the computed output lines along an axis of n: i mod K == K / 2."""
    return [i for i in range(n) if i % K == K // 2]


def fill_plan(n, K, li):
    """For every index along an axis, [(source line, weight)]: itself where computed; under nn
    the nearest computed line (a tie takes the lower index); under li the two nearest by
    distance; before the first and past the last computed line, that line."""
    comp = computed_lines(n, K)
    if not comp:
        raise ValueError("no computed line")
    plan = []
    for i in range(n):
        if i in comp:
            plan.append([(i, 1.0)])
        elif i < comp[0] or i > comp[-1]:
            plan.append([(comp[0] if i < comp[0] else comp[-1], 1.0)])
        else:
            c0 = max(c for c in comp if c < i)
            c1 = min(c for c in comp if c > i)
            if li:
                t = (i - c0) / (c1 - c0)
                plan.append([(c0, 1.0 - t), (c1, t)])
            else:
                plan.append([(c0 if i - c0 <= c1 - i else c1, 1.0)])
    return plan


def _fill_axis(a, axis, K, li):
    b = np.moveaxis(a, axis, 0)
    out = np.empty_like(b)
    for i, terms in enumerate(fill_plan(b.shape[0], K, li)):
        out[i] = sum(wgt * b[src] for src, wgt in terms)
    return np.moveaxis(out, 0, axis)


def output_scheme(values, kind, K, li, round_computed=None):
    """Semantics §6: only the computed outputs of `values` are used; every other output is
    filled from them (center: along x first, then y). round_computed, when given, rounds the
    computed outputs to the stored type first (f16: "the computed outputs are rounded to half
    before the others are made from them")."""
    v = values if round_computed is None else round_computed(values)
    if kind in ("cols", "center"):
        v = _fill_axis(v, 1, K, li)
    if kind in ("rows", "center"):
        v = _fill_axis(v, 0, K, li)
    return v


def output_block(wg, vec, py, output=None):
    """The block a work-group covers (semantics §3): (wx vec) x (wy py), times the output
    scheme's period along its axes (§6)."""
    bw, bh = wg[0] * vec, wg[1] * py
    if output:
        kind, K = output
        bw *= K if kind in ("cols", "center") else 1
        bh *= K if kind in ("rows", "center") else 1
    return bw, bh


# ---------------------------------------------------------------- storage (semantics §7)

def to_f16(x):
    """IEEE half, rounding the float32 value to nearest even (numpy's conversion)."""
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float64)


def to_bf16(x):
    """bfloat16 by integer operations: the upper 16 bits of the float32 value, rounded to
    nearest even (add 0x7fff plus the lowest kept bit, then drop the low 16 bits)."""
    bits = np.atleast_1d(np.asarray(x, dtype=np.float32)).view(np.uint32).astype(np.uint64)
    sixteen = np.uint64(16)
    bits = ((bits + np.uint64(0x7FFF) + ((bits >> sixteen) & np.uint64(1))) >> sixteen) << sixteen
    out = bits.astype(np.uint32).view(np.float32).astype(np.float64)
    return out.reshape(np.shape(x))


def to_f32(x):
    return np.asarray(x, dtype=np.float32).astype(np.float64)


STORE = {"f32": to_f32, "f16": to_f16, "bf16": to_bf16}
# (input storage, output storage) of each --precision (semantics §7).
PRECISION = {"f32": ("f32", "f32"), "f16in": ("f16", "f32"), "f16": ("f16", "f16"),
             "bf16": ("bf16", "bf16")}


def storage_ulp(x, kind):
    """One unit in the last place of the stored type at |x| (its spacing there)."""
    ax = np.abs(np.asarray(x, dtype=np.float64))
    if kind == "f16":
        return np.spacing(ax.astype(np.float16)).astype(np.float64)
    if kind == "bf16":
        e = np.floor(np.log2(np.maximum(ax, 2.0 ** -126)))
        return 2.0 ** (e - 7)
    return np.spacing(ax.astype(np.float32)).astype(np.float64)
