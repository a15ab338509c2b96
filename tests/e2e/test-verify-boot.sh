#!/bin/bash
# Boot integration: the systemd unit (checked by systemd-analyze), the
# Slurm health-check wrapper's drain command, and the node-feature-discovery
# feature file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verify-lib.sh"

note "install.sh lays out the unit, wrapper and schema"
D=$T/dest
"$SRC/verify/boot/install.sh" "$D" /usr/local >/dev/null
unit=$D/lib/systemd/system/ingot-verify.service
assert_file "$unit"
assert_file "$D/usr/local/libexec/ingot/ingot-slurm-health"
assert_file "$D/usr/local/share/ingot/report.schema.json"
assert_file "$D/etc/default/ingot-verify"
assert_eq 644 "$(stat -c %a "$unit")" "unit mode"
assert_eq 755 "$(stat -c %a "$D/usr/local/libexec/ingot/ingot-slurm-health")" "wrapper mode"
grep -qx 'Type=oneshot' "$unit" || fail "unit: Type=oneshot missing"
grep -qx 'Before=slurmd.service kubelet.service' "$unit" || fail "unit: Before= missing"
grep -qx 'ConditionPathExists=/etc/ingot/manifest.dsse.json' "$unit" || fail "unit: ConditionPathExists= missing"
grep -q '^ExecStart=/usr/local/bin/ingot verify' "$unit" || fail "unit: ExecStart not rewritten to PREFIX: $(grep ExecStart "$unit")"
# A second install keeps a locally edited /etc/default/ingot-verify.
echo 'INGOT_VERIFY_ARGS="--require-tpm"' >"$D/etc/default/ingot-verify"
"$SRC/verify/boot/install.sh" "$D" /usr/local >/dev/null
assert_eq 'INGOT_VERIFY_ARGS="--require-tpm"' "$(cat "$D/etc/default/ingot-verify")" "default file kept"
expect_exit 64 "usage" "$SRC/verify/boot/install.sh" "$D"

if command -v systemd-analyze >/dev/null; then
	note "systemd-analyze verify accepts the unit"
	install -D -m 0755 "$INGOT" "$D/usr/local/bin/ingot"
	out=$(systemd-analyze verify --man=no --root="$D" /lib/systemd/system/ingot-verify.service 2>&1) ||
		fail "systemd-analyze verify failed: $out"
	[ -z "$out" ] || fail "systemd-analyze verify warned: $out"
fi

make_pool h100 h100-r580-ltsb
node h100 fm fm=580.82.07
health=$SRC/verify/boot/ingot-slurm-health
args=(--manifest "$T/h100-r580-ltsb.manifest.json" --allow-unsigned --tcti none)

note "Slurm wrapper: an admitted node is left alone"
rc=0; out=$("$health" --dry-run --node gpu001 --ingot "$INGOT" -- "${args[@]}" --root "$T/h100.root") || rc=$?
assert_eq 0 "$rc" "healthy exit"
assert_eq "" "$out" "healthy output"

note "Slurm wrapper: a refused node is drained with the verifier's reason"
rc=0; out=$("$health" --dry-run --node gpu001 --ingot "$INGOT" -- "${args[@]}" --root "$T/fm") || rc=$?
assert_eq 13 "$rc" "drain exit"
assert_eq 'scontrol update nodename=gpu001 state=drain reason="ingot: fabric manager 580.82.07 != driver 580.95.05"' \
	"$out" "drain command"
expect_exit 64 "unknown option" "$health" --bogus

note "--nfd writes the node-feature-discovery labels"
# An unwritable feature file is an error (1), not a silent success.
rc=0; "$INGOT" verify "${args[@]}" --root "$T/h100.root" --nfd "$T/nfd/ingot" >/dev/null 2>&1 || rc=$?
assert_eq 1 "$rc" "exit when the NFD directory is missing"
mkdir -p "$T/nfd"
"$INGOT" verify "${args[@]}" --root "$T/h100.root" --nfd "$T/nfd/ingot" --json >"$T/ok.json"
digest=$(jget "$T/ok.json" "r['tuple_digest']")
assert_eq "ingot.dev/pool=h100-r580-ltsb
ingot.dev/tuple=${digest:0:32}
ingot.dev/verdict=admit
ingot.dev/exit-status=0" "$(grep -v '^#' "$T/nfd/ingot")" "NFD labels"
rc=0; "$INGOT" verify "${args[@]}" --root "$T/fm" --nfd "$T/nfd/ingot" >/dev/null || rc=$?
assert_eq 13 "$rc" "refused exit"
grep -qx 'ingot.dev/verdict=refuse' "$T/nfd/ingot" || fail "NFD verdict not refuse: $(cat "$T/nfd/ingot")"
grep -qx 'ingot.dev/exit-status=13' "$T/nfd/ingot" || fail "NFD exit-status not 13"
echo "boot integration ok"
