#!/bin/bash
# Hostile boot inputs (recipe boot:, issue 24): each refused with one line,
# at once and in bounded memory (peak RSS < 64 MiB, /usr/bin/time): a FIFO
# or /dev/zero as boot.init, a pinned kernel package of a few KiB whose
# modules declare 400 MiB each, an init file over the boot inputs' limit,
# a module listed twice.  Nothing is written.
. "$(dirname "$0")/lib.sh"
STUB=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
INIT=$BUILD_DIR/ingot-init
[ -f "$STUB" ] || skip "systemd-boot-efi missing"
[ -x /usr/bin/time ] || skip "no /usr/bin/time"
grep -q __asan_init "$INGOT" && skip "sanitizer build: RSS not meaningful"
cd "$T"

# A linux-image-like .deb: vmlinuz, then three modules whose sparse tar
# entries declare 400 MiB each (a few KiB on disk, pinned correctly).
python3 - "$STUB" <<'PY'
import gzip, io, sys, tarfile
def ar(members):
    out = b"!<arch>\n"
    for name, data in members:
        out += b"%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (name.encode(), 0, 0, 0, b"100644", len(data))
        out += data + (b"\n" if len(data) % 2 else b"")
    return out
def tar(entries, fmt=tarfile.GNU_FORMAT):
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=fmt) as t:
        for name, data, sparse in entries:
            ti = tarfile.TarInfo(name)
            ti.mtime = 1
            ti.size = len(data)
            if sparse:
                ti.pax_headers = {"GNU.sparse.major": "0", "GNU.sparse.minor": "1", "GNU.sparse.name": name,
                                  "GNU.sparse.size": str(sparse), "GNU.sparse.map": "%d,%d" % (sparse - len(data), len(data))}
            t.addfile(ti, io.BytesIO(data))
    return bio.getvalue()
ctl = gzip.compress(tar([("./control", b"Package: linux-image-x\nVersion: 1\nArchitecture: amd64\n", 0)]), mtime=0)
vmlinuz = open(sys.argv[1], "rb").read()
mods = [("./lib/modules/6.1.0-x/kernel/drivers/%s.ko" % m, b"x" * 10, 400 << 20) for m in ("a", "b", "c")]
data = gzip.compress(tar([("./boot/vmlinuz-6.1.0-x", vmlinuz, 0)] + mods, fmt=tarfile.PAX_FORMAT), mtime=0)
open("bomb.deb", "wb").write(ar([("debian-binary", b"2.0\n"), ("control.tar.gz", ctl), ("data.tar.gz", data)]))
PY
[ "$(stat -c %s bomb.deb)" -lt $((64 << 10)) ] || fail "the kernel package is not small"
mkfifo init.fifo
truncate -s 100M big-init
ANY=$(printf anything | sha256sum | cut -d' ' -f1)
recipe() { # FILE KERNEL KERNEL_SHA INIT INIT_SHA [MODULES]
	cat > "$1" <<YAML
name: hostile
version: "1"
epoch: 1700000000
files:
  - {path: /etc/hello, content: "hello\n"}
boot:
  kernel: {source: $2, sha256: $3}
  stub: {source: $STUB, sha256: $(sha256 "$STUB")}
  init: {source: $4, sha256: $5}
  modules: [${6:-}]
YAML
}
recipe fifo.yaml "$STUB" "$(sha256 "$STUB")" "$T/init.fifo" "$ANY"
recipe zero.yaml "$STUB" "$(sha256 "$STUB")" /dev/zero "$ANY"
recipe dir.yaml "$STUB" "$(sha256 "$STUB")" "$T" "$ANY"
recipe bigmods.yaml "$T/bomb.deb" "$(sha256 bomb.deb)" "$INIT" "$(sha256 "$INIT")" "a, b, c"
recipe biginit.yaml "$STUB" "$(sha256 "$STUB")" "$T/big-init" "$ANY"
recipe twice.yaml "$T/bomb.deb" "$(sha256 bomb.deb)" "$INIT" "$(sha256 "$INIT")" "a, b, a"
recipe twice2.yaml "$T/bomb.deb" "$(sha256 bomb.deb)" "$INIT" "$(sha256 "$INIT")" "dm-mod, dm_mod"

refused() { # NAME RECIPE MESSAGE
	local rc=0 rss out
	out=$(timeout 30 /usr/bin/time -f '%M' -o "$1.rss" "$INGOT" build "$2" -o "out-$1" --store store \
		--no-lint 2>&1) || rc=$?
	rss=$(tail -n 1 "$1.rss")
	assert_eq 1 "$rc" "$1: exit status ($out)"
	assert_contains "$out" "$3" "$1: message"
	[ "$(printf '%s\n' "$out" | grep -c .)" = 1 ] || fail "$1: expected one line, got: $out"
	[ ! -e "out-$1/hostile.efi" ] || fail "$1: a UKI was written"
	[ "$rss" -lt $((64 << 10)) ] || fail "$1: peak RSS ${rss} KiB, expected < 65536 KiB"
	echo "ok   $1: refused, peak RSS ${rss} KiB"
}
refused fifo fifo.yaml "boot.init: $T/init.fifo: expected a regular file, got a FIFO"
refused zero zero.yaml "boot.init: /dev/zero: expected a regular file, got a character device"
refused dir dir.yaml "boot.init: $T: expected a regular file, got a directory"
refused bigmods bigmods.yaml "boot.kernel: $T/bomb.deb: lib/modules/6.1.0-x/kernel/drivers/a.ko: 419430400 bytes: expected the boot inputs to take at most 48 MiB together"
refused biginit biginit.yaml "boot.init: $T/big-init: 104857600 bytes: expected the boot inputs to take at most 48 MiB together"
refused twice twice.yaml "boot.modules[2]: expected each module once, got 'a' twice (boot.modules[0] is 'a')"
refused twice2 twice2.yaml "boot.modules[1]: expected each module once, got 'dm_mod' twice (boot.modules[0] is 'dm-mod')"
