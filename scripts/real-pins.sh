#!/bin/bash
# scripts/real-pins.sh MODE PINS NEW: compare what a build produced (NEW,
# outputs.pins lines) with the committed PINS, line by line, comments
# aside, and name every line that moved ("pinned ..., built ...").
#   record  rewrite PINS with NEW (exit 0): the archive's packages move
#           between point releases; git diff shows what moved.
#   check   leave PINS as it is and exit 1 on any difference: an
#           operator who wants these exact bytes gets a failing build.
# NEW is removed either way.
set -euo pipefail
[ $# = 3 ] || { echo "usage: $0 record|check PINS NEW" >&2; exit 2; }
MODE=$1 PINS=$2 NEW=$3
say() { echo "real-image: $*" >&2; }
case $MODE in record|check) ;; *)
	say "INGOT_REAL_PINS: expected record or check, got '$MODE'"; rm -f "$NEW"; exit 1 ;; esac
# the key of a line: all but its last field (the digest or version)
pinned() { grep -v '^#' "$1" 2>/dev/null | awk 'NF { v = $NF; $NF = ""; sub(/ $/, ""); print $0 "\t" v }' | sort; }
moved=$(join -t "$(printf '\t')" -a 1 -a 2 -e '(none)' -o 0,1.2,2.2 <(pinned "$PINS") <(pinned "$NEW") |
	awk -F '\t' '$2 != $3 { printf "%s: pinned %s, built %s\n", $1, $2, $3 }')
if [ -z "$moved" ]; then
	say "outputs match $PINS ($(grep -vc '^#' "$NEW") pins: image, verity root, UKI, manifest, SBOM, artifacts, packages)"
	mv "$NEW" "$PINS"
	exit 0
fi
n=$(printf '%s\n' "$moved" | wc -l)
printf '%s\n' "$moved" | sed "s|^|real-image: $PINS: |" >&2
if [ "$MODE" = check ]; then
	rm -f "$NEW"
	say "FAIL: $n output(s) differ from $PINS (INGOT_REAL_PINS=check); the file is unchanged"
	exit 1
fi
mv "$NEW" "$PINS"
say "$n output(s) differ from the committed $PINS, rewritten (archive moved, a new pin or a changed checkout: see git diff; INGOT_REAL_PINS=check fails instead)"
