#!/usr/bin/python3
"""host/ is layered, and its folders say so: every #include of a kperf header points to the
including file's own folder or to a folder below it. The layers, from the top:

    main.cpp      the entry point
    commands/     parsing, presets, user-facing checks, what a command prints
    session/      a command's documents, resume, checkpoints, merged shards, the fault supervisor
    tune/         the tuner's stages and its workers on other GPUs
    check/        the proofs of kperf check
    measure/      the runner, one configuration's timing and outputs, rows, journal, energy
    model/        what is measured: apps, schemes, axes, storage, metrics, CPU models
    device/       the OpenCL layer, binary cache, compile workers
    util/         io, gzip, strings, statistics, threads

model and device are side by side (neither includes the other). CMake gives each folder's
library the include directories of the folders it may use and no others, so an upward include
fails the build; this test names it. It also holds every source file under host/ and schemes/
to 700 lines (host/ files to 500) and every host function to 100, counted from the first line of its signature.

usage: layers_test.py SOURCE_DIR
"""
import os
import re
import sys

MAY_INCLUDE = {
    ".": {"commands", "session", "tune", "check", "measure", "model", "device", "util"},
    "commands": {"session", "tune", "check", "measure", "model", "device", "util"},
    "session": {"tune", "check", "measure", "model", "device", "util"},
    "tune": {"measure", "model", "device", "util"},
    "check": {"measure", "model", "device", "util"},
    "measure": {"model", "device", "util"},
    "model": {"util"},
    "device": {"util"},
    "util": set(),
}
MAX_FILE_LINES = 700
MAX_HOST_FILE_LINES = 500
MAX_FUNCTION_LINES = 100
# A class has about 25 methods at most: a larger one is two jobs (the constructor, destructor and
# copy operations are not counted).
MAX_CLASS_METHODS = 26
# commands/ parses, calls the layers below and prints; what it would do besides belongs there.
MAX_COMMANDS_LINES = 2500


def class_methods(text):
    """(class name, sorted method names) of every class and struct defined at namespace scope in a
    header (at the left margin): the names declared or defined at the class body's own depth,
    comments and template arguments left out."""
    text = re.sub(r"//[^\n]*", "", text)
    out = []
    for m in re.finditer(r"\n(?:class|struct) (\w+)[^;{(]*\{", text):
        name, i, depth, flat = m.group(1), m.end(), 1, []
        while depth and i < len(text):
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 1:
                    flat.append(";")
            elif depth == 1:
                flat.append(c)
            i += 1
        methods = set()
        for decl in "".join(flat).split(";"):
            decl = " ".join(decl.split())
            while re.search(r"<[^<>]*>", decl):  # template arguments: std::function<void(int)>
                decl = re.sub(r"<[^<>]*>", "", decl)
            if decl.startswith(("using", "friend", "struct", "class", "enum")) or "operator" in decl:
                continue
            m2 = re.search(r"([~\w]+)\s*\(", decl.split("=")[0] if "(" in decl.split("=")[0] else "")
            if m2 and m2.group(1).lstrip("~") != name:
                methods.add(m2.group(1))
        out.append((name, sorted(methods)))
    return out


def function_lengths(lines):
    """(first line, length) of every function defined at column 0 (kperf's style: clang-format,
    Google, definitions start at the left margin), counted as ctags and readers count it: from
    the first line of its signature (a template head included) to its closing brace, whether
    the brace that opens its body ends the first line or a continuation line."""
    out = []
    code = [re.sub(r"\s*//.*$", "", line).rstrip() for line in lines]  # without comments
    i = 0
    while i < len(lines):
        line = code[i]
        if not line or line.startswith((" ", "#", "}", "/", "*")) or re.match(
                r"(namespace|struct|class|enum|union|extern|using|typedef)\b", line):
            i += 1
            continue
        # The declaration runs to the first line that ends in "{" or ";".
        j = i
        while j < len(lines) and not code[j].endswith(("{", ";")) and j - i < 12:
            j += 1
        if j >= len(lines) or not code[j].endswith("{"):
            i = j + 1
            continue
        signature = " ".join(code[i:j + 1])
        if "(" not in signature or re.search(r"=\s*\{$", signature.rstrip()):
            i = j + 1
            continue
        depth, k = 0, j
        while k < len(lines):
            depth += code[k].count("{") - code[k].count("}")
            if depth == 0:
                break
            k += 1
        out.append((i + 1, k - i + 1))
        i = k + 1
    return out


def self_test():
    """A function of 99 body lines under a two-line signature is 102 lines long, and fails; a
    template head counts too; a table's braces are not a function."""
    body = ["  x();"] * 99
    lines = ["// a comment", "std::vector<int> long_function_name(int first,",
             "                                   int second) {"] + body + ["}", ""]
    lines += ["template <typename T>", "T f(T t) {", "  return t;", "}", ""]
    lines += ["const std::vector<int> table = {", "    1, 2,", "};", ""]
    got = function_lengths(lines)
    assert got == [(2, 102), (105, 4)], got
    header = ("\nclass Counted {\n public:\n  Counted();\n  ~Counted();\n  int a() const { return 1; }\n"
              "  // b(): a comment\n  void c(int x = f(1));\n  std::function<void(int)> d;\n"
              "  struct Inner {\n    void e();\n  };\n};\n")
    assert class_methods(header) == [("Counted", ["a", "c"])], \
        class_methods(header)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    self_test()
    root = sys.argv[1]
    host = os.path.join(root, "host")
    folder_of = {}  # header name -> folder
    sources = []
    for dirpath, _, files in os.walk(host):
        folder = os.path.relpath(dirpath, host)
        for name in files:
            if name.endswith((".hpp", ".cpp")):
                sources.append((folder, os.path.join(dirpath, name)))
                if name.endswith(".hpp"):
                    folder_of[name] = folder
    problems = []
    for folder, path in sources:
        if folder not in MAY_INCLUDE:
            problems.append(f"{path}: folder {folder} is not one of the layers")
            continue
        lines = open(path).read().split("\n")
        for n, line in enumerate(lines, 1):
            m = re.match(r'\s*#include "([\w/]+\.hpp)"', line)
            if not m or m.group(1).startswith("kperf_git_sha"):
                continue
            target = folder_of.get(os.path.basename(m.group(1)))
            if target is None:
                problems.append(f"{path}:{n}: includes {m.group(1)}, which is no host/ header")
            elif target != folder and target not in MAY_INCLUDE[folder]:
                problems.append(f"{path}:{n}: {folder}/ includes {target}/{m.group(1)}: upward")
        if len(lines) > MAX_HOST_FILE_LINES:
            problems.append(f"{path}: {len(lines)} lines (at most {MAX_HOST_FILE_LINES} in host/)")
        for first, length in function_lengths(lines):
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{path}:{first}: a function of {length} lines "
                                f"(at most {MAX_FUNCTION_LINES})")
        if path.endswith(".hpp"):
            for cls, methods in class_methods(open(path).read()):
                if len(methods) > MAX_CLASS_METHODS:
                    problems.append(f"{path}: class {cls} has {len(methods)} methods "
                                    f"(at most {MAX_CLASS_METHODS}): {', '.join(methods)}")
    commands = sum(open(path).read().count("\n") for folder, path in sources
                   if folder == "commands")
    if commands > MAX_COMMANDS_LINES:
        problems.append(f"host/commands/: {commands} lines (at most {MAX_COMMANDS_LINES})")
    for name in sorted(os.listdir(os.path.join(root, "schemes"))):
        path = os.path.join(root, "schemes", name)
        count = open(path).read().count("\n")
        if count > MAX_FILE_LINES:
            problems.append(f"{path}: {count} lines (at most {MAX_FILE_LINES})")
    for p in problems:
        print("FAIL:", p, file=sys.stderr)
    print(f"layers_test: {len(sources)} files under host/, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
