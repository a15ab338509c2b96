# Shared helpers for end-to-end tests.  Source it first:
#   . "$(dirname "$0")/lib.sh"
# Gives: $INGOT (the binary), $SRC (repo root), $T (a fresh temp dir,
# removed on exit), and the assert helpers below.  A failing assertion
# prints what was expected and exits 1.
set -eu
SRC=${INGOT_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
INGOT=${INGOT:-$SRC/build/ingot}
BUILD_DIR=${INGOT_BUILD:-$SRC/build}
T=$(mktemp -d "${TMPDIR:-/tmp}/ingot-test.XXXXXX")
_cleanups=()
at_exit() { _cleanups+=("$1"); }
_run_cleanups() {
	local i
	for ((i=${#_cleanups[@]}-1; i>=0; i--)); do eval "${_cleanups[i]}" || true; done
	rm -rf "$T"
}
trap _run_cleanups EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }
note() { echo "--- $*"; }

assert_eq() { # expected actual what
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}
assert_ne() {
	[ "$1" != "$2" ] || fail "${3:-value}: expected something other than '$1'"
}
assert_contains() { # haystack needle what
	case "$1" in *"$2"*) ;; *) fail "${3:-output}: expected to contain '$2', got: $1" ;; esac
}
assert_file() { [ -f "$1" ] || fail "expected file $1"; }
assert_no_file() { [ ! -e "$1" ] || fail "expected no file at $1"; }

# expect_exit CODE SUBSTRING cmd...   runs cmd, checks exit code and that
# stderr+stdout contain SUBSTRING.  Output kept in $OUT.
expect_exit() {
	local want=$1 needle=$2 rc=0
	shift 2
	OUT=$("$@" 2>&1) || rc=$?
	[ "$rc" = "$want" ] || fail "$*: expected exit $want, got $rc; output: $OUT"
	[ -z "$needle" ] || assert_contains "$OUT" "$needle" "$*"
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }
# recipe_head NAME: a recipe's first lines (version 1, a fixed epoch,
# serial 1, zstd level 3), for the artifacts: list to follow.
recipe_head() { printf 'name: %s\nversion: "1"\nepoch: 1760000000\nserial: 1\ncompression:\n  algorithm: zstd\n  level: 3\n' "$1"; }

# A python3 that can import jsonschema: the first python3 on PATH may be a
# private interpreter that does not see Debian's python3-jsonschema.
PY_JSONSCHEMA=""
for _py in python3 /usr/bin/python3; do
	if "$_py" -c 'import jsonschema' 2>/dev/null; then PY_JSONSCHEMA=$_py; break; fi
done

# spdx_validate FILE...: the SPDX project's own validator (pyspdxtools,
# from the shared tools beside the checkout: ../shared in CI, /work/shared
# here) on each file; it prints every violation and exits non-zero on
# any.  spdx_tools_found first: 0 when the tools and their Debian
# packages (scripts/deps.sh) are there.
SPDX_TOOLS=""
for _d in "${INGOT_SPDX_TOOLS:-}" "$SRC/../shared/tools/spdx-tools" "$SRC/../../shared/tools/spdx-tools"; do
	if [ -n "$_d" ] && [ -d "$_d/src/spdx_tools" ]; then SPDX_TOOLS=$(cd "$_d" && pwd); break; fi
done
spdx_tools_found() {
	[ -n "$SPDX_TOOLS" ] && PYTHONPATH="$SPDX_TOOLS/stub:$SPDX_TOOLS/src" /usr/bin/python3 -c \
		'import spdx_tools.spdx.clitools.pyspdxtools' 2>/dev/null
}
spdx_validate() {
	local f out
	for f in "$@"; do
		out=$(PYTHONPATH="$SPDX_TOOLS/stub:$SPDX_TOOLS/src" /usr/bin/python3 -m \
			spdx_tools.spdx.clitools.pyspdxtools -i "$f" 2>&1) ||
			fail "SPDX validator refused $(basename "$f"): $out"
		[ -z "$out" ] || fail "SPDX validator on $(basename "$f"): $out"
	done
}
