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
n=0
while IFS=: read -r f p; do
	n=$((n + 1))
	grep -qx -- "$p" "$T/layer.txt" || fail "${f#"$SRC"/}: $p: not in the image's tools layer ($(paste -sd ' ' "$T/layer.txt"))"
done < <(grep -rHo '/opt/ingot/[A-Za-z0-9_./-]*' "$SRC/verify/boot/image")
[ "$n" -gt 0 ] || fail "verify/boot/image names no /opt/ingot path"
# Every /etc/ingot path they name is one the image has: the boot layer's
# (scripts/real-image.sh: the keyring) or a recipe's files: entry (the pool).
{
	grep -o 'boot/etc/ingot/[A-Za-z0-9_./-]*' "$SRC/scripts/real-image.sh" | sed 's|^boot||'
	sed -n 's|^  - path: \(/etc/ingot/[A-Za-z0-9_./-]*\)$|\1|p' "$SRC"/recipes/real/*.yaml
} | sort -u >"$T/etc.txt"
grep -qx /etc/ingot/keyring.json "$T/etc.txt" || fail "scripts/real-image.sh: the image's keyring is not in its boot layer"
m=0
while IFS=: read -r f p; do
	m=$((m + 1))
	grep -qx -- "$p" "$T/etc.txt" || fail "${f#"$SRC"/}: $p: not in the image ($(paste -sd ' ' "$T/etc.txt"))"
done < <(grep -rHo '/etc/ingot/[A-Za-z0-9_./-]*[A-Za-z0-9_]' "$SRC/verify/boot/image")
[ "$m" -gt 0 ] || fail "verify/boot/image names no /etc/ingot path"
echo "boot image: its $n /opt/ingot paths are all in the tools layer, its $m /etc/ingot paths in the image"
