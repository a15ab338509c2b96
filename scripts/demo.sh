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

# The spine: sign, check the signature, predict the measured boot.
KEY=out/demo-key
[ -f "$KEY.key" ] || "$INGOT" keys generate -o "$KEY" >/dev/null
rm -f out/demo-keyring.json
"$INGOT" keys keyring add out/demo-keyring.json "$KEY.pub" --name demo >/dev/null
"$INGOT" sign out/demo/demo-h100.manifest.json --key "$KEY.key" -o out/demo/demo-h100.manifest.dsse.json >/dev/null
echo
echo "signed:     out/demo/demo-h100.manifest.dsse.json (key $KEY.pub)"
"$INGOT" verify-manifest out/demo/demo-h100.manifest.dsse.json --keyring out/demo-keyring.json \
	--image "$IMG" --verity out/demo/demo-h100.verity

# Measured boot: the demo's bootable variant (UKI from Debian's kernel and
# systemd-boot-efi, fetched with apt-get download) and what a boot of it
# must put in the TPM.  `make boot-test` boots it under QEMU + OVMF + swtpm.
echo
if [ "${INGOT_DEMO_BOOT:-1}" = 1 ] && scripts/boot-image.sh "$BUILD" out/boot >/dev/null 2>out/boot-image.log; then
	BM=out/boot/demo-h100-boot.manifest.json
	echo "measured boot: out/boot/demo-h100-boot.efi (make boot-test boots it and checks the chain)"
	jq -r '.boot | "  PCR 4  boot application (UKI Authenticode sha256) \(.uki.authenticode_sha256)",
		"  PCR 4  then its kernel                          \(.linux_authenticode_sha256)",
		"  PCR 11 systemd-stub (sha256)                    \(.pcr11.predicted.sha256)",
		"  PCR 12 reset (no command line override)         0000...0000",
		"  PCR 15 \(.pcr15.event_data)",
		"         predicted (sha256)                       \(.pcr15.predicted.sha256)"' "$BM"
else
	echo "measured boot: skipped (INGOT_DEMO_BOOT=0 or scripts/boot-image.sh failed: out/boot-image.log); make boot-test runs the full boot"
fi
