#!/bin/bash
# The structure stays as docs/CONTRACTS.md draws it
# (scripts/check-structure.py): no folder includes one above it, no two
# files include each other in a loop, no two files call each other in a
# loop (from the objects' symbols).  Each check
# is also run on a planted fault, so a checker that passes everything
# fails here.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
command -v nm >/dev/null || skip "no nm"
BUILD=$(dirname "$INGOT")

"$SRC/scripts/check-structure.py" "$SRC" "$BUILD" >"$T/out" || fail "$(cat "$T/out")"

# Planted: builder/ including verify/, and two files calling each other.
mkdir -p "$T/tree/verify" "$T/tree/builder" "$T/obj/verify"
printf 'int y;\n' >"$T/tree/verify/y.c"
printf '#include "verify/y.h"\n' >"$T/tree/builder/x.c"
! "$SRC/scripts/check-structure.py" "$T/tree" >"$T/out" || fail "passed an upward include"
grep -q 'builder/x.c: includes verify/y.h' "$T/out" || fail "layers: $(cat "$T/out")"
# Planted: a peer including a peer (recipes/ reading attest/).
mkdir -p "$T/peer/recipes" "$T/peer/attest"
printf '#include "attest/y.h"\n' >"$T/peer/recipes/x.c"
! "$SRC/scripts/check-structure.py" "$T/peer" >"$T/out" || fail "passed a peer include"
grep -q 'recipes/x.c: includes attest/y.h: recipes/ and attest/ are peers' "$T/out" ||
	fail "peers: $(cat "$T/out")"
printf 'int b(void); int a(void) { return b(); }\n' >"$T/a.c"
mkdir -p "$T/loop/lib"
printf '#include "lib/q.h"\n' >"$T/loop/lib/p.h"
printf '#include "lib/p.h"\n' >"$T/loop/lib/q.h"
! "$SRC/scripts/check-structure.py" "$T/loop" >"$T/out" || fail "passed an include loop"
grep -q 'files include each other in a loop: lib/p.h -> lib/q.h -> lib/p.h' "$T/out" ||
	fail "include loop: $(cat "$T/out")"
printf 'int a(void); int b(void) { return a(); }\n' >"$T/b.c"
cc -c -o "$T/obj/verify/a.o" "$T/a.c" && cc -c -o "$T/obj/verify/b.o" "$T/b.c"
! "$SRC/scripts/check-structure.py" "$T/tree" "$T/obj" >"$T/out" || fail "passed a call loop"
grep -q 'verify/a.c -> verify/b.c -> verify/a.c' "$T/out" || fail "calls: $(cat "$T/out")"
echo "ok: layers and calls"
