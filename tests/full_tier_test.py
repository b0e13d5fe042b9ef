#!/usr/bin/python3
"""scripts/test.sh --full runs a device test with KPERF_TEST_FULL=1 only where its name matches
the script's `widened` pattern; every other device test runs once, optimised, at the fast tier's
shapes. This test holds the pattern to the C++ sources: every TEST or TEST_P whose body reads
full_matrix(), samples its apps (KPERF_SAMPLE_APP) or its shapes (ShapeSample) must match it, or
--full would never run it widened (a test's body is its text up to the next TEST, so a helper
function that widens must sit inside its test or below it; a TEST_P is named by its
INSTANTIATE_TEST_SUITE_P prefix).

Known-bad case: the pattern without one of its alternatives must miss a test here.

usage: full_tier_test.py SOURCE_DIR
Exit 0 on success, 1 on a failed check.
"""
import glob
import os
import re
import sys

from checks import check, finish

WIDENS = re.compile(r"full_matrix\(\)|KPERF_SAMPLE_APP|ShapeSample")
TEST = re.compile(r"^TEST(_P)?\((\w+), (\w+)\)", re.M)
INSTANTIATE = re.compile(r"^INSTANTIATE_TEST_SUITE_P\((\w+), (\w+),", re.M)


def pattern(script):
    """The bash `widened=` and `widened+=` strings of scripts/test.sh, joined."""
    parts = re.findall(r"^widened\+?='([^']*)'", open(script).read(), re.M)
    return "".join(parts)


def widened_tests(source_dir):
    """The ctest names of the device tests whose bodies widen under KPERF_TEST_FULL=1."""
    names, prefixes, texts = [], {}, []
    for path in sorted(glob.glob(os.path.join(source_dir, "tests", "*.cpp"))):
        texts.append(open(path).read())
        prefixes.update({suite: prefix for prefix, suite in INSTANTIATE.findall(texts[-1])})
    for text in texts:
        heads = list(TEST.finditer(text))
        for i, m in enumerate(heads):
            body = text[m.end():heads[i + 1].start() if i + 1 < len(heads) else len(text)]
            if WIDENS.search(body):
                prefix = prefixes.get(m.group(2), "?") + "/" if m.group(1) else ""
                names.append(f"{prefix}{m.group(2)}.{m.group(3)}")
    return names


def misses(regex, names):
    return [n for n in names if not re.search(regex, n)]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    regex = pattern(os.path.join(sys.argv[1], "scripts", "test.sh"))
    check(bool(regex), "scripts/test.sh has a widened= pattern")
    names = widened_tests(sys.argv[1])
    check(len(names) >= 10, f"tests that KPERF_TEST_FULL widens found: {len(names)}")
    for name in misses(regex, names):
        check(False, f"{name} widens under KPERF_TEST_FULL=1 but --full never runs it widened "
                     f"(add it to widened= in scripts/test.sh)")
    # Known-bad: each alternative of the pattern dropped must leave some test out.
    inner = regex[regex.index("^(") + 2:regex.rindex(")")]
    alternatives = re.split(r"\|(?![^()]*\))", inner)
    for alt in alternatives:
        rest = [a for a in alternatives if a != alt]
        reduced = regex.replace("^(" + inner + ")", "^(" + "|".join(rest) + ")")
        check(bool(misses(reduced, names)), f"the pattern without {alt!r} misses no test")
    print(f"full_tier: {len(names)} widened tests, {len(alternatives)} named alternatives")
    return finish("full_tier")


if __name__ == "__main__":
    sys.exit(main())
