#!/bin/bash
# The build refuses a kernel ABI mismatch: an image whose kernel modules
# were built for another kernel than the one its UKI boots (vermagic,
# the /lib/modules/<release>/ directory modprobe looks in, and the
# vermagic flags of the kernel package's own modules) is refused with one
# line naming the module, its vermagic, boot.kernel and its release.
# --no-lint skips the check, as it skips the tuple lint.
. "$(dirname "$0")/lib.sh"
STUB=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
INIT=$BUILD_DIR/ingot-init
[ -f "$STUB" ] || skip "systemd-boot-efi missing"
[ -x "$INIT" ] || fail "$INIT not built"
MK="python3 $SRC/scripts/mkart.py"
cd "$T"

note "a kernel package for 6.1.0-t (its own virtio_blk.ko) and a systemd-boot-efi package"
mkdir -p kroot/boot kroot/lib/modules/6.1.0-t/kernel/drivers/block sroot/usr/lib/systemd/boot/efi
cp "$STUB" kroot/boot/vmlinuz-6.1.0-t
cp "$STUB" sroot/usr/lib/systemd/boot/efi/linuxx64.efi.stub
$MK ko --out kroot/lib/modules/6.1.0-t/kernel/drivers/block/virtio_blk.ko --name virtio_blk --version 1.0 \
	--vermagic "6.1.0-t SMP preempt mod_unload modversions "
# not read when the package is itself an artifact: the kernel's own modules
# are the kernel's by construction (this one's flags would be refused)
$MK ko --out kroot/lib/modules/6.1.0-t/kernel/drivers/block/loop.ko --name loop --version 1.0 \
	--vermagic "6.1.0-t SMP mod_unload "
$MK deb --out k.deb --package linux-image-6.1.0-t --version 6.1.0-1 --root kroot
$MK deb --out s.deb --package systemd-boot-efi --version 252-1 --root sroot

# image DIR VERMAGIC: a tar with DIR/updates/dkms/nvidia.ko of that vermagic
image() {
	rm -rf "img-$1" && mkdir -p "img-$1/lib/modules/$1/updates/dkms"
	$MK ko --out "img-$1/lib/modules/$1/updates/dkms/nvidia.ko" --name nvidia --version 550.163.01 \
		--flavor open --vermagic "$2"
	$MK tar --out "img-$1.tar" --root "img-$1"
}
# recipe FILE TAR KERNEL KERNEL_SHA [MODULES]
recipe() {
	cat > "$1" <<YAML
name: kabi
version: "1"
epoch: 1700000000
artifacts:
  - {name: nvidia, kind: tar, source: $T/$2, sha256: $(sha256 "$2")}
boot:
  kernel: {source: $3, sha256: $4}
  stub: {source: $T/s.deb, sha256: $(sha256 s.deb)}
  init: {source: $INIT, sha256: $(sha256 "$INIT")}
YAML
	[ -z "${5:-}" ] || echo "  modules: [$5]" >> "$1"
}
KDEB=$T/k.deb KSHA=$(sha256 k.deb)

note "modules for 6.12 with a 6.1 kernel: refused, naming both"
image 6.12.0-t "6.12.0-t SMP preempt mod_unload modversions "
recipe r612.yaml img-6.12.0-t.tar "$KDEB" "$KSHA"
expect_exit 1 "kabi: lint: kernel ABI: /lib/modules/6.12.0-t/updates/dkms/nvidia.ko has vermagic '6.12.0-t SMP preempt mod_unload modversions ' (kernel 6.12.0-t), but boot.kernel $KDEB is kernel 6.1.0-t: it would not load the module (--no-lint skips the check)" \
	"$INGOT" build r612.yaml -o out --store st
[ "$(printf '%s\n' "$OUT" | wc -l)" = 1 ] || fail "expected one line, got: $OUT"
assert_no_file out/kabi.sqfs
assert_no_file out/kabi.efi
assert_no_file out/kabi.manifest.json

note "--no-lint skips it (the demo boot images rely on that)"
expect_exit 0 "" "$INGOT" build r612.yaml -o nolint --store st --no-lint --quiet
assert_file nolint/kabi.efi

note "modules for the boot kernel: built"
image 6.1.0-t "6.1.0-t SMP preempt mod_unload modversions "
recipe r61.yaml img-6.1.0-t.tar "$KDEB" "$KSHA" virtio_blk
expect_exit 0 "" "$INGOT" build r61.yaml -o ok --store st --quiet
assert_file ok/kabi.efi

note "the kernel's package as an artifact too: its own modules are not re-judged"
cp r61.yaml rown.yaml
sed -i "s|^boot:|  - {name: kernel-modules, kind: deb, source: $KDEB, sha256: $KSHA, include: [lib/modules]}\nboot:|" rown.yaml
expect_exit 0 "" "$INGOT" build rown.yaml -o own --store st --quiet
assert_eq 1 "$(jq '[.files[] | select(.path | endswith("/loop.ko"))] | length' own/kabi.manifest.json)" "loop.ko in the image"

note "the same release, other flags than the kernel's own modules: refused"
image 6.1.0-t "6.1.0-t SMP mod_unload "
recipe rflags.yaml img-6.1.0-t.tar "$KDEB" "$KSHA" virtio_blk
expect_exit 1 "kernel ABI: /lib/modules/6.1.0-t/updates/dkms/nvidia.ko has vermagic '6.1.0-t SMP mod_unload ', but boot.kernel $KDEB's own modules have '6.1.0-t SMP preempt mod_unload modversions ' (virtio_blk)" \
	"$INGOT" build rflags.yaml -o out --store st

note "the right vermagic in another release's directory: modprobe would not find it"
image 6.1.0-x "6.1.0-t SMP preempt mod_unload modversions "
recipe rdir.yaml img-6.1.0-x.tar "$KDEB" "$KSHA"
expect_exit 1 "kernel ABI: /lib/modules/6.1.0-x/updates/dkms/nvidia.ko: expected it under /lib/modules/6.1.0-t/, where boot.kernel $KDEB (kernel 6.1.0-t) looks for modules, got /lib/modules/6.1.0-x/" \
	"$INGOT" build rdir.yaml -o out --store st

note "a module without a vermagic is refused"
image 6.1.0-t ""
recipe rnone.yaml img-6.1.0-t.tar "$KDEB" "$KSHA"
expect_exit 1 "kernel ABI: /lib/modules/6.1.0-t/updates/dkms/nvidia.ko: expected a vermagic= naming a kernel release, got ''" \
	"$INGOT" build rnone.yaml -o out --store st

note "a kernel whose release nothing tells: the check is not made, so not passed"
recipe rplain.yaml img-6.12.0-t.tar "$STUB" "$(sha256 "$STUB")"
expect_exit 1 "kernel ABI: /lib/modules/6.12.0-t/updates/dkms/nvidia.ko: cannot tell boot.kernel $STUB's release (no bzImage header, no boot/vmlinuz-RELEASE in a package): check not made" \
	"$INGOT" build rplain.yaml -o out --store st
assert_no_file out/kabi.sqfs
echo "ok"
