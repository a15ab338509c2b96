# Sourceable helper: a private swtpm for one test.  Source lib.sh first.
#   swtpm_start [NAME]   start a TPM 2.0 simulator on a free loopback port
#                        pair with its own state dir $T/swtpm-NAME; exports
#                        INGOT_TCTI and TPM2TOOLS_TCTI, SWTPM_PORT, SWTPM_DIR;
#                        stopped automatically at exit
#   swtpm_stop           stop it (state dir kept until $T goes)
# Skips the test (exit 77) when swtpm is not installed.

_swtpm_pid=
# swtpm_localca_setup, shared with the QEMU boot tests
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/boot-lib.sh"

# A port P such that P and P+1 are both free on 127.0.0.1.
_swtpm_free_ports() {
	python3 - <<'PY'
import socket
for _ in range(50):
    a = socket.socket(); a.bind(("127.0.0.1", 0)); p = a.getsockname()[1]
    b = socket.socket()
    try:
        if p < 65535:
            b.bind(("127.0.0.1", p + 1)); print(p); break
    except OSError:
        pass
    finally:
        a.close(); b.close()
PY
}

swtpm_start() {
	local name=${1:-tpm} port tries
	command -v swtpm >/dev/null || skip "swtpm not installed"
	SWTPM_DIR="$T/swtpm-$name"
	mkdir -p "$SWTPM_DIR"
	for tries in 1 2 3 4 5; do
		port=$(_swtpm_free_ports)
		[ -n "$port" ] || continue
		swtpm socket --tpm2 --tpmstate dir="$SWTPM_DIR" \
			--server type=tcp,port="$port",bindaddr=127.0.0.1 \
			--ctrl type=tcp,port=$((port + 1)),bindaddr=127.0.0.1 \
			--flags not-need-init,startup-clear \
			--log file="$SWTPM_DIR/log" >/dev/null 2>&1 &
		_swtpm_pid=$!
		# Ready once the server port accepts connections.
		for _ in $(seq 50); do
			if ! kill -0 "$_swtpm_pid" 2>/dev/null; then break; fi
			if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
				SWTPM_PORT=$port
				export SWTPM_PORT SWTPM_DIR
				export INGOT_TCTI="swtpm:host=127.0.0.1,port=$port"
				export TPM2TOOLS_TCTI="$INGOT_TCTI"
				export TSS2_LOG=all+none
				at_exit swtpm_stop
				return 0
			fi
			sleep 0.1
		done
		kill "$_swtpm_pid" 2>/dev/null || true
		wait "$_swtpm_pid" 2>/dev/null || true
		_swtpm_pid=
	done
	fail "swtpm did not start (see $SWTPM_DIR/log)"
}

swtpm_stop() {
	if [ -n "$_swtpm_pid" ]; then
		kill "$_swtpm_pid" 2>/dev/null || true
		wait "$_swtpm_pid" 2>/dev/null || true
		_swtpm_pid=
	fi
}

# swtpm_manufacture NAME CADIR: give the TPM state $T/swtpm-NAME an EK
# (TCG default RSA template) and an EK certificate in NV 0x01c00002 issued
# by a local CA in CADIR (swtpm_localca: a root and an intermediate,
# created on first use), before swtpm_start NAME runs it.  CADIR/bundle.pem
# gets both CA certificates, the bundle a verifier is given.  Skips when
# swtpm_setup or swtpm_localca is missing.
swtpm_manufacture() {
	local name=$1 ca=$2 dir="$T/swtpm-$1"
	command -v swtpm_setup >/dev/null || skip "swtpm_setup (swtpm-tools) not installed"
	command -v swtpm_localca >/dev/null || skip "swtpm_localca (swtpm-tools) not installed"
	swtpm_localca_setup "$dir" "$ca" test sha256 || fail "swtpm_setup failed: $(cat "$dir/setup.log")"
}
