#!/bin/bash
# Runs the cmocka unit binaries and the end-to-end scripts; prints one
# closing line "check: N passed, N failed, N skipped".
#   tests/run.sh BUILD [unit|e2e] [NAME-FILTER]
set -u
BUILD=${1:-build}
WHAT=${2:-all}
FILTER=${3:-}
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
export INGOT_BUILD="$ROOT/$BUILD"
export INGOT="$ROOT/$BUILD/ingot"
export INGOT_SRC="$ROOT"
pass=0 fail=0 skip=0
failed=()
LOGDIR="$ROOT/$BUILD/test-logs"
mkdir -p "$LOGDIR"

if [ "$WHAT" = all ] || [ "$WHAT" = unit ]; then
	for t in "$BUILD"/tests/test_*; do
		[ -x "$t" ] || continue
		name=$(basename "$t")
		[ -n "$FILTER" ] && [[ "$name" != *"$FILTER"* ]] && continue
		log="$LOGDIR/$name.log"
		if (cd "$ROOT" && "$t") >"$log" 2>&1; then rc=0; else rc=$?; fi
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
		pass=$((pass + p)); fail=$((fail + f))
		if [ "$f" -ne 0 ]; then
			failed+=("$name"); echo "FAIL unit $name ($p passed, $f failed)"; sed 's/^/    /' "$log" | tail -n 40
		else
			echo "ok   unit $name ($p tests)"
		fi
	done
fi

if [ "$WHAT" = all ] || [ "$WHAT" = e2e ]; then
	for t in tests/e2e/test-*.sh; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .sh)
		[ -n "$FILTER" ] && [[ "$name" != *"$FILTER"* ]] && continue
		log="$LOGDIR/$name.log"
		start=$(date +%s)
		if bash "$t" >"$log" 2>&1; then rc=0; else rc=$?; fi
		secs=$(( $(date +%s) - start ))
		case $rc in
		0) pass=$((pass + 1)); echo "ok   e2e  $name (${secs}s)" ;;
		77) skip=$((skip + 1)); echo "skip e2e  $name: $(tail -n 1 "$log")" ;;
		*) fail=$((fail + 1)); failed+=("$name"); echo "FAIL e2e  $name (exit $rc, ${secs}s)"; sed 's/^/    /' "$log" | tail -n 40 ;;
		esac
	done
fi

[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "check: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
