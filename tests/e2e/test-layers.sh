#!/bin/bash
# The structure stays as docs/CONTRACTS.md draws it: no folder includes
# one above it (scripts/check-layers.py), no two files call each other in
# a loop (scripts/check-calls.py, from the objects' symbols).  Each check
# is also run on a planted fault, so a checker that passes everything
# fails here.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
command -v nm >/dev/null || skip "no nm"
BUILD=$(dirname "$INGOT")

"$SRC/scripts/check-layers.py" "$SRC" >"$T/out" || fail "layers: $(cat "$T/out")"
"$SRC/scripts/check-calls.py" "$BUILD" >"$T/out" || fail "calls: $(cat "$T/out")"

# Planted: builder/ including verify/, and two files calling each other.
mkdir -p "$T/tree/verify" "$T/tree/builder" "$T/obj/verify"
printf 'int y;\n' >"$T/tree/verify/y.c"
printf '#include "verify/y.h"\n' >"$T/tree/builder/x.c"
! "$SRC/scripts/check-layers.py" "$T/tree" >"$T/out" || fail "check-layers passed an upward include"
grep -q 'builder/x.c: includes verify/y.h' "$T/out" || fail "check-layers: $(cat "$T/out")"
printf 'int b(void); int a(void) { return b(); }\n' >"$T/a.c"
printf 'int a(void); int b(void) { return a(); }\n' >"$T/b.c"
cc -c -o "$T/obj/verify/a.o" "$T/a.c" && cc -c -o "$T/obj/verify/b.o" "$T/b.c"
! "$SRC/scripts/check-calls.py" "$T/obj" >"$T/out" || fail "check-calls passed a loop"
grep -q 'verify/a.c -> verify/b.c -> verify/a.c' "$T/out" || fail "check-calls: $(cat "$T/out")"
echo "ok: layers and calls"
