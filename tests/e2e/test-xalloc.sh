#!/bin/bash
# Allocation goes through lib/xalloc.h (the house rule):
# no raw malloc/calloc/realloc/strdup/strndup/asprintf in any library
# folder, so no call site keeps an "out of memory" path of its own (boot/,
# the init that links no ingot library, aside).  A site where NULL has another cause says so on its line with
# "xalloc: raw" and is let through.
. "$(dirname "$0")/lib.sh"
cd "$SRC" || fail "no source tree"
RAW='\b(malloc|calloc|realloc|strdup|strndup|asprintf)\('
grep -nE "$RAW" {attest,audit,builder,cli,image,keys,lib,manifest,ops,recipes,server,verify}/*.c |
	grep -v '^lib/xalloc\.c:' | grep -v 'xalloc: raw' >"$T/raw" || true
[ ! -s "$T/raw" ] || fail "raw allocation, expected lib/xalloc.h's x* functions: $(cat "$T/raw")"
# The pattern finds what it is meant to (a check that cannot fail is no check).
printf 'char *p = strdup(s);\n' | grep -qE "$RAW" || fail "pattern misses strdup("
printf 'char *p = xstrdup(s);\n' | grep -qE "$RAW" && fail "pattern matches xstrdup("
echo "no raw allocation outside lib/xalloc.c ($(ls {attest,audit,builder,cli,image,keys,lib,manifest,ops,recipes,server,verify}/*.c | wc -l) files)"
exit 0
