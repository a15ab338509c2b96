#!/bin/bash
# The whole chain on the real demo build: `ingot build recipes/demo.yaml`
# signs the manifest; the image, unpacked by unsquashfs, is the node's
# root (plus the kernel's sysfs/procfs view of the loaded driver);
# `ingot attest measure` extends swtpm's PCR 15; `ingot verify` admits.
# The driver loaded under the image (13), a changed image file (11), an
# edited signed manifest (10) and an extra PCR 15 extend (12) are refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swtpm.sh"
. "$(dirname "$0")/verify-lib.sh"
command -v unsquashfs >/dev/null || skip "unsquashfs not installed"
[ -f "$SRC/recipes/demo.yaml" ] || skip "recipes/demo.yaml not present"
[ "$(id -u)" = 0 ] || skip "unsquashfs keeps the image's root ownership only when run as root"

"$INGOT" keys generate -o "$T/rel" >/dev/null
"$INGOT" keys keyring add "$T/ring.json" "$T/rel.pub" --name release >/dev/null
RECIPE=$SRC/recipes/demo.yaml
build() { "$INGOT" build "$RECIPE" -o "$T/out" --store "$T/store" --key "$T/rel.key" --quiet >"$T/build.log" 2>&1; }
if ! build; then
	mkdir -p "$T/recipes"
	cp "$SRC/recipes/demo.yaml" "$T/recipes/"
	"$SRC/scripts/gen-artifacts.sh" "$BUILD_DIR" "$T/recipes/artifacts" >/dev/null 2>&1 ||
		skip "demo artifacts cannot be generated"
	RECIPE=$T/recipes/demo.yaml
	rm -rf "$T/out" "$T/store"
	build || fail "ingot build failed: $(cat "$T/build.log")"
fi
N=demo-h100
O=$T/out
M=$O/$N.manifest.json
assert_file "$O/$N.manifest.dsse.json"

note "the node: the image unpacked, and the kernel's view of a loaded open driver"
R=$T/root
unsquashfs -q -n -d "$R" "$O/$N.sqfs" >/dev/null
kver=$(basename "$(ls -d "$R"/lib/modules/*)")
loaded() { # VERSION
	mkdir -p "$R/sys/module/nvidia" "$R/proc/driver/nvidia/gpus/0000:18:00.0" "$R/proc/sys/kernel" \
		"$R/proc/driver/nvidia-nvswitch/devices/0000:05:00.0"
	echo "$1" >"$R/sys/module/nvidia/version"
	echo "OE" >"$R/sys/module/nvidia/taint"
	echo "$kver" >"$R/proc/sys/kernel/osrelease"
	echo "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  $1  Release Build  (dvs-builder@U22)  Thu Sep 18 2025" \
		>"$R/proc/driver/nvidia/version"
	printf 'nvidia 11640832 2 - Live 0x0 (OE)\nnvidia_uvm 2076672 0 - Live 0x0 (OE)\n' >"$R/proc/modules"
	printf 'Model: \t\t NVIDIA H100 80GB HBM3\nVideo BIOS: \t 96.00.99.00.01\n' \
		>"$R/proc/driver/nvidia/gpus/0000:18:00.0/information"
}
loaded 580.95.05

swtpm_start
"$INGOT" attest ak create -o "$T/ak" >/dev/null
"$INGOT" attest measure --manifest "$M" --log "$T/log.bin" >/dev/null

verify() { # WANT_EXIT REASON [args...]
	local want=$1 reason=$2 rc=0
	shift 2
	"$INGOT" verify --manifest "$O/$N.manifest.dsse.json" --keyring "$T/ring.json" --root "$R" \
		--image "$O/$N.sqfs" --verity "$O/$N.verity" --eventlog "$T/log.bin" --ak "$T/ak" \
		--require-tpm --report "$T/r.json" "$@" >"$T/out.txt" 2>"$T/err.txt" || rc=$?
	[ "$rc" = "$want" ] || fail "expected exit $want, got $rc: $(cat "$T/out.txt" "$T/err.txt")"
	assert_contains "$(head -n 1 "$T/out.txt")" "$reason"
	validate "$T/r.json"
}

note "demo node: every check passes"
verify 0 "admit (exit 0)"
for c in signature image files tpm tuple rules; do
	assert_eq pass "$(check_status "$T/r.json" $c)" "$c check"
done
# What the probe read from the image itself: the tools and libraries.
assert_eq "/usr/bin/nv-fabricmanager --version" \
	"$(jget "$T/r.json" "[f['source'] for f in r['probe']['facts'] if f['key']=='fabric_manager.version'][0]")" "FM source"
assert_eq "580.95.05" \
	"$(jget "$T/r.json" "[f['value'] for f in r['probe']['facts'] if f['key']=='driver.ko_version'][0]")" "nvidia.ko version"
assert_eq "$N" "$(jget "$T/r.json" "r['pool']")" "pool"

note "driver upgraded under the image: refuse (13)"
loaded 580.105.08
verify 13 "driver: manifest 580.95.05, node 580.105.08"
loaded 580.95.05

note "a file of the image changed on the node: refuse (11)"
echo "# local edit" >>"$R/etc/modprobe.d/nvidia.conf"
verify 11 "1 changed, 0 missing, 0 extra"
note "the signed manifest edited to bless another driver: refuse (10)"
python3 - "$O/$N.manifest.dsse.json" "$T/forged.dsse.json" <<'PY'
import base64, json, sys
env = json.load(open(sys.argv[1]))
st = json.loads(base64.b64decode(env["payload"]))
st["predicate"]["tuple"]["driver"]["version"] = "580.105.08"
env["payload"] = base64.b64encode(json.dumps(st, sort_keys=True, separators=(",", ":")).encode()).decode()
json.dump(env, open(sys.argv[2], "w"))
PY
rc=0; "$INGOT" verify --manifest "$T/forged.dsse.json" --keyring "$T/ring.json" --root "$R" \
	--tcti none --no-files --brief >"$T/out.txt" 2>&1 || rc=$?
assert_eq 10 "$rc" "forged manifest exit: $(cat "$T/out.txt")"

note "PCR 15 extended again after the measurement: refuse (12)"
"$INGOT" attest measure --manifest "$M" --log "$T/log2.bin" >/dev/null
verify 12 "manifest predicts" --no-files
echo "demo verify ok"
