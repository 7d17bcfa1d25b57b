#!/usr/bin/env python3
"""check-sizes.py: no source file over 900 lines, no function over 120.

Usage: check-sizes.py ROOT [--file-max N] [--function-max N]

The developers' guide's size rule, checked. Reads every .c, .h, .cpp and .cu
file under ROOT except those in tests/, bench/, third_party/ and build
folders (build*, .git), and counts:
  - a file's lines;
  - a function's lines: from the line at column 0 that starts its signature
    to its closing brace at column 0 (a line that is "}" alone, a trailing
    comment allowed), both counted. A signature is the run of column-0 lines
    before the body's "{" that holds a "(" (no "=" before it): a struct, enum
    or table is no function, and the inside of a namespace or extern "C"
    block counts as top level. Braces in comments and strings do not count.
Prints each offender as FILE: N lines (max M) or FILE:LINE: FUNCTION: N lines
(max M); exits 1 if there is any, 0 if none (with a line saying what it
read).
"""
import os
import re
import sys

SOURCES = (".c", ".h", ".cpp", ".cu")
SKIP_TOP = ("tests", "bench", "third_party")
CLOSE = re.compile(r"^\}\s*(//.*|/\*.*\*/\s*)?$")
NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_:~]*)\s*\(")


def sources(root):
    for top in sorted(os.listdir(root)):
        path = os.path.join(root, top)
        if top in SKIP_TOP or top.startswith(("build", ".")):
            continue
        if os.path.isfile(path):
            if top.endswith(SOURCES):
                yield top
            continue
        for folder, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.endswith(SOURCES):
                    yield os.path.relpath(os.path.join(folder, name), root)


def code_only(lines):
    """The lines with comments, strings and character constants blanked (so
    that braces in them do not count); a comment may span lines."""
    out, in_comment = [], False
    for line in lines:
        kept, i = [], 0
        while i < len(line):
            if in_comment:
                close = line.find("*/", i)
                if close < 0:
                    i = len(line)
                else:
                    in_comment, i = False, close + 2
                continue
            c = line[i]
            if line.startswith("/*", i):
                in_comment, i = True, i + 2
            elif line.startswith("//", i):
                break
            elif c in "\"'":
                j = i + 1
                while j < len(line) and line[j] != c:
                    j += 2 if line[j] == "\\" else 1
                kept.append(c + c)
                i = j + 1
            else:
                kept.append(c)
                i += 1
        out.append("".join(kept))
    return out


def functions(lines):
    """(first line, last line, name) of each function, 1-based: a top-level
    brace block opened after a column-0 signature holding a "(" (and no "="
    before it: a table's initializer is none) and closed by "}" at column 0."""
    found = []
    code = code_only(lines)
    depth = 0
    start = None      # first line of the column-0 run before a top-level "{"
    opened = None     # (first line, signature) of the top-level block we are in
    wrappers = 0      # open namespace { or extern "C" { blocks: their insides are top level
    for i, line in enumerate(code):
        if depth == 0:
            text = line.rstrip()
            if text and (text[0].isalpha() or text[0] == "_") and start is None:
                start = i
            elif not text or text[0] == "#":
                start = None
        for c in line:
            if c == "{":
                if depth == 0:
                    first = start if start is not None else i
                    signature = " ".join(code[first:i + 1]).split("{")[0]
                    if re.match(r"\s*(namespace|extern)\b", signature) and "(" not in signature:
                        wrappers += 1
                        start = None
                        continue
                    head = signature.split("(")[0]
                    is_function = "(" in signature and "=" not in head
                    opened = (first, signature if is_function else None)
                depth += 1
            elif c == "}":
                if depth == 0 and wrappers:
                    wrappers -= 1
                    continue
                depth -= 1
                if depth == 0 and opened is not None:
                    first, signature = opened
                    if signature is not None and CLOSE.match(lines[i]):
                        match = NAME.search(signature)
                        if match:
                            found.append((first + 1, i + 1, match.group(1)))
                    opened = None
                    start = None
        if depth == 0 and line.rstrip().endswith(";"):
            start = None
    return found


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit("usage: check-sizes.py ROOT [--file-max N] [--function-max N]")
    root, file_max, function_max = argv[0], 900, 120
    args = argv[1:]
    while args:
        if len(args) < 2 or args[0] not in ("--file-max", "--function-max"):
            sys.exit("usage: check-sizes.py ROOT [--file-max N] [--function-max N]")
        if args[0] == "--file-max":
            file_max = int(args[1])
        else:
            function_max = int(args[1])
        args = args[2:]
    bad, files, funcs = 0, 0, 0
    for rel in sources(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        files += 1
        if len(lines) > file_max:
            print(f"{rel}: {len(lines)} lines (max {file_max})")
            bad += 1
        for first, last, name in functions(lines):
            funcs += 1
            if last - first + 1 > function_max:
                print(f"{rel}:{first}: {name}: {last - first + 1} lines (max {function_max})")
                bad += 1
    print(f"check-sizes: {files} files, {funcs} functions read; {bad} over the limits "
          f"(files {file_max} lines, functions {function_max})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
