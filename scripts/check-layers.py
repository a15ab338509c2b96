#!/usr/bin/env python3
"""Check the include structure (docs/CONTRACTS.md "Folders"):

1. a folder includes only folders below it in LAYERS (or itself, or a
   peer that does not include it back);
2. no two source files use each other in a loop: file A uses file B
   when A includes a header B implements (B.c beside B.h, or a .c that
   includes a header of its own folder first: verify/checks.h, cli/cli.h),
   and the uses must form no cycle.

  scripts/check-layers.py [ROOT]      exit 0 clean, 1 with one line a fault
"""
import os
import re
import sys

# Lowest first; folders on one line are peers: one may include another,
# never both ways.
LAYERS = [
    ["lib"],
    ["manifest", "attest", "recipes"],
    ["keys"],
    ["image"],
    ["builder"],
    ["verify"],
    ["ops"],
    ["audit"],
    ["cli"],
]
RANK = {f: i for i, fs in enumerate(LAYERS) for f in fs}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    for folder in RANK:
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                yield f"{folder}/{name}"


def includes(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        return [i for i in INC.findall(f.read()) if "/" in i]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    faults = []
    incs = {p: includes(root, p) for p in sources(root)}

    peer = {}
    for p, hs in incs.items():
        src = p.split("/")[0]
        for h in hs:
            dst = h.split("/")[0]
            if dst not in RANK or dst == src:
                continue
            if RANK[dst] > RANK[src]:
                faults.append(f"{p}: includes {h}: {src}/ may not include a folder above it ({dst}/)")
            elif RANK[dst] == RANK[src]:
                peer.setdefault((src, dst), p + ": includes " + h)
    for (a, b), where in sorted(peer.items()):
        if (b, a) in peer and a < b:
            faults.append(f"{where} and {peer[(b, a)]}: peers {a}/ and {b}/ include each other")

    # Which .c files implement each header: those that include it first.
    owner = {}
    for p, hs in incs.items():
        if not p.endswith(".c"):
            continue
        owner.setdefault(p[:-2] + ".h", set()).add(p)
        if hs and os.path.dirname(hs[0]) == os.path.dirname(p):
            owner.setdefault(hs[0], set()).add(p)
    uses = {}
    for p, hs in incs.items():
        if not p.endswith(".c"):
            continue
        uses[p] = set()
        for h in hs[1:]:
            uses[p] |= owner.get(h, set()) - {p}

    # Cycles: depth-first search, reporting each loop once by its members.
    seen, stack, on, loops = set(), [], set(), set()

    def dfs(u):
        seen.add(u)
        stack.append(u)
        on.add(u)
        for v in sorted(uses.get(u, ())):
            if v in on:
                loop = stack[stack.index(v):]
                key = tuple(sorted(loop))
                if key not in loops:
                    loops.add(key)
                    faults.append("files use each other in a loop: " +
                                  " -> ".join(loop + [v]))
            elif v not in seen:
                dfs(v)
        stack.pop()
        on.discard(u)

    sys.setrecursionlimit(10000)
    for u in sorted(uses):
        if u not in seen:
            dfs(u)

    for f in faults:
        print(f)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
