#!/bin/bash
# ingot serve under systemd (Type=notify): READY=1 once the socket
# accepts, STOPPING=1 on SIGTERM, sent to $NOTIFY_SOCKET.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/serve-lib.sh"
serve_fixture
serve_config
python3 - "$T/notify.sock" "$T/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(30)
with open(sys.argv[2], "a") as log:
    while True:
        try:
            msg = s.recv(4096).decode()
        except socket.timeout:
            break
        log.write(msg.replace("\n", " ") + "\n")
        log.flush()
        if "STOPPING=1" in msg:
            break
PY
LISTENER=$!
at_exit "kill $LISTENER 2>/dev/null"
for i in $(seq 100); do [ -S "$T/notify.sock" ] && break; sleep 0.05; done
export NOTIFY_SOCKET=$T/notify.sock
serve_start
for i in $(seq 100); do grep -q READY=1 "$T/notify.log" 2>/dev/null && break; sleep 0.05; done
assert_contains "$(cat "$T/notify.log")" "READY=1 STATUS=listening on ${URL#http://}"
expect_http 200 "" GET /metrics   # ready meant accepting
serve_stop
wait "$LISTENER" || true
assert_contains "$(cat "$T/notify.log")" "STOPPING=1"
echo "serve: READY=1 once listening, STOPPING=1 on SIGTERM"
