#!/bin/bash
# The structure stays as docs/CONTRACTS.md draws it
# (scripts/check-structure.py): no folder includes or calls one above it
# or a peer (nor verify/ builder/), boot/ reads only the boot contract,
# includes are written from the root, exit statuses are cli/'s, no function reads as another
# folder's struct, no two files include or call each other in a loop
# (calls from the objects' symbols).  Each check
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
# Each planted tree holds one fault; the checker must fail naming it.
plant() {	# NAME WHAT: runs on $T/NAME (and $T/NAME.obj when there), expects WHAT
	local objs=()
	[ -d "$T/$1.obj" ] && objs=("$T/$1.obj")
	! "$SRC/scripts/check-structure.py" "$T/$1" "${objs[@]}" >"$T/out" || fail "$1: passed"
	grep -qF "$2" "$T/out" || fail "$1: expected '$2', got: $(cat "$T/out")"
}
mkdir -p "$T/boot/boot" "$T/boot/attest" "$T/bootinc/keys" "$T/bootinc/boot"
printf '#include "lib/boot-contract.h"\n#include "attest/bank.h"\n' >"$T/boot/boot/init.c"
plant boot 'boot/init.c: includes attest/bank.h: boot/ links no ingot library'
printf '#include "boot/bootlib.h"\n' >"$T/bootinc/keys/k.c"
plant bootinc 'keys/k.c: includes boot/bootlib.h: boot/ is the init program'
mkdir -p "$T/rel/lib"
printf '#include "../lib/err.h"\n' >"$T/rel/lib/r.c"
plant rel 'lib/r.c: includes "../lib/err.h": expected a path from the root ("lib/err.h")'
mkdir -p "$T/relup/image"
printf '#include "../builder/store.h"\n' >"$T/relup/image/r.c"
plant relup 'image/r.c: includes builder/store.h: image/ may not use a folder above it (builder/)'
mkdir -p "$T/never/verify"
printf '#include "builder/store.h"\n' >"$T/never/verify/v.c"
plant never 'verify/v.c: includes builder/store.h: verify/ never uses builder/'
mkdir -p "$T/name/lib" "$T/name/builder"
printf 'static int store(void)\n{\n\treturn 0;\n}\n' >"$T/name/lib/err.c"
printf 'struct store {\n\tint fd;\n};\n' >"$T/name/builder/store.h"
plant name "lib/err.c: function store() reads as builder/store.h's struct store"
mkdir -p "$T/exit/verify"
printf 'enum { VERIFY_EXIT_TUPLE = 13 };\n' >"$T/exit/verify/node-report.h"
plant exit 'verify/node-report.h: defines exit status VERIFY_EXIT_TUPLE: only cli/ picks exit statuses'
# A lower folder calling a higher one, no loop: lib/low.c uses builder/hi.c's hi().
# (objects count only beside their sources: a stale one is no call)
mkdir -p "$T/up/lib" "$T/up/builder" "$T/up.obj/lib" "$T/up.obj/builder"
printf 'int hi(void); int low(void) { return hi(); }\n' >"$T/up/lib/low.c"
printf 'int hi(void) { return 1; }\n' >"$T/up/builder/hi.c"
cc -c -o "$T/up.obj/lib/low.o" "$T/up/lib/low.c" && cc -c -o "$T/up.obj/builder/hi.o" "$T/up/builder/hi.c"
plant up 'lib/low.c: calls hi (builder/hi.c): lib/ may not use a folder above it (builder/)'
mkdir -p "$T/tree/verify"
printf 'int b(void); int a(void) { return b(); }\n' >"$T/tree/verify/a.c"
mkdir -p "$T/loop/lib"
printf '#include "lib/q.h"\n' >"$T/loop/lib/p.h"
printf '#include "lib/p.h"\n' >"$T/loop/lib/q.h"
! "$SRC/scripts/check-structure.py" "$T/loop" >"$T/out" || fail "passed an include loop"
grep -q 'files include each other in a loop: lib/p.h -> lib/q.h -> lib/p.h' "$T/out" ||
	fail "include loop: $(cat "$T/out")"
printf 'int a(void); int b(void) { return a(); }\n' >"$T/tree/verify/b.c"
cc -c -o "$T/obj/verify/a.o" "$T/tree/verify/a.c" && cc -c -o "$T/obj/verify/b.o" "$T/tree/verify/b.c"
! "$SRC/scripts/check-structure.py" "$T/tree" "$T/obj" >"$T/out" || fail "passed a call loop"
grep -q 'verify/a.c -> verify/b.c -> verify/a.c' "$T/out" || fail "calls: $(cat "$T/out")"
echo "ok: layers, names and calls"
