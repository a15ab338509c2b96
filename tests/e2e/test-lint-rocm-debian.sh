#!/bin/bash
# Debian 13's real ROCm tuple on an MI300X pool (tests/fixtures/rocm/
# debian13-mi300x.yaml, read from the packages) judged by the sourced ROCm
# rules: refused, by name and source (HIP 5.7 predates gfx942; its RCCL has
# no gfx942 code objects), with the mixed-release warnings.  The same
# stack with an RCCL carrying gfx942 on ROCm 6 is only warned about, and an
# RCCL built for another HIP major is refused.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
D=2026-12-06
R=recipes/rules
F=tests/fixtures/rocm/debian13-mi300x.yaml

expect_exit 2 "" "$INGOT" lint $F --rules $R --date $D
for id in rocm-gfx942-from-6.0 rccl-code-for-gfx942; do
	assert_contains "$OUT" "error [$id]" "the Debian tuple: $id"
done
for id in rccl-2.13-is-rocm-5.4 hip-hsa-same-rocm-major smi-lib-same-rocm-major; do
	assert_contains "$OUT" "warning [$id]" "the Debian tuple: $id"
done
assert_contains "$OUT" "$F:24:13: error [rccl-code-for-gfx942] (gpu.models, rccl.targets): RCCL 2.13.4 carries no code objects for gfx942 (MI300X)" "where and why"
assert_contains "$OUT" 'source: RCCL CHANGELOG (ROCm/rccl, CHANGELOG.md): "RCCL-2.13.4 for ROCm 5.4.0"' "sourced"
assert_contains "$OUT" "lint: 2 errors, 3 warnings (55 rules, date $D)" "summary"
# RCCL built for HIP 5.7 with HIP 5.7 loads: no major mismatch
case "$OUT" in *rccl-hip-major*) fail "same HIP major: rccl-hip-major fired";; esac

"$INGOT" lint $F --rules $R --date $D --json >"$T/d.json" || true
python3 - "$T/d.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert (r["errors"], r["warnings"]) == (2, 3), r
got = sorted((f["rule"], f["severity"]) for f in r["findings"])
assert got == sorted([("rocm-gfx942-from-6.0", "error"), ("rccl-code-for-gfx942", "error"),
                      ("rccl-2.13-is-rocm-5.4", "warning"), ("hip-hsa-same-rocm-major", "warning"),
                      ("smi-lib-same-rocm-major", "warning")]), got
for f in r["findings"]:
    assert f["source"] and f["source_date"] == "2026-12-06" and f["rule_file"].startswith("recipes/rules/rocm-compat.yaml:"), f
PY
[ $? = 0 ] || fail "lint --json of the Debian tuple"

# A ROCm 6.1 stack whose RCCL carries gfx942: warnings only (RCCL 2.13 is
# not ROCm 6.1's), no refusal.
sed -e 's/version: 5.7.31921/version: 6.1.40093/' -e 's/hip: "5.7"/hip: "6.1"/' \
    -e 's/targets: \[gfx803/targets: [gfx942, gfx803/' $F >"$T/rocm61.yaml"
expect_exit 0 "warning [rccl-2.13-is-rocm-5.4]" "$INGOT" lint "$T/rocm61.yaml" --rules $R --date $D
case "$OUT" in *"error ["*) fail "ROCm 6.1 with gfx942 code refused: $OUT";; esac

# The same packages on an MI250X pool (gfx90a, which its RCCL carries):
# the three mixed-release warnings, no error.
sed -e 's/models: \[MI300X\]/models: [MI250X]/' $F >"$T/mi250x.yaml"
expect_exit 0 "lint: 0 errors, 3 warnings (55 rules, date $D)" "$INGOT" lint "$T/mi250x.yaml" --rules $R --date $D

# Certainly wrong: RCCL built for HIP 6.1 with Debian's HIP 5.7.
sed -e 's/hip: "5.7"/hip: "6.1"/' $F >"$T/cross.yaml"
expect_exit 2 "error [rccl-hip-major] (rccl.hip, hip.version): RCCL 2.13.4 is built for HIP 6.1, the tuple has HIP 5.7.31921" \
	"$INGOT" lint "$T/cross.yaml" --rules $R --date $D
exit 0
