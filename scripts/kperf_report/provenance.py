"""Which kernels each run of a report measured, against this tree's (SPEC section 15): a
section of every report, and a line under every headline table whose runs are not all current.
The texts name no files (scripts/provenance.py lists them), so a report changes when a run's
status does, not with every later edit of a kernel."""

import kperf_provenance as kp
from kperf_json import display_name


def run_provenance(paths):
    """[(path, Provenance)] of each run."""
    sidecar = kp.load_sidecar()
    return [(p, kp.provenance(p, kp.load_context(p), sidecar)) for p in paths]


def provenance_section(paths):
    """The report's "Provenance" section: one line per run."""
    md = ["## Provenance", "",
          "The kernel and scheme files each run built (`context.sources`, or for older runs "
          "what git proves of them: `results/provenance.json`) against this tree's; "
          "`scripts/provenance.py RUN` names the files that differ.", ""]
    md += [f"- `{display_name(p)}`: {prov.summary()}" for p, prov in run_provenance(paths)]
    return md + [""]


def provenance_note(paths):
    """The line under a headline table: its runs measured on other kernels or of unproven
    sources, by name; [] when every run's sources are this tree's."""
    groups = {}
    for p, prov in run_provenance(paths):
        groups.setdefault(prov.status, []).append(f"`{display_name(p)}`")
    words = {"stale": "measured on other kernels than this tree's",
             "unproven": "sources unproven (built from uncommitted changes)",
             "unaccounted": "no provenance", "inconsistent": "inconsistent provenance"}
    parts = [f"{words[s]}: {', '.join(groups[s])}" for s in words if s in groups]
    if not parts:
        return []
    return ["", "**Provenance**: " + "; ".join(parts) + " (details: `scripts/provenance.py`)."]
