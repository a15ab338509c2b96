#!/bin/bash
# The real image's tuple (recipes/real/nvidia-h100.yaml: Debian 13's 550.163.01
# open modules, CUDA 12.4 runtime, NCCL 2.22.3 built for CUDA 12.1) lints
# clean; real mismatches are refused with their sourced rule: Debian 12's
# 535.261.03 driver under the CUDA 12.4 runtime, and NCCL built for a CUDA
# newer than the runtime.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
D=2026-12-01
R=recipes/rules
# the pool's recipe file itself (lint reads the tuple and the artifact
# names it refers to; the ${...} of its sources are for ingot build)
mk() { # OUT SED-EXPR
	sed -e "$2" recipes/real/nvidia-h100.yaml > "$1"
}
mk "$T/real.yaml" ''
expect_exit 0 "" "$INGOT" lint "$T/real.yaml" --rules $R --date $D --strict
assert_contains "$OUT" "lint: 0 errors, 0 warnings" "the real tuple"

mk "$T/bookworm-535.yaml" 's/^    version: 550.163.01$/    version: 535.261.03/'
expect_exit 2 "error [cuda-12.4-min-driver] (" "$INGOT" lint "$T/bookworm-535.yaml" --rules $R --date $D
assert_contains "$OUT" "CUDA 12.4 needs driver >= 550.54.14, the tuple has 535.261.03" "535 with CUDA 12.4"
assert_contains "$OUT" "source: NVIDIA CUDA Toolkit Release Notes" "the rule's source"

mk "$T/nccl-newer.yaml" 's/^    cuda: "12.1"$/    cuda: "12.8"/'
expect_exit 2 "[nccl-cuda-newer-than-runtime]" "$INGOT" lint "$T/nccl-newer.yaml" --rules $R --date $D
