"""An independent transcription of Rodinia 3.1's hotspot (the 2-D transient thermal solver),
for holding kperf's hotspot app to the original.

Transcribed from Rodinia 3.1's sources (University of Virginia; BSD-style licence):
- `cuda/hotspot/hotspot.cu`, `compute_tran_temp()`: the chip constants and the derived
  Cap, Rx, Ry, Rz and step (`step = PRECISION / max_slope`), and `calculate_temp()`: the update
  `temp_t = T + step_div_Cap * (P + (T[S] + T[N] - 2 T) * Ry_1 + (T[E] + T[W] - 2 T) * Rx_1
  + (amb_temp - T) * Rz_1)` with `step_div_Cap = step / Cap`, `Rx_1 = 1 / Rx` (likewise y, z),
  and N/S/W/E clamped to the valid range of the grid (`N = (N < validYmin) ? validYmin : N`):
  a neighbour outside the chip is the cell itself. `opencl/hotspot/hotspot_kernel.cl` is the
  same kernel in OpenCL.
- `openmp/hotspot/hotspot_openmp.cpp`, `single_iteration()`: the same update, with the border
  cells' missing neighbour terms dropped (`(temp[c+1] - temp[c]) * Rx_1` on the left edge),
  which is the clamped update again. Its `compute_tran_temp()` divides `step` by 1000 once more
  (`step = PRECISION / max_slope / 1000.0`); the CUDA and OpenCL versions do not, and neither
  does kperf (semantics §2).

Rodinia computes in float; this transcription computes in float64 (the truth) or, for
comparison, in float32 as Rodinia does. Where kperf's hotspot (semantics §2) differs from
Rodinia 3.1: one step per launch (the CUDA and OpenCL versions' pyramid_height 1; a larger
pyramid runs several steps per launch in local memory, with the same values); any W x H (the
CUDA and OpenCL mains take one size for both, the OpenMP version needs multiples of its 16 x 16
chunks; the coefficients already use the cell's width and height apart); kperf divides by
Rx, Ry, Rz where Rodinia multiplies by their reciprocals (float rounding only); and the OpenMP
version's step is 1000 times smaller (above).
"""
import math

import numpy as np

from . import models

# Rodinia 3.1 hotspot.cu: "#define MAX_PD (3.0e6)" (maximum power density, 300 W for a 10 mm x
# 10 mm chip), "#define PRECISION 0.001" (required precision in degrees),
# "#define SPEC_HEAT_SI 1.75e6", "#define K_SI 100", "#define FACTOR_CHIP 0.5" (capacitance
# fitting factor); chip parameters "t_chip = 0.0005", "chip_height = 0.016",
# "chip_width = 0.016"; "amb_temp = 80.0" (ambient temperature, assuming no package at all).
MAX_PD = 3.0e6
PRECISION = 0.001
SPEC_HEAT_SI = 1.75e6
K_SI = 100
FACTOR_CHIP = 0.5
T_CHIP = 0.0005
CHIP_HEIGHT = 0.016
CHIP_WIDTH = 0.016
AMB_TEMP = 80.0


def coefficients(rows, cols, dtype=np.float64):
    """compute_tran_temp() of hotspot.cu: the cell's capacitance and resistances, the step;
    returned as the kernel uses them (step_div_Cap, Rx_1, Ry_1, Rz_1)."""
    f = dtype
    grid_height = f(CHIP_HEIGHT) / f(rows)
    grid_width = f(CHIP_WIDTH) / f(cols)
    cap = f(FACTOR_CHIP * SPEC_HEAT_SI * T_CHIP) * grid_width * grid_height
    rx = grid_width / (f(2.0 * K_SI * T_CHIP) * grid_height)
    ry = grid_height / (f(2.0 * K_SI * T_CHIP) * grid_width)
    rz = f(T_CHIP) / (f(K_SI) * grid_height * grid_width)
    max_slope = f(MAX_PD) / f(FACTOR_CHIP * T_CHIP * SPEC_HEAT_SI)
    step = f(PRECISION) / max_slope
    return f(step / cap), f(1) / rx, f(1) / ry, f(1) / rz


def update_valid(p, power, coef):
    """calculate_temp()'s update over the valid part of p (temperature padded by one cell).
    With p the temperature padded by edge replication this is one Rodinia step."""
    step_div_cap, rx_1, ry_1, rz_1 = coef
    h, w = power.shape
    t = p[1:1 + h, 1:1 + w]
    north, south = p[0:h, 1:1 + w], p[2:2 + h, 1:1 + w]
    west, east = p[1:1 + h, 0:w], p[1:1 + h, 2:2 + w]
    two = t.dtype.type(2.0)
    return t + step_div_cap * (power + (south + north - two * t) * ry_1 +
                               (east + west - two * t) * rx_1 +
                               (t.dtype.type(AMB_TEMP) - t) * rz_1)


def rodinia(temp, power, iterations, dtype=np.float64, store=None):
    """compute_tran_temp(): `iterations` steps, the buffers ping-ponged; the last temperature.
    store, when given, rounds the inputs and every step's output to a storage type (kperf's
    --precision f16: semantics §7), each step computed in float32 first."""
    t = np.asarray(temp, dtype=dtype)
    pw = np.asarray(power, dtype=dtype)
    if store is not None:
        t, pw = store(t), store(pw)
    coef = coefficients(*t.shape, dtype=dtype)
    for _ in range(iterations):
        t = update_valid(np.pad(t, 1, mode="edge"), pw, coef)
        if store is not None:
            t = store(models.to_f32(t))
    return t


def steps_run(iterations, skip):
    """Launch perforation (semantics §9): ceil(N (1 - R)) of the N steps run."""
    return math.ceil(iterations * (1.0 - skip))


def perforated(temp, power, iterations, scheme, k, li, block):
    """kperf's hotspot under an input scheme: every step's temperature tile perforated as the
    image apps' (semantics §3-4), the power read at the block's own cells (SPEC 4: "the power
    value is read for the core only"), the Rodinia update on the rebuilt tile."""
    t = np.asarray(temp, dtype=np.float64)
    pw = np.asarray(power, dtype=np.float64)
    coef = coefficients(*t.shape)
    bw, bh = block
    h, w = t.shape
    for _ in range(iterations):
        nxt = np.empty_like(t)
        for by in range(-(-h // bh)):
            for bx in range(-(-w // bw)):
                ys = slice(by * bh, min((by + 1) * bh, h))
                xs = slice(bx * bw, min((bx + 1) * bw, w))
                tile = models.perforated_tile(t, scheme, k, li, 1, by, bx, bh, bw)
                ny, nx = ys.stop - ys.start, xs.stop - xs.start
                tile = tile[:ny + 2, :nx + 2]
                nxt[ys, xs] = update_valid(tile, pw[ys, xs], coef)
        t = nxt
    return t


def synthetic_chip(height, width, seed=62):
    """A chip of our own (not kperf's generator): temperatures near Rodinia's (about 323-344 K
    in temp_64) with a warm region, and a power map of a few hot blocks on a floor, in the range
    of Rodinia's power_64 (0.001-0.18 per cell)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    temp = 323.0 + 12.0 * np.exp(-((y - 0.3 * height) ** 2 + (x - 0.6 * width) ** 2) /
                                 (0.1 * height * width)) + rng.uniform(0, 0.5, (height, width))
    power = np.full((height, width), 0.002)
    for _ in range(4):
        y0, x0 = rng.integers(0, height - 8), rng.integers(0, width - 8)
        power[y0:y0 + rng.integers(3, 9), x0:x0 + rng.integers(3, 9)] = rng.uniform(0.05, 0.18)
    return temp.astype(np.float32), power.astype(np.float32)
