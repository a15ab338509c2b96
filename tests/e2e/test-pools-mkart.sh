#!/bin/bash
# scripts/mkart.py: each subcommand is deterministic (same bytes under a
# different umask and TZ) and its output is accepted by the real tools:
# kmod's modinfo, binutils' readelf, GNU tar, gzip, xz, dpkg-deb.
. "$(dirname "$0")/lib.sh"
for tool in readelf dpkg-deb tar xz gzip; do
	command -v $tool >/dev/null || skip "$tool not installed"
done
MODINFO=$(command -v modinfo || ls /usr/sbin/modinfo /sbin/modinfo 2>/dev/null | head -n 1 || true)
[ -n "$MODINFO" ] || skip "kmod's modinfo not installed"
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
MK="$PY $SRC/scripts/mkart.py"

# the same inputs in two runs with different umask and TZ
gen() { # DIR
	mkdir -p "$1/root/usr/bin" "$1/root/etc/x"
	printf 'a\n' >"$1/root/etc/x/conf"
	printf '#!/bin/sh\n' >"$1/root/usr/bin/tool"
	chmod +x "$1/root/usr/bin/tool"
	ln -s ../etc/x/conf "$1/root/usr/conf"
	$MK ko --out "$1/nvidia.ko" --name nvidia --version 580.95.05 --flavor open
	$MK ko --out "$1/prop.ko" --name nvidia --version 580.95.05 --flavor proprietary
	$MK so --out "$1/libnccl.so.2.27.7" --soname libnccl.so.2 --version-string "NCCL version 2.27.7+cuda13.0"
	$MK tar --out "$1/a.tar.gz" --root "$1/root" --mtime 1760000000
	$MK tar --out "$1/a.tar.xz" --root "$1/root"
	$MK deb --out "$1/p.deb" --package nvidia-container-toolkit --version 1.17.8-1 --root "$1/root"
	$MK blob --out "$1/b.bin" --size 100000 --seed 7
}
(umask 022; TZ=UTC gen "$T/a")
(umask 077; TZ=Asia/Tokyo gen "$T/b")
for f in nvidia.ko prop.ko libnccl.so.2.27.7 a.tar.gz a.tar.xz p.deb b.bin; do
	assert_eq "$(sha256 "$T/a/$f")" "$(sha256 "$T/b/$f")" "$f digest across runs"
done
A=$T/a

# ko: kmod reads the .modinfo; the flavor decides the license
assert_eq 580.95.05 "$("$MODINFO" -F version "$A/nvidia.ko")" "modinfo version"
assert_eq "Dual MIT/GPL" "$("$MODINFO" -F license "$A/nvidia.ko")" "open license"
assert_eq NVIDIA "$("$MODINFO" -F license "$A/prop.ko")" "proprietary license"
assert_eq nvidia "$("$MODINFO" -F name "$A/nvidia.ko")" "modinfo name"
assert_contains "$(readelf -h "$A/nvidia.ko")" "REL (Relocatable file)"
assert_contains "$(readelf -W -S "$A/nvidia.ko")" ".gnu.linkonce.this_module"
[ -z "$(readelf -a "$A/nvidia.ko" 2>&1 >/dev/null)" ] || fail "readelf warns about nvidia.ko"

# so: a shared object with its soname and the version banner
assert_contains "$(readelf -h "$A/libnccl.so.2.27.7")" "DYN (Shared object file)"
assert_contains "$(readelf -d "$A/libnccl.so.2.27.7")" "Library soname: [libnccl.so.2]"
[ -z "$(readelf -a "$A/libnccl.so.2.27.7" 2>&1 >/dev/null)" ] || fail "readelf warns about the .so"
grep -q "NCCL version 2.27.7+cuda13.0" "$A/libnccl.so.2.27.7" || fail "banner missing"

# tar: sorted, root-owned, fixed mtime, normalised modes; gzip mtime 0
listing=$(TZ=UTC tar -tvzf "$A/a.tar.gz")
want="drwxr-xr-x root/root         0 2025-10-09 08:53 ./
drwxr-xr-x root/root         0 2025-10-09 08:53 ./etc/
drwxr-xr-x root/root         0 2025-10-09 08:53 ./etc/x/
-rw-r--r-- root/root         2 2025-10-09 08:53 ./etc/x/conf
drwxr-xr-x root/root         0 2025-10-09 08:53 ./usr/
drwxr-xr-x root/root         0 2025-10-09 08:53 ./usr/bin/
-rwxr-xr-x root/root        10 2025-10-09 08:53 ./usr/bin/tool
lrwxrwxrwx root/root         0 2025-10-09 08:53 ./usr/conf -> ../etc/x/conf"
assert_eq "$want" "$listing" "tar listing"
assert_eq "00000000" "$(od -An -tx1 -j4 -N4 "$A/a.tar.gz" | tr -d ' \n')" "gzip header mtime"
xz -t "$A/a.tar.xz" || fail "xz -t"
assert_eq 8 "$(tar -tJf "$A/a.tar.xz" | wc -l)" "xz tar entries"

# deb: dpkg-deb reads control and data
assert_eq 1.17.8-1 "$(dpkg-deb -f "$A/p.deb" Version)" "deb Version"
assert_eq nvidia-container-toolkit "$(dpkg-deb -f "$A/p.deb" Package)" "deb Package"
assert_contains "$(dpkg-deb -c "$A/p.deb")" "./usr/bin/tool"
dpkg-deb -I "$A/p.deb" >/dev/null || fail "dpkg-deb -I"

# blob: the size asked for, half of it compressible
assert_eq 100000 "$(stat -c %s "$A/b.bin")" "blob size"
z=$(xz -c "$A/b.bin" | wc -c)
[ "$z" -gt 40000 ] && [ "$z" -lt 70000 ] || fail "blob compresses to $z bytes, expected about half"

# usage errors exit 2 and say why
rc=0; $MK ko --out "$T/x.ko" 2>"$T/err" || rc=$?
assert_eq 2 "$rc" "missing --version"
assert_contains "$(cat "$T/err")" "the following arguments are required: --version"
$MK --help | grep -q "SUBCOMMANDS" || fail "mkart.py --help"
