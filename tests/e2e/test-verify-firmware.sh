#!/bin/bash
# ingot verify against the pinned firmware baseline on fake sysroots
# (tests/e2e/mkroot.sh fw-estate): each source read from its file (ipmitool
# only for the BMC), each kind of drift refused with its reason, a node
# with one stale GPU VBIOS refused although both revisions are validated,
# pinned firmware that cannot be read "could not check", and pins held to
# the driver branch they were validated against (recipes/rules/firmware.yaml).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verify-lib.sh"
[ -n "$PY_JSONSCHEMA" ] || fail "python3-jsonschema not installed (scripts/deps.sh installs it)"

"$MKROOT" "$T/fw.root" h100 fw-estate
python3 - "$T/fw.tuple.json" <<PY
import json, sys
t = json.loads('''$tuple_h100''')
t["firmware"] = {
    "vbios": ["96.00.74.00.01", "96.00.99.00.01"],      # validated revisions
    "nic": ["MT_0000000838=28.39.1002", "MT_0000000970=32.41.1000"],
    "ethernet": ["mlx5_core[ib_ipoib]=28.39.1002", "ice=4.40"],
    "nvswitch": "96.10.6D.00.01",
    "bios": "PowerEdge XE9680=2.3.5",
    "bmc": "7.10.30.00",
    "driver-branch": "R580",
}
json.dump(t, open(sys.argv[1], "w"))
PY
$MKMANIFEST "$T/fw.root" --name h100-fw --tuple "$T/fw.tuple.json" -o "$T/fw.manifest.json"

# fw_case NAME WANT_EXIT REASON MUTATION...: a drifted copy, verified.
fw_case() {
	local name=$1 want=$2 reason=$3 rc=0
	shift 3
	note "$name"
	rm -rf "${T:?}/$name"
	cp -a "$T/fw.root" "$T/$name"
	[ $# -eq 0 ] || "$MKROOT" "$T/$name" --mutate "$@"
	"$INGOT" verify --manifest "$T/fw.manifest.json" --allow-unsigned --root "$T/$name" \
		--tcti none --node-id "$name" --now 2026-11-01T00:00:00Z --report "$T/$name.json" \
		>"$T/$name.txt" 2>&1 || rc=$?
	[ "$rc" = "$want" ] || fail "$name: expected exit $want, got $rc: $(cat "$T/$name.txt")"
	assert_contains "$(head -n 1 "$T/$name.txt")" "$reason" "$name reason"
	validate "$T/$name.json"
}
fact() { jget "$T/$1.json" "[f['$3'] for f in r['probe']['facts'] if f['key']=='$2'][0]"; }

fw_case healthy 0 "admit (exit 0): all checks passed"
assert_eq pass "$(check_status "$T/healthy.json" tuple)" "tuple"
assert_eq pass "$(check_status "$T/healthy.json" rules)" "rules"
assert_eq "MT_0000000838=28.39.1002" "$(fact healthy firmware.nic value)" "NIC fact"
assert_eq "/sys/class/infiniband/*/{board_id,fw_ver}" "$(fact healthy firmware.nic source)" "NIC source"
assert_eq "ice=4.40,mlx5_core[ib_ipoib]=28.39.1002" "$(fact healthy firmware.ethernet value)" "ethtool fact"
assert_eq "2.3.5" "$(fact healthy firmware.bios value)" "BIOS"
assert_eq "08/14/2025" "$(fact healthy firmware.bios_date value)" "BIOS date"
assert_eq "PowerEdge XE9680" "$(fact healthy system.product_name value)" "product"
assert_eq "0NQ5DR" "$(fact healthy system.board_name value)" "board"
assert_eq "96.10.6D.00.01" "$(fact healthy firmware.nvswitch value)" "NVSwitch"
assert_eq "7.10.30.00" "$(fact healthy firmware.bmc value)" "BMC"
assert_eq "/usr/sbin/ipmitool mc info (Firmware Revision)" "$(fact healthy firmware.bmc source)" "BMC source"
ev=$(jget "$T/healthy.json" "json.dumps([c for c in r['checks'] if c['name']=='tuple'][0]['evidence'])")
for label in "VBIOS 96.00.99.00.01" "NIC firmware MT_0000000838=28.39.1002" "Ethernet firmware ice=4.40" \
	"NVSwitch firmware 96.10.6D.00.01" "BMC firmware 7.10.30.00" "BIOS 2.3.5"; do
	assert_contains "$ev" "ok: $label" "evidence: $label"
done

# Each source drifting from the baseline (13, the first mismatch is the reason).
fw_case vbios-mixed 13 "VBIOS differs between devices: 96.00.99.00.01,96.00.74.00.01 (one stale device is drift" vbios-mixed
fw_case nic-one-stale 13 "NIC firmware differs between devices of model MT_0000000838" nic-fw=28.40.1000
# All four at one revision that was not validated: the pin refuses.
rm -rf "$T/nic-all"; cp -a "$T/fw.root" "$T/nic-all"
for i in 0 1 2 3; do echo 28.38.1000 >"$T/nic-all/sys/class/infiniband/mlx5_$i/fw_ver"; done
rc=0; "$INGOT" verify --manifest "$T/fw.manifest.json" --allow-unsigned --root "$T/nic-all" --tcti none \
	--now 2026-11-01T00:00:00Z >"$T/nic-all.txt" 2>&1 || rc=$?
assert_eq 13 "$rc" "all NICs unvalidated"
assert_contains "$(head -n 1 "$T/nic-all.txt")" "NIC firmware: node MT_0000000838 28.38.1000, validated"
fw_case eth-drift 13 "Ethernet firmware: node ice 4.20, validated mlx5_core[ib_ipoib]=28.39.1002, ice=4.40" eth-fw=4.20
fw_case bios-drift 13 "BIOS: node 2.1.7, validated PowerEdge XE9680=2.3.5" bios=2.1.7
fw_case bmc-drift 13 "BMC firmware: node 7.00.00.00, validated 7.10.30.00" bmc=7.00.00.00
fw_case nvswitch-stale 13 "NVSwitch firmware differs between devices: " nvswitch-fw=96.10.55.00.01
# Pinned firmware the node cannot show: not made, could not check (20).
fw_case bmc-dead 20 "could-not-check (exit 20): tuple: not made: BMC firmware pinned to 7.10.30.00 (unreadable: /usr/sbin/ipmitool mc info failed or timed out)" bmc-dead
assert_eq True "$(jget "$T/bmc-dead.json" "[f for f in r['probe']['facts'] if f['key']=='firmware.bmc'][0]['unreadable']")" "unreadable fact"
rm -rf "$T/no-ib"; cp -a "$T/fw.root" "$T/no-ib"; rm -rf "$T/no-ib/sys/class/infiniband"
rc=0; "$INGOT" verify --manifest "$T/fw.manifest.json" --allow-unsigned --root "$T/no-ib" --tcti none \
	--now 2026-11-01T00:00:00Z >"$T/no-ib.txt" 2>&1 || rc=$?
assert_eq 20 "$rc" "no NIC visible"
assert_contains "$(head -n 1 "$T/no-ib.txt")" "not made: NIC firmware pinned to MT_0000000838=28.39.1002, MT_0000000970=32.41.1000 (not found: /sys/class/infiniband/*/{board_id,fw_ver})"

# The driver moved to another branch: the pins were validated against R580.
fw_case branch-moved 13 "driver: manifest 580.95.05, node 595.91.07" driver=595.91.07
assert_eq fail "$(check_status "$T/branch-moved.json" rules)" "rules of branch-moved"
assert_contains "$(jget "$T/branch-moved.json" "[c for c in r['checks'] if c['name']=='rules'][0]['summary']")" \
	"firmware-validated-branch: firmware pins were validated against driver branch R580, the tuple runs R595"
echo "all firmware cases passed"
