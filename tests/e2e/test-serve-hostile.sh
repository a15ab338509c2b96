#!/bin/bash
# ingot serve under hostile HTTP and configuration: each refusal is the
# right status and one line of JSON naming what was wrong, and the service
# keeps serving; trust-changing operations need the token from a file only
# its owner can read.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/serve-lib.sh"
serve_fixture
serve_config "connection-timeout = 2"

note "configuration: checked whole before serving"
expect_exit 0 "configuration ok" "$INGOT" serve --config serve.conf --check
echo "bogus = 1" >>serve.conf
expect_exit 1 "serve.conf:12: bogus: expected a known key" "$INGOT" serve --config serve.conf --check
serve_config "connection-timeout = 2" "nonce-lifetime = soon"
expect_exit 1 "nonce-lifetime: expected a duration" "$INGOT" serve --config serve.conf --check
serve_config "connection-timeout = 2"
chmod 0644 token
expect_exit 1 "token-file: expected a regular file of mode 0600 or 0400, got mode 0644" \
	"$INGOT" serve --config serve.conf --check
chmod 0600 token
expect_exit 64 "--config FILE is required" "$INGOT" serve
serve_start

note "bodies: too big (declared or chunked), not JSON, not an object, fields missing or wrong"
head -c 70000 /dev/zero | tr '\0' 'a' >big.txt
expect_http 413 "expected at most 65536" POST /v1/evidence big.txt
expect_http 413 "expected at most 65536" POST /v1/evidence big.txt -H 'Transfer-Encoding: chunked'
printf '{"node": "node-1", ' >trunc.json
expect_http 400 "evidence: body: expected JSON" POST /v1/evidence trunc.json
printf '{"node":"a","node":"b"}' >dup.json
expect_http 400 "duplicate" POST /v1/nonce dup.json
printf '[1]' >arr.json
expect_http 400 "expected a JSON object" POST /v1/nonce arr.json
printf '{"node":"node-1","nonce":"00","eventlog":"AA=="}' >noquote.json
expect_http 400 "evidence: quote: expected a quote document" POST /v1/evidence noquote.json
printf '{"node":"node-1","nonce":"00","quote":{}}' >nolog.json
expect_http 400 "evidence: eventlog: missing" POST /v1/evidence nolog.json
printf '{"node":"node-1","nonce":"00","quote":{},"eventlog":"%%%%"}' >b64.json
expect_http 400 "evidence: eventlog: expected base64" POST /v1/evidence b64.json
printf '{"node":"node-1","nonce":"zz","quote":{},"eventlog":"AA=="}' >badnonce.json
expect_http 400 "evidence: nonce: expected 16-128 hex digits" POST /v1/evidence badnonce.json
printf '{"node":"node-1\xff"}' >utf8.json
expect_http 400 "nonce: body: expected JSON" POST /v1/nonce utf8.json
expect_http 400 'nodes: expected a node name, got \"??\"' GET /v1/nodes/%C3%A9
printf '{"node":"no de"}' >badnode.json
expect_http 400 "nonce: node: expected 1-255 printable characters" POST /v1/nonce badnode.json

note "unknown nodes, endpoints and methods"
printf '{"node":"node-9"}' >n9.json
expect_http 404 "nonce: node node-9: not enrolled" POST /v1/nonce n9.json
expect_http 404 "no such endpoint" GET /v2/anything
expect_http 405 "expected POST" GET /v1/evidence
expect_http 405 "expected GET" POST /metrics

note "a node asking for nonces it never uses: at most max-nonces-per-node (4) held"
for i in 1 2 3 4; do nonce_for node-2 >/dev/null; done
printf '{"node":"node-2"}' >n2.json
expect_http 429 "nonce: node node-2 holds 4 unused nonces, at most 4" POST /v1/nonce n2.json

note "evidence that does not parse is refused as evidence (stored, nonce used)"
N=$(nonce_for node-1)
evidence good node-1 "$N"
jq '.eventlog = "AAAA"' ev.json >junk.json
expect_http 200 '"verdict":"refuse"' POST /v1/evidence junk.json
expect_http 409 "already used" POST /v1/evidence ev.json

note "a slow client is cut off; the service keeps serving"
python3 - "${URL#http://}" <<'PY' || fail "slow client was not disconnected"
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.sendall(b"POST /v1/nonce HTTP/1.1\r\nHost: x\r\n")   # and never the rest
s.settimeout(8)
t = time.time()
try:
    closed = s.recv(1) == b""
except ConnectionResetError:
    closed = True
sys.exit(0 if closed and time.time() - t < 8 else 1)
PY
expect_http 200 "ingot_http_responses_total" GET /metrics

note "trust-changing operations: the token, or refused"
printf '{"reason":"maintenance"}' >drain.json
expect_http 401 "drain: expected an Authorization: Bearer TOKEN header" POST /v1/nodes/node-1/drain drain.json
expect_http 403 "drain: the token is not the verifier's" POST /v1/nodes/node-1/drain drain.json \
	-H "Authorization: Bearer not-the-token-0123456789"
[ ! -e hook.log ] || ! grep -q drain hook.log || fail "hook ran for a refused drain"
expect_http 200 '"verdict":"drain"' POST /v1/nodes/node-1/drain drain.json -H "Authorization: Bearer $(cat token)"
assert_eq "drain" "$(db "SELECT state FROM nodes WHERE node='node-1'")" "node state after drain"
assert_eq "node-1|drain|operator: maintenance" "$(tail -1 hook.log)" "hook arguments"
serve_stop

note "without a token file, trust-changing operations are off"
serve_config
sed -i '/^token-file/d' serve.conf
serve_start
expect_http 403 "no token-file configured" POST /v1/nodes/node-1/drain drain.json -H "Authorization: Bearer $(cat token)"
serve_stop
echo "serve: hostile requests refused with one-line errors and the right statuses; token required"
