#!/bin/bash
# The pool view, GET /v1/pools/NAME: each node's latest evidence is kept
# with its verdict (one transaction), and the view is `ingot audit`'s own
# findings over it: the same JSON as `ingot audit` on the same evidence
# as report files.  A node whose admission is older than stale-after is
# flagged stale; an unknown pool is a one-line 404.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/serve-lib.sh"
serve_fixture
"$MKENROL" k.key node-3 ak/ak-0.pub enrolments/node-3.json
POOL=$(jq -r .recipe.name boot.manifest.json)

# push CASE NODE [REPORT_ARGS...]: evidence with a node report (its time
# now; then the jq filter $EXTRA), judged; the body kept as ev-NODE.json
# (the latest).
push() {
	local case=$1 node=$2
	shift 2
	evidence "$case" "$node" "$(nonce_for "$node")"
	with_report "$node" "$@"
	jq --arg t "$(date -u +%Y-%m-%dT%H:%M:%SZ)" ".report.time = \$t | ${EXTRA:-.}" ev.json >ev.tmp && mv ev.tmp ev.json
	expect_http 200 '"verdict"' POST /v1/evidence ev.json
	cp ev.json "ev-$node.json"
}

# The audit document without what differs by nature: the time it ran,
# the view's own members, and where each report came from (a file, or
# the verifier's table).
norm() { jq -S 'del(.now, .pool, .stale_after) | .nodes |= map(del(.report))' "$1"; }

pool_case() {
	note "$1: three nodes push; node-1 twice (its older evidence refused), node-2 drifts (another ROCm), node-3 a refused rule"
	push relabel node-1
	push good node-1
	push good node-2 rocm.version=7.1.0
	assert_contains "$BODY" '"verdict":"refuse"'
	EXTRA='.report.checks = [{"name": "rules", "status": "fail", "summary": "rule gpu-clock: refused"}]' push good node-3

	note "$1: the latest evidence is kept with its verdict, one row a node, by the pool judged against"
	assert_eq "3" "$(db "SELECT count(*) FROM evidence WHERE pool = '$POOL'")" "evidence rows"
	assert_eq "3" "$(db "SELECT count(*) FROM evidence e JOIN verdicts v ON v.nonce = e.nonce AND v.verdict = e.verdict")" \
		"evidence rows stored with their verdict"

	note "$1: the view equals ingot audit's JSON on the same evidence as files"
	expect_http 200 '"schema":"ingot.audit/v1"' GET "/v1/pools/$POOL"
	assert_eq 1 "$(wc -l <resp.out)" "lines of the view"
	cp resp.out view.json
	rm -rf reports audit-m && mkdir reports audit-m && cp boot.dsse.json audit-m/
	: >nonces
	for n in node-1 node-2 node-3; do
		jq '.report + {"attestation": {"mode": "measured-boot", "quote": .quote, "eventlog": .eventlog}}' \
			"ev-$n.json" >"reports/$n.json"
		echo "$n $(jq -r .nonce "ev-$n.json")" >>nonces
	done
	local rc=0
	"$INGOT" audit --keyring keyring.json --manifests audit-m --reports reports --nonces nonces \
		--enrolments enrolments --firmware-refs firmware --json - >audit.json || rc=$?
	assert_eq 1 "$rc" "ingot audit's exit status (drift)"
	[ "$(norm view.json)" = "$(norm audit.json)" ] ||
		fail "the view differs from ingot audit: $(diff <(norm view.json) <(norm audit.json) | head -20)"
	assert_eq "$POOL" "$(jq -r .pool view.json)" "the view's pool"
	assert_eq "drifted drifted healthy" "$(jq -r '[.nodes[] | .verdict] | sort | join(" ")' view.json)" "verdicts"
	assert_contains "$(jq -c '.nodes[] | select(.node == "node-2") | .drift' view.json)" '"actual":"7.1.0"'
	assert_contains "$(jq -c '.nodes[] | select(.node == "node-3") | .findings' view.json)" \
		"the node's own rules check failed: rule gpu-clock: refused"

	note "$1: a node admitted longer ago than stale-after is flagged stale (by the audit's own finding)"
	db "UPDATE nodes SET last_admit = last_admit - 7200 WHERE node = 'node-1'"
	expect_http 200 '"stale"' GET "/v1/pools/$POOL"
	assert_eq "stale" "$(jq -r '.nodes[] | select(.node == "node-1") | .verdict' resp.out)" "node-1's verdict"
	assert_contains "$(jq -r '.nodes[] | select(.node == "node-1") | .findings[0].detail' resp.out)" \
		"the verifier: no admitted evidence since"
	assert_eq "drifted" "$(jq -r '.nodes[] | select(.node == "node-3") | .verdict' resp.out)" "node-3 unmoved"

	note "$1: hostile requests: one-line refusals"
	expect_http 404 "pools: pool no-such-pool: no manifest of this verifier names it" GET /v1/pools/no-such-pool
	expect_http 400 "pools: expected a pool name" GET /v1/pools/
	expect_http 405 "expected GET" POST "/v1/pools/$POOL"
	# node-2's report names node-1: refused by the verdict, and kept
	# without its claims, so the view lists each node once, by the node
	# the nonce was issued to
	EXTRA='.report.node.id = "node-1"' push good node-2
	assert_contains "$BODY" '"verdict":"refuse"'
	expect_http 200 '"pool"' GET "/v1/pools/$POOL"
	assert_eq "node-1 node-2 node-3" "$(jq -r '[.nodes[] | .node] | sort | join(" ")' resp.out)" "nodes in the view"
	assert_eq "stale" "$(jq -r '.nodes[] | select(.node == "node-1") | .verdict' resp.out)" "node-1 unmoved"
	assert_eq "unverified" "$(jq -r '.nodes[] | select(.node == "node-2") | .verdict' resp.out)" \
		"node-2 without its report's claims"
}

serve_config "stale-after = 1h"
serve_start
pool_case sqlite
serve_stop
# On PostgreSQL the view's rows come from the same SQL (server/db-sql.h):
# test-serve-pg.sh reads it from two replicas, where a cluster is started
# anyway.
