#!/bin/bash
# make real-boot-test: boot the real golden image in production mode.
#   scripts/real-boot-test.sh BUILD [OUTDIR]     (after make real-image)
# Builds OUT/real-h100-test.yaml (the production recipe plus the test
# layer, verify/boot/test) and boots it under QEMU (TCG) + OVMF + swtpm.
# First the swtpm's AK is enrolled on the host (`ingot attest enroll`: an
# EK certificate from a local CA, credential activation) on a swtpm state
# with a SHA-256 bank; every boot starts from a copy of that state, the
# guest gets the AK (and its enrolment record) in its input and quotes
# sha256 PCRs 0,2,4,7,9,11,12,15 with it, and the host judges the quote
# with `ingot attest boot-check` against the signed manifest, the keyring
# and the enrolled AK only.  This image boots with Secure Boot OFF (the
# NVIDIA modules are unsigned; the manifest has no boot.secure_boot) and
# there is no firmware reference for this QEMU platform, so the verdict
# accepts two weaknesses BY NAME: secure-boot-unjudged,unknown-firmware
# (said on every verdict line; the firmware and PCR 7 are not judged).
#   good     ingot-init opens the verity image, extends PCR 15, makes the
#            tmpfs overlay root and execs systemd; ingot-verify.service
#            loads the real modules, runs the image's `ingot verify` with
#            the host's nonce and quotes the TPM; the test layer writes the
#            evidence to the disk with serial ingot-evidence.  Expected:
#            the modules accepted by the booted kernel, the GPU "could not
#            check", the node NOT admitted (no GPU), boot-check admitting
#            the measured boot (weaknesses accepted by name), audit finding
#            nothing wrong with the evidence (the tuple, not checked
#            without a GPU, named unverified).
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
KEYRING=$OUT/keyring.json
NODE=real-boot-test
# Accepted by name, not hidden: Secure Boot is off and unjudged (the
# manifest has no boot.secure_boot), and no firmware reference exists for
# this platform (PCRs 0, 2 and PCR 7's events are not judged).
WEAK=secure-boot-unjudged,unknown-firmware
E=$T/enrol

# enrol: a swtpm state (SHA-256 bank) with an EK certificate from a local
# CA (swtpm_localca, as a TPM vendor's), and an AK enrolled on it with
# `ingot attest enroll` (EK chain to the CA bundle, AK attributes,
# credential activation), before any boot: the swtpm QEMU runs cannot be
# reached by a TCTI meanwhile, so a TCP swtpm on the same state does it.
# Each boot starts from a copy of that state, so the guest loads the same
# AK; an AK the guest made itself would be trusted by no verdict.
enrol() {
	local port=$((20000 + RANDOM % 20000)) sp rc=0 tcti
	mkdir -p "$E/tpm" "$E/ca"
	cat >"$E/ca/localca.conf" <<CONF
statedir = $E/ca
signingkey = $E/ca/signkey.pem
issuercert = $E/ca/issuercert.pem
certserial = $E/ca/certserial
CONF
	printf -- '--platform-manufacturer ingot\n--platform-version 1\n--platform-model real-boot-test\n' >"$E/ca/localca.options"
	cat >"$E/setup.conf" <<CONF
create_certs_tool = $(command -v swtpm_localca)
create_certs_tool_config = $E/ca/localca.conf
create_certs_tool_options = $E/ca/localca.options
active_pcr_banks = sha256
CONF
	swtpm_setup --tpm2 --tpmstate "$E/tpm" --create-ek-cert --create-platform-cert --config "$E/setup.conf" \
		--overwrite >"$E/setup.log" 2>&1 || { say "enrol: swtpm_setup failed ($E/setup.log)"; return 1; }
	cat "$E/ca/issuercert.pem" "$E/ca/swtpm-localca-rootca-cert.pem" >"$E/ca/bundle.pem"
	swtpm socket --tpm2 --tpmstate dir="$E/tpm" --server type=tcp,port=$port,bindaddr=127.0.0.1 \
		--ctrl type=tcp,port=$((port + 1)),bindaddr=127.0.0.1 --flags not-need-init,startup-clear &
	sp=$!
	sleep 0.5
	tcti="swtpm:host=127.0.0.1,port=$port"
	{ "$INGOT" attest ak create -o "$E/ak" --tcti "$tcti" &&
	  "$INGOT" attest enroll request --node "$NODE" --ak "$E/ak" --tcti "$tcti" -o "$E/req.json" &&
	  "$INGOT" attest enroll challenge "$E/req.json" --ca "$E/ca/bundle.pem" --state "$E/state" -o "$E/chal.json" &&
	  "$INGOT" attest enroll answer "$E/chal.json" --ak "$E/ak" --tcti "$tcti" -o "$E/ans.json" &&
	  "$INGOT" attest enroll finish "$E/ans.json" --state "$E/state" --key "$OUT/signing.key" \
		-o "$E/enrolment.dsse.json"; } >"$E/enrol.log" 2>&1 || rc=$?
	kill "$sp" 2>/dev/null || true
	wait "$sp" 2>/dev/null || true
	if [ "$rc" != 0 ] || ! "$INGOT" attest enroll check "$E/enrolment.dsse.json" --keyring "$KEYRING" \
		>>"$E/enrol.log" 2>&1; then
		say "enrol: $(tail -n 1 "$E/enrol.log")"; return 1
	fi
	say "enrol: AK enrolled for node $NODE (EK certificate from the local CA, credential activated)"
}

t0=$(date +%s)
"$INGOT" build "$R" -o "$T/image" --store "$CACHE/store" --key "$OUT/signing.key" --quiet
say "test image built in $(($(date +%s) - t0)) s"
B=$T/image/$NAME
enrol || { failed "the swtpm's AK could not be enrolled ($E/enrol.log)"; exit 1; }

# boot CASE EFI IMAGE VERITY: one production boot; evidence in $T/CASE/ev.
boot() {
	local c=$1 efi=$2 img=$3 verity=$4 d=$T/$1 pid rc=0 t
	mkdir -p "$d/esp/EFI/BOOT" "$d/tpm" "$d/ev" "$d/in/ak"
	cp "$efi" "$d/esp/EFI/BOOT/BOOTX64.EFI"
	cp "$OVMF/OVMF_VARS_4M.fd" "$d/vars.fd"
	# the enrolled TPM (same EK, same owner seed: the AK loads) and its AK
	cp -a "$E/tpm/." "$d/tpm/"
	cp "$E/ak/"ak.* "$d/in/ak/"
	cp "$E/enrolment.dsse.json" "$d/in/enrolment.dsse.json"
	echo "$NODE" > "$d/in/node-id"
	echo "$WEAK" > "$d/in/accept-weak"
	openssl rand -hex 32 > "$d/nonce"
	cp "$d/nonce" "$d/in/nonce"
	cp "$B.manifest.dsse.json" "$d/in/manifest.dsse.json"
	# the file list the signed statement binds, found beside it by name
	cp "$B.manifest.json" "$d/in/"
	cp "$KEYRING" "$d/in/keyring.json"
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
# the verdict's options can change here alone: the signed manifest, the
# keyring, the AK enrolled before the boot (never a key from the
# evidence), the weaknesses accepted by name (no firmware reference: no
# --firmware-ref).  Prints boot-check's line; returns its exit status.
judge() {
	local d=$T/$1
	"$INGOT" attest boot-check "$d/ev/quote.json" "$d/ev/eventlog.bin" --manifest "$B.manifest.dsse.json" \
		--keyring "$KEYRING" --nonce "$(cat "$d/nonce")" --enrolment "$E/enrolment.dsse.json" \
		--seen-nonces "$T/seen-nonces" --node "$NODE" --accept-weak "$WEAK" 2>&1
}

# 1. the good boot
boot good "$B.efi" "$B.sqfs" "$B.verity" || failed "good: the boot did not end in a power-off"
G=$T/good
grep -q 'ingot-init: root: overlay' "$G/console.log" || failed "good: the init did not make the overlay root"
grep -Eq 'systemd\[1\]: .*(Reached target|Started)|Welcome to .*Debian' "$G/console.log" ||
	failed "good: systemd did not start (console: $G/console.log)"
if [ -f "$G/ev/quote.json" ]; then
	rc=0; out=$(judge good) || rc=$?
	say "good: boot-check (accepting by name: $WEAK): $out"
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
	# no GPU under QEMU: the GPU checks could not be made, nothing refuses
	grep -q '^could-not-check: ingot verify exit 20, modules accepted' "$G/ev/status" ||
		failed "good: a node without a GPU must be 'could not check' (not admitted, not refused)"
	[ "$VERD" = could-not-check ] && [ "$(jq -r .exit_status "$G/ev/report.json")" = 20 ] ||
		failed "good: the image's ingot verify did not say could-not-check (20)"
	for c in signature tpm rules; do
		[ "$(jq -r --arg c $c '.checks[] | select(.name == $c) | .status' "$G/ev/report.json")" = pass ] ||
			failed "good: the image's verify check $c did not pass"
	done
	[ "$(jq -r '.checks[] | select(.name == "tuple") | .status' "$G/ev/report.json")" = error ] ||
		failed "good: the tuple check is not 'could not check'"
	# what the files show was compared and matched: module, NVML, smi, GSP, vermagic
	for f in nvidia.ko nvml nvml.package nvidia-smi.package firmware.gsp nvidia.ko.flavor nvidia.ko.vermagic; do
		[ "$(jq -r --arg f $f '.checks[] | select(.name == "tuple") | .details.fields[$f].match' "$G/ev/report.json")" = true ] ||
			failed "good: the image's verify did not compare $f with the tuple"
	done
	[ "$(cat "$G/ev/admitted-target" 2>/dev/null)" = no ] || failed "good: ingot-admitted.target was reached"
	# the versions the image's verifier read from the real bits
	jq -r '.probe.facts[] | select(.value != null) | select(.key | test("^(driver|cuda|nccl|nvml|smi|kernel|firmware.gsp)")) |
		"real-boot-test: good: probe: \(.key) = \(.value) (\(.source))"' "$G/ev/report.json" >&2
	fact() { jq -r --arg k "$1" '.probe.facts[] | select(.key == $k) | .value // empty' "$G/ev/report.json"; }
	[ "$(fact driver.ko_version)" = 550.163.01 ] && [ "$(fact driver.ko_license)" = "Dual MIT/GPL" ] ||
		failed "good: the verifier did not read nvidia.ko 550.163.01 (open) from the image"
	[[ "$(fact cuda.runtime)" == 12.4.* ]] || failed "good: the verifier did not read the CUDA 12.4 runtime"
	[ "$(fact nccl.version)" = 2.22.3 ] || failed "good: the verifier did not read NCCL 2.22.3"
	[ "$(fact firmware.gsp)" = 550.163.01 ] || failed "good: the verifier did not read the GSP firmware directory 550.163.01"
	[ "$(fact driver.userspace_version)" = 550.163.01 ] && [ "$(fact nvml.version)" = 550.163.01 ] ||
		failed "good: the verifier did not read NVML 550.163.01 (libnvidia-ml.so soname and package)"
	[ "$(fact smi.version)" = 550.163.01 ] || failed "good: the verifier did not read the nvidia-smi package 550.163.01"
	NOTMADE=$(jq -r '.checks[] | select(.name == "tuple") | .details.not_made[]?.comparison' "$G/ev/report.json")
	say "good: verify: not made (could not check): ${NOTMADE//$'\n'/, }"
	[[ "$NOTMADE" == *GPU* ]] || failed "good: the GPU check was not reported as not made"
	[[ "$NOTMADE" == *"no GPU driver loaded"* ]] || failed "good: the loaded driver was not reported as not made"
	mkdir -p "$T/audit/reports" "$T/audit/manifests" "$T/audit/enrolments"
	cp "$G/ev/report.json" "$T/audit/reports/real-boot-test.json"
	cp "$B.manifest.dsse.json" "$T/audit/manifests/"
	cp "$E/enrolment.dsse.json" "$T/audit/enrolments/$NODE.json"
	echo "$(jq -r '.node.id // "ingot"' "$G/ev/report.json") $(cat "$G/nonce")" > "$T/audit/nonces"
	# no --firmware-refs: none exists for this platform (accepted by name)
	"$INGOT" audit --keyring "$KEYRING" --manifests "$T/audit/manifests" \
		--reports "$T/audit/reports" --nonces "$T/audit/nonces" --enrolments "$T/audit/enrolments" \
		--accept-weak "$WEAK" --json "$T/audit/audit.json" >/dev/null 2>&1 || true
	# Without a GPU the tuple could not be checked, which the audit names
	# (unverified, "tuple: could not check"); nothing else may be found.
	TUPLE_UNCHECKED=$(jq -r '[.. | objects | select(has("findings")) | .findings[] |
		select(.code == "unverified" and (.detail | startswith("tuple: could not check: ")))] | length' \
		"$T/audit/audit.json" 2>/dev/null || echo 0)
	FIND=$(jq -r '[.. | objects | select(has("findings")) | .findings[] |
		select((.code == "unverified" and (.detail | startswith("tuple: could not check: "))) | not) | .code] |
		unique | join(",")' "$T/audit/audit.json" 2>/dev/null || echo "?")
	say "good: ingot audit findings: ${FIND:-none} (and the tuple could not be checked: $TUPLE_UNCHECKED)"
	[ "$TUPLE_UNCHECKED" = 1 ] || failed "good: ingot audit did not name the tuple as could not check"
	case ",$FIND," in
	*forged-quote*|*ak-not-enrolled*|*nonce-*|*pcr-mismatch*|*log-mismatch*|*unknown-image*|*boot-refused*|\
	*boot-unchecked*|*unquoted*|*unverified*|*,\?,*)
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
	say "kernel: boot-check (accepting by name: $WEAK): $out"
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
say "all boots judged as expected (good: measured boot admitted with the enrolled AK, accepting by name $WEAK; GPU could not check, node not admitted; flipped and kernel refused)"
