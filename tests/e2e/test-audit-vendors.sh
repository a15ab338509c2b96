#!/bin/bash
# ingot audit with NVIDIA and AMD pools side by side in one inventory: each
# node judged against its own pool's manifest; an AMD node the inventory
# puts in the NVIDIA pool is drifted, by name; a pool whose valid manifests
# declare two GPU vendors is a finding on each of its nodes unless
# --allow-mixed-vendors names it.
. "$(dirname "$0")/lib.sh"

MKQUOTE=$BUILD_DIR/tools/mkquote
[ -x "$MKQUOTE" ] || fail "missing $MKQUOTE (make all builds it)"
G=$T/pool
python3 "$SRC/scripts/gen-reports.py" --ingot "$INGOT" --mkquote "$MKQUOTE" --out "$G" >/dev/null ||
	fail "gen-reports.py failed"
mkdir "$T/reports"
for n in h100-001 h100-002 mi300-001 mi300-002 mi300-003; do cp "$G/reports/$n.json" "$T/reports/"; done
audit() {
	"$INGOT" audit --keyring "$G/keyring.json" --manifests "$T/manifests" --reports "$T/reports" \
		--nonces "$G/nonces.txt" --aks "$G/aks.txt" --nodes "$T/nodes.txt" --now 1796083200 "$@"
}
# verdict NODE: the node's verdict in $OUT (JSON).
verdict() { jq -r --arg n "$1" '.nodes[] | select(.node == $n) | .verdict' <<<"$OUT"; }
mkdir "$T/manifests"
cp "$G/manifests/h100.manifest.dsse.json" "$G/manifests/mi300.manifest.dsse.json" "$T/manifests/"

note "each pool's nodes judged against their own pool's manifest: all healthy"
printf 'h100-001 h100\nh100-002 h100\nmi300-001 mi300\nmi300-002 mi300\nmi300-003 mi300\n' >"$T/nodes.txt"
expect_exit 0 "5 nodes: 5 healthy" audit
expect_exit 0 "" audit --json -
assert_eq "h100 h100 mi300 mi300 mi300" "$(jq -r '[.nodes[] | .pool] | sort | join(" ")' <<<"$OUT")" "pools"

note "an AMD node the inventory puts in the NVIDIA pool: drifted, by name"
printf 'h100-001 h100\nh100-002 h100\nmi300-001 mi300\nmi300-002 mi300\nmi300-003 h100\n' >"$T/nodes.txt"
expect_exit 1 "boots pool mi300's image, expected pool h100" audit
expect_exit 1 "" audit --json -
assert_eq drifted "$(verdict mi300-003)" "mi300-003 in pool h100"
assert_eq "vendor nvidia amd" "$(jq -r '.nodes[] | select(.node == "mi300-003") | .drift[] |
	select(.field == "vendor") | "\(.field) \(.expected) \(.actual)"' <<<"$OUT")" "mi300-003's vendor drift"
for n in h100-001 h100-002 mi300-001 mi300-002; do assert_eq healthy "$(verdict $n)" "$n"; done

note "a pool whose manifests declare two vendors: each of its nodes is told, unless allowed"
printf 'h100-001 h100\nh100-002 h100\nmi300-001 mi300\nmi300-002 mi300\nmi300-003 mi300\n' >"$T/nodes.txt"
# An AMD image signed into the NVIDIA pool (an older serial: not its current).
python3 - "$SRC/scripts/gen-reports.py" "$T/h100-amd.manifest.json" <<'PY' || fail "the AMD manifest of pool h100"
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("gen", sys.argv[1])
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)
json.dump(gen.make_manifest("h100", 5, gen.AMD), open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
"$INGOT" sign "$T/h100-amd.manifest.json" --key "$G/keys/release.key" -o "$T/manifests/h100-amd.manifest.dsse.json" \
	>/dev/null || fail "sign"
expect_exit 1 "pool h100 mixes vendors: " audit
assert_contains "$OUT" "h100-amd.manifest.dsse.json declares amd"
assert_contains "$OUT" "h100.manifest.dsse.json declares nvidia"
expect_exit 1 "" audit --json -
for n in h100-001 h100-002; do assert_eq mixed-vendors "$(verdict $n)" "$n in a pool of two vendors"; done
for n in mi300-001 mi300-002 mi300-003; do assert_eq healthy "$(verdict $n)" "$n"; done
expect_exit 0 "5 nodes: 5 healthy" audit --allow-mixed-vendors h100
expect_exit 1 "pool h100 mixes vendors" audit --allow-mixed-vendors mi300
