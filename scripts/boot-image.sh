#!/bin/bash
# Build the demo's bootable variant into OUTDIR (default out/boot):
#   scripts/boot-image.sh BUILD [OUTDIR]
# NAME.efi (UKI), NAME.sqfs, NAME.verity, NAME.manifest.json and the
# signed NAME.manifest.dsse.json, with NAME = demo-h100-boot.  The UKI is
# signed for Secure Boot (recipe boot.secure-boot) with OVMF's snakeoil
# db key (/usr/share/ovmf/PkKek-1-snakeoil.*; a test key, unencrypted
# into OUTDIR/secure-boot/ here), which OVMF_VARS_4M.snakeoil.fd enrols.
#
# The kernel and the EFI stub come from Debian's archive (`apt-get
# download`; kept in $INGOT_BOOT_CACHE, default out/boot-cache).  The
# archive moves on, so the recipe is generated here with pins written
# from the files actually downloaded, and this script says so.  The image
# also carries a test-only layer (a tar made here, deterministically): the
# ingot binary and its shared libraries, and /sbin/init = the boot test's
# init (tests/boot/test-init.c), which runs the image's own ingot to
# verify and quote with the host's nonce.  The production /init in the
# UKI (boot/init.c) has no test mode: it hands over to the image's
# /sbin/init as it would on any node.
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-out/boot}
cd "$(dirname "$0")/.."
ROOT=$(pwd)
INGOT=$ROOT/$BUILD/ingot
INIT=$ROOT/$BUILD/ingot-init
TEST_INIT=$ROOT/$BUILD/ingot-test-init
SNAKEOIL=/usr/share/ovmf/PkKek-1-snakeoil
CACHE=${INGOT_BOOT_CACHE:-$ROOT/out/boot-cache}
NAME=demo-h100-boot
[ -x "$INGOT" ] && [ -x "$INIT" ] && [ -x "$TEST_INIT" ] ||
	{ echo "boot-image: $INGOT, $INIT or $TEST_INIT not built (run make)" >&2; exit 1; }
[ -f "$SNAKEOIL.key" ] && [ -f "$SNAKEOIL.pem" ] || { echo "boot-image: $SNAKEOIL.{key,pem} missing (ovmf)" >&2; exit 1; }
[ -f recipes/artifacts/nvidia-open-kmod-580.95.05-6.8.0-45.tar.xz ] || scripts/gen-artifacts.sh "$BUILD"
mkdir -p "$CACHE" "$OUT"

# --- pinned boot inputs from the archive --------------------------------
deb_of() { ls "$CACHE"/"$1"_*.deb 2>/dev/null | sort | tail -n 1; }
KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-6\.1\.0-[0-9]*-amd64\)$/\1/p' | head -n 1)
[ -n "$KPKG" ] || KPKG=$(cd "$CACHE" && ls linux-image-6.1.0-*-amd64_*.deb 2>/dev/null | sed 's/_.*//' | sort -V | tail -n 1)
[ -n "$KPKG" ] || { echo "boot-image: no linux-image-6.1.0-*-amd64 known to apt" >&2; exit 1; }
for pkg in "$KPKG" systemd-boot-efi; do
	if [ -z "$(deb_of "$pkg")" ]; then
		echo "boot-image: apt-get download $pkg" >&2
		(cd "$CACHE" && apt-get download "$pkg" >/dev/null 2>&1) ||
			{ echo "boot-image: apt-get download $pkg failed" >&2; exit 1; }
	fi
done
KDEB=$(deb_of "$KPKG")
SDEB=$(deb_of systemd-boot-efi)

# --- ingot and its libraries, for the test image -------------------------
TOOLS=$CACHE/ingot-tools
rm -rf "$TOOLS" && mkdir -p "$TOOLS/usr/bin" "$TOOLS/usr/lib/x86_64-linux-gnu" "$TOOLS/lib64" "$TOOLS/sbin"
cp "$INGOT" "$TOOLS/usr/bin/ingot"
cp "$TEST_INIT" "$TOOLS/sbin/init"
# tss2-tctildr dlopens the TCTI by name: carry the device TCTI too.
for lib in $(ldd "$INGOT" /usr/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0 | awk '/=> \//{print $3}' | sort -u) \
	   /usr/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0; do
	cp -L "$lib" "$TOOLS/usr/lib/x86_64-linux-gnu/$(basename "$lib")"
done
cp -L /lib64/ld-linux-x86-64.so.2 "$TOOLS/lib64/"
# --mode: the modes follow the files' executable bit, not the caller's
# umask (cp and mkdir above apply it), so the tar's pin does not move.
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=u+rw,go=u-w --format=gnu \
	-C "$TOOLS" -cf "$CACHE/ingot-tools.tar" lib64 sbin usr
TOOLS_TAR=$CACHE/ingot-tools.tar

sha() { sha256sum "$1" | cut -d' ' -f1; }
RECIPE=$OUT/$NAME.yaml
# The snakeoil key is encrypted (passphrase "snakeoil"); the builder takes
# an unencrypted key and never prompts.
SB=$(cd "$OUT" && pwd)/secure-boot
mkdir -p "$SB"
[ -f "$SB/db.key" ] || openssl pkey -in "$SNAKEOIL.key" -passin pass:snakeoil -out "$SB/db.key"
cp "$SNAKEOIL.pem" "$SB/db.pem"
TOOLS_ART="  # test-only layer: /sbin/init = the boot test's init, the image's ingot
  # (verifies and quotes the TPM in the guest) and its libraries
  - name: ingot-tools
    kind: tar
    source: $TOOLS_TAR
    sha256: $(sha "$TOOLS_TAR")
"
{
	# demo.yaml with absolute sources, the tools artifact before files:,
	# and the mount points the boot needs among the directories.
	sed -e "s|^name: demo-h100$|name: $NAME|" \
	    -e "s|source: artifacts/|source: $ROOT/recipes/artifacts/|" \
	    -e "s|source: file://artifacts/|source: $ROOT/recipes/artifacts/|" recipes/demo.yaml |
		awk -v art="$TOOLS_ART" '
			/^files:/ { printf "%s\n", art }
			{ print }
			/^directories:/ { print "  - {path: /dev}\n  - {path: /proc}\n  - {path: /sys}\n  - {path: /tmp, mode: 01777}" }'
	cat <<YAML

# Pins written by scripts/boot-image.sh from the files it downloaded:
#   $(basename "$KDEB")
#   $(basename "$SDEB")
boot:
  kernel:
    source: $KDEB
    sha256: $(sha "$KDEB")
  stub:
    source: $SDEB
    sha256: $(sha "$SDEB")
  init:
    source: $INIT
    sha256: $(sha "$INIT")
  # virtio_console: the ingot.0 port the test's node pushes its evidence over
  modules: [virtio_ring, virtio, virtio_pci_legacy_dev, virtio_pci_modern_dev, virtio_pci, virtio_blk,
            virtio_console, dm-mod, dm-bufio, reed_solomon, dm-verity, squashfs]
  # panic=-1: a dm-verity panic (a changed block) reboots at once, which
  # ends the test VM (-no-reboot); no_timer_check: under TCG on a loaded
  # host the kernel's IO-APIC timer check can fail and panic the boot
  cmdline: "console=ttyS0 panic=-1 no_timer_check"
  secure-boot:
    key: {source: $SB/db.key, sha256: $(sha "$SB/db.key")}
    cert: {source: $SB/db.pem, sha256: $(sha "$SB/db.pem")}
YAML
} > "$RECIPE.tmp"
mv "$RECIPE.tmp" "$RECIPE"
echo "boot-image: recipe $RECIPE pins what was downloaded: $(basename "$KDEB"), $(basename "$SDEB")" >&2

KEY=$OUT/signing
[ -f "$KEY.key" ] || "$INGOT" keys generate -o "$KEY" >/dev/null
rm -f "$OUT/keyring.json"
# The test's one key, named for each role it signs in (docs/signing.md).
"$INGOT" keys keyring add "$OUT/keyring.json" "$KEY.pub" --name boot-demo --role manifest,enrolment,firmware-ref >/dev/null
"$INGOT" build "$RECIPE" -o "$OUT" --store "$ROOT/out/store" --key "$KEY.key" --no-lint --quiet
echo "boot-image: $OUT/$NAME.efi $(sha256sum "$OUT/$NAME.efi" | cut -d' ' -f1)"
