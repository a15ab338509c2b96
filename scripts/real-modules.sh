#!/bin/bash
# Build NVIDIA's open kernel modules from Debian's source package inside
# the pinned trixie build chroot, reproducibly, into a tar of stripped
# modules (usr/lib/modules/KV/updates/nvidia/*.ko):
#   scripts/real-modules.sh CHROOT SOURCE_DEB PATCH KV BUILDDIR OUT_TAR
# BUILDDIR is the directory name under CHROOT/build the build runs in; the
# bytes do not depend on it (-ffile-prefix-map maps it away), which
# scripts/real-image.sh --check-modules proves by building in two.
set -euo pipefail
CHROOT=$1 SRC=$2 PATCH=$3 KV=$4 BDIR=$5 OUT=$6
VER=$(dpkg-deb -f "$SRC" Version | sed 's/-[^-]*$//')
W=$CHROOT/build/$BDIR
rm -rf "$W" && mkdir -p "$W"
dpkg-deb --fsys-tarfile "$SRC" | tar -xO ./usr/src/nvidia-open-kernel.tar.xz |
	tar -xJ -C "$W" --strip-components=2 modules/nvidia-open-kernel
patch -s -d "$W" -p1 < "$PATCH"
# SOURCE_DATE_EPOCH: the source package's own date, not the clock.
EPOCH=$(dpkg-deb --fsys-tarfile "$SRC" | tar -tv --full-time ./usr/src/nvidia-open-kernel.tar.xz |
	awk '{ print $4 "T" $5 "Z" }' | xargs -I{} date -u -d {} +%s)
unshare -m /bin/bash -euo pipefail -c '
	C=$1; mount -t proc proc "$C/proc"; mount --bind /dev "$C/dev"
	exec chroot "$C" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/build LC_ALL=C TZ=UTC \
		SOURCE_DATE_EPOCH=$3 KBUILD_BUILD_TIMESTAMP=@$3 KBUILD_BUILD_USER=ingot KBUILD_BUILD_HOST=ingot \
		/bin/sh -euc "umask 022; cd /build/$2; make -j\$(nproc) modules \
			SYSSRC=/usr/src/linux-headers-${4%-amd64}-common SYSOUT=/usr/src/linux-headers-$4 \
			KCFLAGS=-ffile-prefix-map=/build/$2=/usr/src/nvidia-$5 >build.log 2>&1 || { tail -n 30 build.log; exit 1; }"
' sh "$CHROOT" "$BDIR" "$EPOCH" "$KV" "$VER"
S=$W/stage/usr/lib/modules/$KV/updates/nvidia
mkdir -p "$S"
for m in nvidia nvidia-uvm nvidia-modeset nvidia-drm nvidia-peermem; do
	strip --strip-debug -o "$S/$m.ko" "$W/$m.ko"
done
tar --sort=name --mtime=@"$EPOCH" --owner=0 --group=0 --numeric-owner --mode=u=rwX,go=rX \
	--format=gnu -C "$W/stage" -cf "$OUT.tmp" usr
mv "$OUT.tmp" "$OUT"
rm -rf "$W"
