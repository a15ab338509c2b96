#!/bin/bash
# real-bench.sh - time `ingot build` of the real image against the standard
# pipeline on the same bytes (issue 25 item 5; docs/real-image.md "Timings").
#
#   scripts/real-bench.sh [BUILD [OUT]]     (make real-bench; after make real-image)
#
# The tree: the image `make real-image` built ($OUT/real-h100.sqfs),
# unpacked with unsquashfs, so both pipelines pack the same files, modes
# and owners.  Timed (wall, user, sys):
#   ingot, cold   ingot build of the recipe with an empty store: unpacks every
#                 artifact (tars, the kernel deb), stages, squashfs (zstd 6),
#                 dm-verity, UKI, manifest, SBOM, DSSE signature
#   ingot, warm   the same again with that store (what a rebuild costs)
#   unpack        tar -x / dpkg-deb -x of the recipe's artifacts into a directory:
#                 what the standard pipeline needs first to have a tree
#   standard      mksquashfs TREE -comp zstd -Xcompression-level 6 -reproducible,
#                 veritysetup format, sha256sum, openssl signature of the sums,
#                 each step and the sum
# and prints the ratios ingot cold / (unpack + standard), ingot cold /
# standard and ingot warm / standard.  Everything goes to $OUT/bench
# (removed at the start); nothing is written into the shared cache.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${1:-build} OUT=${2:-out/real}
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
umask 022
export LC_ALL=C TZ=UTC
INGOT=$ROOT/$BUILD/ingot
NAME=real-h100
W=$OUT/bench
say() { echo "real-bench: $*" >&2; }
die() { say "$*"; exit 1; }
for t in mksquashfs unsquashfs veritysetup openssl sha256sum /usr/bin/time; do
	command -v "$t" >/dev/null || die "$t not found (scripts/deps.sh installs it)"
done
[ -x "$INGOT" ] || die "$INGOT not built (run make)"
# the pool's recipe and what its ${...} name (make real-image wrote them)
R=$ROOT/recipes/real/nvidia-h100.yaml
for f in "$NAME.vars" "$NAME.sqfs" signing.key; do
	[ -f "$OUT/$f" ] || die "$OUT/$f: not found (run make real-image first)"
done
mapfile -t SETS < <(sed 's/^/--set=/' "$OUT/$NAME.vars")
rm -rf "$W" && mkdir -p "$W"
load() { cut -d' ' -f1-3 /proc/loadavg; }
say "machine: $(nproc) CPUs, load average $(load) at the start"

unsquashfs -no-progress -d "$W/tree" "$OUT/$NAME.sqfs" >/dev/null
say "tree: $(find "$W/tree" | wc -l) entries, $(du -sb "$W/tree" | cut -f1) bytes (unpacked $NAME.sqfs)"

# timed LABEL CMD...: wall, user and sys seconds into $W/LABEL.time
timed() {
	local label=$1
	shift
	/usr/bin/time -f '%e %U %S' -o "$W/$label.time" "$@" >"$W/$label.log" 2>&1 ||
		die "$label failed: $(tail -n 5 "$W/$label.log")"
	say "$(printf '%-12s' "$label") $(awk '{ printf "%7.1f s wall, %7.1f s user, %6.1f s sys", $1, $2, $3 }' "$W/$label.time") (load $(load))"
}
sum() { awk '{ w += $1; u += $2; s += $3 } END { printf "%.2f %.2f %.2f\n", w, u, s }' "$@"; }

timed ingot-cold "$INGOT" build "$R" "${SETS[@]}" -o "$W/ingot-cold" --store "$W/store" \
	--key "$OUT/signing.key" --quiet
timed ingot-warm "$INGOT" build "$R" "${SETS[@]}" -o "$W/ingot-warm" --store "$W/store" \
	--key "$OUT/signing.key" --quiet
cmp -s "$W/ingot-cold/$NAME.sqfs" "$W/ingot-warm/$NAME.sqfs" || die "the warm build gave other bytes"

# The standard pipeline starts from a tree; getting it from the same
# artifacts ingot starts from costs this much (tar -x, dpkg-deb -x).
unpack_all() {
	mkdir -p "$W/unpacked"
	awk -F'\n' 'FNR == NR { i = index($0, "="); v["${" substr($0, 1, i - 1) "}"] = substr($0, i + 1); next }
		{ split($0, f, " ") } f[1] == "kind:" { k = f[2] }
		f[1] == "source:" && k { print k, (f[2] in v ? v[f[2]] : f[2]); k = "" }' "$OUT/$NAME.vars" "$R" |
	while read -r kind src; do
		case $kind in
		tar) tar -xf "$src" -C "$W/unpacked" ;;
		deb) dpkg-deb -x "$src" "$W/unpacked" ;;
		esac
	done
}
export -f unpack_all
export W OUT NAME R
timed unpack bash -c unpack_all
rm -rf "$W/unpacked"

timed mksquashfs mksquashfs "$W/tree" "$W/std.sqfs" -comp zstd -Xcompression-level 6 -b 131072 \
	-reproducible -noappend -no-progress
timed veritysetup veritysetup format "$W/std.sqfs" "$W/std.verity"
timed sha256sum sha256sum "$W/std.sqfs" "$W/std.verity"
cp "$W/sha256sum.log" "$W/std.sha256"
timed openssl openssl pkeyutl -sign -inkey "$OUT/signing.key" -rawin -in "$W/std.sha256" -out "$W/std.sig"
sum "$W"/{mksquashfs,veritysetup,sha256sum,openssl}.time >"$W/standard.time"

sum "$W"/{unpack,standard}.time >"$W/standard+unpack.time"
# ratio A B: A's wall and CPU (user+sys) time over B's
ratio() {
	paste -d' ' "$W/$1.time" "$W/$2.time" | awk -v l="$1 / $2" \
		'{ printf "ratio %-28s wall %.2f, CPU %.2f\n", l, ($4 > 0 ? $1 / $4 : 0), ($5 + $6 > 0 ? ($2 + $3) / ($5 + $6) : 0) }'
}
for b in standard standard+unpack; do
	say "$(awk -v l="$b" '{ printf "%-16s %.1f s wall, %.1f s user, %.1f s sys", l, $1, $2, $3 }' "$W/$b.time")"
done
say "images: ingot $(stat -c %s "$W/ingot-cold/$NAME.sqfs") bytes, mksquashfs $(stat -c %s "$W/std.sqfs") bytes"
for r in "ingot-cold standard+unpack" "ingot-cold standard" "ingot-warm standard"; do
	say "$(ratio $r)"
done
say "load average $(load) at the end"
rm -rf "$W/tree" "$W/store"
