#!/bin/bash
# A small boot storm (tests/tools/storm: software AKs, test-only) against
# one `ingot serve` on SQLite: every verdict right, every verdict a node
# heard is in the database with the nonce it consumed, the writes grouped
# into fewer commits than writes (server/db-group.c).  Then the per-node
# evidence rate (max-evidence-per-minute): past it, a one-line 429.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/serve-lib.sh"
STORM=$BUILD_DIR/tools/storm
[ -x "$STORM" ] || fail "$STORM not built (make all)"
serve_fixture
"$STORM" enrol k.key 300 storm >/dev/null || fail "storm enrol failed"
cp enrolments/node-1.json storm/enrolments/
# No hook: a process per verdict is not what this measures.
serve_config "enrolments = storm/enrolments" "threads = 8" "max-connections = 400" "max-evidence-per-minute = 3"
sed -i '/^hook = /d' serve.conf
serve_start

note "300 nodes, 100 at a time, every 10th refused (Secure Boot off, or another node's AK)"
"$STORM" run -c 100 -r 10 -o received.txt storm . 300 "$URL" >storm.json 2>storm.err ||
	fail "storm failed: $(cat storm.err)"
assert_eq "240 60 0" "$(jq -r '"\(.admitted) \(.refused_as_expected) \(.verdicts_wrong)"' storm.json)" \
	"admitted, refused as expected, wrong"
assert_eq 300 "$(wc -l <received.txt)" "verdicts heard"
db "SELECT node || ' ' || nonce || ' ' || verdict FROM verdicts ORDER BY 1" >stored.txt
sort received.txt >heard.txt
assert_eq "" "$(comm -23 heard.txt stored.txt)" "verdicts heard but not in the database"
assert_eq 300 "$(db "SELECT count(*) FROM nonces WHERE used IS NOT NULL")" "nonces consumed"
req GET /metrics
commits=$(sed -n 's/^ingot_db_commits_total //p' resp.out) writes=$(sed -n 's/^ingot_db_writes_total //p' resp.out)
assert_eq 600 "$writes" "writes (a nonce and a verdict per node)"
[ "$commits" -gt 0 ] && [ "$commits" -lt "$writes" ] || fail "expected the writes grouped into fewer commits, got $commits for $writes"

note "a node past max-evidence-per-minute: 429, one line naming the limit"
for attempt in 1 2; do   # the window is a calendar minute: again if it turned
	m0=$(($(date +%s) / 60))
	for i in 1 2 3; do
		N=$(nonce_for node-1)
		evidence good node-1 "$N"
		expect_http 200 '"verdict":"admit"' POST /v1/evidence ev.json
	done
	N=$(nonce_for node-1)
	evidence good node-1 "$N"
	req POST /v1/evidence ev.json
	[ "$m0" = $(($(date +%s) / 60)) ] && break
	# The turned minute already counts some of these: start in a fresh one.
	sleep $((60 - $(date +%s) % 60))
done
expect_http 429 'node-1: more than 3 pieces of evidence this minute (max-evidence-per-minute)' POST /v1/evidence ev.json
assert_eq 0 "$(db "SELECT count(*) FROM verdicts WHERE nonce = '$N'")" "the refused evidence stored"
expect_http 200 '"nonce"' POST /v1/nonce nreq.json   # other endpoints unaffected
serve_stop
