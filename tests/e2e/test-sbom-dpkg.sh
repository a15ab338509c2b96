#!/bin/bash
# The SBOM lists the image's own dpkg database (builder/sbom.c,
# builder/dpkg-status.h): a root filesystem tar with var/lib/dpkg/status
# gives one SPDX package per installed package, compared package by
# package with what dpkg-query --admindir says of the unsquashfs'd image
# (name, version, architecture, source package and version); each with
# a pkg:deb purl carrying arch and distro (os-release), its DEP-5 license
# (also through a doc directory symlink), the files its .list names;
# the tar itself is not labelled as the tuple component it holds (no
# purl, CPE or tuple version); a config-files leftover is no package; a
# status file the build cannot read fails the build, naming it.
. "$(dirname "$0")/lib.sh"
for tool in dpkg-query unsquashfs jq diff; do
	command -v $tool >/dev/null || skip "$tool not installed"
done

R=$T/root
mkdir -p "$R/usr/lib/x86_64-linux-gnu" "$R/usr/bin" "$R/usr/share/doc/libfoo1" "$R/usr/share/doc/base+data" \
	"$R/usr/share/doc/vendorlib" "$R/var/lib/dpkg/info" "$R/etc"
printf 'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nNAME="Debian GNU/Linux"\nVERSION_ID="13"\nID=debian\n' \
	>"$R/usr/lib/os-release"
ln -s ../usr/lib/os-release "$R/etc/os-release"
echo ingot >"$R/etc/hostname"
echo lib >"$R/usr/lib/x86_64-linux-gnu/libfoo.so.1"
echo tool >"$R/usr/bin/foo"
echo nv >"$R/usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127"
echo old >"$R/etc/oldpkg.conf"
printf 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\nFiles: *\nCopyright: 2024 A\nLicense: GPL-2+\n' \
	>"$R/usr/share/doc/libfoo1/copyright"
printf 'Free as in beer.\n' >"$R/usr/share/doc/base+data/copyright"
printf 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\nFiles: *\nCopyright: 2024 N\nLicense: Expat\n' \
	>"$R/usr/share/doc/vendorlib/copyright"
# foo-tools' docs are libfoo1's (a doc directory symlink, as Debian does)
ln -s libfoo1 "$R/usr/share/doc/foo-tools"
cat >"$R/var/lib/dpkg/status" <<'S'
Package: libfoo1
Status: install ok installed
Priority: optional
Installed-Size: 10
Maintainer: Foo Team <foo@lists.debian.org>
Architecture: amd64
Multi-Arch: same
Source: foo (1.2-3)
Version: 1.2-3+b1
Description: foo library
 A continuation line: with a colon.

Package: foo-tools
Status: install ok installed
Maintainer: Someone <s@example.invalid>
Architecture: amd64
Version: 1:2.0~rc1+dfsg-1
Depends: libfoo1 (>= 1.2)
Description: foo tools

Package: oldpkg
Status: deinstall ok config-files
Maintainer: Old <old@debian.org>
Architecture: amd64
Version: 0.9-1
Conffiles:
 /etc/oldpkg.conf 0123456789abcdef0123456789abcdef
Description: removed, its configuration left

Package: base+data
Status: install ok installed
Maintainer: Debian Base <base@debian.org>
Architecture: all
Source: base
Version: 7
Description: data

Package: vendorlib
Status: install ok installed
Maintainer: NVIDIA CORPORATION <cudatools@nvidia.com>
Architecture: amd64
Version: 12.4.127~12.4.1-2
Description: another vendor's library
S
printf '/.\n/usr\n/usr/lib/x86_64-linux-gnu/libfoo.so.1\n/usr/share/doc/libfoo1/copyright\n' \
	>"$R/var/lib/dpkg/info/libfoo1:amd64.list"
printf '/.\n/usr/bin/foo\n/usr/share/doc/foo-tools\n' >"$R/var/lib/dpkg/info/foo-tools.list"
printf '/usr/share/doc/base+data/copyright\n' >"$R/var/lib/dpkg/info/base+data.list"
printf '/usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127\n/usr/share/doc/vendorlib/copyright\n' >"$R/var/lib/dpkg/info/vendorlib.list"
mkdir -p "$T/r"
tar --sort=name --mtime=@1700000000 --owner=0 --group=0 --numeric-owner -C "$R" -cf "$T/r/rootfs.tar" .
mkdir -p "$T/m/usr/lib/modules/6.12/updates"
echo ko >"$T/m/usr/lib/modules/6.12/updates/nvidia.ko"
tar --sort=name --mtime=@1700000000 --owner=0 --group=0 --numeric-owner -C "$T/m" -cf "$T/r/modules.tar" .
SRCSHA=8726fc25ee050f530e569b32cb4634d1f75585a11b5481de3dfd82b72abb0505
PATCHSHA=03fd49252ca385d6a3bbe543061841845c5bd4c1ce713b59ffa79119217b6479
recipe() { # NAME TAR
	recipe_head "$1"
	cat <<YAML
artifacts:
  - {name: rootfs, kind: tar, source: $2, sha256: $(sha256 "$T/r/$2")}
  - name: modules
    kind: tar
    source: modules.tar
    sha256: $(sha256 "$T/r/modules.tar")
    built-from:
      - {name: nvidia-open-kernel-source, version: 550.163.01-2, sha256: $SRCSHA,
         purl: "pkg:deb/debian/nvidia-open-kernel-source@550.163.01-2?arch=amd64&distro=debian-13"}
      - {name: nv-pci-resize-exclude-bars.patch, sha256: $PATCHSHA}
tuple:
  vendor: nvidia
  platform: {os: debian, os-version: "13", cpu-arch: x86_64}
  gpu: {models: [H100]}
  smi: nvidia-smi
  driver: {version: 550.163.01, flavor: open}
  cuda:
    version: "12.4"
    artifact: rootfs
YAML
}
recipe dpkg rootfs.tar >"$T/r/dpkg.yaml"
"$INGOT" build "$T/r/dpkg.yaml" -o "$T/out" --store "$T/store" --no-lint -q
S=$T/out/dpkg.spdx.json
assert_file "$S"

note "package by package, as dpkg-query reads the image (scripts/sbom-dpkg-check.sh)"
expect_exit 0 "4 dpkg packages of dpkg.sqfs listed by its SBOM" "$SRC/scripts/sbom-dpkg-check.sh" "$T/out/dpkg.sqfs" "$S"
note "the check can fail: a package left out, another version, a purl of another package"
jq 'del(.packages[] | select(.name == "base+data"))' "$S" >"$T/less.json"
expect_exit 1 "-base+data 7 all base 7" "$SRC/scripts/sbom-dpkg-check.sh" "$T/out/dpkg.sqfs" "$T/less.json"
jq '(.packages[] | select(.name == "libfoo1") | .versionInfo) = "1.2-4"' "$S" >"$T/ver.json"
expect_exit 1 "+libfoo1 1.2-4 amd64" "$SRC/scripts/sbom-dpkg-check.sh" "$T/out/dpkg.sqfs" "$T/ver.json"
jq '(.packages[] | select(.name == "libfoo1") | .externalRefs[0].referenceLocator) |= sub("libfoo1"; "libbar1")' "$S" >"$T/purl.json"
expect_exit 1 "purl:pkg:deb/debian/libbar1" "$SRC/scripts/sbom-dpkg-check.sh" "$T/out/dpkg.sqfs" "$T/purl.json"

pkg() { jq -r --arg n "$1" ".packages[] | select(.name == \$n) | $2" "$S"; }
note "purls, licenses, suppliers"
assert_eq "pkg:deb/debian/libfoo1@1.2-3%2Bb1?arch=amd64&distro=debian-13" "$(pkg libfoo1 '.externalRefs[0].referenceLocator')" \
	"purl of a Debian package"
assert_eq "pkg:deb/debian/foo-tools@1:2.0~rc1%2Bdfsg-1?arch=amd64&distro=debian-13" \
	"$(pkg foo-tools '.externalRefs[0].referenceLocator')" "purl of a person's package (the image's distribution)"
assert_eq "pkg:deb/nvidia/vendorlib@12.4.127~12.4.1-2?arch=amd64&distro=debian-13" \
	"$(pkg vendorlib '.externalRefs[0].referenceLocator')" "purl of another vendor's package"
assert_eq "pkg:deb/debian/base%2Bdata@7?arch=all&distro=debian-13" "$(pkg base+data '.externalRefs[0].referenceLocator')" \
	"purl of an arch all package"
assert_eq "GPL-2.0-or-later" "$(pkg libfoo1 .licenseDeclared)" "DEP-5 license"
assert_eq "GPL-2.0-or-later" "$(pkg foo-tools .licenseDeclared)" "license through the doc directory symlink"
assert_eq "NOASSERTION" "$(pkg base+data .licenseDeclared)" "non-DEP-5 copyright"
assert_eq "MIT" "$(pkg vendorlib .licenseDeclared)" "vendor's DEP-5 license"
assert_eq "Organization: Foo Team (foo@lists.debian.org)" "$(pkg libfoo1 .supplier)" "supplier from Maintainer"
assert_eq "" "$(pkg oldpkg .name)" "a config-files leftover is no package"

note "the tar is the database's carrier, not CUDA"
assert_eq "null null" "$(pkg rootfs '.externalRefs, .versionInfo' | xargs)" "rootfs: no purl, CPE or tuple version"

note "files: each of the package its .list names, the rest the tar's"
id_of() { pkg "$1" .SPDXID; }
owner_of() { # FILE
	jq -r --arg f "./$1" '(.files[] | select(.fileName == $f) | .SPDXID) as $id |
		.relationships[] | select(.relatedSpdxElement == $id and .relationshipType == "CONTAINS") | .spdxElementId' "$S"
}
assert_eq "$(id_of libfoo1)" "$(owner_of usr/lib/x86_64-linux-gnu/libfoo.so.1)" "libfoo.so.1's package"
assert_eq "$(id_of foo-tools)" "$(owner_of usr/bin/foo)" "foo's package"
assert_eq "$(id_of rootfs)" "$(owner_of etc/hostname)" "an unowned file"
assert_eq "$(id_of rootfs)" "$(owner_of etc/oldpkg.conf)" "a config-files leftover's file"
for p in libfoo1 foo-tools base+data vendorlib; do
	assert_eq 1 "$(jq --arg r "$(id_of rootfs)" --arg p "$(id_of $p)" \
		'[.relationships[] | select(.spdxElementId == $r and .relationshipType == "CONTAINS" and .relatedSpdxElement == $p)] | length' "$S")" \
		"rootfs CONTAINS $p"
done

note "the modules GENERATED_FROM their source package and the patch"
gen() { jq -r --arg m "$(id_of modules)" --arg n "$1" '(.packages[] | select(.name == $n) | .SPDXID) as $id |
	[.relationships[] | select(.spdxElementId == $m and .relationshipType == "GENERATED_FROM" and .relatedSpdxElement == $id)] | length' "$S"; }
assert_eq 1 "$(gen nvidia-open-kernel-source)" "modules GENERATED_FROM the source package"
assert_eq 1 "$(gen nv-pci-resize-exclude-bars.patch)" "modules GENERATED_FROM the patch"
assert_eq "550.163.01-2 $SRCSHA pkg:deb/debian/nvidia-open-kernel-source@550.163.01-2?arch=amd64&distro=debian-13" \
	"$(pkg nvidia-open-kernel-source '[.versionInfo, .checksums[0].checksumValue, .externalRefs[0].referenceLocator] | join(" ")')" \
	"the source package's version, pin and purl"
assert_eq "$PATCHSHA" "$(pkg nv-pci-resize-exclude-bars.patch '.checksums[0].checksumValue')" "the patch's pin"
sed 's|purl: "pkg:deb/|purl: "deb/|' "$T/r/dpkg.yaml" >"$T/r/badpurl.yaml"
expect_exit 1 "artifacts[1].built-from[0].purl: expected a package URL" \
	"$INGOT" build "$T/r/badpurl.yaml" -o "$T/badpurl" --store "$T/store" --no-lint -q

if spdx_tools_found; then
	note "the SPDX validator accepts it"
	spdx_validate "$S"
else
	echo "(SPDX validator not found: not run)"
fi

note "a status file the build cannot read fails the build, naming it"
sed -i '/^Version: 7$/d' "$R/var/lib/dpkg/status"
tar --sort=name --mtime=@1700000000 --owner=0 --group=0 --numeric-owner -C "$R" -cf "$T/r/bad.tar" .
recipe bad bad.tar >"$T/r/bad.yaml"
expect_exit 1 "var/lib/dpkg/status:30: Version: expected a value" \
	"$INGOT" build "$T/r/bad.yaml" -o "$T/bad" --store "$T/store" --no-lint -q
assert_no_file "$T/bad/bad.spdx.json"
assert_no_file "$T/bad/bad.sqfs"
echo ok
