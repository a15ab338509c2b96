#!/bin/bash
# scripts/sbom-dpkg-check.sh IMAGE.sqfs IMAGE.spdx.json
# The SBOM against the image's own dpkg database, package by package:
# what `dpkg-query --admindir` reads from the image's var/lib/dpkg
# (installed packages: name, version, architecture, source package and
# version) must be exactly the SBOM's dpkg packages, each with a pkg:deb
# purl of that name, version and architecture.  Exit 0 and one line
# when they agree, 1 and the differences otherwise.
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 IMAGE.sqfs IMAGE.spdx.json" >&2; exit 2; }
IMG=$1 SBOM=$2
for t in unsquashfs dpkg-query jq; do
	command -v $t >/dev/null || { echo "sbom-dpkg-check: $t not found" >&2; exit 1; }
done
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# only the database: the image is hundreds of MB
unsquashfs -q -n -d "$W/x" "$IMG" var/lib/dpkg >/dev/null
[ -f "$W/x/var/lib/dpkg/status" ] || { echo "sbom-dpkg-check: $IMG has no var/lib/dpkg/status" >&2; exit 1; }
dpkg-query --admindir="$W/x/var/lib/dpkg" -W \
	-f='${db:Status-Status} ${Package} ${Version} ${Architecture} ${source:Package} ${source:Version}\n' 2>/dev/null |
	awk '$1 == "installed" { $1 = ""; print substr($0, 2) }' | sort >"$W/dpkg"
# the purl's name, version and arch (percent-decoded) must be the package's own
jq -r '.packages[] | select(.SPDXID | startswith("SPDXRef-Dpkg-")) |
	(.externalRefs // [] | map(select(.referenceType == "purl"))[0].referenceLocator // "none") as $p |
	($p | capture("^pkg:deb/[^/]+/(?<n>[^@]+)@(?<v>[^?]+)[?]arch=(?<a>[^&]+)") // {n: "?", v: "?", a: "?"}) as $q |
	[.name, .versionInfo, $q.a, (.sourceInfo | ltrimstr("built from source package ")),
	 (if $q.n == (.name | @uri) and ($q.v | gsub("%2B"; "+")) == .versionInfo then "" else "purl:" + $p end)] |
	join(" ") | rtrimstr(" ")' "$SBOM" | sort >"$W/sbom"
if ! diff -u --label dpkg-query --label SBOM "$W/dpkg" "$W/sbom" >"$W/diff"; then
	cat "$W/diff" >&2
	echo "sbom-dpkg-check: $SBOM does not list $IMG's dpkg packages as dpkg-query reads them" >&2
	exit 1
fi
echo "sbom-dpkg-check: $(wc -l <"$W/dpkg") dpkg packages of $(basename "$IMG") listed by its SBOM, as dpkg-query reads them"
