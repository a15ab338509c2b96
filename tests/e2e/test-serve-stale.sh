#!/bin/bash
# The staleness sweep: a node whose last admitted evidence is older than
# stale-after is marked stale from the database and the hook drains it;
# fresh evidence admits it again.  A restarted service (another replica)
# finds the same state in the database.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/serve-lib.sh"
serve_fixture
serve_config "stale-after = 2s" "sweep-interval = 1s"
serve_start

note "admitted, then nothing: stale after the interval, hook told"
N=$(nonce_for node-1)
evidence good node-1 "$N"
expect_http 200 '"verdict":"admit"' POST /v1/evidence ev.json
for i in $(seq 100); do   # at most 10 s
	[ "$(db "SELECT state FROM nodes WHERE node='node-1'")" = stale ] && break
	sleep 0.1
done
assert_eq "stale" "$(db "SELECT state FROM nodes WHERE node='node-1'")" "state after the interval"
assert_eq "node-1|stale|stale: no admitted evidence for over 2 s" "$(tail -1 hook.log)" "hook arguments"
assert_eq 1 "$(grep -c '|stale|' hook.log)" "stale hook runs (once per staleness)"

note "fresh evidence admits it again"
N=$(nonce_for node-1)
evidence good node-1 "$N"
expect_http 200 '"verdict":"admit"' POST /v1/evidence ev.json
assert_eq "admit" "$(db "SELECT state FROM nodes WHERE node='node-1'")" "state after fresh evidence"
serve_stop

note "a node admitted long ago is stale for a verifier started later (judged from the database)"
db "UPDATE nodes SET last_admit = last_admit - 3600 WHERE node='node-1'"
: >hook.log
serve_start
for i in $(seq 100); do
	grep -q '^node-1|stale|' hook.log 2>/dev/null && break
	sleep 0.1
done
assert_eq "stale" "$(db "SELECT state FROM nodes WHERE node='node-1'")" "state seen by a new verifier"
serve_stop
echo "serve: stale nodes drained by the sweep from the database, admitted again on fresh evidence"
