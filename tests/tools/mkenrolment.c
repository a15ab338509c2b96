/* mkenrolment: a signed enrolment record (keys/enrolment.h) for an AK
 * public key, without the enrolment protocol: for tests that need a node's
 * enrolled AK (the boot verdict's) but not a TPM.  The EK certificate and
 * CA bundle digests are placeholders; the protocol itself is tested in
 * tests/unit/test_enroll*.c and the swtpm e2e tests.
 *
 *   mkenrolment SIGNING_KEY NODE AK_PUB_PEM OUT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attest/enroll.h"
#include "attest/quote.h"
#include "keys/enrolment.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "manifest/dsse.h"

int main(int argc, char **argv)
{
	struct enroll_subject s = { 0 };
	struct signing_key *k = NULL;
	json_t *env = NULL;
	ingot_error e = { 0 };
	size_t len;

	if (argc != 5) {
		fprintf(stderr, "usage: mkenrolment SIGNING_KEY NODE AK_PUB_PEM OUT\n");
		return 64;
	}
	snprintf(s.node, sizeof(s.node), "%s", argv[2]);
	memset(s.ek_cert_sha256, 'e', 64);
	memset(s.ca_bundle_sha256, 'c', 64);
	if (read_file(argv[3], 1 << 16, &s.ak_pem, &len, &e) < 0 || attest_ak_id_pem(s.ak_pem, s.ak_id, &e) < 0 ||
	    signing_key_load(argv[1], &k, &e) < 0)
		goto fail;
	snprintf(s.ak_name, sizeof(s.ak_name), "000b%s", s.ak_id);
	if (enrolment_sign(&s, 1764806400, k, &env, &e) < 0 ||
	    json_write_file_as(argv[4], env, envelope_canonical, 0644, &e) < 0)
		goto fail;
	json_decref(env);
	signing_key_free(k);
	free(s.ak_pem);
	return 0;
fail:
	fprintf(stderr, "mkenrolment: %s\n", e.msg);
	return 1;
}
