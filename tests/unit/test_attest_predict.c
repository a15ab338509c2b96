/* Units for attest/predict.c and attest/pcrs.c: the measurement formulas
 * against vectors computed independently (Python hashlib), and PCR
 * selections and value sets. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "attest/pcrs.h"
#include "attest/predict.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"
#include "lib/strbuf.h"

#define IMG "b29814cf5792e684cd75d6a7fce7a67a11887e312f87ca2ac2496d81f365ff72"  /* sha256("img") */
#define ROOT "4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2" /* sha256("root") */
#define CD "21e721c35a5823fdb452fa2f9f0a612c74fb952e06927489c6b27a43b817bed4"   /* sha256("cd") */
#define EVENT "ingot:v1 image=h100 sha256=" IMG " verity=" ROOT " manifest=" CD

static void test_predict_vectors(void **state)
{
	static const struct { const char *alg, *digest, *predicted; } want[] = {
		{ "sha1", "98f41f0037a8459bc9f8a5b6af15772f7986f9b7", "645bc4f487e3034a0de6b4d55d2335529399df71" },
		{ "sha256", "92a2be1a0bb27eccbb98bb3d08cb73267c1e63914479d80d1e7f0abf3c3dafc1",
		  "2544da74140b87c5d285919ef6b646512dc3a8bcfe1c1d1020ade15138abf98d" },
		{ "sha384", "2960d2950c8211b01b52b6760707b7caab768e73338046e8eb0197bd8eee3d70a188f5952972523e5a228dcd56f15a3c",
		  "fd3e87c87dca4cca11b656c1f5592b48e6cf0de0f359a19fc3e6e6cbc574aeb88722d4b9b2b63f4fd0f2346fef293ef8" },
		{ "sha512", "1f98f2ec1f3ef91d6b70dc476c9afe9f8a112ce39442f026c80449b76a148d638c3f10883de42364aafc022b50bd949b58bf042454a61fa822c743ae7164f5b3",
		  "420db9e7defc869b0b0c325651379b8f21d71306b51a08c4f353c11234a8dbdc480c1bdcb2825eb36693a3b5d382bf1f2c3e9545070515b0eca9b84fb89eb4c0" },
	};
	uint8_t img[32], root[32], cd[32];
	_cleanup_json_ json_t *m = NULL;
	(void)state;

	assert_int_equal(hex_decode(IMG, img, 32), 0);
	assert_int_equal(hex_decode(ROOT, root, 32), 0);
	assert_int_equal(hex_decode(CD, cd, 32), 0);
	m = attest_predict_measurement("h100", img, root, cd, 15);
	assert_non_null(m);
	assert_int_equal(json_integer_value(json_object_get(m, "pcr")), 15);
	assert_int_equal(json_integer_value(json_object_get(m, "event_type")), 13);
	assert_string_equal(json_string_value(json_object_get(m, "event_data")), EVENT);
	assert_string_equal(json_string_value(json_object_get(m, "content_digest")), CD);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		assert_string_equal(json_string_value(json_object_get(json_object_get(m, "digests"), want[i].alg)),
				    want[i].digest);
		assert_string_equal(json_string_value(json_object_get(json_object_get(m, "predicted"), want[i].alg)),
				    want[i].predicted);
	}
	assert_int_equal(json_object_size(m), 6);
	/* Names that would make the event line ambiguous, and bad PCRs. */
	assert_null(attest_predict_measurement("h100 pool", img, root, cd, 15));
	assert_null(attest_predict_measurement("", img, root, cd, 15));
	assert_null(attest_predict_measurement("h100", img, root, cd, 24));
}

static json_t *manifest(void)
{
	return json_pack("{s:{s:s, s:s}, s:{s:s}, s:{s:s}, s:i}", "recipe", "name", "h100", "version", "1",
			 "image", "sha256", IMG, "verity", "root_hash", ROOT, "serial", 3);
}

static void test_content_digest_and_event(void **state)
{
	_cleanup_json_ json_t *j = json_pack("{s:s, s:[i,{s:n}], s:{s:i}}", "a", "x", "b", 1, "c",
					     "measurement", "pcr", 15);
	_cleanup_json_ json_t *m = manifest();
	_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;
	uint8_t d[32], d2[32];
	char hex[65];
	ingot_error e = { 0 };
	(void)state;

	/* sha256 of '{"a":"x","b":[1,{"c":null}]}': measurement is left out. */
	assert_int_equal(attest_content_digest(j, d), 0);
	hex_encode(d, 32, hex);
	assert_string_equal(hex, "e21a9bf7020ed579e2270496a2961aace0c4205c57fecbd8e17808030143234b");
	assert_int_equal(json_object_size(j), 3);  /* the input is not modified */

	strbuf_init(&ev, 0);
	assert_int_equal(attest_event_data_from_manifest(m, &ev, &e), 0);
	assert_int_equal(attest_content_digest(m, d), 0);
	hex_encode(d, 32, hex);
	assert_non_null(strstr(ev.buf, hex));
	assert_int_equal(strncmp(ev.buf, "ingot:v1 image=h100 sha256=" IMG " verity=" ROOT " manifest=", 163), 0);

	/* Adding the measurement does not change the content digest, and the
	 * check accepts the manifest's own measurement ... */
	{
		uint8_t img[32], root[32];
		unsigned pcr = 0;
		hex_decode(IMG, img, 32);
		hex_decode(ROOT, root, 32);
		json_object_set_new(m, "measurement", attest_predict_measurement("h100", img, root, d, 15));
		assert_int_equal(attest_content_digest(m, d2), 0);
		assert_memory_equal(d, d2, 32);
		assert_int_equal(attest_check_measurement(m, &pcr, &e), 0);
		assert_int_equal(pcr, 15);
		/* Recomputed from the content: the manifest's PCR unless overridden. */
		{
			_cleanup_json_ json_t *same = attest_measurement_for_manifest(m, -1, &e);
			_cleanup_json_ json_t *p16 = attest_measurement_for_manifest(m, 16, &e);
			assert_true(json_equal(same, json_object_get(m, "measurement")));
			assert_int_equal(json_integer_value(json_object_get(p16, "pcr")), 16);
			assert_true(json_equal(json_object_get(p16, "predicted"),
					       json_object_get(same, "predicted")));
			assert_null(attest_measurement_for_manifest(m, 24, &e));
			assert_non_null(strstr(e.msg, "expected 0-23, got 24"));
		}
	}
	/* ... and refuses it once the content changes. */
	json_object_set_new(m, "serial", json_integer(4));
	assert_int_equal(attest_check_measurement(m, NULL, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "measurement"));
}

static void test_event_data_errors(void **state)
{
	_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;
	_cleanup_json_ json_t *m = manifest();
	ingot_error e = { 0 };
	(void)state;

	strbuf_init(&ev, 0);
	json_object_set_new(json_object_get(m, "verity"), "root_hash", json_string("ABC"));
	assert_int_equal(attest_event_data_from_manifest(m, &ev, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "verity.root_hash: expected 64 lower-case hex digits, got 'ABC'"));
	json_object_del(m, "verity");
	assert_int_equal(attest_event_data_from_manifest(m, &ev, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "verity"));
	json_object_set_new(json_object_get(m, "recipe"), "name", json_string("a b"));
	assert_int_equal(attest_event_data_from_manifest(m, &ev, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "recipe.name"));
	assert_int_equal(ev.len, 0);
}

static void test_pcr_selection(void **state)
{
	_cleanup_strbuf_ struct strbuf s = STRBUF_INIT;
	struct pcr_selection sel;
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(pcr_selection_parse("sha256:0-3,7,15+sha1:15", &sel, &e), 0);
	assert_int_equal(sel.nbanks, 2);
	assert_int_equal(sel.banks[0].alg, bank_by_name("sha256")->alg);
	assert_int_equal(sel.banks[0].mask, 0x808f);
	assert_int_equal(sel.banks[1].mask, 0x8000);
	strbuf_init(&s, 0);
	pcr_selection_format(&sel, &s);
	assert_string_equal(s.buf, "sha256:0,1,2,3,7,15+sha1:15");
	assert_int_equal(pcr_selection_parse("sha384:all", &sel, &e), 0);
	assert_int_equal(sel.banks[0].mask, 0xffffff);

	static const char *const bad[] = { "", "sha256", "sha256:", "sha256:24", "md5:1", "sha256:3-1",
					   "sha256:1,,2", "sha256:1+sha256:2", "sha256:x", "sha256:-1" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(pcr_selection_parse(bad[i], &sel, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "sha256:-1"));
}

static void test_pcr_values_json(void **state)
{
	struct pcr_values v = { 0 }, back;
	_cleanup_json_ json_t *j = NULL, *bad = NULL;
	_cleanup_strbuf_ struct strbuf y = STRBUF_INIT;
	struct pcr_bank *pb;
	ingot_error e = { 0 };
	(void)state;

	pb = pcr_values_bank(&v, bank_by_name("sha1")->alg, 1);
	memset(pb->value[10], 0xab, 20);
	pb->mask = 1u << 10;
	assert_null(pcr_values_bank(&v, 0x0012, 1));  /* SM3: unknown */
	j = pcr_values_to_json(&v);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "sha1"), "10")),
			    "abababababababababababababababababababab");
	assert_int_equal(pcr_values_from_json(j, "t", &back, &e), 0);
	assert_int_equal(back.nbanks, 1);
	assert_int_equal(back.banks[0].mask, 1u << 10);
	assert_memory_equal(back.banks[0].value[10], pb->value[10], 20);

	strbuf_init(&y, 0);
	pcr_values_format_yaml(&v, &y);
	assert_string_equal(y.buf, "  sha1:\n    10 : 0xabababababababababababababababababababab\n");

	bad = json_pack("{s:{s:s}}", "sha1", "24", "00");
	assert_int_equal(pcr_values_from_json(bad, "t", &back, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "'24'"));
	json_decref(bad);
	bad = json_pack("{s:{s:s}}", "sha256", "1", "00");
	assert_int_equal(pcr_values_from_json(bad, "t", &back, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "expected 64 hex digits"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_predict_vectors),
		cmocka_unit_test(test_content_digest_and_event),
		cmocka_unit_test(test_event_data_errors),
		cmocka_unit_test(test_pcr_selection),
		cmocka_unit_test(test_pcr_values_json),
	};
	return cmocka_run_group_tests_name("attest_predict", tests, NULL, NULL);
}
