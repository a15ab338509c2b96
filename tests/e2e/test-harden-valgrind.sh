#!/bin/bash
# valgrind (memcheck, full leak check) on the end-to-end demo: a signed
# build of recipes/demo.yaml, then verify-manifest and inspect on its
# outputs.  Any invalid access, use of uninitialised memory or definite/
# indirect leak fails the test.  Skipped when valgrind is not installed.
. "$(dirname "$0")/lib.sh"
command -v valgrind >/dev/null || skip "valgrind not installed"
# An ASan build (make asan) cannot run under valgrind; it checks itself.
if grep -q __asan_init "$INGOT"; then skip "ingot is built with AddressSanitizer"; fi
cd "$T"
VG="valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --track-origins=yes -q"

note "demo artifacts"
cp "$SRC/recipes/demo.yaml" .
if [ -f "$SRC/recipes/artifacts/nvidia-open-kmod-580.95.05-6.8.0-45.tar.xz" ]; then
	ln -s "$SRC/recipes/artifacts" artifacts
else
	"$SRC/scripts/gen-artifacts.sh" "$BUILD_DIR" "$T/artifacts" >/dev/null
fi
"$INGOT" keys generate -o k >/dev/null
"$INGOT" keys keyring add ring.json k.pub --name demo >/dev/null

vg() { # what cmd...
	local what=$1 rc=0
	shift
	$VG "$@" >"$T/vg.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { cat "$T/vg.out"; fail "$what under valgrind: exit $rc (99: memcheck errors)"; }
	echo "valgrind clean: $what"
}

note "build (lint, store, unpack, image, verity, manifest, signature)"
vg "ingot build" "$INGOT" build demo.yaml -o out --store store --key k.key \
	--rules "$SRC/recipes/rules" --date 2026-11-01 -q
assert_file out/demo-h100.sqfs
assert_file out/demo-h100.manifest.dsse.json
note "warm rebuild (listings from the store's cache)"
vg "ingot build (warm)" "$INGOT" build demo.yaml -o out2 --store store --rules "$SRC/recipes/rules" \
	--date 2026-11-01 -q
assert_eq "$(sha256 out/demo-h100.sqfs)" "$(sha256 out2/demo-h100.sqfs)" "warm rebuild image"
note "verify-manifest with image and verity, inspect"
vg "ingot verify-manifest" "$INGOT" verify-manifest out/demo-h100.manifest.dsse.json --keyring ring.json \
	--image out/demo-h100.sqfs --verity out/demo-h100.verity --now 2026-11-01T00:00:00Z
vg "ingot inspect" "$INGOT" inspect out/demo-h100.sqfs

note "ENOSPC while writing the image (ulimit -f, SIGXFSZ ignored): a clean error, no leak"
# libsquashfs 1.2 lost the block in hand when a write error reached its
# block processor while its queue was full (issue 13.14): a leak per ENOSPC.
head -c 700000 /dev/urandom > big.bin
printf 'name: big\nversion: "1"\nepoch: 1\nartifacts:\n  - name: big\n    kind: file\n    source: big.bin\n    sha256: %s\n    dest: /big.bin\n' \
	"$(sha256 big.bin)" > big.yaml
"$INGOT" build big.yaml -o warm --store store -q --no-lint   # the blob in the store first
for j in 1 2; do
	for lim in 64 320; do
		rc=0
		(trap '' XFSZ; ulimit -f $lim; exec $VG "$INGOT" build big.yaml -o full --store store -q --no-lint -j $j) \
			>"$T/vg.out" 2>&1 || rc=$?
		[ "$rc" = 1 ] || { cat "$T/vg.out"; fail "ENOSPC build (-j $j, ulimit -f $lim): exit $rc, expected 1 (99: memcheck errors)"; }
		assert_contains "$(cat "$T/vg.out")" "File too large" "ENOSPC message"
		[ ! -e full/big.sqfs ] || fail "an image was left under its name"
	done
done
echo "valgrind clean: ENOSPC builds"
