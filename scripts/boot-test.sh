#!/bin/bash
# Boot the image built by scripts/boot-image.sh under QEMU + OVMF + swtpm
# and check the measured boot on the host:
#   scripts/boot-test.sh BUILD [OUTDIR]
# First an AK is enrolled (`ingot attest enroll`: an EK certificate from
# a local CA, credential activation) on a swtpm state with only a SHA-256
# bank and on one with all four banks; each boot starts from a copy of
# one, the guest quotes with that AK, and quotes are judged with the
# enrolled AK only.  Each case is a real boot (TCG, no KVM here: ~40-90 s
# each, more on a loaded machine); checks that can share a boot do:
#   good      the signed UKI, Secure Boot on, a TPM with only a SHA-256
#             bank: admitted; then PCR 15 extended once more in the
#             guest and quoted again: refused (PCR 15); a quote of the
#             same PCRs and nonce signed by a software key (its public
#             key inside the quote): refused (wrong AK)
#             The good boot is also the platform's reference boot (signed
#             firmware reference: PCRs 0, 2, PCR 7 variables); without it
#             refused (unknown firmware); the same nonce twice: refused
#   sboff     the same UKI and firmware, no Secure Boot keys (off), a TPM
#             with all four banks: the init extends all four; refused at
#             PCR 7; its log with the SecureBoot variable's data
#             rewritten (digest kept): refused as a forged log
#   chain     systemd-boot (signed) chain-loads the good UKI: an extra
#             PCR 4 application, refused (PCR 4); its log with that
#             event relabelled as a driver (digest kept): still refused
#   unsigned  the UKI without its signature, Secure Boot on: the
#             firmware does not run it (Access Denied), no evidence
#   tampered  one flipped byte in an image block not read at mount: the
#             init measured the image, the test init reads every block,
#             dm-verity panics the kernel (panic_on_corruption), no
#             evidence
#   cmdline   a UKI rebuilt with another command line: refused (PCR 4)
#   kernel    a UKI built with another Debian kernel package: refused (PCR 4)
# The host writes a tar onto the evidence disk: a fresh nonce, the signed
# manifest, the keyring (and an action).  The production /init hands over
# to the image's /sbin/init, here the test-only layer's
# tests/boot/test-init.c, which runs the image's own ingot: `ingot verify`
# (its TPM check quotes with that nonce and the enrolled AK and judges
# the firmware log) and a plain quote of PCRs 0-15; the report, quote and
# firmware event log come back as a tar on the same disk.  Here `ingot
# attest boot-check` (the one verdict, attest/verdict.c, with the enrolled
# AK and the signed firmware reference) and `ingot audit` judge them
# again.  (`ingot verify` refuses the guest for its tuple: QEMU has no GPU.)
# The good boot also pushes its evidence to the host's verifier: `ingot
# serve` on loopback, reached through a virtio-serial port (ingot.0) that
# socat relays to it (no guest network), and `ingot attest push --via`
# in the guest.  The verifier, not the guest, decides: its database holds
# the admission and then, after extend15, the refusal; with Slurm
# installed (and root), a slurmctld and slurmd started here
# (tests/e2e/slurm-lib.sh) show the node DOWN before, resumed by the
# verifier's hook on admit, drained with the verdict's reason on refuse.
# About 18 minutes on a 2-core machine loaded by other work (boots 65-176
# s); boots take 33-45 s on an idle one.
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-out/boot}
cd "$(dirname "$0")/.."
ROOT=$(pwd)
INGOT=$ROOT/$BUILD/ingot
. scripts/boot-lib.sh
BOOT_TEST=boot-test
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
# Everything started here is stopped on exit, by pid.
trap boot_verifier_stop EXIT
KEYRING=$ROOT/$OUT/keyring.json
# The platform's firmware reference, recorded from the good boot (the
# reference boot of this QEMU/OVMF platform) and used from then on.
FWREF=$W/firmware-ref.dsse.json

# enrol LABEL BANKS: the AK of every boot with those banks (boot_enrol,
# scripts/boot-lib.sh), in $W/enrol-LABEL; one local CA for both.
enrol() {
	if boot_enrol "$W/enrol-$1" "$W/ca" boot-test "$2" boot-test "$ROOT/$OUT/signing.key" \
		"$ROOT/$OUT/keyring.json"; then
		echo "boot-test: enrol $2: AK enrolled (EK certificate from the local CA, credential activated)" >&2
	else
		echo "boot-test: enrol $2: FAIL: $(tail -n 1 "$W/enrol-$1/enrol.log")" >&2; return 1
	fi
}

# boot CASE EFI IMAGE VERITY FIRMWARE BANKS [ACTION [STOP]]: one boot
# (EFI: the UKI as the ESP's BOOTX64.EFI, or a directory: the whole ESP);
# evidence lands in $W/CASE/ev.  FIRMWARE: sb (Secure Boot on, OVMF's
# snakeoil keys enrolled) or sboff (the same firmware, no keys enrolled:
# Secure Boot off); BANKS: the PCR banks of the swtpm
# (enrol BANKS made its state and AK).
# STOP: a console pattern after which the VM is stopped (a firmware that
# refuses to boot waits forever).
boot() {
	local c=$1 efi=$2 img=$3 verity=$4 fw=$5 banks=$6 action=${7:-} stop=${8:-} d=$W/$1 rc=0 t0=$SECONDS
	local -a machine
	mkdir -p "$d/esp/EFI/BOOT" "$d/tpm" "$d/ev" "$d/in"
	if [ -d "$efi" ]; then cp -r "$efi/." "$d/esp/"; else cp "$efi" "$d/esp/EFI/BOOT/BOOTX64.EFI"; fi
	# The same firmware code either way (PCR 0 stays the reference's);
	# without enrolled keys (no PK) Secure Boot is off.
	machine=(-machine q35,smm=on -global driver=cfi.pflash01,property=secure,value=on
		 -drive if=pflash,format=raw,unit=0,readonly=on,file="$OVMF/OVMF_CODE_4M.secboot.fd")
	if [ "$fw" = sb ]; then
		cp "$OVMF/OVMF_VARS_4M.snakeoil.fd" "$d/vars.fd"
	else
		cp "$OVMF/OVMF_VARS_4M.fd" "$d/vars.fd"
	fi
	echo "$banks" > "$d/banks"
	cp -a "$W/enrol-$banks/tpm/." "$d/tpm/"
	cp "$W/enrol-$banks/ak/"ak.* "$W/enrol-$banks/enrolment.dsse.json" "$d/in/"
	[ ! -f "$FWREF" ] || cp "$FWREF" "$d/in/firmware-ref.dsse.json"
	openssl rand -hex 32 > "$d/nonce"
	cp "$d/nonce" "$d/in/nonce"
	cp "$B.manifest.dsse.json" "$d/in/manifest.dsse.json"
	# the file list the signed statement binds, found beside it by name
	cp "$B.manifest.json" "$d/in/"
	cp "$ROOT/$OUT/keyring.json" "$d/in/keyring.json"
	[ -z "$action" ] || echo "$action" > "$d/in/action"
	[ -z "${PUSH_URL:-}" ] || echo "$PUSH_URL" > "$d/in/verifier"
	boot_evidence_in "$d" 16M
	echo "boot-test: $c: booting (QEMU TCG, OVMF ${fw}, swtpm banks ${banks})" >&2
	boot_start "$d" "$img" "$verity" 1024 "${machine[@]}"
	[ -z "$stop" ] || boot_stop_at "$stop"
	boot_wait || rc=$?
	echo "boot-test: $c: $((SECONDS - t0)) s" >&2
	if [ -z "$stop" ] && [ "$rc" != 0 ]; then
		echo "boot-test: $c: FAIL: qemu exit $rc (console: $d/console.log)" >&2; fails=$((fails + 1)); return 0
	fi
	tar -xf "$d/evidence.img" -C "$d/ev" 2>/dev/null || true
}

# check CASE WANT_EXIT NEEDLE [QUOTE [LOG [ARGS...]]]: `ingot attest
# boot-check` of the case's evidence (QUOTE, LOG: files in its evidence
# unless paths; default quote.json, eventlog.bin) against the signed
# manifest, with the enrolled AK of the case's TPM and the firmware
# reference; ARGS replace `--firmware-ref FWREF`.
check() {
	local c=$1 want=$2 needle=$3 q=${4:-quote.json} log=${5:-eventlog.bin} d=$W/$1 rc=0 out
	local -a args=(--firmware-ref "$FWREF")
	[ $# -le 5 ] || args=("${@:6}")
	[[ "$q" == /* ]] || q=$d/ev/$q
	[[ "$log" == /* ]] || log=$d/ev/$log
	if [ ! -f "$q" ]; then
		echo "boot-test: $c: FAIL: no quote came back (status: $(cat "$d/ev/status" 2>/dev/null || echo none))" >&2
		fails=$((fails + 1)); return
	fi
	out=$("$INGOT" attest boot-check "$q" "$log" --manifest "$B.manifest.dsse.json" --keyring "$KEYRING" \
		--nonce "$(cat "$d/nonce")" --enrolment "$W/enrol-$(cat "$d/banks")/enrolment.dsse.json" \
		"${args[@]}" 2>&1) || rc=$?
	echo "boot-test: $c: $(basename "$q") $(basename "$log") ${args[*]##*/}: $out" >&2
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

enrol sha256 sha256
enrol all sha1,sha256,sha384,sha512

# The host's verifier for the good boot (boot_verifier, scripts/boot-lib.sh):
# `ingot serve` on loopback with the keyring, the manifest and the enrolled
# AK of the SHA-256 TPM, and a Slurm test cluster when Slurm is installed.
# The good boot is this platform's reference boot, so no firmware reference
# exists yet: the verifier accepts unknown-firmware by name (said in its
# verdict).
PUSH=0
if ! boot_verifier "$W/verifier" boot-test "$W/enrol-sha256/enrolment.dsse.json" "$B.manifest.dsse.json" "$KEYRING"; then
	fails=$((fails + 1))
elif ! boot_relay "$W/port.sock" "$BOOT_VADDR"; then
	echo "boot-test: FAIL: no relay (socat) for the guest's port" >&2; fails=$((fails + 1))
else
	PUSH=1
	echo "boot-test: verifier: the guest's port ingot.0 relayed to it" >&2
fi
SLURM=${BOOT_SLURM:-0}

# logedit LOG OUT MODE: a copy of a TCG2 crypto-agile event log with one
# event changed and its digests kept, so it still replays to the quoted
# PCRs: relabel (the first PCR 4 EV_EFI_BOOT_SERVICES_APPLICATION becomes
# an EV_EFI_BOOT_SERVICES_DRIVER) or sbdata (the SecureBoot variable's
# data in PCR 7 flipped).  A log only the verdict's checks can refuse.
logedit() {
	python3 - "$@" <<'PY' || { echo "boot-test: FAIL: logedit $3 $1" >&2; fails=$((fails + 1)); return 1; }
import struct, sys
log = bytearray(open(sys.argv[1], "rb").read())
mode = sys.argv[3]
size = struct.unpack_from("<I", log, 28)[0]          # TCG_PCR_EVENT: the Spec ID event
spec = log[32:32 + size]
sizes = dict(struct.unpack_from("<HH", spec, 28 + 4 * i) for i in range(struct.unpack_from("<I", spec, 24)[0]))
off, done = 32 + size, False
while off + 12 <= len(log) and not done:           # TCG_PCR_EVENT2
    pcr, etype, count = struct.unpack_from("<III", log, off)
    p = off + 12
    for _ in range(count):
        p += 2 + sizes[struct.unpack_from("<H", log, p)[0]]
    esize = struct.unpack_from("<I", log, p)[0]
    data = p + 4
    if mode == "relabel" and pcr == 4 and etype == 0x80000003:
        struct.pack_into("<I", log, off + 4, 0x80000004)
        done = True
    elif mode == "sbdata" and pcr == 7 and etype == 0x80000001:
        namelen, datalen = struct.unpack_from("<QQ", log, data + 16)
        if log[data + 32:data + 32 + 2 * namelen].decode("utf-16-le") == "SecureBoot" and datalen == 1:
            log[data + 32 + 2 * namelen] ^= 1
            done = True
    off = data + esize
if not done:
    sys.exit("no such event")
open(sys.argv[2], "wb").write(log)
PY
}

# console CASE WHAT PATTERN...: each pattern (grep -E) is in the console.
console() {
	local c=$1 what=$2 p
	shift 2
	for p in "$@"; do
		if ! grep -Eq -- "$p" "$W/$c/console.log"; then
			echo "boot-test: $c: FAIL: $what: no '$p' on the console ($W/$c/console.log)" >&2
			fails=$((fails + 1)); return
		fi
	done
	echo "boot-test: $c: $what" >&2
}
# no_evidence CASE: no quote and no report came back.
no_evidence() {
	if [ -f "$W/$1/ev/quote.json" ] || [ -f "$W/$1/ev/report.json" ]; then
		echo "boot-test: $1: FAIL: evidence came back" >&2; fails=$((fails + 1))
	fi
}
# pcr CASE N: PCR N (sha256) of the case's quote.
pcr() { jq -r --arg n "$2" '.pcrs.sha256[$n] // empty' "$W/$1/ev/quote.json" 2>/dev/null || true; }

# 1. the good boot: Secure Boot on, a SHA-256-only TPM.  It is also this
#    platform's reference boot: its quote (enrolled AK) and log give the
#    signed firmware reference.  boot-check refuses it without that
#    reference (unknown firmware) and admits it with it, once: the same
#    nonce again is refused (--seen-nonces).  The guest's own `ingot
#    verify` passed its TPM (measured boot) check (unknown firmware
#    accepted by name: the reference did not exist yet); `ingot audit`
#    finds the image and no evidence problem (its only finding is the
#    GPU-less tuple).  Then (action extend15) PCR 15 is extended once more,
#    as a process on a tampered node would, and the second quote is
#    refused, by boot-check and by the guest's verify.
[ "$SLURM" = 0 ] || boot_watch_start boot-test "$W/slurm-states"
if [ "$PUSH" = 1 ]; then
	PUSH_URL=http://$BOOT_VADDR BOOT_PORT_SOCK=$W/port.sock boot good "$B.efi" "$B.sqfs" "$B.verity" sb sha256 extend15
else
	boot good "$B.efi" "$B.sqfs" "$B.verity" sb sha256 extend15
fi
[ "$SLURM" = 0 ] || boot_watch_stop
# The verifier's word, not the guest's: its database holds an admission
# (the boot as booted) and then a refusal (PCR 15 extended after it).
if [ "$PUSH" = 1 ]; then
	VERDICTS=$(boot_verdicts boot-test)
	echo "boot-test: good: pushed to the host's verifier; its database, node boot-test:" >&2
	printf '%s\n' "$VERDICTS" | sed 's/^/boot-test: good:   /' >&2
	if [[ "$(printf '%s\n' "$VERDICTS" | sed -n 1p)" != "admit: "*"unknown-firmware"* ]] ||
	   [[ "$(printf '%s\n' "$VERDICTS" | sed -n 2p)" != "refuse: "*"PCR 15"* ]] || [ "$(printf '%s\n' "$VERDICTS" | wc -l)" != 2 ]; then
		echo "boot-test: good: FAIL: expected the verifier to admit the boot, then refuse it at PCR 15" >&2
		fails=$((fails + 1))
	fi
	if [ "$SLURM" = 1 ]; then
		echo "boot-test: good: Slurm node boot-test, as it changed: $(paste -sd ';' "$W/slurm-states")" >&2
		if [ "$(sed -n 1p "$W/slurm-states")" != "down|ingot: not admitted yet" ] ||
		   ! grep -qx 'idle|none' "$W/slurm-states" ||
		   [[ "$(tail -n 1 "$W/slurm-states")" != "drained|ingot: refuse: "*"PCR 15"* ]]; then
			echo "boot-test: good: FAIL: expected Slurm to show boot-test down, resumed by the verifier, then drained" >&2
			fails=$((fails + 1))
		fi
	fi
fi
console good "Secure Boot on, PCR 15 extended in the one SHA-256 bank, every image block read" \
	"EFI stub: UEFI Secure Boot is enabled" "measured into PCR 15 \(SHA256\): ingot:boot:v1 image=$NAME " \
	"read all [0-9]+ bytes of the image"
G=$W/good/ev
if "$INGOT" attest firmware-ref "$G/quote.json" "$G/eventlog.bin" --platform qemu-q35-ovmf-secboot \
	--nonce "$(cat "$W/good/nonce")" --enrolment "$W/enrol-sha256/enrolment.dsse.json" --keyring "$KEYRING" \
	--key "$ROOT/$OUT/signing.key" -o "$FWREF" >"$W/firmware-ref.log" 2>&1; then
	echo "boot-test: good: $(cat "$W/firmware-ref.log")" >&2
else
	echo "boot-test: good: FAIL: no firmware reference: $(cat "$W/firmware-ref.log")" >&2; fails=$((fails + 1))
fi
check good 2 "no firmware reference" quote.json eventlog.bin --node boot-test
check good 0 "under Secure Boot (PCR 7), firmware of reference qemu-q35-ovmf-secboot" quote.json eventlog.bin \
	--firmware-ref "$FWREF" --seen-nonces "$W/seen-nonces"
check good 3 "already used" quote.json eventlog.bin --firmware-ref "$FWREF" --seen-nonces "$W/seen-nonces"
if [ -f "$G/report.json" ]; then
	TPM=$(jq -r '.checks[] | select(.name == "tpm") | "\(.status): \(.summary)"' "$G/report.json")
	echo "boot-test: good: in-guest ingot verify, tpm check: $TPM" >&2
	[[ "$TPM" == pass:*"measured boot admit"* ]] || { echo "boot-test: good: FAIL: tpm check did not pass" >&2; fails=$((fails + 1)); }
	mkdir -p "$W/audit/reports" "$W/audit/manifests" "$W/audit/enrolments" "$W/audit/firmware"
	cp "$G/report.json" "$W/audit/reports/boot-test.json"
	cp "$B.manifest.dsse.json" "$W/audit/manifests/"
	cp "$W/enrol-sha256/enrolment.dsse.json" "$W/audit/enrolments/boot-test.json"
	cp "$FWREF" "$W/audit/firmware/" 2>/dev/null || true
	echo "boot-test $(cat "$W/good/nonce")" > "$W/audit/nonces"
	"$INGOT" audit --keyring "$KEYRING" --manifests "$W/audit/manifests" --reports "$W/audit/reports" \
		--nonces "$W/audit/nonces" --enrolments "$W/audit/enrolments" --firmware-refs "$W/audit/firmware" \
		--json "$W/audit/audit.json" >/dev/null 2>&1 || true
	FIND=$(jq -r '[.. | objects | select(has("findings")) | .findings[] | .code] | unique | join(",")' \
		"$W/audit/audit.json" 2>/dev/null || echo "?")
	echo "boot-test: good: ingot audit findings: ${FIND:-none}" >&2
	case ",$FIND," in
	*forged-quote*|*ak-not-enrolled*|*nonce-*|*pcr-mismatch*|*log-mismatch*|*unknown-image*|*boot-refused*|\
	*boot-unchecked*|*unquoted*|*unverified*|"?")
		echo "boot-test: good: FAIL: ingot audit questions the evidence" >&2; fails=$((fails + 1)) ;;
	esac
else
	echo "boot-test: good: FAIL: no report came back" >&2; fails=$((fails + 1))
fi
# A quote of the good boot's PCRs and nonce signed by a software key that
# ships its own public key in the quote (tests/tools/mkquote: a real
# TPMS_ATTEST, a real signature): judged with the enrolled AK, refused.
F=$W/forged
mkdir -p "$F"
if [ -f "$G/quote.json" ]; then
	python3 - "$G/quote.json" >"$F/req" <<'PY'
import hashlib, json, sys
q = json.load(open(sys.argv[1])); v = q["pcrs"]["sha256"]
print(0, q["nonce"], 0xffff, hashlib.sha256(b"".join(bytes.fromhex(v[str(i)]) for i in range(16))).hexdigest())
PY
	"$ROOT/$BUILD/tools/mkquote" "$F" 1 <"$F/req" >"$F/signed"
	python3 - "$G/quote.json" "$F" "$G/software-key-quote.json" <<'PY'
import json, sys
q = json.load(open(sys.argv[1])); d = sys.argv[2]
q["attest"], q["signature"] = open(d + "/signed").read().split()
q["ak_pub"] = open(d + "/ak-0.pub").read()
json.dump(q, open(sys.argv[3], "w"))
PY
fi
check good 2 "quote refused (wrong-ak)" software-key-quote.json
check good 2 "PCR 15:" quote-after.json
TPM=$(jq -r '.checks[] | select(.name == "tpm") | "\(.status): \(.summary)"' "$G/report-after.json" 2>/dev/null || echo none)
echo "boot-test: good: after extend15, in-guest ingot verify, tpm check: $TPM" >&2
[[ "$TPM" == fail:*"measured boot refuse: PCR 15"* ]] ||
	{ echo "boot-test: good: FAIL: after extend15 the guest's own verify did not refuse" >&2; fails=$((fails + 1)); }

# 2. Secure Boot off (the same signed UKI and firmware, no keys enrolled),
#    a TPM with all four banks: the init extends each of them; PCR 7
#    records Secure Boot off: refused at PCR 7.  The same log with the
#    SecureBoot variable's data rewritten to "on" (digest kept, so it
#    still replays): refused as a forged log.
boot sboff "$B.efi" "$B.sqfs" "$B.verity" sboff all
console sboff "Secure Boot off, PCR 15 extended in all four banks" \
	"measured into PCR 15 \(SHA1,SHA256,SHA384,SHA512\): ingot:boot:v1 image=$NAME "
if grep -q "Secure Boot is enabled" "$W/sboff/console.log"; then
	echo "boot-test: sboff: FAIL: Secure Boot was on" >&2; fails=$((fails + 1))
fi
P7G=$(pcr good 7); P7O=$(pcr sboff 7)
echo "boot-test: sboff: PCR 7 ${P7O:-none} (Secure Boot on: ${P7G:-none})" >&2
if [ -z "$P7G" ] || [ -z "$P7O" ] || [ "$P7G" = "$P7O" ]; then
	echo "boot-test: sboff: FAIL: expected PCR 7 quoted in both boots and different" >&2; fails=$((fails + 1))
fi
check sboff 2 "PCR 7:"
logedit "$W/sboff/ev/eventlog.bin" "$W/sboff/sb-rewritten.bin" sbdata &&
	check sboff 2 "the data was rewritten (a forged log)" quote.json "$W/sboff/sb-rewritten.bin"

# 2b. another boot application first: systemd-boot (signed with the same
#     db key, so Secure Boot runs it) chain-loads the good UKI.  The log
#     has two PCR 4 applications; the first is not the manifest's UKI:
#     refused at PCR 4.  The same log with systemd-boot's event relabelled
#     as a boot services driver (digest kept, so it still replays): still
#     refused at PCR 4, judged by its digest.
SDEB=$(sed -n 's/^    source: \(.*systemd-boot-efi[^/]*\.deb\)$/\1/p' "$ROOT/$OUT/$NAME.yaml")
mkdir -p "$W/chain-esp/EFI/BOOT" "$W/chain-esp/EFI/Linux" "$W/sdboot"
dpkg-deb -x "$SDEB" "$W/sdboot"
sbsign --key "$ROOT/$OUT/secure-boot/db.key" --cert "$ROOT/$OUT/secure-boot/db.pem" \
	--output "$W/chain-esp/EFI/BOOT/BOOTX64.EFI" "$W/sdboot/usr/lib/systemd/boot/efi/systemd-bootx64.efi" >/dev/null 2>&1
cp "$B.efi" "$W/chain-esp/EFI/Linux/$NAME.efi"
boot chain "$W/chain-esp" "$B.sqfs" "$B.verity" sb all
console chain "systemd-boot ran the good UKI" "EFI stub: UEFI Secure Boot is enabled" "measured into PCR 15"
check chain 2 "PCR 4: boot application 1"
logedit "$W/chain/ev/eventlog.bin" "$W/chain/relabelled.bin" relabel &&
	check chain 2 "logged as EV_EFI_BOOT_SERVICES_DRIVER" quote.json "$W/chain/relabelled.bin"

# 3. the same UKI without its signature under Secure Boot: the firmware
#    refuses to run it; nothing of the UKI runs, no evidence
cp "$B.efi" "$W/unsigned.efi"
sbattach --remove "$W/unsigned.efi" >/dev/null
boot unsigned "$W/unsigned.efi" "$B.sqfs" "$B.verity" sb all "" "Access Denied"
console unsigned "the firmware refused the unsigned UKI" "Access Denied"
if grep -Eq "EFI stub|ingot-init" "$W/unsigned/console.log"; then
	echo "boot-test: unsigned: FAIL: the unsigned UKI ran" >&2; fails=$((fails + 1))
fi
no_evidence unsigned

# 4. one flipped byte in an image block that mounting does not read (the
#    middle of the data, before the squashfs tables at the end): the init
#    opens and measures the image, the test init reads every block, and
#    dm-verity panics the kernel at that block; nothing is quoted
ITS=$(od -An -t u8 -j 64 -N 8 "$B.sqfs" | tr -d ' ')
OFF=$(( (ITS / 2) / 4096 * 4096 + 123 ))
cp "$B.sqfs" "$W/tampered.sqfs"
OLD=$(od -An -t u1 -j "$OFF" -N 1 "$B.sqfs" | tr -d ' ')
printf "$(printf '\\%03o' $((OLD ^ 0xff)))" | dd of="$W/tampered.sqfs" bs=1 seek="$OFF" conv=notrunc status=none
cmp -s "$B.sqfs" "$W/tampered.sqfs" && { echo "boot-test: tampered: FAIL: no byte changed" >&2; fails=$((fails + 1)); }
boot tampered "$B.efi" "$W/tampered.sqfs" "$B.verity" sb all
console tampered "block $((OFF / 4096)) changed: measured, then the read panicked" \
	"measured into PCR 15" "verity: .*data block $((OFF / 4096)) is corrupted" "Kernel panic.*dm-verity device corrupted"
LM=$(grep -n -m1 'measured into PCR 15' "$W/tampered/console.log" | cut -d: -f1 || true)
LC=$(grep -n -m1 'is corrupted' "$W/tampered/console.log" | cut -d: -f1 || true)
if [ -z "$LM" ] || [ -z "$LC" ] || [ "$LM" -gt "$LC" ]; then
	echo "boot-test: tampered: FAIL: the block was read before the image was measured (not a late read)" >&2
	fails=$((fails + 1))
fi
no_evidence tampered

# 5. a UKI rebuilt with another command line (its own build: the verity
#    salt follows the recipe), judged against the published manifest
sed 's|^  cmdline: "\(.*\)"$|  cmdline: "\1 quiet"|' "$ROOT/$OUT/$NAME.yaml" > "$W/other-cmdline.yaml"
"$INGOT" build "$W/other-cmdline.yaml" -o "$W/other" --store "$ROOT/out/store" --no-lint --quiet
boot cmdline "$W/other/$NAME.efi" "$W/other/$NAME.sqfs" "$W/other/$NAME.verity" sb all
check cmdline 2 "PCR 4: boot application 1"

# 6. another kernel: the previous linux-image-6.1.0-N-amd64 in the archive
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
	boot kernel "$W/okernel/$NAME.efi" "$W/okernel/$NAME.sqfs" "$W/okernel/$NAME.verity" sb all
	check kernel 2 "PCR 4: boot application 1"
else
	echo "boot-test: kernel: FAIL: no other linux-image-6.1.0-*-amd64 could be downloaded" >&2
	fails=$((fails + 1))
fi

if [ "$fails" != 0 ]; then
	echo "boot-test: $fails check(s) failed; consoles under $W ($SECONDS s)" >&2
	exit 1
fi
echo "boot-test: all 7 boots judged as expected in $SECONDS s (good admitted, then refused after extend15 and for a software-key quote; sboff, chain, unsigned, tampered, cmdline, kernel refused or stopped)"
[ "$PUSH" = 0 ] || echo "boot-test: the good boot pushed its evidence: the host's verifier admitted it, then refused it after extend15$([ "$SLURM" = 0 ] || echo ", resuming and then draining its Slurm node")"
