#!/bin/bash
# ${NAME} in a recipe's source: and sha256: values, given with
# `ingot build --set NAME=VALUE` (the real images' recipes under
# recipes/real/ name the bytes scripts/real-image.sh makes this way).
# The pins are still checked on the bytes; a reference without a value is
# refused by name and position; other fields (inline content) keep "${".
. "$(dirname "$0")/lib.sh"
cd "$T"
mkdir -p d/etc && echo hello > d/etc/greeting
tar -C d -cf a.tar etc
H=$(sha256sum a.tar | cut -d' ' -f1)
{
	recipe_head vars
	cat <<'YAML'
artifacts:
  - name: a
    kind: tar
    source: ${A_TAR}
    sha256: ${A_SHA256}
files:
  - path: /etc/script
    content: |
      echo ${HOME}
YAML
} > r.yaml

note "a reference without a value: refused, naming it and its position; nothing written"
expect_exit 1 'r.yaml:11:13: source: ${A_TAR} has no value (ingot build --set A_TAR=VALUE)' \
	"$INGOT" build r.yaml -o out --store st --no-lint --set A_SHA256="$H"
assert_no_file out/vars.sqfs
expect_exit 1 'sha256: ${A_SHA256} has no value' "$INGOT" build r.yaml -o out --store st --no-lint --set A_TAR="$T/a.tar"

note "a malformed reference"
sed 's/\${A_TAR}/${a-tar}/' r.yaml > bad.yaml
expect_exit 1 "source: expected \${NAME} (NAME of A-Z, 0-9, _), got '\${a-tar}'" \
	"$INGOT" build bad.yaml -o out --store st --no-lint --set A_SHA256="$H"

note "--set without NAME=: usage error"
expect_exit 64 "--set: expected NAME=VALUE, got 'A_TAR'" "$INGOT" build r.yaml -o out --store st --set A_TAR

note "the pin given through a variable is checked on the bytes"
expect_exit 1 "a: sha256 mismatch: recipe pins $(printf 0%.0s {1..64})" \
	"$INGOT" build r.yaml -o out --store st --no-lint --set A_TAR="$T/a.tar" --set A_SHA256="$(printf 0%.0s {1..64})"

note "with values: built; a value may sit inside a longer string"
sed 's|\${A_TAR}|${DIR}/a.tar|' r.yaml > r2.yaml
"$INGOT" build r2.yaml -o out --store st --no-lint --set DIR="$T" --set=A_SHA256="$H" --quiet
assert_file out/vars.sqfs
unsquashfs -no-progress -d x out/vars.sqfs >/dev/null 2>&1 || skip "unsquashfs cannot read the image"
assert_eq hello "$(cat x/etc/greeting)" "the artifact's file"
assert_eq 'echo ${HOME}' "$(cat x/etc/script)" "inline content, not substituted"

note "the real recipes lint as files (their \${...} are only in sources, pins and SBOM labels)"
# (a pool the sourced rules refuse, by its pool file's refused-by rules,
# lints with exactly those errors: the tuple is read, the finding stands)
for f in "$SRC"/recipes/real/*.yaml; do
	refused=$(awk '$1 == "refused-by" { $1 = ""; print }' "${f%.yaml}.pool" | xargs -rn1 | sort | xargs)
	rc=0
	"$INGOT" lint "$f" --rules "$SRC/recipes/rules" --json >lint.out || rc=$?
	got=$(jq -r '.findings[] | select(.severity == "error") | .rule' lint.out | sort -u | xargs)
	if [ -z "$refused" ]; then
		[ $rc = 0 ] || fail "ingot lint $f: exit $rc: $(cat lint.out)"
	else
		[ $rc = 2 ] && [ "$got" = "$refused" ] || fail "ingot lint $f: exit $rc, errors '$got', expected '$refused'"
	fi
done
echo PASS
