#!/bin/bash
# Every SBOM a build writes passes the SPDX project's own validator (it
# checks the spec's SHALL rules, which the JSON schema does not): the
# demo, the four example pools and a boot image.  Scanner-style: every
# .deb in an image is found by the purl dpkg-deb's fields make, with its
# real version and the .deb's sha256 (the purl's namespace the vendor:
# Maintainer's domain or the recipe's tuple vendor, none when neither
# says); licenses come from a DEP-5 copyright in the .deb, whatever the
# recipe excludes (every DEP-5 standard name mapped, a LicenseRef with
# its text otherwise), the supplier from Maintainer; per
# file SHA1 matches the bytes; the validator can fail.
. "$(dirname "$0")/lib.sh"
for tool in dpkg-deb unsquashfs; do
	command -v $tool >/dev/null || skip "$tool not installed"
done
spdx_tools_found || skip "SPDX validator (shared/tools/spdx-tools and its Debian packages) not found"

note "demo"
mkdir -p "$T/r"
INGOT_DEMO_ONLY=1 "$SRC/scripts/gen-artifacts.sh" "$BUILD_DIR" "$T/r/artifacts" >/dev/null
cp "$SRC/recipes/demo.yaml" "$T/r/"
"$INGOT" build "$T/r/demo.yaml" -o "$T/out/demo" --store "$T/store" --no-lint -q
SBOMS=("$T/out/demo/demo-h100.spdx.json")

note "the four pools"
cp "$SRC"/recipes/{h100-r580-ltsb,b200-open,v100-legacy,mi355x-rocm}.yaml "$T/r/"
"$SRC/scripts/gen-pool-artifacts.sh" "$T/r/artifacts/pools" 2>/dev/null
for p in h100-r580-ltsb b200-open v100-legacy mi355x-rocm; do
	"$INGOT" build "$T/r/$p.yaml" -o "$T/out/$p" --store "$T/store" --no-lint -q
	SBOMS+=("$T/out/$p/$p.spdx.json")
done

note "a boot image (its kernel, stub and init are not image files)"
STUB=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
if [ -f "$STUB" ] && [ -x "$BUILD_DIR/ingot-init" ]; then
	{ sed 's/^name: demo-h100$/name: demo-boot/' "$T/r/demo.yaml"
	  printf 'boot:\n  kernel: {source: %s, sha256: %s}\n  stub: {source: %s, sha256: %s}\n  init: {source: %s, sha256: %s}\n' \
		"$STUB" "$(sha256 "$STUB")" "$STUB" "$(sha256 "$STUB")" "$BUILD_DIR/ingot-init" "$(sha256 "$BUILD_DIR/ingot-init")"
	} >"$T/r/demo-boot.yaml"
	"$INGOT" build "$T/r/demo-boot.yaml" -o "$T/out/boot" --store "$T/store" --no-lint -q
	SBOMS+=("$T/out/boot/demo-boot.spdx.json")
	# the UKI is described beside the image, holding its pinned kernel, stub and init
	B=$T/out/boot/demo-boot.spdx.json
	assert_eq "SPDXRef-Image SPDXRef-UKI" "$(jq -r '.documentDescribes | join(" ")' "$B")" "described: image and UKI"
	assert_eq "kernel $(sha256 "$STUB") stub $(sha256 "$STUB") init $(sha256 "$BUILD_DIR/ingot-init")" \
		"$(jq -r '[.relationships[] | select(.spdxElementId == "SPDXRef-UKI" and .relationshipType == "CONTAINS") | .relatedSpdxElement] as $in |
			[.packages[] | select(.SPDXID as $id | $in | index($id)) | .name, .checksums[0].checksumValue] | join(" ")' "$B")" \
		"the UKI's kernel, stub and init with their pins"
	assert_eq "demo-boot.efi" "$(jq -r '.packages[] | select(.SPDXID == "SPDXRef-UKI") | .name' "$B")" "the UKI's name"
else
	echo "(no systemd-boot stub or ingot-init: boot image SBOM not checked)"
fi

note "DEP-5 licenses, purl namespaces and versions"
mkdeb() { # NAME VERSION MAINTAINER COPYRIGHT-TEXT
	local d=$T/deb/$1
	mkdir -p "$d/DEBIAN" "$d/usr/share/doc/$1" "$d/usr/lib/$1"
	printf 'Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: %s\nDescription: test\n' \
		"$1" "$2" "$3" >"$d/DEBIAN/control"
	printf '%s' "$4" >"$d/usr/share/doc/$1/copyright"
	printf '%s\n' "$1" >"$d/usr/lib/$1/lib.so"
	find "$d" -exec touch -d @1700000000 {} +
	SOURCE_DATE_EPOCH=1700000000 dpkg-deb --root-owner-group -Zgzip --build "$d" "$T/r/$1.deb" >/dev/null
}
DEP5='Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\nFiles: *\nCopyright: 2024 A\nLicense: %s\n'
# a Debian team's package: epoch, "+" and "~" in its version
mkdeb libdep5 '1:2.0~rc1+dfsg-1' "Debian Lib Team <team@lists.debian.org>" \
	"$(printf "$DEP5"'\nFiles: debian/*\nLicense: GPL-3+\n' 'GPL-2+ or Expat')"
# a person's package: nothing says whose archive it is from
mkdeb libfree 3.1-2 "Someone (nick) <s@example.invalid>" "This is free software, see the source."
# another vendor's package, its docs excluded by the recipe (the license is still read)
mkdeb libvendor 1.2-1 "NVIDIA CORPORATION <cudatools@nvidia.com>" "$(printf "$DEP5" 'LGPL-2+')"
# public domain has no SPDX id: a LicenseRef with the file's text
mkdeb libpd 1-1 "Debian X <x@debian.org>" \
	"$(printf "$DEP5"' The author disclaims all copyright.\n .\n Use it freely.\n' public-domain)"
# every DEP-5 standard name with an SPDX id, for the validator to check each
ALL="Apache-1.0 and Apache-1.1 and Apache-2.0 and Artistic-1.0 and Artistic-2.0 and BSD-2-clause"
ALL+=" and BSD-3-clause and BSD-4-clause and ISC and CC-BY-1.0 and CC-BY-2.0 and CC-BY-2.5 and CC-BY-3.0"
ALL+=" and CC-BY-4.0 and CC-BY-SA-1.0 and CC-BY-SA-2.0 and CC-BY-SA-2.5 and CC-BY-SA-3.0 and CC-BY-SA-4.0"
ALL+=" and CC0-1.0 and CDDL-1.0 and CDDL-1.1 and CPL-1.0 and EFL-1 and EFL-2 and Expat and GPL-1 and GPL-1+"
ALL+=" and GPL-2 and GPL-2+ and GPL-3 and GPL-3+ and LGPL-2 and LGPL-2+ and LGPL-2.1 and LGPL-2.1+"
ALL+=" and LGPL-3 and LGPL-3+ and GFDL-1.1 and GFDL-1.1+ and GFDL-1.2 and GFDL-1.2+ and GFDL-1.3 and GFDL-1.3+"
ALL+=" and GFDL-NIV-1.1 and GFDL-NIV-1.1+ and GFDL-NIV-1.2 and GFDL-NIV-1.2+ and GFDL-NIV-1.3 and GFDL-NIV-1.3+"
ALL+=" and LPPL-1.0 and LPPL-1.1 and LPPL-1.2 and LPPL-1.3a and LPPL-1.3c and MPL-1.0 and MPL-1.1 and MPL-2.0"
ALL+=" and Perl and Python-2.0 and QPL-1.0 and W3C and Zlib and Zope-1.1 and Zope-2.0 and Zope-2.1"
ALL+=" and AGPL-3+ and BSL-1.0 and GPL-2+ with Classpath exception and GPL-2+ with Font exception"
ALL+=" and LGPL-2+ with Libtool exception and Apache-2.0 with LLVM exception"
ALL+=" and GPL-2+ with OpenSSL exception"
mkdeb liball 1-1 "Debian X <x@debian.org>" \
	"$(printf "$DEP5"'\nLicense: GPL-2+ with OpenSSL exception\n GPL 2 or later, and linking with OpenSSL is allowed.\n' "$ALL")"
cat >"$T/r/labels.yaml" <<YAML
name: labels
version: "1"
epoch: 1700000000
artifacts:
  - {name: dep5, kind: deb, source: libdep5.deb, sha256: $(sha256 "$T/r/libdep5.deb")}
  - {name: free, kind: deb, source: libfree.deb, sha256: $(sha256 "$T/r/libfree.deb")}
  - {name: vendor, kind: deb, source: libvendor.deb, sha256: $(sha256 "$T/r/libvendor.deb"), exclude: ["usr/share/doc"]}
  - {name: pd, kind: deb, source: libpd.deb, sha256: $(sha256 "$T/r/libpd.deb")}
  - {name: all, kind: deb, source: liball.deb, sha256: $(sha256 "$T/r/liball.deb")}
YAML
"$INGOT" build "$T/r/labels.yaml" -o "$T/out/labels" --store "$T/store" --no-lint -q
L=$T/out/labels/labels.spdx.json
SBOMS+=("$L")
pkg() { jq -r --arg n "$1" ".packages[] | select(.name == \$n) | $2" "$L"; }
assert_eq "GPL-2.0-or-later OR MIT" "$(pkg dep5 .licenseDeclared)" "DEP-5 license"
assert_eq "NOASSERTION" "$(pkg free .licenseDeclared)" "non-DEP-5 license"
assert_eq "LGPL-2.0-or-later" "$(pkg vendor .licenseDeclared)" "license of a package whose docs the recipe excludes"
assert_eq "" "$(jq -r '.files[].fileName | select(startswith("./usr/share/doc/libvendor"))' "$L")" \
	"the excluded copyright file is not in the image"
pd=$(pkg pd .licenseDeclared)
case $pd in LicenseRef-public-domain-????????) ;; *) fail "public-domain: got '$pd'" ;; esac
assert_eq "The author disclaims all copyright.

Use it freely." "$(jq -r --arg id "$pd" '.hasExtractedLicensingInfos[] | select(.licenseId == $id) | .extractedText' "$L")" \
	"public-domain text declared"
assert_eq 2 "$(jq '.hasExtractedLicensingInfos | length' "$L")" "extracted licenses (public-domain, OpenSSL exception)"
case $(pkg all .licenseDeclared) in
*" AND (Artistic-1.0-Perl OR GPL-1.0-or-later) AND "*"GPL-2.0-or-later WITH Classpath-exception-2.0"*"AND LicenseRef-GPL-2plus-with-OpenSSL-exception-"*) ;;
*) fail "all names: got '$(pkg all .licenseDeclared)'" ;;
esac
assert_eq "Organization: Debian Lib Team (team@lists.debian.org)" "$(pkg dep5 .supplier)" "supplier from Maintainer"
assert_eq "NOASSERTION" "$(pkg free .supplier)" "unparsed Maintainer"
# purl-spec's canonical form: ':' as it is, '+' as %2B, '~' as it is
assert_eq "pkg:deb/debian/libdep5@1:2.0~rc1%2Bdfsg-1?arch=amd64" \
	"$(pkg dep5 '.externalRefs[0].referenceLocator')" "purl of a Debian package"
assert_eq "pkg:deb/nvidia/libvendor@1.2-1?arch=amd64" \
	"$(pkg vendor '.externalRefs[0].referenceLocator')" "purl of another vendor's package"
assert_eq "null" "$(pkg free .externalRefs)" "no purl when nothing says whose package it is"

note "the official validator accepts all ${#SBOMS[@]} SBOMs"
spdx_validate "${SBOMS[@]}"

note "it can fail: a file without its SHA1, a package with files but filesAnalyzed false"
jq '.files[0].checksums |= map(select(.algorithm != "SHA1"))' "$L" >"$T/bad1.json"
jq '(.packages[] | select(.name == "dep5")) |= (.filesAnalyzed = false | del(.packageVerificationCode))' "$L" >"$T/bad2.json"
for b in bad1 bad2; do
	if PYTHONPATH="$SPDX_TOOLS/stub:$SPDX_TOOLS/src" /usr/bin/python3 -m spdx_tools.spdx.clitools.pyspdxtools \
		-i "$T/$b.json" >"$T/$b.out" 2>&1 && [ ! -s "$T/$b.out" ]; then
		fail "validator accepted $b"
	fi
done

note "scanner-style: every .deb of every image is found by its purl, real version and digest"
/usr/bin/python3 - "$T" "${SBOMS[@]}" <<'PY' || fail "purl check failed"
import hashlib, json, os, subprocess, sys
from urllib.parse import unquote
T, sboms = sys.argv[1], sys.argv[2:]
found = 0
for path in sboms:
    doc = json.load(open(path))
    man = json.load(open(path.replace(".spdx.json", ".manifest.json")))
    # what a scanner indexes: (type, namespace, name, version, arch) -> package
    index = {}
    for p in doc["packages"]:
        for ref in p.get("externalRefs", []):
            if ref["referenceType"] != "purl":
                continue
            loc = ref["referenceLocator"]
            assert loc.startswith("pkg:"), loc
            body, _, query = loc[4:].partition("?")
            typ, ns, rest = body.split("/", 2)
            name, _, ver = rest.partition("@")
            q = dict(kv.split("=", 1) for kv in query.split("&") if kv)
            index[(typ, ns, unquote(name), unquote(ver), q.get("arch"))] = p
    recipe_dir = os.path.join(T, "r")
    for a in man["artifacts"]:
        if a["kind"] != "deb":
            continue
        # the file the build pinned (demo and pools have .debs of one name)
        deb = next(os.path.join(dp, a["source"]) for dp, _, fs in os.walk(recipe_dir) if a["source"] in fs and
                   hashlib.sha256(open(os.path.join(dp, a["source"]), "rb").read()).hexdigest() == a["sha256"])
        f = dict(zip(["Package", "Version", "Architecture"],
                     subprocess.run(["dpkg-deb", "-f", deb, "Package", "Version", "Architecture"],
                                    capture_output=True, text=True, check=True).stdout.splitlines()))
        f = {k: v.split(": ", 1)[1] for k, v in f.items()}
        # the demo's and pools' .debs name no vendor's domain: the recipe's
        # tuple vendor, whose component names the artifact, is the namespace;
        # the labels' by Maintainer (libfree's says nothing: no purl)
        if "labels" in path:
            ns = {"libvendor": "nvidia", "libfree": None}.get(f["Package"], "debian")
        else:
            ns = "amd" if "mi355x" in path else "nvidia"
        if ns is None:
            continue
        key = ("deb", ns, f["Package"], f["Version"], f["Architecture"])
        assert key in index, (os.path.basename(path), key, sorted(index))
        p = index[key]
        assert p["versionInfo"] == f["Version"], (p["versionInfo"], f)
        assert {"algorithm": "SHA256", "checksumValue": hashlib.sha256(open(deb, "rb").read()).hexdigest()} in p["checksums"]
        found += 1
assert found >= 8, found
print("purl check: %d .debs found by purl" % found)
PY

note "per-file SHA1 is the bytes' SHA1 (unsquashfs)"
unsquashfs -q -n -d "$T/x" "$T/out/labels/labels.sqfs" >/dev/null
/usr/bin/python3 - "$L" "$T/x" <<'PY' || fail "SHA1 check failed"
import hashlib, json, sys
doc = json.load(open(sys.argv[1]))
assert doc["files"]
for f in doc["files"]:
    data = open(sys.argv[2] + "/" + f["fileName"], "rb").read()
    sums = {c["algorithm"]: c["checksumValue"] for c in f["checksums"]}
    assert sums == {"SHA1": hashlib.sha1(data).hexdigest(), "SHA256": hashlib.sha256(data).hexdigest()}, f
# the verification code, recomputed as SPDX 2.3 section 7.9 says
owner = {r["relatedSpdxElement"]: r["spdxElementId"] for r in doc["relationships"] if r["relationshipType"] == "CONTAINS"}
for p in doc["packages"]:
    if p["SPDXID"] == "SPDXRef-Image":
        mine = doc["files"]
    else:
        mine = [f for f in doc["files"] if owner[f["SPDXID"]] == p["SPDXID"]]
    sha1s = sorted(next(c["checksumValue"] for c in f["checksums"] if c["algorithm"] == "SHA1") for f in mine)
    assert p["filesAnalyzed"] and p["packageVerificationCode"]["packageVerificationCodeValue"] == \
        hashlib.sha1("".join(sha1s).encode()).hexdigest(), p["name"]
PY
echo ok
