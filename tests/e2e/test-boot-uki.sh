#!/bin/bash
# The UKI ingot writes, without booting it: deterministic bytes, readable
# by sbverify and python3-pefile, its Authenticode digest equal to the one
# sbsign signs, its PCR 11 prediction equal to systemd-measure's, its
# PCR 15 prediction recomputed with sha256sum; bad boot: sections refused.
# The stub doubles as the "kernel" (any PE image does for the layout).
. "$(dirname "$0")/lib.sh"
STUB=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
MEASURE=/usr/lib/systemd/systemd-measure
INIT=$BUILD_DIR/ingot-init
[ -f "$STUB" ] && [ -x "$MEASURE" ] || skip "systemd-boot-efi or systemd-measure missing"
command -v sbsign >/dev/null || skip "sbsigntool missing"
/usr/bin/python3 -c 'import pefile' 2>/dev/null || skip "python3-pefile missing"
[ -x "$INIT" ] || fail "$INIT not built"

printf 'hello\n' > "$T/hello"
recipe() { # FILE [CMDLINE] [STUB_SHA]
	cat > "$1" <<YAML
name: uki-test
version: "1"
epoch: 1700000000
files:
  - {path: /etc/hello, content: "hello\n"}
boot:
  kernel: {source: $STUB, sha256: $(sha256 "$STUB")}
  stub: {source: $STUB, sha256: ${3:-$(sha256 "$STUB")}}
  init: {source: $INIT, sha256: $(sha256 "$INIT")}
  cmdline: "${2:-console=ttyS0}"
YAML
}
recipe "$T/r.yaml"
"$INGOT" build "$T/r.yaml" -o "$T/a" --store "$T/store" --no-lint --quiet
"$INGOT" build "$T/r.yaml" -o "$T/b" --store "$T/store2" --no-lint --quiet
EFI=$T/a/uki-test.efi
M=$T/a/uki-test.manifest.json
cmp "$EFI" "$T/b/uki-test.efi" || fail "two builds gave different .efi bytes"
assert_eq "$(sha256 "$EFI")" "$(jq -r .boot.uki.sha256 "$M")" "manifest boot.uki.sha256"
assert_eq "linuxx64.efi.stub" "$(jq -r .boot.stub.source "$M")" "manifest boot.stub.source (base name only)"

note "sbverify and python3-pefile read it"
sbverify --list "$EFI" >"$T/sbv" 2>&1 || fail "sbverify --list: $(cat "$T/sbv")"
assert_contains "$(cat "$T/sbv")" "No signature table present" "sbverify --list"
/usr/bin/python3 - "$EFI" "$T" <<'PY' || fail "python3-pefile disagrees with the layout"
import pefile, sys
p = pefile.PE(sys.argv[1])
names = [s.Name.rstrip(b'\0').decode() for s in p.sections]
assert names[-4:] == ['.osrel', '.cmdline', '.linux', '.initrd'], names
assert p.OPTIONAL_HEADER.CheckSum == p.generate_checksum(), 'checksum'
prev = None
for s in p.sections[-4:]:
    assert s.VirtualAddress % 4096 == 0, (s.Name, hex(s.VirtualAddress))
    assert prev is None or s.VirtualAddress >= prev, 'VMA order'
    prev = s.VirtualAddress + s.Misc_VirtualSize
    open(sys.argv[2] + '/' + s.Name.rstrip(b'\0').decode()[1:], 'wb').write(s.get_data()[:s.Misc_VirtualSize])
assert p.OPTIONAL_HEADER.SizeOfImage >= prev, 'SizeOfImage'
PY
assert_contains "$(cat "$T/cmdline")" "ingot.root=$(jq -r .verity.root_hash "$M")" ".cmdline carries the root hash"
cmp "$T/linux" "$STUB" || fail ".linux is not the kernel"

note "Authenticode digest = what sbsign signs"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/k.pem" -out "$T/c.pem" -subj /CN=t -days 1 2>/dev/null
sbsign --key "$T/k.pem" --cert "$T/c.pem" --detached --output "$T/s.p7" "$EFI" >/dev/null 2>&1
SIGNED=$(openssl asn1parse -inform DER -in "$T/s.p7" | grep -m1 'l=  32 prim: OCTET STRING' | sed 's/.*://' | tr A-F a-f)
assert_eq "$SIGNED" "$(jq -r .boot.uki.authenticode_sha256 "$M")" "Authenticode sha256 (sbsign's SpcIndirectData digest)"

note "PCR 11 = systemd-measure calculate --phase="
SM=$("$MEASURE" calculate --linux="$T/linux" --osrel="$T/osrel" --cmdline="$T/cmdline" --initrd="$T/initrd" \
	--bank=sha256 --phase= | sed -n 's/^11:sha256=//p')
assert_eq "$SM" "$(jq -r .boot.pcr11.predicted.sha256 "$M")" "PCR 11 prediction"
SM1=$("$MEASURE" calculate --linux="$T/linux" --osrel="$T/osrel" --cmdline="$T/cmdline" --initrd="$T/initrd" \
	--bank=sha1 --phase= | sed -n 's/^11:sha1=//p')
assert_eq "$SM1" "$(jq -r .boot.pcr11.predicted.sha1 "$M")" "PCR 11 prediction (sha1)"

note "PCR 15 = H(zeros || H(event)), the event the init writes"
EV="ingot:boot:v1 image=uki-test verity=$(jq -r .verity.root_hash "$M")"
assert_eq "$EV" "$(jq -r .boot.pcr15.event_data "$M")" "PCR 15 event data"
D=$(printf '%s' "$EV" | sha256sum | cut -d' ' -f1)
P=$( (head -c 32 /dev/zero; echo "$D" | xxd -r -p) | sha256sum | cut -d' ' -f1)
assert_eq "$P" "$(jq -r .boot.pcr15.predicted.sha256 "$M")" "PCR 15 prediction"
grep -q 'EVENT_PREFIX "image=%s verity=%s"' "$SRC/boot/init.c" || fail "boot/init.c no longer writes the predicted event format"

note "the initramfs: /init is ingot-init, entries sorted, owner 0, fixed mtime"
/usr/bin/python3 - "$T/initrd" "$INIT" <<'PY' || fail "initramfs layout"
import sys
b = open(sys.argv[1], 'rb').read(); off = 0; names = []
while True:
    h = b[off:off + 110]; assert h[:6] == b'070701', h[:6]
    f = [int(h[6 + 8 * i:14 + 8 * i], 16) for i in range(13)]
    ns, fs = f[11], f[6]; name = b[off + 110:off + 110 + ns - 1].decode()
    off = (off + 110 + ns + 3) & ~3; data = b[off:off + fs]; off = (off + fs + 3) & ~3
    if name == 'TRAILER!!!': break
    assert f[2] == 0 and f[3] == 0 and f[5] == 1700000000, (name, f)
    if name == 'init': assert data == open(sys.argv[2], 'rb').read() and f[1] == 0o100755
    names.append(name)
assert names == sorted(names) and 'init' in names, names
PY

note "another command line: another UKI, another PCR 11"
recipe "$T/r2.yaml" "console=ttyS0 quiet"
"$INGOT" build "$T/r2.yaml" -o "$T/c" --store "$T/store" --no-lint --quiet
assert_ne "$(jq -r .boot.uki.authenticode_sha256 "$M")" "$(jq -r .boot.uki.authenticode_sha256 "$T/c/uki-test.manifest.json")" "Authenticode"
assert_ne "$(jq -r .boot.pcr11.predicted.sha256 "$M")" "$(jq -r .boot.pcr11.predicted.sha256 "$T/c/uki-test.manifest.json")" "PCR 11"

note "packages: a linux-image .deb and a systemd-boot-efi .deb, streamed out"
MK="python3 $SRC/scripts/mkart.py"
mkdir -p "$T/kroot/boot" "$T/kroot/lib/modules/6.1.0-t/kernel/drivers/block" "$T/sroot/usr/lib/systemd/boot/efi"
cp "$STUB" "$T/kroot/boot/vmlinuz-6.1.0-t"
cp "$STUB" "$T/sroot/usr/lib/systemd/boot/efi/linuxx64.efi.stub"
$MK ko --out "$T/kroot/lib/modules/6.1.0-t/kernel/drivers/block/virtio_blk.ko" --name virtio_blk --version 1.0
$MK blob --out "$T/kroot/boot/System.map-6.1.0-t" --size 262144 --seed 5
$MK deb --out "$T/k.deb" --package linux-image-6.1.0-t --version 6.1.0-1 --root "$T/kroot"
$MK deb --out "$T/s.deb" --package systemd-boot-efi --version 252-1 --root "$T/sroot"
debs() { # FILE KERNEL_DEB KERNEL_SHA [MODULES]
	sed -e "s|^  kernel:.*|  kernel: {source: $2, sha256: $3}|" \
	    -e "s|^  stub:.*|  stub: {source: $T/s.deb, sha256: $(sha256 "$T/s.deb")}|" "$T/r.yaml" > "$1"
	[ -z "${4:-}" ] || echo "  modules: [$4]" >> "$1"
}
debs "$T/d.yaml" "$T/k.deb" "$(sha256 "$T/k.deb")"
"$INGOT" build "$T/d.yaml" -o "$T/d" --store "$T/store" --no-lint --quiet
assert_eq "k.deb $(sha256 "$T/k.deb")" "$(jq -r '.boot.kernel | "\(.source) \(.sha256)"' "$T/d/uki-test.manifest.json")" "manifest boot.kernel"
debs "$T/dm.yaml" "$T/k.deb" "$(sha256 "$T/k.deb")" virtio_blk
"$INGOT" build "$T/dm.yaml" -o "$T/dm" --store "$T/store" --no-lint --quiet
/usr/bin/python3 - "$T/dm/uki-test.efi" "$STUB" "$T/kroot/lib/modules/6.1.0-t/kernel/drivers/block/virtio_blk.ko" <<'PY' || fail "the UKI from packages lacks the kernel or the module"
import pefile, sys
p = pefile.PE(sys.argv[1])
sec = {s.Name.rstrip(b'\0'): s.get_data()[:s.Misc_VirtualSize] for s in p.sections}
assert sec[b'.linux'] == open(sys.argv[2], 'rb').read(), '.linux is not boot/vmlinuz-*'
b = sec[b'.initrd']; ko = open(sys.argv[3], 'rb').read()
i = b.index(b'lib/modules/00-virtio_blk.ko\0')
assert ko in b[i:], 'module bytes'
PY
note "packages: the pin is checked over every byte, before any parse error"
debs "$T/bad4.yaml" "$T/k.deb" 0000000000000000000000000000000000000000000000000000000000000000
expect_exit 1 "boot.kernel: $T/k.deb: expected sha256 0000" "$INGOT" build "$T/bad4.yaml" -o "$T/bad" --store "$T/store" --no-lint
head -c 3000 "$T/k.deb" > "$T/cut.deb"
debs "$T/bad5.yaml" "$T/cut.deb" "$(sha256 "$T/cut.deb")"
expect_exit 1 "boot.kernel: $T/cut.deb: data.tar.xz: unexpected end of data" "$INGOT" build "$T/bad5.yaml" -o "$T/bad" --store "$T/store" --no-lint
assert_no_file "$T/bad/uki-test.efi"
debs "$T/bad6.yaml" "$T/k.deb" "$(sha256 "$T/k.deb")" virtio_net
expect_exit 1 "boot.modules[0]: expected virtio_net.ko in $T/k.deb, got none" "$INGOT" build "$T/bad6.yaml" -o "$T/bad" --store "$T/store" --no-lint

note "refusals"
recipe "$T/bad.yaml" "console=ttyS0" 0000000000000000000000000000000000000000000000000000000000000000
expect_exit 1 "boot.stub: $STUB: expected sha256 0000" "$INGOT" build "$T/bad.yaml" -o "$T/bad" --store "$T/store" --no-lint
assert_no_file "$T/bad/uki-test.efi"
recipe "$T/bad2.yaml" "ingot.root=00 console=ttyS0"
expect_exit 1 "boot.cmdline: expected no ingot.root parameter" "$INGOT" build "$T/bad2.yaml" -o "$T/bad" --store "$T/store" --no-lint
sed 's/^  cmdline:.*/  modules: [virtio]/' "$T/r.yaml" > "$T/bad3.yaml"
expect_exit 1 "boot.modules: expected none with a vmlinuz file" "$INGOT" build "$T/bad3.yaml" -o "$T/bad" --store "$T/store" --no-lint
echo "ok"
