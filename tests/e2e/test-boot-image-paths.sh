#!/bin/bash
# The real image's units and scripts (verify/boot/image) run ingot from
# the tools layer that scripts/real-image.sh makes (/opt/ingot: the
# binary and the rules, with the image's own libraries): every /opt/ingot
# path they name must be one that layer has.  A path it lost (the loader
# and libraries once copied to /opt/ingot/lib) fails only at boot, in a
# unit whose failure the boot tests may not see.
. "$(dirname "$0")/lib.sh"
grep -o 'tools/opt/ingot/[A-Za-z0-9_./-]*' "$SRC/scripts/real-image.sh" | sed 's|^tools||' | sort -u >"$T/layer.txt"
[ -s "$T/layer.txt" ] || fail "scripts/real-image.sh: no tools/opt/ingot paths found"
# named PATTERN LIST WHERE: every path verify/boot/image names by PATTERN
# is a line of LIST (else: not in WHERE); prints how many (at least one).
named() {
	local f p n=0
	while IFS=: read -r f p; do
		n=$((n + 1))
		grep -qx -- "$p" "$2" || fail "${f#"$SRC"/}: $p: not in $3 ($(paste -sd ' ' "$2"))"
	done < <(grep -rHo "$1" "$SRC/verify/boot/image")
	[ "$n" -gt 0 ] || fail "verify/boot/image names no path like $1"
	echo "$n"
}
n=$(named '/opt/ingot/[A-Za-z0-9_./-]*' "$T/layer.txt" "the image's tools layer") || exit 1
# Every /etc/ingot path they name is one the image has: the boot layer's
# (scripts/real-image.sh: the keyring) or a recipe's files: entry (the pool).
{
	grep -o 'boot/etc/ingot/[A-Za-z0-9_./-]*' "$SRC/scripts/real-image.sh" | sed 's|^boot||'
	sed -n 's|^  - path: \(/etc/ingot/[A-Za-z0-9_./-]*\)$|\1|p' "$SRC"/recipes/real/*.yaml
} | sort -u >"$T/etc.txt"
grep -qx /etc/ingot/keyring.json "$T/etc.txt" || fail "scripts/real-image.sh: the image's keyring is not in its boot layer"
m=$(named '/etc/ingot/[A-Za-z0-9_./-]*[A-Za-z0-9_]' "$T/etc.txt" "the image") || exit 1
echo "boot image: its $n /opt/ingot paths are all in the tools layer, its $m /etc/ingot paths in the image"
