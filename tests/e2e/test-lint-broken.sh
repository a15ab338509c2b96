#!/bin/bash
# Broken variants of the example pools: each must fail `ingot lint` with
# exit 2 and the expected rule, message and recipe position.  Malformed
# recipes and rules: exit 3 naming file:line:col (and the rule id).
. "$(dirname "$0")/lib.sh"
cd "$SRC"
D=2026-10-15
R=$SRC/recipes/rules

# variant POOL NAME 'python replacement expr on the text s'
variant() {
	python3 - "recipes/$1.yaml" "$T/$2.yaml" "$3" <<'PY'
import sys
s = open(sys.argv[1]).read()
old = s
exec(sys.argv[3])
assert s != old, "variant changed nothing: " + sys.argv[3]
open(sys.argv[2], "w").write(s)
PY
}
lint_fails() { # NAME RULE NEEDLE
	expect_exit 2 "error [$2]" "$INGOT" lint "$T/$1.yaml" --rules "$R" --date $D
	assert_contains "$OUT" "$3" "$1"
	assert_contains "$OUT" "lint: 1 error," "$1"
}

variant b200-open b200-proprietary 's = s.replace("flavor: open", "flavor: proprietary")'
lint_fails b200-proprietary open-modules-required \
	"b200-proprietary.yaml:48:13: error [open-modules-required] (driver.flavor, gpu.models, gpu.arch): B200 requires the NVIDIA open GPU kernel modules"

variant h100-r580-ltsb h100-fm-mismatch 's = s.replace("    version: 580.95.05\n    branch: R580", "    version: 580.82.07\n    branch: R580", 1)'
lint_fails h100-fm-mismatch fabric-manager-equals-driver \
	"(nvswitch, fabric-manager.version, driver.version): fabric manager 580.95.05 != driver 580.82.07: on NVSwitch systems they must be the same version exactly (else CUDA error 802"

variant v100-legacy v100-cuda13 's = s.replace("version: 12.9.1", "version: \"13.0\"").replace("cuda: \"12.9\"", "cuda: \"13.0\"")'
lint_fails v100-cuda13 cuda13-drops-legacy-arch "CUDA 13.0 dropped Maxwell, Pascal and Volta (volta)"

variant v100-legacy v100-r595 's = s.replace("version: 580.95.05\n    branch: R580\n", "version: 595.91.07\n")'
lint_fails v100-r595 r580-last-branch-legacy-arch \
	"v100-r595.yaml:43:14: error [r580-last-branch-legacy-arch] (driver.version, gpu.arch): R580 is the final driver branch for Maxwell, Pascal and Volta; driver 595.91.07 does not support volta"

variant h100-r580-ltsb h100-toolkit-1.17.7 's = s.replace("version: 1.17.8", "version: 1.17.7")'
lint_fails h100-toolkit-1.17.7 container-toolkit-cve-2025-23266 \
	"NVIDIA Container Toolkit 1.17.7 is vulnerable to CVE-2025-23266"

variant v100-legacy v100-old-driver 's = s.replace("version: 580.95.05\n    branch: R580\n", "version: 570.195.03\n")'
expect_exit 2 "error [cuda-12.9-min-driver]" "$INGOT" lint "$T/v100-old-driver.yaml" --rules "$R" --date $D
assert_contains "$OUT" "CUDA 12.9.1 needs driver >= 575.51.03, the tuple has 570.195.03: raise the driver or lower CUDA"
# ... and that branch is past its support window at the same date
assert_contains "$OUT" "warning [r570-production-end-of-support]"

variant mi355x-rocm mi355x-cuda 's = s.replace("  rccl:\n", "  cuda:\n    version: \"13.0\"\n  rccl:\n")'
lint_fails mi355x-cuda vendor-amd-no-nvidia-stack "AMD image with NVIDIA components"

variant h100-r580-ltsb h100-typo 's = s.replace("artifact: fabric-manager", "artifact: fabricmanager")'
lint_fails h100-typo tuple-artifact-unknown \
	"tuple.fabric-manager.artifact names artifact 'fabricmanager', but the recipe has no artifact of that name"

# recipe errors: exit 3 with the position
variant h100-r580-ltsb h100-badkey 's = s.replace("  nvswitch: true", "  nvswitches: true")'
expect_exit 3 "h100-badkey.yaml:45:3: tuple: unknown key 'nvswitches'" \
	"$INGOT" lint "$T/h100-badkey.yaml" --rules "$R" --date $D
variant h100-r580-ltsb h100-branch 's = s.replace("branch: R580", "branch: R570")'
expect_exit 3 "h100-branch.yaml:50:13: tuple.driver.branch: expected R580 (driver 580.95.05), got 'R570'" \
	"$INGOT" lint "$T/h100-branch.yaml" --rules "$R" --date $D

# a malformed rule names its file, line:column and id
mkdir "$T/rules"
cp "$R"/*.yaml "$T/rules/"
python3 - "$T/rules/nvswitch.yaml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read().replace("fabric-manager.version != driver.version", "fabric-manager.version != driver.versoin", 1)
open(p, "w").write(s)
PY
expect_exit 3 "$T/rules/nvswitch.yaml:6:81: rule 'fabric-manager-equals-driver': when: unknown field 'driver.versoin'" \
	"$INGOT" lint recipes/h100-r580-ltsb.yaml --rules "$T/rules" --date $D
