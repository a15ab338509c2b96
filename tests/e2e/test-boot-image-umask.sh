#!/bin/bash
# scripts/boot-image.sh gives the same bytes under umask 077, another
# zone and locale as under umask 022: its generated ingot-tools tar (and
# so the image, the verity root and the UKI) must not take the caller's
# umask.  Needs the kernel and stub packages `make boot-image` downloaded
# (out/boot-cache); skipped without them, so make check stays offline.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
CACHE=$SRC/out/boot-cache
ls "$CACHE"/linux-image-6.1.0-*-amd64_*.deb "$CACHE"/systemd-boot-efi_*.deb >/dev/null 2>&1 ||
	skip "no kernel/stub packages in $CACHE (run make boot-image once)"
[ -x "$BUILD_DIR/ingot-init" ] || skip "no $BUILD_DIR/ingot-init"
B=$(basename "$BUILD_DIR")
# Both builds write to the same directory: the recipe boot-image.sh
# writes names its Secure Boot key by path, and the verity salt is
# derived from the recipe's bytes, so another directory is another image.
(umask 022; INGOT_BOOT_CACHE=$CACHE scripts/boot-image.sh "$B" "$T/out" >/dev/null 2>&1) || fail "boot-image (umask 022)"
sa=$(sha256sum < "$CACHE/ingot-tools.tar")
mv "$T/out" "$T/a"
(umask 077; TZ=Pacific/Chatham LC_ALL=C.UTF-8 INGOT_BOOT_CACHE=$CACHE scripts/boot-image.sh "$B" "$T/out" >/dev/null 2>&1) ||
	fail "boot-image (umask 077)"
assert_eq "$sa" "$(sha256sum < "$CACHE/ingot-tools.tar")" "ingot-tools.tar under umask 077"
for x in efi sqfs verity manifest.json; do
	cmp -s "$T/a/demo-h100-boot.$x" "$T/out/demo-h100-boot.$x" || fail "demo-h100-boot.$x differs under umask 077"
done
