#!/bin/bash
# The bad-input table (tests/bad-inputs/cases.txt): every hostile or broken
# input gets the documented exit status and a message naming the problem,
# and leaves no output behind.  Also: private key material never shows up
# in any output or message.
. "$(dirname "$0")/lib.sh"
TABLE=$SRC/tests/bad-inputs/cases.txt
W=$T/in
python3 "$SRC/tests/bad-inputs/gen.py" "$W" || fail "gen.py failed"
cd "$W"
umask 022
unset INGOT_KEY_PASSPHRASE
mkdir inputs-dir special
mkfifo special/src.fifo

note "setup: keys, keyring, a signed manifest and its broken variants"
"$INGOT" keys generate -o k >/dev/null
"$INGOT" keys generate -o other >/dev/null
"$INGOT" keys keyring add keyring.json k.pub --name release >/dev/null
cp k.key loose.key && chmod 0644 loose.key
printf 'this is not a key\n' >notakey.key && chmod 0600 notakey.key
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.key 2>/dev/null
chmod 0600 rsa.key
printf '{"schema":"ingot.verify-state/v1","serials":{"bad":9}}\n' >state.json
python3 - <<'PY'
import json
m = {"schema": "ingot.manifest/v1", "ingot_version": "0.1.0",
     "recipe": {"name": "bad", "version": "1", "file": "bad.yaml", "sha256": "1" * 64},
     "epoch": 0, "serial": 3, "expires": "2027-01-01T00:00:00Z", "tuple": None,
     "artifacts": [], "files": [],
     "image": {"file": "bad.sqfs", "sha256": "2" * 64, "size": 4096, "compression": "zstd",
               "level": 0, "block_size": 131072},
     "verity": {"file": "bad.verity", "format": 1, "hash_algorithm": "sha256",
                "data_block_size": 4096, "hash_block_size": 4096, "data_blocks": 1,
                "hash_offset": 0, "salt": "33", "root_hash": "4" * 64, "uuid": "x"},
     "measurement": {"pcr": 15, "event_type": 13, "event_data": "ingot:v1",
                     "content_digest": "5" * 64, "digests": {}, "predicted": {}}}
json.dump(m, open("m.json", "w"), indent=1)
PY
"$INGOT" sign m.json --key k.key -o env.json >/dev/null
"$INGOT" sign m.json --key other.key -o env-other.json >/dev/null
python3 - <<'PY'
import base64, json, subprocess
env = json.load(open("env.json"))
def put(name, e):
    json.dump(e, open(name, "w"))
# Another payload type, validly signed (over its own PAE) by the trusted
# key, so only the type check can refuse it.
body = base64.b64decode(env["payload"])
t = b"application/json"
open("pae-type.bin", "wb").write(b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body))
subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", "k.key", "-rawin", "-in", "pae-type.bin",
                "-out", "sig-type.bin"], check=True)
sig_t = base64.b64encode(open("sig-type.bin", "rb").read()).decode()
put("env-type.json", dict(env, payloadType=t.decode(),
                          signatures=[dict(env["signatures"][0], sig=sig_t)]))
put("env-b64.json", dict(env, payload="!!not base64!!"))
sig = base64.b64decode(env["signatures"][0]["sig"])
put("env-trunc.json", dict(env, signatures=[dict(env["signatures"][0], sig=base64.b64encode(sig[:-10]).decode())]))
st = json.loads(base64.b64decode(env["payload"]))
st["predicate"]["serial"] = 99
put("env-tampered.json", dict(env, payload=base64.b64encode(json.dumps(st).encode()).decode()))
put("env-nosig.json", dict(env, signatures=[]))
open("env-notjson.json", "w").write('{"payloadType": "application/vnd.in-toto+json", "payload": ')
ring = json.load(open("keyring.json"))
ring["keys"][0]["public_key"] = open("other.pub").read()   # keyid no longer matches
put("keyring-forged.json", ring)
PY
# One P-256 key listed twice, plain and compressed (openssl ec), each entry
# with the id of its own encoding; and an envelope over every reader's limit.
"$INGOT" keys generate --type p256 -o p >/dev/null
openssl ec -pubin -in p.pub -conv_form compressed -pubout -out p-comp.pub 2>/dev/null
python3 - "$(openssl pkey -pubin -in p.pub -outform DER | sha256sum | cut -d' ' -f1)" \
	"$(openssl pkey -pubin -in p-comp.pub -outform DER | sha256sum | cut -d' ' -f1)" <<'PY'
import json, sys
keys = [{"name": n, "keyid": i, "public_key": open(f).read()}
        for n, i, f in (("p", sys.argv[1], "p.pub"), ("p-comp", sys.argv[2], "p-comp.pub"))]
json.dump({"keys": keys, "threshold": 2}, open("keyring-twice.json", "w"))
PY
truncate -s 97M env-huge.json

note "setup: AK enrolment requests, answers and records (no TPM)"
bash "$SRC/tests/bad-inputs/gen-enroll.sh" || fail "gen-enroll.sh failed"

note "setup: a truncated and a corrupted image"
"$INGOT" build good.yaml -o img --store store --no-lint -q
head -c 200 img/bad.sqfs >trunc.sqfs
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[100] ^= 0xff; b[200] ^= 0xff
open(sys.argv[2], "wb").write(b)' img/bad.sqfs flip.sqfs
# Corruptions squashfs cannot detect by itself (no checksums), caught by
# cross-checks: the superblock's inode count, and a fragment count that
# would ask for 32 GiB.
python3 - img/bad.sqfs <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
def put(name, off, fmt, val, base=b):
    c = bytearray(base)
    struct.pack_into(fmt, c, off, val)
    open(name, "wb").write(c)
put("inodes.sqfs", 4, "<I", struct.unpack_from("<I", b, 4)[0] - 1)
put("frags.sqfs", 16, "<I", 0x80000000)
PY

note "setup: a node root whose listed file became a symlink, one a directory"
unsquashfs -q -n -d root-symlink img/bad.sqfs >/dev/null
rm root-symlink/etc/good.conf && ln -s /etc/passwd root-symlink/etc/good.conf
unsquashfs -q -n -d root-dir img/bad.sqfs >/dev/null
rm root-dir/etc/good.conf && mkdir root-dir/etc/good.conf

note "setup: a TPM quote signed by a software AK (tests/tools/mkquote)"
MKQUOTE=$BUILD_DIR/tools/mkquote
[ -x "$MKQUOTE" ] || fail "$MKQUOTE not built (make all)"
export NONCE=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
# seen-nonce files with a CR and a NUL (files: a pipe is not a file ingot reads)
printf '%s\r\n' $NONCE >seen-crlf.txt
printf '00\0\n%s\n' $NONCE >seen-nul.txt
export NONCE2=ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100
mkdir ak
PCR=$(printf x | sha256sum | cut -d' ' -f1)
DIG=$(python3 -c 'import hashlib, sys; print(hashlib.sha256(bytes.fromhex(sys.argv[1])).hexdigest())' "$PCR")
echo "0 $NONCE 32768 $DIG" | "$MKQUOTE" ak 2 >q.txt
cp ak/ak-0.pub ak.pub && cp ak/ak-1.pub ak2.pub
python3 - "$NONCE" "$PCR" <<'PY'
import json, sys
a, s = open("q.txt").read().split()
q = {"format": "ingot.quote/v1", "nonce": sys.argv[1], "attest": a, "signature": s,
     "pcrs": {"sha256": {"15": sys.argv[2]}}, "ak_pub": open("ak.pub").read()}
json.dump(q, open("quote.json", "w"))
json.dump(dict(q, attest="Z2FyYmFnZQ=="), open("quote-badattest.json", "w"))
open("quote-notjson.json", "w").write("quote: not json\n")
PY

note "setup: measured-boot evidence (tests/e2e/boot-evidence.py), an enrolment record, a firmware reference"
mkdir boot
python3 "$SRC/tests/e2e/boot-evidence.py" boot "$MKQUOTE" "$NONCE" || fail "boot-evidence.py failed"
"$INGOT" attest predict --manifest boot/boot.manifest.json >boot/meas.json
jq --slurpfile m boot/meas.json '.measurement = $m[0]' boot/boot.manifest.json >boot/m.tmp && mv boot/m.tmp boot/boot.manifest.json
"$INGOT" sign boot/boot.manifest.json --key k.key -o boot/boot.dsse.json >/dev/null
"$BUILD_DIR/tools/mkenrolment" k.key node-1 boot/ak/ak-0.pub boot/enrol.json || fail "mkenrolment failed"
"$INGOT" attest firmware-ref boot/quote-good.json boot/log-good.bin --platform ovmf-test --nonce "$NONCE" \
	--enrolment boot/enrol.json --enrolment-keyring keyring.json --key k.key -o boot/fw.json >/dev/null ||
	fail "firmware-ref failed"
printf '%s\n' "$NONCE" >boot/seen.txt
# One key for every role, each named for it.
export BOOT="--manifest boot/boot.dsse.json --keyring keyring.json --enrolment-keyring keyring.json
	--firmware-ref-keyring keyring.json --nonce $NONCE"
export TRUST="--enrolment boot/enrol.json --firmware-ref boot/fw.json"

snapshot() { # every file outside the stores, with its digest
	find . \( -path ./store -o -path ./cold-store -o -path ./special \) -prune -o ! -type d -print0 | sort -z |
		xargs -0 sha256sum
}

note "the table"
n=0 bad=0
while IFS='|' read -r name want needle cmd; do
	name=$(echo "$name" | sed 's/^ *//; s/ *$//')
	case "$name" in ''|'#'*) continue ;; esac
	want=$(echo "$want" | tr -d ' ')
	needle=$(echo "$needle" | sed 's/^ *//; s/ *$//')
	n=$((n + 1))
	before=$(snapshot)
	rc=0
	out=$(eval "$cmd" 2>&1 </dev/null) || rc=$?
	problem=
	if [ "$rc" != "$want" ]; then
		problem="exit $rc, expected $want"
	elif [ -n "$needle" ] && [[ "$out" != *"$needle"* ]]; then
		problem="message lacks '$needle'"
	elif [ "$want" != 0 ] && [ "$(snapshot)" != "$before" ]; then
		problem="files appeared or changed: $(diff <(echo "$before") <(snapshot) | grep '^>' | head -3 | tr '\n' ' ')"
	elif [ "$want" != 0 ] && [ "$(printf '%s\n' "$out" | grep -c .)" -gt 3 ]; then
		problem="expected a short error, got $(printf '%s\n' "$out" | grep -c .) lines"
	fi
	if [ -n "$problem" ]; then
		bad=$((bad + 1))
		echo "FAIL $name: $problem"
		echo "     command: $cmd"
		echo "     output:  $(printf '%s' "$out" | head -c 400)"
	else
		echo "ok   $name (exit $rc)"
	fi
done <"$TABLE"
[ "$n" -ge 30 ] || fail "the table has only $n cases"
[ "$bad" = 0 ] || fail "$bad of $n bad-input cases failed"

note ".deb: ingot accepts exactly what dpkg-deb accepts"
if command -v dpkg-deb >/dev/null; then
	for d in deb-*.deb; do
		dpkg=0 ing=0
		# -c reads every member up to data.tar; -f the control file
		# (a package without Version: is one dpkg cannot install)
		dpkg-deb -c "$d" >/dev/null 2>&1 && [ -n "$(dpkg-deb -f "$d" Version 2>/dev/null)" ] || dpkg=1
		"$INGOT" build "${d%.deb}.yaml" -o out-dpkg --store store --no-lint -q 2>/dev/null || ing=1
		assert_eq "$dpkg" "$ing" "$d: dpkg-deb refuses=$dpkg, ingot refuses=$ing"
	done
else
	note "dpkg-deb not installed: comparison skipped"
fi

note "secrets: private key material never in outputs or messages"
key_body() { grep -v -- '-----' "$1" | tr -d '\n' | cut -c1-40; }
K=$(key_body k.key)
R=$(key_body rsa.key)
rc=0
msgs=$("$INGOT" build good.yaml -o signed-out --store store --no-lint --key k.key 2>&1) || rc=$?
assert_eq 0 "$rc" "signed build"
msgs+=$("$INGOT" sign m.json --key rsa.key -o x.json 2>&1 || true)
msgs+=$("$INGOT" sign m.json --key loose.key -o x.json 2>&1 || true)
msgs+=$("$INGOT" keys generate -o fresh 2>&1)
for m in "$K" "$R"; do
	[ -n "$m" ] || fail "could not read key material"
	case "$msgs" in *"$m"*) fail "key material in messages" ;; esac
	if grep -rqF -- "$m" signed-out; then fail "key material in build outputs"; fi
done
case "$msgs" in *PRIVATE*) fail "a message mentions a PRIVATE KEY block: $msgs" ;; esac
echo "bad-input table: $n cases passed"
