#!/bin/bash
# The manual: docs/man/ is what scripts/gen-man.py makes of the current
# --help texts (so help and man never drift), groff renders every page
# without a warning, mandoc -Tlint is clean, `make install` puts them where man(1) finds them, and
# systemd-analyze verify resolves the unit's Documentation= through them.
. "$(dirname "$0")/lib.sh"

note "committed pages equal the pages generated from --help"
python3 "$SRC/scripts/gen-man.py" "$INGOT" "$T/man" || fail "gen-man.py failed"
diff -r "$SRC/docs/man" "$T/man" >"$T/man.diff" ||
	fail "docs/man is stale (run 'make man'): $(head -20 "$T/man.diff")"
for c in $(sed -n 's/^\.SH SEE ALSO$//;/^ingot\\-[a-z]/p' "$SRC/docs/man/ingot.1" | tr -d '\\' | tr ',' '\n' | sed 's/(1)//'); do
	assert_file "$SRC/docs/man/$c.1"
done
[ "$(ls "$SRC/docs/man" | wc -l)" -ge 10 ] || fail "expected a page per command"

note "groff renders every page without warnings; whatis names are right"
for p in "$SRC"/docs/man/*.1; do
	out=$(groff -man -Tutf8 -ww -z "$p" 2>&1) || fail "groff failed on $p: $out"
	[ -z "$out" ] || fail "groff warned on $p: $out"
	name=$(basename "$p" .1)
	command -v lexgrog >/dev/null &&
		assert_contains "$(lexgrog "$p")" "\"$name - " "whatis entry of $p"
done

note "mandoc -Tlint finds nothing, style included (a date in .TH, short lines)"
command -v mandoc >/dev/null || fail "mandoc is missing (scripts/deps.sh installs it)"
for p in "$SRC"/docs/man/*.1; do
	out=$(mandoc -Tlint "$p" 2>&1) || fail "mandoc -Tlint $p: $out"
	[ -z "$out" ] || fail "mandoc -Tlint $p: $out"
done

note "make install puts the pages where man finds them"
make -s -C "$SRC" BUILD="${BUILD_DIR#"$SRC"/}" install DESTDIR="$T/root" PREFIX=/usr >/dev/null ||
	fail "make install failed"
assert_file "$T/root/usr/share/man/man1/ingot.1"
assert_file "$T/root/usr/share/man/man1/ingot-verify.1"
out=$(MANPATH="$T/root/usr/share/man" MANWIDTH=200 man ingot-verify 2>/dev/null | head -5 | tr -s " ")
assert_contains "$out" "ingot-verify - check this node" "man ingot-verify"

if command -v systemd-analyze >/dev/null; then
	note "systemd-analyze verify resolves Documentation=man:... (no --man=no)"
	grep -q '^Documentation=man:ingot' "$T/root/lib/systemd/system/ingot-verify.service" ||
		fail "unit lost its Documentation="
	! grep -q 'https\?://' "$T/root/lib/systemd/system/ingot-verify.service" ||
		fail "unit names a URL"
	out=$(MANPATH="$T/root/usr/share/man" systemd-analyze verify --root="$T/root" \
		/lib/systemd/system/ingot-verify.service 2>&1) || fail "systemd-analyze verify failed: $out"
	[ -z "$out" ] || fail "systemd-analyze verify warned: $out"
fi
echo ok
