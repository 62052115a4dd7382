#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Lists the functions longer than LIMIT lines (default 80) and the files
longer than 600 lines in sim/, cuda/ and io/: the units docs/ARCHITECTURE.md
asks to keep short. A file may be longer when a comment in its first 20 lines
says why ("Over 600 lines: ..."), a function when the comment lines just above
it do ("Over 80 lines: ..."). A function is found by its body's braces: a
brace opened after a parameter list outside any other function, up to the
brace that closes it. Exit status 1 when a unit is over its limit without a
reason (ctest long_units).

  scripts/long-units.py [LIMIT]
"""
import os, re, sys

LIMIT = int(sys.argv[1]) if len(sys.argv) > 1 else 80
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
EXTS = (".cpp", ".hpp", ".cu", ".cuh", ".h")


def strip(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//")[0]


def functions(lines):
    """(name, first line, length) of each function-like body."""
    out, stack, in_comment = [], [], False
    head = ""
    for n, raw in enumerate(lines, 1):
        line = raw
        if in_comment:
            if "*/" not in line:
                continue
            line = line.split("*/", 1)[1]
            in_comment = False
        line = re.sub(r"/\*.*?\*/", "", line)
        if "/*" in line:
            line, in_comment = line.split("/*", 1)[0], True
        line = strip(line)
        for ch in line:
            if ch == "{":
                h = head.strip()
                kind = "block"
                if re.search(r"\b(namespace|class|struct|union|enum)\b[^()]*$", h) or h.endswith("="):
                    kind = "scope"
                elif re.search(r"\)\s*(const|override|noexcept|final|mutable|->[^{]*|:[^{]*)*\s*$", h) and not re.search(
                        r"\b(if|for|while|switch|catch)\s*\(", h.split(";")[-1]) and all(s[1] == "scope" for s in stack):
                    m = re.findall(r"([~\w:]+)\s*\(", h)
                    kind = "function:" + (m[0] if m else "?")
                stack.append((n, kind))
                head = ""
            elif ch == "}":
                if stack:
                    start, kind = stack.pop()
                    if kind.startswith("function:"):
                        out.append((kind[9:], start, n - start + 1))
                head = ""
            elif ch == ";":
                head = ""
            else:
                head += ch
        head += " "
    return out


bad = 0
for d in ("sim", "cuda", "io"):
    for dirpath, _, names in os.walk(os.path.join(ROOT, d)):
        for name in sorted(names):
            if not name.endswith(EXTS):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, ROOT)
            lines = open(path, encoding="utf-8").read().split("\n")
            if len(lines) > 600 and not any("Over 600 lines:" in l for l in lines[:20]):
                print(f"{rel}: {len(lines)} lines")
                bad += 1
            for fn, start, length in functions(lines):
                above = lines[max(0, start - 6):start]
                if length > LIMIT and not any(f"Over {LIMIT} lines:" in l for l in above):
                    print(f"{rel}:{start}: {fn}: {length} lines")
                    bad += 1
print(f"{bad} units over the limits without a reason")
sys.exit(1 if bad else 0)
