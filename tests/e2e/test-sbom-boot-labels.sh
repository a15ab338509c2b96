#!/bin/bash
# The SBOM names the UKI's parts and ingot's own artifacts, not just their
# pins: a boot stub given as a .deb that no artifact carries gets its
# control file's Package, Version, Maintainer and a pkg:deb purl (no
# distro qualifier: nothing in the package says which release); an input
# or artifact built from this checkout gets the version: and purl: its
# recipe states (${...} from --set, as scripts/real-image.sh passes
# INGOT_VERSION).  Bad version:/purl: values are refused at their line.
. "$(dirname "$0")/lib.sh"
STUB=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
INIT=$BUILD_DIR/ingot-init
[ -f "$STUB" ] || skip "systemd-boot-efi missing"
command -v dpkg-deb >/dev/null || skip "dpkg-deb missing"
[ -x "$INIT" ] || fail "$INIT not built"
cd "$T"

# the stub's package, as Debian ships it (its file where the UKI looks)
mkdir -p deb/DEBIAN deb/usr/lib/systemd/boot/efi tools/opt/ingot
cp "$STUB" deb/usr/lib/systemd/boot/efi/
printf 'Package: systemd-boot-efi\nVersion: 252.39-1~deb12u2\nArchitecture: amd64\nMaintainer: Debian systemd Maintainers <pkg-systemd-maintainers@lists.alioth.debian.org>\nDescription: test\n' \
	>deb/DEBIAN/control
dpkg-deb -Zxz --root-owner-group --build deb stub.deb >/dev/null
echo tool >tools/opt/ingot/tool
tar -C tools -cf tools.tar .

TOOLS_LABELS='    version: ${INGOT_VERSION}
    purl: "pkg:generic/ingot-tools@${INGOT_VERSION}"
'
INIT_LABELS='    version: ${INGOT_VERSION}
    purl: "pkg:generic/ingot-init@${INGOT_VERSION}"
'
recipe() { # FILE [TOOLS-LABELS] [INIT-LABELS]
	{ recipe_head labels
	  printf 'artifacts:\n  - name: ingot-tools\n    kind: tar\n    source: tools.tar\n    sha256: %s\n%s' \
		"$(sha256 tools.tar)" "${2-$TOOLS_LABELS}"
	  printf 'boot:\n  kernel: {source: %s, sha256: %s}\n  stub: {source: stub.deb, sha256: %s}\n' \
		"$STUB" "$(sha256 "$STUB")" "$(sha256 stub.deb)"
	  printf '  init:\n    source: %s\n    sha256: %s\n%s' "$INIT" "$(sha256 "$INIT")" "${3-$INIT_LABELS}"
	} >"$1"
}
recipe r.yaml
V=$("$INGOT" --version | sed -n 's/^ingot //p')
[ -n "$V" ] || fail "ingot --version: no version"
"$INGOT" build r.yaml -o out --store st --no-lint --quiet --set INGOT_VERSION="$V"
S=out/labels.spdx.json
pkg() { jq -r --arg n "$1" ".packages[] | select(.name == \$n) | $2" "$S"; }

note "the stub: its .deb's control"
assert_eq "252.39-1~deb12u2" "$(pkg stub .versionInfo)" "stub version"
assert_eq "pkg:deb/debian/systemd-boot-efi@252.39-1~deb12u2?arch=amd64" \
	"$(pkg stub '.externalRefs[0].referenceLocator')" "stub purl"
assert_eq "Organization: Debian systemd Maintainers (pkg-systemd-maintainers@lists.alioth.debian.org)" \
	"$(pkg stub .supplier)" "stub supplier"
assert_eq "$(sha256 stub.deb)" "$(pkg stub '.checksums[0].checksumValue')" "stub pin"

note "ingot's own: the recipe's version: and purl:"
assert_eq "$V" "$(pkg init .versionInfo)" "init version"
assert_eq "pkg:generic/ingot-init@$V" "$(pkg init '.externalRefs[0].referenceLocator')" "init purl"
assert_eq "$V" "$(pkg ingot-tools .versionInfo)" "ingot-tools version"
assert_eq "pkg:generic/ingot-tools@$V" "$(pkg ingot-tools '.externalRefs[0].referenceLocator')" "ingot-tools purl"
# a plain file (the kernel here) states nothing: nothing is guessed
assert_eq "null null" "$(pkg kernel '[.versionInfo, .externalRefs] | map(tostring) | join(" ")')" "kernel unlabelled"

note "the stub's .deb also an artifact: the same labels, from the artifact's listing"
sed "s|^boot:|  - {name: efi, kind: deb, source: stub.deb, sha256: $(sha256 stub.deb)}\nboot:|" r.yaml >r2.yaml
"$INGOT" build r2.yaml -o out2 --store st --no-lint --quiet --set INGOT_VERSION="$V"
assert_eq "pkg:deb/debian/systemd-boot-efi@252.39-1~deb12u2?arch=amd64" \
	"$(jq -r '.packages[] | select(.name == "stub") | .externalRefs[0].referenceLocator' out2/labels.spdx.json)" \
	"stub purl via the artifact"

if spdx_tools_found; then
	note "the SPDX validator accepts it"
	spdx_validate "$S" out2/labels.spdx.json
else
	echo "(SPDX validator not found: validity not checked)"
fi

note "bad version:/purl: values: one line naming file:line:column"
recipe bad1.yaml '    version: ""
'
expect_exit 1 'bad1.yaml:13:14: artifacts[0].version: expected a non-empty version without blanks' \
	"$INGOT" build bad1.yaml -o out1-bad --store st --no-lint --set INGOT_VERSION="$V"
recipe bad2.yaml '' '    purl: "ingot-init@1"
'
expect_exit 1 "bad2.yaml:19:11: boot.init.purl: expected a package URL (pkg:TYPE/NAME@VERSION), got 'ingot-init@1'" \
	"$INGOT" build bad2.yaml -o out2-bad --store st --no-lint --set INGOT_VERSION="$V"
recipe bad3.yaml '' '    version: 1 2
'
expect_exit 1 "boot.init.version: expected a non-empty version without blanks, got '1 2'" \
	"$INGOT" build bad3.yaml -o out3-bad --store st --no-lint --set INGOT_VERSION="$V"
recipe bad4.yaml '    purl: "pkg:/x@1"
'
expect_exit 1 "artifacts[0].purl: expected a package URL" "$INGOT" build bad4.yaml -o out4-bad --store st --no-lint --set INGOT_VERSION="$V"
for n in 1 2 3 4; do assert_no_file "out$n-bad/labels.spdx.json"; done
echo PASS
