#!/usr/bin/env python3
"""mkmanifest.py - an ingot manifest for a fake node root (tests only).

    mkmanifest.py ROOT --name NAME --tuple TUPLE.json -o OUT.manifest.json
                  [--include usr,lib,opt] [--serial N] [--expires T]
                  [--image-out IMG --verity-out HASHFILE]

Lists every entry under ROOT/<include dirs> (type, mode, owner, size,
sha256, symlink target) the way `ingot build` does (docs/CONTRACTS.md),
so `ingot verify --root ROOT` can be tested on fake sysroots before and
independently of a real build.  With --image-out, the same dirs are packed
by squashfs-tools' mksquashfs and hashed by cryptsetup's veritysetup, and
the manifest records their real sha256 and dm-verity root; without it the
image fields are the digests of empty placeholders.  The measurement
member follows the CONTRACTS formulas (content digest over the compact
JSON without "measurement", PCR 15, EV_IPL).
"""
import argparse, hashlib, json, os, re, stat, subprocess, sys

TYPES = [(stat.S_ISREG, "file"), (stat.S_ISDIR, "dir"), (stat.S_ISLNK, "symlink"),
         (stat.S_ISCHR, "char"), (stat.S_ISBLK, "block"), (stat.S_ISFIFO, "fifo"),
         (stat.S_ISSOCK, "socket")]

def sha256_file(p):
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()

def entry(root, rel):
    host = os.path.join(root, rel)
    st = os.lstat(host)
    t = next(name for test, name in TYPES if test(st.st_mode))
    e = {"path": "/" + rel, "type": t, "mode": "%04o" % stat.S_IMODE(st.st_mode),
         "uid": st.st_uid, "gid": st.st_gid}
    if t == "file":
        e["size"] = st.st_size
        e["sha256"] = sha256_file(host)
    elif t == "symlink":
        e["target"] = os.readlink(host)
    elif t in ("char", "block"):
        e["major"], e["minor"] = os.major(st.st_rdev), os.minor(st.st_rdev)
    return e

def walk(root, top):
    out = []
    if not os.path.lexists(os.path.join(root, top)):
        return out
    out.append(entry(root, top))
    for d, dirs, files in os.walk(os.path.join(root, top)):
        for n in dirs + files:
            out.append(entry(root, os.path.relpath(os.path.join(d, n), root)))
    return out

def compact(j):
    return json.dumps(j, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

def measurement(m, pcr=15):
    body = {k: v for k, v in m.items() if k != "measurement"}
    cd = hashlib.sha256(compact(body)).hexdigest()
    data = "ingot:v1 image=%s sha256=%s verity=%s manifest=%s" % (
        m["recipe"]["name"], m["image"]["sha256"], m["verity"]["root_hash"], cd)
    digests, predicted = {}, {}
    for alg in ("sha1", "sha256", "sha384", "sha512"):
        d = hashlib.new(alg, data.encode()).digest()
        digests[alg] = d.hex()
        predicted[alg] = hashlib.new(alg, bytes(len(d)) + d).hexdigest()
    return {"pcr": pcr, "event_type": 13, "event_data": data, "content_digest": cd,
            "digests": digests, "predicted": predicted}

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root")
    ap.add_argument("--name", required=True)
    ap.add_argument("--tuple", required=True, help="JSON file with the tuple, or 'null'")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--include", default="usr,lib,opt")
    ap.add_argument("--serial", type=int, default=1)
    ap.add_argument("--expires", default=None)
    ap.add_argument("--image-out")
    ap.add_argument("--verity-out")
    a = ap.parse_args()

    tops = [t for t in a.include.split(",") if t]
    files = []
    for t in tops:
        files += walk(a.root, t)
    files.sort(key=lambda e: e["path"].encode())
    tuple_ = None if a.tuple == "null" else json.load(open(a.tuple))

    salt = hashlib.sha256(b"ingot-test-salt" + a.name.encode()).hexdigest()
    image = {"file": a.name + ".sqfs", "sha256": hashlib.sha256(b"").hexdigest(), "size": 0,
             "compression": "gzip", "level": 0, "block_size": 131072}
    verity = {"file": a.name + ".verity", "format": 1, "hash_algorithm": "sha256",
              "data_block_size": 4096, "hash_block_size": 4096, "data_blocks": 0,
              "hash_offset": 0, "salt": salt, "root_hash": hashlib.sha256(b"").hexdigest(),
              "uuid": "00000000-0000-4000-8000-000000000000"}
    if a.image_out:
        srcs = [os.path.join(a.root, t) for t in tops if os.path.lexists(os.path.join(a.root, t))]
        subprocess.run(["mksquashfs"] + srcs + [a.image_out, "-noappend", "-no-xattrs",
                        "-mkfs-time", "0", "-all-time", "0", "-quiet", "-no-progress"],
                       check=True, stdout=subprocess.DEVNULL)
        size = os.path.getsize(a.image_out)
        image.update(sha256=sha256_file(a.image_out), size=size)
        out = subprocess.run(["veritysetup", "format", a.image_out, a.verity_out, "--salt", salt,
                              "--uuid", verity["uuid"]], check=True, capture_output=True,
                             text=True).stdout
        verity["root_hash"] = re.search(r"Root hash:\s*([0-9a-f]{64})", out).group(1)
        verity["data_blocks"] = size // 4096
    m = {"schema": "ingot.manifest/v1", "ingot_version": "0.1.0",
         "recipe": {"name": a.name, "version": "1", "file": a.name + ".yaml",
                    "sha256": hashlib.sha256(a.name.encode()).hexdigest()},
         "epoch": 0, "serial": a.serial, "expires": a.expires, "tuple": tuple_,
         "artifacts": [], "files": files, "image": image, "verity": verity}
    m["measurement"] = measurement(m)
    with open(a.out, "w") as f:
        json.dump(m, f, sort_keys=True, indent=2)
        f.write("\n")

if __name__ == "__main__":
    sys.exit(main())
