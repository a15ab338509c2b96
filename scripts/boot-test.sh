#!/bin/bash
# Boot the image built by scripts/boot-image.sh under QEMU + OVMF + swtpm
# and check the measured boot on the host:
#   scripts/boot-test.sh BUILD [OUTDIR]
# Each case is a real boot (TCG, no KVM here: ~20-60 s each):
#   good       the UKI from an ESP, the image and hash disks: admitted
#   flipped    one flipped image byte: dm-verity refuses the read, the
#              image never runs and nothing is quoted
#   cmdline    a UKI rebuilt with another command line: refused (PCR 4)
#   kernel     a UKI built with another Debian kernel package: refused (PCR 4)
#   extend15   PCR 15 extended once more after the init's measure: refused
# The host writes a tar onto the evidence disk: a fresh nonce, the signed
# manifest, the keyring (and an action for the tamper case).  The guest's
# init (boot/init.c, test mode ingot.test=ingot-evidence) runs the image's
# own ingot: `ingot verify` (its TPM check quotes PCRs 4,7,9,11,12,15 with
# that nonce and judges the firmware log) and a plain quote; the report,
# quote, AK and firmware event log come back as a tar on the same disk.
# Here `ingot attest boot-check` and `ingot audit` judge them again.
# (`ingot verify` refuses the guest for its tuple: QEMU has no GPU.)
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-out/boot}
cd "$(dirname "$0")/.."
ROOT=$(pwd)
INGOT=$ROOT/$BUILD/ingot
NAME=demo-h100-boot
B=$ROOT/$OUT/$NAME
W=$ROOT/$OUT/test
OVMF=/usr/share/OVMF
BOOT_TIMEOUT=${INGOT_BOOT_TIMEOUT:-300}
for f in "$B.efi" "$B.sqfs" "$B.verity" "$B.manifest.json"; do
	[ -f "$f" ] || { echo "boot-test: $f missing (make boot-image)" >&2; exit 1; }
done
rm -rf "$W" && mkdir -p "$W"
fails=0

# boot CASE EFI IMAGE VERITY [ACTION]: one boot; evidence lands in $W/CASE/ev.
boot() {
	local c=$1 efi=$2 img=$3 verity=$4 action=${5:-} d=$W/$1 pid rc=0
	mkdir -p "$d/esp/EFI/BOOT" "$d/tpm" "$d/ev" "$d/in"
	cp "$efi" "$d/esp/EFI/BOOT/BOOTX64.EFI"
	cp "$OVMF/OVMF_VARS_4M.fd" "$d/vars.fd"
	openssl rand -hex 32 > "$d/nonce"
	cp "$d/nonce" "$d/in/nonce"
	cp "$B.manifest.dsse.json" "$d/in/manifest.dsse.json"
	cp "$ROOT/$OUT/keyring.json" "$d/in/keyring.json"
	[ -z "$action" ] || echo "$action" > "$d/in/action"
	truncate -s 16M "$d/evidence.img"
	(cd "$d/in" && tar --format=ustar --owner=0 --group=0 -cf - -- *) |
		dd of="$d/evidence.img" conv=notrunc status=none
	swtpm socket --tpm2 --tpmstate dir="$d/tpm" --ctrl type=unixio,path="$d/tpm.sock" --flags startup-clear &
	pid=$!
	for _ in $(seq 50); do [ -S "$d/tpm.sock" ] && break; sleep 0.1; done
	echo "boot-test: $c: booting (QEMU TCG, OVMF, swtpm)" >&2
	timeout "$BOOT_TIMEOUT" qemu-system-x86_64 -machine q35 -accel tcg -cpu max -m 1024 -smp 2 \
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
	[ "$rc" = 0 ] || { echo "boot-test: $c: qemu exit $rc (console: $d/console.log)" >&2; return 1; }
	tar -xf "$d/evidence.img" -C "$d/ev" 2>/dev/null || true
}

# check CASE WANT_EXIT NEEDLE MANIFEST: boot-check on the case's evidence.
check() {
	local c=$1 want=$2 needle=$3 m=$4 d=$W/$1 rc=0 out
	if [ ! -f "$d/ev/quote.json" ]; then
		echo "boot-test: $c: FAIL: no quote came back (status: $(cat "$d/ev/status" 2>/dev/null || echo none))" >&2
		fails=$((fails + 1)); return
	fi
	out=$("$INGOT" attest boot-check "$d/ev/quote.json" "$d/ev/eventlog.bin" --manifest "$m" \
		--nonce "$(cat "$d/nonce")" --ak-pub "$d/ev/ak.pub.pem" 2>&1) || rc=$?
	echo "boot-test: $c: $out" >&2
	if [ "$rc" != "$want" ] || [[ "$out" != *"$needle"* ]]; then
		echo "boot-test: $c: FAIL: expected exit $want and '$needle', got exit $rc" >&2
		fails=$((fails + 1))
	fi
}

# 0. the real UKI is reproducible: a second build from the same recipe
#    (a fresh store) gives the same bytes
"$INGOT" build "$ROOT/$OUT/$NAME.yaml" -o "$W/again" --store "$W/again-store" --no-lint --quiet
if cmp -s "$B.efi" "$W/again/$NAME.efi"; then
	echo "boot-test: rebuild: same $NAME.efi bytes" >&2
else
	echo "boot-test: FAIL: a second build gave other $NAME.efi bytes" >&2; fails=$((fails + 1))
fi
rm -rf "$W/again-store"

# 1. the good boot: boot-check admits; the guest's own `ingot verify`
#    passed its TPM (measured boot) check; `ingot audit` finds the image
#    and no evidence problem (its only finding is the GPU-less tuple).
boot good "$B.efi" "$B.sqfs" "$B.verity"
check good 0 "boot admit" "$B.manifest.json"
G=$W/good/ev
if [ -f "$G/report.json" ]; then
	TPM=$(jq -r '.checks[] | select(.name == "tpm") | "\(.status): \(.summary)"' "$G/report.json")
	echo "boot-test: good: in-guest ingot verify, tpm check: $TPM" >&2
	[[ "$TPM" == pass:*"measured boot admit"* ]] || { echo "boot-test: good: FAIL: tpm check did not pass" >&2; fails=$((fails + 1)); }
	mkdir -p "$W/audit/reports" "$W/audit/manifests"
	cp "$G/report.json" "$W/audit/reports/boot-test.json"
	cp "$B.manifest.dsse.json" "$W/audit/manifests/"
	echo "boot-test $(cat "$W/good/nonce")" > "$W/audit/nonces"
	"$INGOT" audit --keyring "$ROOT/$OUT/keyring.json" --manifests "$W/audit/manifests" \
		--reports "$W/audit/reports" --nonces "$W/audit/nonces" --json "$W/audit/audit.json" >/dev/null 2>&1 || true
	FIND=$(jq -r '[.. | objects | select(has("findings")) | .findings[] | .code] | unique | join(",")' \
		"$W/audit/audit.json" 2>/dev/null || echo "?")
	echo "boot-test: good: ingot audit findings: ${FIND:-none}" >&2
	case ",$FIND," in
	*forged-quote*|*nonce-*|*pcr-mismatch*|*log-mismatch*|*unknown-image*|*boot-refused*|*boot-unchecked*|*unquoted*|"?")
		echo "boot-test: good: FAIL: ingot audit questions the evidence" >&2; fails=$((fails + 1)) ;;
	esac
else
	echo "boot-test: good: FAIL: no report came back" >&2; fails=$((fails + 1))
fi

# 2. a flipped image byte: dm-verity refuses block 0, the image never runs
cp "$B.sqfs" "$W/flipped.sqfs"
printf '\xff' | dd of="$W/flipped.sqfs" bs=1 seek=40 conv=notrunc status=none
boot flipped "$B.efi" "$W/flipped.sqfs" "$B.verity"
if grep -q 'verity: .*data block 0 is corrupted' "$W/flipped/console.log" &&
   grep -q 'refused: the image did not open' "$W/flipped/ev/status" && [ ! -f "$W/flipped/ev/quote.json" ]; then
	echo "boot-test: flipped: refused by dm-verity ($(grep -m1 -o 'data block 0 is corrupted' "$W/flipped/console.log"))" >&2
else
	echo "boot-test: FAIL: flipped: expected dm-verity to refuse block 0 and no quote" >&2
	fails=$((fails + 1))
fi

# 3. a UKI rebuilt with another command line (its own build: the verity
#    salt follows the recipe), judged against the published manifest
sed 's|^  cmdline: "\(.*\)"$|  cmdline: "\1 quiet"|' "$ROOT/$OUT/$NAME.yaml" > "$W/other-cmdline.yaml"
"$INGOT" build "$W/other-cmdline.yaml" -o "$W/other" --store "$ROOT/out/store" --no-lint --quiet
boot cmdline "$W/other/$NAME.efi" "$W/other/$NAME.sqfs" "$W/other/$NAME.verity"
check cmdline 2 "PCR 4: boot application 1" "$B.manifest.json"

# 4. another kernel: the previous linux-image-6.1.0-N-amd64 in the archive
KDEB=$(sed -n 's/^    source: \(.*linux-image-[^/]*\.deb\)$/\1/p' "$ROOT/$OUT/$NAME.yaml")
KPKG=$(basename "$KDEB" | sed 's/_.*//')
OPKG=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' | cut -d' ' -f1 | grep -vx "$KPKG" | sort -V | tail -n 1)
CACHE=$(dirname "$KDEB")
ODEB=$(ls "$CACHE/${OPKG}"_*.deb 2>/dev/null | tail -n 1 || true)
if [ -z "$ODEB" ] && [ -n "$OPKG" ]; then
	(cd "$CACHE" && apt-get download "$OPKG" >/dev/null 2>&1) || true
	ODEB=$(ls "$CACHE/${OPKG}"_*.deb 2>/dev/null | tail -n 1 || true)
fi
if [ -n "$ODEB" ]; then
	echo "boot-test: kernel: $(basename "$ODEB") instead of $(basename "$KDEB") (pins from the download)" >&2
	awk -v deb="$ODEB" -v sha="$(sha256sum "$ODEB" | cut -d' ' -f1)" '
		/^  kernel:$/ { k = 1; print; next }
		k && /^    source:/ { print "    source: " deb; next }
		k && /^    sha256:/ { print "    sha256: " sha; k = 0; next }
		{ print }' "$ROOT/$OUT/$NAME.yaml" > "$W/other-kernel.yaml"
	"$INGOT" build "$W/other-kernel.yaml" -o "$W/okernel" --store "$ROOT/out/store" --no-lint --quiet
	boot kernel "$W/okernel/$NAME.efi" "$W/okernel/$NAME.sqfs" "$W/okernel/$NAME.verity"
	check kernel 2 "PCR 4: boot application 1" "$B.manifest.json"
else
	echo "boot-test: kernel: FAIL: no other linux-image-6.1.0-*-amd64 could be downloaded" >&2
	fails=$((fails + 1))
fi

# 5. PCR 15 extended again after the init measured the image
boot extend15 "$B.efi" "$B.sqfs" "$B.verity" extend15
check extend15 2 "PCR 15:" "$B.manifest.json"
TPM=$(jq -r '.checks[] | select(.name == "tpm") | "\(.status): \(.summary)"' "$W/extend15/ev/report.json" 2>/dev/null || echo none)
echo "boot-test: extend15: in-guest ingot verify, tpm check: $TPM" >&2
[[ "$TPM" == fail:*"measured boot refuse: PCR 15"* ]] ||
	{ echo "boot-test: extend15: FAIL: the guest's own verify did not refuse" >&2; fails=$((fails + 1)); }

if [ "$fails" != 0 ]; then
	echo "boot-test: $fails case(s) failed; consoles under $W" >&2
	exit 1
fi
echo "boot-test: all 5 boots judged as expected (good admitted; flipped, cmdline, kernel, extend15 refused)"
