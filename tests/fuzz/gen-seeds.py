#!/usr/bin/env python3
"""Regenerate the seed corpora in tests/fuzz/corpus/ (deterministic).

   tests/fuzz/gen-seeds.py [INGOT]

Seeds are small valid (and a few deliberately hostile) inputs for each
harness; libFuzzer mutates from there.  The recipe and rules seeds are
copies of the bundled recipes and rule files; the envelope seeds need a
built `ingot` (default build/ingot) to sign a manifest."""
import gzip, hashlib, io, lzma, json, os, shutil, struct, subprocess, sys, tarfile, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")


def out(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def recipes():
    for f in sorted(os.listdir(os.path.join(ROOT, "recipes"))):
        if f.endswith(".yaml"):
            with open(os.path.join(ROOT, "recipes", f), "rb") as fh:
                out("fuzz_recipe", f, fh.read())
    out("fuzz_recipe", "minimal.yaml", b'name: x\nversion: "1"\nepoch: 0\ndirectories:\n  - path: /opt\n')
    out("fuzz_recipe", "inline.yaml",
        b'name: x\nversion: "1"\nepoch: 0\nfiles:\n  - path: /etc/a\n    content: "hi\\n"\n    mode: 0600\n'
        b'directories:\n  - path: /var/x\nsymlinks:\n  - path: /a\n    target: /etc/a\n')


def rules():
    d = os.path.join(ROOT, "recipes", "rules")
    for f in sorted(os.listdir(d)):
        with open(os.path.join(d, f), "rb") as fh:
            out("fuzz_rules", f, fh.read())
    out("fuzz_rules", "cond.txt", b"vendor == nvidia and (cuda.version >= 12.0 or not has nccl) and gpu.arch in [hopper, blackwell]")


def tar_bytes(entries, compress=""):
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=tarfile.GNU_FORMAT) as t:
        for name, kind, payload in entries:
            ti = tarfile.TarInfo(name)
            ti.mtime = 1
            ti.mode = 0o755 if kind == "dir" else 0o644
            if kind == "file":
                ti.size = len(payload)
                t.addfile(ti, io.BytesIO(payload))
                continue
            ti.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE,
                       "chr": tarfile.CHRTYPE, "fifo": tarfile.FIFOTYPE}[kind]
            if kind in ("sym", "hard"):
                ti.linkname = payload
            if kind == "chr":
                ti.devmajor, ti.devminor = 1, 3
            t.addfile(ti)
    raw = bio.getvalue()
    # compressed here, not by tarfile, so no timestamp gets into the header
    if compress == "gz":
        return gzip.compress(raw, mtime=0)
    if compress == "xz":
        return lzma.compress(raw)
    return raw


def ar_member(name, data):
    hdr = b"%-16s%-12d%-6d%-6d%-8o%-10d`\n" % (name.encode(), 0, 0, 0, 0o100644, len(data))
    return hdr + data + (b"\n" if len(data) % 2 else b"")


def deb_bytes(entries):
    return (b"!<arch>\n" + ar_member("debian-binary", b"2.0\n") +
            ar_member("control.tar.gz", tar_bytes([("./control", "file", b"Package: x\nVersion: 1\n")], "gz")) +
            ar_member("data.tar.gz", tar_bytes(entries, "gz")))


def unpack():
    good = [("usr", "dir", None), ("usr/lib", "dir", None),
            ("usr/lib/libx.so.1.2", "file", b"\x7fELF" + b"x" * 100),
            ("usr/lib/libx.so.1", "sym", "libx.so.1.2"),
            ("usr/lib/libx.so", "hard", "usr/lib/libx.so.1.2"),
            ("usr/include/x.h", "file", b"#define X 1\n")]
    out("fuzz_unpack", "tar-plain", b"\x00" + tar_bytes(good))
    out("fuzz_unpack", "tar-gz-strip", b"\x04" + tar_bytes([("pkg/" + n, k, p if k != "hard" else "pkg/" + p) for n, k, p in good], "gz"))
    out("fuzz_unpack", "tar-xz-dest", b"\x02" + tar_bytes(good, "xz"))
    out("fuzz_unpack", "tar-dev", b"\x08" + tar_bytes([("dev/null", "chr", None), ("run/p", "fifo", None)]))
    out("fuzz_unpack", "tar-escape", b"\x00" + tar_bytes([("../evil", "file", b"x"), ("a", "sym", "/etc"), ("a/b", "file", b"y")]))
    out("fuzz_unpack", "tar-dup", b"\x10" + tar_bytes([("a", "file", b"1"), ("a", "file", b"2")]))
    out("fuzz_unpack", "deb", b"\x01" + deb_bytes(good))


def quote():
    """TPMS_ATTEST of type TPM_ST_ATTEST_QUOTE (big-endian, as tss2-mu
    marshals it) + the PCR values JSON; nonce = 32 x 0x11."""
    nonce = b"\x11" * 32
    pcr15 = hashlib.sha256(b"ingot").digest()
    pcr0 = b"\0" * 32
    def attest(sel_bytes, values, extra=nonce, magic=0xff544347, typ=0x8018):
        digest = hashlib.sha256(b"".join(values)).digest()
        a = struct.pack(">IH", magic, typ)
        a += struct.pack(">H", 34) + b"\x00\x0b" + b"\x22" * 32          # qualifiedSigner
        a += struct.pack(">H", len(extra)) + extra                        # extraData
        a += struct.pack(">QIIB", 1000, 1, 0, 1)                          # clockInfo
        a += struct.pack(">Q", 0x2020)                                    # firmwareVersion
        a += struct.pack(">I", 1) + struct.pack(">HB", 0x000b, 3) + sel_bytes   # TPML_PCR_SELECTION
        a += struct.pack(">H", len(digest)) + digest
        return a
    def seed(name, a, pcrs):
        out("fuzz_quote", name, struct.pack(">H", len(a)) + a + json.dumps(pcrs, sort_keys=True).encode())
    seed("pcr15", attest(b"\x00\x80\x00", [pcr15]), {"sha256": {"15": pcr15.hex()}})
    seed("pcr0-15", attest(b"\x01\x80\x00", [pcr0, pcr15]), {"sha256": {"0": pcr0.hex(), "15": pcr15.hex()}})
    seed("wrong-nonce", attest(b"\x00\x80\x00", [pcr15], extra=b"\x22" * 32), {"sha256": {"15": pcr15.hex()}})
    seed("not-generated", attest(b"\x00\x80\x00", [pcr15], magic=0xff544348), {"sha256": {"15": pcr15.hex()}})


def eventlog():
    d = os.path.join(ROOT, "tests", "fixtures", "tcg-eventlogs")
    for f in sorted(os.listdir(d)):
        if f.endswith(".bin"):
            shutil.copy(os.path.join(d, f), os.path.join(CORPUS, "fuzz_eventlog", f))


MANIFEST = {
    "schema": "ingot.manifest/v1", "ingot_version": "0.1.0",
    "recipe": {"name": "demo", "version": "1", "file": "demo.yaml", "sha256": "1" * 64},
    "epoch": 0, "serial": 7, "expires": "2027-01-01T00:00:00Z", "tuple": None,
    "artifacts": [{"name": "a", "kind": "tar", "source": "a.tar", "sha256": "6" * 64, "size": 10}],
    "files": [{"path": "/etc", "type": "dir", "mode": "0755", "uid": 0, "gid": 0},
              {"path": "/etc/a", "type": "file", "mode": "0644", "uid": 0, "gid": 0, "size": 3, "sha256": "7" * 64},
              {"path": "/etc/l", "type": "symlink", "mode": "0777", "uid": 0, "gid": 0, "target": "a"}],
    "image": {"file": "demo.sqfs", "sha256": "2" * 64, "size": 4096, "compression": "zstd", "level": 0, "block_size": 131072},
    "verity": {"file": "demo.verity", "format": 1, "hash_algorithm": "sha256", "data_block_size": 4096,
               "hash_block_size": 4096, "data_blocks": 1, "hash_offset": 0, "salt": "33",
               "root_hash": "4" * 64, "uuid": "x"},
    "measurement": {"pcr": 15, "event_type": 13, "event_data": "ingot:v1", "content_digest": "5" * 64,
                    "digests": {}, "predicted": {}},
}


def envelope(ingot):
    statement = {"_type": "https://in-toto.io/Statement/v1",
                 "subject": [{"name": "demo.sqfs", "digest": {"sha256": "2" * 64}}],
                 "predicateType": "https://ingot.dev/manifest/v1", "predicate": MANIFEST}
    payload = json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
    out("fuzz_envelope", "signed-statement", b"\x01" + payload)
    old = dict(statement, predicate=dict(MANIFEST, serial=1))
    out("fuzz_envelope", "signed-rollback", b"\x01" + json.dumps(old, sort_keys=True).encode())
    if not ingot or not os.access(ingot, os.X_OK):
        print("gen-seeds: no ingot binary; envelope file seeds skipped", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as t:
        with open(os.path.join(t, "m.json"), "w") as f:
            json.dump(MANIFEST, f)
        subprocess.run([ingot, "keys", "generate", "-o", os.path.join(t, "k")], check=True, capture_output=True)
        subprocess.run([ingot, "sign", os.path.join(t, "m.json"), "--key", os.path.join(t, "k.key"),
                        "-o", os.path.join(t, "e.json")], check=True, capture_output=True)
        with open(os.path.join(t, "e.json"), "rb") as f:
            out("fuzz_envelope", "envelope", b"\x00" + f.read())


def modinfo():
    with tempfile.TemporaryDirectory() as t:
        ko = os.path.join(t, "nvidia.ko")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "mkart.py"), "ko", "--out", ko,
                        "--name", "nvidia", "--version", "580.95.05", "--flavor", "open"], check=True)
        with open(ko, "rb") as f:
            data = f.read()
    out("fuzz_modinfo", "nvidia.ko", data)
    out("fuzz_modinfo", "nvidia.ko.xz", lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32))
    out("fuzz_modinfo", "nvidia.ko.gz", gzip.compress(data, mtime=0))
    # the section table far past the end
    out("fuzz_modinfo", "far-table", data[:40] + struct.pack("<Q", 1 << 33) + data[48:])


def pe_image(nsections=2, file_align=0x200, sect_align=0x1000, raw=None, cert=False):
    """A minimal PE32+ image shaped like systemd-stub: room in the headers
    for four more section headers, a COFF symbol table at the end."""
    opt_size, sec_off, hdrs = 240, 0x40 + 4 + 20 + 240, 0x400
    secs = [(b".text", 0x1000, 0x100, 0x200, 0x400), (b".data", 0x2000, 0x80, 0x200, 0x600)]
    secs = (secs + secs)[:nsections]
    if raw is not None:
        secs = [(n, va, vs, raw, ro) for n, va, vs, _, ro in secs]
    body_end = 0x800
    symtab = body_end
    img = bytearray(body_end)
    img[0:2] = b"MZ"
    struct.pack_into("<I", img, 0x3c, 0x40)
    img[0x40:0x44] = b"PE\0\0"
    struct.pack_into("<HHIIIHH", img, 0x44, 0x8664, len(secs), 0, symtab, 1, opt_size, 0x22)
    o = 0x58
    struct.pack_into("<H", img, o, 0x20b)
    struct.pack_into("<II", img, o + 32, sect_align, file_align)
    struct.pack_into("<II", img, o + 56, 0x3000, hdrs)
    struct.pack_into("<I", img, o + 108, 16)
    if cert:
        struct.pack_into("<II", img, o + 112 + 8 * 4, body_end, 18)
    for i, (name, va, vs, rs, ro) in enumerate(secs):
        struct.pack_into("<8sIIII12xI", img, sec_off + 40 * i, name, vs, va, rs, ro, 0x60000020)
    for i in range(0x400, body_end):
        img[i] = (i * 7) & 0xff
    return bytes(img) + b"_start\0\0" + bytes(10)


def pe():
    out("fuzz_pe", "stub.efi", pe_image())
    # the hostile stubs of issue 24: each refused by the UKI writer
    out("fuzz_pe", "no-sections.efi", pe_image(nsections=0))
    out("fuzz_pe", "no-section-data.efi", pe_image(raw=0))
    out("fuzz_pe", "falign-2g.efi", pe_image(file_align=0x80000000))
    out("fuzz_pe", "falign-0.efi", pe_image(file_align=0))
    out("fuzz_pe", "salign-small.efi", pe_image(sect_align=0x100))
    out("fuzz_pe", "signed.efi", pe_image(cert=True))
    out("fuzz_pe", "four-sections.efi", pe_image(nsections=4))
def enroll():
    """fuzz_enroll: mode byte, then a request (0), an AK public area (1), an answer (2)."""
    gx = bytes.fromhex("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296")
    gy = bytes.fromhex("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")
    area = struct.pack(">HHIH", 0x0023, 0x000B, 0x00050472, 0)
    area += struct.pack(">HHHHH", 0x0010, 0x0018, 0x000B, 0x0003, 0x0010)
    area += struct.pack(">H", 32) + gx + struct.pack(">H", 32) + gy
    ak = struct.pack(">H", len(area)) + area
    req = {"format": "ingot.enroll-request/v1", "node": "node-1", "ek_certificate": "MAA=",
           "ak_public": __import__("base64").b64encode(ak).decode()}
    out("fuzz_enroll", "request", b"\x00" + json.dumps(req, sort_keys=True).encode())
    out("fuzz_enroll", "ak-public", b"\x01" + ak)
    out("fuzz_enroll", "ak-public-decrypt", b"\x01" + ak[:6] + struct.pack(">I", 0x00070472) + ak[10:])
    ans = {"format": "ingot.enroll-answer/v1", "id": "0123456789abcdef0123456789abcdef",
           "credential": "00" * 32}
    out("fuzz_enroll", "answer", b"\x02" + json.dumps(ans, sort_keys=True).encode())


def enrolment():
    """fuzz_enrolment: mode byte, then a record file (even) or the statement
    the harness signs (odd).  The AK is a fixed P-256 key."""
    import base64
    gx = bytes.fromhex("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296")
    gy = bytes.fromhex("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")
    der = bytes.fromhex("3059301306072a8648ce3d020106082a8648ce3d030107034200") + b"\x04" + gx + gy
    b64 = base64.b64encode(der).decode()
    pem = "-----BEGIN PUBLIC KEY-----\n" + "\n".join(b64[i:i + 64] for i in range(0, len(b64), 64)) + \
        "\n-----END PUBLIC KEY-----\n"
    ak_id = hashlib.sha256(der).hexdigest()
    pred = {"node": "node-1", "ak_id": ak_id, "ak_name": "000b" + "ab" * 32, "ak_public_key": pem,
            "ek_certificate_sha256": "c" * 64, "ca_bundle_sha256": "d" * 64, "enrolled": "2026-12-01T00:00:00Z"}
    st = {"_type": "https://in-toto.io/Statement/v1", "subject": [{"name": "node-1", "digest": {"sha256": ak_id}}],
          "predicateType": "https://ingot.dev/enrolment/v1", "predicate": pred}
    body = json.dumps(st, sort_keys=True).encode()
    out("fuzz_enrolment", "statement", b"\x01" + body)
    out("fuzz_enrolment", "statement-v01", b"\x01" + body.replace(b"Statement/v1", b"Statement/v0.1"))
    out("fuzz_enrolment", "wrong-ak-id", b"\x01" + body.replace(ak_id.encode(), b"e" * 64, 1))
    env = {"payloadType": "application/vnd.in-toto+json", "payload": base64.b64encode(body).decode(),
           "signatures": [{"keyid": "0" * 64, "sig": base64.b64encode(b"\0" * 64).decode()}]}
    out("fuzz_enrolment", "record-unsigned", b"\x00" + json.dumps(env, sort_keys=True).encode())


def main():
    ingot = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "ingot")
    for h in ("fuzz_recipe", "fuzz_rules", "fuzz_unpack", "fuzz_quote", "fuzz_eventlog", "fuzz_envelope",
              "fuzz_modinfo", "fuzz_pe", "fuzz_enroll", "fuzz_enrolment"):
        shutil.rmtree(os.path.join(CORPUS, h), ignore_errors=True)
        os.makedirs(os.path.join(CORPUS, h))
    recipes(); rules(); unpack(); quote(); eventlog(); envelope(ingot); modinfo(); pe(); enroll(); enrolment()


if __name__ == "__main__":
    main()
