/* Units for keys/statement.c, the one opener of ingot's signed in-toto
 * statements: every reader (enrolment records, firmware references,
 * evidence, promotions) accepts what the manifest reader does (Statement
 * v0.1) and refuses a bad shape the same way, with the same kind. */
#include "tests/unit/helpers.h"

#include "attest/quote.h"
#include "keys/enrolment.h"
#include "keys/firmware-ref-envelope.h"
#include "keys/statement.h"
#include "lib/base64.h"
#include "lib/json.h"
#include "verify/promotion.h"

static char dir[64];
static struct signing_key *ka, *kb;
static struct keyring *ring_a;

static int setup(void **state)
{
	_cleanup_free_ char *ring = NULL, *pub = NULL;
	ingot_error e = { 0 };
	(void)state;

	if (th_mkdtemp(dir, sizeof(dir), "stmt") < 0)
		return -1;
	ka = th_signing_key(dir, "a");
	kb = th_signing_key(dir, "b");
	ring = th_path(dir, "ring.json");
	pub = th_path(dir, "a.pub");
	if (keyring_add(ring, pub, "a", 0, 0, &e) < 0 || keyring_load(ring, &ring_a, &e) < 0)
		fail_msg("%s", e.msg);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	signing_key_free(ka);
	signing_key_free(kb);
	keyring_free(ring_a);
	return th_rmtree(dir);
}

/* st signed by ka into DIR/name; the path (caller frees). */
static char *signed_file(const char *name, const json_t *st)
{
	_cleanup_json_ json_t *env = NULL;
	char *path = th_path(dir, name);
	ingot_error e = { 0 };

	if (envelope_sign_statement(st, ka, &env, &e) < 0 || json_write_file(path, env, 0644, &e) < 0)
		fail_msg("%s", e.msg);
	return path;
}

/* The statement inside a signed envelope (new reference). */
static json_t *payload_of(const json_t *env)
{
	const json_t *pl = json_object_get(env, "payload");
	_cleanup_free_ uint8_t *raw = NULL;
	size_t len;

	assert_int_equal(base64_decode(json_string_value(pl), json_string_length(pl), &raw, &len), 0);
	return json_loadb((const char *)raw, len, 0, NULL);
}

/* An enrolment record in Statement v0.1 (as `cosign attest` writes
 * them) loads like a v1 one: the reader is the manifest's. */
static void test_enrolment_v01(void **state)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	_cleanup_free_ char *pem = NULL, *path = NULL;
	_cleanup_json_ json_t *env = NULL, *st = NULL;
	struct enroll_subject s = { 0 };
	struct enrolment en;
	ingot_error e = { 0 };
	(void)state;

	assert_non_null(k);
	pem = pem_of(k);
	EVP_PKEY_free(k);
	snprintf(s.node, sizeof(s.node), "gpu-node-01");
	memset(s.ek_cert_sha256, 'e', 64);
	memset(s.ca_bundle_sha256, 'c', 64);
	snprintf(s.ak_name, sizeof(s.ak_name), "000b%064d", 0);
	s.ak_pem = pem;
	if (attest_ak_id_pem(pem, s.ak_id, &e) < 0 || enrolment_sign(&s, 1767225600, ka, &env, &e) < 0)
		fail_msg("%s", e.msg);
	st = payload_of(env);
	json_object_set_new(st, "_type", json_string(STATEMENT_TYPE_V01));
	path = signed_file("v01.dsse.json", st);
	if (enrolment_load(path, ring_a, &en, &e) < 0)
		fail_msg("%s", e.msg);
	assert_string_equal(en.node, "gpu-node-01");
	enrolment_release(&en);

	/* Statement v0.2 is no statement ingot reads. */
	json_object_set_new(st, "_type", json_string("https://in-toto.io/Statement/v0.2"));
	free(path);
	path = signed_file("v02.dsse.json", st);
	assert_int_equal(enrolment_load(path, ring_a, &en, &e), -EINVAL);
	assert_int_equal(e.kind, ENVELOPE_FAIL_MALFORMED);
	assert_non_null(strstr(e.msg, "statement._type: expected"));
}

/* A firmware reference of the wrong shape is refused as malformed, the
 * kind every other statement's refusal carries. */
static void test_firmware_ref_shape(void **state)
{
	_cleanup_json_ json_t *st = statement_new(FIRMWARE_REF_PREDICATE, "firmware-ref:x",
						  "0000000000000000000000000000000000000000000000000000000000000000",
						  json_object());
	_cleanup_free_ char *p1 = NULL, *p2 = NULL;
	struct firmware_ref fw;
	ingot_error e = { 0 };
	(void)state;

	assert_non_null(st);
	json_object_set_new(st, "extra", json_true());
	p1 = signed_file("extra.firmware-ref.dsse.json", st);
	assert_int_equal(firmware_ref_load(p1, ring_a, &fw, &e), -EINVAL);
	assert_int_equal(e.kind, ENVELOPE_FAIL_MALFORMED);
	assert_non_null(strstr(e.msg, "statement: unknown field 'extra'"));

	json_object_del(st, "extra");
	json_object_set_new(st, "predicateType", json_string(ENROLMENT_PREDICATE_TYPE));
	p2 = signed_file("type.firmware-ref.dsse.json", st);
	memset(&e, 0, sizeof(e));
	assert_int_equal(firmware_ref_load(p2, ring_a, &fw, &e), -EINVAL);
	assert_int_equal(e.kind, ENVELOPE_FAIL_MALFORMED);
	assert_non_null(strstr(e.msg, "statement.predicateType: expected \"" FIRMWARE_REF_PREDICATE
				      "\", got \"" ENROLMENT_PREDICATE_TYPE "\""));
}

/* statement_sign gathers every key's signature into one envelope, and
 * statement_open counts the trusted one; image_subject reads its image. */
static void test_sign_open(void **state)
{
	_cleanup_json_ json_t *st = statement_new(PROMOTION_PREDICATE_TYPE, "x.sqfs",
						  "1111111111111111111111111111111111111111111111111111111111111111",
						  json_pack("{s:s}", "ring", "lab"));
	_cleanup_json_ json_t *env = NULL;
	_cleanup_free_ char *path = th_path(dir, "x.promotion.dsse.json");
	_cleanup_statement_ struct statement so = { 0 };
	struct signing_key *keys[] = { ka, kb };
	struct verify_outcome out;
	ingot_error e = { 0 };
	char sha[65];
	(void)state;

	if (statement_sign(st, keys, 2, &env, &e) < 0 || json_write_file(path, env, 0644, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(json_array_size(json_object_get(env, "signatures")), 2);
	if (statement_open(path, ring_a, PROMOTION_PREDICATE_TYPE, &so, &out, &e) < 0 ||
	    image_subject(path, &so, sha, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(out.valid, 1);
	assert_string_equal(sha, "1111111111111111111111111111111111111111111111111111111111111111");
	assert_string_equal(json_string_value(json_object_get(so.predicate, "ring")), "lab");
	statement_release(&so);

	assert_int_equal(statement_open(path, ring_a, EVIDENCE_PREDICATE_TYPE, &so, NULL, &e), -EINVAL);
	assert_int_equal(e.kind, ENVELOPE_FAIL_MALFORMED);
	assert_non_null(strstr(e.msg, "statement.predicateType: expected \"" EVIDENCE_PREDICATE_TYPE "\""));
}

/* statement_peek: the predicate of an envelope whose signatures do not
 * hold (here: a key the keyring lacks) is there to describe, and one
 * that is not an object is refused. */
static void test_peek(void **state)
{
	_cleanup_json_ json_t *st = statement_new(PROMOTION_PREDICATE_TYPE, "x.sqfs",
						  "1111111111111111111111111111111111111111111111111111111111111111",
						  json_pack("{s:s}", "ring", "lab"));
	_cleanup_json_ json_t *env = NULL, *bad_env = NULL;
	_cleanup_statement_ struct statement so = { 0 };
	_cleanup_statement_ struct statement sb = { 0 };
	json_t *ring = NULL;
	ingot_error e = { 0 };
	(void)state;

	if (envelope_sign_statement(st, kb, &env, &e) < 0)
		fail_msg("%s", e.msg);
	assert_true(statement_verify("x", env, ring_a, PROMOTION_PREDICATE_TYPE, &so, NULL, &e) < 0);
	statement_release(&so);
	assert_int_equal(statement_peek("x", env, &so, &e), 0);
	assert_int_equal(json_unpack((json_t *)so.predicate, "{s:o}", "ring", &ring), 0);
	assert_string_equal(json_string_value(ring), "lab");

	json_object_set_new(st, "predicate", json_string("lab"));
	if (envelope_sign_statement(st, kb, &bad_env, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(statement_peek("y", bad_env, &sb, &e), -EBADMSG);
	assert_string_equal(e.msg, "y: expected a statement with a predicate object");
	assert_int_equal(statement_peek("z", st, &sb, NULL), -EINVAL);   /* not an envelope */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enrolment_v01),
		cmocka_unit_test(test_firmware_ref_shape),
		cmocka_unit_test(test_sign_open),
		cmocka_unit_test(test_peek),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
