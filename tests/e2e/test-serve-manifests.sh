#!/bin/bash
# The node's manifest from the verifier, never a hand-placed file:
# GET /v1/manifests/POOL gives the signed envelope as signed (and
# POOL/NAME the file list it binds), and `ingot attest fetch-manifest`
# writes it only once the node's own keyring (the image's) verifies it
# and it describes the booted image.  A key outside that keyring, another
# image's manifest or no verifier: nothing written, one line.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/serve-lib.sh"
serve_fixture
serve_config
serve_start
POOL=$(jq -r .recipe.name boot.manifest.json)
ROOT=$(jq -r .verity.root_hash boot.manifest.json)
LIST=$(jq -r '.payload' boot.dsse.json | base64 -d | jq -r '.subject[-1].name')
# The image's keyring: the manifest role's key only (scripts/real-image.sh).
"$INGOT" keys keyring add image-keyring.json k.pub --name release --role manifest >/dev/null

note "the endpoint: the envelope and its file list, byte for byte"
expect_http 200 '"payloadType"' GET "/v1/manifests/$POOL"
cmp -s resp.out boot.dsse.json || fail "GET /v1/manifests/$POOL: not the configured envelope's bytes"
expect_http 200 '' GET "/v1/manifests/$POOL?root=$ROOT"
cmp -s resp.out boot.dsse.json || fail "?root=: not the envelope"
expect_http 200 '' GET "/v1/manifests/$POOL/$LIST"
cmp -s resp.out boot.manifest.json || fail "GET .../$LIST: not the bound file list's bytes"

note "the endpoint: refusals, one line with the right status"
expect_http 404 "manifests: pool no-such-pool: no manifest of this verifier names it" GET /v1/manifests/no-such-pool
expect_http 404 "no manifest of this verifier for image root 0000000000000000" \
	GET "/v1/manifests/$POOL?root=$(printf '0%.0s' $(seq 64))"
expect_http 400 "manifests: root: expected 64 lower-case hex digits" GET "/v1/manifests/$POOL?root=xyz"
expect_http 400 "manifests: expected a pool name" GET /v1/manifests/
expect_http 404 "binds no file list other.json" GET "/v1/manifests/$POOL/other.json"
expect_http 400 "expected a file list's name" GET "/v1/manifests/$POOL/.." "" --path-as-is
expect_http 405 "expected GET" POST "/v1/manifests/$POOL"
req GET /metrics
assert_contains "$BODY" 'ingot_http_responses_total{status="405"} 1' "metrics: the 405 counted"

mkdir out
fetch() { "$INGOT" attest fetch-manifest --pool "$POOL" --root "$ROOT" -o out/m.dsse.json "$@"; }

note "fetch-manifest: fetched, verified against the image's keyring, written with its file list"
expect_exit 0 "manifest $POOL serial" fetch --verifier "$URL" --keyring image-keyring.json
cmp -s out/m.dsse.json boot.dsse.json || fail "the fetched envelope differs"
cmp -s "out/$LIST" boot.manifest.json || fail "the fetched file list differs"
expect_exit 0 "" "$INGOT" verify-manifest out/m.dsse.json --keyring image-keyring.json
rm -rf out && mkdir out

note "fetch-manifest: signed by a key outside the image's keyring: refused (10), nothing written"
"$INGOT" keys generate -o other >/dev/null
"$INGOT" keys keyring add other-keyring.json other.pub --name other --role manifest >/dev/null
expect_exit 10 "signature" fetch --verifier "$URL" --keyring other-keyring.json
assert_eq "" "$(ls out)" "files written"

note "fetch-manifest: the enrolment role's key is no manifest signer"
"$INGOT" keys keyring add enrol-keyring.json k.pub --name release --role enrolment >/dev/null
expect_exit 20 "manifest" fetch --verifier "$URL" --keyring enrol-keyring.json
assert_eq "" "$(ls out)" "files written"

note "fetch-manifest: no manifest of the pool (404), or of this image: could not check (20)"
expect_exit 20 "HTTP 404: manifests: pool no-such-pool" "$INGOT" attest fetch-manifest --pool no-such-pool \
	--root "$ROOT" -o out/m.dsse.json --verifier "$URL" --keyring image-keyring.json
expect_exit 20 "for image root aaaaaaaaaaaaaaaa" "$INGOT" attest fetch-manifest --pool "$POOL" \
	--root "$(printf 'a%.0s' $(seq 64))" -o out/m.dsse.json --verifier "$URL" --keyring image-keyring.json
assert_eq "" "$(ls out)" "files written"

note "fetch-manifest: a verifier that answers another image's manifest, or another file list: refused (11)"
# A lying verifier: answers each path (its query ignored) with a file of www.
mkdir www && cp boot.dsse.json "www/_v1_manifests_$POOL"
jq '.files[0].size += 1' boot.manifest.json >"www/_v1_manifests_${POOL}_$LIST"
python3 -u - >www.out 2>www.err <<'PY' &
import http.server, os
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        f = os.path.join("www", self.path.split("?")[0].replace("/", "_"))
        body = open(f, "rb").read() if os.path.isfile(f) else b'{"error": "none", "status": 404}'
        self.send_response(200 if os.path.isfile(f) else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print("port", s.server_address[1], flush=True)
s.serve_forever()
PY
WWW=$!
at_exit "kill $WWW 2>/dev/null"
for _ in $(seq 100); do grep -q '^port ' www.out && break; sleep 0.05; done
LIAR=http://127.0.0.1:$(sed -n 's/^port //p' www.out)
[ "$LIAR" != http://127.0.0.1: ] || fail "no test HTTP server: $(cat www.err)"
expect_exit 11 "expected pool $POOL, root aaaaaaaaaaaaaaaa... (the booted image)" "$INGOT" attest fetch-manifest \
	--pool "$POOL" --root "$(printf 'a%.0s' $(seq 64))" -o out/m.dsse.json --verifier "$LIAR" \
	--keyring image-keyring.json
assert_eq "" "$(ls out)" "files written"
expect_exit 11 "$LIST: sha256: expected $(jq -r '.payload' boot.dsse.json | base64 -d | jq -r '.subject[-1].digest.sha256')" \
	fetch --verifier "$LIAR" --keyring image-keyring.json
assert_eq "" "$(ls out)" "files written"

note "fetch-manifest: no verifier reached: could not check (20), nothing written"
serve_stop
expect_exit 20 "$URL/v1/manifests/$POOL" fetch --verifier "$URL" --keyring image-keyring.json
assert_eq "" "$(ls out)" "files written"
note "a verifier that only holds the manifest (the boot test's), over a stream: both files on one connection"
printf 'listen = 127.0.0.1:0\ndatabase = m.sqlite\nkeyring = keyring.json\nmanifest = boot.dsse.json\n' >serve.conf
serve_start m
if command -v socat >/dev/null; then
	socat PTY,link="$T/port",rawer,wait-slave TCP:"${URL#http://}" 2>socat.err &
	at_exit "kill $! 2>/dev/null"
	for _ in $(seq 50); do [ -e "$T/port" ] && break; sleep 0.1; done
	expect_exit 0 "manifest $POOL serial" fetch --verifier http://127.0.0.1 --via "$T/port" --keyring image-keyring.json
	cmp -s "out/$LIST" boot.manifest.json || fail "the file list fetched over the stream differs"
else
	expect_exit 0 "manifest $POOL serial" fetch --verifier "$URL" --keyring image-keyring.json
fi
serve_stop
if ! grep -q 'ingot.root=' /proc/cmdline; then
	expect_exit 20 "/proc/cmdline: no ingot.root=" "$INGOT" attest fetch-manifest --pool "$POOL" -o out/m.dsse.json \
		--verifier "$URL" --keyring image-keyring.json
fi
expect_exit 64 "are required" "$INGOT" attest fetch-manifest --pool "$POOL" -o out/m --verifier "$URL"
echo "manifests: fetched from the verifier, trusted only by the image's keyring"
