#!/usr/bin/env python3
"""Synthetic measured-boot evidence for the boot verdict's tests, written
from the TCG PC Client Platform Firmware Profile and systemd-stub's PCR 11
rule, not from ingot's code.  Usage: boot-evidence.py DIR MKQUOTE NONCE

Writes into DIR (which holds mkquote's AK directory ak/, made here):
  boot.manifest.json   an unsigned manifest whose boot object predicts the
                       good boot (UKI and kernel Authenticode, PCR 11, PCR 15,
                       secure_boot.signer_cert_sha256)
  log-CASE.bin, quote-CASE.json for each CASE:
    good       firmware (PCRs 0, 2), Secure Boot on with the signer's
               authority (PCR 7), the UKI then its kernel (PCR 4), the
               stub's sections (PCR 11)
    relabel    systemd-boot chain-loading the UKI, its event relabelled
               EV_EFI_BOOT_SERVICES_DRIVER (0x80000004)
    extra-app  one more boot application after the kernel
    sb-off     SecureBoot = 0
    forged     sb-off's log with the SecureBoot data rewritten to 1 (its
               digest kept); quote-forged.json = sb-off's
    soft       good's log, quoted by a software key (ak-1), which it carries
    other-fw   another PCR 0 (firmware code)
quote-* are signed by ak/ak-0 (the enrolled AK) unless said."""
import base64
import hashlib
import json
import os
import struct
import subprocess
import sys

DIR, MKQUOTE, NONCE = sys.argv[1], sys.argv[2], sys.argv[3]
EV_NO_ACTION, EV_SEPARATOR, EV_IPL, EV_S_CRTM_VERSION = 3, 4, 13, 8
EV_DRIVER_CONFIG, EV_BS_APP, EV_BS_DRIVER, EV_ACTION, EV_AUTHORITY = 0x80000001, 0x80000003, 0x80000004, 0x80000007, 0x800000E0
QUOTED = [0, 2, 4, 7, 9, 11, 12, 15]
NAME, ROOT = "bootv", "7" * 64
UKI, LINUX, SDBOOT, EXTRA = (hashlib.sha256(x).digest() for x in (b"uki", b"linux", b"systemd-boot", b"extra"))
CERT = b"0\x82\x01\x0a the UKI signer's certificate (DER)"
SECTIONS = [(".linux", b"kernel bytes"), (".osrel", b"ID=debian\n"), (".cmdline", b"console=ttyS0"), (".initrd", b"init")]


def sha(b):
    return hashlib.sha256(b).digest()


def header():
    spec = b"Spec ID Event03\0" + struct.pack("<IBBBBI", 0, 0, 2, 0, 2, 1) + struct.pack("<HH", 0x000B, 32) + b"\0"
    return struct.pack("<II", 0, EV_NO_ACTION) + b"\0" * 20 + struct.pack("<I", len(spec)) + spec


def ev(pcr, etype, data, digest=None):
    return (pcr, etype, data, digest if digest is not None else sha(data))


def var(name, data):
    u = name.encode("utf-16-le")
    return b"\x61\xdf\xe4\x8b\xca\x93\xd2\x11\xaa\x0d\x00\xe0\x98\x03\x2b\x8c" + struct.pack("<QQ", len(name), len(data)) + u + data


def plan(case):
    sep = b"\0\0\0\0"
    fw = b"firmware 1.0" if case != "other-fw" else b"firmware 1.1"
    sb = b"\x00" if case in ("sb-off", "forged") else b"\x01"
    events = [ev(0, EV_S_CRTM_VERSION, b"crtm", sha(fw)), ev(2, EV_BS_DRIVER, b"rom", sha(b"nic rom")),
              ev(7, EV_DRIVER_CONFIG, var("SecureBoot", sb))]
    for n in ("PK", "KEK", "db", "dbx"):
        events.append(ev(7, EV_DRIVER_CONFIG, var(n, n.encode() + b" contents")))
    for p in (0, 2, 4, 7):
        events.append(ev(p, EV_SEPARATOR, sep))
    # short-auth: an authority too short for an EFI_SIGNATURE_DATA
    events.append(ev(7, EV_AUTHORITY, var("db", b"O" * 16 + CERT if case != "short-auth" else b"O" * 10)))
    events.append(ev(4, EV_ACTION, b"Calling EFI Application from Boot Option"))
    if case == "relabel":
        events.append(ev(4, EV_BS_DRIVER, b"\x04\x04devpath", SDBOOT))
    events.append(ev(4, EV_BS_APP, b"\x04\x04devpath", UKI))
    events.append(ev(4, EV_BS_APP, b"\x04\x04linux", LINUX))
    if case == "extra-app":
        events.append(ev(4, EV_BS_APP, b"\x04\x04extra", EXTRA))
    for name, data in SECTIONS:
        events.append(ev(11, EV_IPL, name.encode(), sha(name.encode() + b"\0")))
        events.append(ev(11, EV_IPL, name.encode(), sha(data)))
    if case == "forged":   # the data says on, the digest is the off one's
        events[2] = (7, EV_DRIVER_CONFIG, var("SecureBoot", b"\x01"), sha(var("SecureBoot", b"\x00")))
    return events


def encode(events):
    out = header()
    for pcr, etype, data, d in events:
        out += struct.pack("<III", pcr, etype, 1) + struct.pack("<H", 0x000B) + d + struct.pack("<I", len(data)) + data
    return out


def replay(events):
    pcrs = {p: b"\0" * 32 for p in QUOTED}
    for pcr, _, _, d in events:
        pcrs[pcr] = sha(pcrs[pcr] + d)
    pcrs[15] = sha(b"\0" * 32 + sha(f"ingot:boot:v1 image={NAME} verity={ROOT}".encode()))
    return pcrs


def quote(pcrs, ak):
    mask = sum(1 << p for p in QUOTED)
    digest = sha(b"".join(pcrs[p] for p in QUOTED)).hex()
    out = subprocess.run([MKQUOTE, os.path.join(DIR, "ak"), "2"], input=f"{ak} {NONCE} {mask} {digest}\n",
                         capture_output=True, text=True, check=True).stdout.split()
    return {"format": "ingot.quote/v1", "nonce": NONCE, "attest": out[0], "signature": out[1],
            "pcrs": {"sha256": {str(p): pcrs[p].hex() for p in QUOTED}},
            "ak_pub": open(os.path.join(DIR, "ak", f"ak-{ak}.pub")).read()}


os.makedirs(os.path.join(DIR, "ak"), exist_ok=True)
for case in ("good", "relabel", "extra-app", "sb-off", "forged", "soft", "other-fw", "short-auth"):
    events = plan("good" if case == "soft" else case)
    open(os.path.join(DIR, f"log-{case}.bin"), "wb").write(encode(events))
    if case != "forged":
        json.dump(quote(replay(events), 1 if case == "soft" else 0), open(os.path.join(DIR, f"quote-{case}.json"), "w"))
json.dump(json.load(open(os.path.join(DIR, "quote-sb-off.json"))), open(os.path.join(DIR, "quote-forged.json"), "w"))

good = replay(plan("good"))
pcr11 = b"\0" * 32
for name, data in SECTIONS:
    pcr11 = sha(sha(pcr11 + sha(name.encode() + b"\0")) + sha(data))
assert pcr11 == good[11]
m = {"schema": "ingot.manifest/v1", "ingot_version": "0.1.0",
     "recipe": {"name": NAME, "version": "1", "file": "bootv.yaml", "sha256": "1" * 64},
     "epoch": 0, "serial": 1, "expires": None, "tuple": None, "artifacts": [], "files": [],
     "image": {"file": "bootv.sqfs", "sha256": "2" * 64, "size": 4096, "compression": "zstd",
               "level": 0, "block_size": 131072},
     "verity": {"file": "bootv.verity", "format": 1, "hash_algorithm": "sha256", "data_block_size": 4096,
                "hash_block_size": 4096, "data_blocks": 1, "hash_offset": 0, "salt": "33", "root_hash": ROOT,
                "uuid": "x"},
     "measurement": {"pcr": 15, "event_type": 13, "event_data": "ingot:v1", "content_digest": "5" * 64,
                     "digests": {}, "predicted": {}},
     "boot": {"uki": {"file": "bootv.efi", "size": 1, "sha256": "8" * 64, "authenticode_sha256": UKI.hex()},
              "linux_authenticode_sha256": LINUX.hex(),
              "pcr11": {"predicted": {"sha256": good[11].hex()}},
              "pcr15": {"event_data": f"ingot:boot:v1 image={NAME} verity={ROOT}",
                        "predicted": {"sha256": good[15].hex()}},
              "secure_boot": {"signer_cert_sha256": sha(CERT).hex()}}}
json.dump(m, open(os.path.join(DIR, "boot.manifest.json"), "w"), indent=1)
