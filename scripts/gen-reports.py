#!/usr/bin/env python3
"""Synthetic pools for `ingot audit`: signed pool manifests, node reports
with real TPM2 quotes (TPMS_ATTEST + TPMT_SIGNATURE by software P-256 AKs,
made by tests/tools/mkquote), TCG crypto-agile event logs, and the
auditor's side files (issued nonces, enrolled AKs, expected nodes).

  gen-reports.py --ingot BUILD/ingot --mkquote BUILD/tools/mkquote \\
                 --out DIR [--scenario test|bulk] [--nodes N] [--aks K] [--now EPOCH]

Writes DIR/keyring.json, DIR/manifests/*.manifest.dsse.json,
DIR/reports/*.json, DIR/nonces.txt, DIR/aks.txt, DIR/nodes.txt and
DIR/expected.json (node -> the verdict a correct audit gives, and for
drift the tuple field that differs).

--scenario test: ~30 nodes covering every verdict, each tuple field
drifted once, forged quotes (non-enrolled AK, reused nonce, altered
bytes, PCR values changed after quoting, PCR without a matching log, an
unsigned image), stale, unquoted and missing nodes.
--scenario bulk: N nodes over K AKs, 2% drifted: for the 10,000-report
benchmark.  Manifest signing uses the real `ingot keys` / `ingot sign`.
"""
import argparse
import base64
import hashlib
import json
import os
import random
import struct
import subprocess
import sys
import time

EV_NO_ACTION = 3
EV_IPL = 0x0D
ALG_SHA256 = 0x000B
PCR = 15


def h(data):
    return hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()


def compact(obj):
    # jansson JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


# ---- manifests ---------------------------------------------------------

NVIDIA = {
    "vendor": "nvidia", "nvswitch": True, "smi": "nvidia-smi",
    "driver": {"version": "580.95.05", "flavor": "open", "branch": "R580"},
    "fabric-manager": {"version": "580.95.05"},
    "cuda": {"version": "13.0"},
    "nccl": {"version": "2.27.7"},
    "container-toolkit": {"version": "1.17.8"},
}
AMD = {
    "vendor": "amd", "smi": "amd-smi",
    "rocm": {"version": "7.2.0", "stream": "legacy", "prefix": "/opt/rocm-7.2"},
    "rccl": {"version": "2.22.3"},
}

KO = "/lib/modules/6.8.0-45-generic/kernel/drivers/video/nvidia.ko"

# probe fact key -> (tuple path, value in the tuple)
def probe_facts(tuple_):
    facts = {"vendor": tuple_["vendor"], "smi": tuple_["smi"]}
    if tuple_["vendor"] == "nvidia":
        facts.update({
            "driver.version": tuple_["driver"]["version"],
            # the image's nvidia.ko, which verify holds the loaded driver
            # against (without it the tuple check is not made)
            "driver.ko_version": tuple_["driver"]["version"],
            "driver.flavor": tuple_["driver"]["flavor"],
            "fabric_manager.version": tuple_["fabric-manager"]["version"],
            "nccl.version": tuple_["nccl"]["version"],
            "cuda.version": tuple_["cuda"]["version"] + ".1",
            "container_toolkit.version": tuple_["container-toolkit"]["version"],
            "nvswitch.count": "4",
        })
    else:
        facts.update({
            "rocm.version": tuple_["rocm"]["version"],
            "rocm.stream": tuple_["rocm"]["stream"],
            "rocm.prefix": tuple_["rocm"]["prefix"],
            "rccl.version": tuple_["rccl"]["version"],
        })
    return facts


def event_data(m):
    cd = h(compact({k: v for k, v in m.items() if k != "measurement"}))
    return ("ingot:v1 image=%s sha256=%s verity=%s manifest=%s"
            % (m["recipe"]["name"], m["image"]["sha256"], m["verity"]["root_hash"], cd)), cd


def measurement(m):
    ev, cd = event_data(m)
    digests, predicted = {}, {}
    for name in ("sha1", "sha256", "sha384", "sha512"):
        d = hashlib.new(name, ev.encode()).digest()
        digests[name] = d.hex()
        predicted[name] = hashlib.new(name, bytes(len(d)) + d).hexdigest()
    return {"pcr": PCR, "event_type": EV_IPL, "event_data": ev, "content_digest": cd,
            "digests": digests, "predicted": predicted}


def make_manifest(pool, serial, tuple_):
    drv = json.dumps(tuple_, sort_keys=True)
    files = [
        {"path": "/etc", "type": "dir", "mode": "0755", "uid": 0, "gid": 0},
        {"path": "/etc/os-release", "type": "file", "mode": "0644", "uid": 0, "gid": 0,
         "size": 20, "sha256": h("os")},
        {"path": "/usr/lib/gpu-stack", "type": "file", "mode": "0644", "uid": 0, "gid": 0,
         "size": 100, "sha256": h(drv)},
    ]
    m = {
        "schema": "ingot.manifest/v1", "ingot_version": "0.1.0",
        "recipe": {"name": pool, "version": str(serial), "file": pool + ".yaml",
                   "sha256": h(pool + str(serial))},
        "epoch": 1767225600, "serial": serial, "expires": None, "tuple": tuple_,
        "artifacts": [{"name": "stack", "kind": "tar", "source": "stack.tar.gz",
                       "sha256": h("art" + drv), "size": 1000}],
        "files": files,
        "image": {"file": pool + ".sqfs", "sha256": h("img" + pool + str(serial) + drv),
                  "size": 4096 * 10, "compression": "zstd", "level": 0, "block_size": 131072},
        "verity": {"file": pool + ".verity", "format": 1, "hash_algorithm": "sha256",
                   "data_block_size": 4096, "hash_block_size": 4096, "data_blocks": 10,
                   "hash_offset": 0, "salt": h("salt" + pool), "root_hash": h("root" + pool + drv),
                   "uuid": "00000000-0000-0000-0000-000000000000"},
    }
    m["measurement"] = measurement(m)
    return m


# ---- event logs ----------------------------------------------------------

def eventlog(events):
    """TCG crypto-agile log, sha256 bank only: Spec ID header + EV_IPL events."""
    spec = (b"Spec ID Event03\0" + struct.pack("<IBBBB", 0, 0, 2, 0, 2)
            + struct.pack("<I", 1) + struct.pack("<HH", ALG_SHA256, 32) + b"\0")
    out = struct.pack("<II", 0, EV_NO_ACTION) + bytes(20) + struct.pack("<I", len(spec)) + spec
    for data in events:
        d = data.encode()
        out += struct.pack("<II", PCR, EV_IPL) + struct.pack("<IH", 1, ALG_SHA256)
        out += hashlib.sha256(d).digest() + struct.pack("<I", len(d)) + d
    return out


def replay(events):
    pcr = bytes(32)
    for data in events:
        pcr = hashlib.sha256(pcr + hashlib.sha256(data.encode()).digest()).digest()
    return pcr


# ---- pool ----------------------------------------------------------------

def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit("gen-reports: %s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stderr))
    return r.stdout


def ak_id(pem):
    body = "".join(l for l in pem.splitlines() if l and not l.startswith("-----"))
    return h(base64.b64decode(body))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ingot", required=True)
    ap.add_argument("--mkquote", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--scenario", choices=("test", "bulk"), default="test")
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--aks", type=int, default=64)
    ap.add_argument("--now", type=int, default=1796083200)  # 2026-12-01T00:00:00Z
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    out = a.out
    for d in ("keys", "manifests", "reports", "aks"):
        os.makedirs(os.path.join(out, d), exist_ok=True)

    # Signed manifests, with the real tools.
    kp = os.path.join(out, "keys", "release")
    if not os.path.exists(kp + ".key"):
        run([a.ingot, "keys", "generate", "-o", kp])
    keyring = os.path.join(out, "keyring.json")
    if not os.path.exists(keyring):
        run([a.ingot, "keys", "keyring", "add", keyring, kp + ".pub", "--name", "release"])
    old = json.loads(json.dumps(NVIDIA))
    old["driver"]["version"] = old["fabric-manager"]["version"] = "580.82.07"
    manifests = {
        "h100": make_manifest("h100", 7, NVIDIA),
        "h100-old": make_manifest("h100", 6, old),
        "mi300": make_manifest("mi300", 3, AMD),
    }
    if a.scenario == "test":
        # A pool whose only manifest has expired: authentic, but not current.
        m = make_manifest("a100", 2, old)
        m["expires"] = "2026-06-01T00:00:00Z"
        m["measurement"] = measurement(m)
        manifests["a100"] = m
    for name, m in manifests.items():
        p = os.path.join(out, "manifests", name + ".manifest.json")
        with open(p, "w") as f:
            json.dump(m, f, indent=2, sort_keys=True)
        run([a.ingot, "sign", p, "--key", kp + ".key", "-o",
             os.path.join(out, "manifests", name + ".manifest.dsse.json")])
        os.unlink(p)
    # An image nobody signed: its measurement is consistent, its envelope absent.
    unsigned = make_manifest("h100", 8, NVIDIA)
    unsigned["image"]["sha256"] = h("rogue")
    unsigned["measurement"] = measurement(unsigned)
    if a.scenario == "test":
        with open(os.path.join(out, "manifests", "h100-candidate.manifest.json"), "w") as f:
            json.dump(unsigned, f, indent=2, sort_keys=True)

    # Nodes: (name, pool, booted manifest, fact overrides, kind, expected, field)
    nodes = []
    if a.scenario == "test":
        for i in range(1, 7):
            nodes.append(("h100-%03d" % i, "h100", "h100", {}, "ok", "healthy", None))
        for i in range(1, 4):
            nodes.append(("mi300-%03d" % i, "mi300", "mi300", {}, "ok", "healthy", None))
        drifts = [
            ("driver", "driver.version", "580.82.07", "driver.version"),
            ("flavor", "driver.flavor", "proprietary", "driver.flavor"),
            ("fm", "fabric_manager.version", "580.65.06", "fabric-manager.version"),
            ("nccl", "nccl.version", "2.26.2", "nccl.version"),
            ("cuda", "cuda.version", "12.9.1", "cuda.version"),
            ("ctk", "container_toolkit.version", "1.17.4", "container-toolkit.version"),
            ("vendor", "vendor", "amd", "vendor"),
        ]
        for tag, fact, val, field in drifts:
            nodes.append(("h100-d-" + tag, "h100", "h100", {fact: val}, "ok", "drifted", field))
        for tag, fact, val, field in [("rocm", "rocm.version", "7.1.1", "rocm.version"),
                                      ("rccl", "rccl.version", "2.21.5", "rccl.version"),
                                      ("stream", "rocm.stream", "core", "rocm.stream")]:
            nodes.append(("mi300-d-" + tag, "mi300", "mi300", {fact: val}, "ok", "drifted", field))
        nodes += [
            ("h100-oldimage", "h100", "h100-old", {"driver.version": "580.82.07",
             "fabric_manager.version": "580.82.07"}, "ok", "drifted", "driver.version"),
            ("h100-f-ak", "h100", "h100", {}, "rogue-ak", "ak-not-enrolled", None),
            ("h100-f-replay", "h100", "h100", {}, "reuse-nonce", "nonce-reused", None),
            ("h100-f-tamper", "h100", "h100", {}, "tamper", "forged-quote", None),
            ("h100-f-pcrvalue", "h100", "h100", {}, "pcr-value", "pcr-mismatch", None),
            ("h100-f-pcrlog", "h100", "h100", {}, "pcr-log", "log-mismatch", None),
            ("h100-f-unsigned", "h100", "unsigned", {}, "ok", "unknown-image", None),
            ("h100-stale", "h100", "h100", {}, "stale", "stale", None),
            ("h100-noquote", "h100", "h100", {}, "unquoted", "unquoted", None),
            # No GPU (as under QEMU): the image's nvidia.ko not reported, so
            # the tuple could not be checked.  Clean, that is unverified;
            # with its own files check failed on a changed nvidia.ko, drift.
            ("h100-u-nogpu", "h100", "h100", {"driver.ko_version": None}, "ok", "unverified", None),
            ("h100-d-ko", "h100", "h100", {"driver.ko_version": None}, "files-failed", "drifted",
             KO + " sha256"),
            ("a100-001", "a100", "a100", {"driver.version": "580.82.07",
             "fabric_manager.version": "580.82.07"}, "ok", "expired-manifest", None),
        ]
        missing = ["h100-missing"]
    else:
        fields = ["driver.version", "nccl.version", "cuda.version"]
        for i in range(a.nodes):
            pool = "h100" if i % 4 else "mi300"
            if rnd.random() < 0.02:
                f = fields[i % 3] if pool == "h100" else "rccl.version"
                nodes.append(("%s-%05d" % (pool, i), pool, pool, {f: "0.0.1"}, "ok", "drifted", f))
            else:
                nodes.append(("%s-%05d" % (pool, i), pool, pool, {}, "ok", "healthy", None))
        missing = []

    n_aks = a.aks if a.scenario == "bulk" else 8
    issued = {n[0]: "%064x" % rnd.getrandbits(256) for n in nodes}
    requests, plan = [], []
    for idx, (name, pool, booted, over, kind, _, _) in enumerate(nodes):
        m = unsigned if booted == "unsigned" else manifests[booted]
        ev = m["measurement"]["event_data"]
        events = [ev]
        pcr = replay(events)
        nonce = issued[name]
        ak = idx % n_aks
        if kind == "rogue-ak":
            ak = n_aks          # one more key than is enrolled
        if kind == "reuse-nonce":
            nonce = issued[nodes[0][0]]   # replays the first node's nonce
        if kind == "pcr-log":
            events = [manifests["h100-old"]["measurement"]["event_data"]]  # log of another image
        plan.append((name, pool, booted, over, kind, nonce, pcr, events, m))
        requests.append("%d %s %d %s\n" % (ak, nonce, 1 << PCR, hashlib.sha256(pcr).hexdigest()))
    akdir = os.path.join(out, "aks")
    res = run([a.mkquote, akdir, str(n_aks + 1)], input="".join(requests))
    quotes = res.splitlines()
    pems = [open(os.path.join(akdir, "ak-%d.pub" % i)).read() for i in range(n_aks + 1)]

    expected = {}
    for idx, (name, pool, booted, over, kind, nonce, pcr, events, m) in enumerate(plan):
        attest, sig = quotes[idx].split()
        ak = n_aks if kind == "rogue-ak" else idx % n_aks
        pcrs = {"sha256": {str(PCR): pcr.hex()}}
        if kind == "tamper":
            raw = bytearray(base64.b64decode(attest))
            raw[-1] ^= 1           # last byte of the signed pcrDigest
            attest = base64.b64encode(bytes(raw)).decode()
        if kind == "pcr-value":
            # The node reports the PCR the manifest predicts; the TPM quoted another.
            pcrs = {"sha256": {str(PCR): manifests["h100-old"]["measurement"]["predicted"]["sha256"]}}
        quote = {"format": "ingot.quote/v1", "nonce": nonce, "attest": attest, "signature": sig,
                 "pcrs": pcrs, "ak_pub": pems[ak]}
        t = a.now - rnd.randint(0, 600)
        if kind == "stale":
            t = a.now - 2 * 86400
        facts = probe_facts(m["tuple"])
        facts.update(over)
        facts = {k: v for k, v in facts.items() if v is not None}
        checks = []
        if kind == "files-failed":
            checks = [{"name": "files", "status": "fail", "evidence": [],
                       "summary": "root / differs from the manifest: 1 changed, 0 missing, 0 extra",
                       "details": {"changed": [{"path": KO, "field": "sha256", "expected": h("nvidia.ko"),
                                                "got": h("tampered")}],
                                   "missing": [], "extra": [], "truncated": False}}]
        rep = {
            "schema": "ingot.report/v1", "ingot_version": "0.1.0",
            "node": {"id": name, "hostname": name, "machine_id": h(name)[:32]},
            "time": rfc3339(t),
            "manifest": {"path": "/run/ingot/manifest.dsse.json",
                         "content_digest": m["measurement"]["content_digest"],
                         "pool": pool, "serial": m["serial"]},
            "pool": pool, "tuple_digest": h(compact(m["tuple"])),
            "verdict": "admit", "exit_status": 0, "reason": "all checks passed", "checks": checks,
            "probe": {"root": "/", "facts": [{"key": k, "value": v, "source": "synthetic"}
                                             for k, v in sorted(facts.items())]},
            "attestation": None if kind == "unquoted" else {
                "quote": quote, "eventlog": base64.b64encode(eventlog(events)).decode()},
        }
        with open(os.path.join(out, "reports", name + ".json"), "w") as f:
            json.dump(rep, f, indent=1)
        expected[name] = {"verdict": nodes[idx][5], "field": nodes[idx][6]}
    for name in missing:
        expected[name] = {"verdict": "missing", "field": None}

    with open(os.path.join(out, "nonces.txt"), "w") as f:
        for name in sorted(issued):
            f.write("%s %s\n" % (name, issued[name]))
    with open(os.path.join(out, "aks.txt"), "w") as f:
        f.write("# enrolled AKs: sha256 of the DER public key\n")
        for i in range(n_aks):
            f.write(ak_id(pems[i]) + "\n")
    with open(os.path.join(out, "nodes.txt"), "w") as f:
        for name in sorted([n[0] for n in nodes] + missing):
            f.write("%s %s\n" % (name, name.split("-")[0]))
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
