#!/bin/sh
# Generate the artifacts of the four example pools (recipes/h100-r580-ltsb,
# b200-open, v100-legacy, mi355x-rocm) into OUTDIR (default
# recipes/artifacts/pools/, beside the demo's artifacts).  Every file is built by scripts/mkart.py from fixed
# inputs, so the sha256 pins in the recipes hold on any machine.  The
# layouts follow the real packages: kernel modules under
# lib/modules/<kver>/, GSP firmware under lib/firmware/nvidia/<version>/,
# NCCL's tarball with its top directory, .debs for the fabric manager and
# the container toolkit, ROCm's Core SDK under /opt/rocm/core-10.1.
#   scripts/gen-pool-artifacts.sh [OUTDIR]
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE/../recipes/artifacts/pools}
# The system interpreter when there is one: version-manager shims (pyenv)
# cost more per call than mkart.py itself, and it is called ~60 times.
PY=${PYTHON:-python3}
[ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
MKART="$PY $HERE/mkart.py"
KVER=6.8.0-45-generic
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/ingot-pools.XXXXXX")
trap 'rm -rf "$W"' EXIT
umask 022

exe() { # exe PATH SIZE SEED: a pseudo-binary with the executable bit
	mkdir -p "$(dirname "$1")"
	$MKART blob --out "$1" --size "$2" --seed "$3"
	chmod 0755 "$1"
}
text() { # text PATH CONTENT
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "$2" >"$1"
	chmod 0644 "$1"
}

# nvidia_driver VERSION FLAVOR OUTNAME: kernel modules, GSP firmware and
# the user-space libraries of one NVIDIA driver release.
nvidia_driver() {
	v=$1 flavor=$2 r=$W/drv-$1-$2
	m=$r/lib/modules/$KVER/kernel/drivers/video
	mkdir -p "$m" "$r/usr/lib/x86_64-linux-gnu" "$r/usr/bin"
	for mod in nvidia nvidia-uvm nvidia-modeset nvidia-drm nvidia-peermem; do
		$MKART ko --out "$m/$mod.ko" --name "$(echo $mod | tr - _)" --version "$v" --flavor "$flavor"
	done
	mkdir -p "$r/lib/firmware/nvidia/$v"
	$MKART blob --out "$r/lib/firmware/nvidia/$v/gsp_ga10x.bin" --size 65536 --seed "gsp-ga10x-$v"
	$MKART blob --out "$r/lib/firmware/nvidia/$v/gsp_tu10x.bin" --size 65536 --seed "gsp-tu10x-$v"
	$MKART so --out "$r/usr/lib/x86_64-linux-gnu/libcuda.so.$v" --soname libcuda.so.1 \
		--version-string "CUDA driver $v"
	$MKART so --out "$r/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.$v" --soname libnvidia-ml.so.1 \
		--version-string "NVML $v"
	ln -s "libcuda.so.$v" "$r/usr/lib/x86_64-linux-gnu/libcuda.so.1"
	ln -s "libnvidia-ml.so.$v" "$r/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
	exe "$r/usr/bin/nvidia-smi" 16384 "nvidia-smi-$v"
	$MKART tar --out "$OUT/$3" --root "$r"
}

fabric_manager() { # VERSION BRANCH
	r=$W/fm-$1
	exe "$r/usr/bin/nv-fabricmanager" 16384 "nv-fabricmanager-$1"
	text "$r/usr/share/nvidia/nvswitch/fabricmanager.cfg" "LOG_LEVEL=4
FABRIC_MODE=0
FM_STAY_RESIDENT_ON_FAILURES=0"
	text "$r/lib/systemd/system/nvidia-fabricmanager.service" "[Unit]
Description=NVIDIA fabric manager service
[Service]
Type=forking
ExecStart=/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg
[Install]
WantedBy=multi-user.target"
	$MKART deb --out "$OUT/nvidia-fabricmanager-$2_$1-1_amd64.deb" --package "nvidia-fabricmanager-$2" \
		--version "$1-1" --root "$r" --description "NVIDIA fabric manager for NVSwitch systems"
}

cuda_runtime() { # FULLVERSION MAJOR.MINOR CUDART-SUFFIX
	r=$W/cuda-$1 d=$W/cuda-$1/usr/local/cuda-$2
	mkdir -p "$d/lib64"
	text "$d/version.json" "{
   \"cuda\" : {
      \"name\" : \"CUDA SDK\",
      \"version\" : \"$1\"
   }
}"
	major=${2%%.*}
	$MKART so --out "$d/lib64/libcudart.so.$3" --soname "libcudart.so.$major" \
		--version-string "CUDA runtime $1"
	ln -s "libcudart.so.$3" "$d/lib64/libcudart.so.$major"
	$MKART tar --out "$OUT/cuda-runtime-$1.tar.xz" --root "$r"
}

nccl() { # VERSION CUDA-MAJOR.MINOR
	top=nccl_$1-1+cuda$2_x86_64 r=$W/nccl-$1-$2
	l=$r/$top/lib
	mkdir -p "$l" "$r/$top/include"
	$MKART so --out "$l/libnccl.so.$1" --soname "libnccl.so.${1%%.*}" \
		--version-string "NCCL version $1+cuda$2"
	ln -s "libnccl.so.$1" "$l/libnccl.so.${1%%.*}"
	ln -s "libnccl.so.${1%%.*}" "$l/libnccl.so"
	text "$r/$top/include/nccl.h" "#define NCCL_VERSION_CODE $(echo "$1" | awk -F. '{print $1*10000+$2*100+$3}')"
	$MKART tar --out "$OUT/$top.tar.xz" --root "$r"
}

container_toolkit() { # VERSION
	r=$W/ctk-$1
	exe "$r/usr/bin/nvidia-ctk" 16384 "nvidia-ctk-$1"
	exe "$r/usr/bin/nvidia-container-runtime" 8192 "nvidia-container-runtime-$1"
	$MKART deb --out "$OUT/nvidia-container-toolkit_$1-1_amd64.deb" --package nvidia-container-toolkit \
		--version "$1-1" --root "$r" --description "NVIDIA Container Toolkit"
}

# --- H100 + NVSwitch, R580 LTSB open modules, CUDA 13.0 U2, NCCL 2.27.7
nvidia_driver 580.95.05 open nvidia-open-580.95.05-$KVER.tar.xz
fabric_manager 580.95.05 580
cuda_runtime 13.0.2 13.0 13.0.96
nccl 2.27.7 13.0
container_toolkit 1.17.8

# --- B200, DGX OS 8.0.0-like: 595.91.07 / CUDA 13.3 U1 / NCCL 2.31.2
nvidia_driver 595.91.07 open nvidia-open-595.91.07-$KVER.tar.xz
fabric_manager 595.91.07 595
cuda_runtime 13.3.1 13.3 13.3.77
nccl 2.31.2 13.3
container_toolkit 1.18.1

# --- V100: proprietary modules (open ones need Turing+), R580, CUDA 12.9
nvidia_driver 580.95.05 proprietary nvidia-580.95.05-$KVER.tar.xz
cuda_runtime 12.9.1 12.9 12.9.79
nccl 2.27.7 12.9

# --- MI355X: ROCm 10.1.0 Core SDK, RCCL 2.30.7, amd-smi, amdgpu
r=$W/rocm
c=$r/opt/rocm/core-10.1
text "$c/.info/version" "10.1.0-52"
exe "$c/bin/amd-smi" 16384 amd-smi-10.1.0
$MKART so --out "$c/lib/libamdhip64.so.10.1.100100" --soname libamdhip64.so.10 \
	--version-string "HIP version 10.1.100100"
ln -s libamdhip64.so.10.1.100100 "$c/lib/libamdhip64.so.10"
$MKART tar --out "$OUT/rocm-core-10.1.0.tar.xz" --root "$r"

r=$W/rccl
mkdir -p "$r/opt/rocm/core-10.1/lib"
$MKART so --out "$r/opt/rocm/core-10.1/lib/librccl.so.1.0.100100" --soname librccl.so.1 \
	--version-string "RCCL version 2.30.7"
ln -s librccl.so.1.0.100100 "$r/opt/rocm/core-10.1/lib/librccl.so.1"
$MKART deb --out "$OUT/rccl_2.30.7.100100-1_amd64.deb" --package rccl \
	--version 2.30.7.100100-1 --root "$r" --description "ROCm Communication Collectives Library"

r=$W/amdgpu
mkdir -p "$r/lib/modules/$KVER/updates/dkms" "$r/lib/firmware/amdgpu"
$MKART ko --out "$r/lib/modules/$KVER/updates/dkms/amdgpu.ko" --name amdgpu --version 6.16.6 \
	--flavor proprietary --license "GPL and additional rights"
$MKART blob --out "$r/lib/firmware/amdgpu/gc_9_5_0_mec.bin" --size 65536 --seed gc-9-5-0-mec
$MKART tar --out "$OUT/amdgpu-6.16.6-$KVER.tar.xz" --root "$r"

echo "gen-pool-artifacts: wrote $(ls "$OUT" | wc -l) files to $OUT" >&2
