#!/usr/bin/env python3
"""The circles between the files of one folder: which files call each other,
directly or round a loop. Prints each circle (a strongly connected group of
two or more files) with the calls that make it, and each pair of files that
call each other both ways; exits 0 either way (a measure, not a check).

    tests/tools/include_graph.py OBJDIR           calls, from built objects
    tests/tools/include_graph.py --includes DIR   #include "..." between files

With OBJDIR (e.g. build-x/obj/tui) a file is its object: A calls B when a
symbol A leaves undefined (`nm -u`) is one B defines (`nm --defined-only`,
global symbols only; static functions are a file's own business). Calls
that leave the folder are not counted. With --includes a file is a source
(.c or .h) and A -> B when A includes "B" by a name found in DIR."""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def nm(path, *args):
    out = subprocess.run(["nm", *args, path], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def call_graph(objdir):
    """file -> {file: sorted symbols it uses from there}"""
    objs = sorted(f for f in os.listdir(objdir) if f.endswith(".o"))
    owner, wants = {}, {}
    for o in objs:
        name = o[:-2]
        for line in nm(os.path.join(objdir, o), "--defined-only"):
            parts = line.split()
            if len(parts) == 3 and parts[1].isupper():
                owner.setdefault(parts[2], name)
        wants[name] = {line.split()[-1] for line in nm(os.path.join(objdir, o), "-u") if line.strip()}
    graph = {}
    for name, syms in wants.items():
        edges = graph.setdefault(name, {})
        for s in syms:
            to = owner.get(s)
            if to and to != name:
                edges.setdefault(to, []).append(s)
    for edges in graph.values():
        for to in edges:
            edges[to].sort()
    return graph


def include_graph(srcdir):
    files = sorted(f for f in os.listdir(srcdir) if f.endswith((".c", ".h")))
    graph = {}
    for f in files:
        edges = graph.setdefault(f, {})
        with open(os.path.join(srcdir, f), encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = INCLUDE.match(line)
                if m and os.path.basename(m.group(1)) in files and m.group(1) != f:
                    edges.setdefault(os.path.basename(m.group(1)), []).append("#include")
    return graph


def circles(graph):
    """Tarjan's strongly connected components of two or more nodes."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out, key=lambda c: (-len(c), c))


def main(argv):
    if len(argv) == 3 and argv[1] == "--includes":
        graph = include_graph(argv[2])
    elif len(argv) == 2 and not argv[1].startswith("-"):
        graph = call_graph(argv[1])
    else:
        print(__doc__.strip().splitlines()[4:7], file=sys.stderr)
        return 2
    comps = circles(graph)
    pairs = sorted((a, b) for a in graph for b in graph[a] if a < b and a in graph.get(b, {}))
    print(f"{len(graph)} files, {sum(len(e) for e in graph.values())} edges, "
          f"{len(comps)} circle(s), {len(pairs)} two-way pair(s)")
    for n, comp in enumerate(comps, 1):
        print(f"circle {n}: {len(comp)} files: {' '.join(comp)}")
        members = set(comp)
        for a in comp:
            for b in sorted(graph[a]):
                if b in members:
                    syms = graph[a][b]
                    shown = " ".join(syms[:4]) + (f" +{len(syms) - 4}" if len(syms) > 4 else "")
                    print(f"  {a} -> {b}: {shown}")
    for a, b in pairs:
        print(f"two-way: {a} <-> {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
