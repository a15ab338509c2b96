#!/bin/bash
# ingot verify fails closed: a listed file whose type changed is a files
# failure (never admitted beside a "changed" detail), and a comparison the
# probe could not make (the image's nvidia.ko unreadable or gone while a
# driver is loaded) is "could not check", never a pass.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verify-lib.sh"

make_pool h100 h100-r580-ltsb

# verify_case NAME WANT_EXIT ROOT [extra args]: runs verify, leaves
# $T/NAME.txt and $T/NAME.json, checks the exit status.
verify_case() {
	local name=$1 want=$2 root=$3 rc=0
	shift 3
	note "$name"
	"$INGOT" verify --manifest "$T/h100-r580-ltsb.manifest.json" --allow-unsigned --root "$root" \
		--tcti none --node-id "$name" --now 2026-11-01T00:00:00Z --report "$T/$name.json" \
		"$@" >"$T/$name.txt" 2>&1 || rc=$?
	[ "$rc" = "$want" ] || fail "$name: expected exit $want, got $rc: $(cat "$T/$name.txt")"
	validate "$T/$name.json"
}
fw=/lib/firmware/nvidia/580.95.05/gsp_tu10x.bin

# A listed file that became a symlink (to the very same bytes) or a directory.
node h100 to-symlink file-to-symlink
verify_case to-symlink 11 "$T/to-symlink"
assert_contains "$(head -n 1 "$T/to-symlink.txt")" "refuse (exit 11): root $T/to-symlink differs from the manifest: 1 changed, 0 missing, 0 extra"
assert_contains "$(cat "$T/to-symlink.txt")" "changed: $fw: type: manifest file, node symlink"
assert_eq fail "$(check_status "$T/to-symlink.json" files)" "files of to-symlink"

node h100 to-dir file-to-dir
verify_case to-dir 11 "$T/to-dir"
assert_contains "$(head -n 1 "$T/to-dir.txt")" "1 changed, 0 missing, 0 extra"
assert_contains "$(cat "$T/to-dir.txt")" "changed: $fw: type: manifest file, node dir"
# The detail and the verdict agree in the JSON as well.
assert_eq "type dir" "$(jget "$T/to-dir.json" "[c['details']['changed'][0]['field'] + ' ' + c['details']['changed'][0]['got'] for c in r['checks'] if c['name']=='files'][0]")" "to-dir details"
assert_eq refuse "$(jget "$T/to-dir.json" "r['verdict']")" "to-dir verdict"

# The image's nvidia.ko is no module (or gone) while nvidia is loaded: the
# "loaded driver == image module" comparison was not made.
node h100 ko-garbage ko-garbage
verify_case ko-garbage-nofiles 20 "$T/ko-garbage" --no-files
assert_contains "$(head -n 1 "$T/ko-garbage-nofiles.txt")" "could-not-check (exit 20): tuple: not made: loaded driver 580.95.05 vs the image's nvidia.ko"
assert_contains "$(cat "$T/ko-garbage-nofiles.txt")" "not an ELF file"
assert_eq error "$(check_status "$T/ko-garbage-nofiles.json" tuple)" "tuple of ko-garbage"
assert_eq "loaded==nvidia.ko" "$(jget "$T/ko-garbage-nofiles.json" "[c for c in r['checks'] if c['name']=='tuple'][0]['details']['not_made'][0]['field']")" "not_made details"
# With the files check the changed module refuses (a refusal outranks 20).
verify_case ko-garbage 11 "$T/ko-garbage"
assert_eq error "$(check_status "$T/ko-garbage.json" tuple)" "tuple of ko-garbage with files"

node h100 ko-gone ko-gone
verify_case ko-gone 20 "$T/ko-gone" --no-files
assert_contains "$(head -n 1 "$T/ko-gone.txt")" "not made: loaded driver 580.95.05 vs the image's nvidia.ko"
assert_contains "$(cat "$T/ko-gone.txt")" "not found: /lib/modules/*/**/nvidia.ko*"

# The healthy node still admits.
verify_case healthy 0 "$T/h100.root"
echo "all fail-closed cases passed"
