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
echo "boot image: its $n /opt/ingot paths are all in the tools layer"
