#!/bin/bash
# outputs.pins checked (scripts/real-pins.sh, make real-image's last
# step): each line that moved is named with the pinned and the built
# value (a changed digest, a package gone, a new one); "record" rewrites
# the file, "check" fails and leaves it; matching outputs pass both.
. "$(dirname "$0")/lib.sh"
P=$SRC/scripts/real-pins.sh
cat >"$T/pins" <<'X'
# comment
artifact rootfs aaaa
image real-h100.sqfs 1111
uki real-h100.efi 2222
package bash 5.2.37-2+b10
package gone 1
X
{ sed 's/1111/1112/; /^package gone/d' "$T/pins"; echo "package new 3"; } >"$T/built"
cp "$T/pins" "$T/committed"

note "check: every moved line named, the file unchanged, a failure"
cp "$T/built" "$T/new"
expect_exit 1 "image real-h100.sqfs: pinned 1111, built 1112" "$P" check "$T/pins" "$T/new"
assert_contains "$OUT" "package gone: pinned 1, built (none)" "a package gone"
assert_contains "$OUT" "package new: pinned (none), built 3" "a new package"
assert_contains "$OUT" "FAIL: 3 output(s) differ" "the count"
assert_eq "$(sha256 "$T/committed")" "$(sha256 "$T/pins")" "the pins file after check"
assert_no_file "$T/new"

note "record: the same lines named, the file rewritten"
cp "$T/built" "$T/new"
expect_exit 0 "3 output(s) differ" "$P" record "$T/pins" "$T/new"
assert_contains "$OUT" "image real-h100.sqfs: pinned 1111, built 1112" "the moved line"
case $OUT in *uki*) fail "record named an unchanged line: $OUT" ;; esac
assert_eq "$(sha256 "$T/built")" "$(sha256 "$T/pins")" "the pins file after record"

note "matching outputs pass check (comments aside)"
sed 's/^# comment/# another comment/' "$T/pins" >"$T/new"
expect_exit 0 "outputs match" "$P" check "$T/pins" "$T/new"
expect_exit 1 "expected record or check, got 'strict'" "$P" strict "$T/pins" "$T/pins.x"
echo ok
