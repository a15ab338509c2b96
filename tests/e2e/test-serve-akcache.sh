#!/bin/bash
# The enrolled AKs are parsed once, when the records are loaded, and each
# node's evidence is checked with its own record's key only: node-3 is
# enrolled with the AK that signs the "soft" quote, yet that quote sent as
# node-1 is refused (wrong-ak), and sent as node-3 it passes the quote check.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/serve-lib.sh"
serve_fixture
"$MKENROL" k.key node-3 ak/ak-1.pub enrolments/node-3.json
serve_config
serve_start

note "node-3's AK signs it, node-1 claims it: refused with node-1's key"
evidence soft node-1 "$(nonce_for node-1)"
expect_http 200 "quote refused (wrong-ak): not signed by the enrolled AK" POST /v1/evidence ev.json
assert_eq "refuse" "$(db "SELECT state FROM nodes WHERE node='node-1'")" "node-1's state"

note "the same quote as node-3's: its own key verifies it"
evidence soft node-3 "$(nonce_for node-3)"
expect_http 200 '"verdict":"admit"' POST /v1/evidence ev.json
assert_eq "$(jq -r .ak_id resp.out)" "$(jq -r .payload enrolments/node-3.json | base64 -d | jq -r .predicate.ak_id)" \
	"the AK id the verdict reports"

note "node-1's own evidence, after node-3's key was used: admitted"
evidence good node-1 "$(nonce_for node-1)"
expect_http 200 '"verdict":"admit"' POST /v1/evidence ev.json
serve_stop
