/* libFuzzer harness: AK enrolment input from the node (attest/enroll.h).
 * The first byte picks what the rest is:
 *   0  a request document (JSON) -> enroll_check_request
 *   1  an AK public area (marshalled TPM2B_PUBLIC), wrapped in a request
 *      -> the attribute checks, name and PEM (checked before the EK)
 *   2  an answer document (JSON) -> enroll_finish against a fixed state
 * The CA bundle is one fixed self-signed certificate: nothing the fuzzer
 * makes chains to it, so an accepted request is a bug. */
#include <jansson.h>
#include "tests/fuzz/fuzz_common.h"
#include "attest/enroll.h"
#include "lib/base64.h"
#include "lib/fileio.h"

static const char ca_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBezCCASGgAwIBAgIUbuG6+H668IgVZkHR2c1cZNwDi2UwCgYIKoZIzj0EAwIw\n"
	"EjEQMA4GA1UEAwwHZnV6ei1jYTAgFw0yNjEyMDQxMzUyNTBaGA8yMTI2MTExMDEz\n"
	"NTI1MFowEjEQMA4GA1UEAwwHZnV6ei1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEH\n"
	"A0IABPKVmElw7j7TQiMm3OXtDm6yrjEpkpMMe4Sz4KF74RiFDbNGKkSQPwBWxL5r\n"
	"iyqjErV/yM4c1oyP4r7RLyTH2xKjUzBRMB0GA1UdDgQWBBRl1KSTFHhrfgh3FzFK\n"
	"NwxscC2F/TAfBgNVHSMEGDAWgBRl1KSTFHhrfgh3FzFKNwxscC2F/TAPBgNVHRMB\n"
	"Af8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIQCG0W8oJuF8XS8AmehnyaDw0Z5R\n"
	"nnsO01U32vNK+BhrCQIgB+aHGePL8f5PUk5ivkH2Zs8x89jW9pDeihq3yJkC2GQ=\n"
	"-----END CERTIFICATE-----\n";

static char *ca_path;
static json_t *state;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	ingot_error e = { 0 };

	(void)argc; (void)argv;
	ca_path = path_join(fuzz_scratch_dir(), "ca.pem");
	if (!ca_path || write_file_atomic(ca_path, ca_pem, sizeof(ca_pem) - 1, 0644, &e) < 0)
		abort();
	/* sha256 of 32 zero bytes: the credential an answer must carry. */
	state = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}",
			  "format", ENROLL_STATE_FORMAT, "id", "0123456789abcdef0123456789abcdef",
			  "expires", "2100-01-01T00:00:00Z", "credential_sha256",
			  "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925",
			  "node", "n", "ak_id", "a", "ak_name", "b", "ak_public_key", "c",
			  "ek_certificate_sha256", "d", "ca_bundle_sha256", "e");
	if (!state)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct enroll_subject s;
	ingot_error e = { 0 };
	json_t *doc = NULL;
	char *b64;
	int r;

	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
	case 2:
		doc = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES, NULL);
		if (!doc)
			return 0;
		if (data[0] % 3 == 0) {
			r = enroll_check_request("request", doc, ca_path, 1767225600, &s, &e);
			fuzz_note("enroll_check_request", r == 0 ? NULL : e.msg);
			if (r == 0)
				abort();   /* nothing chains to the fixed CA */
		} else {
			r = enroll_finish(state, doc, "answer", 1767225600, &s, &e);
			fuzz_note("enroll_finish", r == 0 ? NULL : e.msg);
			if (r == 0)
				enroll_subject_release(&s);
		}
		break;
	case 1:
		b64 = base64_encode(data + 1, size - 1, NULL);
		if (!b64)
			abort();
		doc = json_pack("{s:s,s:s,s:s,s:s}", "format", ENROLL_REQUEST_FORMAT, "node", "n",
				"ek_certificate", "AAAA", "ak_public", b64);
		free(b64);
		if (!doc)
			abort();
		r = enroll_check_request("request", doc, ca_path, 1767225600, &s, &e);
		fuzz_note("enroll_check_request", r == 0 ? NULL : e.msg);
		if (r == 0)
			abort();   /* "AAAA" is no certificate */
		break;
	}
	json_decref(doc);
	return 0;
}
