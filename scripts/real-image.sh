#!/bin/bash
# make real-image: the real golden image from Debian's NVIDIA bits.
#   scripts/real-image.sh [--check|--check-image] BUILD [OUTDIR]   (default build out/real)
# From recipes/real/inputs.pins (every download checked against its pin):
#   1. the packages, through a private apt configuration (the system's
#      sources are never changed; nothing is installed on the host);
#   2. a trixie build chroot (mmdebstrap, buildd) with Debian's split
#      kernel headers, where NVIDIA's open modules are built
#      reproducibly (scripts/real-modules.sh), stripped and then signed
#      for Secure Boot with the db key (scripts/real-secure-boot.sh);
#   3. modules.dep and friends for the image's kernel (depmod in the chroot);
#   4. ingot and ingot-init built in a trixie chroot (scripts/real-tools.sh),
#      then the root filesystem (mmdebstrap minbase: systemd, kmod, udev,
#      the libraries ingot loads and the GPU userspace installed by apt
#      from the verified .debs);
#   5. the recipes OUT/real-h100.yaml (production) and
#      OUT/real-h100-test.yaml (plus the boot test's layer), with pins
#      written from what was produced, and the production image itself.
# Outputs are pinned in recipes/real/outputs.pins (scripts/real-pins.sh):
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
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
# Nothing below may depend on the caller's umask, zone or locale.
umask 022
export LC_ALL=C TZ=UTC
unset SOURCE_DATE_EPOCH
INGOT=$ROOT/$BUILD/ingot
INIT=$ROOT/$BUILD/ingot-init
CACHE=${INGOT_REAL_CACHE:-/var/cache/ingot-real}
PINS=recipes/real/inputs.pins
OUTPINS=recipes/real/outputs.pins
NAME=real-h100
T0=$(date +%s)
say() { echo "real-image: $*" >&2; }
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
SRCDEB=$(deb_path nvidia-open-kernel-source)
MODKEY=$(key "$BRKEY" "$(sha "$SRCDEB")" "$(cat "${PATCHES[@]}" | sha256sum)" "$(sha scripts/real-modules.sh)")
MODS=$CACHE/modules-$MODKEY.tar
cat "${PATCHES[@]}" > "$CACHE/patches-$MODKEY"
if [ ! -f "$MODS" ]; then
	step "NVIDIA open modules: building in the chroot (about 5 minutes on 2 idle cores)"
	scripts/real-modules.sh "$BR" "$SRCDEB" "$CACHE/patches-$MODKEY" "$KV" "m-$MODKEY" "$MODS"
fi
if [ "$CHECK" = 1 ]; then
	step "reproducibility: the modules again, in another directory"
	scripts/real-modules.sh "$BR" "$SRCDEB" "$CACHE/patches-$MODKEY" "$KV" "again-$$" "$OUT/modules-again.tar"
	cmp -s "$MODS" "$OUT/modules-again.tar" ||
		die "FAIL: the modules built in /build/again-$$ differ from those built in /build/m-$MODKEY"
	step "reproducibility: modules built in two directories are byte-identical ($(sha "$MODS"))"
	rm -f "$OUT/modules-again.tar"
fi

# --- 3. modules.dep and friends (depmod of the chroot: the image's kmod) ------
KDEB=$(deb_path "linux-image-$KV")
DEPKEY=$(key "$BRKEY" "$(sha "$KDEB")" "$(sha "$MODS")")
DEPMOD=$CACHE/depmod-$DEPKEY.tar
if [ ! -f "$DEPMOD" ]; then
	step "depmod $KV over the kernel's and NVIDIA's modules"
	S=$BR/build/depmod
	rm -rf "$S" && mkdir -p "$S" && ln -s usr/lib "$S/lib"
	dpkg-deb --fsys-tarfile "$KDEB" | tar -x -C "$S" ./usr/lib/modules
	tar -x -C "$S" -f "$MODS"
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
SMODS=$OUT/layers/nvidia-modules-signed.tar
step "signing the NVIDIA modules (sign-file sha256, db certificate $(openssl x509 -in "$SB_CERT" -noout -subject -nameopt compat | sed 's/^subject=//'))"
sb_sign_modules "$BR" "$KV" "$MODS" "$SMODS" "$EPOCH" "$SB_KEY" "$SB_CERT"
if [ "$CHECK" = 1 ]; then
	sb_sign_modules "$BR" "$KV" "$MODS" "$OUT/modules-signed-again.tar" "$EPOCH" "$SB_KEY" "$SB_CERT"
	cmp -s "$SMODS" "$OUT/modules-signed-again.tar" || die "FAIL: the modules signed twice with one key differ"
	step "reproducibility: the modules signed twice with the same key are byte-identical ($(sha "$SMODS"))"
	rm -f "$OUT/modules-signed-again.tar"
fi

# --- ingot's tools, built from pinned inputs (scripts/real-tools.sh) --------
# Their libraries come into the root filesystem as Debian packages.
scripts/real-tools.sh "$CACHE" "$SUITE" "$EPOCH" "$MIRROR" "$OUT/tools"
INCLUDES="$INCLUDES,$(paste -sd, "$OUT/tools/packages")"
INIT=$OUT/tools/ingot-init

# --- 4. the root filesystem -------------------------------------------------
ROOTFS_DEBS=()
for p in $(debs_of rootfs); do ROOTFS_DEBS+=("--include=$(deb_path_all "$p")"); done
ROOTFS_HOOK='printf "ingot\n" > "$1/etc/hostname"; chmod 0644 "$1/etc/hostname"; : > "$1/etc/resolv.conf"; chmod 0644 "$1/etc/resolv.conf"'
RFKEY=$(key minbase "$ROOTFS_HOOK" "$SUITE" "$EPOCH" "$COMPONENTS" "$INCLUDES" $(for p in $(debs_of rootfs); do pin sha256 "$p"; done))
ROOTFS=$CACHE/rootfs-$RFKEY.tar
if [ ! -f "$ROOTFS" ]; then
	step "root filesystem: mmdebstrap --variant=minbase $SUITE (a few minutes, cached as $ROOTFS)"
	rm -rf "$ROOTFS.dir"
	# mmdebstrap copies the host's /etc/hostname and /etc/resolv.conf in:
	# the image must not depend on the machine that built it.
	SOURCE_DATE_EPOCH=$EPOCH mmdebstrap --quiet --variant=minbase --components="$COMPONENTS" \
		--include="$INCLUDES" "${ROOTFS_DEBS[@]}" --customize-hook="$ROOTFS_HOOK" \
		"$SUITE" "$ROOTFS.dir" "$MIRROR" >&2
	# A tar of our own making: sorted, one mtime, numeric owners.
	tar --sort=name --mtime=@"$EPOCH" --numeric-owner --format=gnu -C "$ROOTFS.dir" -cf "$ROOTFS.tmp" .
	mv "$ROOTFS.tmp" "$ROOTFS"
	rm -rf "$ROOTFS.dir"
fi
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
cp -a verify/boot/image "$L/boot" && tarball "$L/boot" "$LAY/ingot-boot.tar"
cp -a verify/boot/test "$L/test" && tarball "$L/test" "$LAY/ingot-test-layer.tar"
rm -rf "$L"

# The tuple's versions are the pinned packages' (upstream part).
tv() { sed -n "/^  $1:/,/^  [a-z]/s/^    version: \"\{0,1\}\([0-9.]*\).*/\1/p" recipes/real/tuple.yaml | head -n 1; }
up() { pin version "$1" | sed 's/-[^-]*$//; s/-1$//'; }
[ "$(tv driver)" = "$(up nvidia-open-kernel-source)" ] && [ "$(tv driver)" = "$(up nvidia-smi)" ] ||
	die "recipes/real/tuple.yaml: driver.version: expected $(up nvidia-open-kernel-source) (inputs.pins), got $(tv driver)"
case $(up libcudart12) in "$(tv cuda)".*) ;; *)
	die "recipes/real/tuple.yaml: cuda.version: expected a prefix of $(up libcudart12) (inputs.pins), got $(tv cuda)" ;; esac
case $(up libnccl2) in "$(tv nccl)"*) ;; *)
	die "recipes/real/tuple.yaml: nccl.version: expected $(up libnccl2) (inputs.pins), got $(tv nccl)" ;; esac
version_of() { awk -v p="$1" '$1 == p { print $2 }' "$CACHE/rootfs-$RFKEY.packages"; }
art() { # NAME KIND SOURCE [EXTRA-LINES]
	printf '  - name: %s\n    kind: %s\n    source: %s\n    sha256: %s\n' "$1" "$2" "$3" "$(sha "$3")"
	[ -z "${4:-}" ] || printf '%s\n' "$4"
}
# the modules' inputs, for the SBOM's GENERATED_FROM (recipe built-from:)
built_from() {
	local v arch
	v=$(pin version nvidia-open-kernel-source)
	arch=$(dpkg-deb -f "$SRCDEB" Architecture)
	printf '    built-from:\n      - {name: nvidia-open-kernel-source, version: "%s", sha256: %s,\n' "$v" "$(sha "$SRCDEB")"
	printf '         purl: "pkg:deb/debian/nvidia-open-kernel-source@%s?arch=%s&distro=debian-13"}\n' "${v//+/%2B}" "$arch"
	for f in "${PATCHES[@]}"; do
		printf '      - {name: %s, sha256: %s}\n' "$(basename "$f")" "$(sha "$f")"
	done
}
recipe() { # NAME WITH_TEST_LAYER
	cat <<YAML
# The real golden image (docs/real-image.md), written by scripts/real-image.sh
# from recipes/real/inputs.pins and what it produced; do not edit.
name: $1
version: "$(pin version nvidia-smi | sed 's/-.*//')-${KV%-amd64}"
epoch: $EPOCH
serial: 1
compression:
  algorithm: zstd
  level: 6
  block-size: 131072

artifacts:
  # Debian $SUITE minbase + systemd, kmod, udev and the GPU userspace,
  # installed by apt (mmdebstrap): $(wc -l < "$CACHE/rootfs-$RFKEY.packages") packages
$(art rootfs tar "$ROOTFS" '    exclude: ["dev"]')
  # the kernel's own modules (the UKI carries the same package's vmlinuz)
$(art kernel-modules deb "$KDEB" '    include: ["usr/lib/modules"]')
  # NVIDIA open modules $(pin version nvidia-open-kernel-source), built for $KV,
  # stripped, signed with the Secure Boot db key
$(art nvidia-modules tar "$SMODS" "$(built_from)")
  # modules.dep, modules.alias, ... for both (depmod at build time)
$(art depmod tar "$DEPMOD")
  # ingot and its libraries under /opt/ingot, the verifier's units
$(art ingot-tools tar "$LAY/ingot-tools.tar")
$(art ingot-boot tar "$LAY/ingot-boot.tar")
YAML
	if [ "$2" = 1 ]; then
		echo "  # TEST LAYER: the boot test's evidence courier (verify/boot/test)"
		art ingot-test-layer tar "$LAY/ingot-test-layer.tar"
	fi
	cat <<YAML

directories:
  - {path: /dev}

# /etc/machine-id stays empty (as mmdebstrap leaves it): systemd makes a
# transient id at each boot, in the tmpfs overlay; no first-boot step
# writes the measured image.
files:
  - path: /etc/ingot/pool
    content: |
      pool=$1
      tuple=nvidia-$(tv driver)-open/cuda-$(tv cuda)/nccl-$(tv nccl)

$(sed -n '/^tuple:/,$p' recipes/real/tuple.yaml)

# Pins written from the files downloaded and checked against inputs.pins
boot:
  kernel:
    source: $KDEB
    sha256: $(sha "$KDEB")
  stub:
    source: $(deb_path systemd-boot-efi)
    sha256: $(sha "$(deb_path systemd-boot-efi)")
  init:
    source: $INIT
    sha256: $(sha "$INIT")
  modules: [virtio_blk, dm-mod, dm-bufio, reed_solomon, dm-verity, squashfs, overlay]
YAML
	if [ "$2" = 1 ]; then
		echo '  # TEST ONLY: under QEMU TCG on a loaded host the IO-APIC timer check can fail'
		echo '  # and panic; never in the production UKI.'
		echo '  cmdline: "console=ttyS0 panic=-1 no_timer_check ingot.overlay=tmpfs"'
	else
		echo '  cmdline: "console=ttyS0 panic=-1 ingot.overlay=tmpfs"'
	fi
	cat <<YAML
  # the UKI signed for Secure Boot with the db key that signed the modules
  secure-boot:
    key: {source: $SB_KEY, sha256: $(sha "$SB_KEY")}
    cert: {source: $SB_CERT, sha256: $(sha "$SB_CERT")}
YAML
}
recipe "$NAME" 0 > "$OUT/$NAME.yaml.tmp" && mv "$OUT/$NAME.yaml.tmp" "$OUT/$NAME.yaml"
recipe "$NAME-test" 1 > "$OUT/$NAME-test.yaml.tmp" && mv "$OUT/$NAME-test.yaml.tmp" "$OUT/$NAME-test.yaml"

KEY=$OUT/signing
[ -f "$KEY.key" ] || "$INGOT" keys generate -o "$KEY" >/dev/null
rm -f "$OUT/keyring.json"
# The test's one key, named for each role it signs in (docs/signing.md).
"$INGOT" keys keyring add "$OUT/keyring.json" "$KEY.pub" --name real-image --role manifest,enrolment,firmware-ref >/dev/null
step "ingot build $NAME (about 0.6 GB of files)"
B0=$(date +%s)
"$INGOT" build "$OUT/$NAME.yaml" -o "$OUT" --store "$CACHE/store" --key "$KEY.key" --quiet
step "built $OUT/$NAME.sqfs in $(($(date +%s) - B0)) s"

# --- the output pins ---------------------------------------------------------
# the SBOM against the image's own dpkg database (a failure stops here)
SBOM_CHECK=$(scripts/sbom-dpkg-check.sh "$OUT/$NAME.sqfs" "$OUT/$NAME.spdx.json")
step "${SBOM_CHECK#sbom-dpkg-check: }"
{
	echo "# Written by scripts/real-image.sh from what it produced (do not edit):"
	echo "# the same inputs.pins must give these bytes on any machine."
	echo "# build chroot: $GCC"
	for f in "$MODS" "$DEPMOD" "$ROOTFS" "$LAY/ingot-tools.tar" "$LAY/ingot-boot.tar" "$LAY/ingot-test-layer.tar"; do
		echo "artifact $(basename "$f" | sed 's/-[0-9a-f]\{16\}\.tar$//; s/\.tar$//') $(sha "$f")"
	done
	echo "module nvidia.ko $(tar -xOf "$MODS" "usr/lib/modules/$KV/updates/nvidia/nvidia.ko" | sha256sum | cut -d' ' -f1)"
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
	(umask 077; cd /; TZ=Asia/Kolkata LC_ALL=C.UTF-8 "$INGOT" build "$OUT/$NAME.yaml" -o "$A/out" \
		--store "$A/store" --quiet)
	for x in sqfs verity efi manifest.json; do
		cmp -s "$OUT/$NAME.$x" "$A/out/$NAME.$x" || die "FAIL: $NAME.$x differs when built again"
	done
	step "reproducibility: $NAME.sqfs, .verity, .efi and the manifest are byte-identical"
	rm -rf "$A"
fi
