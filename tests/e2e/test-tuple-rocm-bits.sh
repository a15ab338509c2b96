#!/bin/bash
# The ROCm tuple read from the bits at build time (generated stand-ins
# shaped like Debian 13's packages): the in-tree amdgpu's version is its
# vermagic's kernel release and the firmware it names for the pool's GPU
# must be in the image; HIP from libamdhip64.so.X.Y.BUILD, the HSA runtime
# and the SMI library from dpkg's status; RCCL from its banner
# ("RCCL version 2.13.4+hip5.7") and its offload bundle ids (gfx targets,
# which the rules then judge against the pool's GPU).
# Each contradiction is refused with one line naming field and file.
. "$(dirname "$0")/lib.sh"
MK="python3 $SRC/scripts/mkart.py"
cd "$T"
KV=6.12.117+deb13-amd64
L=usr/lib/x86_64-linux-gnu
FW="gc_9_4_3_mec.bin gc_9_4_3_rlc.bin psp_13_0_6_sos.bin sdma_4_4_2.bin smu_13_0_6.bin vcn_4_0_3.bin"

# root [rccl targets...]: the stack; $DROP_FW names a firmware file left out
root() {
	rm -rf r && mkdir -p r/usr/lib/modules/$KV/kernel/drivers/gpu/drm/amd/amdgpu r/$L r/usr/lib/firmware/amdgpu r/var/lib/dpkg
	local f fields=()
	for f in $FW aldebaran_mec.bin; do fields+=(--field "firmware=amdgpu/$f"); done
	$MK ko --out r/usr/lib/modules/$KV/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko --name amdgpu --version '' \
		--license "GPL and additional rights" --flavor proprietary --vermagic "$KV SMP preempt mod_unload modversions " "${fields[@]}"
	for f in $FW; do [ "$f" = "${DROP_FW:-}" ] || printf 'fw %s\n' "$f" > r/usr/lib/firmware/amdgpu/$f; done
	$MK so --out r/$L/libamdhip64.so.5.7.31921 --soname libamdhip64.so.5
	$MK so --out r/$L/libhsa-runtime64.so.1.13.0 --soname libhsa-runtime64.so.1 --version-string 1.13.0-local-build-unknown
	$MK so --out r/$L/librocm_smi64.so.1.0 --soname librocm_smi64.so.1
	local ids=()
	for f in "$@"; do ids+=(--version-string "__CLANG_OFFLOAD_BUNDLE__hipv4-amdgcn-amd-amdhsa--$f"); done
	$MK so --out r/$L/librccl.so.1.0 --soname librccl.so.1 --version-string "RCCL version 2.13.4+hip5.7" "${ids[@]}"
	for p in "libamdhip64-5 5.7.1-6+deb13u1" "libhsa-runtime64-1 6.1.2-3" "librocm-smi64-1 6.1.2-1" "librccl1 5.4.3-3+b1"; do
		set -- $p
		printf 'Package: %s\nStatus: install ok installed\nArchitecture: amd64\nVersion: %s\n\n' "$1" "$2"
	done > r/var/lib/dpkg/status
	$MK tar --out r.tar --root r
}
# recipe SED: the stack's recipe, its tuple edited by SED
recipe() {
	cat > r.yaml <<YAML
name: rocm-bits
version: "1"
epoch: 1700000000
artifacts:
  - {name: rootfs, kind: tar, source: $T/r.tar, sha256: $(sha256 r.tar)}
tuple:
  vendor: amd
  gpu: {models: [MI300X]}
  driver: {version: 6.12.117, artifact: rootfs}
  hip: {version: 5.7.31921, artifact: rootfs}
  hsa-runtime: {version: 6.1.2, artifact: rootfs}
  smi-lib: {version: 6.1.2, artifact: rootfs}
  rccl: {version: 2.13.4, hip: "5.7", targets: [gfx90a, gfx942], artifact: rootfs}
YAML
	sed -i -e "${1:-}" r.yaml
}
build() { # EXIT NEEDLE
	rm -rf out
	expect_exit "$1" "$2" "$INGOT" build r.yaml -o out --store st --no-lint
}

note "the stack as read: passes"
root gfx90a gfx942:xnack- gfx942
recipe
build 0 ""

note "each declared version against the bits"
recipe 's/driver: {version: 6.12.117/driver: {version: 6.8.0/'
build 1 "tuple.driver.version: recipe declares 6.8.0, artifact 'rootfs' carries 6.12.117 (/usr/lib/modules/$KV/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko: no version=, in-tree: vermagic $KV)"
recipe 's/hip: {version: 5.7.31921/hip: {version: 6.1/'
build 1 "tuple.hip.version: recipe declares 6.1, artifact 'rootfs' carries 5.7.31921 (/$L/libamdhip64.so.5.7.31921)"
recipe 's/hsa-runtime: {version: 6.1.2/hsa-runtime: {version: 5.7.1/'
build 1 "tuple.hsa-runtime.version: recipe declares 5.7.1, artifact 'rootfs' carries 6.1.2 (/var/lib/dpkg/status: libhsa-runtime64-1 6.1.2-3)"
recipe 's/smi-lib: {version: 6.1.2/smi-lib: {version: 7.0/'
build 1 "tuple.smi-lib.version: recipe declares 7.0, artifact 'rootfs' carries 6.1.2 (/var/lib/dpkg/status: librocm-smi64-1 6.1.2-1)"
recipe 's/rccl: {version: 2.13.4/rccl: {version: 2.18.6/'
build 1 "tuple.rccl.version: recipe declares 2.18.6, artifact 'rootfs' carries 2.13.4 (/$L/librccl.so.1.0: \"RCCL version 2.13.4+hip5.7\")"

note "RCCL built for another HIP: refused"
recipe 's/hip: "5.7"/hip: "6.1"/'
build 1 "tuple.rccl.hip: recipe declares 6.1, artifact 'rootfs' is built for HIP 5.7 (/$L/librccl.so.1.0: \"RCCL version 2.13.4+hip5.7\")"

note "rccl.targets must be what the library carries"
recipe 's/targets: \[gfx90a, gfx942\]/targets: [gfx942]/'
build 1 "tuple.rccl.targets: recipe declares other targets than artifact 'rootfs' carries (/$L/librccl.so.1.0 has: gfx90a, gfx942)"

note "code objects the tuple does not declare: refused, naming them (the rules judge them)"
recipe 's/, targets: \[gfx90a, gfx942\]//'
build 1 "tuple.rccl.targets: not declared, artifact 'rootfs' carries code objects for [gfx90a, gfx942] (/$L/librccl.so.1.0): declare them, the rules hold them against gpu.models"
note "declared as read, without the pool's gfx942: built with --no-lint, refused by the rules"
root gfx803 gfx90a
recipe 's/targets: \[gfx90a, gfx942\]/targets: [gfx803, gfx90a]/'
build 0 ""
rm -rf out
expect_exit 1 "r.yaml:8:17: lint: 2 errors; first: rocm-gfx942-from-6.0" "$INGOT" build r.yaml -o out --store st
# the second error is the missing code objects, read from the bits
expect_exit 2 "error [rccl-code-for-gfx942] (gpu.models, rccl.targets)" "$INGOT" lint r.yaml
note "no bundle ids to read (compressed bundles) with targets declared: check not made"
root
recipe
build 1 "tuple.rccl.targets: artifact 'rootfs' shows no offload bundle ids (hipv4-amdgcn-amd-amdhsa--gfx...) in /$L/librccl.so.1.0: check not made"

note "amdgpu firmware missing for the pool's GPU: refused"
DROP_FW=psp_13_0_6_sos.bin root gfx90a gfx942
recipe
build 1 "tuple.driver: MI300X needs firmware amdgpu/psp_13_0_6_sos.bin (/usr/lib/modules/$KV/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko firmware=), the image has no /lib/firmware/amdgpu/psp_13_0_6_sos.bin[.xz|.zst]"
note "an amdgpu that names no firmware for the GPU does not drive it"
root gfx90a gfx942 gfx950
recipe 's/models: \[MI300X\]/models: [MI355X]/'
build 1 "names no firmware amdgpu/gc_9_5_0* for MI355X: this amdgpu does not drive it"
exit 0
