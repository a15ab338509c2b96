#!/bin/bash
# Generate the demo recipe's artifacts, deterministically, with
# scripts/mkart.py (same bytes on every machine, so recipes/demo.yaml can
# pin them by sha256):
#
#   scripts/gen-artifacts.sh BUILD [OUTDIR]
#
# OUTDIR defaults to recipes/artifacts; scripts/gen-pool-artifacts.sh, when
# it exists, fills OUTDIR/pools.  BUILD is accepted for the Makefile's
# calling convention (nothing here needs a built binary).  Shaped like the
# real files of an H100 pool on driver branch R580:
#   nvidia-open-kmod-580.95.05-6.8.0-45.tar.xz  open-gpu-kernel-modules' install tree
#   libnccl-2.27.7-cuda13.0.tar.gz              NCCL library with its soname links
#   gsp_ga10x.bin, gsp_tu10x.bin                GSP firmware of 580.95.05
#   nvidia-container-toolkit_1.17.8_amd64.deb   container toolkit (fixed for CVE-2025-23266)
#   nvidia-fabricmanager-580_580.95.05-1_amd64.deb
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: gen-artifacts.sh BUILD [OUTDIR]" >&2; exit 64; }
cd "$(dirname "$0")/.."
SRC=$(pwd)
OUT=${2:-$SRC/recipes/artifacts}
MKART="python3 $SRC/scripts/mkart.py"
DRV=580.95.05
KVER=6.8.0-45-generic

# Built in a scratch directory, then moved into place: an interrupted run
# leaves the old set, never a half-written one.
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d "$OUT/.gen.XXXXXX")
trap 'rm -rf "$W"' EXIT
umask 022

# --- NVIDIA open GPU kernel modules, as `make modules_install` lays them out
K=$W/kmod/lib/modules/$KVER/kernel/drivers/video
mkdir -p "$K"
for m in nvidia nvidia-uvm nvidia-modeset nvidia-drm nvidia-peermem; do
	$MKART ko --out "$K/$m.ko" --name "$m" --version "$DRV" --flavor open \
		--vermagic "$KVER SMP preempt mod_unload modversions " \
		--field "supported=external" --field "firmware=nvidia/$DRV/gsp_ga10x.bin"
done
$MKART tar --out "$W/nvidia-open-kmod-$DRV-6.8.0-45.tar.xz" --root "$W/kmod"

# --- NCCL
N=$W/nccl/lib/x86_64-linux-gnu
mkdir -p "$N" "$W/nccl/include"
$MKART so --out "$N/libnccl.so.2.27.7" --soname libnccl.so.2 \
	--version-string "NCCL version 2.27.7+cuda13.0"
ln -s libnccl.so.2.27.7 "$N/libnccl.so.2"
ln -s libnccl.so.2 "$N/libnccl.so"
printf '#define NCCL_MAJOR 2\n#define NCCL_MINOR 27\n#define NCCL_PATCH 7\n' >"$W/nccl/include/nccl.h"
$MKART tar --out "$W/libnccl-2.27.7-cuda13.0.tar.gz" --root "$W/nccl"

# --- GSP firmware
$MKART blob --out "$W/gsp_ga10x.bin" --size 393216 --seed "gsp_ga10x-$DRV"
$MKART blob --out "$W/gsp_tu10x.bin" --size 262144 --seed "gsp_tu10x-$DRV"

# --- NVIDIA container toolkit 1.17.8
C=$W/ctk
mkdir -p "$C/usr/bin" "$C/etc/nvidia-container-runtime" "$C/usr/share/doc/nvidia-container-toolkit"
for b in nvidia-ctk nvidia-container-runtime nvidia-container-runtime-hook nvidia-cdi-hook; do
	printf '#!/bin/sh\n# %s 1.17.8 (stand-in)\necho "%s version 1.17.8"\n' "$b" "$b" >"$C/usr/bin/$b"
	chmod 755 "$C/usr/bin/$b"
done
printf '[nvidia-container-cli]\nldconfig = "@/sbin/ldconfig"\n\n[nvidia-container-runtime]\nmode = "cdi"\n' \
	>"$C/etc/nvidia-container-runtime/config.toml"
printf 'NVIDIA Container Toolkit 1.17.8: fixes CVE-2025-23266.\n' >"$C/usr/share/doc/nvidia-container-toolkit/README"
$MKART deb --out "$W/nvidia-container-toolkit_1.17.8_amd64.deb" --package nvidia-container-toolkit \
	--version 1.17.8-1 --root "$C" --description "NVIDIA container runtime hook and CLI"

# --- NVIDIA fabric manager, same version as the driver (required on NVSwitch systems)
F=$W/fm
mkdir -p "$F/usr/bin" "$F/usr/share/nvidia/nvswitch" "$F/lib/systemd/system"
printf '#!/bin/sh\necho "Fabric Manager version is : %s"\n' "$DRV" >"$F/usr/bin/nv-fabricmanager"
chmod 755 "$F/usr/bin/nv-fabricmanager"
printf 'LOG_LEVEL=4\nFABRIC_MODE=0\nFM_STAY_RESIDENT_ON_FAILURES=0\n' >"$F/usr/share/nvidia/nvswitch/fabricmanager.cfg"
printf '[Unit]\nDescription=NVIDIA fabric manager service\n\n[Service]\nType=forking\nExecStart=/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg\n\n[Install]\nWantedBy=multi-user.target\n' \
	>"$F/lib/systemd/system/nvidia-fabricmanager.service"
$MKART deb --out "$W/nvidia-fabricmanager-580_${DRV}-1_amd64.deb" --package nvidia-fabricmanager-580 \
	--version "$DRV-1" --root "$F" --description "Fabric Manager for NVSwitch based systems"

for f in "$W"/*.*; do
	mv -f "$f" "$OUT/$(basename "$f")"
done

if [ -x "$SRC/scripts/gen-pool-artifacts.sh" ] && [ -z "${INGOT_DEMO_ONLY:-}" ]; then
	"$SRC/scripts/gen-pool-artifacts.sh" "$OUT/pools"
fi
