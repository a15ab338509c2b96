#!/usr/bin/env python3
"""ingot benchmarks (run by bench/run.sh BUILD; see docs/bench.md).

Times, in the same run and alternating between tools every round,
ingot's build against mksquashfs and gensquashfs, its image writer alone
(tests/tools/sqfs-from-dir), its one-pass sha256 + dm-verity against
sha256sum + veritysetup, signing and verifying against openssl pkeyutl, a
node check, and a warm rebuild after one artifact changed; the same cold
build and rebuild at BENCH_REBUILD_LEVEL (where the compressed-block cache
is used) against gensquashfs at that level; and the cold build against the
standard pipeline (sha256sum -c, tar -x, gensquashfs, veritysetup format);
and `ingot audit` of generated pools of node reports (BENCH_AUDIT_NODES).
Medians over BENCH_ROUNDS rounds (BENCH_REBUILD_ROUNDS for the
BENCH_REBUILD_LEVEL rows); peak RSS of every process from GNU time (what
`time -v` reports as "Maximum resident set size").  Prints a table and
writes bench/results.json.  BENCH_ONLY (e.g. "audit") runs only those
rows ("build": everything else; "sign": one cold build of the input, then
the sign and verify-manifest rows against openssl) and writes
bench/results-ONLY.json."""
import hashlib, json, os, platform, re, shutil, statistics, subprocess, sys, time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
INGOT = os.path.join(BUILD, "ingot")
SQFS_FROM_DIR = os.path.join(BUILD, "tools", "sqfs-from-dir")
SIZE_MB = int(os.environ.get("BENCH_SIZE_MB", "1024"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
LEVEL = int(os.environ.get("BENCH_LEVEL", "3"))
BLOCK = int(os.environ.get("BENCH_BLOCK", "131072"))
JOBS = int(os.environ.get("BENCH_JOBS", "2"))
# The block cache is used only when compression is slower than hashing
# (zstd >= 6): the level-3 rows cannot show it, these do.
REBUILD_LEVEL = int(os.environ.get("BENCH_REBUILD_LEVEL", "19"))
REBUILD_ROUNDS = int(os.environ.get("BENCH_REBUILD_ROUNDS", "1"))
# The limits of issue 18 (docs/bench.md, "Targets").
LIMITS = {"writer": 1.35, "writer_slow": 1.05, "cold_vs_gensquashfs": 1.6, "cold_vs_std": 0.25,
          "rebuild": 0.35, "rss_mib": 64, "small_vs_openssl": 3.0, "node_ms": 50}
# Issue 28: a rebuild after one artifact changed <= 0.2 of the cold build,
# at both levels (per-file compressed-block reuse).
LIMITS["rebuild"] = 0.2
# ingot audit of scripts/gen-reports.py bulk pools (issue 28): 30 s per
# 100,000 reports on 2 CPUs (so 3 s for 10,000), 256 MiB at any size.
LIMITS.update({"audit_s_per_100k": 30, "audit_rss_mib": 256})
# Issue 39: against the floor (BENCH_ONLY=floor), measured in the same run.
LIMITS.update({"cold_vs_floor": 1.2, "rebuild_vs_floor": 1.5})
AUDIT_NODES = [int(x) for x in os.environ.get("BENCH_AUDIT_NODES", "10000 100000").split() if int(x) > 0]
AUDIT_AKS = 100
ROW_SETS = ("build", "audit", "sign", "floor", "serve")
ONLY = os.environ.get("BENCH_ONLY", "").replace(",", " ").split()
L2 = f"l{REBUILD_LEVEL}"
GNU_TIME = "/usr/bin/time"
SMALL_REPS = int(os.environ.get("BENCH_SMALL_REPS", "15"))
WORK = os.path.abspath(os.environ.get("BENCH_WORK", os.path.join(BUILD, "bench")))
RESULTS = os.environ.get("BENCH_RESULTS", os.path.join(
    SRC, "bench", "results-%s.json" % "-".join(sorted(ONLY)) if ONLY else "results.json"))
EPOCH = 1760000000
NODE_NOTE = []
DATE = "2026-11-01T00:00:00Z"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run_cpu(argv, cwd=None, env=None, quiet=True, ok=(0,)):
    """Run argv under GNU time; return (seconds, peak RSS KiB, CPU seconds
    (user + system), stdout).  GNU time, not wait4() from here: a child
    forked from Python starts with Python's resident pages and would
    report them as its own."""
    rss_file = os.path.join(WORK, ".rss")
    t0 = time.perf_counter()
    p = subprocess.run([GNU_TIME, "-f", "%U %S %M", "-o", rss_file, "--"] + argv, cwd=cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE if quiet else None)
    secs = time.perf_counter() - t0
    if p.returncode not in ok:
        err = p.stderr.decode(errors="replace") if p.stderr else ""
        raise SystemExit(f"bench: {' '.join(argv)} failed ({p.returncode}): {err.strip()}")
    with open(rss_file) as f:
        user, system, rss = f.read().split()[-3:]
    return secs, int(rss), float(user) + float(system), p.stdout.decode(errors="replace")


def run(argv, cwd=None, env=None, quiet=True, ok=(0,)):
    """run_cpu without the CPU time: (seconds, peak RSS KiB, stdout)."""
    secs, rss, _, out = run_cpu(argv, cwd, env, quiet, ok)
    return secs, rss, out


def rm(p):
    shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else (os.path.exists(p) and os.unlink(p))


def kv(text):
    return dict(l.split("=", 1) for l in text.splitlines() if "=" in l)


def sha256sum(path):
    return run(["sha256sum", path])[2].split()[0]


def build_summary(text):
    """The cache counts from `ingot build`'s summary: they show whether a
    warm rebuild really reused the store (artifacts) and the block cache."""
    d = {}
    m = re.search(r"^artifacts\s+(\d+) \((\d+) from cache\)$", text, re.M)
    if m:
        d["artifacts"], d["artifacts_from_cache"] = int(m[1]), int(m[2])
    m = re.search(r"^blocks\s+(\d+) compressed, (\d+) from the block cache$", text, re.M)
    if m:
        d["blocks_compressed"], d["blocks_from_block_cache"] = int(m[1]), int(m[2])
    m = re.search(r"^reused\s+(\d+) files from the file cache$", text, re.M)
    d["files_from_file_cache"] = int(m[1]) if m else 0
    return d


def recipe_artifacts(path):
    """The artifacts of a generated bench recipe (name, kind, source, sha256,
    dest, strip-components): enough for the standard pipeline to lay them
    out as ingot does.  Any other field would change the layout in ways
    tar -x does not reproduce, so it is refused."""
    arts, inside = [], False
    for n, line in enumerate(open(path), 1):
        if line.rstrip() == "artifacts:":
            inside = True
            continue
        if not inside or not line.strip():
            continue
        if not line.startswith(" "):
            break
        m = re.match(r"^  (- |  )([a-z0-9-]+):\s*(.*?)\s*$", line)
        if not m:
            raise SystemExit(f"bench: {path}:{n}: artifacts: expected 'key: value', got {line.strip()!r}")
        if m[1] == "- ":
            arts.append({"dest": "/", "strip-components": "0"})
        arts[-1][m[2]] = m[3].strip('"')
    base = os.path.dirname(os.path.abspath(path))
    for a in arts:
        extra = set(a) - {"name", "kind", "source", "sha256", "dest", "strip-components"}
        if extra:
            raise SystemExit(f"bench: {path}: artifact {a.get('name')}: {', '.join(sorted(extra))}: expected only "
                             "name, kind, source, sha256, dest, strip-components (the others tar -x cannot mimic)")
        if a.get("kind") != "tar" or "source" not in a or "sha256" not in a:
            raise SystemExit(f"bench: {path}: artifact {a.get('name')}: expected kind tar with source and sha256")
        a["source"] = os.path.join(base, a["source"])
    return arts


def relevel(src, dst, level):
    """Write recipe src as dst with its compression level replaced."""
    text, n = re.subn(r"^(  level: )\d+$", rf"\g<1>{level}", open(src).read(), flags=re.M)
    if n != 1:
        raise SystemExit(f"bench: {src}: compression.level: expected one '  level: N' line, found {n}")
    with open(dst, "w") as f:
        f.write(text)


class Series:
    def __init__(self):
        self.t, self.rss, self.size, self.parts, self.info = [], [], [], {}, {}

    def add(self, secs, rss, size=None, parts=None, info=None):
        self.t.append(secs)
        self.rss.append(rss)
        if size is not None:
            self.size.append(size)
        for k, v in (parts or {}).items():
            self.parts.setdefault(k, []).append(v)
        if info:
            self.info = info

    def summary(self):
        d = {"median_s": round(statistics.median(self.t), 4), "runs_s": [round(x, 4) for x in self.t],
             "max_rss_kib": max(self.rss)}
        if self.size:
            d["size_bytes"] = self.size[-1]
        if self.parts:
            d["steps_median_s"] = {k: round(statistics.median(v), 4) for k, v in self.parts.items()}
        if self.info:
            d["build_summary"] = self.info
        return d


def main():
    if not os.access(GNU_TIME, os.X_OK):
        raise SystemExit("bench: /usr/bin/time (Debian package time) not found")
    if not os.access(INGOT, os.X_OK):
        raise SystemExit(f"bench: {INGOT} not built (make BUILD=...)")
    bad = set(ONLY) - set(ROW_SETS)
    if bad:
        raise SystemExit(f"bench: BENCH_ONLY: expected some of {', '.join(ROW_SETS)}, got {' '.join(sorted(bad))}")
    os.makedirs(WORK, exist_ok=True)
    want = lambda rows: not ONLY or rows in ONLY
    if want("build"):
        res = build_rows()
        if not ONLY:   # make bench: the builds against their floors too (issue 39)
            fl = floor_rows()
            res["results"].update(fl["results"])
            res["targets"].update(fl["targets"])
    elif want("sign"):
        res = sign_rows()
    elif want("floor"):
        res = floor_rows()
    else:
        res = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "host": {"machine": platform.machine(), "cpus": os.cpu_count(), "kernel": platform.release()},
               "params": {"rounds": ROUNDS, "limits": LIMITS}, "results": {}, "ratios": {}, "targets": {}}
    if want("audit") and AUDIT_NODES:
        results, targets = audit_rows()
        res["results"].update(results)
        res["targets"].update(targets)
        res["params"]["audit_nodes"], res["params"]["audit_aks"] = AUDIT_NODES, AUDIT_AKS
    if want("serve"):   # bench/serve_bench.py: the verifier under load and faults
        sys.path.insert(0, os.path.join(SRC, "bench"))
        import serve_bench
        results, targets, params = serve_bench.serve_rows(INGOT, BUILD, SRC, WORK)
        res["results"].update(results)
        res["targets"].update(targets)
        res["params"].update(params)
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    tmp = RESULTS + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, RESULTS)
    table(res)
    log(f"bench: wrote {RESULTS}")


def gensquashfs_argv(src, img, level):
    """gensquashfs packing directory src into img as every row packs it."""
    return ["gensquashfs", "--pack-dir", src, "--compressor", "zstd", "--comp-extra", f"level={level}",
            "--block-size", str(BLOCK), "--num-jobs", str(JOBS), "--all-root", "--defaults", f"mtime={EPOCH}",
            "--force", "--quiet", img]


def write_sums(arts, path):
    """The artifacts' pins as `sha256sum -c` reads them."""
    with open(path, "w") as f:
        f.writelines(f"{a['sha256']}  {a['source']}\n" for a in arts)


def floor_rows():
    """The least CPU any cold build of the input needs, whatever its design
    (streaming or not): the artifacts decompressed (igzip, ISA-L's gunzip,
    which ingot uses: the fastest streaming inflate Debian has), the image
    compressed and written (gensquashfs' CPU), and the hashing, at the
    rates OpenSSL reaches on this machine (timed on the image in the page
    cache, so no per-file costs are counted): SHA-256 over the artifacts
    (pins, once), over every file (the manifest), twice over the image
    (its dm-verity tree's level 0 and its digest), and SHA-1 over every
    file (the SBOM's SPDX checksums).  Half the sum (JOBS CPUs) is a lower
    bound on the cold build's wall time; it is compared with the
    cold-build limits against gensquashfs and the standard pipeline
    (sha256sum -c, tar -x, gensquashfs, veritysetup format), both timed
    here in the same run.  Also the floor of the rebuild after one artifact
    changed (bench-v2.yaml), priced the same way, and its ratio to the cold
    floor: the least rebuild / cold a build at its floor can show.
    BENCH_ROUNDS rounds, medians."""
    for tool in ("gensquashfs", "veritysetup", "sha256sum", "openssl", "tar", "igzip"):
        if not shutil.which(tool):
            raise SystemExit(f"bench: {tool} not found (scripts/deps.sh installs it)")
    data = bench_input()
    tree = os.path.join(data, "tree")
    out = os.path.join(WORK, "floor")
    rm(out)
    os.makedirs(out)
    arts = recipe_artifacts(os.path.join(data, "bench.yaml"))
    # the artifact the one-changed rebuild (bench-v2.yaml) brings
    old_sums = {a["sha256"] for a in arts}
    changed = [a for a in recipe_artifacts(os.path.join(data, "bench-v2.yaml")) if a["sha256"] not in old_sums]
    if len(changed) != 1 or not changed[0]["source"].endswith(".tar.gz"):
        raise SystemExit("bench: bench-v2.yaml: expected one changed .tar.gz artifact")
    v2 = changed[0]["source"]
    sums = os.path.join(out, "SHA256SUMS")
    write_sums(arts, sums)
    img, hashf, x = os.path.join(out, "g.sqfs"), os.path.join(out, "g.verity"), os.path.join(out, "x")
    x2, img2, imgw = os.path.join(out, "x2"), os.path.join(out, "v2.sqfs"), os.path.join(out, "w.sqfs")
    q = lambda p: "'" + p.replace("'", "'\\''") + "'"
    gz = [a["source"] for a in arts if a["source"].endswith(".gz")]
    rm(x2)
    os.makedirs(x2)
    subprocess.run(["tar", "-xzf", v2, "-C", x2], check=True)
    parts = {
        "gensquashfs": lambda: gensquashfs_argv(tree, img, LEVEL),
        "gunzip": lambda: ["bash", "-c", " && ".join(f"igzip -dc {q(g)} >/dev/null" for g in gz) or "true"],
        "sha256_of_image": lambda: ["openssl", "dgst", "-sha256", img],
        "sha1_of_image": lambda: ["openssl", "dgst", "-sha1", img],
        # the standard pipeline's other steps
        "sha256sum_c": lambda: ["sha256sum", "-c", "--quiet", "--strict", sums],
        "tar_x": lambda: ["bash", "-c", f"rm -rf {q(x)} && mkdir {q(x)} && " + " && ".join(
            f"tar -x{'z' if a['source'].endswith('.gz') else ''}f {q(a['source'])} -C {q(x)}" for a in arts)],
        "veritysetup_format": lambda: ["veritysetup", "format", img, hashf, "--hash", "sha256",
                                       "--data-block-size", "4096", "--hash-block-size", "4096"],
        # the rebuild's own: the changed artifact unpacked and compressed,
        # and the image copied: the reused bytes read, a new file written
        # (O_DIRECT: the least CPU a write takes here)
        "v2_gunzip": lambda: ["bash", "-c", f"igzip -dc {q(v2)} >/dev/null"],
        "v2_gensquashfs": lambda: gensquashfs_argv(x2, img2, LEVEL),
        "image_copy_direct": lambda: ["dd", f"if={img}", f"of={imgw}", "bs=1M", "oflag=direct", "status=none"],
        # the builds themselves, side by side with their floors (issue 39):
        # cold into a fresh store, then the one-changed rebuild on it
        "ingot_build_cold": lambda: [INGOT, "build", os.path.join(data, "bench.yaml"), "-o", os.path.join(out, "ingot"),
                                     "--store", store, "-j", str(JOBS), "--no-lint", "-q"],
        "ingot_rebuild_one_changed": lambda: [INGOT, "build", os.path.join(data, "bench-v2.yaml"), "-o",
                                              os.path.join(out, "ingot-v2"), "--store", store, "-j", str(JOBS),
                                              "--no-lint", "-q"],
    }
    store = os.path.join(out, "store")
    wall, cpu = {k: [] for k in parts}, {k: [] for k in parts}
    load = {k: [] for k in parts if k.startswith("ingot_")}
    for r in range(ROUNDS):
        log(f"bench: floor round {r + 1}/{ROUNDS} (load {os.getloadavg()[0]:.2f})")
        for k, argv in parts.items():
            if k == "ingot_build_cold":
                rm(store)
            if k in load:
                load[k].append(round(os.getloadavg()[0], 2))
            secs, _, c, _ = run_cpu(argv())
            wall[k].append(secs)
            cpu[k].append(c)
        rm(x)
    rm(store)
    W = {k: statistics.median(v) for k, v in wall.items()}
    C = {k: statistics.median(v) for k, v in cpu.items()}
    gib = 2 ** 30
    size = {"artifacts": sum(os.path.getsize(a["source"]) for a in arts),
            "files": sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(tree) for f in fs),
            "image": os.path.getsize(img)}
    sha256_rate = C["sha256_of_image"] / size["image"] * gib   # CPU-s per GiB
    sha1_rate = C["sha1_of_image"] / size["image"] * gib
    need = {"gunzip": C["gunzip"], "gensquashfs": C["gensquashfs"],
            "pins_sha256": sha256_rate * size["artifacts"] / gib,
            "files_sha256": sha256_rate * size["files"] / gib,
            "files_sha1": sha1_rate * size["files"] / gib,
            "image_sha256_twice": 2 * sha256_rate * size["image"] / gib}
    floor_cpu = sum(need.values())
    floor_wall = floor_cpu / JOBS
    # The one-changed rebuild's floor: whatever it reuses, it checks the
    # changed artifact's pin, unpacks it, digests and compresses its files,
    # writes a new image (outputs are never changed in place) and hashes
    # all of it twice.  Against the cold build's floor this is the least
    # rebuild / cold ratio a build at its floor can show.
    v2_files = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(x2) for f in fs)
    need_re = {"gunzip": C["v2_gunzip"], "compression": C["v2_gensquashfs"],
               "pin_sha256": sha256_rate * os.path.getsize(v2) / gib,
               "files_sha256": sha256_rate * v2_files / gib, "files_sha1": sha1_rate * v2_files / gib,
               "image_copy": C["image_copy_direct"],
               "image_sha256_twice": need["image_sha256_twice"]}
    re_cpu = sum(need_re.values())
    re_wall = re_cpu / JOBS
    rm(x2)
    rm(imgw)
    std_wall = W["sha256sum_c"] + W["tar_x"] + W["gensquashfs"] + W["veritysetup_format"]
    res_f = {"parts_cpu_s": {k: round(v, 3) for k, v in C.items()},
             "parts_wall_s": {k: round(v, 3) for k, v in W.items()},
             "bytes": size, "sha256_cpu_s_per_gib": round(sha256_rate, 3), "sha1_cpu_s_per_gib": round(sha1_rate, 3),
             "floor_parts_cpu_s": {k: round(v, 3) for k, v in need.items()},
             "floor_cpu_s": round(floor_cpu, 3), "floor_wall_s": round(floor_wall, 3),
             "gensquashfs_wall_s": round(W["gensquashfs"], 3), "std_pipeline_wall_s": round(std_wall, 3),
             "rebuild_parts_cpu_s": {k: round(v, 3) for k, v in need_re.items()},
             "rebuild_cpu_s": round(re_cpu, 3), "rebuild_wall_s": round(re_wall, 3)}
    # The builds against their floors: wall and CPU, min/median/max, the
    # CPU left idle (JOBS x wall - CPU) and the load before each run.
    vs = {}
    for k, f_cpu, f_wall in (("ingot_build_cold", floor_cpu, floor_wall),
                             ("ingot_rebuild_one_changed", re_cpu, re_wall)):
        mm = lambda v: [round(min(v), 3), round(statistics.median(v), 3), round(max(v), 3)]
        vs[k] = {"wall_s": mm(wall[k]), "cpu_s": mm(cpu[k]),
                 "idle_cpu_s": mm([JOBS * w - c for w, c in zip(wall[k], cpu[k])]),
                 "loadavg_1m": load[k], "floor_wall_s": round(f_wall, 3), "floor_cpu_s": round(f_cpu, 3),
                 "vs_floor": round(W[k] / f_wall, 3), "cpu_vs_floor_cpu": round(C[k] / f_cpu, 3)}
    res_f["builds_vs_floor"] = vs
    reach = lambda v, limit: {"floor_ratio": round(v, 3), "limit": limit, "reachable": v <= limit}
    met = lambda v, limit: {"value": v, "limit": limit, "met": v <= limit}
    return {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "host": {"machine": platform.machine(), "cpus": os.cpu_count(), "kernel": platform.release()},
            "params": {"size_mb": SIZE_MB, "rounds": ROUNDS, "level": LEVEL, "block_size": BLOCK, "jobs": JOBS,
                       "limits": LIMITS},
            "results": {"cold_build_floor": res_f}, "ratios": {},
            "targets": {"cold_build_floor": {
                "vs_gensquashfs": reach(floor_wall / W["gensquashfs"], LIMITS["cold_vs_gensquashfs"]),
                "vs_std_pipeline": reach(floor_wall / std_wall, LIMITS["cold_vs_std"]),
                # the least rebuild / cold of a build at its floor, and of
                # one whose cold build just meets both its limits
                "rebuild_vs_cold_floor": reach(re_wall / floor_wall, LIMITS["rebuild"]),
                "rebuild_vs_cold_limit": reach(re_wall / min(LIMITS["cold_vs_gensquashfs"] * W["gensquashfs"],
                                                             LIMITS["cold_vs_std"] * std_wall), LIMITS["rebuild"])},
                "builds_vs_floor": {
                    "cold": met(vs["ingot_build_cold"]["vs_floor"], LIMITS["cold_vs_floor"]),
                    "rebuild_one_changed": met(vs["ingot_rebuild_one_changed"]["vs_floor"],
                                               LIMITS["rebuild_vs_floor"])}}}


def audit_rows():
    """`ingot audit` of bulk pools from scripts/gen-reports.py (N nodes over
    AUDIT_AKS AKs, 2% drifted; generated once into WORK/audit-N): wall,
    CPU and peak RSS over BENCH_ROUNDS runs, the verdicts against the
    generator's expected.json, and whether every run wrote the same bytes."""
    gen = os.path.join(SRC, "scripts", "gen-reports.py")
    mkquote = os.path.join(BUILD, "tools", "mkquote")
    results, targets = {}, {}
    for n in AUDIT_NODES:
        d = os.path.join(WORK, f"audit-{n}")
        stamp = os.path.join(d, ".done")
        want = f"{n} {AUDIT_AKS} {hashlib.sha256(open(gen, 'rb').read()).hexdigest()}\n"
        if not os.path.exists(stamp) or open(stamp).read() != want:
            rm(d)
            log(f"bench: generating a pool of {n} node reports in {d}")
            subprocess.run([sys.executable, gen, "--ingot", INGOT, "--mkquote", mkquote, "--out", d,
                            "--scenario", "bulk", "--nodes", str(n), "--aks", str(AUDIT_AKS)],
                           check=True, stdout=subprocess.DEVNULL)
            open(stamp, "w").write(want)
        ser, cpu, digests, load = Series(), [], set(), []
        out = os.path.join(WORK, f"audit-{n}.json")
        for r in range(ROUNDS):
            rm(out)
            load.append(os.getloadavg()[0])
            log(f"bench: audit of {n} reports, round {r + 1}/{ROUNDS} (load {load[-1]:.2f})")
            # Exit 1: the pool's drifted nodes.
            secs, rss, c, _ = run_cpu([INGOT, "audit", "--keyring", os.path.join(d, "keyring.json"),
                                       "--manifests", os.path.join(d, "manifests"),
                                       "--reports", os.path.join(d, "reports"),
                                       "--nonces", os.path.join(d, "nonces.txt"), "--aks", os.path.join(d, "aks.txt"),
                                       "--nodes", os.path.join(d, "nodes.txt"), "--now", "1796083200",
                                       "--json", out], ok=(0, 1))
            ser.add(secs, rss)
            cpu.append(c)
            digests.add(sha256sum(out))
        got = {row["node"]: row["verdict"] for row in json.load(open(out))["nodes"]}
        exp = {k: v["verdict"] for k, v in json.load(open(os.path.join(d, "expected.json"))).items()}
        wrong = sum(1 for k in set(got) | set(exp) if got.get(k) != exp.get(k))
        row = ser.summary()
        row.update({"nodes": n, "cpu_median_s": round(statistics.median(cpu), 3), "verdicts_wrong": wrong,
                    "identical_output": len(digests) == 1, "loadavg_1m": [round(x, 2) for x in load]})
        results[f"ingot_audit_{n}"] = row
        limit_s = LIMITS["audit_s_per_100k"] * n / 100000
        targets[f"audit_{n}"] = {
            "wall_s": {"value": row["median_s"], "limit": limit_s, "met": row["median_s"] <= limit_s},
            "peak_rss_mib": {"value": round(row["max_rss_kib"] / 1024, 1), "limit": LIMITS["audit_rss_mib"],
                             "met": row["max_rss_kib"] / 1024 <= LIMITS["audit_rss_mib"]},
            "verdicts_wrong": {"value": wrong, "limit": 0, "met": wrong == 0},
            "runs_differing": {"value": len(digests) - 1, "limit": 0, "met": len(digests) == 1},
        }
    return results, targets


def bench_input():
    """The generated input of SIZE_MB (bench/gen-tree.py), made once into WORK."""
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
    return data


def small_ratios(R):
    return {"sign_vs_openssl": R["ingot_sign"]["median_s"] / R["openssl_sign"]["median_s"],
            "verify_vs_openssl": R["ingot_verify_manifest"]["median_s"] / R["openssl_verify"]["median_s"]}


def small_targets(ratios):
    t = lambda v: {"value": round(v, 3), "limit": LIMITS["small_vs_openssl"], "met": v <= LIMITS["small_vs_openssl"]}
    return {"sign": t(ratios["sign_vs_openssl"]), "verify_manifest": t(ratios["verify_vs_openssl"])}


def sign_rows():
    """Only the signing rows: one cold build of the SIZE_MB input (its
    manifest is what gets signed), then small_ops."""
    for tool in ("openssl",):
        if not shutil.which(tool):
            raise SystemExit(f"bench: {tool} not found (scripts/deps.sh installs it)")
    data = bench_input()
    out = os.path.join(WORK, f"sign-{SIZE_MB}")
    rm(out)
    os.makedirs(out)
    log(f"bench: building the {SIZE_MB} MiB input once for its manifest")
    run([INGOT, "build", os.path.join(data, "bench.yaml"), "-o", os.path.join(out, "ingot"),
         "--store", os.path.join(out, "store"), "-j", str(JOBS), "--no-lint", "-q"])
    rm(os.path.join(out, "store"))
    man = os.path.join(out, "ingot", "bench.manifest.json")
    R = small_ops(out)
    ratios = small_ratios(R)
    return {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "host": {"machine": platform.machine(), "cpus": os.cpu_count(), "kernel": platform.release()},
            "params": {"size_mb": SIZE_MB, "rounds": ROUNDS, "small_reps": SMALL_REPS, "limits": LIMITS,
                       "manifest_bytes": os.path.getsize(man),
                       "envelope_bytes": os.path.getsize(os.path.join(out, "small", "env.json"))},
            "results": R, "ratios": {k: round(v, 3) for k, v in ratios.items()},
            "targets": {f"vs_openssl_{SIZE_MB}mib": small_targets(ratios)}}


def build_rows():
    for tool in ("mksquashfs", "gensquashfs", "tar2sqfs", "veritysetup", "openssl", "sha256sum"):
        if not shutil.which(tool):
            raise SystemExit(f"bench: {tool} not found (scripts/deps.sh installs it)")
    if not os.access(INGOT, os.X_OK):
        raise SystemExit(f"bench: {INGOT} not built (make BUILD=...)")
    if ROUNDS < 1 or REBUILD_ROUNDS < 0:
        raise SystemExit("bench: BENCH_ROUNDS: expected >= 1; BENCH_REBUILD_ROUNDS: expected >= 0")
    data = bench_input()
    tree = os.path.join(data, "tree")
    out = os.path.join(WORK, "out")
    rm(out)
    os.makedirs(out)
    # Written every run (cheap), so they always follow bench.yaml.
    for v in ("bench", "bench-v2"):
        relevel(os.path.join(data, f"{v}.yaml"), os.path.join(data, f"{v}-{L2}.yaml"), REBUILD_LEVEL)
    arts = recipe_artifacts(os.path.join(data, "bench.yaml"))
    sums = os.path.join(out, "SHA256SUMS")
    write_sums(arts, sums)
    s = {k: Series() for k in ("ingot_build_cold", "ingot_rebuild_one_changed", f"ingot_build_cold_{L2}",
                               f"ingot_rebuild_one_changed_{L2}", "mksquashfs", "gensquashfs", f"gensquashfs_{L2}",
                               "tar2sqfs",
                               "std_pipeline", "ingot_image_writer", f"ingot_image_writer_{L2}", "ingot_sha256_verity", "sha256sum",
                               "veritysetup_format")}
    have_writer = os.access(SQFS_FROM_DIR, os.X_OK)
    ingot_img = os.path.join(out, "ingot", "bench.sqfs")

    def ingot_pair(sfx):
        """Cold build into a fresh store, then the rebuild after one artifact
        changed (one Python file patched) with the same, now warm, store."""
        v = f"-{L2}" if sfx else ""
        store = os.path.join(out, "store" + v)
        rm(store)
        rm(os.path.join(out, "ingot" + v))
        # Without -q: the summary's cache counts are recorded.
        secs, rss, o = run([INGOT, "build", os.path.join(data, f"bench{v}.yaml"), "-o", os.path.join(out, "ingot" + v),
                            "--store", store, "-j", str(JOBS), "--no-lint"])
        s["ingot_build_cold" + sfx].add(secs, rss, os.path.getsize(os.path.join(out, "ingot" + v, "bench.sqfs")),
                                        info=build_summary(o))
        secs, rss, o = run([INGOT, "build", os.path.join(data, f"bench-v2{v}.yaml"), "-o",
                            os.path.join(out, "ingot-v2" + v), "--store", store, "-j", str(JOBS), "--no-lint"])
        s["ingot_rebuild_one_changed" + sfx].add(secs, rss, info=build_summary(o))

    def do_ingot():
        ingot_pair("")

    def do_ingot_l2():
        ingot_pair("_" + L2)

    def do_mksquashfs():
        img = os.path.join(out, "mksquashfs.sqfs")
        rm(img)
        secs, rss, _ = run(["mksquashfs", tree, img, "-reproducible", "-comp", "zstd", "-Xcompression-level",
                            str(LEVEL), "-b", str(BLOCK), "-all-root", "-mkfs-time", str(EPOCH), "-all-time",
                            str(EPOCH), "-processors", str(JOBS), "-noappend", "-quiet", "-no-progress"])
        s["mksquashfs"].add(secs, rss, os.path.getsize(img))

    def gensquashfs(src, img, level):
        rm(img)
        return run(gensquashfs_argv(src, img, level))[:2]

    def do_gensquashfs():
        img = os.path.join(out, "gensquashfs.sqfs")
        s["gensquashfs"].add(*gensquashfs(tree, img, LEVEL), os.path.getsize(img))

    def do_gensquashfs_l2():
        img = os.path.join(out, f"gensquashfs-{L2}.sqfs")
        s[f"gensquashfs_{L2}"].add(*gensquashfs(tree, img, REBUILD_LEVEL), os.path.getsize(img))

    def do_tar2sqfs():
        """squashfs-tools-ng's streaming packer from the same artifacts:
        their tars back to back (bench/tarcat.py: gunzipped, one end
        marker) into tar2sqfs with the gensquashfs row's settings.  No pin
        check, no hash tree; the pipeline is timed as one command."""
        img = os.path.join(out, "tar2sqfs.sqfs")
        rm(img)
        if any(a["dest"] not in ("/", "") or a["strip-components"] != "0" for a in arts):
            raise SystemExit("bench: tar2sqfs row: expected artifacts without dest or strip-components")
        cmd = ("%s %s %s | tar2sqfs --compressor zstd --comp-extra level=%d --block-size %d --num-jobs %d "
               "--defaults mtime=%d --no-keep-time --force --quiet %s" %
               (sys.executable, os.path.join(SRC, "bench", "tarcat.py"), " ".join(a["source"] for a in arts),
                LEVEL, BLOCK, JOBS, EPOCH, img))
        secs, rss, _ = run(["bash", "-c", "set -o pipefail; " + cmd])
        s["tar2sqfs"].add(secs, rss, os.path.getsize(img))

    def do_std():
        """The standard pipeline from the same pinned artifacts to an image
        and its hash tree: check the pins, unpack in recipe order into a
        fresh directory, pack, format the hash tree.  Each step is its own
        process; the series time is their sum (mkdir and rm are untimed)."""
        d = os.path.join(out, "std")
        rm(d)
        os.makedirs(d)
        root = os.path.join(d, "tree")
        img, hashf = os.path.join(d, "std.sqfs"), os.path.join(d, "std.verity")
        steps = {"sha256sum_c": run(["sha256sum", "-c", "--quiet", "--strict", sums])[:2]}
        t = r = 0
        for a in arts:
            dest = os.path.join(root, a["dest"].lstrip("/"))
            os.makedirs(dest, exist_ok=True)
            argv = ["tar", "-x", "-f", a["source"], "-C", dest]
            if a["source"].endswith(".gz"):
                argv.insert(2, "-z")
            if a["strip-components"] != "0":
                argv.append(f"--strip-components={a['strip-components']}")
            secs, rss = run(argv)[:2]
            t, r = t + secs, max(r, rss)
        steps["tar_x"] = (t, r)
        steps["gensquashfs"] = gensquashfs(root, img, LEVEL)
        steps["veritysetup_format"] = run(["veritysetup", "format", img, hashf, "--hash", "sha256",
                                           "--data-block-size", "4096", "--hash-block-size", "4096"])[:2]
        s["std_pipeline"].add(sum(v[0] for v in steps.values()), max(v[1] for v in steps.values()),
                              os.path.getsize(img), parts={k: v[0] for k, v in steps.items()})
        std_img.append(img)
        rm(root)

    def writer(level, sfx):
        if not have_writer:
            return
        st = os.path.join(out, "writer-store")
        img = os.path.join(out, f"writer{sfx}.sqfs")
        ver = os.path.join(out, "writer.verity")
        # Store filled first (and synced: untimed): write_seconds times
        # image_write alone.
        secs, rss, o = run([SQFS_FROM_DIR, "-c", "zstd", "-l", str(level), "-b", str(BLOCK), "-j", str(JOBS),
                            "-m", str(EPOCH), "--all-root", "-V", ver, "-s", st, tree, img])
        v = kv(o)
        s["ingot_image_writer" + sfx].add(float(v["write_seconds"]), rss, os.path.getsize(img))
        if not sfx:
            s["ingot_sha256_verity"].add(float(v["verity_seconds"]), rss)
        rm(st)

    def do_writer():
        writer(LEVEL, "")

    def do_writer_l2():
        writer(REBUILD_LEVEL, "_" + L2)

    def do_verity_tools():
        hashf = os.path.join(out, "vs.verity")
        rm(hashf)
        secs, rss, _ = run(["sha256sum", ingot_img])
        s["sha256sum"].add(secs, rss)
        secs, rss, _ = run(["veritysetup", "format", ingot_img, hashf, "--hash", "sha256",
                            "--data-block-size", "4096", "--hash-block-size", "4096"])
        s["veritysetup_format"].add(secs, rss)

    std_img = []
    do_ingot_l2.__name__, do_gensquashfs_l2.__name__ = f"do_ingot_{L2}", f"do_gensquashfs_{L2}"
    do_writer_l2.__name__ = f"do_writer_{L2}"
    steps = [do_ingot, do_ingot_l2, do_mksquashfs, do_gensquashfs, do_gensquashfs_l2, do_writer, do_writer_l2,
             do_std, do_tar2sqfs]
    slow = (do_ingot_l2, do_gensquashfs_l2, do_writer_l2)   # BENCH_REBUILD_ROUNDS rounds, the rest BENCH_ROUNDS
    nrounds = max(ROUNDS, REBUILD_ROUNDS)
    for r in range(nrounds):
        act = [f for f in steps if r < (REBUILD_ROUNDS if f in slow else ROUNDS)]
        order = act[r % len(act):] + act[:r % len(act)]   # rotate: no tool always goes first
        log(f"bench: round {r + 1}/{nrounds}: " + ", ".join(f.__name__[3:] for f in order))
        for f in order:
            f()
        if r < ROUNDS:
            do_verity_tools()
    # Same tree, same settings: the pipeline's image must be gensquashfs'.
    same_std = sha256sum(std_img[-1]) == sha256sum(os.path.join(out, "gensquashfs.sqfs"))
    if not same_std:
        log("bench: WARNING: the std_pipeline image differs from the gensquashfs one (not the same tree?)")

    small = small_ops(out)
    res = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {"machine": platform.machine(), "cpus": os.cpu_count(), "kernel": platform.release()},
        "params": {"size_mb": SIZE_MB, "rounds": ROUNDS, "compression": "zstd", "level": LEVEL,
                   "block_size": BLOCK, "jobs": JOBS, "small_reps": SMALL_REPS, "rebuild_level": REBUILD_LEVEL,
                   "rebuild_rounds": REBUILD_ROUNDS, "limits": LIMITS},
        "input": {"files": sum(len(f) for _, _, f in os.walk(tree)),
                  "bytes": sum(os.path.getsize(os.path.join(d, x)) for d, _, f in os.walk(tree) for x in f),
                  "artifact_bytes": sum(os.path.getsize(os.path.join(data, "art", x))
                                        for x in os.listdir(os.path.join(data, "art")))},
        "results": {k: v.summary() for k, v in s.items() if v.t},
    }
    res["results"].update(small)
    res["std_pipeline_image_equals_gensquashfs"] = same_std
    if NODE_NOTE:
        res["node_check_outcome"] = NODE_NOTE[0]
    R = res["results"]
    med = lambda k: R[k]["median_s"] if k in R else None
    ratios = {
        "ingot_build_vs_mksquashfs": med("ingot_build_cold") / med("mksquashfs"),
        "ingot_build_vs_gensquashfs": med("ingot_build_cold") / med("gensquashfs"),
        "ingot_build_vs_std_pipeline": med("ingot_build_cold") / med("std_pipeline"),
        "ingot_build_vs_tar2sqfs": med("ingot_build_cold") / med("tar2sqfs"),
        "tar2sqfs_vs_gensquashfs": med("tar2sqfs") / med("gensquashfs"),
        "rebuild_one_changed_vs_cold": med("ingot_rebuild_one_changed") / med("ingot_build_cold"),
        "image_size_vs_mksquashfs": R["ingot_build_cold"]["size_bytes"] / R["mksquashfs"]["size_bytes"],
        "image_size_vs_gensquashfs": R["ingot_build_cold"]["size_bytes"] / R["gensquashfs"]["size_bytes"],
    }
    if REBUILD_ROUNDS:
        ratios[f"rebuild_one_changed_vs_cold_{L2}"] = (med(f"ingot_rebuild_one_changed_{L2}") /
                                                       med(f"ingot_build_cold_{L2}"))
        ratios[f"ingot_build_{L2}_vs_gensquashfs_{L2}"] = med(f"ingot_build_cold_{L2}") / med(f"gensquashfs_{L2}")
        ratios[f"image_size_{L2}_vs_gensquashfs_{L2}"] = (R[f"ingot_build_cold_{L2}"]["size_bytes"] /
                                                          R[f"gensquashfs_{L2}"]["size_bytes"])
    if "ingot_image_writer" in R:
        ratios["image_writer_vs_mksquashfs"] = med("ingot_image_writer") / med("mksquashfs")
        ratios["image_writer_vs_gensquashfs"] = med("ingot_image_writer") / med("gensquashfs")
        if REBUILD_ROUNDS and f"ingot_image_writer_{L2}" in R:
            ratios[f"image_writer_{L2}_vs_gensquashfs_{L2}"] = (med(f"ingot_image_writer_{L2}") /
                                                                med(f"gensquashfs_{L2}"))
        ratios["sha256_verity_vs_sha256sum_plus_veritysetup"] = (
            med("ingot_sha256_verity") / (med("sha256sum") + med("veritysetup_format")))
    ratios.update(small_ratios(R))
    res["ratios"] = {k: round(v, 3) for k, v in ratios.items()}

    def target(value, limit, strict=False):
        return {"value": round(value, 3), "limit": limit, "met": value < limit if strict else value <= limit}

    L = LIMITS
    writer_t = {}
    if "image_writer_vs_gensquashfs" in ratios:
        writer_t[f"level_{LEVEL}"] = target(ratios["image_writer_vs_gensquashfs"], L["writer"])
    if f"image_writer_{L2}_vs_gensquashfs_{L2}" in ratios:
        writer_t[f"level_{REBUILD_LEVEL}"] = target(ratios[f"image_writer_{L2}_vs_gensquashfs_{L2}"],
                                                    L["writer_slow"])
    rebuild = {f"level_{LEVEL}": target(ratios["rebuild_one_changed_vs_cold"], L["rebuild"])}
    if REBUILD_ROUNDS:
        rebuild[f"level_{REBUILD_LEVEL}"] = target(ratios[f"rebuild_one_changed_vs_cold_{L2}"], L["rebuild"])
    builds = [k for k in R if k.startswith(("ingot_build_cold", "ingot_rebuild_one_changed"))]
    res["targets"] = {
        "image_writer_vs_gensquashfs": writer_t or None,
        "cold_build": {
            "vs_gensquashfs": target(ratios["ingot_build_vs_gensquashfs"], L["cold_vs_gensquashfs"]),
            "vs_std_pipeline": target(ratios["ingot_build_vs_std_pipeline"], L["cold_vs_std"]),
        },
        "rebuild_one_changed_vs_cold": rebuild,
        # Every ingot build row, both levels: the limit holds for any build.
        "ingot_build_peak_rss_mib": target(max(R[k]["max_rss_kib"] for k in builds) / 1024, L["rss_mib"]),
        "vs_openssl": small_targets(ratios),
        "node_check_ms": target(R["ingot_verify_node"]["median_s"] * 1000, L["node_ms"], strict=True)
        if "ingot_verify_node" in R else None,
    }
    return res


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
    # openssl signs the same PAE bytes ingot signs (DSSE v1): the small
    # statement; ingot also hashes the manifest file it binds, in both rows
    # (verify-manifest reads it by --file-list, the envelope being in d).
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
                                               os.path.join(d, "ring.json"), "--now", DATE,
                                               "--file-list", man])[:2])
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
    if "input" in res:
        print(f"ingot bench: {res['input']['files']} files, {res['input']['bytes'] / 2**20:.0f} MiB "
          f"(artifacts {res['input']['artifact_bytes'] / 2**20:.0f} MiB), zstd level {p['level']}, "
          f"block {p['block_size']}, {p['jobs']} jobs, {p['rounds']} rounds ({p['rebuild_rounds']} at level "
          f"{p['rebuild_level']}), {res['host']['cpus']} CPUs")
    elif "cold_build_floor" in R:
        print(f"ingot bench: the cold build's floor on the {p['size_mb']} MiB input, zstd level {p['level']}, "
              f"{p['rounds']} rounds, {res['host']['cpus']} CPUs")
    elif "size_mb" in p:
        print(f"ingot bench: signing the manifest of the {p['size_mb']} MiB input ({p['manifest_bytes']} bytes; "
              f"envelope {p['envelope_bytes']} bytes), {p['small_reps']} runs each, {res['host']['cpus']} CPUs")
    else:
        print(f"ingot bench: {p['rounds']} rounds, {res['host']['cpus']} CPUs")
    print(f"{'what':34} {'median':>10} {'max RSS':>10} {'image':>12}")
    for k, v in R.items():
        if "median_s" not in v:
            continue
        med = v["median_s"]
        t = f"{med * 1000:.1f} ms" if med < 1 else f"{med:.2f} s"
        size = f"{v['size_bytes'] / 2**20:.1f} MiB" if "size_bytes" in v else ""
        print(f"{k:34} {t:>10} {v['max_rss_kib'] / 1024:>7.1f} MiB {size:>12}")
    print("ratios:")
    for k, v in res["ratios"].items():
        print(f"  {k:44} {v:.3f}")
    print("details:")
    for k, v in R.items():
        b = v.get("build_summary", {})
        if "artifacts_from_cache" in b:
            line = f"{b['artifacts_from_cache']}/{b['artifacts']} artifacts from the store"
            if "blocks_from_block_cache" in b:
                n = b["blocks_compressed"] + b["blocks_from_block_cache"]
                line += f", {b['blocks_from_block_cache']}/{n} blocks from the block cache"
            if b.get("files_from_file_cache"):
                line += f", {b['files_from_file_cache']} files from the file cache"
            print(f"  {k:44} {line}")
        if "steps_median_s" in v:
            print(f"  {k:44} " + ", ".join(f"{s} {t:.2f} s" for s, t in v["steps_median_s"].items()))
        if "cpu_median_s" in v:
            print(f"  {k:44} {v['nodes']} reports, {v['cpu_median_s']:.2f} CPU-s, {v['verdicts_wrong']} verdicts "
                  f"wrong, output {'identical' if v['identical_output'] else 'DIFFERS'} across runs, "
                  f"load {'/'.join(str(x) for x in v['loadavg_1m'])}")
        if "storm" in v:
            st = v["storm"]
            print(f"  {k:44} {st['nodes']} nodes, {st['concurrency']} connections: {st['admitted']} admitted, "
                  f"{st['refused_as_expected']} refused as expected, {st['verdicts_wrong']} wrong, {st['retries']} "
                  f"retries; evidence p50/p99/max {st['evidence_ms']['p50']:.0f}/{st['evidence_ms']['p99']:.0f}/"
                  f"{st['evidence_ms']['max']:.0f} ms, nonce p99 {st['nonce_ms']['p99']:.0f} ms"
                  + (f", load {'/'.join(str(x) for x in v['loadavg_1m'])}" if "loadavg_1m" in v else ""))
    if "cold_build_floor" in R:
        f = R["cold_build_floor"]
        print(f"  {'cold_build_floor':44} " + ", ".join(f"{k} {t:.2f}" for k, t in f["floor_parts_cpu_s"].items())
              + " CPU-s")
        print(f"  {'':44} floor {f['floor_cpu_s']:.2f} CPU-s = {f['floor_wall_s']:.2f} s on {p['jobs']} CPUs; "
              f"gensquashfs {f['gensquashfs_wall_s']:.2f} s, standard pipeline {f['std_pipeline_wall_s']:.2f} s")
        if "rebuild_cpu_s" in f:
            print(f"  {'rebuild_floor (one changed)':44} " + ", ".join(f"{k} {t:.2f}" for k, t in
                                                                   f["rebuild_parts_cpu_s"].items()) + " CPU-s")
            print(f"  {'':44} floor {f['rebuild_cpu_s']:.2f} CPU-s = {f['rebuild_wall_s']:.2f} s on {p['jobs']} CPUs")
        for k, b in f.get("builds_vs_floor", {}).items():
            span = lambda v: "/".join(f"{x:.2f}" for x in v)
            print(f"  {k:44} wall {span(b['wall_s'])} s, CPU {span(b['cpu_s'])} CPU-s, idle {span(b['idle_cpu_s'])} "
                  f"CPU-s (min/median/max); {b['vs_floor']:.2f}x the floor's wall, {b['cpu_vs_floor_cpu']:.2f}x its "
                  f"CPU; load {'/'.join(str(x) for x in b['loadavg_1m'])}")
    print("targets:")
    for k, v in res["targets"].items():
        if v is None:
            continue
        if k == "cold_build_floor":
            for name, t in v.items():
                print(f"  {k:44} {name:24} {t['floor_ratio']:>8.3f} (limit {t['limit']}) "
                      f"{'reachable' if t['reachable'] else 'OUT OF REACH on this machine'}")
            continue
        subs = v.items() if "met" not in v else [("", v)]
        for name, t in subs:
            print(f"  {k:44} {name:24} {t['value']:>8.3f} (limit {t['limit']}) {'met' if t['met'] else 'NOT MET'}")


main()
