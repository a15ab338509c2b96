#!/bin/bash
# make real-boot-test: boot the real golden image in production mode.
#   scripts/real-boot-test.sh BUILD [OUTDIR]     (after make real-image)
# Builds OUT/real-h100-test.yaml (the production recipe plus the test
# layer, verify/boot/test) and boots it under QEMU (TCG) + OVMF + swtpm:
#   good     ingot-init opens the verity image, extends PCR 15, makes the
#            tmpfs overlay root and execs systemd; ingot-verify.service
#            loads the real modules, runs the image's `ingot verify` with
#            the host's nonce and quotes the TPM; the test layer writes the
#            evidence to the disk with serial ingot-evidence.  Expected:
#            the modules accepted by the booted kernel, the GPU "could not
#            check", the node NOT admitted (no GPU), boot-check admitting
#            the measured boot, audit finding nothing wrong with the evidence.
#   flipped  one flipped image byte: dm-verity refuses, nothing runs
#   kernel   the same image with a UKI of another kernel (Debian 12's
#            6.1): boot-check refuses PCR 4 and the image's verifier
#            refuses the NVIDIA modules (vermagic of another kernel ABI)
# Each boot takes a few minutes under TCG.
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-out/real}
cd "$(dirname "$0")/.."
ROOT=$(pwd)
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
INGOT=$ROOT/$BUILD/ingot
CACHE=${INGOT_REAL_CACHE:-/var/cache/ingot-real}
NAME=real-h100-test
R=$OUT/$NAME.yaml
T=$OUT/test
OVMF=/usr/share/OVMF
BOOT_TIMEOUT=${INGOT_BOOT_TIMEOUT:-900}
[ -f "$R" ] || { echo "real-boot-test: $R missing (make real-image)" >&2; exit 1; }
say() { echo "real-boot-test: $*" >&2; }
fails=0
failed() { say "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$T" && mkdir -p "$T"

t0=$(date +%s)
"$INGOT" build "$R" -o "$T/image" --store "$CACHE/store" --key "$OUT/signing.key" --quiet
say "test image built in $(($(date +%s) - t0)) s"
B=$T/image/$NAME

# boot CASE EFI IMAGE VERITY: one production boot; evidence in $T/CASE/ev.
boot() {
	local c=$1 efi=$2 img=$3 verity=$4 d=$T/$1 pid rc=0 t
	mkdir -p "$d/esp/EFI/BOOT" "$d/tpm" "$d/ev" "$d/in"
	cp "$efi" "$d/esp/EFI/BOOT/BOOTX64.EFI"
	cp "$OVMF/OVMF_VARS_4M.fd" "$d/vars.fd"
	openssl rand -hex 32 > "$d/nonce"
	cp "$d/nonce" "$d/in/nonce"
	cp "$B.manifest.dsse.json" "$d/in/manifest.dsse.json"
	cp "$OUT/keyring.json" "$d/in/keyring.json"
	truncate -s 64M "$d/evidence.img"
	(cd "$d/in" && tar --format=ustar --owner=0 --group=0 -cf - -- *) |
		dd of="$d/evidence.img" conv=notrunc status=none
	swtpm socket --tpm2 --tpmstate dir="$d/tpm" --ctrl type=unixio,path="$d/tpm.sock" --flags startup-clear &
	pid=$!
	for _ in $(seq 50); do [ -S "$d/tpm.sock" ] && break; sleep 0.1; done
	say "$c: booting (QEMU TCG, OVMF, swtpm, production init -> systemd)"
	t=$(date +%s)
	timeout "$BOOT_TIMEOUT" qemu-system-x86_64 -machine q35 -accel tcg -cpu max -m 2048 -smp 2 \
		-nographic -no-reboot -nic none \
		-drive if=pflash,format=raw,unit=0,readonly=on,file="$OVMF/OVMF_CODE_4M.fd" \
		-drive if=pflash,format=raw,unit=1,file="$d/vars.fd" \
		-chardev socket,id=chrtpm,path="$d/tpm.sock" -tpmdev emulator,id=tpm0,chardev=chrtpm \
		-device tpm-tis,tpmdev=tpm0 \
		-drive if=none,id=esp,format=raw,readonly=on,file=fat:"$d/esp" \
		-device virtio-blk-pci,drive=esp,bootindex=0 \
		-drive if=none,id=img,format=raw,readonly=on,file="$img" \
		-device virtio-blk-pci,drive=img,serial=ingot-image \
		-drive if=none,id=hash,format=raw,readonly=on,file="$verity" \
		-device virtio-blk-pci,drive=hash,serial=ingot-hash \
		-drive if=none,id=ev,format=raw,file="$d/evidence.img" \
		-device virtio-blk-pci,drive=ev,serial=ingot-evidence \
		</dev/null >"$d/console.log" 2>&1 || rc=$?
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	echo $(($(date +%s) - t)) > "$d/seconds"
	say "$c: powered off after $(cat "$d/seconds") s (qemu exit $rc, console: $d/console.log)"
	[ "$rc" = 0 ] || return 1
	tar -xf "$d/evidence.img" -C "$d/ev" 2>/dev/null || true
}

# judge CASE: the host's judgement of a case's evidence, in one place so
# the verdict's options can change here alone.  Prints boot-check's line;
# returns its exit status.
judge() {
	local d=$T/$1
	"$INGOT" attest boot-check "$d/ev/quote.json" "$d/ev/eventlog.bin" --manifest "$B.manifest.json" \
		--nonce "$(cat "$d/nonce")" --ak-pub "$d/ev/ak.pub.pem" 2>&1
}

# 1. the good boot
boot good "$B.efi" "$B.sqfs" "$B.verity" || failed "good: the boot did not end in a power-off"
G=$T/good
grep -q 'ingot-init: root: overlay' "$G/console.log" || failed "good: the init did not make the overlay root"
grep -Eq 'systemd\[1\]: .*(Reached target|Started)|Welcome to .*Debian' "$G/console.log" ||
	failed "good: systemd did not start (console: $G/console.log)"
if [ -f "$G/ev/quote.json" ]; then
	rc=0; out=$(judge good) || rc=$?
	say "good: boot-check: $out"
	[ "$rc" = 0 ] && [[ "$out" == *"boot admit"* ]] || failed "good: boot-check did not admit the measured boot"
else
	failed "good: no quote came back (status: $(cat "$G/ev/status" 2>/dev/null || echo none))"
fi
if [ -f "$G/ev/modules.txt" ]; then
	sed 's/^/real-boot-test: good: modules: /' "$G/ev/modules.txt" | grep -v ': kernel: ' >&2
	grep -q '^load nvidia: pass' "$G/ev/modules.txt" || failed "good: the booted kernel did not accept nvidia.ko"
	grep -q '^gpu: could not check' "$G/ev/modules.txt" || failed "good: the GPU was not reported as 'could not check'"
	! grep -q ': fail' "$G/ev/modules.txt" || failed "good: a module check failed"
else
	failed "good: no modules.txt came back"
fi
if [ -f "$G/ev/report.json" ]; then
	jq -r '.checks[] | "real-boot-test: good: verify: \(.name): \(.status): \(.summary)"' "$G/ev/report.json" >&2
	TPM=$(jq -r '.checks[] | select(.name == "tpm") | .status' "$G/ev/report.json")
	[ "$TPM" = pass ] || failed "good: the image's own verify did not pass its TPM check"
	VERD=$(jq -r '.verdict // .status // empty' "$G/ev/report.json")
	say "good: the image's verifier: $(cat "$G/ev/status" 2>/dev/null) (verdict: $VERD)"
	grep -q '^refuse' "$G/ev/status" || failed "good: a node without a GPU must not be admitted"
	[ "$(cat "$G/ev/admitted-target" 2>/dev/null)" = no ] || failed "good: ingot-admitted.target was reached"
	# the versions the image's verifier read from the real bits
	jq -r '.probe.facts[] | select(.value != null) | select(.key | test("^(driver|cuda|nccl|firmware.gsp)")) |
		"real-boot-test: good: probe: \(.key) = \(.value) (\(.source))"' "$G/ev/report.json" >&2
	fact() { jq -r --arg k "$1" '.probe.facts[] | select(.key == $k) | .value // empty' "$G/ev/report.json"; }
	[ "$(fact driver.ko_version)" = 550.163.01 ] && [ "$(fact driver.ko_license)" = "Dual MIT/GPL" ] ||
		failed "good: the verifier did not read nvidia.ko 550.163.01 (open) from the image"
	[[ "$(fact cuda.runtime)" == 12.4.* ]] || failed "good: the verifier did not read the CUDA 12.4 runtime"
	[ "$(fact nccl.version)" = 2.22.3 ] || failed "good: the verifier did not read NCCL 2.22.3"
	[ "$(fact firmware.gsp)" = 550.163.01 ] || failed "good: the verifier did not read the GSP firmware directory 550.163.01"
	NOTMADE=$(jq -r '.checks[] | select(.name == "tuple") | .details.not_made[]?.comparison' "$G/ev/report.json")
	say "good: verify: not made (could not check): ${NOTMADE//$'\n'/, }"
	[[ "$NOTMADE" == *GPU* ]] || failed "good: the GPU check was not reported as not made"
	mkdir -p "$T/audit/reports" "$T/audit/manifests"
	cp "$G/ev/report.json" "$T/audit/reports/real-boot-test.json"
	cp "$B.manifest.dsse.json" "$T/audit/manifests/"
	echo "$(jq -r '.node.id // "ingot"' "$G/ev/report.json") $(cat "$G/nonce")" > "$T/audit/nonces"
	"$INGOT" audit --keyring "$OUT/keyring.json" --manifests "$T/audit/manifests" \
		--reports "$T/audit/reports" --nonces "$T/audit/nonces" --json "$T/audit/audit.json" >/dev/null 2>&1 || true
	FIND=$(jq -r '[.. | objects | select(has("findings")) | .findings[] | .code] | unique | join(",")' \
		"$T/audit/audit.json" 2>/dev/null || echo "?")
	say "good: ingot audit findings: ${FIND:-none}"
	case ",$FIND," in
	*forged-quote*|*nonce-*|*pcr-mismatch*|*log-mismatch*|*unknown-image*|*boot-refused*|*unquoted*|*,\?,*)
		failed "good: ingot audit questions the evidence" ;;
	esac
else
	failed "good: no report came back"
fi

# 2. a flipped image byte: dm-verity refuses, the image never runs
cp "$B.sqfs" "$T/flipped.sqfs"
# flip (not set) the byte: it may already hold any value
byte=$(od -A n -t u1 -j 40 -N 1 "$T/flipped.sqfs" | tr -d ' ')
printf "\\x$(printf %02x $((byte ^ 255)))" | dd of="$T/flipped.sqfs" bs=1 seek=40 conv=notrunc status=none
cmp -s "$B.sqfs" "$T/flipped.sqfs" && failed "flipped: the copy did not change"
boot flipped "$B.efi" "$T/flipped.sqfs" "$B.verity" || true
if grep -q 'verity: .*data block 0 is corrupted' "$T/flipped/console.log" &&
   ! grep -q 'systemd\[1\]' "$T/flipped/console.log" && [ ! -f "$T/flipped/ev/quote.json" ]; then
	say "flipped: refused by dm-verity, systemd never ran"
else
	failed "flipped: expected dm-verity to refuse block 0 and nothing to run"
fi
rm -f "$T/flipped.sqfs"

# 3. another kernel's UKI with the same image
ODEB=$(ls "$CACHE"/debs/linux-image-6.1.0-*-amd64_*.deb | sort -V | tail -n 1)
awk -v deb="$ODEB" -v sha="$(sha256sum "$ODEB" | cut -d' ' -f1)" '
	/^  kernel:$/ { k = 1; print; next }
	k && /^    source:/ { print "    source: " deb; next }
	k && /^    sha256:/ { print "    sha256: " sha; k = 0; next }
	/^  modules:/ { print "  modules: [virtio_ring, virtio, virtio_pci_legacy_dev, virtio_pci_modern_dev, virtio_pci, virtio_blk,"
		print "            dm-mod, dm-bufio, reed_solomon, dm-verity, squashfs, overlay]"; next }
	{ print }' "$R" > "$T/other-kernel.yaml"
"$INGOT" build "$T/other-kernel.yaml" -o "$T/okernel" --store "$CACHE/store" --quiet
boot kernel "$T/okernel/$NAME.efi" "$T/okernel/$NAME.sqfs" "$T/okernel/$NAME.verity" || true
if [ -f "$T/kernel/ev/quote.json" ]; then
	rc=0; out=$(judge kernel) || rc=$?
	say "kernel: boot-check: $out"
	[ "$rc" = 2 ] && [[ "$out" == *"PCR 4"* ]] || failed "kernel: expected boot-check to refuse PCR 4"
	grep -q '^vermagic nvidia .*: fail' "$T/kernel/ev/modules.txt" ||
		failed "kernel: expected the image's verifier to refuse nvidia.ko built for another kernel"
	grep '^vermagic nvidia \|^load nvidia' "$T/kernel/ev/modules.txt" | sed 's/^/real-boot-test: kernel: /' >&2
else
	failed "kernel: no quote came back (status: $(cat "$T/kernel/ev/status" 2>/dev/null || echo none))"
fi

if [ "$fails" != 0 ]; then
	say "$fails check(s) failed; consoles under $T"
	exit 1
fi
say "all boots judged as expected (good: measured boot admitted, GPU could not check, node not admitted; flipped and kernel refused)"
