# Helpers for the attest end-to-end tests.  Source lib.sh first.

# make_manifest FILE NAME SEED: a minimal image manifest (the members the
# measurement depends on) with its "measurement" computed by ingot.
make_manifest() {
	local file=$1 name=$2 seed=$3 img root
	img=$(printf 'image %s' "$seed" | sha256sum | cut -c1-64)
	root=$(printf 'verity %s' "$seed" | sha256sum | cut -c1-64)
	cat >"$file.tmp" <<JSON
{"schema": "ingot.manifest/v1", "ingot_version": "0.1.0",
 "recipe": {"name": "$name", "version": "1.0", "file": "$name.yaml", "sha256": "$img"},
 "epoch": 1700000000, "serial": 1, "expires": null, "tuple": null, "artifacts": [], "files": [],
 "image": {"file": "$name.sqfs", "sha256": "$img", "size": 4096, "compression": "zstd",
           "level": 19, "block_size": 131072},
 "verity": {"file": "$name.verity", "format": 1, "hash_algorithm": "sha256",
            "data_block_size": 4096, "hash_block_size": 4096, "data_blocks": 1,
            "hash_offset": 0, "salt": "00", "root_hash": "$root", "uuid": "x"}}
JSON
	"$INGOT" attest predict --manifest "$file.tmp" >"$file.meas"
	jq -S --slurpfile m "$file.meas" '. + {measurement: $m[0]}' "$file.tmp" >"$file"
	rm -f "$file.tmp" "$file.meas"
}

# json_get FILE JQ-FILTER
json_get() { jq -r "$2" "$1"; }

# flip_signature_byte QUOTE: QUOTE.bad, the quote document with the last
# byte of its signature changed.
flip_signature_byte() {
	python3 - "$1" <<'PY'
import base64, json, sys
q = json.load(open(sys.argv[1]))
s = bytearray(base64.b64decode(q["signature"])); s[-1] ^= 1
q["signature"] = base64.b64encode(bytes(s)).decode()
json.dump(q, open(sys.argv[1] + ".bad", "w"))
PY
}

# tpm_pcr BANK N: the PCR's value from tpm2_pcrread, lower-case hex.
tpm_pcr() {
	tpm2_pcrread "$1:$2" | sed -n "s/^ *$2 *: 0x//p" | tr 'A-F' 'a-f'
}

# tpm2tools_signing_key PREFIX [ALG [NAMEALG]]: a restricted signing key
# made by tpm2-tools alone (PREFIX.ctx loaded, PREFIX.pem its public key,
# PREFIX.tpm2b its TPM2B_PUBLIC); ALG as tpm2_create -G takes it (default
# ecc256:ecdsa-sha256:null), NAMEALG its -g (default sha256).  swtpm has
# no resource manager and tpm2-tools does not flush: flush after each
# step.
tpm2tools_signing_key() {
	tpm2_createprimary -C o -c "$1.prim.ctx" -Q
	tpm2_flushcontext -t
	tpm2_create -C "$1.prim.ctx" -G "${2:-ecc256:ecdsa-sha256:null}" -g "${3:-sha256}" \
		-a "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign" \
		-u "$1.pub" -r "$1.priv" -Q
	tpm2_flushcontext -t
	tpm2_load -C "$1.prim.ctx" -u "$1.pub" -r "$1.priv" -c "$1.ctx" -Q
	tpm2_flushcontext -t
	tpm2_readpublic -c "$1.ctx" -f pem -o "$1.pem" -Q
	tpm2_flushcontext -t
	tpm2_readpublic -c "$1.ctx" -o "$1.tpm2b" -Q
	tpm2_flushcontext -t
}
