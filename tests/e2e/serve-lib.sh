# Helpers of the test-serve-*.sh tests (sourced after lib.sh): a verifier's
# trusted files from synthetic measured-boot evidence
# (boot-evidence.py), a configuration, and an `ingot serve` on a free
# loopback port that the test starts and stops itself.
MKQUOTE=$BUILD_DIR/tools/mkquote MKENROL=$BUILD_DIR/tools/mkenrolment
[ -x "$MKQUOTE" ] && [ -x "$MKENROL" ] || fail "tests/tools not built (make all)"
command -v curl >/dev/null || skip "curl not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 not installed"

# In $T/v: the evidence, a signing key and keyring, the signed manifest,
# node-1's enrolment record, the platform's firmware reference, a hook
# that records its arguments (hook.log) and a 0600 token.
serve_fixture() {
	local n0=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
	mkdir -p "$T/v/enrolments" "$T/v/firmware" && cd "$T/v" || fail "no $T/v"
	python3 "$SRC/tests/e2e/boot-evidence.py" . "$MKQUOTE" "$n0" || fail "boot-evidence.py failed"
	"$INGOT" keys generate -o k >/dev/null
	"$INGOT" keys keyring add keyring.json k.pub --name release --role manifest,enrolment,firmware-ref >/dev/null
	# A tuple, for the node report's check (scripts/gen-reports.py's AMD pool).
	jq '.tuple = {"vendor": "amd", "smi": "amd-smi", "rccl": {"version": "2.22.3"},
		"rocm": {"version": "7.2.0", "stream": "legacy", "prefix": "/opt/rocm-7.2"}}' \
		boot.manifest.json >m.tmp && mv m.tmp boot.manifest.json
	"$INGOT" attest predict --manifest boot.manifest.json >meas.json
	jq --slurpfile m meas.json '.measurement = $m[0]' boot.manifest.json >m.tmp && mv m.tmp boot.manifest.json
	"$INGOT" sign boot.manifest.json --key k.key -o boot.dsse.json >/dev/null
	"$MKENROL" k.key node-1 ak/ak-0.pub enrolments/node-1.json
	"$MKENROL" k.key node-2 ak/ak-0.pub enrolments/node-2.json
	"$INGOT" attest firmware-ref quote-good.json log-good.bin --platform ovmf-test --nonce "$n0" \
		--enrolment enrolments/node-1.json --keyring keyring.json --key k.key -o firmware/ovmf.json >/dev/null ||
		fail "firmware-ref failed"
	printf '#!/bin/sh\nprintf "%%s|%%s|%%s\\n" "$1" "$2" "$3" >>"%s"\n' "$T/v/hook.log" >hook.sh
	chmod 0755 hook.sh
	(umask 077 && echo "s3cret-token-0123456789abcdef" >token)
}

# serve_config [LINE...]: serve.conf, with extra KEY = VALUE lines.
serve_config() {
	cat >serve.conf <<CONF
# a verifier for the tests: loopback only
listen = 127.0.0.1:0
database = db.sqlite
keyring = keyring.json
enrolments = enrolments
firmware-refs = firmware
manifest = boot.dsse.json
hook = $T/v/hook.sh
token-file = token
max-body = 65536
CONF
	local l
	for l in "$@"; do echo "$l" >>serve.conf; done
}

# serve_start [NAME]: start it (its output in NAME.out and NAME.err,
# default serve), wait (bounded) for "listening on", set URL and SERVE_PID.
serve_start() {
	local name=${1:-serve} i
	"$INGOT" serve --config serve.conf >"$name.out" 2>"$name.err" &
	SERVE_PID=$!
	at_exit "kill $SERVE_PID 2>/dev/null"
	for i in $(seq 200); do
		grep -q '^listening on ' "$name.out" 2>/dev/null && break
		kill -0 "$SERVE_PID" 2>/dev/null || fail "ingot serve exited: $(cat "$name.err")"
		sleep 0.05
	done
	URL=http://$(sed -n 's/^listening on //p' "$name.out")
	[ "$URL" != http:// ] || fail "ingot serve did not listen in 10 s"
}

# serve_stop: SIGTERM, and it must exit 0.
serve_stop() {
	local rc=0
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID" || rc=$?
	[ "$rc" = 0 ] || fail "ingot serve's exit status after SIGTERM: expected 0, got $rc: $(tail -30 serve.err)"
}

# req METHOD PATH [BODY_FILE] [CURL_ARGS...]: CODE and BODY set.
req() {
	local m=$1 p=$2 f=${3:-}
	shift 2; [ $# -gt 0 ] && shift
	CODE=$(curl -sS -o resp.out -w '%{http_code}' -X "$m" ${f:+--data-binary @"$f"} \
		-H 'Content-Type: application/json' "$@" "$URL$p") || fail "curl $m $p failed"
	BODY=$(cat resp.out)
}

# expect_http CODE SUBSTRING METHOD PATH [BODY_FILE] [CURL_ARGS...]
expect_http() {
	local want=$1 needle=$2
	shift 2
	req "$@"
	[ "$CODE" = "$want" ] || fail "$1 $2: expected HTTP $want, got $CODE: $BODY"
	[ -z "$needle" ] || assert_contains "$BODY" "$needle" "$1 $2"
	if [ "$want" != 200 ]; then   # a refusal: one line of JSON naming it
		assert_eq 1 "$(wc -l <resp.out)" "$1 $2: lines of the refusal"
		jq -e '.error | type == "string"' resp.out >/dev/null || fail "$1 $2: no error member: $BODY"
	fi
}

# nonce_for NODE: a fresh nonce from the service.
nonce_for() {
	printf '{"node":"%s"}' "$1" >nreq.json
	expect_http 200 '"nonce"' POST /v1/nonce nreq.json
	jq -r .nonce resp.out
}

# evidence CASE NODE NONCE: the request body, in ev.json.
evidence() {
	python3 "$SRC/tests/e2e/serve-evidence.py" . "$MKQUOTE" "$1" "$2" "$3" >ev.json || fail "serve-evidence.py failed"
}

# with_report NODE [KEY=VALUE...]: ev.json gets a node report whose probe
# holds the tuple's facts (overridden by the arguments).
with_report() {
	local node=$1
	shift
	python3 - "$node" "$@" <<'PY' || fail "with_report failed"
import json, sys
facts = {"vendor": "amd", "smi": "amd-smi", "rocm.version": "7.2.0", "rocm.stream": "legacy",
         "rocm.prefix": "/opt/rocm-7.2", "rccl.version": "2.22.3"}
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    facts[k] = v
ev = json.load(open("ev.json"))
ev["report"] = {"schema": "ingot.report/v1", "node": {"id": sys.argv[1]},
                "probe": {"root": "/", "facts": [{"key": k, "value": v, "source": "test"} for k, v in sorted(facts.items())]}}
json.dump(ev, open("ev.json", "w"))
PY
}

# db SQL: a query on the verifier's database (PostgreSQL's once
# pg_cluster_start ran), one row a line, columns split by '|'.
db() {
	if [ -n "${PG_DIR:-}" ]; then
		psql -h "$PG_DIR" -p "$PG_PORT" -U ingot -d ingot -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"
	else
		sqlite3 -batch db.sqlite "$1"
	fi
}

# pg_cluster_start: a private PostgreSQL cluster (skip if PostgreSQL is not
# installed): run as the postgres user, which PostgreSQL requires of root,
# in a directory of its own, on a Unix socket only (no TCP), with a
# database "ingot"; stopped on exit.  Sets PG_DIR, PG_PORT and PG_SPEC
# (the verifier's `database` value).
pg_cluster_start() {
	local bin
	bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	[ -n "$bin" ] && [ -x "$bin/initdb" ] && [ -x "$bin/pg_ctl" ] || skip "PostgreSQL server not installed"
	command -v psql >/dev/null || skip "psql not installed"
	local as=()
	[ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
	PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ingot-pg.XXXXXX")
	[ ${#as[@]} = 0 ] || chown postgres "$PG_DIR"
	"${as[@]}" test -x "$PG_DIR" || fail "$PG_DIR: not reachable by the cluster's user"
	PG_PORT=$((50000 + RANDOM % 10000))
	"${as[@]}" "$bin/initdb" -D "$PG_DIR/data" -A trust -U ingot >"$PG_DIR/initdb.log" 2>&1 ||
		fail "initdb failed: $(tail -5 "$PG_DIR/initdb.log")"
	at_exit "${as[*]} $bin/pg_ctl -D $PG_DIR/data -m immediate -w stop >/dev/null 2>&1; rm -rf $PG_DIR"
	"${as[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
		-o "-k $PG_DIR -c listen_addresses='' -p $PG_PORT -c fsync=on" start >/dev/null ||
		fail "pg_ctl start failed: $(tail -5 "$PG_DIR/log")"
	psql -h "$PG_DIR" -p "$PG_PORT" -U ingot -d postgres -X -q -c 'CREATE DATABASE ingot' || fail "CREATE DATABASE failed"
	PG_SPEC="postgresql:host=$PG_DIR port=$PG_PORT user=ingot dbname=ingot"
}
