#!/bin/sh
# Install ingot's boot integration (called by `make install`):
#   verify/boot/install.sh DESTDIR PREFIX
# DESTDIR/lib/systemd/system/ingot-verify.service   (ExecStart uses PREFIX/bin/ingot)
# DESTDIR/etc/default/ingot-verify                   (not overwritten if present)
# DESTDIR/PREFIX/libexec/ingot/ingot-slurm-health
# DESTDIR/PREFIX/share/ingot/report.schema.json
# DESTDIR/etc/kubernetes/node-feature-discovery/features.d/ (for --nfd)
set -eu
if [ $# -ne 2 ]; then
	echo "usage: verify/boot/install.sh DESTDIR PREFIX" >&2
	exit 64
fi
DESTDIR=$1 PREFIX=$2
HERE=$(cd "$(dirname "$0")" && pwd)
UNITDIR=$DESTDIR/lib/systemd/system

install -d -m 0755 "$UNITDIR" "$DESTDIR$PREFIX/libexec/ingot" "$DESTDIR$PREFIX/share/ingot" \
	"$DESTDIR/etc/default" "$DESTDIR/etc/ingot" \
	"$DESTDIR/etc/kubernetes/node-feature-discovery/features.d"
sed "s|@BINDIR@|$PREFIX/bin|g" "$HERE/ingot-verify.service" >"$UNITDIR/.ingot-verify.service.tmp"
chmod 0644 "$UNITDIR/.ingot-verify.service.tmp"
mv -f "$UNITDIR/.ingot-verify.service.tmp" "$UNITDIR/ingot-verify.service"
[ -e "$DESTDIR/etc/default/ingot-verify" ] ||
	install -m 0644 "$HERE/ingot-verify.default" "$DESTDIR/etc/default/ingot-verify"
install -m 0755 "$HERE/ingot-slurm-health" "$DESTDIR$PREFIX/libexec/ingot/ingot-slurm-health"
install -m 0644 "$HERE/../report.schema.json" "$DESTDIR$PREFIX/share/ingot/report.schema.json"
echo "installed ingot-verify.service, ingot-slurm-health and report.schema.json under ${DESTDIR:-/}"
