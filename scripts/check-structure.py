#!/usr/bin/env python3
"""Check the structure docs/CONTRACTS.md draws ("Folders"):

1. a folder includes only folders below it in LAYERS or itself (peers on
   one level include none of each other: what two share sits below both);
2. no two files include each other in a loop (the include graph of the
   parts' .c and .h files has no cycle);
3. with BUILD, no two source files call each other in a loop: from the
   symbols each object defines and uses (nm), file A calls file B when A
   uses a function or object B defines.

  scripts/check-structure.py ROOT [BUILD]   exit 0 clean, 1 with a line a fault
"""
import os
import re
import subprocess
import sys

# Lowest first; folders on one line are peers.
LAYERS = [
    ["lib"],
    ["manifest", "attest", "recipes"],
    ["keys"],
    ["image"],
    ["builder"],
    ["verify"],
    ["ops"],
    ["audit"],
    ["server"],
    ["cli"],
]
RANK = {f: i for i, fs in enumerate(LAYERS) for f in fs}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def loops(graph, what):
    """One line for each cycle of graph (node -> set of nodes)."""
    out, seen, stack, on, found = [], set(), [], set(), set()

    def dfs(u):
        seen.add(u)
        stack.append(u)
        on.add(u)
        for v in sorted(graph.get(u, ())):
            if v in on:
                loop = stack[stack.index(v):]
                if tuple(sorted(loop)) not in found:
                    found.add(tuple(sorted(loop)))
                    out.append(f"files {what} each other in a loop: " + " -> ".join(loop + [v]))
            elif v not in seen:
                dfs(v)
        stack.pop()
        on.discard(u)

    sys.setrecursionlimit(10000)
    for u in sorted(graph):
        if u not in seen:
            dfs(u)
    return out


def include_faults(root):
    incs = {}
    for folder in RANK:
        d = os.path.join(root, folder)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if name.endswith((".c", ".h")):
                with open(os.path.join(d, name), encoding="utf-8", errors="replace") as f:
                    incs[f"{folder}/{name}"] = [i for i in INC.findall(f.read()) if "/" in i]
    faults = []
    for p, hs in incs.items():
        src = p.split("/")[0]
        for h in hs:
            dst = h.split("/")[0]
            if dst not in RANK or dst == src:
                continue
            if RANK[dst] > RANK[src]:
                faults.append(f"{p}: includes {h}: {src}/ may not include a folder above it ({dst}/)")
            elif RANK[dst] == RANK[src]:
                faults.append(f"{p}: includes {h}: {src}/ and {dst}/ are peers; "
                              "what both need belongs below them")
    graph = {p: {h for h in hs if h in incs and h != p} for p, hs in incs.items()}
    return faults + loops(graph, "include")


def call_faults(build):
    defs, undefs = {}, {}
    for top, _, names in os.walk(build):
        rel = os.path.relpath(top, build)
        if rel.split(os.sep)[0] in ("tests", "tools"):
            continue
        for n in sorted(names):
            if not n.endswith(".o"):
                continue
            src = os.path.join(rel, n[:-2] + ".c")
            nm = subprocess.run(["nm", "-P", os.path.join(top, n)], capture_output=True,
                                text=True, check=True).stdout
            undefs[src] = set()
            for line in nm.splitlines():
                f = line.split()
                if len(f) >= 2 and f[1] == "U":
                    undefs[src].add(f[0])
                elif len(f) >= 2 and f[1] in "TDBR":
                    defs[f[0]] = src
    graph = {s: {defs[u] for u in us if u in defs and defs[u] != s} for s, us in undefs.items()}
    return loops(graph, "call")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    faults = include_faults(root)
    if len(sys.argv) > 2:
        faults += call_faults(sys.argv[2])
    for f in faults:
        print(f)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
