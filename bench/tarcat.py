#!/usr/bin/env python3
"""tarcat.py ART... : the artifacts' tar streams back to back on stdout, as
one archive (for the bench's tar2sqfs row, docs/bench.md).

`cat a.tar b.tar` is not one archive: the first one's end-of-archive
blocks end it, and tar2sqfs has no --ignore-zeros.  So each archive's
members are copied (header and data, as they are) up to its end marker,
and one marker closes the whole.  A directory already given by an earlier
archive is left out: tar2sqfs refuses a second entry for a path ("File
exists"); the bench's artifacts give their shared directories the same
mode, so the tree is the same.  .gz artifacts are decompressed as
they stream (zlib, like zcat)."""
import gzip, sys

BLOCK = 512


def members(f, out, dirs):
    while True:
        head = f.read(BLOCK)
        if len(head) < BLOCK or head == bytes(BLOCK):
            return
        field = head[124:136]
        if field[0] & 0x80:          # base-256 size (GNU)
            size = int.from_bytes(field[1:], "big")
        else:
            size = int(field.rstrip(b"\0 ").decode() or "0", 8)
        left = (size + BLOCK - 1) // BLOCK * BLOCK
        if head[156:157] == b"5":
            name = head[345:500].rstrip(b"\0") + b"/" + head[0:100].rstrip(b"\0")
            name = name.strip(b"/")
            if name in dirs:
                continue
            dirs.add(name)
        out.write(head)
        while left:
            chunk = f.read(min(left, 1 << 20))
            if not chunk:
                raise SystemExit("tarcat: truncated archive")
            out.write(chunk)
            left -= len(chunk)


def main(paths):
    out, dirs = sys.stdout.buffer, set()
    for p in paths:
        with (gzip.open(p, "rb") if p.endswith(".gz") else open(p, "rb")) as f:
            members(f, out, dirs)
    out.write(bytes(2 * BLOCK))
    out.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
