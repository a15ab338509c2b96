#!/bin/bash
# Build the libFuzzer harnesses (tests/fuzz/fuzz_*.c) with clang and
# -fsanitize=fuzzer,address,undefined against ingot's library sources, and
# run each for SECONDS.  Exits non-zero when a harness finds a crash, leak,
# sanitizer report or timeout; the reproducer is left in
# $FUZZ_BUILD/crashes/HARNESS/.
#
#   tests/fuzz/run.sh SECONDS [HARNESS...]      (make fuzz FUZZ_SECONDS=N)
#   tests/fuzz/run.sh --replay [HARNESS...]     run the seed corpora once
#
# Environment: FUZZ_BUILD (default build-fuzz), CLANG (default clang),
# FUZZ_FLAGS (extra libFuzzer flags).  The working corpus grows in
# $FUZZ_BUILD/corpus/HARNESS; tests/fuzz/corpus/HARNESS holds the seeds.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
SECONDS_EACH=${1:-30}
shift || true
FB=${FUZZ_BUILD:-build-fuzz}
CLANG=${CLANG:-clang}
# the Makefile's list: one place names the libraries
PKGS=$(make -s --no-print-directory print-pkgs) || exit 2

command -v "$CLANG" >/dev/null || { echo "fuzz: $CLANG not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 2; }
PKG_CFLAGS=$(pkg-config --cflags $PKGS) || exit 2
PKG_LIBS=$(pkg-config --libs $PKGS) || exit 2
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CFLAGS="-std=c11 -g -O1 -D_GNU_SOURCE -I. $PKG_CFLAGS $SAN"

harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do harnesses+=("$(basename "$f" .c)"); done
fi

# --- library objects, rebuilt when their source or a header they include
# (clang -MMD's list) changed
mkdir -p "$FB/obj" "$FB/bin"
stale() { # OBJ: missing, or older than a file in its dependency list
	local obj=$1 dep
	[ -f "$obj" ] && [ -f "$obj.d" ] || return 0
	for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$obj.d"); do
		[ "$dep" -nt "$obj" ] && return 0
	done
	return 1
}
objs=()
build_failed=0
# The library's parts, as the Makefile lists them (a new folder is then
# never left out of the fuzz build).
parts=$(sed -n 's/^PARTS *:= *//p' Makefile)
[ -n "$parts" ] || { echo "fuzz: no PARTS line in Makefile" >&2; exit 2; }
for src in $(for p in $parts; do echo "$p"/*.c; done); do
	[ -f "$src" ] || continue
	obj="$FB/obj/${src%.c}.o"
	objs+=("$obj")
	stale "$obj" || continue
	mkdir -p "$(dirname "$obj")"
	echo "  CC  $src"
	$CLANG $CFLAGS -fsanitize=fuzzer-no-link -MMD -MF "$obj.d" -c -o "$obj" "$src" &
	# two compilers at a time: the machine has two cores
	while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || build_failed=1; done
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || build_failed=1; done
[ "$build_failed" = 0 ] || { echo "fuzz: library build failed" >&2; exit 2; }
lib="$FB/libingot-fuzz.a"
if [ ! -f "$lib" ] || [ -n "$(find "${objs[@]}" -newer "$lib" 2>/dev/null | head -1)" ]; then
	rm -f "$lib.tmp" && ar rcs "$lib.tmp" "${objs[@]}" && mv "$lib.tmp" "$lib" || exit 2
fi

for h in "${harnesses[@]}"; do
	echo "  LD  $FB/bin/$h"
	$CLANG $CFLAGS -fsanitize=fuzzer -o "$FB/bin/$h" "tests/fuzz/$h.c" "$FB/libingot-fuzz.a" \
		$PKG_LIBS -lpthread || { echo "fuzz: $h does not build" >&2; exit 2; }
done

# Harnesses that write (keys, store) do so in a scratch directory.
export FUZZ_SCRATCH
# /dev/shm when there is one: the unpack harness writes its store on
# every input, and fsyncs on a real disk would slow everything else down.
scratch_base=/dev/shm
[ -d "$scratch_base" ] && [ -w "$scratch_base" ] || scratch_base=${TMPDIR:-/tmp}
FUZZ_SCRATCH=$(mktemp -d "$scratch_base/ingot-fuzz.XXXXXX")
trap 'rm -rf "$FUZZ_SCRATCH"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

status=0
summary=()
for h in "${harnesses[@]}"; do
	seeds="tests/fuzz/corpus/$h"
	work="$FB/corpus/$h"
	crashes="$FB/crashes/$h"
	mkdir -p "$work" "$crashes" "$seeds"
	log="$FB/$h.log"
	if [ "$SECONDS_EACH" = --replay ]; then
		echo "== $h: replaying $(ls "$seeds" | wc -l) seeds"
		"$FB/bin/$h" -runs=0 -print_final_stats=1 -artifact_prefix="$crashes/" ${FUZZ_FLAGS:-} "$seeds" >"$log" 2>&1
	else
		echo "== $h: fuzzing for ${SECONDS_EACH}s ($(ls "$seeds" | wc -l) seeds, $(ls "$work" | wc -l) in the working corpus)"
		"$FB/bin/$h" -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=2048 \
			-max_len=262144 -print_final_stats=1 -artifact_prefix="$crashes/" ${FUZZ_FLAGS:-} \
			"$work" "$seeds" >"$log" 2>&1
	fi
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	if [ $rc -ne 0 ]; then
		status=1
		echo "FAIL $h (exit $rc): $(grep -m1 -E 'ERROR: |runtime error|Test unit written' "$log")"
		grep -E 'Test unit written|SUMMARY' "$log" | sed 's/^/    /'
		summary+=("$h: FAILED after ${execs:-?} execs")
	else
		summary+=("$h: ok, ${execs:-?} execs, ${cov:-cov: ?}")
	fi
done
echo "fuzz summary:"
printf '  %s\n' "${summary[@]}"
exit $status
