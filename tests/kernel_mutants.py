"""Known-bad kernels made from the shipped ones: one-line mutations of kernels/*.cl and
schemes/*.cl, each breaking one property that one of the test suite's checks is there to catch
(docs/testing.md, "Known-bad kernels"). They are applied at test time to a copy of the kernel
root (mutated_root); the text to find must occur exactly once in its file, so that a mutant whose
line has changed fails loudly instead of silently testing nothing.

Each mutant names the checks that must catch it ("catchers"):
- ("gtest", SUITE, FILTER): the C++ device test FILTER of kperf_SUITE_tests, run on the mutated
  root (KPERF_TEST_KERNEL_DIR), must fail and name that test;
- ("verify", ARGS): `kperf run --verify` with ARGS must give a row whose model_max_abs exceeds
  kperf check's model tolerance (1e-4 of the output's scale), where the shipped root's does not;
- ("indep", FAMILY): tests/independent_refs.py's FAMILY on the mutated root must fail, naming
  the mutated app;
- ("oclgrind", DIAGNOSTIC, CONFIG): tests/oclgrind_test.py --mutants runs CONFIG (an app and its
  axis values) under Oclgrind and requires DIAGNOSTIC in its log, where the shipped root's log is
  empty.
"full" catchers run with KPERF_TEST_FULL=1 only (scripts/test.sh --full): further suites that
catch the same mutant, at a cost the fast tier does not need to show the catch.
tests/kernel_mutants_test.py runs every catcher but Oclgrind's; oclgrind_test.py --mutants runs
those.
"""
import os
import shutil
from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # relative to the kernel root
    find: str
    replace: str
    breaks: str
    catchers: tuple
    full: tuple = ()  # more catchers, with KPERF_TEST_FULL=1


# One small configuration of gaussian3 per catcher, on an odd grid (partial groups).
VERIFY = ["--apps", "gaussian3", "--size", "23x17", "--wg", "8x4"]

MUTANTS = [
    Mutant("gaussian3_weight", "kernels/gaussian3.cl",
           "result[p * VEC + v] = (c[0] + 2.0f * c[VEC] + c[2 * VEC]) * (1.0f / 16.0f);",
           "result[p * VEC + v] = (c[0] + 3.0f * c[VEC] + c[2 * VEC]) * (1.0f / 16.0f);",
           "a wrong Gaussian weight (the column pass's centre 3 instead of 2)",
           (("gtest", "device", "AllApps/AccurateApp.MatchesReferenceAtOddSizes/0"),
            ("indep", "accurate"))),
    Mutant("cols_loads_skipped_column", "schemes/perforate_lines.cl",
           "KPERF_ELEM(tile, line, pos) = value;",
           "KPERF_ELEM(tile, line, pos) = kperf_load(in, width, height, gy0 + pos, gx0 + line);",
           "cols:k loads each skipped column from the input instead of rebuilding it",
           (("gtest", "device", "AllApps/Poison.SkippedElementsAreNeverLoaded/1"),),
           (("verify", VERIFY + ["--schemes", "cols:2", "--recon", "nn"]),)),
    Mutant("cols_li_weights_swapped", "schemes/perforate_lines.cl",
           "value = mad((T)w, (get_below) - (get_above), (get_above));",
           "value = mad((T)w, (get_above) - (get_below), (get_below));",
           "cols:k li weighs each kept column with the other's weight",
           (("verify", VERIFY + ["--schemes", "cols:3", "--recon", "li"]),),
           (("gtest", "device", "AllApps/PerforatedApp.MatchesSchemeModel/0"),)),
    Mutant("rows_nn_tie_below", "schemes/perforate_lines.cl",
           "*above = *below = offset <= SKIP - offset ? a : b;",
           "*above = *below = offset < SKIP - offset ? a : b;",
           "rows:k nn takes the kept row below on a tie (semantics: the lower index, above)",
           (("verify", VERIFY + ["--schemes", "rows:2", "--recon", "nn"]),),
           (("indep", "rows/cols"),)),
    Mutant("f16_rounds_toward_zero", "schemes/precision_f16.cl",
           "#define kperf_write_out(p, i, v) vstore_half_rte((v), (i), (p))",
           "#define kperf_write_out(p, i, v) vstore_half_rtz((v), (i), (p))",
           "f16 outputs stored one at a time round toward zero, not to nearest even",
           (("gtest", "precision", "AllApps/Precision.HalfStorageEqualsFloatOnRoundedData/5"),
            ("verify", VERIFY + ["--schemes", "accurate", "--precision", "f16"])),
           (("indep", "storage"),)),
    Mutant("sampled_group_shifted", "schemes/groups_sampled.cl",
           "kperf_sample_pick(cx, (long)get_num_groups(0),",
           "kperf_sample_pick((cx + 1) % (long)get_num_groups(0), (long)get_num_groups(0),",
           "the device canary's sampled launch computes the next cell's group along x (a shifted "
           "group list)",
           (("gtest", "device_canary", "AllApps/DeviceCanaryApp.EqualsTheHostCanary/0"),)),
    Mutant("canary_threshold_off", "kernels/canary.cl",
           "const float threshold = 1e-6f * f[0].x;",
           "const float threshold = 1e-2f * f[0].x;",
           "the device canary's reduction leaves out of MRE truths up to 1 % of the largest, not "
           "1e-6",
           (("gtest", "device_canary", "AllApps/DeviceCanaryApp.EqualsTheHostCanary/0"),)),
    Mutant("fill_reads_past_last_line", "schemes/output_grid.cl",
           "  if (jb >= m) jb = ja;\n", "",
           "the separate fill's li interpolates the last lines towards a line past the grid",
           (("oclgrind", "Invalid read",
             {"app": "gaussian3", "input": "accurate", "output": "rows:2", "output_recon": "li",
              "output_fill": "separate"}),)),
    Mutant("tile_barrier_removed", "schemes/scheme_accurate.cl",
           "  KPERF_FILL_BARRIER();\n", "",
           "the accurate tile is read without the barrier after its fill (a race)",
           (("oclgrind", "data race", {"app": "gaussian3", "input": "accurate"}),)),
    Mutant("tile_last_row_unloaded", "schemes/scheme_accurate.cl",
           "kperf_load_rows(tile, in, width, height, 0, 1, 1, TILE_H);",
           "kperf_load_rows(tile, in, width, height, 0, 1, 1, TILE_H - 1);",
           "the accurate tile's last row is never loaded, yet read",
           (("oclgrind", "Uninitialized value", {"app": "gaussian3", "input": "accurate"}),)),
]


def apply(mutant, text):
    """The file's text with the mutation; raises if its text is not there exactly once."""
    count = text.count(mutant.find)
    if count != 1:
        raise ValueError(f"mutant {mutant.name}: {mutant.path} holds its text {count} times, not "
                         f"once (the file changed: update tests/kernel_mutants.py): "
                         f"{mutant.find!r}")
    return text.replace(mutant.find, mutant.replace)


def mutated_root(source, mutant, where):
    """A copy of source's kernels/ and schemes/ under `where` with the mutation applied (None:
    unmutated); returns its path."""
    root = os.path.join(where, mutant.name if mutant else "shipped")
    for sub in ("kernels", "schemes"):
        shutil.copytree(os.path.join(source, sub), os.path.join(root, sub))
    if mutant:
        path = os.path.join(root, mutant.path)
        with open(path) as f:
            text = apply(mutant, f.read())
        with open(path, "w") as f:
            f.write(text)
    return root


def with_catcher(kind):
    """The mutants that some catcher of this kind must catch, with those catchers."""
    return [(m, [c for c in m.catchers if c[0] == kind]) for m in MUTANTS
            if any(c[0] == kind for c in m.catchers)]
