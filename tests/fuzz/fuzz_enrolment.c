/* libFuzzer harness: signed enrolment records (keys/enrolment.h
 * enrolment_load), the enrolment document `verify`, `audit` and
 * `attest boot-check` trust an AK by.  The first input byte picks a mode:
 *   even: the rest is the record file as it is (envelope, signatures);
 *   odd:  the rest is the in-toto statement, which the harness signs with
 *         the trusted key, so the record's own checks are reached
 *         (predicate fields, node, AK PEM and id, subject, time).
 * A record that loads has a node, a 64-hex AK id and the AK's PEM; one
 * refused says why with a documented failure kind. */
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_sign.h"
#include "keys/enrolment.h"
#include "lib/digest.h"
#include "lib/fileio.h"

static struct signing_key *key;
static struct keyring *ring;
static char record_path[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	fuzz_trusted_key("enrolment", &key, &ring);
	snprintf(record_path, sizeof(record_path), "%s/record.dsse.json", fuzz_scratch_dir());
	return 0;
}

static void load(const uint8_t *data, size_t size)
{
	struct enrolment en;
	ingot_error e = { 0 };
	int r;

	if (write_file_atomic(record_path, data, size, 0644, &e) < 0)
		abort();
	memset(&en, 0, sizeof(en));
	r = enrolment_load(record_path, ring, &en, &e);
	fuzz_note("enrolment_load", r == 0 ? NULL : e.msg);
	if (r == 0) {
		if (!en.node[0] || !is_sha256_hex(en.ak_id) || !en.ak_pem)
			abort();
		enrolment_release(&en);
	} else if (r != -ENOMEM && (!e.msg[0] || e.kind < ENVELOPE_FAIL_IO || e.kind > ENVELOPE_FAIL_DIGEST)) {
		abort();   /* every refusal says why, with a documented failure kind */
	}
}

static void signed_statement(const uint8_t *data, size_t size)
{
	json_t *env = fuzz_signed_envelope(key, data, size);
	char *text = json_dumps(env, JSON_COMPACT);

	if (!text)
		abort();
	load((const uint8_t *)text, strlen(text));
	free(text);
	json_decref(env);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		signed_statement(data + 1, size - 1);
	else
		load(data + 1, size - 1);
	return 0;
}
