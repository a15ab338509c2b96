#!/bin/bash
# A record put in the enrolments directory after start is loaded at the
# node's first nonce request (another replica approved it, or an operator
# recorded it offline).  One that does not verify is refused (404), and
# remembered by what the file is (inode, mtime, size): not verified, nor
# logged, again at each request, until the file changes; a good record
# in its place is then trusted.  NODE.json holding another node's record
# is refused too.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/serve-lib.sh"
serve_fixture
"$INGOT" keys generate -o other >/dev/null
serve_config
serve_start

note "node-9's record, signed by a key the enrolment role does not trust: refused, checked once"
"$MKENROL" other.key node-9 ak/ak-0.pub enrolments/node-9.json
printf '{"node":"node-9"}' >n9.json
for i in 1 2 3; do
	expect_http 404 'node node-9: not enrolled' POST /v1/nonce n9.json
done
assert_eq 1 "$(grep -c 'enrolments: .*node-9.json' serve.err)" "refusals of node-9.json logged (checked once)"

note "the file replaced by a record the enrolment key signed: trusted at the next request"
"$MKENROL" k.key node-9 ak/ak-0.pub enrolments/node-9.new
mv enrolments/node-9.new enrolments/node-9.json
expect_http 200 '"nonce"' POST /v1/nonce n9.json
assert_eq 1 "$(grep -c 'enrolments: .*node-9.json' serve.err)" "refusals of node-9.json logged"

note "node-7.json holding node-6's record: refused for both, once"
"$MKENROL" k.key node-6 ak/ak-0.pub enrolments/node-7.json
printf '{"node":"node-7"}' >n7.json
printf '{"node":"node-6"}' >n6.json
for i in 1 2; do
	expect_http 404 'node node-7: not enrolled' POST /v1/nonce n7.json
	expect_http 404 'node node-6: not enrolled' POST /v1/nonce n6.json
done
assert_eq 1 "$(grep -c 'enrolments: .*node-7.json: predicate.node: expected node-7 (the file.s name), got node-6' serve.err)" \
	"refusals of node-7.json logged"

note "a good late record for another node: trusted at once"
"$MKENROL" k.key node-8 ak/ak-0.pub enrolments/node-8.json
nonce_for node-8 >/dev/null
serve_stop
