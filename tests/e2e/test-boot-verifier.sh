#!/bin/bash
# The host's side of the boot tests' push (scripts/boot-lib.sh:
# boot_verifier, boot_relay, boot_watch_*, boot_verdicts), which
# scripts/boot-test.sh and scripts/real-boot-test.sh share, in seconds and
# without QEMU: a software TPM whose PCRs hold the good boot's events
# stands in for the guest, and a pty that socat connects to the relay's
# Unix socket stands in for its virtio-serial port (QEMU's side).
#   - a report whose GPU checks could not be made: the quote admits the
#     boot, the verdict is not-made, and the Slurm node (when Slurm is
#     installed and this is root) is never schedulable, drained with that
#     reason;
#   - the same boot without the report: admitted, resumed;
#   - a log that is not the one the TPM measured: refused, drained.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/swtpm.sh"
. "$SRC/tests/e2e/serve-lib.sh"
command -v tpm2_pcrextend >/dev/null || skip "tpm2-tools not installed"
command -v socat >/dev/null || skip "socat not installed"
swtpm_start
serve_fixture
"$INGOT" attest ak create -o ak-tpm >/dev/null || fail "ak create failed"
"$MKENROL" k.key node-tpm ak-tpm/ak.pub.pem node-tpm.json
"$INGOT" attest eventlog log-good.bin --json |
	jq -r '.events[] | select(.digests.sha256 != null) | "\(.pcr):sha256=\(.digests.sha256)"' >extends.txt
echo "15:sha256=$(printf '%s' "$(jq -r .boot.pcr15.event_data boot.manifest.json)" | sha256sum | cut -d' ' -f1)" >>extends.txt
while read -r x; do tpm2_pcrextend "$x" >/dev/null || fail "tpm2_pcrextend $x"; done <extends.txt

BOOT_TEST=boot-verifier BOOT_TIMEOUT=60
. "$SRC/scripts/boot-lib.sh"
at_exit boot_verifier_stop
boot_verifier "$T/bv" node-tpm "$PWD/node-tpm.json" "$PWD/boot.dsse.json" "$PWD/keyring.json" "$PWD/firmware/ovmf.json" ||
	fail "boot_verifier did not start the verifier"
assert_contains "$(cat "$T/bv/verifier.conf")" "connection-timeout = 60" "the relayed stream lives as long as a boot"
! grep -q accept-weak "$T/bv/verifier.conf" || fail "a firmware reference was given: nothing may be accepted by name"

# guest PUSH-ARGS...: one boot's push: a relay, the guest's port (a pty
# socat connects to the relay's socket, as QEMU does), `ingot attest push
# --via` it; the watch of the Slurm node meanwhile.  OUT: push's output.
guest() {
	local rc=0
	boot_relay "$T/port.sock" "$BOOT_VADDR" || fail "boot_relay did not listen"
	rm -f "$T/port"
	socat PTY,link="$T/port",rawer,wait-slave UNIX-CONNECT:"$T/port.sock" 2>socat.err &
	at_exit "kill $! 2>/dev/null"
	for _ in $(seq 50); do [ -e "$T/port" ] && break; sleep 0.1; done
	[ "$BOOT_SLURM" = 0 ] || boot_watch_start node-tpm "$T/states"
	OUT=$("$INGOT" attest push --verifier http://127.0.0.1:9 --via "$T/port" --node node-tpm --ak ak-tpm "$@" 2>&1) || rc=$?
	[ "$BOOT_SLURM" = 0 ] || boot_watch_stop
	echo "push: exit $rc: $OUT"
}

note "a report whose GPU checks could not be made: not-made, drained"
jq -n '{"schema": "ingot.report/v1", "node": {"id": "node-tpm"}, "probe": {"root": "/", "facts": []}}' >report.json
guest --eventlog log-good.bin --report report.json
assert_contains "$OUT" "boot not-made: tuple: could not check: " "what the guest heard"
V=$(boot_verdicts node-tpm)
assert_eq "${OUT#boot }" "$V" "the verifier's stored verdict, the one the guest heard"
if [ "$BOOT_SLURM" = 1 ]; then
	assert_eq "down|ingot: not admitted yet" "$(head -n 1 "$T/states")" "the node before the push"
	! grep -q '^idle' "$T/states" || fail "the node was schedulable: $(cat "$T/states")"
	assert_eq "drained|ingot: $V" "$(slurm_wait node-tpm 'drained|*')" "the node after not-made"
fi

note "the same boot without the report: admitted by the quote, resumed"
guest --eventlog log-good.bin
assert_contains "$OUT" "boot admit: " "what the guest heard"
assert_contains "$(boot_verdicts node-tpm | tail -n 1)" "admit: booted the manifest's UKI" "stored"
[ "$BOOT_SLURM" = 0 ] || assert_eq "idle|none" "$(slurm_wait node-tpm 'idle|none')" "the node after admit"

note "a log that is not the one the TPM measured: refused, drained"
guest --eventlog log-relabel.bin
assert_contains "$(boot_verdicts node-tpm | tail -n 1)" "refuse: " "stored"
[ "$BOOT_SLURM" = 0 ] || assert_contains "$(slurm_wait node-tpm 'drained|*')" "drained|ingot: refuse: " "the node"
assert_eq 3 "$(boot_verdicts node-tpm | wc -l)" "verdicts stored, one per push"
echo "boot-lib: the boots' verifier judged pushes relayed from a port: not-made (no GPU) drained, admit resumed, refuse drained (slurm: $BOOT_SLURM)"
