/* The trusted key of the harnesses that sign what the fuzzer makes
 * (fuzz_envelope, fuzz_enrolment), so verification gets past the
 * signatures to the checks behind them.  Include after fuzz_common.h. */
#ifndef INGOT_FUZZ_SIGN_H
#define INGOT_FUZZ_SIGN_H

#include <jansson.h>
#include "keys/envelope.h"
#include "keys/key.h"
#include "keys/keyring.h"
#include "lib/base64.h"
#include "manifest/dsse.h"

/* An Ed25519 key NAME.key in the scratch directory and a keyring
 * NAME-keyring.json trusting it (threshold 1); kept between runs. */
static inline void fuzz_trusted_key(const char *name, struct signing_key **key, struct keyring **ring)
{
	const char *dir = fuzz_scratch_dir();
	char prefix[300], keyp[320], pubp[320], ringp[320];
	ingot_error e = { 0 };

	snprintf(prefix, sizeof(prefix), "%s/%s", dir, name);
	snprintf(keyp, sizeof(keyp), "%s.key", prefix);
	snprintf(pubp, sizeof(pubp), "%s.pub", prefix);
	snprintf(ringp, sizeof(ringp), "%s-keyring.json", prefix);
	if ((access(keyp, F_OK) != 0 && key_generate(KEY_ED25519, prefix, NULL, NULL, &e) < 0) ||
	    signing_key_load_pass(keyp, NULL, key, &e) < 0 ||
	    (access(ringp, F_OK) != 0 && keyring_add(ringp, pubp, "fuzz", 1, 0, &e) < 0) ||
	    keyring_load(ringp, ring, &e) < 0) {
		fprintf(stderr, "%s: setup: %s\n", name, e.msg);
		abort();
	}
}

/* A DSSE envelope of payload data (ENVELOPE_PAYLOAD_TYPE) signed by key. */
static inline json_t *fuzz_signed_envelope(const struct signing_key *key, const uint8_t *data, size_t size)
{
	uint8_t *pae = NULL, *sig = NULL;
	size_t pae_len = 0, sig_len = 0;
	char *p64, *s64;
	json_t *env;
	ingot_error e = { 0 };

	dsse_pae(ENVELOPE_PAYLOAD_TYPE, data, size, &pae, &pae_len);
	if (signing_key_sign(key, pae, pae_len, &sig, &sig_len, &e) < 0)
		abort();
	p64 = base64_encode(data, size, NULL);
	s64 = base64_encode(sig, sig_len, NULL);
	if (!p64 || !s64)
		abort();
	env = json_pack("{s:s,s:s,s:[{s:s,s:s}]}", "payloadType", ENVELOPE_PAYLOAD_TYPE,
			"payload", p64, "signatures", "keyid", key->keyid, "sig", s64);
	if (!env)
		abort();
	free(p64);
	free(s64);
	free(sig);
	free(pae);
	return env;
}

#endif
