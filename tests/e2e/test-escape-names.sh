#!/bin/bash
# Names from archives and manifests never reach a terminal raw: a newline
# cannot forge a second error line, ESC cannot start a terminal sequence,
# and a very long name is shortened in the middle so the reason stays.
. "$(dirname "$0")/lib.sh"
cd "$T"

python3 - <<'PY'
import hashlib, io, tarfile
def tar(path, names):
    with tarfile.open(path, "w") as t:
        for n in names:
            ti = tarfile.TarInfo(n); ti.size = 1
            t.addfile(ti, io.BytesIO(b"x"))
def recipe(name, src):
    h = hashlib.sha256(open(src, "rb").read()).hexdigest()
    open(name, "w").write(f"""name: esc
version: "1"
epoch: 0
artifacts:
  - name: a
    source: {src}
    kind: tar
    sha256: {h}
""")
tar("ctl.tar", ["usr/a\nERROR: forged line\x1b[31m"])
recipe("ctl.yaml", "ctl.tar")
tar("long.tar", ["usr/" + "n" * 3000 + "/x"])
recipe("long.yaml", "long.tar")
tar("good.tar", ["usr/a", "usr/b"])
recipe("good.yaml", "good.tar")
PY

one_clean_line() { # file what
	[ "$(wc -l <"$1")" -eq 1 ] || fail "$2: expected one line on stderr, got: $(cat -v "$1")"
	! grep -q $'\x1b' "$1" || fail "$2: raw ESC reached stderr: $(cat -v "$1")"
}

note "a name with a newline and ESC is refused, in one escaped line"
rc=0; "$INGOT" build ctl.yaml -o out --store st --no-lint 2>err.txt || rc=$?
assert_eq 1 "$rc" "exit status"
one_clean_line err.txt "control-character name"
assert_contains "$(cat err.txt)" "'usr/a\\nERROR: forged line\\x1b[31m'" "escaped name"
assert_contains "$(cat err.txt)" "control character 0x0a" "reason"
assert_no_file out/esc.sqfs

note "a 3000-byte name is shortened; the reason stays on the line"
rc=0; "$INGOT" build long.yaml -o out --store st --no-lint 2>err.txt || rc=$?
assert_eq 1 "$rc" "exit status"
one_clean_line err.txt "long name"
assert_contains "$(cat err.txt)" "component longer than 255 bytes" "reason"
assert_contains "$(cat err.txt)" "nnn...nnn" "shortened name"
[ "$(wc -c <err.txt)" -lt 1100 ] || fail "message not bounded: $(wc -c <err.txt) bytes"

note "ingot diff escapes names and values from manifests"
"$INGOT" build good.yaml -o out --store st --no-lint >/dev/null
python3 - <<'PY'
import json
m = json.load(open("out/esc.manifest.json"))
for f in m["files"]:
    if f["path"].endswith("usr/b"):
        f["path"] = f["path"] + "\x1b]0;pwned\x07\nforged: line"
json.dump(m, open("evil.json", "w"))
PY
rc=0; "$INGOT" diff out/esc.manifest.json evil.json >diff.txt 2>&1 || rc=$?
assert_eq 1 "$rc" "diff exit status (differ)"
! grep -q $'\x1b' diff.txt || fail "raw ESC in diff output: $(cat -v diff.txt)"
! grep -q $'\x07' diff.txt || fail "raw BEL in diff output: $(cat -v diff.txt)"
! grep -q '^forged: line' diff.txt || fail "forged line in diff output: $(cat -v diff.txt)"
assert_contains "$(cat diff.txt)" 'usr/b\x1b]0;pwned\x07\nforged: line' "escaped path"

note "ingot verify's text report escapes manifest paths"
mkdir -p emptyroot
rc=0; "$INGOT" verify --manifest evil.json --allow-unsigned --root emptyroot --tcti none >report.txt 2>&1 || rc=$?
assert_eq 11 "$rc" "verify exit status (files refused)"
! grep -q $'\x1b' report.txt || fail "raw ESC in verify report: $(cat -v report.txt)"
! grep -q '^forged: line' report.txt || fail "forged line in verify report: $(cat -v report.txt)"
assert_contains "$(cat report.txt)" 'missing: /usr/b\x1b]0;pwned\x07\nforged: line' "escaped path in report"
echo "ok"
