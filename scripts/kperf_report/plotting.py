"""Figure output (PNG, and the formats --formats adds) and shared plot helpers."""

import os

import matplotlib.pyplot as plt
import numpy as np

from .loading import variant_label


FIGURE_FORMATS = ["png"]  # report.md links the PNGs; --formats png,svg adds vector copies, none: no files


def save(fig, out, name, written):
    for ext in FIGURE_FORMATS:
        fig.savefig(os.path.join(out, f"{name}.{ext}"), dpi=110, bbox_inches="tight")
        written.append(f"{name}.{ext}")
    plt.close(fig)


def no_data(ax, why):
    ax.text(0.5, 0.5, why, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def grouped_bars(ax, apps, variants, value, ylabel, log=False, percent=False):
    width = 0.8 / max(1, len(variants))
    x = np.arange(len(apps))
    for i, v in enumerate(variants):
        ys = [value(a, v) for a in apps]
        ys = [np.nan if y is None else (100 * y if percent else y) for y in ys]
        ax.bar(x + (i - (len(variants) - 1) / 2) * width, ys, width, label=variant_label(v))
    ax.set_xticks(x)
    ax.set_xticklabels(apps, rotation=20)
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.grid(axis="y", alpha=0.3)
