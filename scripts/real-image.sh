#!/bin/bash
# make real-image: the real golden images from Debian's NVIDIA and AMD bits.
#   scripts/real-image.sh [--check|--check-image] BUILD [OUTDIR]   (default build out/real)
# One pipeline, one run per pool (INGOT_REAL_POOLS, default both):
# recipes/real/POOL.yaml is the pool's recipe and recipes/real/POOL.pool
# its inputs and what differs between vendors (root filesystem packages,
# out-of-tree modules built and signed or none, firmware chosen by data),
# with the lines both share in recipes/real/inputs.pins.  From those
# (every download checked against its pin):
#   1. the packages, through a private apt configuration (the system's
#      sources are never changed; nothing is installed on the host);
#   2. a trixie build chroot (mmdebstrap, buildd) with Debian's split
#      kernel headers, where a pool's out-of-tree modules (a modules line:
#      NVIDIA's open modules) are built reproducibly
#      (scripts/real-modules.sh), stripped and then signed for Secure Boot
#      with the db key (scripts/real-secure-boot.sh); a firmware line takes
#      the files the kernel's driver names for the pool's IP blocks;
#   3. modules.dep and friends for the image's kernel (depmod in the chroot);
#   4. ingot and ingot-init built in a trixie chroot (scripts/real-tools.sh),
#      then the root filesystem (mmdebstrap minbase: systemd, kmod, udev,
#      the libraries ingot loads and the GPU userspace installed by apt
#      from the verified .debs);
#   5. OUT/NAME.vars, the NAME=VALUE the recipe's ${...} resolve to
#      (paths and sha256 of what was produced; `ingot build --set`),
#      OUT/NAME-test.yaml (the recipe plus the boot test's layer) and the
#      production image itself, built from recipes/real/POOL.yaml.
# Outputs are pinned in the pool's outputs file (scripts/real-pins.sh):
# by default the script rewrites it and names each line that moved;
# INGOT_REAL_PINS=check fails instead, naming them, and leaves the file.
# Everything slow is cached outside the clone, keyed by what it is made
# from, in $INGOT_REAL_CACHE (default /var/cache/ingot-real).
# --check: also build the modules a second time in another directory and
# the image a second time under umask 077, another TZ, locale and build
# path, and fail unless the bytes are the same.  --check-image: only the
# image a second time (minutes; the module build is the slow half).
set -euo pipefail
CHECK=0
case ${1:-} in
--check) CHECK=1; shift ;;
--check-image) CHECK=2; shift ;;
esac
BUILD=${1:-build}
OUT=${2:-out/real}
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# One run per pool: the same steps, the pool's data (and the same check).
if [ -z "${REAL_POOL:-}" ]; then
	mode=()
	[ "$CHECK" != 1 ] || mode=(--check)
	[ "$CHECK" != 2 ] || mode=(--check-image)
	for p in ${INGOT_REAL_POOLS:-nvidia-h100 amd-mi300x}; do
		REAL_POOL=$p "$0" "${mode[@]}" "$BUILD" "$OUT" || exit 1
	done
	exit 0
fi
POOLF=recipes/real/$REAL_POOL.pool
[ -f "$POOLF" ] || { echo "real-image: $POOLF: no such pool" >&2; exit 1; }
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
# Nothing below may depend on the caller's umask, zone or locale.
umask 022
export LC_ALL=C TZ=UTC
unset SOURCE_DATE_EPOCH
INGOT=$ROOT/$BUILD/ingot
INIT=$ROOT/$BUILD/ingot-init
CACHE=${INGOT_REAL_CACHE:-/var/cache/ingot-real}
RECIPE=recipes/real/$(awk '$1 == "recipe" { print $2 }' "$POOLF")
OUTPINS=recipes/real/$(awk '$1 == "outputs" { print $2 }' "$POOLF")
[ -f "$RECIPE" ] && [ "$OUTPINS" != recipes/real/ ] || { echo "real-image: $POOLF: recipe and outputs lines expected" >&2; exit 1; }
NAME=$(sed -n 's/^name: *//p' "$RECIPE")
mkdir -p "$OUT"
# the pool's inputs: the shared lines, then its own
PINS=$OUT/$REAL_POOL.inputs
cat recipes/real/inputs.pins "$POOLF" > "$PINS"
T0=$(date +%s)
say() { echo "real-image: $REAL_POOL: $*" >&2; }
die() { say "$*"; exit 1; }
step() { say "[$(($(date +%s) - T0)) s] $*"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
key() { printf '%s\n' "$@" | sha256sum | cut -c1-16; }
. scripts/real-secure-boot.sh
[ -x "$INGOT" ] && [ -x "$INIT" ] || die "$INGOT or $INIT not built (run make)"
for t in mmdebstrap dpkg-deb apt-get patch strip unshare openssl; do
	command -v "$t" >/dev/null || die "$t not found (scripts/deps.sh installs it)"
done
mkdir -p "$CACHE/debs" "$CACHE/apt/lists/partial" "$OUT"

# --- the pins ---------------------------------------------------------------
EPOCH=$(awk '$1 == "epoch" { print $2 }' "$PINS")
SUITE=$(awk '$1 == "suite" { print $2 }' "$PINS")
COMPONENTS=$(awk '$1 == "suite" { print $3 }' "$PINS")
INCLUDES=$(awk '$1 == "include" { $1 = ""; print }' "$PINS" | xargs | tr ' ' ',')
[ -n "$EPOCH" ] && [ -n "$SUITE" ] && [ -n "$COMPONENTS" ] || die "$PINS: epoch and suite lines expected"
# pin FIELD PKG: version or sha256 of a deb line
pin() { awk -v p="$2" -v f="$1" '$1 == "deb" && $3 == p { print (f == "version" ? $4 : $5) }' "$PINS"; }
debs_of() { awk -v s="$1" '$1 == "deb" && $2 == s { print $3 }' "$PINS"; }
KV=$(debs_of trixie | sed -n 's/^linux-image-//p')
[ -n "$KV" ] || die "$PINS: no linux-image-* deb line"

# --- 1. downloads -----------------------------------------------------------
MIRROR=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$MIRROR" ] || MIRROR=$(awk '$1 == "deb" && $2 ~ /:\/\// { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$MIRROR" ] || die "no Debian mirror in the system's apt sources"
cat > "$CACHE/apt/$SUITE.sources.tmp" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE
Components: ${COMPONENTS//,/ }
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
mv "$CACHE/apt/$SUITE.sources.tmp" "$CACHE/apt/$SUITE.sources"
APT=(-o "Dir::Etc::sourcelist=$CACHE/apt/$SUITE.sources" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$CACHE/apt/lists")
deb_path() { echo "$CACHE/debs/$1_$(pin version "$1" | sed 's/:/%3a/')_$(dpkg --print-architecture).deb"; }
deb_path_all() { local p; p=$(deb_path "$1"); [ -f "$p" ] || p=${p%_*}_all.deb; echo "$p"; }
updated=0
for pkg in $(awk '$1 == "deb" { print $3 }' "$PINS"); do
	f=$(deb_path_all "$pkg")
	if [ ! -f "$f" ]; then
		# read before the cd: $PINS is relative to the checkout
		v=$(pin version "$pkg")
		if [ "$(awk -v p="$pkg" '$1 == "deb" && $3 == p { print $2 }' "$PINS")" = host ]; then
			(cd "$CACHE/debs" && apt-get download "$pkg=$v" >/dev/null 2>&1) ||
				die "apt-get download $pkg=$v failed"
		else
			[ "$updated" = 1 ] || { step "apt-get update (private configuration, $SUITE)"; apt-get "${APT[@]}" update >/dev/null; updated=1; }
			(cd "$CACHE/debs" && apt-get "${APT[@]}" download "$pkg=$v" >/dev/null 2>&1) ||
				die "apt-get download $pkg=$v ($SUITE) failed"
		fi
		f=$(deb_path_all "$pkg")
	fi
	[ -f "$f" ] || die "$pkg: the download is not where expected ($f)"
	got=$(sha "$f")
	[ "$got" = "$(pin sha256 "$pkg")" ] ||
		die "$PINS: $pkg $(pin version "$pkg"): expected sha256 $(pin sha256 "$pkg"), got $got ($f)"
done
PATCHES=()
while read -r _ file want; do
	got=$(sha "recipes/real/patches/$file")
	[ "$got" = "$want" ] || die "$PINS: patch $file: expected sha256 $want, got $got"
	PATCHES+=("$ROOT/recipes/real/patches/$file")
done < <(awk '$1 == "patch"' "$PINS")
MODSRC=$(awk '$1 == "modules" { print $2 }' "$PINS")
read -r _ FWMOD FWPKG FWBLOCKS < <(awk '$1 == "firmware"' "$PINS"; echo) || true
step "inputs: $(awk '$1 == "deb"' "$PINS" | wc -l) packages and ${#PATCHES[@]} patch(es) match their pins"

# --- 2. the build chroot and the modules ----------------------------------------
BR_INCLUDE=pahole,libelf1t64,libssl3t64,zlib1g,linux-base,kmod,xz-utils,bc,bison,flex
HDRS=(linux-headers-$KV linux-headers-${KV%-amd64}-common linux-kbuild-${KV%-amd64})
BRKEY=$(key buildd "$SUITE" "$EPOCH" "$BR_INCLUDE" "${HDRS[@]/%/=}" $(for h in "${HDRS[@]}"; do pin sha256 "$h"; done))
BR=$CACHE/buildroot-$BRKEY
if [ ! -d "$BR" ]; then
	step "build chroot: mmdebstrap --variant=buildd $SUITE (a few minutes, cached as $BR)"
	rm -rf "$BR.tmp"
	SOURCE_DATE_EPOCH=$EPOCH mmdebstrap --quiet --variant=buildd --include="$BR_INCLUDE" \
		"$SUITE" "$BR.tmp" "deb $MIRROR $SUITE main" >&2
	# Debian's split headers, unpacked (installing them pulls in the kernel).
	for h in "${HDRS[@]}"; do dpkg-deb -x "$(deb_path_all "$h")" "$BR.tmp"; done
	mv "$BR.tmp" "$BR"
fi
GCC=$(chroot "$BR" gcc --version | head -n 1)
MODS=
if [ -n "$MODSRC" ]; then
SRCDEB=$(deb_path "$MODSRC")
MODKEY=$(key "$BRKEY" "$(sha "$SRCDEB")" "$(cat "${PATCHES[@]}" | sha256sum)" "$(sha scripts/real-modules.sh)")
MODS=$CACHE/modules-$MODKEY.tar
cat "${PATCHES[@]}" > "$CACHE/patches-$MODKEY"
fi
if [ -n "$MODSRC" ] && [ ! -f "$MODS" ]; then
	step "$MODSRC: building the modules in the chroot (about 5 minutes on 2 idle cores)"
	scripts/real-modules.sh "$BR" "$SRCDEB" "$CACHE/patches-$MODKEY" "$KV" "m-$MODKEY" "$MODS"
fi
if [ -n "$MODSRC" ] && [ "$CHECK" = 1 ]; then
	step "reproducibility: the modules again, in another directory"
	scripts/real-modules.sh "$BR" "$SRCDEB" "$CACHE/patches-$MODKEY" "$KV" "again-$$" "$OUT/modules-again.tar"
	cmp -s "$MODS" "$OUT/modules-again.tar" ||
		die "FAIL: the modules built in /build/again-$$ differ from those built in /build/m-$MODKEY"
	step "reproducibility: modules built in two directories are byte-identical ($(sha "$MODS"))"
	rm -f "$OUT/modules-again.tar"
fi

# --- 3. modules.dep and friends (depmod of the chroot: the image's kmod) ------
KDEB=$(deb_path "linux-image-$KV")
DEPKEY=$(key "$BRKEY" "$(sha "$KDEB")" "${MODS:+$(sha "$MODS")}")
DEPMOD=$CACHE/depmod-$DEPKEY.tar
if [ ! -f "$DEPMOD" ]; then
	step "depmod $KV over the kernel's modules${MODS:+ and those of $MODSRC}"
	S=$BR/build/depmod
	rm -rf "$S" && mkdir -p "$S" && ln -s usr/lib "$S/lib"
	dpkg-deb --fsys-tarfile "$KDEB" | tar -x -C "$S" ./usr/lib/modules
	[ -z "$MODS" ] || tar -x -C "$S" -f "$MODS"
	ls "$S/usr/lib/modules/$KV" > "$S/shipped"
	chroot "$BR" depmod -b /build/depmod "$KV"
	(cd "$S/usr/lib/modules/$KV" && ls modules.* | grep -vxF -f "$S/shipped") > "$S/made"
	tar --sort=name --mtime=@"$EPOCH" --owner=0 --group=0 --numeric-owner --mode=u=rwX,go=rX \
		--format=gnu -C "$S" -cf "$DEPMOD.tmp" $(sed "s|^|usr/lib/modules/$KV/|" "$S/made")
	mv "$DEPMOD.tmp" "$DEPMOD"
	rm -rf "$S"
fi

# --- 3b. the modules signed with the db key (Secure Boot) ------------------
# The UKI is signed by ingot build with the same key (boot.secure-boot).
sb_keys "$OUT/secure-boot"
mkdir -p "$OUT/layers"
# named for the vendor (nvidia-modules-signed.tar: the boot test reads it)
SMODS=$OUT/layers/${MODSRC%%-*}-modules-signed.tar
if [ -n "$MODS" ]; then
step "signing the $MODSRC modules (sign-file sha256, db certificate $(openssl x509 -in "$SB_CERT" -noout -subject -nameopt compat | sed 's/^subject=//'))"
sb_sign_modules "$BR" "$KV" "$MODS" "$SMODS" "$EPOCH" "$SB_KEY" "$SB_CERT"
if [ "$CHECK" = 1 ]; then
	sb_sign_modules "$BR" "$KV" "$MODS" "$OUT/modules-signed-again.tar" "$EPOCH" "$SB_KEY" "$SB_CERT"
	cmp -s "$SMODS" "$OUT/modules-signed-again.tar" || die "FAIL: the modules signed twice with one key differ"
	step "reproducibility: the modules signed twice with the same key are byte-identical ($(sha "$SMODS"))"
	rm -f "$OUT/modules-signed-again.tar"
fi
fi

# --- 3c. firmware by data: what the kernel's driver names for the pool's IP blocks
FW=
if [ -n "$FWMOD" ]; then
	FWKEY=$(key firmware "$(sha "$KDEB")" "$(pin sha256 "$FWPKG")" "$FWMOD" $FWBLOCKS)
	FW=$CACHE/firmware-$FWKEY.tar
	if [ ! -f "$FW" ]; then
		S=$OUT/firmware.tmp
		rm -rf "$S" && mkdir -p "$S/k" "$S/p" "$S/t/usr/lib/firmware"
		dpkg-deb --fsys-tarfile "$KDEB" | tar -x -C "$S/k" --wildcards "*/$FWMOD.ko*"
		mod=$(find "$S/k" -name "$FWMOD.ko*" | head -n 1)
		[ -n "$mod" ] || die "$KDEB: no $FWMOD.ko (firmware line of $POOLF)"
		re=$(printf '%s|' $FWBLOCKS); re="^$FWMOD/(${re%|})[_.]"
		/sbin/modinfo -F firmware "$mod" | grep -E "$re" | sort -u > "$S/names"
		[ -s "$S/names" ] || die "$FWMOD.ko names no firmware for IP blocks $FWBLOCKS ($POOLF)"
		dpkg-deb -x "$(deb_path_all "$FWPKG")" "$S/p"
		while read -r f; do
			[ -f "$S/p/usr/lib/firmware/$f" ] ||
				die "$FWPKG $(pin version "$FWPKG"): no $f, which $FWMOD.ko names for the pool's GPU ($POOLF: $FWBLOCKS)"
			install -D -m 0644 "$S/p/usr/lib/firmware/$f" "$S/t/usr/lib/firmware/$f"
		done < "$S/names"
		tar --sort=name --mtime=@"$EPOCH" --owner=0 --group=0 --numeric-owner --mode=u=rwX,go=rX \
			--format=gnu -C "$S/t" -cf "$FW.tmp" .
		mv "$FW.tmp" "$FW"
		rm -rf "$S"
	fi
	step "firmware: $(tar -tf "$FW" | grep -c '\.bin$') files $FWMOD.ko names for $FWBLOCKS, from $FWPKG $(pin version "$FWPKG")"
fi

# --- ingot's tools, built from pinned inputs (scripts/real-tools.sh) --------
# Their libraries come into the root filesystem as Debian packages.
scripts/real-tools.sh "$CACHE" "$SUITE" "$EPOCH" "$MIRROR" "$OUT/tools"
INCLUDES="$INCLUDES,$(paste -sd, "$OUT/tools/packages")"
INIT=$OUT/tools/ingot-init

# --- 4. the root filesystem -------------------------------------------------
ROOTFS_DEBS=()
for p in $(debs_of rootfs); do ROOTFS_DEBS+=("--include=$(deb_path_all "$p")"); done
ROOTFS_HOOK='printf "ingot\n" > "$1/etc/hostname"; chmod 0644 "$1/etc/hostname"; : > "$1/etc/resolv.conf"; chmod 0644 "$1/etc/resolv.conf"; : > "$1/etc/apt/sources.list"'
RFKEY=$(key minbase "$ROOTFS_HOOK" "$SUITE" "$EPOCH" "$COMPONENTS" "$INCLUDES" $(for p in $(debs_of rootfs); do pin sha256 "$p"; done))
ROOTFS=$CACHE/rootfs-$RFKEY.tar
if [ ! -f "$ROOTFS" ]; then
	step "root filesystem: mmdebstrap --variant=minbase $SUITE (a few minutes, cached as $ROOTFS)"
	rm -rf "$ROOTFS.dir"
	# mmdebstrap copies the host's /etc/hostname and /etc/resolv.conf in,
	# and writes the build host's mirror into /etc/apt/sources.list: the
	# image must not depend on the machine that built it (and a golden
	# image installs nothing, so it names no archive).
	SOURCE_DATE_EPOCH=$EPOCH mmdebstrap --quiet --variant=minbase --components="$COMPONENTS" \
		--include="$INCLUDES" "${ROOTFS_DEBS[@]}" --customize-hook="$ROOTFS_HOOK" \
		"$SUITE" "$ROOTFS.dir" "$MIRROR" >&2
	# A tar of our own making: sorted, one mtime, numeric owners.
	tar --sort=name --mtime=@"$EPOCH" --numeric-owner --format=gnu -C "$ROOTFS.dir" -cf "$ROOTFS.tmp" .
	mv "$ROOTFS.tmp" "$ROOTFS"
	rm -rf "$ROOTFS.dir"
fi
[ -z "$(tar -xOf "$ROOTFS" ./etc/apt/sources.list)" ] ||
	die "$ROOTFS: /etc/apt/sources.list names an archive (the build host's mirror): expected empty"
# What apt installed, and the pinned GPU packages at their pinned versions.
tar -xOf "$ROOTFS" ./var/lib/dpkg/status |
	awk '/^Package:/ { p = $2 } /^Version:/ { print p, $2 }' | sort > "$CACHE/rootfs-$RFKEY.packages"
for p in $(debs_of rootfs); do
	grep -qxF "$p $(pin version "$p")" "$CACHE/rootfs-$RFKEY.packages" ||
		die "root filesystem: $p $(pin version "$p") expected, got '$(grep "^$p " "$CACHE/rootfs-$RFKEY.packages" || echo none)'"
done

# --- 5. ingot's own layers, the recipes, the image --------------------------
# tarball DIR OUT: a layer tar that depends only on the files' content
# and their executable bit, never on umask, owner or clock.
tarball() {
	tar --sort=name --mtime=@"$EPOCH" --owner=0 --group=0 --numeric-owner --mode=u+rw,go=u-w \
		--format=gnu -C "$1" -cf "$2.tmp" .
	mv "$2.tmp" "$2"
}
# ingot's own layers are made from this checkout each run: they live in
# $OUT, never in the cache another checkout may be building from.
LAY=$OUT/layers
mkdir -p "$LAY"
L=$OUT/layers.tmp
rm -rf "$L" && mkdir -p "$L/tools/opt/ingot/bin" "$L/tools/opt/ingot/recipes"
# built in the tools chroot; it runs with the image's own libraries
cp "$OUT/tools/ingot" "$L/tools/opt/ingot/bin/ingot"
cp -r recipes/rules "$L/tools/opt/ingot/recipes/rules"
tarball "$L/tools" "$LAY/ingot-tools.tar"
# The signing key: an operator's (INGOT_REAL_KEY=PREFIX: PREFIX.key and
# PREFIX.pub) or the repository's test-only key.  Its keyring is baked into
# the image (below), so the key is an input of the image's bytes: a key
# made afresh here would give every checkout other bytes than the pins.
KEY=$OUT/signing
KEYSRC=${INGOT_REAL_KEY:-recipes/real/test-only-signing}
[ -f "$KEYSRC.key" ] && [ -f "$KEYSRC.pub" ] || die "INGOT_REAL_KEY: expected $KEYSRC.key and $KEYSRC.pub"
install -m 600 "$KEYSRC.key" "$KEY.key" && install -m 644 "$KEYSRC.pub" "$KEY.pub"
rm -f "$OUT/keyring.json"
# The test's one key, named for each role it signs in (docs/signing.md).
"$INGOT" keys keyring add "$OUT/keyring.json" "$KEY.pub" --name real-image --role manifest,enrolment,firmware-ref >/dev/null
# The image's own trust anchor (/etc/ingot/keyring.json, these roles):
# the pre-check verifies the manifest it fetches from the verifier by its
# manifest role (and the enrolment record and firmware reference by
# theirs).  In the verity-protected image, measured in PCR 15: the boot
# chain covers it.
cp -a verify/boot/image "$L/boot" && mkdir -p "$L/boot/etc/ingot" && cp "$OUT/keyring.json" "$L/boot/etc/ingot/keyring.json" &&
	tarball "$L/boot" "$LAY/ingot-boot.tar"
cp -a verify/boot/test "$L/test" && tarball "$L/test" "$LAY/ingot-test-layer.tar"
rm -rf "$L"

# --- the recipe's ${...}: what was produced here, by path and sha256 ------
var() { printf '%s=%s\n%s_SHA256=%s\n' "$1" "$2" "$1" "$(sha "$2")"; }
{
	var ROOTFS "$ROOTFS"
	echo "KERNEL_DEB=$KDEB"
	echo "STUB_DEB=$(deb_path systemd-boot-efi)"
	[ -z "$MODS" ] || var MODULES "$SMODS"
	[ -z "$FW" ] || var AMDGPU_FIRMWARE "$FW"
	var DEPMOD "$DEPMOD"
	var INGOT_TOOLS "$LAY/ingot-tools.tar"
	var INGOT_BOOT "$LAY/ingot-boot.tar"
	var INGOT_TEST_LAYER "$LAY/ingot-test-layer.tar"
	var INIT "$INIT"
	# the SBOM's version of what this checkout built (ingot-init, the tools)
	echo "INGOT_VERSION=$("$INGOT" --version | sed -n 's/^ingot //p')"
	var SB_KEY "$SB_KEY"
	var SB_CERT "$SB_CERT"
} > "$OUT/$NAME.vars"
mapfile -t SETS < <(sed 's/^/--set=/' "$OUT/$NAME.vars")
# The boot test's recipe: the pool's, plus the test layer and a test-only
# kernel parameter, under another name.
awk -v n="$NAME" '
	$0 == "name: " n { print "name: " n "-test"; next }
	# the pool the image fetches its manifest for (ingot-verify-boot)
	$0 == "      pool=" n { print "      pool=" n "-test"; next }
	$0 == "directories:" {
		print "  # TEST LAYER: the boot test\047s evidence courier (verify/boot/test)"
		print "  - name: ingot-test-layer\n    kind: tar\n    source: ${INGOT_TEST_LAYER}\n    sha256: ${INGOT_TEST_LAYER_SHA256}\n"
	}
	/^  cmdline: / {
		print "  # TEST ONLY: under QEMU TCG on a loaded host the IO-APIC timer check can fail"
		print "  # and panic; never in the production UKI."
		sub(/panic=-1/, "panic=-1 no_timer_check")
	}
	{ print }' "$RECIPE" > "$OUT/$NAME-test.yaml.tmp"
grep -q 'no_timer_check' "$OUT/$NAME-test.yaml.tmp" && grep -q '^  - name: ingot-test-layer' "$OUT/$NAME-test.yaml.tmp" &&
	grep -qx "      pool=$NAME-test" "$OUT/$NAME-test.yaml.tmp" ||
	die "$RECIPE: the test recipe could not be derived (name, directories:, boot.cmdline and pool= lines expected)"
mv "$OUT/$NAME-test.yaml.tmp" "$OUT/$NAME-test.yaml"
rm -f "$OUT/$NAME.yaml"

# A pool the sourced rules refuse (its pool file's refused-by line) is a
# finding, not a failed build: lint must refuse it by exactly those rules,
# then the image is built with --no-lint for the record.
REFUSED=$(awk '$1 == "refused-by" { $1 = ""; print }' "$POOLF" | xargs -rn1 | sort | xargs)
NOLINT=()
if [ -n "$REFUSED" ]; then
	rc=0
	"$INGOT" lint "$RECIPE" --json > "$OUT/$NAME.lint.json.tmp" || rc=$?
	got=$(jq -r '.findings[] | select(.severity == "error") | .rule' "$OUT/$NAME.lint.json.tmp" | sort -u | xargs)
	[ "$rc" = 2 ] && [ "$got" = "$REFUSED" ] ||
		die "$RECIPE: ingot lint (exit $rc) refuses by '$got'; $POOLF: refused-by expected '$REFUSED'"
	mv "$OUT/$NAME.lint.json.tmp" "$OUT/$NAME.lint.json"
	step "$NAME: the pool is REFUSED by the sourced rules $REFUSED ($OUT/$NAME.lint.json, docs/tuple.md); built with --no-lint for the record"
	NOLINT=(--no-lint)
fi
step "ingot build $NAME"
B0=$(date +%s)
"$INGOT" build "$RECIPE" "${SETS[@]}" "${NOLINT[@]}" -o "$OUT" --store "$CACHE/store" --key "$KEY.key" --quiet
step "built $OUT/$NAME.sqfs in $(($(date +%s) - B0)) s"

# --- the output pins ---------------------------------------------------------
# the SBOM against the image's own dpkg database (a failure stops here)
SBOM_CHECK=$(scripts/sbom-dpkg-check.sh "$OUT/$NAME.sqfs" "$OUT/$NAME.spdx.json")
step "${SBOM_CHECK#sbom-dpkg-check: }"
{
	echo "# Written by scripts/real-image.sh from what it produced (do not edit):"
	echo "# the same inputs.pins must give these bytes on any machine."
	echo "# build chroot: $GCC"
	for f in $MODS $FW "$DEPMOD" "$ROOTFS" "$LAY/ingot-tools.tar" "$LAY/ingot-boot.tar" "$LAY/ingot-test-layer.tar"; do
		echo "artifact $(basename "$f" | sed 's/-[0-9a-f]\{16\}\.tar$//; s/\.tar$//') $(sha "$f")"
	done
	[ -z "$MODS" ] || tar -tf "$MODS" | grep '\.ko$' | sort | while read -r m; do
		echo "module $(basename "$m") $(tar -xOf "$MODS" "$m" | sha256sum | cut -d' ' -f1)"
	done
	# what a node boots and what is signed: the image, its verity tree and
	# root, the UKI, the manifest and the SBOM
	echo "image $NAME.sqfs $(sha "$OUT/$NAME.sqfs")"
	echo "verity $NAME.verity $(sha "$OUT/$NAME.verity")"
	echo "verity-root $NAME $(jq -r .verity.root_hash "$OUT/$NAME.manifest.json")"
	echo "uki $NAME.efi $(sha "$OUT/$NAME.efi")"
	echo "manifest $NAME.manifest.json $(sha "$OUT/$NAME.manifest.json")"
	echo "sbom $NAME.spdx.json $(sha "$OUT/$NAME.spdx.json")"
	sed 's/^/package /' "$CACHE/rootfs-$RFKEY.packages"
} > "$OUTPINS.tmp"
scripts/real-pins.sh "${INGOT_REAL_PINS:-record}" "$OUTPINS" "$OUTPINS.tmp" || exit 1
step "done: $OUT/$NAME.{efi,sqfs,verity,manifest.dsse.json} ($(du -m "$OUT/$NAME.sqfs" | cut -f1) MiB image)"

if [ "$CHECK" != 0 ]; then
	# The whole recipe again from another directory, umask, zone and locale:
	# the same image, verity root and UKI.
	step "reproducibility: the image again under umask 077, TZ=Asia/Kolkata, LC_ALL=C.UTF-8, another path"
	A=$OUT/again && rm -rf "$A" && mkdir -p "$A"
	(umask 077; cd /; TZ=Asia/Kolkata LC_ALL=C.UTF-8 "$INGOT" build "$ROOT/$RECIPE" "${SETS[@]}" "${NOLINT[@]}" -o "$A/out" \
		--store "$A/store" --quiet)
	for x in sqfs verity efi manifest.json; do
		cmp -s "$OUT/$NAME.$x" "$A/out/$NAME.$x" || die "FAIL: $NAME.$x differs when built again"
	done
	step "reproducibility: $NAME.sqfs, .verity, .efi and the manifest are byte-identical"
	rm -rf "$A"
fi
