#!/bin/bash
# A nonce is answered before its write is durable (docs/verifier.md
# "Nonces"): with the database's write lock held by another process, a
# real `ingot serve` (SQLite) still answers nonce requests at once, holds
# the per-node limit (429) from what it answered, and judges evidence for
# a nonce whose write is still queued, answering it only once the nonce
# and the verdict are committed (in that order) after the lock goes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"

serve_fixture
serve_config "max-nonces-per-node = 2"
serve_start

note "the write lock held elsewhere: nonces answered without waiting for their commit"
python3 - db.sqlite 4 <<'PY' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
open("locked", "w").close()
time.sleep(float(sys.argv[2]))
c.execute("ROLLBACK")
PY
LOCKER=$!
for _ in $(seq 100); do [ -e locked ] && break; sleep 0.05; done
assert_file locked
printf '{"node":"node-1"}' >nreq.json
expect_http 200 '"nonce"' POST /v1/nonce nreq.json -m 2
N1=$(jq -r .nonce resp.out)
expect_http 200 '"nonce"' POST /v1/nonce nreq.json -m 2
note "the limit, decided from the nonces answered but not yet committed"
expect_http 429 "node node-1 holds 2 unused nonces, at most 2" POST /v1/nonce nreq.json -m 2
assert_eq 0 "$(db "SELECT count(*) FROM nonces")" "nonces committed while the lock is held"

note "evidence for a queued nonce: judged, answered after both commits"
evidence good node-1 "$N1"
expect_http 200 '"verdict":"admit"' POST /v1/evidence ev.json -m 20
wait "$LOCKER"
assert_eq "admit" "$(db "SELECT verdict FROM verdicts WHERE nonce='$N1'")" "verdict in the database"
assert_ne "" "$(db "SELECT used FROM nonces WHERE nonce='$N1'")" "nonce consumed"
assert_eq 2 "$(db "SELECT count(*) FROM nonces WHERE node='node-1'")" "nonces stored"
expect_http 409 "already used" POST /v1/evidence ev.json
serve_stop
echo "ok"
