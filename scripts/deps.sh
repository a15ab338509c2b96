#!/bin/sh
# Make sure the Debian packages ingot builds and tests with are present.
# As root: install what is missing.  Otherwise: print the exact apt line.
set -eu

PKGS="build-essential pkg-config libarchive-dev libisal-dev libyaml-dev libsquashfs-dev libssl-dev
libtss2-dev libcmocka-dev libjansson-dev squashfs-tools squashfs-tools-ng cryptsetup-bin
swtpm swtpm-tools tpm2-tools zstd xz-utils binutils kmod jq xxd time python3 python3-jsonschema openssl chromium valgrind clang libclang-rt-14-dev
groff-base man-db mandoc systemd
python3-click python3-license-expression python3-ply python3-yaml python3-rdflib
python3-semantic-version python3-uritools python3-xmltodict
qemu-system-x86 ovmf systemd-boot-efi sbsigntool python3-pefile mmdebstrap patch isal strace
libmicrohttpd-dev libsqlite3-dev sqlite3 libcurl4-openssl-dev libsystemd-dev
libpq-dev postgresql-15
slurmctld slurmd slurm-client munge socat"
# The Sigstore interop test builds bundles with npm's @sigstore/sign: an
# npm already on PATH (e.g. bundled with another Node) is used as it is.
command -v npm >/dev/null 2>&1 || PKGS="$PKGS nodejs npm"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	echo "deps: installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
	exit 0
fi
echo "deps: missing Debian packages; run as root:" >&2
echo "  apt-get install -y$missing" >&2
exit 1
