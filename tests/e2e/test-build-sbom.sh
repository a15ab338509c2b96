#!/bin/bash
# The SBOM `ingot build` writes (NAME.spdx.json, builder/sbom.h): valid
# against the official SPDX 2.3 JSON schema (tests/fixtures/spdx, checked
# with python3-jsonschema), one package per artifact with its pin and the
# version its .deb control or the tuple gives, every regular file of the
# manifest with the same sha256 (and SPDX's SHA1) and contained by the package that put it
# there, the image described by the document; deterministic bytes (another
# store and worker count give the same file); verify-manifest checks the
# SBOM's bytes against the signed digest; no SBOM left by a failed build.
. "$(dirname "$0")/lib.sh"
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema not installed"
SCHEMA=$SRC/tests/fixtures/spdx/spdx-2.3.schema.json

note "demo build"
mkdir -p "$T/r"
INGOT_DEMO_ONLY=1 "$SRC/scripts/gen-artifacts.sh" "$BUILD_DIR" "$T/r/artifacts" >/dev/null
cp "$SRC/recipes/demo.yaml" "$T/r/demo.yaml"
(cd "$T" && "$INGOT" build r/demo.yaml -o a --store store-a --no-lint -q)
(cd "$T" && "$INGOT" build r/demo.yaml -o b --store store-b -j 2 --no-lint -q)
assert_file "$T/a/demo-h100.spdx.json"
assert_eq "$(sha256 "$T/a/demo-h100.spdx.json")" "$(sha256 "$T/b/demo-h100.spdx.json")" "SBOM bytes"

note "schema and content"
python3 - "$SCHEMA" "$T/a/demo-h100.spdx.json" "$T/a/demo-h100.manifest.json" "$T/a/demo-h100.sqfs" <<'PY' || fail "SBOM check failed"
import hashlib, json, sys
import jsonschema
schema, doc, man = (json.load(open(p)) for p in sys.argv[1:4])
jsonschema.validate(doc, schema)
assert doc["spdxVersion"] == "SPDX-2.3" and doc["dataLicense"] == "CC0-1.0", doc["spdxVersion"]
img = hashlib.sha256(open(sys.argv[4], "rb").read()).hexdigest()
pk = {p["SPDXID"]: p for p in doc["packages"]}
assert doc["documentDescribes"] == ["SPDXRef-Image"]
assert pk["SPDXRef-Image"]["checksums"] == [{"algorithm": "SHA256", "checksumValue": img}]
rel = {(r["spdxElementId"], r["relationshipType"], r["relatedSpdxElement"]) for r in doc["relationships"]}
assert ("SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Image") in rel
arts = {p["name"]: p for p in doc["packages"] if p["SPDXID"] != "SPDXRef-Image"}
assert sorted(arts) == sorted(a["name"] for a in man["artifacts"]), sorted(arts)
for a in man["artifacts"]:
    p = arts[a["name"]]
    assert p["checksums"] == [{"algorithm": "SHA256", "checksumValue": a["sha256"]}], a["name"]
    assert ("SPDXRef-Image", "CONTAINS", p["SPDXID"]) in rel, a["name"]
# versions: a .deb's control Version, the tuple's version for the rest
assert arts["fabric-manager"]["versionInfo"] == "580.95.05-1", arts["fabric-manager"].get("versionInfo")
assert arts["nccl"]["versionInfo"] == "2.27.7", arts["nccl"].get("versionInfo")
assert arts["nvidia-driver"]["versionInfo"] == "580.95.05", arts["nvidia-driver"].get("versionInfo")
assert "versionInfo" not in arts["gsp-ga10x"]
files = {f["fileName"]: f for f in doc["files"]}
want = {"./" + f["path"].lstrip("/"): f for f in man["files"] if f["type"] == "file"}
assert sorted(files) == sorted(want), set(files) ^ set(want)
owner = {r[2]: r[0] for r in rel if r[1] == "CONTAINS" and r[2].startswith("SPDXRef-File-")}
byname = {p["SPDXID"]: p["name"] for p in doc["packages"]}
for name, f in files.items():
    # SPDX's required SHA1 (a label: test-sbom-spdx.sh checks it against the bytes), then the sha256
    assert [c["algorithm"] for c in f["checksums"]] == ["SHA1", "SHA256"], name
    assert f["checksums"][1] == {"algorithm": "SHA256", "checksumValue": want[name]["sha256"]}, name
    assert f["SPDXID"] in owner, name
nv = [n for n, f in files.items() if byname[owner[f["SPDXID"]]] == "nvidia-driver"]
assert any(n.endswith("/nvidia.ko") for n in nv), nv
print("sbom ok: %d packages, %d files, %d relationships" % (len(doc["packages"]), len(files), len(rel)))
PY

note "the schema check can fail: a document without its required name is refused"
python3 - "$SCHEMA" "$T/a/demo-h100.spdx.json" <<'PY' && fail "schema accepted a broken SBOM"
import json, sys, jsonschema
doc = json.load(open(sys.argv[2])); del doc["name"]
jsonschema.validate(doc, json.load(open(sys.argv[1])))
PY

note "the SBOM is the signed statement's second subject (the manifest file its third)"
"$INGOT" keys generate -o "$T/k" >/dev/null
"$INGOT" keys keyring add "$T/ring.json" "$T/k.pub" --name release >/dev/null
(cd "$T" && "$INGOT" build r/demo.yaml -o s --store store-a --key k.key --no-lint -q)
sbom_sha=$(sha256 "$T/s/demo-h100.spdx.json")
assert_eq "$sbom_sha" "$(jq -r .sbom.sha256 "$T/s/demo-h100.manifest.json")" "manifest sbom.sha256"
assert_eq "demo-h100.spdx.json" "$(jq -r .sbom.file "$T/s/demo-h100.manifest.json")" "manifest sbom.file"
jq -r .payload "$T/s/demo-h100.manifest.dsse.json" | base64 -d >"$T/statement.json"
assert_eq 3 "$(jq '.subject | length' "$T/statement.json")" "statement subjects (image, SBOM, manifest)"
assert_eq "demo-h100.spdx.json $sbom_sha" "$(jq -r '.subject[1] | .name + " " + .digest.sha256' "$T/statement.json")" \
	"statement subject[1]"
assert_eq "demo-h100.manifest.json $(sha256 "$T/s/demo-h100.manifest.json")" \
	"$(jq -r '.subject[2] | .name + " " + .digest.sha256' "$T/statement.json")" "statement subject[2]"
expect_exit 0 "SBOM sha256 matches" "$INGOT" verify-manifest "$T/s/demo-h100.manifest.dsse.json" --keyring "$T/ring.json"

note "verify-manifest checks the SBOM file itself: one byte changed is refused, none beside is not a pass"
mkdir "$T/v"
cp "$T/s/demo-h100.manifest.dsse.json" "$T/s/demo-h100.manifest.json" "$T/s/demo-h100.spdx.json" "$T/v/"
# the same length, one byte other: a space in the JSON text becomes a tab
python3 - "$T/v/demo-h100.spdx.json" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[b.index(b" ")] = 0x09
open(sys.argv[1], "wb").write(b)
PY
bad_sha=$(sha256 "$T/v/demo-h100.spdx.json")
expect_exit 6 "$T/v/demo-h100.spdx.json: sha256: expected $sbom_sha" \
	"$INGOT" verify-manifest "$T/v/demo-h100.manifest.dsse.json" --keyring "$T/ring.json"
assert_contains "$OUT" "got $bad_sha" "the actual sha256 named"
expect_exit 6 "got $bad_sha" "$INGOT" verify-manifest "$T/s/demo-h100.manifest.dsse.json" --keyring "$T/ring.json" \
	--sbom "$T/v/demo-h100.spdx.json"
expect_exit 0 "SBOM sha256 matches" "$INGOT" verify-manifest "$T/v/demo-h100.manifest.dsse.json" --keyring "$T/ring.json" \
	--sbom "$T/s/demo-h100.spdx.json"
rm "$T/v/demo-h100.spdx.json"
expect_exit 0 "SBOM not checked (no $T/v/demo-h100.spdx.json)" \
	"$INGOT" verify-manifest "$T/v/demo-h100.manifest.dsse.json" --keyring "$T/ring.json"
case $OUT in *"SBOM sha256 matches"*) fail "an absent SBOM reported as a match: $OUT" ;; esac
expect_exit 1 "$T/v/demo-h100.spdx.json" \
	"$INGOT" verify-manifest "$T/s/demo-h100.manifest.dsse.json" --keyring "$T/ring.json" --sbom "$T/v/demo-h100.spdx.json"
# A statement whose SBOM subject does not match the manifest is refused,
# even when signed by a trusted key: sign the tampered statement afresh.
python3 - "$T/statement.json" "$T/s/demo-h100.manifest.json" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
st["subject"][1]["digest"]["sha256"] = "0" * 64
json.dump(st, open(sys.argv[1] + ".bad", "w"))
m = json.load(open(sys.argv[2])); del m["sbom"]
json.dump(m, open(sys.argv[2] + ".nosbom", "w"))
PY
"$INGOT" sign "$T/s/demo-h100.manifest.json.nosbom" --key "$T/k.key" -o "$T/nosbom.dsse.json" >/dev/null
assert_eq "demo-h100.sqfs demo-h100.manifest.json.nosbom" \
	"$(jq -r .payload "$T/nosbom.dsse.json" | base64 -d | jq -r '[.subject[].name] | join(" ")')" \
	"subjects without sbom: the image and the manifest file"
python3 - "$T/statement.json.bad" "$T/k.key" "$T/bad.dsse.json" <<'PY'
import base64, json, subprocess, sys
payload = open(sys.argv[1], "rb").read()
t = b"application/vnd.in-toto+json"
pae = b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)
open(sys.argv[3] + ".pae", "wb").write(pae)   # Ed25519 wants a file, not a pipe
sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-rawin", "-inkey", sys.argv[2], "-in", sys.argv[3] + ".pae"],
                     capture_output=True, check=True).stdout
json.dump({"payloadType": t.decode(), "payload": base64.b64encode(payload).decode(),
           "signatures": [{"keyid": "", "sig": base64.b64encode(sig).decode()}]}, open(sys.argv[3], "w"))
PY
expect_exit 2 "statement.subject[1].digest.sha256" \
	"$INGOT" verify-manifest "$T/bad.dsse.json" --keyring "$T/ring.json"

note "a failed build leaves no SBOM"
sed 's/^epoch: .*/epoch: -1/' "$T/r/demo.yaml" > "$T/r/bad.yaml"
(cd "$T" && "$INGOT" build r/bad.yaml -o c --store store-a --no-lint -q 2>/dev/null) && fail "bad recipe built"
assert_no_file "$T/c/demo-h100.spdx.json"
echo "ok"
