#!/bin/bash
# scripts/real-tools.sh CACHE SUITE EPOCH MIRROR OUTDIR
# ingot's own tools for the real image, from pinned inputs only: this
# checkout's tracked sources built in a trixie build chroot (mmdebstrap
# buildd plus the -dev packages ingot links, cached as
# CACHE/toolsroot-KEY), never the host's binary or libraries.  Writes
# OUTDIR/ingot, OUTDIR/ingot-init and OUTDIR/packages: the Debian
# packages of the libraries ingot loads (ldd, dpkg -S in the chroot), for
# apt to install into the image's root filesystem, so ingot runs with
# the image's own libraries and they are dpkg packages the SBOM lists.
# The build is reproducible: a fixed epoch, locale, zone, and the build
# path mapped (-ffile-prefix-map), so a build in another directory gives
# the same bytes (INGOT_TOOLS_AGAIN=1 builds twice and compares).
# Cached by the sources' content: CACHE/tools-KEY/.
set -euo pipefail
[ $# = 5 ] || { echo "usage: $0 CACHE SUITE EPOCH MIRROR OUTDIR" >&2; exit 2; }
CACHE=$1 SUITE=$2 EPOCH=$3 MIRROR=$4 OUTDIR=$5
cd "$(dirname "$0")/.."
say() { echo "real-image: $*" >&2; }
key() { printf '%s\n' "$@" | sha256sum | cut -c1-16; }
DEV=libarchive-dev,libisal-dev,libyaml-dev,libsquashfs-dev,libssl-dev,libtss2-dev,libjansson-dev
DEV+=,libmicrohttpd-dev,libsqlite3-dev,libcurl4-openssl-dev,libsystemd-dev,libpq-dev,pkgconf
TR=$CACHE/toolsroot-$(key tools-buildd "$SUITE" "$EPOCH" "$DEV")
if [ ! -d "$TR" ]; then
	say "tools chroot: mmdebstrap --variant=buildd $SUITE with ingot's -dev packages (cached as $TR)"
	rm -rf "$TR.tmp"
	SOURCE_DATE_EPOCH=$EPOCH mmdebstrap --quiet --variant=buildd --include="$DEV" \
		"$SUITE" "$TR.tmp" "deb $MIRROR $SUITE main" >&2
	mv "$TR.tmp" "$TR"
fi
# The sources: what git tracks of what the build reads, as the working
# tree has it (not docs, tests or outputs.pins, which each run rewrites).
SRC=$(mktemp -d)
trap 'rm -rf "$SRC"' EXIT
git ls-files -z -- Makefile cli boot lib manifest attest keys image builder ops audit server \
	'recipes/*.[ch]' 'verify/*.[ch]' | tar --null -T - --sort=name --mtime=@"$EPOCH" --owner=0 --group=0 --numeric-owner \
	--format=gnu -cf "$SRC/src.tar"
TK=$CACHE/tools-$(key "$TR" "$(sha256sum < "$SRC/src.tar")" "$(sha256sum < "$0")")
# build DIR: the tools from the sources, in the chroot's /build/DIR
build() {
	local d=$TR/build/$1
	rm -rf "$d" && mkdir -p "$d" && tar -x -C "$d" -f "$SRC/src.tar"
	chroot "$TR" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/nonexistent LC_ALL=C TZ=UTC \
		SOURCE_DATE_EPOCH="$EPOCH" make -C "/build/$1" -j2 --no-print-directory BUILD=out \
		OPT="-O2 -ffile-prefix-map=/build/$1=." out/ingot out/ingot-init >&2
}
if [ ! -d "$TK" ]; then
	say "ingot's tools: building in $TR (gcc $(chroot "$TR" gcc -dumpfullversion))"
	build tools
	rm -rf "$TK.tmp" && mkdir -p "$TK.tmp"
	cp "$TR/build/tools/out/ingot" "$TR/build/tools/out/ingot-init" "$TK.tmp/"
	# the packages of what ingot loads: its libraries and the TPM device
	# TCTI that tss2-tctildr dlopens
	chroot "$TR" sh -c 'ldd /build/tools/out/ingot | awk "/=> \\//{print \$3}";
		ls /usr/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0' |
		while read -r lib; do
			chroot "$TR" dpkg -S "$(chroot "$TR" readlink -f "$lib")" ||
				{ say "ingot's tools: no package ships $lib"; exit 1; }
		done |
		cut -d: -f1 | sort -u > "$TK.tmp/packages"
	if [ "${INGOT_TOOLS_AGAIN:-0}" = 1 ]; then
		build again-$$
		cmp "$TR/build/tools/out/ingot" "$TR/build/again-$$/out/ingot" &&
			cmp "$TR/build/tools/out/ingot-init" "$TR/build/again-$$/out/ingot-init" ||
			{ say "FAIL: ingot's tools built in /build/again-$$ differ from those built in /build/tools"; exit 1; }
		say "reproducibility: ingot and ingot-init built in two directories are byte-identical"
		rm -rf "$TR/build/again-$$"
	fi
	rm -rf "$TR/build/tools"
	mv "$TK.tmp" "$TK"
fi
mkdir -p "$OUTDIR"
cp "$TK/ingot" "$TK/ingot-init" "$TK/packages" "$OUTDIR/"
