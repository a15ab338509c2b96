/* libFuzzer harness: the signed-manifest parser and verifier
 * (keys/envelope.h).  The first input byte picks a mode:
 *   even: the rest is an envelope file: envelope_parse, then
 *         envelope_verify_json against a one-key keyring;
 *   odd:  the rest is a DSSE payload, which the harness signs with the
 *         trusted key, so verification gets past the signature and
 *         exercises the statement and manifest checks, expiry and the
 *         rollback state file. */
#include <sys/stat.h>
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_sign.h"
#include "lib/fileio.h"

static struct signing_key *key;
static struct keyring *ring;
static char state_path[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char state[] = "{\"schema\":\"ingot.verify-state/v1\",\"serials\":{\"demo\":5}}\n";
	ingot_error e = { 0 };

	(void)argc; (void)argv;
	fuzz_trusted_key("env", &key, &ring);
	snprintf(state_path, sizeof(state_path), "%s/state.json", fuzz_scratch_dir());
	if (write_file_atomic(state_path, state, sizeof(state) - 1, 0644, &e) < 0) {
		fprintf(stderr, "fuzz_envelope: setup: %s\n", e.msg);
		abort();
	}
	return 0;
}

static void verify(const json_t *env)
{
	struct verify_policy p = { .now = 1767225600, .state_path = state_path };
	struct verify_outcome out;
	struct manifest *m = NULL;
	ingot_error e = { 0 };

	memset(&out, 0, sizeof(out));
	int r = envelope_verify_json("fuzz.dsse.json", env, ring, &p, &m, &out, &e);

	fuzz_note("envelope_verify_json", r == 0 ? NULL : e.msg);
	if (r == 0) {
		if (!m || out.valid < out.threshold)
			abort();
		manifest_free(m);
	} else if (e.kind < ENVELOPE_FAIL_IO || e.kind > ENVELOPE_FAIL_DIGEST) {
		abort();   /* every refusal carries a documented failure kind */
	}
}

static void raw_envelope(const uint8_t *data, size_t size)
{
	json_t *env = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	uint8_t *payload = NULL;
	size_t len = 0;
	ingot_error e = { 0 };

	if (!env)
		return;
	if (envelope_parse("fuzz.dsse.json", env, &payload, &len, &e) == 0) {
		json_t *m = NULL;
		if (envelope_statement_manifest("fuzz", payload, len, MANIFEST_FULL, NULL, &m, &e) == 0)
			json_decref(m);
		free(payload);
	}
	verify(env);
	json_decref(env);
}

static void signed_payload(const uint8_t *data, size_t size)
{
	json_t *env = fuzz_signed_envelope(key, data, size);

	verify(env);
	json_decref(env);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		signed_payload(data + 1, size - 1);
	else
		raw_envelope(data + 1, size - 1);
	return 0;
}
