/* Sigstore bundles (public-key material only) and the in-toto spellings
 * other signers write: manifest/dsse.h. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/cleanup.h"
#include "lib/json.h"
#include "manifest/dsse.h"

static int unwrap(const char *text, json_t **env, ingot_error *e)
{
	_cleanup_json_ json_t *doc = json_loads(text, 0, NULL);
	assert_non_null(doc);
	memset(e, 0, sizeof(*e));
	return sigstore_bundle_envelope("b.json", doc, env, e);
}

#define ENV "{\"payloadType\":\"application/vnd.in-toto+json\",\"payload\":\"e30=\",\"signatures\":[]}"
#define MT "\"mediaType\":\"application/vnd.dev.sigstore.bundle.v0.3+json\""

static void test_bundle(void **state)
{
	_cleanup_json_ json_t *env = NULL;
	ingot_error e;

	(void)state;
	/* a bare envelope is no bundle */
	assert_int_equal(unwrap(ENV, &env, &e), 0);
	assert_null(env);
	assert_int_equal(unwrap("{" MT ",\"verificationMaterial\":{\"publicKey\":{\"hint\":\"x\"},\"tlogEntries\":[]},"
				"\"dsseEnvelope\":" ENV "}", &env, &e), 1);
	assert_string_equal(json_string_value(json_object_get(env, "payload")), "e30=");
	/* v0.1's media type spelling */
	json_decref(TAKE_PTR(env));
	assert_int_equal(unwrap("{\"mediaType\":\"application/vnd.dev.sigstore.bundle+json;version=0.1\","
				"\"verificationMaterial\":{\"publicKey\":{}},\"dsseEnvelope\":" ENV "}", &env, &e), 1);
	json_decref(TAKE_PTR(env));

	assert_int_equal(unwrap("{" MT ",\"verificationMaterial\":{\"certificate\":{\"rawBytes\":\"AA==\"}},"
				"\"dsseEnvelope\":" ENV "}", &env, &e), -EPROTONOSUPPORT);
	assert_non_null(strstr(e.msg, "b.json: verificationMaterial.certificate: expected publicKey, got a keyless"));
	assert_int_equal(unwrap("{" MT ",\"verificationMaterial\":{},\"dsseEnvelope\":" ENV "}", &env, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "verificationMaterial.publicKey: expected an object"));
	assert_int_equal(unwrap("{" MT ",\"verificationMaterial\":{\"publicKey\":{},\"x\":1},\"dsseEnvelope\":" ENV "}",
				&env, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "verificationMaterial: unknown field 'x'"));
	assert_int_equal(unwrap("{" MT ",\"verificationMaterial\":{\"publicKey\":{}},\"dsseEnvelope\":[]}", &env, &e),
			 -EINVAL);
	assert_non_null(strstr(e.msg, "dsseEnvelope: expected the DSSE envelope object"));
	assert_int_equal(unwrap("{\"mediaType\":\"application/json\",\"dsseEnvelope\":" ENV "}", &env, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "b.json: mediaType: expected"));
	/* only the documented media types: no prefix match */
	static const char *const other[] = {
		"application/vnd.dev.sigstore.bundle", "application/vnd.dev.sigstore.bundle.v0.9+json",
		"application/vnd.dev.sigstore.bundle-evil", "application/vnd.dev.sigstore.bundle+json;version=0.4",
		"application/vnd.dev.sigstore.bundle.v0.3+json ", "application/vnd.dev.sigstore.bundle+json",
	};
	for (size_t i = 0; i < ARRAY_SIZE(other); i++) {
		_cleanup_free_ char *t = NULL;
		assert_true(asprintf(&t, "{\"mediaType\":\"%s\",\"verificationMaterial\":{\"publicKey\":{}},"
				     "\"dsseEnvelope\":" ENV "}", other[i]) > 0);
		assert_int_equal(unwrap(t, &env, &e), -EINVAL);
		assert_non_null(strstr(e.msg, "b.json: mediaType: expected a Sigstore bundle v0.1 to v0.3"));
		assert_null(env);
	}
	for (int v = 1; v <= 3; v++) {
		_cleanup_free_ char *t = NULL;
		assert_true(asprintf(&t, "{\"mediaType\":\"application/vnd.dev.sigstore.bundle+json;version=0.%d\","
				     "\"verificationMaterial\":{\"publicKey\":{}},\"dsseEnvelope\":" ENV "}", v) > 0);
		assert_int_equal(unwrap(t, &env, &e), 1);
		json_decref(TAKE_PTR(env));
	}
	assert_int_equal(unwrap("{" MT ",\"verificationMaterial\":{\"publicKey\":{}},\"dsseEnvelope\":" ENV
				",\"extra\":1}", &env, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "unknown field 'extra' in a Sigstore bundle"));
	assert_null(env);
}

static void test_spellings(void **state)
{
	(void)state;
	assert_true(envelope_payload_type_ok("application/vnd.in-toto+json"));
	assert_true(envelope_payload_type_ok("application/vnd.in-toto.v1+json"));
	assert_false(envelope_payload_type_ok("application/vnd.in-toto.v2+json"));
	assert_false(envelope_payload_type_ok("application/vnd.in-toto+json "));
	assert_true(statement_type_ok("https://in-toto.io/Statement/v1"));
	assert_true(statement_type_ok("https://in-toto.io/Statement/v0.1"));
	assert_false(statement_type_ok("https://in-toto.io/Statement/v0.2"));
	assert_false(statement_type_ok("http://in-toto.io/Statement/v1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bundle),
		cmocka_unit_test(test_spellings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
