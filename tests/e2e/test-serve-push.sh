#!/bin/bash
# ingot attest push: the node's side.  A software TPM (swtpm) whose PCRs
# were extended with the good boot's events quotes over the verifier's
# nonce with its own AK (enrolled); push sends quote, log and report and
# exits by the verdict the service stored.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/swtpm.sh"
. "$SRC/tests/e2e/serve-lib.sh"
command -v tpm2_pcrextend >/dev/null || skip "tpm2-tools not installed"
swtpm_start
serve_fixture
"$INGOT" attest ak create -o ak-tpm >/dev/null || fail "ak create failed"
"$MKENROL" k.key node-tpm ak-tpm/ak.pub.pem enrolments/node-tpm.json
# The good boot's firmware events into the TPM, then PCR 15 as the init extends it.
"$INGOT" attest eventlog log-good.bin --json |
	jq -r '.events[] | select(.digests.sha256 != null) | "\(.pcr):sha256=\(.digests.sha256)"' >extends.txt
echo "15:sha256=$(printf '%s' "$(jq -r .boot.pcr15.event_data boot.manifest.json)" | sha256sum | cut -d' ' -f1)" >>extends.txt
while read -r x; do tpm2_pcrextend "$x" || fail "tpm2_pcrextend $x"; done <extends.txt
serve_config
serve_start

note "the good boot, quoted by the TPM over the service's nonce: admitted"
expect_exit 0 "boot admit: booted the manifest's UKI (PCR 4, 11, 12) under Secure Boot (PCR 7), firmware of reference ovmf-test" \
	"$INGOT" attest push --verifier "$URL" --node node-tpm --ak ak-tpm --eventlog log-good.bin
assert_eq "admit" "$(db "SELECT state FROM nodes WHERE node='node-tpm'")" "state in the verifier's database"
assert_eq 1 "$(db "SELECT count(*) FROM nonces WHERE node='node-tpm' AND used IS NOT NULL")" "nonces consumed"

note "a log that is not the one the TPM measured: refused, exit 2"
expect_exit 2 "boot refuse:" "$INGOT" attest push --verifier "$URL" --node node-tpm --ak ak-tpm --eventlog log-relabel.bin
assert_eq "refuse" "$(db "SELECT state FROM nodes WHERE node='node-tpm'")" "state after the refusal"

note "the TPM's quote judged for another node's enrolment: refused (wrong AK)"
expect_exit 2 "wrong-ak" "$INGOT" attest push --verifier "$URL" --node node-1 --ak ak-tpm --eventlog log-good.bin

note "--via: HTTP over a stream (a pty standing in for a virtio-serial port) that socat carries to the service"
if command -v socat >/dev/null; then
	socat PTY,link="$T/port",rawer,wait-slave TCP:"${URL#http://}" 2>socat.err &
	at_exit "kill $! 2>/dev/null"
	for i in $(seq 50); do [ -e "$T/port" ] && break; sleep 0.1; done
	expect_exit 0 "boot admit: booted the manifest's UKI" "$INGOT" attest push --verifier http://127.0.0.1:9 \
		--via "$T/port" --node node-tpm --ak ak-tpm --eventlog log-good.bin
	assert_eq 2 "$(db "SELECT count(*) FROM nonces WHERE node='node-tpm' AND used IS NOT NULL AND nonce IN
		(SELECT nonce FROM verdicts WHERE verdict='admit')")" "admitted nonces, the second over the stream"
	expect_exit 1 "$T/nowhere: No such file" "$INGOT" attest push --verifier http://127.0.0.1:9 \
		--via "$T/nowhere" --node node-tpm --ak ak-tpm --eventlog log-good.bin
else
	echo "socat not installed: --via not tried"
fi

note "not enrolled, or no verifier: an error, never a pass"
expect_exit 1 "nonce: node node-9: not enrolled" \
	"$INGOT" attest push --verifier "$URL" --node node-9 --ak ak-tpm --eventlog log-good.bin
serve_stop
expect_exit 1 "${URL#http://}" "$INGOT" attest push --verifier "$URL" --node node-tpm --ak ak-tpm --eventlog log-good.bin
expect_exit 64 "push: expected --verifier URL" "$INGOT" attest push --node node-tpm
echo "push: a TPM's boot admitted and refused by the verifier, exit status from its verdict"
