#!/bin/bash
# ingot verify on fake sysroots (tests/e2e/mkroot.sh): each kind of node
# drift gives its exact verdict, exit status and reason, and every JSON
# report validates against verify/report.schema.json.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verify-lib.sh"
[ -n "$PY_JSONSCHEMA" ] || fail "python3-jsonschema not installed (scripts/deps.sh installs it)"

make_pool h100 h100-r580-ltsb
make_pool b200 b200-open
make_pool mi355x mi355x-rocm

# run_case NAME WANT_EXIT WANT_VERDICT REASON MANIFEST ROOT [extra args]
# Checks the exit status and summary line now; the JSON reports are checked
# (schema, verdict, exit_status, reason) in one pass at the end.
run_case() {
	local name=$1 want=$2 verdict=$3 reason=$4 manifest=$5 root=$6 rc=0
	shift 6
	note "$name"
	# TCTI: the TPM the case names (default none); --tcti may be given once.
	"$INGOT" verify --manifest "$T/$manifest.manifest.json" --allow-unsigned --root "$root" \
		--tcti "${TCTI:-none}" --node-id "$name" --now 2026-11-01T00:00:00Z --report "$T/$name.json" \
		"$@" >"$T/$name.txt" 2>"$T/$name.err" || rc=$?
	[ "$rc" = "$want" ] || fail "$name: expected exit $want, got $rc: $(cat "$T/$name.txt" "$T/$name.err")"
	assert_contains "$(head -n 1 "$T/$name.txt")" "ingot verify: $verdict (exit $want): " "$name summary"
	assert_contains "$(head -n 1 "$T/$name.txt")" "$reason" "$name reason"
	printf '%s\t%s\t%s\t%s\n' "$name" "$want" "$verdict" "$reason" >>"$T/expect.tsv"
}

run_case healthy-h100 0 admit "all checks passed" h100-r580-ltsb "$T/h100.root"
assert_eq pass "$(check_status "$T/healthy-h100.json" files)" "files"
assert_eq pass "$(check_status "$T/healthy-h100.json" tuple)" "tuple"
assert_eq pass "$(check_status "$T/healthy-h100.json" rules)" "rules"
assert_eq skip "$(check_status "$T/healthy-h100.json" tpm)" "tpm"
assert_eq "h100-r580-ltsb" "$(jget "$T/healthy-h100.json" "r['pool']")" "pool"
assert_eq "$(python3 -c 'import json,sys,hashlib; t=json.load(open(sys.argv[1]))["tuple"]; print(hashlib.sha256(json.dumps(t,sort_keys=True,separators=(",",":")).encode()).hexdigest())' "$T/h100-r580-ltsb.manifest.json")" \
	"$(jget "$T/healthy-h100.json" "r['tuple_digest']")" "tuple digest"
assert_eq "580.95.05" "$(jget "$T/healthy-h100.json" "[f['value'] for f in r['probe']['facts'] if f['key']=='driver.version'][0]")" "probed driver"
assert_eq "/sys/module/nvidia/version" "$(jget "$T/healthy-h100.json" "[f['source'] for f in r['probe']['facts'] if f['key']=='driver.version'][0]")" "driver source"
# Files answer first; no vendor tool is run where one does (nvidia-smi is
# found, not run: the driver's procfs named the GPUs and their VBIOS).
fact() { jget "$1" "[f['$3'] for f in r['probe']['facts'] if f['key']=='$2'][0]"; }
assert_eq "/proc/driver/nvidia/gpus/*/information" "$(fact "$T/healthy-h100.json" gpu.model source)" "GPU source"
assert_eq "/proc/driver/nvidia/gpus/*/information" "$(fact "$T/healthy-h100.json" firmware.vbios source)" "VBIOS source"
assert_eq "8" "$(fact "$T/healthy-h100.json" gpu.count value)" "GPU count"
assert_eq "nvidia-smi" "$(fact "$T/healthy-h100.json" smi value)" "SMI tool"
assert_contains "$(fact "$T/healthy-h100.json" smi source)" "/usr/bin/nvidia-smi: present, not run" "SMI source"
assert_eq "/var/lib/dpkg/status (package nvidia-fabricmanager-580)" \
	"$(fact "$T/healthy-h100.json" fabric_manager.version source)" "FM source"
assert_eq "580.95.05" "$(fact "$T/healthy-h100.json" driver.userspace_version value)" "NVML version"

node h100 drv driver=580.105.08
run_case driver-upgraded 13 refuse "driver: manifest 580.95.05, node 580.105.08" h100-r580-ltsb "$T/drv"
assert_contains "$(cat "$T/driver-upgraded.txt")" "loaded driver 580.105.08 != image's nvidia.ko 580.95.05"
# The image's NVML is still 580.95.05: nvidia-smi would fail on this node.
assert_contains "$(cat "$T/driver-upgraded.txt")" "NVIDIA user-space libraries 580.95.05 != loaded driver 580.105.08"
assert_eq pass "$(check_status "$T/driver-upgraded.json" files)" "files of driver-upgraded"

node h100 fm fm=580.82.07
run_case fm-mismatch 13 refuse "fabric manager 580.82.07 != driver 580.95.05" h100-r580-ltsb "$T/fm"
assert_eq fail "$(check_status "$T/fm-mismatch.json" rules)" "rules of fm-mismatch"

node b200 prop proprietary
run_case b200-proprietary 13 refuse "driver flavor: manifest open, node proprietary" b200-open "$T/prop"
# The version-chain rules say why too: open modules are required on Blackwell.
assert_eq fail "$(check_status "$T/b200-proprietary.json" rules)" "rules of b200-proprietary"

node h100 nccl nccl=2.21.5
run_case nccl-swapped 11 refuse "1 changed, 1 missing, 1 extra" h100-r580-ltsb "$T/nccl"
assert_contains "$(cat "$T/nccl-swapped.txt")" "missing: /usr/lib/x86_64-linux-gnu/libnccl.so.2.27.7"
assert_contains "$(cat "$T/nccl-swapped.txt")" "extra: /usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5"
assert_contains "$(cat "$T/nccl-swapped.txt")" "NCCL: manifest 2.27.7, node 2.21.5"

node h100 fw firmware
run_case firmware-changed 11 refuse "1 changed, 0 missing, 0 extra" h100-r580-ltsb "$T/fw"
assert_contains "$(cat "$T/firmware-changed.txt")" "changed: /lib/firmware/nvidia/580.95.05/gsp_ga10x.bin: sha256: manifest"
assert_eq pass "$(check_status "$T/firmware-changed.json" tuple)" "tuple of firmware-changed"

node h100 extra extra
run_case extra-lib 11 refuse "0 changed, 0 missing, 1 extra" h100-r580-ltsb "$T/extra"
assert_eq '["/usr/lib/x86_64-linux-gnu/libevil.so.1"]' \
	"$(jget "$T/extra-lib.json" "json.dumps([c for c in r['checks'] if c['name']=='files'][0]['details']['extra'])")" "extra list"
# --ignore leaves a path out of the files check.
run_case extra-ignored 0 admit "all checks passed" h100-r580-ltsb "$T/extra" \
	--ignore '/usr/lib/x86_64-linux-gnu/libevil.so.*'

run_case amd-no-nvidia-smi 0 admit "all checks passed" mi355x-rocm "$T/mi355x.root"
assert_eq "amd" "$(jget "$T/amd-no-nvidia-smi.json" "[f['value'] for f in r['probe']['facts'] if f['key']=='vendor'][0]")" "AMD vendor"
# on an AMD node the driver's version is amdgpu's (its /sys/module version)
assert_eq "6.16.6 /sys/module/amdgpu/version" "$(jget "$T/amd-no-nvidia-smi.json" "' '.join([(f['value'], f['source']) for f in r['probe']['facts'] if f['key']=='driver.version'][0])")" "amdgpu is the driver on AMD"
assert_eq "warn" "$(check_status "$T/amd-no-nvidia-smi.json" rules)" "ROCm 10.1.0 RCCL LL warning"
# --fail-on warn turns the rules warning into a refusal.
run_case amd-fail-on-warn 14 refuse "rocm-10.1.0-rccl-ll-mi350" mi355x-rocm "$T/mi355x.root" --fail-on warn

# An NVIDIA image on an AMD node: refused on the tuple.
run_case wrong-vendor 11 refuse "differs from the manifest" h100-r580-ltsb "$T/mi355x.root"
assert_contains "$(cat "$T/wrong-vendor.txt")" "vendor: manifest nvidia, node amd"

# No TPM: skipped by default, "could not check" when policy requires one.
run_case no-tpm-required 20 could-not-check "TPM required" h100-r580-ltsb "$T/h100.root" --require-tpm
TCTI="device:$T/no-such-tpm" run_case no-tpm-device 20 could-not-check "no TPM" h100-r580-ltsb "$T/h100.root" \
	--require-tpm
TCTI="device:$T/no-such-tpm" run_case no-tpm-skip 0 admit "all checks passed" h100-r580-ltsb "$T/h100.root"

# An unsigned manifest without --allow-unsigned is refused (signature, 10).
rc=0; "$INGOT" verify --manifest "$T/h100-r580-ltsb.manifest.json" --root "$T/h100.root" --tcti none \
	--brief >"$T/unsigned.txt" 2>&1 || rc=$?
assert_eq 10 "$rc" "unsigned manifest exit"
assert_contains "$(cat "$T/unsigned.txt")" "refuse (10): manifest is not signed"

# A manifest that is not JSON: could not check.
echo '{"schema":' >"$T/broken.json"
rc=0; "$INGOT" verify --manifest "$T/broken.json" --allow-unsigned --root "$T/h100.root" --tcti none \
	--json >"$T/broken-report.json" 2>&1 || rc=$?
assert_eq 20 "$rc" "broken manifest exit"
validate "$T/broken-report.json"
assert_eq could-not-check "$(jget "$T/broken-report.json" "r['verdict']")" "broken manifest verdict"

# Usage errors.
expect_exit 64 "--manifest is required" "$INGOT" verify --root "$T/h100.root"
expect_exit 64 "--fail-on" "$INGOT" verify --manifest x --fail-on sometimes
expect_exit 64 "--verity needs --image" "$INGOT" verify --manifest x --verity y
expect_exit 0 "EXIT STATUS" "$INGOT" verify --help
note "every report validates against verify/report.schema.json"
"$PY_JSONSCHEMA" - "$SCHEMA" "$T" <<'PY' || fail "report check failed"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
for line in open(sys.argv[2] + "/expect.tsv"):
    name, want, verdict, reason = line.rstrip("\n").split("\t")
    r = json.load(open("%s/%s.json" % (sys.argv[2], name)))
    errors = sorted(v.iter_errors(r), key=str)
    assert not errors, "%s: %s" % (name, errors[0])
    assert r["exit_status"] == int(want), (name, r["exit_status"])
    assert r["verdict"] == verdict, (name, r["verdict"])
    assert reason in r["reason"], (name, r["reason"])
    assert r["node"]["id"] == name and r["time"] == "2026-11-01T00:00:00Z", name
PY
echo "all verify node cases passed"
