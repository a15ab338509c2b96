# shellcheck shell=bash
# Helpers for the test-verify-*.sh scripts (source after lib.sh).
MKROOT="$SRC/tests/e2e/mkroot.sh"
MKMANIFEST="python3 $SRC/tests/tools/mkmanifest.py"
SCHEMA="$SRC/verify/report.schema.json"

# Tuples of the three fake node profiles, as tuple_to_json writes them.
tuple_h100='{"vendor":"nvidia","gpu":{"models":["H100"]},"nvswitch":true,"multi-tenant":true,
 "smi":"nvidia-smi","driver":{"version":"580.95.05","branch":"R580","flavor":"open"},
 "fabric-manager":{"version":"580.95.05"},"cuda":{"version":"13.0"},"nccl":{"version":"2.27.7"},
 "container-toolkit":{"version":"1.17.8"},"firmware":{"vbios":"96.00.99.00.01"}}'
tuple_b200='{"vendor":"nvidia","gpu":{"models":["B200"]},"nvswitch":true,"smi":"nvidia-smi",
 "driver":{"version":"595.91.07","branch":"R595","flavor":"open"},
 "fabric-manager":{"version":"595.91.07"},"cuda":{"version":"13.3"},"nccl":{"version":"2.31.2"},
 "container-toolkit":{"version":"1.18.1"}}'
tuple_mi355x='{"vendor":"amd","gpu":{"models":["MI355X"]},"smi":"amd-smi",
 "rocm":{"version":"10.1.0","stream":"core","prefix":"/opt/rocm/core-10.1"},"rccl":{"version":"2.30.7"}}'

# make_pool PROFILE POOLNAME [mkmanifest args...]: $T/PROFILE.root (healthy)
# and $T/POOLNAME.manifest.json describing it.
make_pool() {
	local profile=$1 name=$2 var="tuple_$1"
	shift 2
	"$MKROOT" "$T/$profile.root" "$profile"
	printf '%s\n' "${!var}" >"$T/$profile.tuple.json"
	$MKMANIFEST "$T/$profile.root" --name "$name" --tuple "$T/$profile.tuple.json" \
		-o "$T/$name.manifest.json" "$@"
}

# node PROFILE NAME MUTATION...: a drifted copy of the healthy profile root
# ($T/PROFILE.root, from make_pool) at $T/NAME
node() {
	local profile=$1 name=$2
	shift 2
	rm -rf "${T:?}/$name"
	cp -a "$T/$profile.root" "$T/$name"
	"$MKROOT" "$T/$name" --mutate "$@"
}

# validate REPORT.json: against verify/report.schema.json with python3-jsonschema.
validate() {
	"$PY_JSONSCHEMA" - "$SCHEMA" "$1" <<'PY' || fail "report $1 does not validate against report.schema.json"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
jsonschema.validate(json.load(open(sys.argv[2])), schema, cls=jsonschema.Draft202012Validator)
PY
}

# jget FILE EXPR: a value from a JSON file (python expression over r).
jget() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# check_status REPORT NAME: the status of one check.
check_status() { jget "$1" "[c['status'] for c in r['checks'] if c['name']=='$2'][0]"; }
