# Shared by scripts/boot-test.sh and scripts/real-boot-test.sh (sourced):
# the swtpm enrolment before any boot, and the QEMU machine every boot
# runs on; the host's verifier the boots push their evidence to, relayed
# to the guest, and the Slurm node it moves; tests/e2e/swtpm.sh uses its
# swtpm_localca_setup.  Needs INGOT (the ingot binary), BOOT_TIMEOUT
# (seconds) and, for the verifier's helpers, BOOT_TEST (the script's
# name, for what they say).

# swtpm_localca_setup DIR CA MODEL BANKS: a swtpm state in DIR with those
# PCR banks, an EK and its certificate (and a platform certificate for
# MODEL) issued by a local CA in CA (swtpm_localca, as a TPM vendor's: a
# root and an intermediate, made on first use); CA/bundle.pem gets both CA
# certificates, the bundle a verifier is given.  Log in DIR/setup.log.
swtpm_localca_setup() {
	local dir=$1 ca=$2 model=$3 banks=$4
	mkdir -p "$dir" "$ca"
	cat >"$ca/localca.conf" <<CONF
statedir = $ca
signingkey = $ca/signkey.pem
issuercert = $ca/issuercert.pem
certserial = $ca/certserial
CONF
	printf -- '--platform-manufacturer ingot\n--platform-version 1\n--platform-model %s\n' "$model" \
		>"$ca/localca.options"
	cat >"$ca/setup-$banks.conf" <<CONF
create_certs_tool = $(command -v swtpm_localca)
create_certs_tool_config = $ca/localca.conf
create_certs_tool_options = $ca/localca.options
active_pcr_banks = $banks
CONF
	swtpm_setup --tpm2 --tpmstate "$dir" --create-ek-cert --create-platform-cert \
		--config "$ca/setup-$banks.conf" --overwrite >"$dir/setup.log" 2>&1 || return 1
	cat "$ca/issuercert.pem" "$ca/swtpm-localca-rootca-cert.pem" >"$ca/bundle.pem"
}

# boot_enrol DIR CA MODEL BANKS NODE KEY KEYRING: a swtpm state in DIR/tpm
# (swtpm_localca_setup), and an AK in DIR/ak enrolled for NODE with `ingot
# attest enroll` (EK chain to the CA bundle, AK attributes, credential
# activation), the record signed with KEY and checked against KEYRING:
# DIR/enrolment.dsse.json.  All before
# any boot: the swtpm QEMU runs cannot be reached by a TCTI meanwhile, so
# a TCP swtpm on the same state does it.  Every boot starts from a copy
# of that state, so the guest loads the same AK, and its quotes are
# judged with the enrolled AK, never with a key that came with the
# evidence.  Returns 1 with the reason as the last line of DIR/enrol.log.
boot_enrol() {
	local e=$1 ca=$2 model=$3 banks=$4 node=$5 key=$6 keyring=$7
	local port=$((20000 + RANDOM % 20000)) sp rc=0 tcti
	if ! swtpm_localca_setup "$e/tpm" "$ca" "$model" "$banks"; then
		echo "swtpm_setup failed ($e/tpm/setup.log)" >"$e/enrol.log"
		return 1
	fi
	swtpm socket --tpm2 --tpmstate dir="$e/tpm" --server type=tcp,port=$port,bindaddr=127.0.0.1 \
		--ctrl type=tcp,port=$((port + 1)),bindaddr=127.0.0.1 --flags not-need-init,startup-clear &
	sp=$!
	sleep 0.5
	tcti="swtpm:host=127.0.0.1,port=$port"
	{ "$INGOT" attest ak create -o "$e/ak" --tcti "$tcti" &&
	  "$INGOT" attest enroll request --node "$node" --ak "$e/ak" --tcti "$tcti" -o "$e/req.json" &&
	  "$INGOT" attest enroll challenge "$e/req.json" --ca "$ca/bundle.pem" --state "$e/state" \
		-o "$e/chal.json" &&
	  "$INGOT" attest enroll answer "$e/chal.json" --ak "$e/ak" --tcti "$tcti" -o "$e/ans.json" &&
	  "$INGOT" attest enroll finish "$e/ans.json" --state "$e/state" --key "$key" \
		-o "$e/enrolment.dsse.json"; } >"$e/enrol.log" 2>&1 || rc=$?
	kill "$sp" 2>/dev/null || true
	wait "$sp" 2>/dev/null || true
	[ "$rc" = 0 ] && "$INGOT" attest enroll check "$e/enrolment.dsse.json" --keyring "$keyring" \
		>>"$e/enrol.log" 2>&1
}

# boot_start DIR IMAGE VERITY MEMORY-MIB FIRMWARE-ARGS...: one boot in the
# background: swtpm on DIR/tpm, then QEMU (q35, TCG: no KVM here) with
# OVMF's variables DIR/vars.fd, the ESP directory DIR/esp, and the image,
# hash and evidence (DIR/evidence.img) disks under the virtio serials
# ingot-init and the test layer look for; FIRMWARE-ARGS give the machine
# and OVMF code.  With BOOT_PORT_SOCK set, a virtio-serial port named
# ingot.0 (/dev/virtio-ports/ingot.0 in the guest) whose host side
# connects to that Unix socket, where a relay listens (boot_relay).
# Console in DIR/console.log; QEMU is killed after BOOT_TIMEOUT s.  Sets
# BOOT_PID (QEMU), BOOT_DIR and BOOT_TPM_PID.
boot_start() {
	local d=$1 img=$2 verity=$3 mem=$4
	local -a port=()
	shift 4
	[ -z "${BOOT_PORT_SOCK:-}" ] || port=(-device virtio-serial-pci
		-chardev socket,id=port,path="$BOOT_PORT_SOCK",reconnect=1 -device virtserialport,chardev=port,name=ingot.0)
	swtpm socket --tpm2 --tpmstate dir="$d/tpm" --ctrl type=unixio,path="$d/tpm.sock" --flags startup-clear &
	BOOT_TPM_PID=$!
	for _ in $(seq 50); do [ -S "$d/tpm.sock" ] && break; sleep 0.1; done
	timeout "$BOOT_TIMEOUT" qemu-system-x86_64 "$@" -accel tcg -cpu max -m "$mem" -smp 2 \
		-nographic -no-reboot -nic none \
		-drive if=pflash,format=raw,unit=1,file="$d/vars.fd" \
		-chardev socket,id=chrtpm,path="$d/tpm.sock" -tpmdev emulator,id=tpm0,chardev=chrtpm \
		-device tpm-tis,tpmdev=tpm0 \
		-drive if=none,id=esp,format=raw,readonly=on,file=fat:"$d/esp" \
		-device virtio-blk-pci,drive=esp,bootindex=0 \
		-drive if=none,id=img,format=raw,readonly=on,file="$img" \
		-device virtio-blk-pci,drive=img,serial=ingot-image \
		-drive if=none,id=hash,format=raw,readonly=on,file="$verity" \
		-device virtio-blk-pci,drive=hash,serial=ingot-hash \
		-drive if=none,id=ev,format=raw,file="$d/evidence.img" \
		-device virtio-blk-pci,drive=ev,serial=ingot-evidence "${port[@]}" \
		</dev/null >"$d/console.log" 2>&1 &
	BOOT_PID=$! BOOT_DIR=$d
}

# boot_stop_at PATTERN: stop the boot boot_start began once PATTERN shows
# on its console DIR/console.log (DIR: boot_start's), e.g. a firmware
# that refused to boot and waits for a key; returns when QEMU has ended.
boot_stop_at() {
	while kill -0 "$BOOT_PID" 2>/dev/null; do
		if grep -qs "$1" "$BOOT_DIR/console.log"; then
			sleep 2; kill "$BOOT_PID" 2>/dev/null || true; break
		fi
		sleep 1
	done
}

# boot_wait: wait for the boot boot_start began, then stop its swtpm;
# returns QEMU's exit status (124: killed after BOOT_TIMEOUT).
boot_wait() {
	local rc=0
	wait "$BOOT_PID" || rc=$?
	kill "$BOOT_TPM_PID" 2>/dev/null || true
	wait "$BOOT_TPM_PID" 2>/dev/null || true
	return "$rc"
}

# boot_evidence_in DIR SIZE: DIR/evidence.img of SIZE holding a ustar of
# DIR/in (what the guest reads from the disk with serial ingot-evidence).
boot_evidence_in() {
	truncate -s "$2" "$1/evidence.img"
	(cd "$1/in" && tar --format=ustar --owner=0 --group=0 -cf - -- *) |
		dd of="$1/evidence.img" conv=notrunc status=none
}

# boot_relay SOCK ADDRESS: the host's side of the guest's ingot.0 port:
# socat listens on the Unix socket SOCK (QEMU connects to it) and carries
# the bytes to the verifier's loopback ADDRESS (HOST:PORT), one stream per
# boot (`ingot attest push --via` speaks HTTP/1.1 over it): start one
# before each boot that pushes.  boot_verifier_stop stops it; returns 1
# when socat is missing or does not listen.
BOOT_VERIFIER_PIDS=()
boot_relay() {
	command -v socat >/dev/null 2>&1 || return 1
	rm -f "$1"
	socat UNIX-LISTEN:"$1" TCP:"$2" &
	BOOT_VERIFIER_PIDS+=($!)
	for _ in $(seq 50); do [ -S "$1" ] && return 0; sleep 0.1; done
	return 1
}

# boot_verifier DIR NODE ENROLMENT MANIFEST KEYRING [FIRMWARE-REF]: the
# host's verifier for the boots that push their evidence (the verifier,
# not the guest, decides): `ingot serve` on loopback (DIR/verifier.conf,
# its database DIR/verifier.sqlite) trusting KEYRING, the signed MANIFEST,
# NODE's ENROLMENT record and the platform's FIRMWARE-REF.  Without one
# the boot is the platform's reference boot: unknown-firmware is accepted
# by name (the verdict says so).  With Slurm's daemons installed and root,
# a test cluster in DIR/slurm (tests/e2e/slurm-lib.sh) where NODE, a
# slurmd standing in for the guest's, is DOWN until the verifier's hook
# (server/dist/slurm-hook) resumes it.  Says what it started on stderr,
# each line prefixed with BOOT_TEST (the script's name).  Sets BOOT_VADDR
# (HOST:PORT), BOOT_VDIR (DIR) and BOOT_SLURM (1: the cluster runs);
# returns 1 with a FAIL line when the cluster or the verifier did not
# start.  boot_verifier_stop stops all of it.
boot_verifier() {
	local v=$1 node=$2 enrolment=$3 manifest=$4 keyring=$5 fwref=${6:-} lib i
	lib=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	BOOT_VDIR=$v BOOT_VADDR="" BOOT_SLURM=0 SLURM_PIDS=""
	mkdir -p "$v/enrolments" "$v/firmware"
	cp "$enrolment" "$v/enrolments/$node.json"
	[ -z "$fwref" ] || cp "$fwref" "$v/firmware/"
	. "$lib/tests/e2e/slurm-lib.sh"
	if ! slurm_found || [ "$(id -u)" != 0 ]; then
		echo "$BOOT_TEST: slurm: not installed (or not root): the verifier's database only" >&2
	elif slurm_cluster_start "$v/slurm" "$node" 2>"$v/slurm.err"; then
		BOOT_SLURM=1
		echo "$BOOT_TEST: slurm: slurmctld and slurmd (standing in for the guest's) on loopback; $node: $(slurm_state "$node")" >&2
	else
		echo "$BOOT_TEST: FAIL: the Slurm test cluster did not start: $(tail -n 1 "$v/slurm.err")" >&2
		return 1
	fi
	{
		echo "listen = 127.0.0.1:0"
		echo "database = verifier.sqlite"
		echo "keyring = $keyring"
		echo "enrolments = enrolments"
		echo "firmware-refs = firmware"
		echo "manifest = $manifest"
		[ -n "$fwref" ] || echo "accept-weak = unknown-firmware"
		echo "# one relayed stream per boot, open from QEMU's start: idle while the"
		echo "# guest boots, which lasts BOOT_TIMEOUT at most"
		echo "connection-timeout = $BOOT_TIMEOUT"
		[ "$BOOT_SLURM" = 0 ] || echo "hook = $lib/server/dist/slurm-hook"
	} >"$v/verifier.conf"
	"$INGOT" serve --config "$v/verifier.conf" >"$v/serve.out" 2>"$v/serve.err" &
	BOOT_VERIFIER_PIDS+=($!)
	for i in $(seq 100); do grep -q '^listening on ' "$v/serve.out" 2>/dev/null && break; sleep 0.1; done
	BOOT_VADDR=$(sed -n 's/^listening on //p' "$v/serve.out")
	if [ -z "$BOOT_VADDR" ]; then
		echo "$BOOT_TEST: FAIL: ingot serve did not start: $(tail -n 3 "$v/serve.err")" >&2
		return 1
	fi
	echo "$BOOT_TEST: verifier: ingot serve on $BOOT_VADDR$([ -z "$fwref" ] || echo " with the platform's firmware reference")" >&2
}

# boot_verifier_stop: everything boot_verifier, boot_relay and
# boot_watch_start started, by pid.
boot_verifier_stop() {
	local p
	for p in "${BOOT_VERIFIER_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	BOOT_VERIFIER_PIDS=()
	[ -z "${SLURM_PIDS:-}" ] || slurm_cluster_stop
}

# boot_verdicts NODE: the verifier's stored verdicts for NODE, oldest
# first, one "VERDICT: REASON" a line (its database, not the guest's word).
boot_verdicts() {
	sqlite3 -batch "$BOOT_VDIR/verifier.sqlite" \
		"SELECT verdict || ': ' || reason FROM verdicts WHERE node = '$1' ORDER BY id" 2>&1 || true
}

# boot_watch_start NODE FILE: each new Slurm state of NODE ("STATE|REASON",
# slurm_state) to FILE while a boot runs; boot_watch_stop ends it.
boot_watch_start() {
	local last="" s
	while :; do
		s=$(slurm_state "$1")
		[ "$s" = "$last" ] || { echo "$s"; last=$s; }
		sleep 0.5
	done >"$2" &
	BOOT_WATCH_PID=$!
	BOOT_VERIFIER_PIDS+=("$BOOT_WATCH_PID")
}
boot_watch_stop() {
	sleep 1
	kill "$BOOT_WATCH_PID" 2>/dev/null || true
	wait "$BOOT_WATCH_PID" 2>/dev/null || true
}
