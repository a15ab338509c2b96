#!/usr/bin/env python3
"""mkart.py - deterministic test artifacts for ingot (python3 stdlib only).

Every subcommand writes exactly one file, and the same arguments give the
same bytes on any machine: no timestamps, no user names, no host data,
sorted archive entries.  The files are small but *valid*: real tools read
them (kmod's modinfo, binutils' readelf, dpkg-deb, tar, xz, gzip).

SUBCOMMANDS
  ko    --out F --name nvidia --version V [--license L] [--flavor open|proprietary]
        [--vermagic S] [--field KEY=VALUE ...]
        ELF64 x86-64 relocatable kernel module with a .modinfo section
        (NUL-separated key=value strings), .gnu.linkonce.this_module,
        .symtab/.strtab and .shstrtab.  `modinfo -F version F` prints V.
        The license defaults from the flavor: open -> "Dual MIT/GPL" (NVIDIA
        open GPU kernel modules), proprietary -> "NVIDIA".
  so    --out F --soname S [--version-string STR ...]
        ELF64 x86-64 shared object with PT_LOAD, PT_DYNAMIC and DT_SONAME
        (`readelf -d F` shows the soname); each --version-string is
        embedded NUL-terminated in .rodata (e.g. "NCCL version 2.27.7").
  tar   --out F.tar|F.tar.gz|F.tar.xz --root DIR [--mtime N]
        GNU tar of DIR's contents: entries sorted by path, "./" prefixed,
        uid/gid 0 (root/root), fixed mtime (default 0), modes normalised to
        0755 (dirs, executables) or 0644; gzip header mtime 0, no file name.
  deb   --out F.deb --package P --version V [--arch amd64] --root DIR
        [--description S] [--depends S] [--mtime N]
        Debian binary package: ar archive of debian-binary, control.tar.xz
        (control, md5sums) and data.tar.xz (DIR's contents);
        `dpkg-deb -I F` and `dpkg-deb -c F` read it.
  blob  --out F --size N --seed S
        N pseudo-random bytes derived from S (SHAKE-256), every other 4 KiB
        block compressible text, so compressors have work of both kinds.

EXAMPLES
  mkart.py ko --out nvidia.ko --name nvidia --version 580.95.05 --flavor open
  mkart.py so --out libnccl.so.2.27.7 --soname libnccl.so.2 \\
      --version-string "NCCL version 2.27.7+cuda13.0"
  mkart.py deb --out fm.deb --package nvidia-fabricmanager-580 \\
      --version 580.95.05-1 --root fmroot
  mkart.py blob --out big.bin --size 1048576 --seed 7

Exit status: 0 written, 1 error, 2 usage error.
"""

import argparse
import gzip
import hashlib
import io
import lzma
import os
import stat
import struct
import sys
import tarfile

# ---------------------------------------------------------------- ELF ----

EM_X86_64 = 62
ET_REL, ET_DYN = 1, 3
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_HASH, SHT_DYNAMIC, SHT_DYNSYM = 1, 2, 3, 5, 6, 11
SHF_WRITE, SHF_ALLOC = 0x1, 0x2
PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_HASH, DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT, DT_SONAME = 0, 4, 5, 6, 10, 11, 14


def align(n, a):
    return (n + a - 1) // a * a


class StrTab:
    """An ELF string table: starts with NUL, returns offsets."""

    def __init__(self):
        self.data = bytearray(b"\0")
        self.index = {}

    def add(self, s):
        if s in self.index:
            return self.index[s]
        off = len(self.data)
        self.data += s.encode() + b"\0"
        self.index[s] = off
        return off


def elf_header(etype, phoff, phnum, shoff, shnum, shstrndx):
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    return ident + struct.pack("<HHIQQQIHHHHHH", etype, EM_X86_64, 1, 0, phoff, shoff, 0,
                               64, 56 if phnum else 0, phnum, 64, shnum, shstrndx)


def shdr(name, stype, flags, addr, off, size, link=0, info=0, addralign=1, entsize=0):
    return struct.pack("<IIQQQQIIQQ", name, stype, flags, addr, off, size, link, info,
                       addralign, entsize)


def sym(name, info, shndx, value=0, size=0):
    return struct.pack("<IBBHQQ", name, info, 0, shndx, value, size)


def layout(sections, start):
    """Place section bodies after `start`; returns (blob, offsets)."""
    out = bytearray()
    offs = []
    pos = start
    for body, a in sections:
        pad = align(pos, a) - pos
        out += bytes(pad)
        pos += pad
        offs.append(pos)
        out += body
        pos += len(body)
    return out, offs


def make_ko(name, version, license_, flavor, vermagic, extra):
    # an in-tree module (amdgpu) has no version= at all: --version ''
    fields = ([("version", version)] if version else []) + [("license", license_)]
    fields += extra
    if flavor == "open":
        # The open modules load the GSP firmware shipped with the driver.
        fields += [("firmware", "nvidia/%s/gsp_ga10x.bin" % version),
                   ("firmware", "nvidia/%s/gsp_tu10x.bin" % version)]
    src = hashlib.sha256(("%s %s %s" % (name, version, flavor)).encode()).hexdigest()
    fields += [("srcversion", src[:23].upper()), ("alias", "pci:v000010DEd*sv*sd*bc03sc00i00*"),
               ("depends", ""), ("retpoline", "Y"), ("name", name), ("vermagic", vermagic)]
    modinfo = b"".join(("%s=%s" % kv).encode() + b"\0" for kv in fields)

    # struct module: name[] sits at offset 24 on x86-64 (after state and list).
    this_module = bytearray(0x400)
    nb = name.encode()[:55]
    this_module[24:24 + len(nb)] = nb

    strtab = StrTab()
    shstr = StrTab()
    names = [shstr.add(s) for s in
             (".modinfo", ".gnu.linkonce.this_module", ".symtab", ".strtab", ".shstrtab")]
    # symbols: null, section symbols, __this_module (global object)
    syms = sym(0, 0, 0)
    syms += sym(0, 0x03, 1)  # STB_LOCAL, STT_SECTION, .modinfo
    syms += sym(0, 0x03, 2)
    syms += sym(strtab.add("__UNIQUE_ID_%s_version" % name), 0x01, 1, 0, len(version) + 9)
    n_local = 4
    syms += sym(strtab.add("__this_module"), 0x11, 2, 0, len(this_module))
    bodies = [(modinfo, 8), (bytes(this_module), 64), (syms, 8), (bytes(strtab.data), 1),
              (bytes(shstr.data), 1)]
    blob, offs = layout(bodies, 64)
    shoff = align(64 + len(blob), 8)
    sh = shdr(0, 0, 0, 0, 0, 0)
    sh += shdr(names[0], SHT_PROGBITS, SHF_ALLOC, 0, offs[0], len(modinfo), addralign=8)
    sh += shdr(names[1], SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 0, offs[1], len(this_module),
               addralign=64)
    sh += shdr(names[2], SHT_SYMTAB, 0, 0, offs[2], len(syms), link=4, info=n_local,
               addralign=8, entsize=24)
    sh += shdr(names[3], SHT_STRTAB, 0, 0, offs[3], len(strtab.data))
    sh += shdr(names[4], SHT_STRTAB, 0, 0, offs[4], len(shstr.data))
    out = elf_header(ET_REL, 0, 0, shoff, 6, 5) + blob
    out += bytes(shoff - len(out)) + sh
    return bytes(out)


def make_so(soname, strings):
    dynstr = StrTab()
    so_off = dynstr.add(soname)
    dynsym = sym(0, 0, 0)
    hashtab = struct.pack("<IIII", 1, 1, 0, 0)  # nbucket=1, nchain=1, bucket[0]=0, chain[0]=0
    rodata = b"".join(s.encode() + b"\0" for s in strings) or b"\0"
    shstr = StrTab()
    names = [shstr.add(s) for s in (".hash", ".dynsym", ".dynstr", ".rodata", ".dynamic",
                                    ".shstrtab")]
    phnum = 2
    start = 64 + 56 * phnum
    # Addresses equal file offsets (one PT_LOAD at vaddr 0) so the dynamic
    # table can point at its own sections before we know their offsets.
    pre = [(hashtab, 8), (dynsym, 8), (bytes(dynstr.data), 1), (rodata, 16)]
    _, offs = layout(pre, start)
    dyn_off = align(offs[3] + len(rodata), 8)
    dynamic = b"".join(struct.pack("<qQ", t, v) for t, v in (
        (DT_SONAME, so_off), (DT_HASH, offs[0]), (DT_STRTAB, offs[2]),
        (DT_SYMTAB, offs[1]), (DT_STRSZ, len(dynstr.data)), (DT_SYMENT, 24), (DT_NULL, 0)))
    blob, offs = layout(pre + [(dynamic, 8), (bytes(shstr.data), 1)], start)
    assert offs[4] == dyn_off
    load_end = offs[4] + len(dynamic)
    ph = struct.pack("<IIQQQQQQ", PT_LOAD, 0x6, 0, 0, 0, load_end, load_end, 0x1000)
    ph += struct.pack("<IIQQQQQQ", PT_DYNAMIC, 0x6, offs[4], offs[4], offs[4], len(dynamic),
                      len(dynamic), 8)
    shoff = align(start + len(blob), 8)
    sh = shdr(0, 0, 0, 0, 0, 0)
    sh += shdr(names[0], SHT_HASH, SHF_ALLOC, offs[0], offs[0], len(hashtab), link=2,
               addralign=8, entsize=4)
    sh += shdr(names[1], SHT_DYNSYM, SHF_ALLOC, offs[1], offs[1], len(dynsym), link=3, info=1,
               addralign=8, entsize=24)
    sh += shdr(names[2], SHT_STRTAB, SHF_ALLOC, offs[2], offs[2], len(dynstr.data))
    sh += shdr(names[3], SHT_PROGBITS, SHF_ALLOC, offs[3], offs[3], len(rodata), addralign=16)
    sh += shdr(names[4], SHT_DYNAMIC, SHF_ALLOC | SHF_WRITE, offs[4], offs[4], len(dynamic),
               link=3, addralign=8, entsize=16)
    sh += shdr(names[5], SHT_STRTAB, 0, 0, offs[5], len(shstr.data))
    out = elf_header(ET_DYN, 64, phnum, shoff, 7, 6) + ph + blob
    out += bytes(shoff - len(out)) + sh
    return bytes(out)

# ------------------------------------------------------------ archives ----


def walk(root):
    """(archive path, fs path) of root and everything under it, sorted by
    archive path byte order."""
    items = [("./", root)]
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            a = "./" + (n if rel == "." else rel + "/" + n)
            if os.path.isdir(p) and not os.path.islink(p):
                a += "/"
            items.append((a, p))
    items.sort(key=lambda x: x[0].encode())
    return items


def tar_bytes(root, mtime, extra=()):
    """GNU tar of root; extra = [(name, bytes)] regular files added too."""
    buf = io.BytesIO()
    entries = []
    for arc, path in walk(root) if root else [("./", None)]:
        entries.append((arc, path, None))
    for name, data in extra:
        entries.append(("./" + name, None, data))
    entries.sort(key=lambda x: x[0].encode())
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for arc, path, data in entries:
            name = arc.rstrip("/") if arc != "./" else "."
            if arc == "./":
                name = "./"
            ti = tarfile.TarInfo(name)
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = "root"
            ti.mtime = mtime
            if data is not None:
                ti.type, ti.mode, ti.size = tarfile.REGTYPE, 0o644, len(data)
                tf.addfile(ti, io.BytesIO(data))
                continue
            st = os.lstat(path) if path else None
            if path is None or stat.S_ISDIR(st.st_mode):
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                tf.addfile(ti)
            elif stat.S_ISLNK(st.st_mode):
                ti.type, ti.mode, ti.linkname = tarfile.SYMTYPE, 0o777, os.readlink(path)
                tf.addfile(ti)
            elif stat.S_ISREG(st.st_mode):
                ti.type = tarfile.REGTYPE
                ti.mode = 0o755 if st.st_mode & 0o111 else 0o644
                ti.size = st.st_size
                with open(path, "rb") as f:
                    tf.addfile(ti, f)
            else:
                raise SystemExit("mkart: %s: only directories, files and symlinks" % path)
    return buf.getvalue()


def compress(data, name):
    if name.endswith(".gz") or name.endswith(".tgz"):
        out = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as g:
            g.write(data)
        return out.getvalue()
    if name.endswith(".xz"):
        return lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6)
    return data


def dir_size_kib(root):
    total = 0
    for _, p in walk(root):
        if os.path.isfile(p) and not os.path.islink(p):
            total += os.path.getsize(p)
    return (total + 1023) // 1024


def md5sums(root):
    lines = []
    for arc, p in walk(root):
        if os.path.isfile(p) and not os.path.islink(p):
            with open(p, "rb") as f:
                lines.append("%s  %s\n" % (hashlib.md5(f.read()).hexdigest(), arc[2:]))
    return "".join(lines).encode()


def ar_member(name, data, mtime):
    hdr = "%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (name, mtime, 0, 0, "100644", len(data))
    assert len(hdr) == 60
    return hdr.encode() + data + (b"\n" if len(data) % 2 else b"")


def make_deb(a):
    control = ["Package: %s" % a.package, "Version: %s" % a.version,
               "Architecture: %s" % a.arch,
               "Maintainer: ingot test artifacts <noreply@example.invalid>",
               "Installed-Size: %d" % dir_size_kib(a.root)]
    if a.depends:
        control.append("Depends: %s" % a.depends)
    control += ["Section: misc", "Priority: optional",
                "Description: %s" % (a.description or a.package + " (ingot test artifact)"),
                " Generated by ingot's scripts/mkart.py for tests; not a real package."]
    ctl = ("\n".join(control) + "\n").encode()
    ctl_tar = tar_bytes(None, a.mtime, [("control", ctl), ("md5sums", md5sums(a.root))])
    data_tar = tar_bytes(a.root, a.mtime)
    out = b"!<arch>\n"
    out += ar_member("debian-binary", b"2.0\n", a.mtime)
    out += ar_member("control.tar.xz", compress(ctl_tar, ".xz"), a.mtime)
    out += ar_member("data.tar.xz", compress(data_tar, ".xz"), a.mtime)
    return out


def make_blob(size, seed):
    out = bytearray()
    text = ("ingot blob seed=%s " % seed).encode() * 256
    block = 0
    while len(out) < size:
        if block % 2 == 0:
            out += hashlib.shake_256(("%s:%d" % (seed, block)).encode()).digest(4096)
        else:
            out += text[:4096]
        block += 1
    return bytes(out[:size])

# ---------------------------------------------------------------- main ----


def write_out(path, data):
    d = os.path.dirname(path) or "."
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, ".%s.tmp%d" % (os.path.basename(path), os.getpid()))
    with open(tmp, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def main(argv):
    p = argparse.ArgumentParser(prog="mkart.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    k = sub.add_parser("ko", help="kernel module with .modinfo")
    k.add_argument("--out", required=True)
    k.add_argument("--name", default="nvidia")
    k.add_argument("--version", required=True)
    k.add_argument("--license")
    k.add_argument("--flavor", choices=("open", "proprietary"), default="open")
    k.add_argument("--vermagic", default="6.8.0-45-generic SMP preempt mod_unload modversions ")
    k.add_argument("--field", action="append", default=[], metavar="KEY=VALUE")
    s = sub.add_parser("so", help="shared object with DT_SONAME")
    s.add_argument("--out", required=True)
    s.add_argument("--soname", required=True)
    s.add_argument("--version-string", action="append", default=[])
    t = sub.add_parser("tar", help="deterministic tar[.gz|.xz] of a directory")
    t.add_argument("--out", required=True)
    t.add_argument("--root", required=True)
    t.add_argument("--mtime", type=int, default=0)
    d = sub.add_parser("deb", help="Debian binary package")
    d.add_argument("--out", required=True)
    d.add_argument("--package", required=True)
    d.add_argument("--version", required=True)
    d.add_argument("--arch", default="amd64")
    d.add_argument("--root", required=True)
    d.add_argument("--description")
    d.add_argument("--depends")
    d.add_argument("--mtime", type=int, default=0)
    b = sub.add_parser("blob", help="pseudo-random, partly compressible bytes")
    b.add_argument("--out", required=True)
    b.add_argument("--size", type=int, required=True)
    b.add_argument("--seed", required=True)
    a = p.parse_args(argv)

    try:
        if a.cmd == "ko":
            lic = a.license or ("Dual MIT/GPL" if a.flavor == "open" else "NVIDIA")
            extra = []
            for f in a.field:
                if "=" not in f:
                    p.error("--field wants KEY=VALUE, got %r" % f)
                extra.append(tuple(f.split("=", 1)))
            data = make_ko(a.name, a.version, lic, a.flavor, a.vermagic, extra)
        elif a.cmd == "so":
            data = make_so(a.soname, a.version_string)
        elif a.cmd == "tar":
            if not os.path.isdir(a.root):
                p.error("--root %s: not a directory" % a.root)
            data = compress(tar_bytes(a.root, a.mtime), a.out)
        elif a.cmd == "deb":
            if not os.path.isdir(a.root):
                p.error("--root %s: not a directory" % a.root)
            data = make_deb(a)
        else:
            if a.size < 0:
                p.error("--size must be >= 0")
            data = make_blob(a.size, a.seed)
        write_out(a.out, data)
    except OSError as ex:
        print("mkart: %s" % ex, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
