#!/usr/bin/env python3
"""No two source files call each other in a loop: from the symbols each
object defines and uses (nm), file A calls file B when A uses a function
or object B defines; the calls must form no cycle.

  scripts/check-calls.py BUILD      exit 0 clean, 1 with one line a loop
"""
import os
import subprocess
import sys


def objects(build):
    for top, _, names in os.walk(build):
        rel = os.path.relpath(top, build)
        if rel.split(os.sep)[0] in ("tests", "tools"):
            continue
        for n in sorted(names):
            if n.endswith(".o"):
                yield os.path.join(top, n), os.path.join(rel, n[:-2] + ".c")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    defs, undefs = {}, {}
    for obj, src in objects(build):
        out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
        undefs[src] = set()
        for line in out.splitlines():
            f = line.split()
            if len(f) < 2:
                continue
            if f[1] == "U":
                undefs[src].add(f[0])
            elif f[1] in "TDBR":
                defs[f[0]] = src
    calls = {s: {defs[u] for u in us if u in defs and defs[u] != s} for s, us in undefs.items()}

    faults, seen, stack, on, loops = [], set(), [], set(), set()

    def dfs(u):
        seen.add(u)
        stack.append(u)
        on.add(u)
        for v in sorted(calls.get(u, ())):
            if v in on:
                loop = stack[stack.index(v):]
                if tuple(sorted(loop)) not in loops:
                    loops.add(tuple(sorted(loop)))
                    faults.append("files call each other in a loop: " + " -> ".join(loop + [v]))
            elif v not in seen:
                dfs(v)
        stack.pop()
        on.discard(u)

    sys.setrecursionlimit(10000)
    for u in sorted(calls):
        if u not in seen:
            dfs(u)
    for f in faults:
        print(f)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
