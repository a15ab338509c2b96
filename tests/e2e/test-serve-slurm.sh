#!/bin/bash
# The scheduler gate against a real Slurm: Debian's slurmctld and slurmd
# (with munged) started here on loopback with the slurm.conf of
# docs/verifier.md, and `ingot serve` whose hook is the shipped
# server/dist/slurm-hook.  Shown through sinfo and scontrol:
#   1. a node that registers is not schedulable (DOWN);
#   2. the verifier resumes it when its evidence is admitted;
#   3. it drains it with the verdict's reason when the evidence is
#      refused, and when the node goes stale;
#   and a node that rebooted is DOWN again until the verifier admits it.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/serve-lib.sh"
. "$SRC/tests/e2e/slurm-lib.sh"
slurm_found || skip "Slurm (slurmctld, slurmd, munge) not installed"
[ "$(id -u)" = 0 ] || skip "slurmd needs root"
serve_fixture
at_exit slurm_cluster_stop
slurm_cluster_start "$T/slurm" node-1 node-2 || fail "the test cluster did not start"
serve_config "hook = $SRC/server/dist/slurm-hook"
serve_start

# push CASE NODE VERDICT: the case's evidence for NODE, judged VERDICT.
push() {
	evidence "$1" "$2" "$(nonce_for "$2")"
	expect_http 200 "\"verdict\":\"$3\"" POST /v1/evidence ev.json
}
# admitted NODE WHAT: NODE's good evidence admitted, and Slurm resumed it.
admitted() {
	push good "$1" admit
	assert_eq "idle|none" "$(slurm_wait "$1" 'idle|none')" "$2"
}

note "1. node-1's slurmd registered: not schedulable"
assert_eq "down|ingot: not admitted yet" "$(slurm_state node-1)" "node-1 after registering"
scontrol show node node-1 | grep -q 'State=DOWN ' || fail "scontrol: node-1 not DOWN: $(scontrol show node node-1)"

note "2. admitted by the verifier: resumed"
admitted node-1 "node-1 after admission"

note "3a. refused evidence: drained with the verdict's reason"
push relabel node-1 refuse
WHY=$(jq -r .reason resp.out)
assert_eq "drained|ingot: refuse: $WHY" "$(slurm_wait node-1 'drained|*')" "node-1 after refusal"
scontrol show node node-1 | grep -q "Reason=ingot: refuse: " || fail "scontrol: no reason: $(scontrol show node node-1)"
admitted node-1 "node-1 admitted again"

note "a node that reboots is DOWN until the verifier admits its new boot"
kill "$SLURMD_PID"; wait "$SLURMD_PID" 2>/dev/null || true
# slurmctld calls a boot "unexpected" when it is later than the node's last
# answer (whole seconds); a real reboot takes far longer than this.
sleep 2
slurm_slurmd_start "$T/slurm" node-1 -b || fail "slurmd did not come back"
assert_eq "down|Node unexpectedly rebooted" "$(slurm_wait node-1 'down|*')" "node-1 after its reboot"
admitted node-1 "node-1 admitted after its reboot"

note "an unregistered node refused: drained too (it was never schedulable)"
push soft node-2 refuse
assert_contains "$(slurm_wait node-2 '*drain*')" "|ingot: refuse: " "node-2 after refusal"
serve_stop

note "3b. no fresh evidence: stale, drained by the sweep (a verifier restarted on the same database)"
serve_config "hook = $SRC/server/dist/slurm-hook" "stale-after = 2s" "sweep-interval = 1s"
serve_start
assert_eq "drained|ingot: stale: stale: no admitted evidence for over 2 s" \
	"$(slurm_wait node-1 'drained|*')" "node-1 once stale"
serve_stop
echo "slurm: registered DOWN, resumed on admit, drained on refuse and on staleness with the verdict's reason, DOWN after a reboot"
