# A private Slurm cluster on loopback (sourced): munged with its own key
# and socket, slurmctld and one slurmd, all run by the caller (root in
# CI), with the slurm.conf that keeps a node out of service until the
# verifier resumes it (docs/verifier.md "The scheduler gate"):
#   ReturnToService=0            a node that rebooted stays DOWN
#   NodeName=... State=DOWN      a node that registers for the first time too
# Used by tests/e2e/test-serve-slurm.sh and scripts/boot-test.sh.

# slurm_found: 0 when Debian's slurmctld, slurmd, scontrol, sinfo and munged are there.
slurm_found() {
	local c
	for c in slurmctld slurmd scontrol sinfo munged; do
		command -v "$c" >/dev/null 2>&1 || return 1
	done
}

# slurm_free_ports: a port P with P and P+1 free on 127.0.0.1, below the
# kernel's ephemeral range (ip_local_port_range), where no outgoing
# connection of another test can take it between this check and the bind.
slurm_free_ports() {
	python3 - <<'PY'
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    p = random.randrange(10000, max(low - 2, 10001))
    socks = []
    try:
        for q in (p, p + 1):
            s = socket.socket(); socks.append(s); s.bind(("127.0.0.1", q))
        print(p); break
    except OSError:
        pass
    finally:
        for s in socks: s.close()
else:
    raise SystemExit(1)
PY
}

# slurm_cluster_start DIR NODE [NODE...]: the cluster in DIR (created),
# slurmd for the first NODE (the others only exist in slurm.conf); sets
# SLURM_CONF (exported: scontrol and the verifier's hook use it) and
# SLURM_PIDS.  Returns 1, the reason on stderr, when a daemon does not
# come up in 20 s.  Stop it with slurm_cluster_stop.
slurm_cluster_start() {
	local d=$1 first=$2 port n i
	shift
	mkdir -p "$d/munge" "$d/state" "$d/spool" "$d/log"
	chmod 0755 "$d" "$d/munge"
	dd if=/dev/urandom of="$d/munge.key" bs=1024 count=1 status=none
	chmod 0400 "$d/munge.key"
	port=$(slurm_free_ports) || { echo "no two free ports on 127.0.0.1 for slurmctld and slurmd" >&2; return 1; }
	{
		cat <<CONF
# ingot's test cluster: loopback only, every daemon the test's own
ClusterName=ingot-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/socket
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/linear
MpiDefault=none
# The gate: a node that rebooted (or registers for the first time, State=DOWN
# below) is not schedulable until the verifier runs State=RESUME.
ReturnToService=0
CONF
		for n in "$@"; do
			echo "NodeName=$n NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=1 State=DOWN Reason=\"ingot: not admitted yet\""
		done
		echo "PartitionName=gpu Nodes=$(IFS=,; echo "$*") Default=YES State=UP"
	} >"$d/slurm.conf"
	export SLURM_CONF=$d/slurm.conf
	SLURM_PIDS=""
	munged -F -f --socket="$d/munge/socket" --key-file="$d/munge.key" --pid-file="$d/munge.pid" \
		--log-file="$d/log/munged.log" --seed-file="$d/munge.seed" >"$d/log/munged.out" 2>&1 &
	SLURM_PIDS="$SLURM_PIDS $!"
	for i in $(seq 100); do [ -S "$d/munge/socket" ] && break; sleep 0.1; done
	slurmctld -D -i -f "$d/slurm.conf" >"$d/log/slurmctld.out" 2>&1 &
	SLURM_PIDS="$SLURM_PIDS $!"
	for i in $(seq 200); do scontrol ping 2>/dev/null | grep -q 'is UP' && break; sleep 0.1; done
	scontrol ping 2>/dev/null | grep -q 'is UP' ||
		{ echo "slurmctld did not answer in 20 s: $(tail -3 "$d/log/slurmctld.log" 2>/dev/null)" >&2; return 1; }
	slurm_slurmd_start "$d" "$first" || return 1
}

# slurm_slurmd_start DIR NODE [ARGS...]: slurmd for NODE (ARGS: e.g. -b, as
# after a reboot); waits (bounded) until slurmctld has heard it register
# (the node's SlurmdStartTime changes).
slurm_slurmd_start() {
	local d=$1 node=$2 i before
	shift 2
	before=$(slurm_started "$node")
	slurmd -D -N "$node" -f "$d/slurm.conf" "$@" >>"$d/log/slurmd.out" 2>&1 &
	SLURMD_PID=$!
	SLURM_PIDS="$SLURM_PIDS $SLURMD_PID"
	for i in $(seq 300); do
		[ "$(slurm_started "$node")" = "$before" ] || return 0
		sleep 0.1
	done
	echo "slurmd $node did not register in 30 s: $(tail -3 "$d/log/slurmd.log" 2>/dev/null)" >&2
	return 1
}
slurm_started() { scontrol show node "$1" 2>/dev/null | sed -n 's/.*SlurmdStartTime=\([^ ]*\).*/\1/p'; }

# slurm_cluster_stop: every daemon slurm_cluster_start started (by pid).
slurm_cluster_stop() {
	local p
	for p in $SLURM_PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $SLURM_PIDS; do wait "$p" 2>/dev/null || true; done
	SLURM_PIDS=""
}

# slurm_state NODE: "STATE|REASON" as sinfo shows them (e.g. "down|ingot:
# not admitted yet", "idle|none", "drained|ingot: refuse: ...").
slurm_state() { sinfo -h -N -n "$1" -o '%T|%E' 2>/dev/null | head -n 1; }

# slurm_wait NODE PATTERN: wait (20 s at most) until slurm_state matches
# the glob; prints the last state.
slurm_wait() {
	local i s
	for i in $(seq 200); do
		s=$(slurm_state "$1")
		# shellcheck disable=SC2053
		[[ $s == $2 ]] && break
		sleep 0.1
	done
	echo "$s"
}
