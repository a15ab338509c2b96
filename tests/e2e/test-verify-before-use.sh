#!/bin/bash
# Check before use: ingot verify runs none of the image's tools on a root
# whose files check did not pass.  A changed nvidia-smi over the image
# (which, on a real node, can load nvidia.ko through nvidia-modprobe) is
# never executed: the files check names it, and what only the tool would
# answer is "not run", so the tuple is not checked, never passed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verify-lib.sh"

make_pool h100 h100-r580-ltsb
# no GPU: procfs answers nothing, so verify asks nvidia-smi
node h100 ok no-gpu
node h100 bad no-gpu
verify() { # ROOT REPORT
	local rc=0
	"$INGOT" verify --manifest "$T/h100-r580-ltsb.manifest.json" --allow-unsigned --root "$1" \
		--tcti none --now 2026-11-01T00:00:00Z --report "$2" >"$2.txt" 2>&1 || rc=$?
	echo "$rc"
}
fact_source() { python3 -c 'import json,sys
print(next(f["source"] for f in json.load(open(sys.argv[1]))["probe"]["facts"] if f["key"] == sys.argv[2]))' "$1" "$2"; }

note "control: the image's own nvidia-smi is run (files pass, no GPU: it fails)"
assert_eq 20 "$(verify "$T/ok" "$T/ok.json")" "exit of the untouched root"
assert_contains "$(fact_source "$T/ok.json" gpu.model)" "usr/bin/nvidia-smi failed or timed out" "gpu.model source"

note "a changed nvidia-smi over the image is never run"
cat >"$T/bad/usr/bin/nvidia-smi" <<SH
#!/bin/sh
touch "$T/ran"
exit 1
SH
chmod 0755 "$T/bad/usr/bin/nvidia-smi"
assert_eq 11 "$(verify "$T/bad" "$T/bad.json")" "exit of the changed root"
assert_contains "$(cat "$T/bad.json.txt")" "changed: /usr/bin/nvidia-smi: sha256" "files check names it"
assert_no_file "$T/ran"
assert_contains "$(fact_source "$T/bad.json" gpu.model)" "usr/bin/nvidia-smi: not run: the files check did not pass" \
	"gpu.model source"
assert_eq error "$(check_status "$T/bad.json" tuple)" "tuple check (not made, never passed)"
echo "ok"
