#!/bin/bash
# ingot diff on manifests made by the real `ingot build`: a pool and a
# candidate that bumps only the driver (580.95.05 -> 580.105.08) must show
# exactly the driver's tuple field, its artifact and the files that tar(1)
# lists in the two driver archives - nothing of NCCL.  A rebuild of the
# same recipe diffs as identical; signed envelopes diff like manifests.
. "$(dirname "$0")/lib.sh"

MK="python3 $SRC/scripts/mkart.py"
KVER=6.8.0-45-generic
cd "$T"
driver() { # VERSION: modules, libcuda and nvidia-smi of one driver release
	local v=$1 r=$T/drv-$1
	mkdir -p "$r/lib/modules/$KVER/kernel/drivers/video" "$r/usr/lib/x86_64-linux-gnu" "$r/usr/bin"
	$MK ko --out "$r/lib/modules/$KVER/kernel/drivers/video/nvidia.ko" --name nvidia --version "$v" --flavor open
	$MK so --out "$r/usr/lib/x86_64-linux-gnu/libcuda.so.$v" --soname libcuda.so.1 --version-string "CUDA driver $v"
	ln -s "libcuda.so.$v" "$r/usr/lib/x86_64-linux-gnu/libcuda.so.1"
	$MK blob --out "$r/usr/bin/nvidia-smi" --size 4096 --seed "smi-$v"
	chmod 0755 "$r/usr/bin/nvidia-smi"
	$MK tar --out "$T/art/driver-$v.tar.xz" --root "$r"
}
mkdir -p art nccl/usr/lib a b
driver 580.95.05
driver 580.105.08
$MK so --out nccl/usr/lib/libnccl.so.2.27.7 --soname libnccl.so.2 --version-string "NCCL version 2.27.7+cuda13.0"
$MK tar --out art/nccl.tar.xz --root nccl

recipe() { # DIR DRIVER-VERSION
	cat >"$1/h100.yaml" <<EOR
name: h100
version: "2026.12"
epoch: 1760000000
serial: 3
artifacts:
  - name: nvidia-driver
    kind: tar
    source: ../art/driver-$2.tar.xz
    sha256: $(sha256 "art/driver-$2.tar.xz")
  - name: nccl
    kind: tar
    source: ../art/nccl.tar.xz
    sha256: $(sha256 art/nccl.tar.xz)
files:
  - path: /etc/ingot/pool
    content: "h100\n"
tuple:
  vendor: nvidia
  gpu:
    models: [H100]
  smi: nvidia-smi
  driver:
    version: $2
    flavor: open
    artifact: nvidia-driver
  nccl:
    version: 2.27.7
    artifact: nccl
EOR
}
recipe a 580.95.05
recipe b 580.105.08
"$INGOT" keys generate -o "$T/release" >/dev/null
for d in a b; do
	"$INGOT" build "$d/h100.yaml" -o "$d/out" --store "$T/store" --date 2026-12-01 --key "$T/release.key" -q ||
		fail "ingot build $d failed"
done
"$INGOT" build a/h100.yaml -o a/again --store "$T/store" --date 2026-12-01 -q || fail "rebuild failed"

note "a rebuild of the same recipe is identical"
expect_exit 0 "identical" "$INGOT" diff a/out/h100.manifest.json a/again/h100.manifest.json

note "driver bump: the driver and nothing else"
expect_exit 1 "~ driver.version: 580.95.05 -> 580.105.08" \
	"$INGOT" diff a/out/h100.manifest.json b/out/h100.manifest.json
echo "$OUT"
"$INGOT" diff --json a/out/h100.manifest.json b/out/h100.manifest.json >diff.json || [ $? -eq 1 ]
tar -tJf art/driver-580.95.05.tar.xz >paths-a
tar -tJf art/driver-580.105.08.tar.xz >paths-b
python3 - diff.json paths-a paths-b <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
norm = lambda p: "/" + p.strip().lstrip("./").rstrip("/")
old = {norm(p) for p in open(sys.argv[2]) if p.strip()}
new = {norm(p) for p in open(sys.argv[3]) if p.strip()}
assert d["tuple"] == [{"field": "driver.version", "a": "580.95.05", "b": "580.105.08"}], d["tuple"]
a = d["artifacts"]
assert not a["added"] and not a["removed"], a
assert [c["name"] for c in a["changed"]] == ["nvidia-driver"], a["changed"]
f = d["files"]
added = {x["path"] for x in f["added"]}
removed = {x["path"] for x in f["removed"]}
changed = {x["path"] for x in f["changed"]}
assert added == {"/usr/lib/x86_64-linux-gnu/libcuda.so.580.105.08"}, added
assert removed == {"/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05"}, removed
assert added <= new - old and removed <= old - new
# every changed file belongs to the driver archive in both versions, none to NCCL
assert changed and changed <= (old & new), changed - (old & new)
assert not any("nccl" in p for p in added | removed | changed)
assert {"/lib/modules/6.8.0-45-generic/kernel/drivers/video/nvidia.ko", "/usr/bin/nvidia-smi"} <= changed
PY

note "signed envelopes diff the same way"
expect_exit 1 "~ driver.version: 580.95.05 -> 580.105.08" \
	"$INGOT" diff a/out/h100.manifest.dsse.json b/out/h100.manifest.dsse.json
assert_contains "$OUT" "files 1 added, 1 removed, 3 changed"
