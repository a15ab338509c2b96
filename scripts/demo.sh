#!/bin/bash
# Build the demo image (recipes/demo.yaml) into out/demo, with the artifact
# store in out/store, and say where the results are:
#   scripts/demo.sh BUILD
# `make demo` runs it after building ingot and the demo artifacts
# (scripts/gen-artifacts.sh).  Building twice gives the same bytes.
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
INGOT=$BUILD/ingot
[ -x "$INGOT" ] || { echo "demo: $INGOT not built (run make)" >&2; exit 1; }
if [ ! -f recipes/artifacts/nvidia-open-kmod-580.95.05-6.8.0-45.tar.xz ]; then
	echo "demo: artifacts missing; generating them (scripts/gen-artifacts.sh)" >&2
	scripts/gen-artifacts.sh "$BUILD"
fi
mkdir -p out
"$INGOT" build recipes/demo.yaml -o out/demo --store out/store
IMG=out/demo/demo-h100.sqfs
echo
echo "demo image: $(pwd)/$IMG"
echo "sha256:     $(sha256sum "$IMG" | cut -d' ' -f1)"
echo "list it:    unsquashfs -lln $IMG"
ROOT=$(sed -n 's/.*"root_hash": *"\([0-9a-f]*\)".*/\1/p' out/demo/demo-h100.manifest.json | head -n 1)
if [ -n "$ROOT" ]; then
	echo "check it:   veritysetup verify $IMG out/demo/demo-h100.verity $ROOT"
fi
