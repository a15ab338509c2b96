#!/bin/bash
# ingot verify on a node without a GPU (a QEMU guest, a node before
# modprobe): the loaded driver's facts and the GPU are "not made", so the
# verdict is could-not-check (20), never admit and never refuse; the
# image's driver parts are files and are still held against the tuple: an
# nvidia.ko, NVML or nvidia-smi of another version, or a module built for
# another kernel, refuses (13).  The node has Debian's layout (nvidia-smi
# and NVML under .../nvidia/current behind alternatives links, versions in
# the dpkg database), which the probe reads without a GPU.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verify-lib.sh"
[ -n "$PY_JSONSCHEMA" ] || fail "python3-jsonschema not installed (scripts/deps.sh installs it)"

# pool NAME MUTATION...: a Debian-layout H100 root with the mutations, and
# a manifest over exactly those files (so the files check passes and the
# tuple check decides) with the healthy H100 tuple.
pool() {
	local name=$1
	shift
	"$MKROOT" "$T/$name" h100 debian-nvidia "$@"
	printf '%s\n' "$tuple_h100" >"$T/h100.tuple.json"
	$MKMANIFEST "$T/$name" --name "$name" --tuple "$T/h100.tuple.json" -o "$T/$name.manifest.json"
}

# run NAME WANT_EXIT WANT_VERDICT REASON
run() {
	local name=$1 want=$2 verdict=$3 reason=$4 rc=0
	"$INGOT" verify --manifest "$T/$name.manifest.json" --allow-unsigned --root "$T/$name" \
		--tcti none --node-id "$name" --now 2026-11-01T00:00:00Z --report "$T/$name.json" \
		>"$T/$name.txt" 2>"$T/$name.err" || rc=$?
	[ "$rc" = "$want" ] || fail "$name: expected exit $want, got $rc: $(cat "$T/$name.txt" "$T/$name.err")"
	assert_contains "$(head -n 1 "$T/$name.txt")" "ingot verify: $verdict (exit $want): " "$name summary"
	assert_contains "$(head -n 1 "$T/$name.txt")" "$reason" "$name reason"
	validate "$T/$name.json"
	assert_eq pass "$(check_status "$T/$name.json" files)" "$name: files"
}
fact() { jget "$1" "[f['$3'] for f in r['probe']['facts'] if f['key']=='$2'][0]"; }
tuple() { jget "$1" "[c for c in r['checks'] if c['name']=='tuple'][0]$2"; }

# The Debian layout with the driver loaded: admitted; NVML and nvidia-smi
# read from their packages and NVML's soname under nvidia/current.
pool loaded
run loaded 0 admit "all checks passed"
assert_eq 580.95.05 "$(fact "$T/loaded.json" driver.userspace_version value)" "NVML soname"
assert_eq /usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.580.95.05 \
	"$(fact "$T/loaded.json" driver.userspace_version source)" "NVML source"
assert_eq 580.95.05 "$(fact "$T/loaded.json" nvml.version value)" "NVML package"
assert_eq "/var/lib/dpkg/status (package libnvidia-ml1)" "$(fact "$T/loaded.json" nvml.version source)" "NVML package source"
assert_eq 580.95.05 "$(fact "$T/loaded.json" smi.version value)" "nvidia-smi package"
assert_eq "/var/lib/dpkg/status (package nvidia-smi)" "$(fact "$T/loaded.json" smi.version source)" "nvidia-smi source"

# No GPU, no driver loaded: could not check, the GPU and the loaded driver
# named as not made; what the files show still compared, and matching.
pool nogpu no-gpu
run nogpu 20 could-not-check "tuple: not made: "
assert_eq error "$(tuple "$T/nogpu.json" "['status']")" "nogpu: tuple status"
assert_eq "$(printf 'driver.flavor\ndriver.version\nfirmware.vbios\ngpu\nsmi\nvendor')" \
	"$(tuple "$T/nogpu.json" "['details']['not_made']" | python3 -c 'import ast,sys; print("\n".join(sorted(x["field"] for x in ast.literal_eval(sys.stdin.read()))))')" \
	"nogpu: not made"
assert_contains "$(cat "$T/nogpu.txt")" "not made: GPU H100 (/usr/bin/nvidia-smi failed or timed out)"
assert_contains "$(cat "$T/nogpu.txt")" "not made: driver 580.95.05: no GPU driver loaded"
for f in nvidia.ko nvml nvml.package nvidia-smi.package firmware.gsp nvidia.ko.flavor nvidia.ko.vermagic; do
	assert_eq True "$(tuple "$T/nogpu.json" "['details']['fields']['$f']['match']")" "nogpu: $f compared and matching"
done
assert_eq 6.1.0-40-amd64 "$(fact "$T/nogpu.json" driver.ko_vermagic value)" "nogpu: vermagic"
assert_eq None "$(fact "$T/nogpu.json" smi value)" "nogpu: no SMI tool answered"
assert_contains "$(fact "$T/nogpu.json" smi source)" "/usr/bin/nvidia-smi: present, failed or timed out" "nogpu: smi source"
assert_contains "$(cat "$T/nogpu.txt")" "not made: SMI tool nvidia-smi: no GPU driver loaded"
assert_eq pass "$(check_status "$T/nogpu.json" rules)" "nogpu: rules"

# The image's nvidia.ko is another driver than the tuple's: refused, even
# without a GPU to load it on.
pool kover no-gpu ko=570.195.03
run kover 13 refuse "the image's nvidia.ko 570.195.03 != manifest driver 580.95.05"
assert_eq False "$(tuple "$T/kover.json" "['details']['fields']['nvidia.ko']['match']")" "kover: nvidia.ko"

# A module built for another kernel: what modprobe would refuse.
pool kernel no-gpu ko-kernel=6.12.117+deb13-amd64
run kernel 13 refuse "the image's nvidia.ko is built for kernel 6.12.117+deb13-amd64, running 6.1.0-40-amd64"

# The image carries no module for the running kernel: refused, not "not made".
pool kogone no-gpu ko-gone
run kogone 13 refuse "driver: manifest 580.95.05, no nvidia.ko for the running kernel"

# An unreadable module: not made (20), never a pass.
pool kogarbage no-gpu ko-garbage
run kogarbage 20 could-not-check "tuple: not made: "
assert_contains "$(cat "$T/kogarbage.txt")" "not made: the image's nvidia.ko vs driver 580.95.05"

# The wrong vendor's driver loaded is still a mismatch, not "not made".
pool amd no-gpu
printf 'amdgpu 15900672 0 - Live 0x0000000000000000\n' >"$T/amd/proc/modules"
run amd 13 refuse "vendor: manifest nvidia, node amd"
# A file of the image changed on a node without a GPU: the files check
# fails, and a failure refuses (11) even while the GPU could not be
# checked; "could not check" never hides a difference that was found.
pool changed no-gpu
echo >>"$T/changed/usr/bin/nvidia-smi"
rc=0
"$INGOT" verify --manifest "$T/changed.manifest.json" --allow-unsigned --root "$T/changed" \
	--tcti none --node-id changed --now 2026-11-01T00:00:00Z --report "$T/changed.json" \
	>"$T/changed.txt" 2>&1 || rc=$?
assert_eq 11 "$rc" "changed: exit ($(head -n 1 "$T/changed.txt"))"
assert_eq fail "$(check_status "$T/changed.json" files)" "changed: files"
assert_eq error "$(tuple "$T/changed.json" "['status']")" "changed: tuple still not made"
assert_eq "['/usr/lib/nvidia/current/nvidia-smi']" \
	"$(jget "$T/changed.json" "sorted({x['path'] for c in r['checks'] if c['name']=='files' for x in c['details']['changed']})")" \
	"changed: the changed file named (the alternatives link's target)"
echo "all no-GPU verify cases passed"
