#!/bin/bash
# The shipped Slurm hook (server/dist/slurm-hook): admit resumes the node,
# every other verdict drains it with "ingot: VERDICT: REASON", the reason
# one argument whatever it holds.
. "$(dirname "$0")/lib.sh"
HOOK=$SRC/server/dist/slurm-hook
cat >"$T/scontrol" <<'SH'
#!/bin/sh
for a in "$@"; do printf '[%s]' "$a"; done >>"$(dirname "$0")/calls"
echo >>"$(dirname "$0")/calls"
SH
chmod +x "$T/scontrol"
export SCONTROL=$T/scontrol
"$HOOK" node-1 admit "booted the manifest's UKI" || fail "hook failed on admit"
"$HOOK" node-2 refuse 'PCR 4: boot application 1; $(touch '"$T"'/pwned) "quoted"' || fail "hook failed on refuse"
"$HOOK" node-3 stale "stale: no admitted evidence for over 3600 s" || fail "hook failed on stale"
assert_eq "[update][NodeName=node-1][State=RESUME]" "$(sed -n 1p "$T/calls")" "admit"
assert_eq "[update][NodeName=node-2][State=DRAIN][Reason=ingot: refuse: PCR 4: boot application 1; \$(touch $T/pwned) \"quoted\"]" \
	"$(sed -n 2p "$T/calls")" "refuse"
assert_eq "[update][NodeName=node-3][State=DRAIN][Reason=ingot: stale: stale: no admitted evidence for over 3600 s]" \
	"$(sed -n 3p "$T/calls")" "stale"
assert_no_file "$T/pwned"
echo "slurm hook: admit resumes, every other verdict drains with its reason"
