#!/bin/bash
# make real-boot-test: boot the real golden image in production mode.
#   scripts/real-boot-test.sh BUILD [OUTDIR]     (after make real-image)
# Builds OUT/real-h100-test.yaml (the production recipe plus the test
# layer, verify/boot/test) and boots it under QEMU (TCG) + OVMF (Secure
# Boot code, SMM, a fresh copy of the snakeoil variable store per boot:
# PK, KEK and db = the test db key that signed the UKI and the modules,
# scripts/real-secure-boot.sh) + swtpm.
# First the swtpm's AK is enrolled on the host (`ingot attest enroll`: an
# EK certificate from a local CA, credential activation) on a swtpm state
# with a SHA-256 bank; every boot starts from a copy of that state, the
# guest gets the AK (and its enrolment record) in its input and quotes
# sha256 PCRs 0,2,4,7,9,11,12,15 with it, and the host judges the quote
# with `ingot attest boot-check` against the signed manifest (its
# boot.secure_boot names the db certificate PCR 7 must show), the
# keyring, the enrolled AK and the platform's signed firmware reference
# (PCRs 0, 2 and PCR 7's variables), recorded from the first boot: no
# weakness is accepted.  Every boot is bounded (INGOT_BOOT_TIMEOUT); a
# boot that brings no evidence back is refused.  No case's input holds a
# manifest or keyring: the image's pre-check fetches its signed manifest
# from a host verifier through the port ingot.0 (a pushing case's, else
# one that only holds the case's manifest) and checks it against the
# keyring baked into the image.
#   kernel   (first: also the platform's reference boot, its firmware
#            being the same as every other case's) the same image with a
#            UKI of another kernel (Debian 12's 6.1), signed with the same
#            db key: ingot build refuses it (kernel ABI: the image's
#            modules are 6.12's), so it is built with --no-lint; the
#            firmware reference is recorded from its quote and log;
#            boot-check refuses PCR 4 and the image's verifier refuses the
#            NVIDIA modules (vermagic of another kernel ABI)
#   good     Secure Boot on: the firmware runs the db-signed UKI, the
#            kernel is locked down (integrity, sig_enforce Y) and loads
#            the db-signed nvidia.ko (ENODEV: no GPU);
#            ingot-init opens the verity image, extends PCR 15, makes the
#            tmpfs overlay root and execs systemd; ingot-verify.service
#            loads the real modules, runs the image's `ingot verify` with
#            the host's nonce and quotes the TPM; the test layer writes the
#            evidence to the disk with serial ingot-evidence.  Expected:
#            no ConditionNeedsUpdate= unit runs; the modules accepted by
#            the booted kernel; signature, image, files, tpm and rules
#            pass, the GPU "could not check", the node NOT admitted (no
#            GPU), boot-check admitting the measured boot under Secure
#            Boot with the firmware reference (nothing accepted), audit
#            finding nothing wrong with the evidence (the tuple, not
#            checked without a GPU, named unverified).  The image's own
#            ingot-attest.service pushes quote, log and report to the
#            host's verifier (below): it admits the boot by its quote, but
#            the report's GPU checks could not be made: not-made ("could
#            not check"), and the Slurm node stays drained with that reason.
#   overlay  the good image, a byte appended to nvidia-smi in the running
#            root by the test layer before ingot-verify: the files check
#            fails and names it, image and tpm pass, the node is refused;
#            in the same boot the kernel refuses an unsigned module and
#            one signed by a key enrolled nowhere (insmod: "Key was
#            rejected by service")
#   flipped  one flipped image byte: dm-verity refuses, nothing runs
#   sboff    the same UKI and firmware code, a variable store without keys
#            (Secure Boot off, no lockdown): boot-check refuses PCR 7, and
#            so does the host's verifier it pushes to (the node drained)
#   otherkey the good UKI signed by a key enrolled nowhere: the firmware
#            refuses to run it ("Access Denied"), no evidence: refused
#   amd      the AMD MI300X image (recipes/real/amd-mi300x.yaml), its
#            production UKI signed by the same db key, under the same
#            Secure Boot store: the locked-down kernel loads Debian's
#            signed amdgpu (no device to bind), the image's verifier reads
#            amdgpu, its firmware, HIP, HSA, RCCL and SMI, the GPU facts
#            "could not check", and boot-check admits the quote as for
#            the NVIDIA image; the ROCm versions it saw are printed
# The host's verifier (boot_verifier, scripts/boot-lib.sh): `ingot serve` on
# loopback, started once the reference boot gave the firmware reference,
# trusting what boot-check trusts; with Slurm installed (and root) a
# slurmctld and a slurmd standing in for the guest's, whose node is DOWN
# until the verifier's hook resumes it.  A pushing case's guest reaches it
# through a virtio-serial port (ingot.0) that socat relays to loopback: no
# guest network.  The verdict is read from the verifier's database, and
# the node's Slurm states are watched through the boot.
# Each boot takes a few minutes under TCG.  INGOT_REAL_BOOT_CASES picks
# the cases (default: all seven, in this order; good and amd need kernel's
# firmware reference first).
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-out/real}
cd "$(dirname "$0")/.."
ROOT=$(pwd)
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
INGOT=$ROOT/$BUILD/ingot
. scripts/boot-lib.sh
BOOT_TEST=real-boot-test
# the host's verifier, its relays and Slurm test cluster, stopped on exit by pid
trap boot_verifier_stop EXIT
CACHE=${INGOT_REAL_CACHE:-/var/cache/ingot-real}
NAME=real-h100-test
R=$OUT/$NAME.yaml
T=$OUT/test
OVMF=/usr/share/OVMF
BOOT_TIMEOUT=${INGOT_BOOT_TIMEOUT:-900}
# The cases to boot, in order (a subset while working on one of them).
CASES=${INGOT_REAL_BOOT_CASES:-kernel good overlay flipped sboff otherkey amd}
[ -f "$R" ] || { echo "real-boot-test: $R missing (make real-image)" >&2; exit 1; }
# what the pool recipe's ${...} name (make real-image wrote them)
sets() { sed 's/^/--set=/' "$OUT/$1.vars"; }
mapfile -t SETS < <(sets real-h100)
say() { echo "real-boot-test: $*" >&2; }
fails=0
failed() { say "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$T" && mkdir -p "$T"
KEYRING=$OUT/keyring.json
NODE=real-boot-test
E=$T/enrol
# The platform's signed firmware reference, recorded from the first boot.
FWREF=$T/firmware-ref.dsse.json
PLATFORM=qemu-q35-ovmf-secboot-snakeoil
# The cases whose guest pushes its evidence to the host's verifier.
PUSH_CASES="good sboff"

# enrol: the AK every boot quotes with (boot_enrol, scripts/boot-lib.sh):
# a swtpm state with a SHA-256 bank, the AK enrolled for $NODE before any
# boot; each boot starts from a copy of that state.
enrol() {
	if ! boot_enrol "$E" "$E/ca" real-boot-test sha256 "$NODE" "$OUT/signing.key" "$KEYRING"; then
		say "enrol: $(tail -n 1 "$E/enrol.log")"; return 1
	fi
	say "enrol: AK enrolled for node $NODE (EK certificate from the local CA, credential activated)"
}

# The production outputs, before any boot: no test-only parameter in the
# production UKI's command line, the UKI and every NVIDIA module signed
# with the db certificate.
production() {
	local P=$OUT/real-h100 m serial SBCERT f0=$fails
	SBCERT=$(sed -n 's/^SB_CERT=//p' "$OUT/real-h100.vars")
	objcopy -O binary --only-section=.cmdline "$P.efi" "$T/production.cmdline"
	say "production: UKI command line: $(tr -d '\0' < "$T/production.cmdline")"
	! grep -q no_timer_check "$T/production.cmdline" recipes/real/nvidia-h100.yaml ||
		failed "production: the UKI or recipe carries the test-only no_timer_check"
	sbverify --cert "$SBCERT" "$P.efi" >/dev/null 2>&1 ||
		failed "production: the UKI is not signed with the db certificate"
	mkdir -p "$T/modules" && tar -xf "$OUT/layers/nvidia-modules-signed.tar" -C "$T/modules"
	# sign-file names the signer by issuer and serial (modinfo's sig_key)
	serial=$(openssl x509 -in "$SBCERT" -noout -serial | sed 's/^serial=//')
	for m in "$T"/modules/usr/lib/modules/*/updates/nvidia/*.ko; do
		[ "$(modinfo -F sig_key "$m" | tr -d ':')" = "$serial" ] && [ "$(modinfo -F sig_hashalgo "$m")" = sha256 ] ||
			failed "production: $(basename "$m") is not signed with the db key (sig_key '$(modinfo -F sig_key "$m")')"
	done
	[ "$fails" != "$f0" ] || say "production: the UKI and $(ls "$T"/modules/usr/lib/modules/*/updates/nvidia/*.ko | wc -l) NVIDIA modules signed with the db certificate (serial $serial)"
	rm -rf "$T/modules"
}
production

t0=$(date +%s)
"$INGOT" build "$R" "${SETS[@]}" -o "$T/image" --store "$CACHE/store" --key "$OUT/signing.key" --quiet
say "test image built in $(($(date +%s) - t0)) s"
B=$T/image/$NAME
enrol || { failed "the swtpm's AK could not be enrolled ($E/enrol.log)"; exit 1; }

# boot CASE EFI IMAGE VERITY [ACTION [VARS [STOP]]]: one production boot;
# evidence in $T/CASE/ev.  ACTION goes to the test layer (verify/boot/test),
# e.g. overlay-write.  VARS: OVMF's variable store (default the snakeoil
# one: Secure Boot on), a fresh copy each boot; STOP: a console pattern
# after which the VM is stopped (a refusing firmware waits for a key).
boot() {
	local c=$1 efi=$2 img=$3 verity=$4 action=${5:-} vars=${6:-OVMF_VARS_4M.snakeoil.fd} stop=${7:-} d=$T/$1 rc=0 t
	mkdir -p "$d/esp/EFI/BOOT" "$d/tpm" "$d/ev" "$d/in/ak"
	cp "$efi" "$d/esp/EFI/BOOT/BOOTX64.EFI"
	cp "$OVMF/$vars" "$d/vars.fd"
	# the enrolled TPM (same EK, same owner seed: the AK loads) and its AK
	cp -a "$E/tpm/." "$d/tpm/"
	cp "$E/ak/"ak.* "$d/in/ak/"
	cp "$E/enrolment.dsse.json" "$d/in/enrolment.dsse.json"
	echo "$NODE" > "$d/in/node-id"
	[ ! -f "$FWREF" ] || cp "$FWREF" "$d/in/firmware-ref.dsse.json"
	openssl rand -hex 32 > "$d/nonce"
	cp "$d/nonce" "$d/in/nonce"
	[ -z "$action" ] || echo "$action" > "$d/in/action"
	# No manifest or keyring in the input: the image holds its keyring and
	# fetches the signed manifest from a verifier through its port.
	local sock="" watch=0
	case " $PUSH_CASES " in
	*" $c "*) ! push_input "$c" || { sock=$T/port.sock; watch=${BOOT_SLURM:-0}; } ;;
	*) ! manifest_server "$c" || sock=$T/port.sock ;;
	esac
	[ -z "$sock" ] || printf 'INGOT_VERIFIER=http://127.0.0.1\nINGOT_VIA=/dev/virtio-ports/ingot.0\n' >"$d/in/verifier.env"
	boot_evidence_in "$d" 64M
	say "$c: booting (QEMU TCG, OVMF Secure Boot code + $vars, swtpm, production init -> systemd)"
	t=$(date +%s)
	[ "$watch" = 0 ] || boot_watch_start "$NODE" "$d/slurm-states"
	BOOT_PORT_SOCK=$sock boot_start "$d" "$img" "$verity" 2048 -machine q35,smm=on \
		-global driver=cfi.pflash01,property=secure,value=on \
		-drive if=pflash,format=raw,unit=0,readonly=on,file="$OVMF/OVMF_CODE_4M.secboot.fd"
	[ -z "$stop" ] || boot_stop_at "$stop"
	boot_wait || rc=$?
	[ "$watch" = 0 ] || boot_watch_stop
	echo $(($(date +%s) - t)) > "$d/seconds"
	say "$c: powered off after $(cat "$d/seconds") s (qemu exit $rc, console: $d/console.log)"
	[ "$rc" = 0 ] || [ -n "$stop" ] || return 1
	tar -xf "$d/evidence.img" -C "$d/ev" 2>/dev/null || true
}

# push_input CASE: the case's guest pushes its evidence to the host's
# verifier (the image's own ingot-attest.service, pointed at it by the
# test layer's drop-in): started at the first such case, once the
# platform's firmware reference exists (the verifier loads its trust at
# start), trusting what judge trusts and accepting nothing by name; a
# relay for this boot from the guest's port ingot.0 to it; and the push's
# settings in the case's input (attest.env).  Returns 1 (counted as a
# failure) when it cannot push.
VERIFIER=none
push_input() {
	local c=$1
	if [ "$VERIFIER" = none ]; then
		VERIFIER=failed
		[ -f "$FWREF" ] || { failed "$c: no verifier without the firmware reference (run the kernel case first)"; return 1; }
		boot_verifier "$T/verifier" "$NODE" "$E/enrolment.dsse.json" "$B.manifest.dsse.json" "$KEYRING" "$FWREF" ||
			{ fails=$((fails + 1)); return 1; }
		VERIFIER=up
	fi
	[ "$VERIFIER" = up ] || return 1
	boot_relay "$T/port.sock" "$BOOT_VADDR" || { failed "$c: no relay (socat) for the guest's port"; return 1; }
	boot_verdicts "$NODE" | grep -c ': ' >"$T/$c/verdicts-before" || true
	cat >"$T/$c/in/attest.env" <<ENV
INGOT_VERIFIER=http://$BOOT_VADDR
INGOT_AK=/run/ingot/in/ak
INGOT_PUSH_REPORT=1
INGOT_ATTEST_ARGS="--via /dev/virtio-ports/ingot.0 --node $NODE"
ENV
	say "$c: the guest pushes to the host's verifier through its port ingot.0 (relayed to $BOOT_VADDR)"
}

# manifest_server CASE: for a case that pushes nothing, a verifier that
# only hands out $B's signed manifest (GET /v1/manifests): `ingot serve`
# on loopback trusting KEYRING, relayed to the guest's port as a pushing
# case's is.  Returns 1 (the image's pre-check then cannot check) when
# it did not start.
manifest_server() {
	local v=$T/$1/manifests
	mkdir -p "$v"
	printf 'listen = 127.0.0.1:0\ndatabase = verifier.sqlite\nkeyring = %s\nmanifest = %s\nconnection-timeout = %s\n' \
		"$KEYRING" "$B.manifest.dsse.json" "$BOOT_TIMEOUT" >"$v/verifier.conf"
	"$INGOT" serve --config "$v/verifier.conf" >"$v/serve.out" 2>"$v/serve.err" &
	BOOT_VERIFIER_PIDS+=($!)
	for _ in $(seq 100); do grep -q '^listening on ' "$v/serve.out" 2>/dev/null && break; sleep 0.1; done
	grep -q '^listening on ' "$v/serve.out" 2>/dev/null || { say "$1: no manifest server: $(tail -n 1 "$v/serve.err")"; return 1; }
	boot_relay "$T/port.sock" "$(sed -n 's/^listening on //p' "$v/serve.out")" || return 1
	say "$1: the guest fetches its manifest from a verifier through its port ingot.0"
}

# pushed CASE VERDICT WHY: CASE's guest pushed its evidence and the
# verifier (its database, not the guest's word) stored one verdict for
# it, matching the glob VERDICT ("VERDICT: REASON"); with Slurm the node
# was never schedulable during the boot and ends drained with that
# verdict as its reason.  WHY: what that means, said in the output.
pushed() {
	local c=$1 want=$2 why=$3 d=$T/$1 new heard
	[ "$VERIFIER" = up ] || return 0
	# push's own line in the guest's journal: "boot VERDICT: REASON"
	heard=$(grep -a 'ingot-attest' "$d/ev/journal.txt" 2>/dev/null |
		sed -n 's/.*: boot \(admit\|refuse\|unverified\|not-made\): /\1: /p' | head -n 1 || true)
	say "$c: the guest's ingot-attest heard: ${heard:-nothing (journal: $d/ev/journal.txt)}"
	new=$(boot_verdicts "$NODE" | tail -n +$(($(cat "$d/verdicts-before") + 1)))
	say "$c: the host's verifier stored: ${new:-nothing}"
	if [ "$(printf '%s\n' "$new" | grep -c ': ')" != 1 ] || [[ "$new" != $want ]]; then
		failed "$c: expected the verifier to store one verdict '$want'"
		return
	fi
	[ "$heard" = "$new" ] || failed "$c: the guest heard another verdict than the verifier stored"
	if [ "$BOOT_SLURM" = 1 ]; then
		say "$c: Slurm node $NODE, as it changed: $(paste -sd ';' "$d/slurm-states")"
		! grep -Eq '^(idle|mixed|allocated|completing)' "$d/slurm-states" ||
			failed "$c: the node was schedulable during the boot"
		# (the reason's start: Slurm may shorten a long one)
		[[ "$(tail -n 1 "$d/slurm-states")" == *drain*"|ingot: ${new:0:40}"* ]] ||
			failed "$c: expected Slurm to show $NODE drained with the verdict's reason"
		why="$why; Slurm keeps $NODE drained with that reason"
	fi
	say "$c: $why"
}

# judge CASE: the host's judgement of a case's evidence, in one place so
# the verdict's options can change here alone: the signed manifest, the
# keyring, the AK enrolled before the boot (never a key from the
# evidence), the platform's firmware reference; no weakness accepted.
# Prints boot-check's line; returns its exit status.
judge() {
	local d=$T/$1
	[ -f "$FWREF" ] || { echo "no firmware reference (the kernel case, the reference boot, runs first)"; return 1; }
	"$INGOT" attest boot-check "$d/ev/quote.json" "$d/ev/eventlog.bin" --manifest "$B.manifest.dsse.json" \
		--keyring "$KEYRING" --nonce "$(cat "$d/nonce")" --enrolment "$E/enrolment.dsse.json" \
		--seen-nonces "$T/seen-nonces" --node "$NODE" --firmware-ref "$FWREF" 2>&1
}

# reference CASE: the platform's firmware reference (PCRs 0, 2, PCR 7's
# variables and authorities) from CASE's quote (enrolled AK, its nonce)
# and log, signed with the image's signing key.
reference() {
	local d=$T/$1
	if "$INGOT" attest firmware-ref "$d/ev/quote.json" "$d/ev/eventlog.bin" --platform "$PLATFORM" \
		--nonce "$(cat "$d/nonce")" --enrolment "$E/enrolment.dsse.json" --keyring "$KEYRING" \
		--key "$OUT/signing.key" -o "$FWREF" >"$T/firmware-ref.log" 2>&1; then
		say "$1: the reference boot: $(cat "$T/firmware-ref.log")"
	else
		failed "$1: no firmware reference: $(cat "$T/firmware-ref.log")"
	fi
}

# secure_admitted CASE: its boot ran under Secure Boot, the kernel locked
# down with module signatures enforced, reached systemd, and boot-check
# admitted its quote with nothing accepted.
secure_admitted() {
	local c=$1 d=$T/$1 rc=0 out
	grep -q 'EFI stub: UEFI Secure Boot is enabled' "$d/console.log" &&
		grep -q 'Kernel is locked down from EFI Secure Boot' "$d/console.log" ||
		failed "$c: Secure Boot and lockdown not on (console: $d/console.log)"
	sed "s/^/real-boot-test: $c: /" "$d/ev/secure-boot.txt" >&2 2>/dev/null || true
	grep -qx 'lockdown: .*\[integrity\].*' "$d/ev/secure-boot.txt" && grep -qx 'sig_enforce: Y' "$d/ev/secure-boot.txt" ||
		failed "$c: the kernel was not locked down with module signatures enforced"
	grep -Eq 'systemd\[1\]: .*(Reached target|Started)|Welcome to .*Debian' "$d/console.log" ||
		failed "$c: systemd did not start (console: $d/console.log)"
	if [ -f "$d/ev/quote.json" ]; then
		out=$(judge "$c") || rc=$?
		say "$c: boot-check: $out"
		[ "$rc" = 0 ] && [[ "$out" == *"boot admit"*"under Secure Boot (PCR 7)"* ]] && [[ "$out" != *accept* ]] ||
			failed "$c: boot-check did not admit the measured boot under Secure Boot with nothing accepted"
	else
		failed "$c: no quote came back (status: $(cat "$d/ev/status" 2>/dev/null || echo none))"
	fi
}

# 1. the good boot
case_good() {
	[ -f "$FWREF" ] || { failed "good: no firmware reference (run the kernel case, the reference boot, first)"; return; }
	boot good "$B.efi" "$B.sqfs" "$B.verity" || failed "good: the boot did not end in a power-off"
	G=$T/good
	grep -q 'ingot-init: root: overlay' "$G/console.log" || failed "good: the init did not make the overlay root"
	secure_admitted good
	# The image's /etc/.updated and /var/.updated carry its epoch: no unit
	# rebuilds the linker cache, users or catalogs over the image at boot.
	! grep -aEq '(Starting|Finished).*(ldconfig|systemd-update-done|systemd-journal-catalog-u|systemd-hwdb-update)' \
		"$G/console.log" || failed "good: a first-boot update step ran over the image (ConditionNeedsUpdate)"
	if [ -f "$G/ev/modules.txt" ]; then
		sed 's/^/real-boot-test: good: modules: /' "$G/ev/modules.txt" | grep -v ': kernel: ' >&2
		grep -q "^gate nvidia: pass .*files have not passed ingot's check" "$G/ev/modules.txt" ||
			failed "good: a modprobe of nvidia before the files check was not refused by the gate"
		grep -q '^load nvidia: pass' "$G/ev/modules.txt" || failed "good: the booted kernel did not accept nvidia.ko"
		grep -q '^gpu: could not check' "$G/ev/modules.txt" || failed "good: the GPU was not reported as 'could not check'"
		# the signed module ran under lockdown: its probe found no GPU
		grep -q 'NVRM: No NVIDIA GPU found' "$G/ev/modules.txt" || failed "good: nvidia.ko did not run to its GPU probe"
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
		for c in signature image files tpm rules; do
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
		mkdir -p "$T/audit/firmware" && cp "$FWREF" "$T/audit/firmware/" 2>/dev/null || true
		"$INGOT" audit --keyring "$KEYRING" --manifests "$T/audit/manifests" \
			--reports "$T/audit/reports" --nonces "$T/audit/nonces" --enrolments "$T/audit/enrolments" \
			--firmware-refs "$T/audit/firmware" --json "$T/audit/audit.json" >/dev/null 2>&1 || true
		# Without a GPU the tuple could not be checked, which the audit names
		# (unverified, "tuple: could not check"); nothing else may be found.
		read -r TUPLE_UNCHECKED FIND < <(jq -r '[.. | objects | select(has("findings")) | .findings[]] |
			map(.code == "unverified" and (.detail | startswith("tuple: could not check: "))) as $t |
			"\($t | map(select(.)) | length) \([to_entries[] | select($t[.key] | not) | .value.code] | unique | join(","))"' \
			"$T/audit/audit.json" 2>/dev/null || echo "0 ?")
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
	# The verifier off the node decides, from the pushed quote, log and
	# report: the same measured boot boot-check admitted, then the report's
	# tuple, judged only for an admitted boot.  No GPU under QEMU: the GPU
	# checks could not be made, so the node is not admitted.
	pushed good "not-made: tuple: could not check: *" "the verifier admitted the measured boot by its quote, but \
the node report's GPU checks could not be made without a GPU: its verdict is not-made (could not check), never \
an admission, so the node stays out of service, correctly"
}

# 1b. the good image, with a file of it changed in the running root
case_overlay() {
	local d=$T/overlay st
	foreign_modules "$d/in/modules"
	boot overlay "$B.efi" "$B.sqfs" "$B.verity" "overlay-write insmod-foreign" ||
		failed "overlay: the boot did not end in a power-off"
	# Under Secure Boot lockdown the kernel refuses both (EKEYREJECTED).
	sed 's/^/real-boot-test: overlay: /' "$d/ev/secure-boot.txt" >&2 2>/dev/null || true
	for m in unsigned otherkey; do
		grep -q "^insmod $m.ko: refused: .*Key was rejected by service" "$d/ev/secure-boot.txt" 2>/dev/null ||
			failed "overlay: the kernel did not refuse the $m module"
	done
	grep -aq 'action overlay-write: appended a byte to .*/nvidia-smi' "$d/console.log" ||
		failed "overlay: the test layer did not change nvidia-smi"
	if [ -f "$d/ev/report.json" ]; then
		st=$(jq -r '[("files", "image", "tpm") as $n | .checks[] | select(.name == $n) | .status] | join(" ")' \
			"$d/ev/report.json")
		say "overlay: verify: files image tpm: $st; $(jq -r '.checks[] | select(.name == "files") | .summary' "$d/ev/report.json")"
		# dm-verity and PCR 15 see the image, not what runs over it: only
		# the files check can find the change, and it refuses the node.
		[ "$st" = "fail pass pass" ] || failed "overlay: expected files fail, image and tpm pass"
		jq -e '[.checks[] | select(.name == "files") | .details.changed[].path] | any(endswith("/nvidia-smi"))' \
			"$d/ev/report.json" >/dev/null || failed "overlay: the files check did not name nvidia-smi as changed"
		[ "$(jq -r .verdict "$d/ev/report.json")" = refuse ] ||
			failed "overlay: the image's verifier did not refuse the node"
		grep -q '^refuse: ' "$d/ev/status" || failed "overlay: status is not refuse: $(cat "$d/ev/status")"
	else
		failed "overlay: no report came back (status: $(cat "$d/ev/status" 2>/dev/null || echo none))"
	fi
}

# 2. a flipped image byte: dm-verity refuses, the image never runs
case_flipped() {
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
}

# 3. another kernel's UKI with the same image
case_kernel() {
	ODEB=$(ls "$CACHE"/debs/linux-image-6.1.0-*-amd64_*.deb | sort -V | tail -n 1)
	awk -v deb="$ODEB" -v sha="$(sha256sum "$ODEB" | cut -d' ' -f1)" '
		/^  kernel:$/ { k = 1; print; next }
		k && /^    source:/ { print "    source: " deb; next }
		k && /^    sha256:/ { print "    sha256: " sha; k = 0; next }
		/^  modules:/ { print "  modules: [virtio_ring, virtio, virtio_pci_legacy_dev, virtio_pci_modern_dev, virtio_pci, virtio_blk,"
			print "            dm-mod, dm-bufio, reed_solomon, dm-verity, squashfs, overlay]"; next }
		{ print }' "$R" > "$T/other-kernel.yaml"
	# The build refuses the kernel ABI mismatch (the image's modules are
	# 6.12's); --no-lint builds it anyway, to show the node refuses it too.
	rc=0; out=$("$INGOT" build "$T/other-kernel.yaml" "${SETS[@]}" -o "$T/okernel" --store "$CACHE/store" --quiet 2>&1) || rc=$?
	say "kernel: ingot build: exit $rc: $out"
	[ "$rc" = 1 ] && [[ "$out" == *"lint: kernel ABI: "*"is kernel 6.1.0-"* ]] ||
		failed "kernel: expected ingot build to refuse modules built for another kernel"
	"$INGOT" build "$T/other-kernel.yaml" "${SETS[@]}" -o "$T/okernel" --store "$CACHE/store" --no-lint --quiet
	boot kernel "$T/okernel/$NAME.efi" "$T/okernel/$NAME.sqfs" "$T/okernel/$NAME.verity" || true
	if [ -f "$T/kernel/ev/quote.json" ]; then
		# The same firmware, code and variables as every case: the
		# platform's reference boot (what it records is no OS's).
		[ -f "$FWREF" ] || reference kernel
		rc=0; out=$(judge kernel) || rc=$?
		say "kernel: boot-check: $out"
		[ "$rc" = 2 ] && [[ "$out" == *"PCR 4"* ]] || failed "kernel: expected boot-check to refuse PCR 4"
		grep -q '^vermagic nvidia .*: fail' "$T/kernel/ev/modules.txt" ||
			failed "kernel: expected the image's verifier to refuse nvidia.ko built for another kernel"
		grep '^vermagic nvidia \|^load nvidia' "$T/kernel/ev/modules.txt" | sed 's/^/real-boot-test: kernel: /' >&2
	else
		failed "kernel: no quote came back (status: $(cat "$T/kernel/ev/status" 2>/dev/null || echo none))"
	fi
}

# foreign_modules DIR: DIR/unsigned.ko (the image's nvidia-peermem.ko
# with its signature stripped) and DIR/otherkey.ko (the same signed, by
# sign-file, with a key made here and enrolled nowhere).
foreign_modules() {
	local dir=$1 sf
	mkdir -p "$dir"
	tar -xOf "$OUT/layers/nvidia-modules-signed.tar" --wildcards '*/nvidia-peermem.ko' > "$dir/signed.ko"
	strip --strip-debug -o "$dir/unsigned.ko" "$dir/signed.ko" && rm -f "$dir/signed.ko"
	[ -z "$(modinfo -F signer "$dir/unsigned.ko")" ] || failed "the unsigned module still has a signer"
	openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj "/CN=ingot other key/" \
		-keyout "$T/other.key" -out "$T/other.pem" -addext basicConstraints=critical,CA:FALSE \
		-addext keyUsage=digitalSignature -addext extendedKeyUsage=codeSigning 2>/dev/null
	sf=$(ls "$CACHE"/buildroot-*/usr/lib/linux-kbuild-*/scripts/sign-file | head -n 1)
	"$sf" sha256 "$T/other.key" "$T/other.pem" "$dir/unsigned.ko" "$dir/otherkey.ko"
}

# 4. Secure Boot off: the same UKI and firmware code, a variable store
#    with no keys enrolled.  The UKI and the kernel run (no lockdown);
#    PCR 7 records SecureBoot = 0 and other variables than the reference.
case_sboff() {
	local d=$T/sboff rc=0 out
	boot sboff "$B.efi" "$B.sqfs" "$B.verity" "" OVMF_VARS_4M.fd || failed "sboff: the boot did not end in a power-off"
	! grep -q 'Secure Boot is enabled' "$d/console.log" || failed "sboff: Secure Boot was on"
	sed 's/^/real-boot-test: sboff: /' "$d/ev/secure-boot.txt" >&2 2>/dev/null || true
	if [ -f "$d/ev/quote.json" ]; then
		out=$(judge sboff) || rc=$?
		say "sboff: boot-check: $out"
		[ "$rc" = 2 ] && [[ "$out" == *"PCR 7"* ]] || failed "sboff: expected boot-check to refuse PCR 7"
	else
		failed "sboff: no quote came back (status: $(cat "$d/ev/status" 2>/dev/null || echo none))"
	fi
	pushed sboff "refuse: *PCR 7*" "the verifier refused the boot it was sent (Secure Boot off: PCR 7), with the reason"
}

# 5. the good UKI signed by a key the firmware's db does not hold: the
#    firmware refuses to run it and waits at its prompt; the boot is
#    stopped there, and no evidence is no admission.
case_otherkey() {
	local d=$T/otherkey BOOT_TIMEOUT=240
	[ -f "$T/other.key" ] || foreign_modules "$T/foreign"
	cp "$B.efi" "$T/otherkey.efi"
	sbattach --remove "$T/otherkey.efi" >/dev/null 2>&1
	sbsign --key "$T/other.key" --cert "$T/other.pem" --output "$T/otherkey.efi" "$T/otherkey.efi" >/dev/null 2>&1
	boot otherkey "$T/otherkey.efi" "$B.sqfs" "$B.verity" "" OVMF_VARS_4M.snakeoil.fd "Access Denied" || true
	if grep -q 'Access Denied' "$d/console.log" && ! grep -Eq 'EFI stub|ingot-init' "$d/console.log" &&
	   [ ! -f "$d/ev/quote.json" ]; then
		say "otherkey: the firmware refused the UKI signed by another key (Access Denied), no evidence: refused"
	else
		failed "otherkey: expected the firmware to refuse the UKI and nothing to run"
	fi
}

# 6. the AMD image: one production boot under Secure Boot (B and the
#    verdict's manifest are the AMD image's for this case)
case_amd() {
	local AR=$OUT/real-mi300x-test.yaml B=$T/amd-image/real-mi300x-test A=$T/amd f0=$fails
	[ -f "$FWREF" ] || { failed "amd: no firmware reference (run the kernel case, the reference boot, first)"; return; }
	[ -f "$AR" ] || { failed "amd: $AR missing (make real-image)"; return; }
	local -a ASETS
	mapfile -t ASETS < <(sets real-mi300x)
	# --no-lint: the sourced rules refuse this pool (real-image checked by
	# which rules: recipes/real/amd-mi300x.pool); the boot shows the rest.
	"$INGOT" build "$AR" "${ASETS[@]}" -o "$T/amd-image" --store "$CACHE/store" --key "$OUT/signing.key" --no-lint --quiet ||
		{ failed "amd: the test image did not build"; return; }
	boot amd "$B.efi" "$B.sqfs" "$B.verity" || failed "amd: the boot did not end in a power-off"
	secure_admitted amd
	if [ -f "$A/ev/modules.txt" ]; then
		sed 's/^/real-boot-test: amd: modules: /' "$A/ev/modules.txt" | grep -v ': kernel: ' >&2
		grep -q "^gate amdgpu: pass .*files have not passed ingot's check" "$A/ev/modules.txt" ||
			failed "amd: a modprobe of amdgpu before the files check was not refused by the gate"
		grep -q '^load amdgpu: pass' "$A/ev/modules.txt" ||
			failed "amd: the locked-down kernel did not accept Debian's signed amdgpu"
		grep -q '^gpu: could not check' "$A/ev/modules.txt" || failed "amd: the GPU was not reported as 'could not check'"
	else
		failed "amd: no modules.txt came back"
	fi
	if [ -f "$A/ev/report.json" ]; then
		jq -r '.checks[] | "real-boot-test: amd: verify: \(.name): \(.status): \(.summary)"' "$A/ev/report.json" >&2
		for c in signature image files tpm; do
			[ "$(jq -r --arg c $c '.checks[] | select(.name == $c) | .status' "$A/ev/report.json")" = pass ] ||
				failed "amd: the image's verify check $c did not pass"
		done
		# the ROCm versions the image's verifier read from the real bits
		jq -r '.probe.facts[] | select(.value != null) |
			select(.key | test("^(driver|rocm|hip|hsa|rccl|smi|amd|kernel|firmware)")) |
			"real-boot-test: amd: probe: \(.key) = \(.value) (\(.source))"' "$A/ev/report.json" >&2
		for f in hip.version hsa_runtime.version smi_lib.version rccl.version; do
			[ -n "$(jq -r --arg f $f '.probe.facts[] | select(.key == $f) | .value // empty' "$A/ev/report.json")" ] ||
				failed "amd: the image's verifier did not read $f from the real bits"
		done
		jq -r '.checks[] | select(.name == "tuple") | .details.not_made[]? |
			"real-boot-test: amd: could not check: \(.comparison)"' "$A/ev/report.json" >&2
		say "amd: the image's verifier: $(cat "$A/ev/status" 2>/dev/null)"
		# The pool's tuple is refused by sourced rules (the pool file's
		# refused-by): the node's own rules check must refuse it by one of
		# them; otherwise a node without a GPU is "could not check".
		local refused rule
		refused=$(awk '$1 == "refused-by" { $1 = ""; print }' recipes/real/amd-mi300x.pool)
		if [ -n "$refused" ]; then
			rule=$(jq -r '.checks[] | select(.name == "rules" and .status == "fail") | .summary' "$A/ev/report.json" | cut -d: -f1)
			case " $refused " in *" ${rule:-none} "*) ;; *)
				failed "amd: the image's rules check did not refuse by the pool's refused-by rules ($refused): '${rule:-none}'" ;; esac
			grep -q '^refuse: ' "$A/ev/status" || failed "amd: a pool the rules refuse must be refused by the node's verifier"
		else
			grep -q '^could-not-check: ingot verify exit 20, modules accepted' "$A/ev/status" ||
				failed "amd: a node without a GPU must be 'could not check' (not admitted, not refused)"
		fi
	else
		failed "amd: no report came back"
	fi
	[ "$fails" != "$f0" ] || say "amd: booted under Secure Boot, Debian-signed amdgpu accepted, the quote admitted by boot-check, the pool refused by the node's rules check as the pool file says"
}

for c in $CASES; do
	case $c in good|overlay|flipped|kernel|sboff|otherkey|amd) "case_$c" ;; *) failed "unknown case $c (INGOT_REAL_BOOT_CASES)" ;; esac
done

if [ "$fails" != 0 ]; then
	say "$fails check(s) failed; consoles under $T"
	exit 1
fi
say "all boots judged as expected: $CASES (each case's expectation: the header of this script)"
