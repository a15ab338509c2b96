#!/usr/bin/env python3
"""Check the structure docs/CONTRACTS.md draws ("Folders"):

1. a folder includes only folders below it in LAYERS or itself (peers on
   one level include none of each other: what two share sits below both);
   NEVER names pairs kept apart although the layers would allow them
   (verify/ never includes builder/); boot/, the init that links no ingot
   library, includes only BOOT_READS and no part includes boot/;
2. includes are written from the root ("lib/err.h"): one with "./" or
   "../" is a fault, and is judged where it points;
3. no two files include each other in a loop (the include graph of the
   parts' .c and .h files has no cycle);
4. no name reads as two things across folders: a function defined in one
   folder is no struct's tag in another (lib/'s store() beside builder/'s
   struct store reads as lib/ calling builder/);
5. only cli/ picks exit statuses: no *_EXIT_* constant is defined
   outside it (the library reports a typed outcome or kind);
6. with BUILD, from the symbols each object defines and uses (nm), file A
   calls file B when A uses a function or object B defines: a folder calls
   only folders below it or itself (and no NEVER pair), and no two files
   call each other in a loop.

  scripts/check-structure.py ROOT [BUILD]   exit 0 clean, 1 with a line a fault
"""
import os
import re
import subprocess
import sys

# Lowest first; folders on one line are peers.
LAYERS = [
    ["lib"],
    ["manifest", "attest", "recipes", "boot"],
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
NEVER = {("verify", "builder")}
BOOT_READS = {"lib/boot-contract.h"}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A function's name where a line at column 0 defines or declares one.
FUNC = re.compile(r'^(?!typedef\b|extern\b|struct\s+\w+\s*\{)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\(',
                  re.M)
EXIT = re.compile(r'\b([A-Z][A-Z0-9]*_EXIT_[A-Z0-9_]+)\s*=(?!=)')
TAG = re.compile(r'^\s*(?:typedef\s+)?struct\s+(\w+)\s*\{', re.M)


def upward(src, dst):
    """Why src/ may not use dst/, or None."""
    if dst not in RANK or dst == src:
        return None
    if (src, dst) in NEVER:
        return f"{src}/ never uses {dst}/"
    if RANK[dst] > RANK[src]:
        return f"{src}/ may not use a folder above it ({dst}/)"
    if RANK[dst] == RANK[src]:
        return f"{src}/ and {dst}/ are peers; what both need belongs below them"
    return None


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


def sources(root):
    """{"folder/name.c": text} of the parts' .c and .h files."""
    out = {}
    for folder in RANK:
        d = os.path.join(root, folder)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if name.endswith((".c", ".h")):
                with open(os.path.join(d, name), encoding="utf-8", errors="replace") as f:
                    out[f"{folder}/{name}"] = f.read()
    return out


def include_faults(srcs):
    incs, faults = {}, []
    for p, text in srcs.items():
        src = p.split("/")[0]
        incs[p] = []
        for h in INC.findall(text):
            if "/" not in h:
                continue
            parts = h.split("/")
            if "." in parts or ".." in parts:
                to = os.path.normpath(os.path.join(src, h))
                faults.append(f'{p}: includes "{h}": expected a path from the root ("{to}")')
                h = to
            incs[p].append(h)
    for p, hs in incs.items():
        src = p.split("/")[0]
        for h in hs:
            dst = h.split("/")[0]
            if src == "boot" and dst != "boot" and h not in BOOT_READS:
                faults.append(f"{p}: includes {h}: boot/ links no ingot library; it reads only "
                              + ", ".join(sorted(BOOT_READS)))
            elif dst == "boot" and src != "boot":
                faults.append(f"{p}: includes {h}: boot/ is the init program, no part of ingot")
            elif (why := upward(src, dst)):
                faults.append(f"{p}: includes {h}: {why}")
    graph = {p: {h for h in hs if h in incs and h != p} for p, hs in incs.items()}
    return faults + loops(graph, "include")


def name_faults(srcs):
    funcs, tags = {}, {}
    for p, text in srcs.items():
        for name in FUNC.findall(text):
            funcs.setdefault(name, set()).add(p)
        for name in TAG.findall(text):
            tags.setdefault(name, set()).add(p)
    faults = []
    for name in sorted(set(funcs) & set(tags)):
        for f in sorted(funcs[name]):
            for t in sorted(tags[name]):
                if f.split("/")[0] != t.split("/")[0]:
                    faults.append(f"{f}: function {name}() reads as {t}'s struct {name}: "
                                  "rename one")
    return faults


def exit_faults(srcs):
    return [f"{p}: defines exit status {name}: only cli/ picks exit statuses"
            for p, text in sorted(srcs.items()) if not p.startswith("cli/")
            for name in EXIT.findall(text)]


def call_faults(build, srcs):
    defs, undefs = {}, {}
    for top, _, names in os.walk(build):
        rel = os.path.relpath(top, build)
        if rel.split(os.sep)[0] in ("tests", "tools"):
            continue
        for n in sorted(names):
            if not n.endswith(".o"):
                continue
            src = os.path.join(rel, n[:-2] + ".c")
            if src not in srcs:
                continue  # a stale object of a source since removed
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
    faults = []
    for s, us in sorted(undefs.items()):
        for u in sorted(us):
            why = upward(s.split(os.sep)[0], defs[u].split(os.sep)[0]) if u in defs else None
            if why:
                faults.append(f"{s}: calls {u} ({defs[u]}): {why}")
    return faults + loops(graph, "call")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    srcs = sources(root)
    faults = include_faults(srcs) + name_faults(srcs) + exit_faults(srcs)
    if len(sys.argv) > 2:
        faults += call_faults(sys.argv[2], srcs)
    for f in faults:
        print(f)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
