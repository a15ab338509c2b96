#!/bin/bash
# The signed statement (predicateType https://ingot.dev/manifest-head/v2):
#  - a build's envelope carries the manifest's head, not its file list, and
#    names the image, the SBOM and the manifest file by sha256; openssl
#    verifies its signature over the PAE;
#  - verify-manifest checks the file list beside the envelope (or
#    --file-list) by digest: one changed byte is exit 6 naming the file and
#    the signed digest field; a missing one is exit 1, never a pass;
#  - ingot verify refuses a tampered file list and calls a missing one
#    "could not check"; inspect and diff refuse a tampered one;
#  - a statement whose subjects disagree with its head is refused, and one
#    naming a manifest outside the envelope's directory is refused;
#  - a manifest not in canonical form is signed too (parsed whole);
#  - the v1 envelope kept in tests/fixtures/envelope-v1 (made by the ingot
#    before this change: the whole manifest as predicate) still verifies
#    with the same output, and can be co-signed.
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || skip "openssl not installed"
command -v unsquashfs >/dev/null || skip "unsquashfs not installed"
FIX=$SRC/tests/fixtures/envelope-v1

cat >"$T/r.yaml" <<YAML
name: st
version: "1"
epoch: 1700000000
files:
  - {path: /etc/hello, content: "hello\n"}
  - {path: /etc/motd, content: "welcome\n"}
YAML
"$INGOT" keys generate -o "$T/k" >/dev/null
"$INGOT" keys keyring add "$T/ring.json" "$T/k.pub" --name release >/dev/null
"$INGOT" build "$T/r.yaml" -o "$T/out" --store "$T/store" --key "$T/k.key" --no-lint -q \
	|| fail "signed build failed"
O=$T/out
E=$O/st.manifest.dsse.json
M=$O/st.manifest.json
vm() { "$INGOT" verify-manifest "$@" --keyring "$T/ring.json" --now 0; }

note "the statement: the head, three subjects"
python3 - "$E" "$M" "$O" <<'PY' || fail "the statement is not the v2 head statement"
import base64, hashlib, json, sys
env, man, out = sys.argv[1:]
st = json.loads(base64.b64decode(json.load(open(env))["payload"]))
m = json.load(open(man))
assert st["_type"] == "https://in-toto.io/Statement/v1", st["_type"]
assert st["predicateType"] == "https://ingot.dev/manifest-head/v2", st["predicateType"]
head = dict(m); del head["files"]
assert st["predicate"] == head, "predicate is not the manifest without files"
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
want = [{"name": "st.sqfs", "digest": {"sha256": sha(out + "/st.sqfs")}},
        {"name": "st.spdx.json", "digest": {"sha256": sha(out + "/st.spdx.json")}},
        {"name": "st.manifest.json", "digest": {"sha256": sha(man)}}]
assert st["subject"] == want, st["subject"]
PY
# openssl verifies the signature over the PAE bytes, rebuilt here
python3 - "$E" "$T/pae.bin" "$T/sig.bin" <<'PY'
import base64, json, sys
e = json.load(open(sys.argv[1]))
body = base64.b64decode(e["payload"]); t = e["payloadType"].encode()
open(sys.argv[2], "wb").write(b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body))
open(sys.argv[3], "wb").write(base64.b64decode(e["signatures"][0]["sig"]))
PY
openssl pkeyutl -verify -pubin -inkey "$T/k.pub" -rawin -in "$T/pae.bin" -sigfile "$T/sig.bin" >/dev/null \
	|| fail "openssl rejects the signature over the statement's PAE"
# ingot sign of the manifest file gives the build's envelope, byte for byte
"$INGOT" sign "$M" --key "$T/k.key" -o "$T/resigned.json" >/dev/null
cmp "$E" "$T/resigned.json" || fail "ingot sign differs from ingot build --key"

note "verify-manifest checks the file list by digest"
expect_exit 0 "file list sha256 matches" vm "$E"
cp "$M" "$T/saved.manifest.json"
python3 - "$M" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read())
i = b.index(b"/etc/motd") + 5   # one byte of the file list: /etc/motd -> /etc/Motd
b[i] = ord("M")
open(p, "wb").write(b)
PY
cmp -s "$M" "$T/saved.manifest.json" && fail "tampering changed nothing"
expect_exit 6 "st.manifest.json: sha256: expected $(sha256 "$T/saved.manifest.json") (statement.subject[2].digest.sha256" vm "$E"
[ "$(printf '%s\n' "$OUT" | wc -l)" = 1 ] || fail "expected one line, got: $OUT"
expect_exit 6 "statement.subject[2].digest.sha256" vm "$E" --print-manifest
# ingot verify (the node's check) refuses it; inspect and diff too
mkdir -p "$T/root" && unsquashfs -q -n -f -d "$T/root" "$O/st.sqfs" >/dev/null || fail "unsquashfs failed"
nodeverify() { "$INGOT" verify --manifest "$E" --keyring "$T/ring.json" --root "$T/root" --tcti none --now 0 --brief; }
expect_exit 10 "statement.subject[2].digest.sha256" nodeverify
expect_exit 1 "statement.subject[2].digest.sha256" "$INGOT" inspect "$E"
expect_exit 2 "statement.subject[2].digest.sha256" "$INGOT" diff "$E" "$T/saved.manifest.json"

note "a missing file list is refused, never a pass"
rm "$M"
expect_exit 1 "st.manifest.json: cannot open" vm "$E"
assert_contains "$OUT" "statement.subject[2], the file list" "missing"
expect_exit 20 "cannot open" nodeverify
OUT=$("$INGOT" verify --manifest "$E" --keyring "$T/ring.json" --root "$T/root" --tcti none --now 0 --json 2>/dev/null) || true
python3 - "$OUT" <<'PY' || fail "verify did not call the checks unverifiable: $OUT"
import json, sys
r = json.loads(sys.argv[1])
checks = {c["name"]: c for c in r["checks"]} if isinstance(r["checks"], list) else r["checks"]
sig, files = checks["signature"], checks["files"]
assert sig["status"] == "error", sig
assert "cannot open" in sig["summary"], sig
assert files["status"] == "error", files
PY
# --file-list names it elsewhere
expect_exit 0 "file list sha256 matches" vm "$E" --file-list "$T/saved.manifest.json"
cp "$T/saved.manifest.json" "$M"
expect_exit 0 "" vm "$E" --print-manifest
printf '%s\n' "$OUT" | cmp - "$M" || fail "--print-manifest is not the bound manifest file"
expect_exit 0 "" nodeverify

note "subjects that disagree with the head"
# stmt OUT PYEXPR: the build's statement changed by PYEXPR (on st), signed
# with openssl over its PAE, in an envelope in $O
stmt() {
	python3 - "$E" "$T/st-pae.bin" "$T/st-body" "$2" <<'PY'
import base64, json, sys
e = json.load(open(sys.argv[1]))
st = json.loads(base64.b64decode(e["payload"]))
exec(sys.argv[4])
body = json.dumps(st, separators=(",", ":"), sort_keys=True).encode()
t = e["payloadType"].encode()
open(sys.argv[2], "wb").write(b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body))
open(sys.argv[3], "wb").write(body)
PY
	openssl pkeyutl -sign -inkey "$T/k.key" -rawin -in "$T/st-pae.bin" -out "$T/st-sig" || fail "openssl sign"
	python3 - "$E" "$T/st-body" "$T/st-sig" "$1" <<'PY'
import base64, json, sys
e = json.load(open(sys.argv[1]))
e["payload"] = base64.b64encode(open(sys.argv[2], "rb").read()).decode()
e["signatures"][0]["sig"] = base64.b64encode(open(sys.argv[3], "rb").read()).decode()
json.dump(e, open(sys.argv[4], "w"))
PY
}
stmt "$O/same.json" 'pass'
expect_exit 0 "file list sha256 matches" vm "$O/same.json"
stmt "$O/s1.json" 'st["subject"][0]["digest"]["sha256"] = "0" * 64'
expect_exit 2 "statement.subject[0].digest.sha256" vm "$O/s1.json"
stmt "$O/s2.json" 'st["subject"][2]["digest"]["sha256"] = "0" * 64'
expect_exit 6 "sha256: expected $(printf '0%.0s' $(seq 64))" vm "$O/s2.json"
stmt "$O/s3.json" 'st["subject"][2]["name"] = "../st.manifest.json"'
expect_exit 2 "statement.subject[2].name: expected the manifest's file name" vm "$O/s3.json"
stmt "$O/s4.json" 'del st["subject"][2]'
expect_exit 2 "statement.subject: expected an array of three entries" vm "$O/s4.json"
stmt "$O/s5.json" 'st["predicate"]["files"] = []'
expect_exit 2 "files: expected none in a manifest head" vm "$O/s5.json"
# the file list must hold the head it was signed with
python3 - "$M" "$O/other.manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["serial"] = 7
open(sys.argv[2], "w").write(json.dumps(m, indent=2, sort_keys=True) + "\n")
PY
stmt "$O/s6.json" "import hashlib; st['subject'][2] = {'name': 'other.manifest.json', 'digest': {'sha256': hashlib.sha256(open('$O/other.manifest.json', 'rb').read()).hexdigest()}}"
expect_exit 2 "other.manifest.json: serial: expected the member signed" vm "$O/s6.json" --print-manifest

note "a manifest in another layout is signed too (parsed whole)"
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], "w"))' "$M" "$O/flat.manifest.json"
"$INGOT" sign "$O/flat.manifest.json" --key "$T/k.key" >/dev/null || fail "sign of a non-canonical manifest"
expect_exit 0 "file list sha256 matches" vm "$O/flat.manifest.dsse.json"
python3 - "$O/flat.manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["files"][0]["mode"] = "rwx"
json.dump(m, open(sys.argv[1], "w"))
PY
expect_exit 2 "files[0].mode: expected 4 octal digits" "$INGOT" sign "$O/flat.manifest.json" --key "$T/k.key" -o "$T/no.json"
assert_no_file "$T/no.json"

note "a v1 envelope (whole manifest as predicate) still verifies"
cp "$FIX"/* "$T/"
expect_exit 0 "OK: demo serial 1, 1 of 1 required signatures (v1)" \
	"$INGOT" verify-manifest "$T/demo.manifest.dsse.json" --keyring "$T/keyring.json" --now 0
assert_contains "$OUT" "OK" && case $OUT in *"file list"*) fail "a v1 envelope has no file list: $OUT" ;; esac
rm "$T/demo.manifest.json"   # it needs nothing beside it
"$INGOT" verify-manifest "$T/demo.manifest.dsse.json" --keyring "$T/keyring.json" --now 0 --print-manifest \
	>"$T/printed.json" 2>"$T/printed.err" || fail "v1 --print-manifest failed"
cmp "$T/printed.json" "$FIX/verified.json" || fail "v1 --print-manifest differs from the old ingot's"
# its SBOM is not there: said on stderr, never a pass
assert_contains "$(cat "$T/printed.err")" "SBOM not checked: no $T/demo.spdx.json" "v1 --print-manifest without its SBOM"
expect_exit 0 '"files": 2' "$INGOT" inspect --json "$T/demo.manifest.dsse.json"
# co-signing keeps it v1
"$INGOT" sign "$T/demo.manifest.dsse.json" --key "$T/k.key" >/dev/null || fail "co-sign of a v1 envelope"
"$INGOT" keys keyring add "$T/keyring.json" "$T/k.pub" --name release --threshold 2 >/dev/null
expect_exit 0 "2 of 2 required signatures (v1, release)" \
	"$INGOT" verify-manifest "$T/demo.manifest.dsse.json" --keyring "$T/keyring.json" --now 0
echo "signed statement ok"
