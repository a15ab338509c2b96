#!/bin/bash
# ingot serve judges a node's boot off the node: a nonce it issued, the
# quote and log the node sends, the one boot verdict; the verdict is in
# the database when the reply arrives, the nonce is consumed with it
# (never accepted twice), the hook runs with node, verdict and reason.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/serve-lib.sh"
serve_fixture
serve_config
serve_start

note "a good boot: admitted, stored before the reply, hook told"
N1=$(nonce_for node-1)
assert_eq 64 "${#N1}" "nonce length (hex)"
# Answered before its write is durable (test-serve-nonce-early): stored soon after.
for _ in $(seq 50); do [ -n "$(db "SELECT node FROM nonces WHERE nonce='$N1'")" ] && break; sleep 0.1; done
assert_eq "node-1" "$(db "SELECT node FROM nonces WHERE nonce='$N1'")" "nonce stored for its node"
evidence good node-1 "$N1"
expect_http 200 '"verdict":"admit"' POST /v1/evidence ev.json
assert_contains "$BODY" "booted the manifest's UKI (PCR 4, 11, 12) under Secure Boot (PCR 7), firmware of reference ovmf-test"
# The reply came after the commit: the row is there now.
assert_eq "admit" "$(db "SELECT verdict FROM verdicts WHERE nonce='$N1'")" "verdict in the database"
assert_eq "admit" "$(db "SELECT state FROM nodes WHERE node='node-1'")" "node state"
assert_ne "" "$(db "SELECT used FROM nonces WHERE nonce='$N1'")" "nonce consumed"
assert_eq "node-1|admit|" "$(cut -d'|' -f1-2 hook.log | head -1)|" "hook arguments"
assert_contains "$(head -1 hook.log)" "|booted the manifest's UKI"

note "the same evidence again: the nonce is used, nothing stored"
expect_http 409 "already used" POST /v1/evidence ev.json
assert_eq 1 "$(db "SELECT count(*) FROM verdicts")" "verdict rows after a replay"

note "one body sent eight times at once: one verdict, seven refusals"
evidence good node-1 "$(nonce_for node-1)"
pids=()
for i in $(seq 8); do
	curl -sS -o "race$i.out" -w '%{http_code}\n' -X POST --data-binary @ev.json "$URL/v1/evidence" >"race$i.code" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "curl failed"; done
assert_eq "1 200 7 409" "$(sort race*.code | uniq -c | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')" "statuses of eight racing requests"
assert_eq 2 "$(db "SELECT count(*) FROM verdicts")" "verdict rows after the race"

note "a nonce never issued, one issued to another node, an expired one: refused before judging"
evidence good node-1 "$(openssl rand -hex 32)"
expect_http 404 "not issued to this node" POST /v1/evidence ev.json
N2=$(nonce_for node-2)
evidence good node-1 "$N2"
expect_http 404 "not issued to this node" POST /v1/evidence ev.json
N3=$(nonce_for node-1)
db "UPDATE nonces SET expires = 1 WHERE nonce='$N3'"
evidence good node-1 "$N3"
expect_http 410 "expired" POST /v1/evidence ev.json
assert_eq 2 "$(db "SELECT count(*) FROM verdicts")" "verdict rows after refused nonces"

note "tampered evidence: refused with the verdict's reason, stored, hook told"
N4=$(nonce_for node-1)
evidence relabel node-1 "$N4"
expect_http 200 '"verdict":"refuse"' POST /v1/evidence ev.json
assert_contains "$BODY" "PCR 4: boot application 1 (event 14, logged as EV_EFI_BOOT_SERVICES_DRIVER)"
assert_eq "refuse" "$(db "SELECT state FROM nodes WHERE node='node-1'")" "node state after a refusal"
assert_contains "$(tail -1 hook.log)" "node-1|refuse|PCR 4: boot application 1"
N5=$(nonce_for node-1)
evidence soft node-1 "$N5"
expect_http 200 "quote refused (wrong-ak): not signed by the enrolled AK" POST /v1/evidence ev.json
# Firmware no reference vouches for: its PCRs 0 and 2 pick no reference, and
# the weakness is refused unless accepted by name.
evidence other-fw node-1 "$(nonce_for node-1)"
expect_http 200 "PCRs 0 and 2 not judged" POST /v1/evidence ev.json
assert_contains "$BODY" '"verdict":"refuse"'
# The quote over another nonce than the one presented: the verdict's nonce check.
N6=$(nonce_for node-1)
evidence good node-1 "$N6"
jq --arg n "$(nonce_for node-1)" '.nonce = $n' ev.json >ev2.json
expect_http 200 '"verdict":"refuse"' POST /v1/evidence ev2.json
assert_contains "$BODY" "nonce"

note "the node report: its tuple judged against the booted manifest's"
evidence good node-1 "$(nonce_for node-1)"
with_report node-1
expect_http 200 '"verdict":"admit"' POST /v1/evidence ev.json
evidence good node-1 "$(nonce_for node-1)"
with_report node-1 rocm.version=7.1.0
expect_http 200 '"verdict":"refuse"' POST /v1/evidence ev.json
assert_contains "$BODY" "tuple: ROCm: manifest 7.2.0, node 7.1.0"
evidence good node-1 "$(nonce_for node-1)"
with_report node-2
expect_http 200 '"reason":"report: node.id node-2, expected node-1"' POST /v1/evidence ev.json

note "the node's record: last verdict and history, newest first"
expect_http 200 '"state":"refuse"' GET /v1/nodes/node-1
assert_eq "refuse refuse admit refuse refuse refuse refuse admit admit" "$(jq -r '[.history[].verdict] | join(" ")' resp.out)" "history"
expect_http 404 "never judged" GET /v1/nodes/node-9

note "metrics: Prometheus text"
expect_http 200 "" GET /metrics
bad=$(grep -Ev '^(# (HELP|TYPE) [a-z_]+ .+|[a-z_]+(\{[a-z_]+="[^"]*"\})? [0-9.e+-]+)$' resp.out || true)
assert_eq "" "$bad" "metrics lines outside the exposition format"
assert_contains "$BODY" 'ingot_verdicts_total{verdict="admit"} 3'
assert_contains "$BODY" 'ingot_verdicts_total{verdict="refuse"} 6'
assert_contains "$BODY" 'ingot_nodes{state="refuse"} 1'
if command -v promtool >/dev/null; then promtool check metrics <resp.out || fail "promtool check metrics"; fi

serve_stop
assert_eq "9" "$(db "SELECT count(*) FROM verdicts")" "verdicts kept after a stop"
assert_eq "4" "$(db "SELECT max(version) FROM schema_version")" "schema version"
# Issuing a nonce counts the node's held ones (server/db-sql.h
# DB_SQL_NONCES_HELD) through the node index, not a scan of every unexpired nonce.
assert_contains "$(db "EXPLAIN QUERY PLAN SELECT count(*) FROM nonces WHERE node = 'node-1' AND used IS NULL AND expires > 0")" \
	"USING INDEX nonces_node" "the held-nonces query plan"
echo "serve: admitted the good boot, refused replayed, unknown, expired and tampered evidence; verdicts stored before the reply"
