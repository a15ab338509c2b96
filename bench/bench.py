#!/usr/bin/env python3
"""ingot benchmarks (run by bench/run.sh BUILD; see docs/bench.md).

Times, in the same run and alternating between tools every round,
ingot's build against mksquashfs and gensquashfs, its image writer alone
(tests/tools/sqfs-from-dir), its one-pass sha256 + dm-verity against
sha256sum + veritysetup, signing and verifying against openssl pkeyutl, a
node check, and a warm rebuild after one artifact changed.  Medians over
BENCH_ROUNDS rounds; peak RSS of every process from GNU time (what
`time -v` reports as "Maximum resident set size").  Prints a table and
writes bench/results.json."""
import hashlib, json, os, platform, shutil, statistics, subprocess, sys, time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
INGOT = os.path.join(BUILD, "ingot")
SQFS_FROM_DIR = os.path.join(BUILD, "tools", "sqfs-from-dir")
SIZE_MB = int(os.environ.get("BENCH_SIZE_MB", "1024"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
LEVEL = int(os.environ.get("BENCH_LEVEL", "3"))
BLOCK = int(os.environ.get("BENCH_BLOCK", "131072"))
JOBS = int(os.environ.get("BENCH_JOBS", "2"))
GNU_TIME = "/usr/bin/time"
SMALL_REPS = int(os.environ.get("BENCH_SMALL_REPS", "15"))
WORK = os.path.abspath(os.environ.get("BENCH_WORK", os.path.join(BUILD, "bench")))
RESULTS = os.environ.get("BENCH_RESULTS", os.path.join(SRC, "bench", "results.json"))
EPOCH = 1760000000
NODE_NOTE = []
DATE = "2026-11-01T00:00:00Z"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run(argv, cwd=None, env=None, quiet=True, ok=(0,)):
    """Run argv under GNU time; return (seconds, peak RSS KiB, stdout).
    GNU time, not wait4() from here: a child forked from Python starts
    with Python's resident pages and would report them as its own."""
    rss_file = os.path.join(WORK, ".rss")
    t0 = time.perf_counter()
    p = subprocess.run([GNU_TIME, "-f", "%M", "-o", rss_file, "--"] + argv, cwd=cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE if quiet else None)
    secs = time.perf_counter() - t0
    if p.returncode not in ok:
        err = p.stderr.decode(errors="replace") if p.stderr else ""
        raise SystemExit(f"bench: {' '.join(argv)} failed ({p.returncode}): {err.strip()}")
    with open(rss_file) as f:
        rss = int(f.read().split()[-1])
    return secs, rss, p.stdout.decode(errors="replace")


def rm(p):
    shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else (os.path.exists(p) and os.unlink(p))


def kv(text):
    return dict(l.split("=", 1) for l in text.splitlines() if "=" in l)


def sha256sum(path):
    return run(["sha256sum", path])[2].split()[0]


class Series:
    def __init__(self):
        self.t, self.rss, self.size = [], [], []

    def add(self, secs, rss, size=None):
        self.t.append(secs)
        self.rss.append(rss)
        if size is not None:
            self.size.append(size)

    def summary(self):
        d = {"median_s": round(statistics.median(self.t), 4), "runs_s": [round(x, 4) for x in self.t],
             "max_rss_kib": max(self.rss)}
        if self.size:
            d["size_bytes"] = self.size[-1]
        return d


def main():
    if not os.access(GNU_TIME, os.X_OK):
        raise SystemExit("bench: /usr/bin/time (Debian package time) not found")
    for tool in ("mksquashfs", "gensquashfs", "veritysetup", "openssl", "sha256sum"):
        if not shutil.which(tool):
            raise SystemExit(f"bench: {tool} not found (scripts/deps.sh installs it)")
    if not os.access(INGOT, os.X_OK):
        raise SystemExit(f"bench: {INGOT} not built (make BUILD=...)")
    os.makedirs(WORK, exist_ok=True)
    data = os.path.join(WORK, f"data-{SIZE_MB}")
    stamp = os.path.join(data, ".done")
    gen = os.path.join(SRC, "bench", "gen-tree.py")
    want = f"{LEVEL} {BLOCK} {hashlib.sha256(open(gen, 'rb').read()).hexdigest()}\n"
    if not os.path.exists(stamp) or open(stamp).read() != want:
        rm(data)
        log(f"bench: generating {SIZE_MB} MiB of input in {data}")
        subprocess.run([sys.executable, gen, str(SIZE_MB), data,
                        str(LEVEL), str(BLOCK)], check=True, stdout=sys.stderr)
        open(stamp, "w").write(want)
    tree = os.path.join(data, "tree")
    out = os.path.join(WORK, "out")
    rm(out)
    os.makedirs(out)
    s = {k: Series() for k in ("ingot_build_cold", "ingot_rebuild_one_changed", "mksquashfs", "gensquashfs",
                               "ingot_image_writer", "ingot_sha256_verity", "sha256sum", "veritysetup_format")}
    have_writer = os.access(SQFS_FROM_DIR, os.X_OK)
    ingot_img = os.path.join(out, "ingot", "bench.sqfs")

    def do_ingot():
        store = os.path.join(out, "store")
        rm(store)
        rm(os.path.join(out, "ingot"))
        secs, rss, _ = run([INGOT, "build", os.path.join(data, "bench.yaml"), "-o", os.path.join(out, "ingot"),
                            "--store", store, "-j", str(JOBS), "--no-lint", "-q"])
        s["ingot_build_cold"].add(secs, rss, os.path.getsize(ingot_img))
        # One artifact changed (one Python file patched), same store: warm.
        secs, rss, _ = run([INGOT, "build", os.path.join(data, "bench-v2.yaml"), "-o", os.path.join(out, "ingot-v2"),
                            "--store", store, "-j", str(JOBS), "--no-lint", "-q"])
        s["ingot_rebuild_one_changed"].add(secs, rss)

    def do_mksquashfs():
        img = os.path.join(out, "mksquashfs.sqfs")
        rm(img)
        secs, rss, _ = run(["mksquashfs", tree, img, "-reproducible", "-comp", "zstd", "-Xcompression-level",
                            str(LEVEL), "-b", str(BLOCK), "-all-root", "-mkfs-time", str(EPOCH), "-all-time",
                            str(EPOCH), "-processors", str(JOBS), "-noappend", "-quiet", "-no-progress"])
        s["mksquashfs"].add(secs, rss, os.path.getsize(img))

    def do_gensquashfs():
        img = os.path.join(out, "gensquashfs.sqfs")
        rm(img)
        secs, rss, _ = run(["gensquashfs", "--pack-dir", tree, "--compressor", "zstd", "--comp-extra",
                            f"level={LEVEL}", "--block-size", str(BLOCK), "--num-jobs", str(JOBS),
                            "--all-root", "--defaults", f"mtime={EPOCH}", "--force", "--quiet", img])
        s["gensquashfs"].add(secs, rss, os.path.getsize(img))

    def do_writer():
        if not have_writer:
            return
        st = os.path.join(out, "writer-store")
        img = os.path.join(out, "writer.sqfs")
        ver = os.path.join(out, "writer.verity")
        # Store filled first (untimed part of the tool's run is reported
        # separately): write_seconds times image_write alone.
        secs, rss, o = run([SQFS_FROM_DIR, "-c", "zstd", "-l", str(LEVEL), "-b", str(BLOCK), "-j", str(JOBS),
                            "-m", str(EPOCH), "--all-root", "-V", ver, "-s", st, tree, img])
        v = kv(o)
        s["ingot_image_writer"].add(float(v["write_seconds"]), rss, os.path.getsize(img))
        s["ingot_sha256_verity"].add(float(v["verity_seconds"]), rss)
        rm(st)

    def do_verity_tools():
        hashf = os.path.join(out, "vs.verity")
        rm(hashf)
        secs, rss, _ = run(["sha256sum", ingot_img])
        s["sha256sum"].add(secs, rss)
        secs, rss, _ = run(["veritysetup", "format", ingot_img, hashf, "--hash", "sha256",
                            "--data-block-size", "4096", "--hash-block-size", "4096"])
        s["veritysetup_format"].add(secs, rss)

    steps = [do_ingot, do_mksquashfs, do_gensquashfs, do_writer]
    for r in range(ROUNDS):
        order = steps[r % len(steps):] + steps[:r % len(steps)]   # rotate: no tool always goes first
        log(f"bench: round {r + 1}/{ROUNDS}: " + ", ".join(f.__name__[3:] for f in order))
        for f in order:
            f()
        do_verity_tools()

    small = small_ops(out)
    res = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {"machine": platform.machine(), "cpus": os.cpu_count(), "kernel": platform.release()},
        "params": {"size_mb": SIZE_MB, "rounds": ROUNDS, "compression": "zstd", "level": LEVEL,
                   "block_size": BLOCK, "jobs": JOBS, "small_reps": SMALL_REPS},
        "input": {"files": sum(len(f) for _, _, f in os.walk(tree)),
                  "bytes": sum(os.path.getsize(os.path.join(d, x)) for d, _, f in os.walk(tree) for x in f),
                  "artifact_bytes": sum(os.path.getsize(os.path.join(data, "art", x))
                                        for x in os.listdir(os.path.join(data, "art")))},
        "results": {k: v.summary() for k, v in s.items() if v.t},
    }
    res["results"].update(small)
    if NODE_NOTE:
        res["node_check_outcome"] = NODE_NOTE[0]
    R = res["results"]
    med = lambda k: R[k]["median_s"] if k in R else None
    ratios = {
        "ingot_build_vs_mksquashfs": med("ingot_build_cold") / med("mksquashfs"),
        "ingot_build_vs_gensquashfs": med("ingot_build_cold") / med("gensquashfs"),
        "rebuild_one_changed_vs_cold": med("ingot_rebuild_one_changed") / med("ingot_build_cold"),
        "image_size_vs_mksquashfs": R["ingot_build_cold"]["size_bytes"] / R["mksquashfs"]["size_bytes"],
        "image_size_vs_gensquashfs": R["ingot_build_cold"]["size_bytes"] / R["gensquashfs"]["size_bytes"],
    }
    if "ingot_image_writer" in R:
        ratios["image_writer_vs_mksquashfs"] = med("ingot_image_writer") / med("mksquashfs")
        ratios["image_writer_vs_gensquashfs"] = med("ingot_image_writer") / med("gensquashfs")
        ratios["sha256_verity_vs_sha256sum_plus_veritysetup"] = (
            med("ingot_sha256_verity") / (med("sha256sum") + med("veritysetup_format")))
    ratios["sign_vs_openssl"] = R["ingot_sign"]["median_s"] / R["openssl_sign"]["median_s"]
    ratios["verify_vs_openssl"] = R["ingot_verify_manifest"]["median_s"] / R["openssl_verify"]["median_s"]
    res["ratios"] = {k: round(v, 3) for k, v in ratios.items()}
    res["targets"] = {
        "rebuild_one_changed_le_20pct_of_cold": ratios["rebuild_one_changed_vs_cold"] <= 0.20,
        "ingot_build_peak_rss_le_64mib": R["ingot_build_cold"]["max_rss_kib"] <= 64 * 1024,
        "node_check_lt_50ms": R["ingot_verify_node"]["median_s"] < 0.050,
    }
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    tmp = RESULTS + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, RESULTS)
    table(res)
    log(f"bench: wrote {RESULTS}")


def small_ops(out):
    """Signing, verifying and a node check: SMALL_REPS runs each, median."""
    d = os.path.join(out, "small")
    rm(d)
    os.makedirs(d)
    man = os.path.join(out, "ingot", "bench.manifest.json")
    run([INGOT, "keys", "generate", "-o", os.path.join(d, "k")])
    run([INGOT, "keys", "keyring", "add", os.path.join(d, "ring.json"), os.path.join(d, "k.pub"), "--name", "bench"])
    env = os.path.join(d, "env.json")
    run([INGOT, "sign", man, "--key", os.path.join(d, "k.key"), "-o", env])
    # openssl signs the same PAE bytes ingot signs (DSSE v1).
    e = json.load(open(env))
    import base64
    body = base64.b64decode(e["payload"])
    t = e["payloadType"].encode()
    pae = os.path.join(d, "pae.bin")
    with open(pae, "wb") as f:
        f.write(b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body))
    osig = os.path.join(d, "pae.sig")
    ser = {k: Series() for k in ("ingot_sign", "openssl_sign", "ingot_verify_manifest", "openssl_verify",
                                 "ingot_verify_node")}
    root, node_env, ring2, node_rc = node_fixture(d)
    for i in range(SMALL_REPS):
        o = os.path.join(d, "s.json")
        rm(o)
        ser["ingot_sign"].add(*run([INGOT, "sign", man, "--key", os.path.join(d, "k.key"), "-o", o])[:2])
        ser["openssl_sign"].add(*run(["openssl", "pkeyutl", "-sign", "-inkey", os.path.join(d, "k.key"), "-rawin",
                                      "-in", pae, "-out", osig])[:2])
        ser["ingot_verify_manifest"].add(*run([INGOT, "verify-manifest", env, "--keyring",
                                               os.path.join(d, "ring.json"), "--now", DATE])[:2])
        ser["openssl_verify"].add(*run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", os.path.join(d, "k.pub"),
                                        "-rawin", "-in", pae, "-sigfile", osig])[:2])
        if root:
            ser["ingot_verify_node"].add(*run([INGOT, "verify", "--manifest", node_env, "--keyring", ring2,
                                               "--root", root, "--tcti", "none", "--now", DATE, "--node-id", "bench",
                                               "--date", "2026-11-01", "--nfd", os.path.join(d, "nfd"),
                                               "--brief"], ok=(0, node_rc))[:2])
    return {k: v.summary() for k, v in ser.items() if v.t}


def node_fixture(d):
    """A fake H100 node root (tests/e2e/mkroot.sh) and a signed manifest of it."""
    mkroot = os.path.join(SRC, "tests", "e2e", "mkroot.sh")
    mkman = os.path.join(SRC, "tests", "tools", "mkmanifest.py")
    if not (os.path.exists(mkroot) and os.path.exists(mkman)):
        log("bench: tests/e2e/mkroot.sh or tests/tools/mkmanifest.py missing: node check skipped")
        return None, None, None, None
    root = os.path.join(d, "root")
    env = dict(os.environ, INGOT_SRC=SRC)
    subprocess.run([mkroot, root, "h100"], check=True, env=env, stdout=subprocess.DEVNULL)
    tup = os.path.join(d, "tuple.json")
    with open(tup, "w") as f:
        json.dump({"vendor": "nvidia", "gpu": {"models": ["H100"]}, "nvswitch": True, "multi-tenant": True,
                   "smi": "nvidia-smi", "driver": {"version": "580.95.05", "branch": "R580", "flavor": "open"},
                   "fabric-manager": {"version": "580.95.05"}, "cuda": {"version": "13.0"},
                   "nccl": {"version": "2.27.7"}, "container-toolkit": {"version": "1.17.8"},
                   "firmware": {"vbios": "96.00.99.00.01"}}, f)
    man = os.path.join(d, "node.manifest.json")
    subprocess.run([sys.executable, mkman, root, "--name", "h100-r580-ltsb", "--tuple", tup, "-o", man],
                   check=True, stdout=subprocess.DEVNULL)
    env_path = os.path.join(d, "node.dsse.json")
    run([INGOT, "sign", man, "--key", os.path.join(d, "k.key"), "-o", env_path])
    # It should admit the node; otherwise say so (the time is then that of
    # a refusal) rather than fail the whole benchmark.
    p = subprocess.run([INGOT, "verify", "--manifest", env_path, "--keyring", os.path.join(d, "ring.json"),
                        "--root", root, "--tcti", "none", "--now", DATE, "--node-id", "bench", "--date",
                        "2026-11-01", "--nfd", os.path.join(d, "nfd"), "--brief"], capture_output=True, text=True)
    if p.returncode != 0:
        log(f"bench: WARNING: the node check does not admit the fake node (exit {p.returncode}): {p.stdout.strip()}")
    NODE_NOTE.append(f"exit {p.returncode}: {p.stdout.strip()}")
    return root, env_path, os.path.join(d, "ring.json"), p.returncode


def table(res):
    R = res["results"]
    p = res["params"]
    print(f"ingot bench: {res['input']['files']} files, {res['input']['bytes'] / 2**20:.0f} MiB "
          f"(artifacts {res['input']['artifact_bytes'] / 2**20:.0f} MiB), zstd level {p['level']}, "
          f"block {p['block_size']}, {p['jobs']} jobs, {p['rounds']} rounds, {res['host']['cpus']} CPUs")
    print(f"{'what':34} {'median':>10} {'max RSS':>10} {'image':>12}")
    for k, v in R.items():
        med = v["median_s"]
        t = f"{med * 1000:.1f} ms" if med < 1 else f"{med:.2f} s"
        size = f"{v['size_bytes'] / 2**20:.1f} MiB" if "size_bytes" in v else ""
        print(f"{k:34} {t:>10} {v['max_rss_kib'] / 1024:>7.1f} MiB {size:>12}")
    print("ratios:")
    for k, v in res["ratios"].items():
        print(f"  {k:44} {v:.3f}")
    print("targets:")
    for k, v in res["targets"].items():
        print(f"  {k:44} {'met' if v else 'NOT MET'}")


main()
