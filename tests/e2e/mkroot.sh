#!/bin/bash
# Build a fake node sysroot for `ingot verify --root`.
#   tests/e2e/mkroot.sh DIR PROFILE [MUTATION...]
#   tests/e2e/mkroot.sh DIR --mutate MUTATION...   (an existing root, e.g. a cp -a copy)
# PROFILE: h100   H100 HGX, NVSwitch, R580 open modules 580.95.05 (and NVML
#                 libnvidia-ml.so.580.95.05), FM 580.95.05, CUDA 13.0, NCCL 2.27.7,
#                 container toolkit 1.17.8
#          b200   B200 HGX, NVSwitch, open modules 595.91.07, CUDA 13.3, NCCL 2.31.2
#          mi355x MI355X, amdgpu, ROCm 10.1.0 core stream, RCCL 2.30.7, amd-smi only
# The image part of the root is usr/, lib/ and opt/ (what the manifest lists);
# etc/, proc/, sys/ and var/ are the node's own state.
# MUTATION (applied after the profile; each mimics one way a node drifts):
#   driver=V         loaded module is version V (sysfs, procfs, nvidia-smi); the
#                    image's user space (NVML) stays at the profile's version
#   fm=V             dpkg database says fabric manager V
#   proprietary      loaded module is the proprietary flavor
#   nccl=V           libnccl.so.2.27.7 replaced by libnccl.so.V
#   firmware         one GSP firmware blob has different bytes
#   extra            an extra library in /usr/lib/x86_64-linux-gnu
#   no-nvidia-smi    nvidia-smi removed
#   file-to-symlink  a listed firmware file replaced by a symlink to a file with
#                    the same bytes (only its type differs)
#   file-to-dir      a listed firmware file replaced by a directory
#   ko-garbage       the image's nvidia.ko overwritten with bytes that are no ELF
#   ko-gone          the image's nvidia.ko removed
#   ko=V             the image's nvidia.ko is version V (built for the node's kernel)
#   ko-kernel=K      the image's nvidia.ko is built for kernel K (vermagic)
#   no-gpu           no GPU and no driver loaded (as under QEMU): sysfs, procfs
#                    and /proc/modules without NVIDIA; nvidia-smi fails; the
#                    image's files stay
#   debian-nvidia    Debian's layout: nvidia-smi in usr/lib/nvidia/current and
#                    NVML in usr/lib/x86_64-linux-gnu/nvidia/current, reached
#                    through alternatives links (relative here, so they stay
#                    in the root), and dpkg records nvidia-smi and libnvidia-ml1
#   fw-estate        the firmware an H100 HGX node shows: 4 ConnectX-7
#                    (/sys/class/infiniband/mlx5_*/{fw_ver,board_id}), eth0 (ice)
#                    and ib0 (mlx5_core) with `ethtool -i` answers in
#                    /run/ingot/ethtool/<if>, DMI BIOS/board, the NVSwitches' BIOS
#                    Version, and usr/sbin/ipmitool (image) answering `mc info`
#                    from /run/ingot/fake-bmc (node state)
#   vbios-mixed      one GPU's VBIOS is another validated revision
#   nic-fw=V         mlx5_1 (one of four ConnectX-7) runs firmware V
#   eth-fw=V         eth0 reports firmware V
#   bios=V           DMI bios_version V
#   bmc=V            the BMC reports firmware revision V
#   bmc-dead         ipmitool mc info fails (no answer from the BMC)
#   nvswitch-fw=V    one NVSwitch reports BIOS Version V
# Deterministic: the same arguments give the same tree.
set -eu
DIR=$1 PROFILE=$2
shift 2
SRC=${INGOT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
MKART="python3 $SRC/scripts/mkart.py"
KVER=6.1.0-40-amd64
LIBDIR=usr/lib/x86_64-linux-gnu

w() { mkdir -p "$(dirname "$DIR/$1")"; printf '%b' "$2" >"$DIR/$1"; }

nvidia_loaded() { # VERSION FLAVOR
	local banner
	if [ "$2" = open ]; then
		banner="NVIDIA UNIX Open Kernel Module for x86_64  $1  Release Build  (dvs-builder@U22-I3-AF03-09-1)  Thu Sep 18 2025"
		w sys/module/nvidia/taint "OE\n"
	else
		banner="NVIDIA UNIX x86_64 Kernel Module  $1  Thu Sep 18 2025"
		w sys/module/nvidia/taint "POE\n"
	fi
	w sys/module/nvidia/version "$1\n"
	w proc/driver/nvidia/version "NVRM version: $banner\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14+deb12u1)\n"
	w proc/modules "nvidia_uvm 2076672 0 - Live 0x0000000000000000 (OE)\nnvidia_drm 131072 0 - Live 0x0000000000000000 (OE)\nnvidia_modeset 1806336 1 nvidia_drm, Live 0x0000000000000000 (OE)\nnvidia 11640832 2 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (OE)\n"
}

# nvidia-smi is image user space that asks the kernel: the fake one reads
# the fake root's sysfs and procfs, so a drifted kernel module shows in its
# answer without the image's bytes changing.
nvidia_smi() { # MODEL VBIOS COUNT
	local i bus
	for ((i = 0; i < $3; i++)); do
		bus=$(printf '0000:%02x:00.0' $((0x18 + i)))
		w "proc/driver/nvidia/gpus/$bus/information" "Model: \t\t $1\nIRQ:   \t\t 0\nVideo BIOS: \t $2\nBus Location: \t $bus\n"
	done
	mkdir -p "$DIR/usr/bin"
	cat >"$DIR/usr/bin/nvidia-smi" <<'SH'
#!/bin/sh
# fake nvidia-smi: answers --query-gpu=name,driver_version,vbios_version --format=csv,noheader
root=$(cd "$(dirname "$0")/../.." && pwd)
drv=$(cat "$root/sys/module/nvidia/version") || exit 9
for g in "$root"/proc/driver/nvidia/gpus/*/information; do
	model=$(sed -n 's/^Model:[[:space:]]*//p' "$g")
	vbios=$(sed -n 's/^Video BIOS:[[:space:]]*//p' "$g")
	echo "$model, $drv, $vbios"
done
SH
	chmod 0755 "$DIR/usr/bin/nvidia-smi"
}

nvidia_ko() { # VERSION KERNEL
	mkdir -p "$DIR/lib/modules/$KVER/updates/dkms"
	$MKART ko --out "$DIR/lib/modules/$KVER/updates/dkms/nvidia.ko" --name nvidia --version "$1" \
		--flavor open --vermagic "$2 SMP preempt mod_unload modversions "
}

dpkg_status() { # FM TOOLKIT
	w var/lib/dpkg/status "Package: nvidia-fabricmanager-${1%%.*}\nStatus: install ok installed\nArchitecture: amd64\nVersion: $1-1\n\nPackage: nvidia-container-toolkit\nStatus: install ok installed\nArchitecture: amd64\nVersion: $2-1\n"
}

nvidia_node() { # MODEL DRIVER VBIOS CUDA CUDART NCCL TOOLKIT
	w etc/hostname "gpu-$PROFILE-001\n"
	w etc/machine-id "0123456789abcdef0123456789abcdef\n"
	w proc/sys/kernel/osrelease "$KVER\n"
	nvidia_loaded "$2" open
	for d in 0000:05:00.0 0000:06:00.0 0000:07:00.0 0000:08:00.0; do
		w "proc/driver/nvidia-nvswitch/devices/$d/information" "Fabric State: Configured\n"
	done
	mkdir -p "$DIR/lib/modules/$KVER/updates/dkms"
	nvidia_ko "$2" "$KVER"
	mkdir -p "$DIR/lib/firmware/nvidia/$2"
	$MKART blob --out "$DIR/lib/firmware/nvidia/$2/gsp_ga10x.bin" --size 65536 --seed "gsp-ga10x-$2"
	$MKART blob --out "$DIR/lib/firmware/nvidia/$2/gsp_tu10x.bin" --size 32768 --seed "gsp-tu10x-$2"
	mkdir -p "$DIR/$LIBDIR"
	$MKART so --out "$DIR/$LIBDIR/libnccl.so.$6" --soname libnccl.so.2 --version-string "NCCL version $6+cuda$4"
	ln -sf "libnccl.so.$6" "$DIR/$LIBDIR/libnccl.so.2"
	# the driver's user space (NVML, what nvidia-smi loads) is the image's
	$MKART so --out "$DIR/$LIBDIR/libnvidia-ml.so.$2" --soname libnvidia-ml.so.1
	ln -sf "libnvidia-ml.so.$2" "$DIR/$LIBDIR/libnvidia-ml.so.1"
	mkdir -p "$DIR/usr/local/cuda-$4/lib64"
	w "usr/local/cuda-$4/version.json" "{\n  \"cuda\" : {\n    \"name\" : \"CUDA SDK\",\n    \"version\" : \"$5\"\n  }\n}\n"
	$MKART so --out "$DIR/usr/local/cuda-$4/lib64/libcudart.so.$5" --soname "libcudart.so.${4%%.*}"
	ln -sfn "cuda-$4" "$DIR/usr/local/cuda"
	nvidia_smi "$1" "$3" 8
	dpkg_status "$2" "$7"
}

case $PROFILE in
--mutate) [ -d "$DIR" ] || { echo "mkroot.sh: $DIR: no such root" >&2; exit 64; } ;;
h100) nvidia_node "NVIDIA H100 80GB HBM3" 580.95.05 96.00.99.00.01 13.0 13.0.96 2.27.7 1.17.8 ;;
b200) nvidia_node "NVIDIA B200" 595.91.07 97.00.5A.00.02 13.3 13.3.61 2.31.2 1.18.1 ;;
mi355x)
	w etc/hostname "gpu-mi355x-001\n"
	w etc/machine-id "fedcba9876543210fedcba9876543210\n"
	w proc/sys/kernel/osrelease "$KVER\n"
	w proc/modules "amdgpu 15900672 0 - Live 0x0000000000000000\namdxcp 12288 1 amdgpu, Live 0x0000000000000000\n"
	w sys/module/amdgpu/version "6.16.6\n"
	w opt/rocm/core-10.1/.info/version "10.1.0-64\n"
	mkdir -p "$DIR/opt/rocm/core-10.1/lib"
	$MKART so --out "$DIR/opt/rocm/core-10.1/lib/librccl.so.1.0.100100" --soname librccl.so.1 --version-string "RCCL version 2.30.7-HEAD:3a5b1c2"
	ln -sf librccl.so.1.0.100100 "$DIR/opt/rocm/core-10.1/lib/librccl.so.1"
	mkdir -p "$DIR/lib/firmware/amdgpu"
	$MKART blob --out "$DIR/lib/firmware/amdgpu/gc_9_5_0_mec.bin" --size 16384 --seed amd-mec
	w usr/bin/amd-smi "#!/bin/sh\n# fake amd-smi: answers static --asic --vbios --json\ncat <<'JSON'\n[{\"gpu\": 0, \"asic\": {\"market_name\": \"AMD Instinct MI355X\"}, \"vbios\": {\"version\": \"113-M3550100-100\"}},\n {\"gpu\": 1, \"asic\": {\"market_name\": \"AMD Instinct MI355X\"}, \"vbios\": {\"version\": \"113-M3550100-100\"}}]\nJSON\n"
	chmod 0755 "$DIR/usr/bin/amd-smi"
	;;
*) echo "mkroot.sh: unknown profile '$PROFILE'" >&2; exit 64 ;;
esac

for m in "$@"; do
	case $m in
	driver=*)
		v=${m#driver=}
		flavor=open; grep -q P "$DIR/sys/module/nvidia/taint" && flavor=proprietary
		nvidia_loaded "$v" "$flavor" ;;
	fm=*)
		v=${m#fm=}
		# only the fabric manager stanza (the first) changes
		python3 - "$DIR/var/lib/dpkg/status" "$v" <<'PY'
import sys
p, v = sys.argv[1], sys.argv[2]
st = open(p).read().split("\n\n")
for i, s in enumerate(st):
    lines = s.split("\n")
    if lines[0].startswith("Package: nvidia-container-toolkit"):
        continue
    st[i] = "\n".join(("Version: %s-1" % v) if l.startswith("Version: ") else l for l in lines)
open(p, "w").write("\n\n".join(st))
PY
		;;
	proprietary)
		v=$(cat "$DIR/sys/module/nvidia/version")
		nvidia_loaded "$v" proprietary ;;
	nccl=*)
		v=${m#nccl=}
		rm -f "$DIR/$LIBDIR"/libnccl.so.*
		$MKART so --out "$DIR/$LIBDIR/libnccl.so.$v" --soname libnccl.so.2 --version-string "NCCL version $v"
		ln -sf "libnccl.so.$v" "$DIR/$LIBDIR/libnccl.so.2" ;;
	firmware)
		fw=("$DIR"/lib/firmware/nvidia/*/gsp_ga10x.bin)
		f=${fw[0]}
		printf 'X' | dd of="$f" bs=1 seek=4096 conv=notrunc status=none ;;
	extra)
		$MKART so --out "$DIR/$LIBDIR/libevil.so.1" --soname libevil.so.1 ;;
	no-nvidia-smi)
		rm -f "$DIR/usr/bin/nvidia-smi" ;;
	file-to-symlink)
		fw=("$DIR"/lib/firmware/nvidia/*/gsp_tu10x.bin)
		mkdir -p "$DIR/etc/fw"
		mv "${fw[0]}" "$DIR/etc/fw/gsp_tu10x.bin"
		ln -s ../../../../etc/fw/gsp_tu10x.bin "${fw[0]}" ;;
	file-to-dir)
		fw=("$DIR"/lib/firmware/nvidia/*/gsp_tu10x.bin)
		rm -f "${fw[0]}"
		mkdir "${fw[0]}" ;;
	ko-garbage)
		ko=("$DIR"/lib/modules/*/updates/dkms/nvidia.ko)
		head -c 4096 /dev/zero >"${ko[0]}" ;;
	ko-gone)
		rm -f "$DIR"/lib/modules/*/updates/dkms/nvidia.ko ;;
	ko=*)
		nvidia_ko "${m#ko=}" "$KVER" ;;
	ko-kernel=*)
		v=$(ls "$DIR/lib/firmware/nvidia")   # the driver version the image carries
		nvidia_ko "$v" "${m#ko-kernel=}" ;;
	no-gpu)
		rm -rf "$DIR/sys/module/nvidia" "$DIR/proc/driver/nvidia" "$DIR/proc/driver/nvidia-nvswitch"
		w proc/modules "virtio_blk 32768 3 - Live 0x0000000000000000\n" ;;
	debian-nvidia)
		v=$(cd "$DIR/$LIBDIR" && ls libnvidia-ml.so.*.*)
		v=${v#libnvidia-ml.so.}
		mkdir -p "$DIR/usr/lib/nvidia/current" "$DIR/$LIBDIR/nvidia/current" "$DIR/etc/alternatives"
		mv "$DIR/usr/bin/nvidia-smi" "$DIR/usr/lib/nvidia/current/nvidia-smi"
		mv "$DIR/$LIBDIR/libnvidia-ml.so.$v" "$DIR/$LIBDIR/nvidia/current/"
		ln -sf "libnvidia-ml.so.$v" "$DIR/$LIBDIR/nvidia/current/libnvidia-ml.so.1"
		ln -sfn ../../usr/lib/nvidia/current/nvidia-smi "$DIR/etc/alternatives/nvidia--nvidia-smi"
		ln -sfn ../../usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.1 \
			"$DIR/etc/alternatives/nvidia--libnvidia-ml.so.1-x86_64-linux-gnu"
		ln -sfn ../../etc/alternatives/nvidia--nvidia-smi "$DIR/usr/bin/nvidia-smi"
		ln -sfn ../../../etc/alternatives/nvidia--libnvidia-ml.so.1-x86_64-linux-gnu "$DIR/$LIBDIR/libnvidia-ml.so.1"
		printf '\nPackage: libnvidia-ml1\nStatus: install ok installed\nArchitecture: amd64\nVersion: %s-2\n\nPackage: nvidia-smi\nStatus: install ok installed\nArchitecture: amd64\nVersion: %s-2\n' \
			"$v" "$v" >>"$DIR/var/lib/dpkg/status" ;;
	fw-estate)
		for i in 0 1 2 3; do
			w "sys/class/infiniband/mlx5_$i/fw_ver" "28.39.1002\n"
			w "sys/class/infiniband/mlx5_$i/board_id" "MT_0000000838\n"
		done
		mkdir -p "$DIR/sys/class/net/eth0/device" "$DIR/sys/class/net/ib0/device" "$DIR/sys/class/net/lo"
		w run/ingot/ethtool/eth0 "driver: ice\nversion: 6.1.0-40-amd64\nfirmware-version: 4.40 0x8001c967 1.3534.0\nbus-info: 0000:31:00.0\n"
		w run/ingot/ethtool/ib0 "driver: mlx5_core[ib_ipoib]\nversion: 24.10-1.1.4\nfirmware-version: 28.39.1002 (MT_0000000838)\nbus-info: 0000:18:00.0\n"
		w sys/class/dmi/id/bios_version "2.3.5\n"
		w sys/class/dmi/id/bios_date "08/14/2025\n"
		w sys/class/dmi/id/board_name "0NQ5DR\n"
		w sys/class/dmi/id/product_name "PowerEdge XE9680\n"
		for d in "$DIR"/proc/driver/nvidia-nvswitch/devices/*; do
			printf 'BIOS Version: 96.10.6D.00.01\n' >"$d/information"
		done
		w run/ingot/fake-bmc "7.10.30.00\n"
		mkdir -p "$DIR/usr/sbin"
		cat >"$DIR/usr/sbin/ipmitool" <<'SH'
#!/bin/sh
# fake ipmitool: answers `mc info` from the fake root's BMC state
root=$(cd "$(dirname "$0")/../.." && pwd)
rev=$(cat "$root/run/ingot/fake-bmc" 2>/dev/null) || { echo "Could not open device at /dev/ipmi0" >&2; exit 1; }
printf 'Device ID                 : 32\nDevice Revision           : 1\nFirmware Revision         : %s\nIPMI Version              : 2.0\nManufacturer ID           : 674\n' "$rev"
SH
		chmod 0755 "$DIR/usr/sbin/ipmitool" ;;
	vbios-mixed)
		g=("$DIR"/proc/driver/nvidia/gpus/*/information)
		sed -i 's/^Video BIOS:.*/Video BIOS: \t 96.00.74.00.01/' "${g[3]}" ;;
	nic-fw=*)
		w sys/class/infiniband/mlx5_1/fw_ver "${m#nic-fw=}\n" ;;
	eth-fw=*)
		sed -i "s/^firmware-version: .*/firmware-version: ${m#eth-fw=} 0x8001c967 1.3534.0/" "$DIR/run/ingot/ethtool/eth0" ;;
	bios=*)
		w sys/class/dmi/id/bios_version "${m#bios=}\n" ;;
	bmc=*)
		w run/ingot/fake-bmc "${m#bmc=}\n" ;;
	bmc-dead)
		rm -f "$DIR/run/ingot/fake-bmc" ;;
	nvswitch-fw=*)
		s=("$DIR"/proc/driver/nvidia-nvswitch/devices/*)
		printf 'BIOS Version: %s\n' "${m#nvswitch-fw=}" >"${s[0]}/information" ;;
	*) echo "mkroot.sh: unknown mutation '$m'" >&2; exit 64 ;;
	esac
done
