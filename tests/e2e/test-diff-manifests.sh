#!/bin/bash
# ingot diff on handwritten manifests: an h100 pool and a candidate that
# bumps only the driver must show exactly the driver's tuple field, its
# artifact and its files; identical manifests exit 0; bad input exits 2.
. "$(dirname "$0")/lib.sh"

# gen OUT DRIVER_VERSION: a manifest whose driver artifact and files
# depend on DRIVER_VERSION, everything else fixed.
gen() {
	python3 - "$1" "$2" <<'PY'
import hashlib, json, sys
out, drv = sys.argv[1], sys.argv[2]
h = lambda s: hashlib.sha256(s.encode()).hexdigest()
files = [
    {"path": "/etc", "type": "dir", "mode": "0755", "uid": 0, "gid": 0},
    {"path": "/etc/os-release", "type": "file", "mode": "0644", "uid": 0, "gid": 0,
     "size": 20, "sha256": h("os")},
    {"path": "/usr/bin/nvidia-smi", "type": "file", "mode": "0755", "uid": 0, "gid": 0,
     "size": 1000, "sha256": h("smi" + drv)},
    {"path": "/usr/lib/libcuda.so", "type": "symlink", "mode": "0777", "uid": 0, "gid": 0,
     "target": "libcuda.so." + drv},
    {"path": "/usr/lib/libcuda.so." + drv, "type": "file", "mode": "0755", "uid": 0,
     "gid": 0, "size": 5000, "sha256": h("cuda" + drv)},
    {"path": "/usr/lib/libnccl.so.2", "type": "file", "mode": "0644", "uid": 0, "gid": 0,
     "size": 7000, "sha256": h("nccl")},
]
files.sort(key=lambda f: f["path"].encode())
m = {
    "schema": "ingot.manifest/v1", "ingot_version": "0.1.0",
    "recipe": {"name": "h100", "version": "1", "file": "h100.yaml", "sha256": h("recipe")},
    "epoch": 1767225600, "serial": 7, "expires": None,
    "tuple": {"vendor": "nvidia", "gpu": "h100",
              "driver": {"version": drv, "flavor": "open"},
              "cuda": "13.0", "nccl": "2.27.7"},
    "artifacts": [
        {"name": "base", "kind": "tar", "source": "base.tar.gz", "sha256": h("base"), "size": 10},
        {"name": "nvidia-driver", "kind": "tar", "source": "driver-%s.tar.gz" % drv,
         "sha256": h("drv" + drv), "size": 99},
        {"name": "nccl", "kind": "deb", "source": "nccl.deb", "sha256": h("ncclpkg"), "size": 5},
    ],
    "files": files,
}
json.dump(m, open(out, "w"), indent=1)
PY
}

gen "$T/a.json" 580.95.05
gen "$T/b.json" 580.105.08
cp "$T/a.json" "$T/a2.json"

note "identical manifests exit 0"
expect_exit 0 "identical" "$INGOT" diff "$T/a.json" "$T/a2.json"
OUT=$("$INGOT" diff --json "$T/a.json" "$T/a2.json")
assert_eq true "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(str(json.load(sys.stdin)["identical"]).lower())')" identical

note "driver bump: exactly the driver"
expect_exit 1 "" "$INGOT" diff "$T/a.json" "$T/b.json"
echo "$OUT"
assert_contains "$OUT" "~ driver.version: 580.95.05 -> 580.105.08"
assert_contains "$OUT" "~ nvidia-driver: sha256 "
assert_contains "$OUT" "- /usr/lib/libcuda.so.580.95.05 (file 0755"
assert_contains "$OUT" "+ /usr/lib/libcuda.so.580.105.08 (file 0755"
assert_contains "$OUT" "~ /usr/bin/nvidia-smi: sha256 "
assert_contains "$OUT" "~ /usr/lib/libcuda.so: target libcuda.so.580.95.05 -> libcuda.so.580.105.08"
assert_contains "$OUT" "summary: tuple 1 changed; artifacts 0 added, 0 removed, 1 changed; files 1 added, 1 removed, 2 changed; other 0 changed"

"$INGOT" diff --json "$T/a.json" "$T/b.json" >"$T/d.json" || [ $? -eq 1 ] || fail "diff --json exit"
python3 - "$T/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["identical"] is False
assert d["tuple"] == [{"field": "driver.version", "a": "580.95.05", "b": "580.105.08"}], d["tuple"]
arts = d["artifacts"]
assert arts["added"] == [] and arts["removed"] == [], arts
assert [c["name"] for c in arts["changed"]] == ["nvidia-driver"], arts
assert sorted(c["field"] for c in arts["changed"][0]["changes"]) == ["sha256", "source"]
f = d["files"]
assert [x["path"] for x in f["added"]] == ["/usr/lib/libcuda.so.580.105.08"]
assert [x["path"] for x in f["removed"]] == ["/usr/lib/libcuda.so.580.95.05"]
assert [x["path"] for x in f["changed"]] == ["/usr/bin/nvidia-smi", "/usr/lib/libcuda.so"]
assert d["other"] == [], d["other"]
assert len(d["files"]["changed"][0]["changes"][0]["a"]) == 64  # full digests in JSON
PY

note "argument order: B to A reverses + and -"
expect_exit 1 "+ /usr/lib/libcuda.so.580.95.05" "$INGOT" diff "$T/b.json" "$T/a.json"

note "a mode change and a serial change are named"
python3 - "$T/a.json" "$T/c.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["files"][1]["mode"] = "4755"
m["serial"] = 8
json.dump(m, open(sys.argv[2], "w"))
PY
expect_exit 1 "~ /etc/os-release: mode 0644 -> 4755" "$INGOT" diff "$T/a.json" "$T/c.json"
assert_contains "$OUT" "~ serial: 7 -> 8"

note "bad input exits 2 and names the problem"
echo '{"schema":"other"}' >"$T/bad.json"
expect_exit 2 'schema: expected "ingot.manifest/v1"' "$INGOT" diff "$T/a.json" "$T/bad.json"
expect_exit 2 "cannot open" "$INGOT" diff "$T/a.json" "$T/missing.json"
printf '{"schema":' >"$T/trunc.json"
expect_exit 2 "invalid JSON" "$INGOT" diff "$T/trunc.json" "$T/a.json"
python3 - "$T/a.json" "$T/dup.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["files"].append(dict(m["files"][0]))
json.dump(m, open(sys.argv[2], "w"))
PY
expect_exit 2 "appears twice" "$INGOT" diff "$T/a.json" "$T/dup.json"

note "usage"
expect_exit 64 "expected two manifests" "$INGOT" diff "$T/a.json"
expect_exit 64 "unknown option" "$INGOT" diff --frob "$T/a.json" "$T/b.json"
expect_exit 0 "EXIT STATUS" "$INGOT" diff --help
