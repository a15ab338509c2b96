#!/bin/bash
# `ingot build` as a command: help, usage errors (64), failures (1) with
# positioned messages, the summary, the unpack cache on a warm store, the
# lint gate, and a killed build leaving nothing under the output names.
. "$(dirname "$0")/lib.sh"

note "help"
expect_exit 0 "" "$INGOT" build --help
for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES; do
	assert_contains "$OUT" "$s" "build --help"
done

note "usage errors"
expect_exit 64 "missing RECIPE" "$INGOT" build -o "$T/o"
expect_exit 64 "missing -o OUTDIR" "$INGOT" build x.yaml
expect_exit 64 "expected one RECIPE, got 2 arguments" "$INGOT" build a.yaml b.yaml -o "$T/o"
expect_exit 64 "--workers: expected an integer in [1, 64], got '0'" "$INGOT" build x.yaml -o "$T/o" -j 0
expect_exit 64 "unknown option" "$INGOT" build x.yaml -o "$T/o" --frobnicate
expect_exit 64 "--date: expected YYYY-MM-DD" "$INGOT" build x.yaml -o "$T/o" --date 15/10/2026
expect_exit 64 "needs an argument" "$INGOT" build x.yaml -o

note "failures"
expect_exit 1 "$T/none.yaml: cannot open" "$INGOT" build "$T/none.yaml" -o "$T/o"
printf 'name: p\nversion: "1"\nepoch: 1\ncompression:\n  block-size: 3000\n' >"$T/bad.yaml"
expect_exit 1 "$T/bad.yaml:5:15: compression.block-size: expected an integer in [4096, 1048576], got '3000'" \
	"$INGOT" build "$T/bad.yaml" -o "$T/o"
printf 'name: p\nversion: "1"\nepoch: 1\nartifacts:\n  - name: a\n    kind: file\n    source: gone.bin\n    sha256: %s\n    dest: /a\n' \
	"$(printf x | sha256sum | cut -d' ' -f1)" >"$T/gone.yaml"
expect_exit 1 "a: $T/gone.bin: cannot open" "$INGOT" build "$T/gone.yaml" -o "$T/o" --store "$T/store"
assert_no_file "$T/o/p.sqfs"

note "summary, then a warm rebuild from the store"
mkdir -p "$T/r"
INGOT_DEMO_ONLY=1 "$SRC/scripts/gen-artifacts.sh" "$BUILD_DIR" "$T/r/artifacts" >/dev/null
cp "$SRC/recipes/demo.yaml" "$T/r/"
"$INGOT" build "$T/r/demo.yaml" -o "$T/a" --store "$T/store" --date 2026-10-15 >"$T/sum1"
img=$(sha256 "$T/a/demo-h100.sqfs")
grep -qx "image     $T/a/demo-h100.sqfs" "$T/sum1" || fail "summary: $(cat "$T/sum1")"
grep -qx "sha256    $img" "$T/sum1" || fail "summary sha256: $(cat "$T/sum1")"
grep -qx "size      $(stat -c %s "$T/a/demo-h100.sqfs") bytes" "$T/sum1" || fail "summary size"
grep -qx "files     18 (51 entries)" "$T/sum1" || fail "summary files: $(cat "$T/sum1")"
grep -q "^root      [0-9a-f]\{64\}$" "$T/sum1" || fail "summary root"
grep -qx "artifacts 6 (0 from cache)" "$T/sum1" || fail "summary artifacts: $(cat "$T/sum1")"
assert_eq 4 "$(ls "$T/store/unpacked" | grep -c '\.jsonl$')" "cached listings (tar and deb artifacts)"
assert_eq 4 "$(ls "$T/store/unpacked" | grep -c '\.pack$')" "packs (tar and deb artifacts)"
assert_eq "" "$(ls -A "$T/store/tmp")" "no temporaries left in the store"
# warm: every listing comes from the unpack cache, every artifact from
# the store, so the sources may even be gone
mv "$T/r/artifacts" "$T/r/artifacts.away"
"$INGOT" build "$T/r/demo.yaml" -o "$T/b" --store "$T/store" --date 2026-10-15 >"$T/sum2"
mv "$T/r/artifacts.away" "$T/r/artifacts"
grep -qx "artifacts 6 (6 from cache)" "$T/sum2" || fail "warm summary: $(cat "$T/sum2")"
for n in demo-h100.sqfs demo-h100.verity demo-h100.manifest.json; do
	assert_eq "$(sha256 "$T/a/$n")" "$(sha256 "$T/b/$n")" "warm rebuild $n"
done
expect_exit 0 "" "$INGOT" build "$T/r/demo.yaml" -o "$T/q" --store "$T/store" --quiet --no-lint
assert_eq "" "$OUT" "--quiet output"

note "lint gate: a vulnerable container toolkit is refused, --no-lint builds"
sed -e 's/^    version: 1.17.8$/    version: 1.17.7/' -e '/artifact: container-toolkit/d' \
	"$T/r/demo.yaml" >"$T/r/vuln.yaml"
expect_exit 1 "vuln.yaml:" "$INGOT" build "$T/r/vuln.yaml" -o "$T/v" --store "$T/store" --date 2026-10-15
assert_contains "$OUT" "lint: 1 error; first: container-toolkit-cve-2025-23266"
assert_no_file "$T/v/demo-h100.sqfs"
"$INGOT" build "$T/r/vuln.yaml" -o "$T/v" --store "$T/store" --no-lint --quiet
assert_file "$T/v/demo-h100.sqfs"

note "a killed build leaves no file under an output name"
python3 -c 'import os,sys; sys.stdout.buffer.write(os.urandom(48 << 20))' >"$T/big.bin"
cat >"$T/big.yaml" <<EOF
name: big
version: "1"
epoch: 1
compression:
  algorithm: xz
  level: 9
artifacts:
  - name: big
    kind: file
    source: big.bin
    sha256: $(sha256 "$T/big.bin")
    dest: /big.bin
EOF
"$INGOT" build "$T/big.yaml" -o "$T/k" --store "$T/store" --quiet &
pid=$!
sleep 1
if kill -9 "$pid" 2>/dev/null; then
	wait "$pid" 2>/dev/null || true
	for n in big.sqfs big.verity big.manifest.json big.manifest.dsse.json; do
		assert_no_file "$T/k/$n"
	done
else
	wait "$pid" || true
	note "build finished before the kill; nothing to check"
fi
echo "ok"
