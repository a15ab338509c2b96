#!/bin/bash
# ingot lint on the four example pools: exact text output, JSON report,
# exit codes (0 clean, 1 warnings with --strict, 3 bad input, 64 usage).
. "$(dirname "$0")/lib.sh"
cd "$SRC"
D=2026-10-15
R=recipes/rules

for p in h100-r580-ltsb b200-open v100-legacy; do
	expect_exit 0 "" "$INGOT" lint recipes/$p.yaml --rules $R --date $D --strict
	assert_eq "lint: 0 errors, 0 warnings (55 rules, date $D)" "$OUT" "$p"
done

expect_exit 0 "" "$INGOT" lint recipes/mi355x-rocm.yaml --rules $R --date $D
want="recipes/mi355x-rocm.yaml:42:14: warning [rocm-10.1.0-rccl-ll-mi350] (rocm.version, gpu.models): ROCm 10.1.0 on MI355X: RCCL all-reduce with the LL protocol may return incorrect results on MI350-series GPUs; set NCCL_PROTO=LL128,Simple in the job environment until a fixed release
    source: AMD ROCm 10.1.0 release notes, known issues (2026-10-05); tuple-facts.md rule 9 (checked 2026-10-05)
lint: 0 errors, 1 warning (55 rules, date $D)"
assert_eq "$want" "$OUT" "mi355x lint"
expect_exit 1 "rocm-10.1.0-rccl-ll-mi350" "$INGOT" lint recipes/mi355x-rocm.yaml --rules $R --date $D --strict

# JSON: canonical, and what python's json module reads back
"$INGOT" lint recipes/mi355x-rocm.yaml --rules $R --date $D --json >"$T/m.json"
python3 - "$T/m.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["errors"] == 0 and r["warnings"] == 1 and r["rules"] == 55, r
f = r["findings"][0]
assert f["rule"] == "rocm-10.1.0-rccl-ll-mi350" and f["severity"] == "warning", f
assert f["fields"] == ["rocm.version", "gpu.models"], f
assert f["where"] == "recipes/mi355x-rocm.yaml:42:14", f
assert f["rule_file"] == "recipes/rules/rocm.yaml:28:5", f
assert "NCCL_PROTO=LL128,Simple" in f["message"]
PY
[ "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), indent=2, sort_keys=True))' "$T/m.json")" = "$(cat "$T/m.json")" ] ||
	fail "lint --json is not canonical (sorted keys, 2-space indent)"

# support window: R580 LTSB ends June 2028
expect_exit 0 "" "$INGOT" lint recipes/h100-r580-ltsb.yaml --rules $R --date 2028-06-30 --strict
expect_exit 1 "warning [r580-ltsb-end-of-support] (driver.branch)" \
	"$INGOT" lint recipes/h100-r580-ltsb.yaml --rules $R --date 2028-07-01 --strict

# default rules directory: found next to the build tree; $INGOT_RULES wins
expect_exit 0 "(55 rules" "$INGOT" lint recipes/b200-open.yaml --date $D
mkdir "$T/one"
cp $R/security.yaml "$T/one/"
INGOT_RULES="$T/one" expect_exit 0 "(3 rules" "$INGOT" lint recipes/b200-open.yaml --date $D

# help, usage, bad input
expect_exit 0 "EXIT STATUS" "$INGOT" lint --help
expect_exit 64 "expected exactly one RECIPE" "$INGOT" lint
expect_exit 64 "unknown option '--bogus'" "$INGOT" lint --bogus recipes/b200-open.yaml
expect_exit 3 "lint: --date: expected YYYY-MM-DD, got '2026-13-01'" \
	"$INGOT" lint recipes/b200-open.yaml --date 2026-13-01
expect_exit 3 "$T/nope.yaml: cannot open" "$INGOT" lint "$T/nope.yaml"
expect_exit 3 "$T/empty: cannot open rules directory" "$INGOT" lint recipes/b200-open.yaml --rules "$T/empty"
mkdir "$T/empty"
expect_exit 3 "$T/empty: no *.yaml rule files" "$INGOT" lint recipes/b200-open.yaml --rules "$T/empty"
# a recipe without a tuple: nothing to check, still a clean exit
printf 'name: x\nversion: "1"\nepoch: 0\n' >"$T/plain.yaml"
expect_exit 0 "no tuple: section, nothing to check" "$INGOT" lint "$T/plain.yaml" --rules $R --date $D
