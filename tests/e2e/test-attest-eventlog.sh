#!/bin/bash
# Event logs: real firmware logs (tpm2-tools fixtures) replay exactly;
# hand-built crypto-agile logs replay to what tpm2_eventlog prints and to
# what swtpm holds after the same extends (tpm2_pcrextend/tpm2_pcrread);
# malformed logs are refused with a clear error; an interrupted measure
# (PCR extended without the log, or the log without the PCR) is reported
# against a quote, naming the first divergent event.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swtpm.sh"
. "$(dirname "$0")/attest-lib.sh"
command -v tpm2_eventlog >/dev/null || skip "tpm2-tools not installed"
MKLOG="python3 $SRC/tests/e2e/attest-mklog.py"

note "every shared fixture replays exactly to its expected-pcrs.yaml"
n=0
for log in "$SRC"/tests/fixtures/tcg-eventlogs/*.bin; do
	"$INGOT" attest eventlog "$log" >"$T/out.yaml"
	diff -u "${log%.bin}.expected-pcrs.yaml" "$T/out.yaml" || fail "$(basename "$log"): replay differs"
	n=$((n + 1))
done
assert_eq 4 "$n" "fixtures replayed"
"$INGOT" attest eventlog --json "$SRC/tests/fixtures/tcg-eventlogs/event-gce-ubuntu-2104-log.bin" >"$T/gce.json"
assert_eq '["sha1","sha256","sha384"]' "$(jq -c .banks "$T/gce.json")" "gce banks"
assert_eq "$(tpm2_eventlog "$SRC/tests/fixtures/tcg-eventlogs/event-gce-ubuntu-2104-log.bin" 2>/dev/null | grep -c '^- EventNum')" \
	"$(jq '.events | length + 1' "$T/gce.json")" "event count (tpm2_eventlog counts the header)"

note "hand-built logs replay as tpm2_eventlog replays them"
# Only logs without EV_NO_ACTION records after the header: tpm2-tools 5.4
# extends those (tpm2-tools #3224) and ignores StartupLocality (#3242);
# the swtpm comparison below covers both.
for kind in plain three; do
	$MKLOG $kind "$T/$kind.bin"
	tpm2_eventlog "$T/$kind.bin" 2>/dev/null | sed -n '/^pcrs:/,$p' >"$T/$kind.tel"
	[ -s "$T/$kind.tel" ] || fail "$kind: tpm2_eventlog printed no pcrs"
	"$INGOT" attest eventlog "$T/$kind.bin" | diff -u "$T/$kind.tel" - || fail "$kind: replay differs from tpm2_eventlog"
done

note "StartupLocality 3 starts PCR 0 at 00..03 (PC Client spec 10.4.5.3)"
$MKLOG locality "$T/locality.bin" "$T/locality.pcr0"
"$INGOT" attest eventlog --json "$T/locality.bin" >"$T/locality.json"
assert_eq 3 "$(jq .startup_locality "$T/locality.json")" "startup locality"
assert_eq "$(cat "$T/locality.pcr0")" "$(jq -r '.pcrs.sha256."0"' "$T/locality.json")" "PCR 0 from locality 3"

note "the same extends on swtpm give the replayed values (tpm2_pcrread)"
swtpm_start
$MKLOG agile "$T/agile.bin" "$T/extends"
while read -r spec; do tpm2_pcrextend "$spec"; done <"$T/extends"
"$INGOT" attest eventlog --json "$T/agile.bin" >"$T/agile.json"
for alg in sha1 sha256; do
	for pcr in 0 1 7 15 16 23; do
		assert_eq "$(tpm_pcr $alg $pcr)" "$(jq -r --arg a $alg --arg p $pcr '.pcrs[$a][$p]' "$T/agile.json")" "$alg PCR $pcr"
	done
done

note "and compare equal against a quote of those PCRs"
"$INGOT" attest ak create -o "$T/ak" >/dev/null
"$INGOT" attest quote --nonce 0a0b0a0b0a0b0a0b --pcrs sha1:0,1,7,15,16,23+sha256:0,1,7,15,16,23 --ak "$T/ak" -o "$T/q.json"
expect_exit 0 "replay matches" "$INGOT" attest eventlog "$T/agile.bin" --against "$T/q.json" --nonce 0a0b0a0b0a0b0a0b
expect_exit 2 "nonce-mismatch" "$INGOT" attest eventlog "$T/agile.bin" --against "$T/q.json" --nonce 0a0b0a0b0a0b0a0c
$MKLOG three "$T/three.bin"
note "without a verifier's nonce the quote is not shown fresh: weak, refused unless accepted"
expect_exit 2 "weak evidence refused by policy: no-nonce" "$INGOT" attest eventlog "$T/three.bin" --against "$T/q.json"
expect_exit 0 "replay matches" "$INGOT" attest eventlog "$T/three.bin" --against "$T/q.json" --accept-weak no-nonce
expect_exit 1 "sha384 PCR 0: expected a TPM value" "$INGOT" attest eventlog "$T/three.bin" --against "$T/q.json" --pcrs sha384:0 --accept-weak no-nonce
$MKLOG empty "$T/empty-log.bin"
expect_exit 2 "nothing to compare" "$INGOT" attest eventlog "$T/empty-log.bin" --against "$T/q.json" --accept-weak no-nonce
expect_exit 2 "sha256 PCR 0: expected 0000000000000000000000000000000000000000000000000000000000000000 from the log" "$INGOT" attest eventlog "$T/empty-log.bin" --against "$T/q.json" --pcrs sha256:0 --accept-weak no-nonce

note "interrupted measure: log written but PCR not extended, and the reverse"
make_manifest "$T/m1.json" pool one
make_manifest "$T/m2.json" pool two
"$INGOT" attest measure --manifest "$T/m1.json" --pcr 14 --log "$T/L.bin" >/dev/null
cp "$T/L.bin" "$T/L1.bin"
"$INGOT" attest quote --nonce 0101010101010101 --pcrs sha256:14 --ak "$T/ak" -o "$T/Q1.json"
"$INGOT" attest measure --manifest "$T/m2.json" --pcr 14 --log "$T/L.bin" >/dev/null
"$INGOT" attest quote --nonce 0202020202020202 --pcrs sha256:14 --ak "$T/ak" -o "$T/Q2.json"
expect_exit 0 "replay matches" "$INGOT" attest eventlog "$T/L.bin" --against "$T/Q2.json" --nonce 0202020202020202
# The log has event 2, the TPM never saw it:
expect_exit 2 "sha256 PCR 14: first divergent event is event 2 (offset" \
	"$INGOT" attest eventlog "$T/L.bin" --against "$T/Q1.json" --nonce 0101010101010101
# The TPM saw the second measure, the log did not record it:
expect_exit 2 "the TPM has extends the log does not record" \
	"$INGOT" attest eventlog "$T/L1.bin" --against "$T/Q2.json" --nonce 0202020202020202
# A measure on top of a disagreement warns, and the disagreement stays visible.
tpm2_pcrextend "14:sha256=$(printf x | sha256sum | cut -c1-64)"
expect_exit 0 "already disagreed" "$INGOT" attest measure --manifest "$T/m1.json" --pcr 14 --log "$T/L.bin"
"$INGOT" attest quote --nonce 0303030303030303 --pcrs sha256:14 --ak "$T/ak" -o "$T/Q3.json"
expect_exit 2 "PCR 14" "$INGOT" attest eventlog "$T/L.bin" --against "$T/Q3.json" --nonce 0303030303030303

note "malformed logs are refused with a clear error"
$MKLOG truncated "$T/t.bin";   expect_exit 1 "truncated log" "$INGOT" attest eventlog "$T/t.bin"
$MKLOG unknown-alg "$T/u.bin"; expect_exit 1 "unknown algorithm 0x0012" "$INGOT" attest eventlog "$T/u.bin"
$MKLOG huge-event "$T/h.bin";  expect_exit 1 "event size: expected at most" "$INGOT" attest eventlog "$T/h.bin"
$MKLOG too-many "$T/m.bin";    expect_exit 1 "too many events" "$INGOT" attest eventlog "$T/m.bin"
$MKLOG bad-count "$T/c.bin";   expect_exit 1 "digest count" "$INGOT" attest eventlog "$T/c.bin"
$MKLOG sha1-only "$T/s.bin";   expect_exit 0 "sha1:" "$INGOT" attest eventlog "$T/s.bin"  # TCG 1.2 format: test-attest-real-evidence.sh
: >"$T/empty.bin";             expect_exit 1 "truncated log" "$INGOT" attest eventlog "$T/empty.bin"
expect_exit 1 "" "$INGOT" attest eventlog "$T/nonexistent.bin"
echo ok
