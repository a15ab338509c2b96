#!/bin/bash
# Two `ingot serve` replicas on one PostgreSQL database (a private cluster
# on a Unix socket): a nonce issued by one is consumed through the other
# exactly once, a replay flood split across both is accepted once, a
# verdict is in the database when its reply arrives, both show the same
# history, and a replica killed with SIGKILL mid-way loses no verdict it
# answered.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/serve-lib.sh"
pg_cluster_start
serve_fixture
serve_config "database = $PG_SPEC" "max-nonces-per-node = 16" "threads = 8"

note "the backend's units on this cluster: eight connections racing for one nonce store one verdict"
UNIT=$BUILD_DIR/tests/test_serve_db
[ -x "$UNIT" ] || fail "tests/unit not built (make all)"
psql -h "$PG_DIR" -p "$PG_PORT" -U ingot -d postgres -X -q -c 'CREATE DATABASE unit' || fail "CREATE DATABASE unit failed"
INGOT_TEST_PG="host=$PG_DIR port=$PG_PORT user=ingot dbname=unit" "$UNIT" >unit.log 2>&1 ||
	fail "test_serve_db on PostgreSQL: $(grep -E "FAIL|ERROR|error|open:" unit.log | head -8)"
assert_eq 2 "$(grep -c 'PASSED  \] 7 test(s)' unit.log)" "unit groups passed (SQLite, PostgreSQL)"

note "two replicas started together: the schema migrated once"
serve_start a
A_PID=$SERVE_PID A=$URL
serve_start b
B_PID=$SERVE_PID B=$URL
assert_ne "$A" "$B" "replica addresses"
assert_eq "4|4" "$(db "SELECT count(*), max(version) FROM schema_version")" "schema versions"
[ ! -e db.sqlite ] || fail "a SQLite file was created beside a PostgreSQL database"

note "a nonce from A, evidence through B: admitted once, stored before the reply"
URL=$A; N1=$(nonce_for node-1)
evidence good node-1 "$N1"
URL=$B expect_http 200 '"verdict":"admit"' POST /v1/evidence ev.json
assert_eq "admit" "$(db "SELECT verdict FROM verdicts WHERE nonce='$N1'")" "verdict in the database"
assert_ne "" "$(db "SELECT used FROM nonces WHERE nonce='$N1'")" "nonce consumed"
URL=$A expect_http 409 "already used" POST /v1/evidence ev.json
URL=$B expect_http 409 "already used" POST /v1/evidence ev.json
assert_eq 1 "$(db "SELECT count(*) FROM verdicts")" "verdict rows after replays to both"

note "one body sent twenty times at once, split across both: one acceptance"
URL=$B; N2=$(nonce_for node-1)
evidence good node-1 "$N2"
pids=()
for i in $(seq 20); do
	u=$A; [ $((i % 2)) = 0 ] && u=$B
	curl -sS -o "race$i.out" -w '%{http_code}\n' -X POST --data-binary @ev.json "$u/v1/evidence" >"race$i.code" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "curl failed"; done
assert_eq "1 200 19 409" "$(sort race*.code | uniq -c | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')" "statuses of twenty racing requests"
assert_eq 1 "$(db "SELECT count(*) FROM verdicts WHERE nonce='$N2'")" "verdict rows for the raced nonce"
assert_eq 2 "$(db "SELECT count(*) FROM verdicts")" "verdict rows after the race"

note "the node's record is the same from both"
URL=$A expect_http 200 '"state":"admit"' GET /v1/nodes/node-1
cp resp.out hist-a.json
URL=$B expect_http 200 '"state":"admit"' GET /v1/nodes/node-1
cmp -s hist-a.json resp.out || fail "history differs: A $(cat hist-a.json), B $(cat resp.out)"
assert_eq 2 "$(jq '.history | length' resp.out)" "history length"

note "replica A killed (SIGKILL) mid-way through a stream of evidence: no answered verdict lost"
for i in $(seq 8); do
	URL=$B; n=$(nonce_for node-2)
	echo "$n" >"n$i"
	evidence good node-2 "$n" && mv ev.json "ev$i.json"
done
(
	for i in $(seq 8); do
		curl -sS -o "kill$i.out" -w '%{http_code}' -X POST --data-binary @"ev$i.json" "$A/v1/evidence" \
			>"kill$i.code" 2>/dev/null || true
	done
) &
STREAM=$!
for i in $(seq 200); do [ -s kill3.code ] && break; sleep 0.02; done
kill -9 "$A_PID"
wait "$STREAM" || true
heard=0
for i in $(seq 8); do
	[ "$(cat "kill$i.code" 2>/dev/null)" = 200 ] || continue
	heard=$((heard + 1))
	assert_eq "admit" "$(db "SELECT verdict FROM verdicts WHERE nonce='$(cat "n$i")'")" "answered verdict $i in the database"
done
[ "$heard" -ge 3 ] || fail "expected at least 3 answers before the kill, got $heard"
[ "$heard" -lt 8 ] || fail "the kill came after the stream: nothing was cut"
stored=$(db "SELECT count(*) FROM verdicts WHERE node='node-2'")
[ "$stored" -ge "$heard" ] || fail "verdicts stored ($stored) fewer than answered ($heard)"

note "B serves on; A restarted: the same record, and no consumed nonce accepted again"
serve_start a2
A=$URL A_PID=$SERVE_PID
for i in $(seq 8); do
	used=$(db "SELECT count(*) FROM verdicts WHERE nonce='$(cat "n$i")'")
	if [ "$used" = 1 ]; then
		URL=$A expect_http 409 "already used" POST /v1/evidence "ev$i.json"
	else   # cut before its commit: still usable, once
		URL=$B expect_http 200 '"verdict":"admit"' POST /v1/evidence "ev$i.json"
		URL=$A expect_http 409 "already used" POST /v1/evidence "ev$i.json"
	fi
done
assert_eq 8 "$(db "SELECT count(*) FROM verdicts WHERE node='node-2'")" "node-2's verdicts in the end"
URL=$A expect_http 200 '"state":"admit"' GET /v1/nodes/node-2
cp resp.out hist-a.json
URL=$B expect_http 200 '"state":"admit"' GET /v1/nodes/node-2
cmp -s hist-a.json resp.out || fail "history differs after the restart"
assert_eq 8 "$(jq '.history | length' resp.out)" "node-2's history length"

note "the pool view (each node's latest evidence, kept with its verdict) is the same from both"
POOL=$(jq -r .recipe.name boot.manifest.json)
assert_eq "node-1 node-2" "$(db "SELECT node FROM evidence WHERE pool = '$POOL' ORDER BY node" | tr '\n' ' ' | sed 's/ $//')" \
	"evidence rows"
URL=$A expect_http 200 '"schema":"ingot.audit/v1"' GET "/v1/pools/$POOL"
jq -S 'del(.now)' resp.out >pool-a.json
URL=$B expect_http 200 '"schema":"ingot.audit/v1"' GET "/v1/pools/$POOL"
[ "$(jq -S 'del(.now)' resp.out)" = "$(cat pool-a.json)" ] || fail "pool view differs: A $(cat pool-a.json), B $(cat resp.out)"
assert_eq "node-1 node-2" "$(jq -r '[.nodes[] | .node] | sort | join(" ")' resp.out)" "nodes in the view"
URL=$A expect_http 404 "no manifest of this verifier names it" GET /v1/pools/no-such-pool

SERVE_PID=$A_PID serve_stop
SERVE_PID=$B_PID serve_stop
echo "serve on PostgreSQL: two replicas, one database; nonces consumed once across both, verdicts durable before the reply and through a SIGKILL"
