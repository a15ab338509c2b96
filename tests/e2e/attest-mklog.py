#!/usr/bin/env python3
"""Hand-built TCG crypto-agile event logs for the attest tests, written
from the TCG PC Client Platform Firmware Profile (section 10), not from
ingot's code.  Usage: attest-mklog.py KIND OUT [EXTEND_LIST]

KIND: agile      sha1+sha256 log: Spec ID event, EV_NO_ACTION records, events
                 on PCRs 0, 1, 7, 15, 16, 23 (EXTEND_LIST gets one
                 tpm2_pcrextend argument per extend, in order)
      plain      as agile without EV_NO_ACTION records after the header
                 (tpm2-tools 5.4 wrongly extends those: tpm2-tools #3224)
      locality   as agile plus a StartupLocality(3) EV_NO_ACTION event
                 (EXTEND_LIST gets the sha256 PCR 0 it must replay to)
      three      sha1+sha256+sha384 banks, no EV_NO_ACTION records
      truncated  agile cut in the middle of the last record
      unknown-alg  Spec ID event listing SM3_256 (0x0012)
      huge-event   an event claiming 0xfffffff0 bytes of data
      too-many     65537 records
      bad-count    a record claiming 9 digests
      sha1-only    a legacy SHA1 log without the Spec ID event: one event
      sha1-log     a SHA1 (TCG 1.2) log: TCG_PCR_EVENT records on PCRs 0, 4, 7,
                   16 and 23 (EXTEND_LIST gets one tpm2_pcrextend argument
                   per extend, in order)
      sha1-truncated  sha1-log cut in the middle of the last record
      sha1-bad-pcr    a SHA1 log event on PCR 24
      empty        the header alone
"""
import hashlib
import struct
import sys

ALGS = {"sha1": (0x0004, 20), "sha256": (0x000B, 32), "sha384": (0x000C, 48)}
EV_NO_ACTION, EV_SEPARATOR, EV_IPL, EV_POST_CODE = 3, 4, 13, 1


def header(banks, extra_algs=()):
    algs = [ALGS[b] for b in banks] + list(extra_algs)
    spec = b"Spec ID Event03\0" + struct.pack("<IBBBBI", 0, 0, 2, 0, 2, len(algs))
    for alg, size in algs:
        spec += struct.pack("<HH", alg, size)
    spec += b"\0"
    return struct.pack("<II", 0, EV_NO_ACTION) + b"\0" * 20 + struct.pack("<I", len(spec)) + spec


def event2(banks, pcr, etype, data, digest_of=None):
    rec = struct.pack("<III", pcr, etype, len(banks))
    for b in banks:
        d = hashlib.new(b, digest_of if digest_of is not None else data).digest()
        if etype == EV_NO_ACTION:
            d = b"\0" * ALGS[b][1]
        rec += struct.pack("<H", ALGS[b][0]) + d
    return rec + struct.pack("<I", len(data)) + data


def agile(banks, extends, no_action=True):
    out = header(banks)
    if no_action:
        out += event2(banks, 0, EV_NO_ACTION, b"SP800-155 Event\0" + b"vendor")
    plan = [(0, EV_POST_CODE, b"firmware blob"), (1, EV_POST_CODE, b"config"),
            (7, 0x80000007, b"Calling EFI Application"), (0, EV_SEPARATOR, b"\0\0\0\0"),
            (15, EV_IPL, b"ingot:v1 image=test"), (16, EV_IPL, b"debug pcr"),
            (23, EV_IPL, b"app pcr"), (7, EV_SEPARATOR, b"\0\0\0\0")]
    for pcr, etype, data in plan:
        out += event2(banks, pcr, etype, data)
        extends.append("%d:%s" % (pcr, ",".join(
            "%s=%s" % (b, hashlib.new(b, data).hexdigest()) for b in banks)))
    if no_action:
        out += event2(banks, 3, EV_NO_ACTION, b"skipped in replay")
    return out


def main():
    kind, path = sys.argv[1], sys.argv[2]
    extends = []
    banks = ["sha1", "sha256"]
    if kind == "agile":
        data = agile(banks, extends)
    elif kind == "plain":
        data = agile(banks, extends, no_action=False)
    elif kind == "locality":
        data = header(banks) + event2(banks, 0, EV_NO_ACTION, b"StartupLocality\0\x03")
        data += agile(banks, extends)[len(header(banks)):]
        pcr0 = b"\0" * 31 + b"\x03"
        for spec in extends:
            if spec.startswith("0:"):
                d = spec.split("sha256=")[1]
                pcr0 = hashlib.sha256(pcr0 + bytes.fromhex(d)).digest()
        extends = [pcr0.hex()]
    elif kind == "three":
        data = agile(["sha1", "sha256", "sha384"], extends, no_action=False)
    elif kind == "truncated":
        data = agile(banks, extends)[:-7]
    elif kind == "unknown-alg":
        data = header(banks, [(0x0012, 32)]) + event2(banks, 0, EV_POST_CODE, b"x")
    elif kind == "huge-event":
        data = header(banks) + struct.pack("<III", 0, EV_POST_CODE, 1) + \
            struct.pack("<H", 0x0004) + b"\0" * 20 + struct.pack("<I", 0xfffffff0) + b"abc"
    elif kind == "too-many":
        rec = event2(banks, 16, EV_POST_CODE, b"")
        data = header(banks) + rec * 65537
    elif kind == "bad-count":
        data = header(banks) + struct.pack("<III", 0, EV_POST_CODE, 9) + b"\0" * 64
    elif kind in ("sha1-log", "sha1-truncated"):
        data = b""
        for pcr, etype, ev in [(0, EV_POST_CODE, b"CRTM"), (0, EV_SEPARATOR, b"\0" * 4),
                               (4, EV_IPL, b"grub" * 40), (7, EV_SEPARATOR, b"\0" * 4),
                               (4, EV_IPL, b""), (16, EV_POST_CODE, b"debug"),
                               (23, EV_IPL, b"app")]:
            d = hashlib.sha1(ev).digest()
            data += struct.pack("<II", pcr, etype) + d + struct.pack("<I", len(ev)) + ev
            extends.append("%d:sha1=%s" % (pcr, d.hex()))
        if kind == "sha1-truncated":
            data = data[:-2]
    elif kind == "sha1-bad-pcr":
        data = struct.pack("<II", 24, EV_POST_CODE) + hashlib.sha1(b"x").digest() + \
            struct.pack("<I", 1) + b"x"
    elif kind == "empty":
        data = header(banks)
    elif kind == "sha1-only":
        data = struct.pack("<II", 0, EV_POST_CODE) + hashlib.sha1(b"x").digest() + \
            struct.pack("<I", 1) + b"x"
    else:
        sys.exit("unknown kind " + kind)
    with open(path, "wb") as f:
        f.write(data)
    if len(sys.argv) > 3:
        with open(sys.argv[3], "w") as f:
            f.write("\n".join(extends) + "\n")


main()
