#!/usr/bin/env python3
"""Size limits of the code (issue 11): no file over 900 lines, no function
over 120 lines, in src/, tui/ and bpf/ (bpf/ too since issue 31). Prints
each excess and exits 1 when there is any.

    tests/tools/check_sizes.py [TOP]

A function is a top-level definition: a line that starts at column 0 and
ends with ')' or '{' after a '(' ... up to the '}' at column 0 closing it."""
import os
import re
import sys

MAX_FILE, MAX_FUNC = 900, 120
DEF = re.compile(r"^[A-Za-z_][\w \*,]*\b(\w+)\s*\(")


def functions(lines):
    i = 0
    while i < len(lines):
        m = DEF.match(lines[i])
        if m and not lines[i].rstrip().endswith(";") and not lines[i].startswith(("typedef", "struct", "enum", "static const", "const")):
            start = i
            j = i
            while j < len(lines) and not lines[j].startswith("{") and not lines[j].rstrip().endswith("{"):
                if lines[j].rstrip().endswith(";"):
                    break
                j += 1
            if j < len(lines) and (lines[j].startswith("{") or lines[j].rstrip().endswith("{")):
                k = j + 1
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                yield m.group(1), start + 1, k - start + 1
                i = k
        i += 1


def main():
    top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), "..", ".."))
    bad = 0
    nfiles = nfuncs = 0
    for root in ("src", "tui", "bpf"):
        for dirpath, _, files in os.walk(os.path.join(top, root)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, top)
                lines = open(path, errors="replace").read().split("\n")
                nfiles += 1
                if len(lines) - 1 > MAX_FILE:
                    print(f"{rel}: {len(lines) - 1} lines (at most {MAX_FILE})")
                    bad += 1
                for fn, at, n in functions(lines):
                    nfuncs += 1
                    if n > MAX_FUNC:
                        print(f"{rel}:{at}: {fn}() is {n} lines (at most {MAX_FUNC})")
                        bad += 1
    if bad:
        print(f"check-sizes: {bad} excess(es)")
        return 1
    print(f"check-sizes: {nfiles} files, {nfuncs} functions within the limits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
