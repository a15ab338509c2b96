#!/bin/bash
# Fault injection: ingot build killed with SIGKILL at many points, a full
# disk (file-size limit), a read-only output directory, an unreadable
# artifact, and an interrupted `ingot attest measure`.  After each fault:
# no file under any output name, a store whose blobs all match their
# names, and a rebuild that gives the reference bytes.
. "$(dirname "$0")/lib.sh"
cd "$T"
umask 022

note "inputs: a tarball of ~2 MiB (mixed compressible and random files)"
python3 - <<'PY'
import hashlib, io, random, tarfile
rnd = random.Random(7)
bio = io.BytesIO()
with tarfile.open(fileobj=bio, mode="w", format=tarfile.GNU_FORMAT) as t:
    for i in range(100):
        if i % 4 == 0:
            data = rnd.randbytes(rnd.randint(4096, 40000))
        else:
            words = [b"cuda", b"nccl", b"driver", b"kernel", b"module", b"\n", b"{", b"}"]
            data = b" ".join(rnd.choice(words) for _ in range(rnd.randint(200, 3000)))
        ti = tarfile.TarInfo("usr/lib/x86_64-linux-gnu/f%03d.so" % i)
        ti.size, ti.mtime, ti.mode = len(data), 1, 0o644
        t.addfile(ti, io.BytesIO(data))
open("big.tar", "wb").write(bio.getvalue())
sha = hashlib.sha256(bio.getvalue()).hexdigest()
open("r.yaml", "w").write(f'''name: fault
version: "1"
epoch: 1760000000
compression:
  algorithm: zstd
  level: 3
artifacts:
  - name: big
    kind: tar
    source: big.tar
    sha256: {sha}
files:
  - path: /etc/fault
    content: "x\\n"
''')
PY
OUTS="fault.sqfs fault.verity fault.manifest.json fault.manifest.dsse.json"

# No file under an output name in $1.
no_outputs() {
	local f
	for f in $OUTS; do assert_no_file "$1/$f"; done
}
# Every blob's bytes hash to its name; cached listings are whole JSON
# Lines (each line JSON, as many entries as the header says).
store_ok() {
	local b n=0
	[ -d "$1/blobs" ] || return 0
	while IFS= read -r b; do
		[ "$(sha256 "$b")" = "$(basename "$b")" ] || fail "store $1: blob $b does not match its name"
		n=$((n + 1))
	done < <(find "$1/blobs" -type f)
	for b in "$1"/unpacked/*.jsonl; do
		[ -e "$b" ] || continue
		python3 -c '
import json, sys
lines = open(sys.argv[1]).read().split("\n")
assert lines.pop() == "", "no final line break"
rows = [json.loads(l) for l in lines]
assert rows[0]["entries"] == len(rows) - 1, "entry count"' "$b" || fail "store $1: $b is not a whole JSON Lines listing"
	done
	echo "store $1: $n blobs verified"
}

note "reference build"
# The kill points are fractions of the faster of two cold builds, so
# they fall inside the builds they interrupt even if the machine speeds up.
ms=
for i in 1 2; do
	rm -rf ref ref-store
	start=$(date +%s%N)
	"$INGOT" build r.yaml -o ref --store ref-store --no-lint -q
	t=$(( ($(date +%s%N) - start) / 1000000 ))
	[ -z "$ms" ] || [ "$t" -lt "$ms" ] && ms=$t
done
REF=$(sha256 ref/fault.sqfs)
echo "reference build: ${ms} ms, image $REF"

note "SIGKILL at spread-out points of cold builds; each store then completes a build"
killed=0
for frac in 5 20 45 70 95; do
	d=$(awk -v ms="$ms" -v f="$frac" 'BEGIN { printf "%.3f", ms * f / 100000 }')
	rm -rf k-out k-store
	"$INGOT" build r.yaml -o k-out --store k-store --no-lint -q &
	pid=$!
	sleep "$d"
	kill -KILL "$pid" 2>/dev/null || true
	st=0; wait "$pid" 2>/dev/null || st=$?
	if [ "$st" = 0 ]; then
		echo "build finished before the kill at ${d}s"
		assert_eq "$REF" "$(sha256 k-out/fault.sqfs)" "image of a build that finished"
		continue
	fi
	if [ -e k-out/fault.sqfs ]; then
		# Killed after the outputs were renamed into place (the exit
		# path is slow under ASan's leak check): they must be whole.
		for f in $OUTS; do
			case $f in *.dsse.json) continue ;; esac
			[ -s "k-out/$f" ] || fail "killed after commit: k-out/$f missing or empty"
		done
		assert_eq "$REF" "$(sha256 k-out/fault.sqfs)" "image of a build killed after its commit"
		echo "killed after ${d}s, after the commit: complete outputs"
		continue
	fi
	killed=$((killed + 1))
	no_outputs k-out
	store_ok k-store >/dev/null
	leftovers=$(find k-out k-store/tmp -type f 2>/dev/null | wc -l)
	echo "killed after ${d}s: no outputs, store ok, $leftovers temporary file(s) left"
	# The next build must not be confused by what the killed one left.
	# ... and it removes the temporaries of the dead one.
	if [ "$frac" = 70 ]; then
		"$INGOT" build r.yaml -o k-out --store k-store --no-lint -q
		assert_eq "$REF" "$(sha256 k-out/fault.sqfs)" "rebuild after SIGKILL at ${d}s"
		store_ok k-store
		assert_eq "" "$(find k-store/tmp -type f)" "store temporaries after the rebuild"
		assert_eq "" "$(find k-out -name '.*' -type f)" "output temporaries after the rebuild"
	fi
done
[ "$killed" -ge 3 ] || fail "only $killed of 5 builds were still running when killed"
store_ok ref-store

note "SIGKILL during a warm rebuild (outputs of a previous build in place)"
"$INGOT" build r.yaml -o w-out --store ref-store --no-lint -q
before=$(cat w-out/fault.sqfs w-out/fault.verity w-out/fault.manifest.json | sha256sum)
for d in 0.05 0.2 0.4; do
	"$INGOT" build r.yaml -o w-out --store ref-store --no-lint -q &
	pid=$!
	sleep "$d"
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	assert_eq "$before" "$(cat w-out/fault.sqfs w-out/fault.verity w-out/fault.manifest.json | sha256sum)" \
		"previous outputs after SIGKILL at ${d}s"
done

note "full disk: file size limited to 128 KiB (SIGXFSZ ignored, so writes fail with EFBIG)"
for store in ref-store fd-store; do   # warm store: the image write fails; cold: the store's
	rc=0
	OUT=$( (trap '' XFSZ; ulimit -f 128; exec "$INGOT" build r.yaml -o fd-out --store $store --no-lint -q) 2>&1) || rc=$?
	assert_eq 1 "$rc" "exit status with a full disk ($store)"
	assert_contains "$OUT" "too large" "full-disk message ($store)"
	[ "$(printf '%s\n' "$OUT" | grep -c .)" -le 2 ] || fail "full disk: expected a one-line error, got: $OUT"
	no_outputs fd-out
	assert_eq "" "$(find fd-out -type f 2>/dev/null)" "files left in fd-out ($store)"
	store_ok $store >/dev/null
	echo "full disk ($store): $OUT"
done

note "SIGKILL during sign and verify-manifest --state: old or new file, never a partial one"
"$INGOT" keys generate -o sk >/dev/null
"$INGOT" keys keyring add ring.json sk.pub --name faults >/dev/null
"$INGOT" sign ref/fault.manifest.json --key sk.key -o env.json >/dev/null
# the envelopes are written here, the file list they bind is in ref/
FL=(--file-list ref/fault.manifest.json)
for d in 0 0.005 0.01 0.02 0.04 0.08; do
	"$INGOT" sign ref/fault.manifest.json --key sk.key -o env-k.json >/dev/null 2>&1 &
	pid=$!
	"$INGOT" verify-manifest env.json --keyring ring.json "${FL[@]}" --state state-k.json >/dev/null 2>&1 &
	pid2=$!
	sleep $d
	kill -KILL $pid $pid2 2>/dev/null || true
	wait $pid $pid2 2>/dev/null || true
	if [ -e env-k.json ]; then
		"$INGOT" verify-manifest env-k.json --keyring ring.json "${FL[@]}" >/dev/null ||
			fail "envelope left by a sign killed after ${d}s does not verify"
		rm env-k.json
	fi
	if [ -e state-k.json ]; then
		python3 -c 'import json,sys; json.load(open(sys.argv[1]))' state-k.json ||
			fail "state file left by a verify-manifest killed after ${d}s is not JSON"
	fi
done
# The next writer of the same files removes what the killed ones left.
"$INGOT" sign ref/fault.manifest.json --key sk.key -o env-k.json >/dev/null
"$INGOT" verify-manifest env.json --keyring ring.json "${FL[@]}" --state state-k.json >/dev/null
assert_eq "" "$(find . -maxdepth 1 \( -name '.env-k.json*' -o -name '.state-k.json*' \))" \
	"temporaries of killed sign/verify-manifest runs after the next run"

# Permission faults need an unprivileged user: root ignores modes.
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null || skip "running as root without setpriv"
	chmod 755 "$T"
	chmod -R a+rX "$T"
	AS_USER="setpriv --reuid=65534 --regid=65534 --clear-groups --"
else
	AS_USER=
fi
# A store the build's user owns (a store others can write is refused).
user_dir() {
	mkdir -p "$1" && chmod 755 "$1"
	if [ "$(id -u)" = 0 ]; then chown 65534:65534 "$1"; fi
}

note "a store others may write is refused (its listings are trusted)"
mkdir -p shared-store && chmod 777 shared-store
rc=0
OUT=$("$INGOT" build r.yaml -o shared-out --store shared-store --no-lint -q 2>&1) || rc=$?
assert_eq 1 "$rc" "exit status with a world-writable store"
assert_contains "$OUT" "shared-store: store: expected a directory owned by uid" "shared store message"
assert_contains "$OUT" "mode 0777" "shared store message names the mode"
[ ! -e shared-out ] || fail "shared store: output directory created"

note "read-only output directory"
user_dir ro-store && mkdir -p ro-out && chmod 555 ro-out
rc=0
OUT=$($AS_USER "$INGOT" build r.yaml -o ro-out --store ro-store --no-lint -q 2>&1) || rc=$?
assert_eq 1 "$rc" "exit status with a read-only output directory"
assert_contains "$OUT" "ro-out" "read-only message names the directory"
assert_contains "$OUT" "ermission denied" "read-only message"
assert_eq "" "$(ls -A ro-out)" "read-only output directory content"
echo "read-only: $OUT"

note "unreadable artifact"
mkdir -p ur && cp r.yaml big.tar ur/ && chmod 000 ur/big.tar && user_dir ur-store
mkdir ur-out && chmod 777 ur-out
rc=0
OUT=$($AS_USER "$INGOT" build ur/r.yaml -o ur-out --store ur-store --no-lint -q 2>&1) || rc=$?
assert_eq 1 "$rc" "exit status with an unreadable artifact"
assert_contains "$OUT" "big.tar" "unreadable message names the file"
assert_contains "$OUT" "ermission denied" "unreadable message"
assert_eq "" "$(ls -A ur-out)" "output directory after an unreadable artifact"
echo "unreadable: $OUT"

note "interrupted attest measure: the log and the PCR agree, or verification says they do not"
if ! command -v swtpm >/dev/null || ! command -v jq >/dev/null; then
	echo "swtpm or jq missing: measure faults skipped"
	exit 0
fi
. "$SRC/tests/e2e/swtpm.sh"
. "$SRC/tests/e2e/attest-lib.sh"
swtpm_start
make_manifest "$T/m.json" fault f1
"$INGOT" attest ak create -o "$T/ak" >/dev/null
N=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
check_log() { # LOG -> prints 0 (agree) or 2 (mismatch detected); fails otherwise
	local rc=0
	"$INGOT" attest quote --nonce $N --pcrs sha256:15 --ak "$T/ak" -o "$T/q.json" >/dev/null
	"$INGOT" attest eventlog "$1" --against "$T/q.json" --nonce $N --ak-pub "$T/ak/ak.pub.pem" \
		>"$T/ev.out" 2>&1 || rc=$?
	case $rc in 0|2) echo $rc ;; *) cat "$T/ev.out" >&2; fail "eventlog on $1: exit $rc (log unreadable?)" ;; esac
}
"$INGOT" attest measure --manifest "$T/m.json" --log "$T/log.bin" >/dev/null
assert_eq 0 "$(check_log "$T/log.bin")" "log vs PCR after one measure"
# Killed after the PCR extend, before the log's rename: the log misses the
# event the TPM saw.  Simulated exactly by putting the old log back.
cp "$T/log.bin" "$T/log.before"
"$INGOT" attest measure --manifest "$T/m.json" --log "$T/log.bin" >/dev/null
cp "$T/log.before" "$T/log.lost"
assert_eq 2 "$(check_log "$T/log.lost")" "log missing the last extend"
assert_eq 0 "$(check_log "$T/log.bin")" "complete log"
# Real SIGKILLs at points through a measure: each leaves a readable log
# that either agrees with the TPM or is reported as disagreeing.
agree=0 mismatch=0
for d in 0 0.005 0.01 0.02 0.04 0.08; do
	cp "$T/log.bin" "$T/log.k"
	"$INGOT" attest measure --manifest "$T/m.json" --log "$T/log.k" >/dev/null 2>&1 &
	pid=$!
	sleep $d
	kill -KILL $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	rc=$(check_log "$T/log.k")
	[ "$rc" = 0 ] && agree=$((agree + 1)) || mismatch=$((mismatch + 1))
	[ -z "$(find "$T" -maxdepth 1 -name '.log.k*')" ] || echo "note: temporary log file left by the killed measure"
	# Resynchronise the reference log with the TPM for the next round.
	if [ "$rc" = 0 ]; then cp "$T/log.k" "$T/log.bin"; else
		cp "$T/log.k" "$T/log.bin"
		"$INGOT" attest eventlog "$T/log.bin" >/dev/null || fail "killed measure left an unreadable log"
		break
	fi
done
echo "killed measures: $agree consistent, $mismatch mismatch detected"
