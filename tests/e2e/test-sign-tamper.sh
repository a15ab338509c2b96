#!/bin/bash
# ingot sign + verify-manifest on a handwritten manifest describing a real
# image file and a real dm-verity tree made by veritysetup(8): the valid
# envelope verifies, and each tampering is refused with its own exit code
# (2 malformed, 3 signatures, 4 expired, 5 rollback, 6 image/verity) and
# a message naming what failed.
. "$(dirname "$0")/lib.sh"
command -v veritysetup >/dev/null || skip "veritysetup not installed"

# manifest OUT IMAGE SERIAL EXPIRES ROOT_HASH SALT
manifest() {
	python3 - "$@" <<'PY'
import hashlib, json, os, sys
out, img, serial, expires, root, salt = sys.argv[1:7]
data = open(img, "rb").read()
h = lambda s: hashlib.sha256(s.encode()).hexdigest()
m = {
    "schema": "ingot.manifest/v1", "ingot_version": "0.1.0",
    "recipe": {"name": "h100", "version": "1", "file": "h100.yaml", "sha256": h("recipe")},
    "epoch": 1767225600, "serial": int(serial),
    "expires": None if expires == "null" else expires, "tuple": None,
    "artifacts": [{"name": "base", "kind": "tar", "source": "base.tar", "sha256": h("b"), "size": 10}],
    "files": [{"path": "/etc", "type": "dir", "mode": "0755", "uid": 0, "gid": 0},
              {"path": "/etc/hostname", "type": "file", "mode": "0644", "uid": 0, "gid": 0,
               "size": 5, "sha256": h("node\n")}],
    "image": {"file": os.path.basename(img), "sha256": hashlib.sha256(data).hexdigest(),
              "size": len(data), "compression": "zstd", "level": 0, "block_size": 131072},
    "verity": {"file": "h100.verity", "format": 1, "hash_algorithm": "sha256",
               "data_block_size": 4096, "hash_block_size": 4096, "data_blocks": len(data) // 4096,
               "hash_offset": 4096, "salt": salt, "root_hash": root,
               "uuid": "00000000-0000-0000-0000-000000000000"},
    "measurement": {"pcr": 15, "event_type": 13, "event_data": "ingot:v1", "content_digest": h("c"),
                    "digests": {}, "predicted": {}},
}
json.dump(m, open(out, "w"), indent=2, sort_keys=True)
PY
}

cd "$T" || exit 1
head -c $((64 * 4096)) /dev/urandom > h100.sqfs
SALT=$(printf 'ingot-test-salt' | sha256sum | cut -d' ' -f1)
ROOT=$(veritysetup format h100.sqfs h100.verity --salt="$SALT" --uuid=00000000-0000-0000-0000-000000000000 \
	| sed -n 's/^Root hash:[[:space:]]*//p')
[ ${#ROOT} -eq 64 ] || fail "veritysetup gave no root hash"
veritysetup verify h100.sqfs h100.verity "$ROOT" || fail "veritysetup does not accept its own tree"

"$INGOT" keys generate -o a >/dev/null
"$INGOT" keys generate --type p256 -o b >/dev/null
"$INGOT" keys generate -o evil >/dev/null
"$INGOT" keys keyring add ring1.json a.pub --name a >/dev/null
"$INGOT" keys keyring add ring1.json b.pub --name b >/dev/null
cp ring1.json ring2.json
"$INGOT" keys keyring add ring2.json evil.pub --name spare --threshold 2 >/dev/null

manifest h100.manifest.json h100.sqfs 7 2027-06-30T00:00:00Z "$ROOT" "$SALT"
"$INGOT" sign h100.manifest.json --key a.key >/dev/null
assert_file h100.manifest.dsse.json
ENV=h100.manifest.dsse.json
NOW=--now=2027-01-01T00:00:00Z

note "valid"
expect_exit 0 "OK: h100 serial 7, 1 of 1 required signatures (a)" \
	"$INGOT" verify-manifest $ENV --keyring ring1.json $NOW --image h100.sqfs --verity h100.verity
assert_contains "$OUT" "verity root matches"

# tamper NAME PYTHON-EXPR-ON-e  -> writes NAME.json from the envelope
tamper() {
	python3 - "$ENV" "$1.json" "$2" <<'PY'
import base64, json, sys
e = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(e, open(sys.argv[2], "w"))
PY
}

note "signatures (3)"
tamper payload 'p = bytearray(base64.b64decode(e["payload"])); i = p.index(b"\"serial\":7"); p[i+9] = ord("9"); e["payload"] = base64.b64encode(bytes(p)).decode()'
expect_exit 3 "signatures: 0 valid from distinct trusted keys, threshold 1" \
	"$INGOT" verify-manifest payload.json --keyring ring1.json $NOW
tamper ptype 'e["payloadType"] = "application/json"'
expect_exit 3 "signatures[0]: invalid signature by a" \
	"$INGOT" verify-manifest ptype.json --keyring ring1.json $NOW
"$INGOT" sign h100.manifest.json --key evil.key -o evil.json >/dev/null
expect_exit 3 "is not in the keyring" "$INGOT" verify-manifest evil.json --keyring ring1.json $NOW
expect_exit 3 "1 valid from distinct trusted keys, threshold 2" \
	"$INGOT" verify-manifest $ENV --keyring ring2.json $NOW
tamper dup 'e["signatures"].append(dict(e["signatures"][0]))'
expect_exit 3 "duplicate signature by a, counted once" \
	"$INGOT" verify-manifest dup.json --keyring ring2.json $NOW
tamper nosig 'e["signatures"] = []'
expect_exit 3 "no signatures" "$INGOT" verify-manifest nosig.json --keyring ring1.json $NOW

note "a second signature reaches threshold 2"
cp $ENV two.json
expect_exit 0 "signed by" "$INGOT" sign two.json --key b.key
expect_exit 1 "already signed by key" "$INGOT" sign two.json --key b.key
expect_exit 0 "2 of 2 required signatures (a, b)" \
	"$INGOT" verify-manifest two.json --keyring ring2.json $NOW

note "expiry (4)"
expect_exit 4 "manifest expired at 2027-06-30T00:00:00Z (now 2027-06-30T00:00:00Z)" \
	"$INGOT" verify-manifest $ENV --keyring ring1.json --now 2027-06-30T00:00:00Z
expect_exit 4 "expired" "$INGOT" verify-manifest $ENV --keyring ring1.json --now 1900000000
expect_exit 0 "" "$INGOT" verify-manifest $ENV --keyring ring1.json --now 2027-06-29T23:59:59Z

note "rollback (5)"
manifest m8.json h100.sqfs 8 null "$ROOT" "$SALT"
"$INGOT" sign m8.json --key a.key -o m8.dsse.json >/dev/null
expect_exit 0 "serial 7" "$INGOT" verify-manifest $ENV --keyring ring1.json $NOW --state state.json
expect_exit 0 "serial 8" "$INGOT" verify-manifest m8.dsse.json --keyring ring1.json $NOW --state state.json
assert_contains "$(cat state.json)" '"h100": 8'
expect_exit 5 "serial 7 is older than serial 8 last seen for \"h100\"" \
	"$INGOT" verify-manifest $ENV --keyring ring1.json $NOW --state state.json
expect_exit 0 "serial 8" "$INGOT" verify-manifest m8.dsse.json --keyring ring1.json $NOW --state state.json

note "image and verity (6)"
cp h100.sqfs other.sqfs
printf 'X' | dd of=other.sqfs bs=1 seek=5000 conv=notrunc status=none
expect_exit 6 "other.sqfs: sha256" \
	"$INGOT" verify-manifest $ENV --keyring ring1.json $NOW --image other.sqfs
head -c $((64 * 4096)) /dev/urandom > other2.sqfs
veritysetup format other2.sqfs other.verity --salt="$SALT" >/dev/null
expect_exit 6 "other.verity" \
	"$INGOT" verify-manifest $ENV --keyring ring1.json $NOW --image h100.sqfs --verity other.verity
expect_exit 64 "--verity needs --image" \
	"$INGOT" verify-manifest $ENV --keyring ring1.json --verity h100.verity

note "malformed (2)"
head -c 200 $ENV > trunc.json
expect_exit 2 "trunc.json:" "$INGOT" verify-manifest trunc.json --keyring ring1.json $NOW
echo 'this is not json' > text.json
expect_exit 2 "invalid JSON" "$INGOT" verify-manifest text.json --keyring ring1.json $NOW
tamper bigsig 'e["signatures"][0]["sig"] = "A" * 4096'
expect_exit 2 "signatures[0].sig: 4096 characters, limit 1024" \
	"$INGOT" verify-manifest bigsig.json --keyring ring1.json $NOW
tamper manysig 'e["signatures"] = e["signatures"] * 65'
expect_exit 2 "signatures: 65 entries, limit 64" \
	"$INGOT" verify-manifest manysig.json --keyring ring1.json $NOW
tamper bigtype 'e["payloadType"] = "x" * 1000'
expect_exit 2 "payloadType: expected at most 256" \
	"$INGOT" verify-manifest bigtype.json --keyring ring1.json $NOW
tamper b64 'e["payload"] = e["payload"][:-4] + "@@@="'
expect_exit 2 "payload: expected strict standard base64" \
	"$INGOT" verify-manifest b64.json --keyring ring1.json $NOW
truncate -s 100M huge.json
expect_exit 2 "file too large" "$INGOT" verify-manifest huge.json --keyring ring1.json $NOW
expect_exit 1 "cannot open" "$INGOT" verify-manifest missing.json --keyring ring1.json $NOW
echo '{"keys":[],"threshold":1}' > badring.json
expect_exit 2 "threshold: expected 1..0" "$INGOT" verify-manifest $ENV --keyring badring.json $NOW

note "sign refuses what is not a manifest"
expect_exit 2 "invalid JSON" "$INGOT" sign text.json --key a.key
python3 -c 'import json; m = json.load(open("h100.manifest.json")); del m["image"]; json.dump(m, open("noimg.json", "w"))'
expect_exit 2 "image: missing" "$INGOT" sign noimg.json --key a.key
assert_no_file noimg.dsse.json

note "usage"
expect_exit 64 "--keyring" "$INGOT" verify-manifest $ENV
expect_exit 64 "--now" "$INGOT" verify-manifest $ENV --keyring ring1.json --now yesterday
expect_exit 64 "--key" "$INGOT" sign h100.manifest.json
expect_exit 0 "EXIT STATUS" "$INGOT" verify-manifest --help
expect_exit 0 "EXAMPLES" "$INGOT" sign --help
echo "all tampering refused"
