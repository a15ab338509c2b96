/* Units for lib/base64.c, keys/key.c, keys/keyring.c and parse_time:
 * known-answer tests (RFC 4648, RFC 8032), key files and permissions,
 * passphrases, keyring validation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keys/envelope.h"
#include "lib/time.h"
#include "keys/key.h"
#include "keys/keyring.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "helpers.h"

#include <openssl/core_names.h>

static void pkey_freep(EVP_PKEY **k) { EVP_PKEY_free(*k); }

/* RFC 8032 section 7.1, TEST 1. */
static const char rfc8032_priv_pem[] =
	"-----BEGIN PRIVATE KEY-----\n"
	"MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n"
	"-----END PRIVATE KEY-----\n";
static const char rfc8032_pub_pem[] =
	"-----BEGIN PUBLIC KEY-----\n"
	"MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n"
	"-----END PUBLIC KEY-----\n";
/* sha256 of the DER SubjectPublicKeyInfo 302a300506032b6570032100 || pk */
static const char rfc8032_keyid[] = "06e3fd8fda29bb60ab59557de61edb0aecdb231134be30e75b455f8e1b792fa9";
static const char rfc8032_sig_empty[] =
	"e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";

static char tmpdir[64];

static int group_setup(void **state)
{
	(void)state;
	unsetenv(KEY_PASSPHRASE_ENV);
	return th_mkdtemp(tmpdir, sizeof(tmpdir), "keys");
}

static int group_teardown(void **state)
{
	(void)state;
	return th_rmtree(tmpdir);
}

static void put(const char *name, const char *text, mode_t mode)
{
	_cleanup_free_ char *p = th_path(tmpdir, name);
	ingot_error e = { 0 };
	if (write_file_atomic(p, text, strlen(text), mode, &e) < 0)
		fail_msg("%s", e.msg);
}

static void test_base64_vectors(void **state)
{
	static const char *const plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *const enc[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=",
					   "Zm9vYmFy" };
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(plain); i++) {
		_cleanup_free_ char *s = NULL;
		_cleanup_free_ uint8_t *d = NULL;
		size_t n;
		s = base64_encode(plain[i], strlen(plain[i]), &n);
		assert_string_equal(s, enc[i]);
		assert_int_equal(n, strlen(enc[i]));
		assert_int_equal(base64_decode(enc[i], strlen(enc[i]), &d, &n), 0);
		assert_int_equal(n, strlen(plain[i]));
		assert_memory_equal(d, plain[i], n);
	}
}

static void test_base64_strict(void **state)
{
	static const char *const bad[] = {
		"Zg=", "Zg", "Z===", "Zm9v\n", " Zm9v", "Zm9v ", "Zm=v", "Zh==", "Zm9=",
		"Zm-v", "Zm_v", "=Zm9", "Zm9vYg=A", "Zg==Zg==",
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		uint8_t *d = NULL;
		size_t n;
		if (base64_decode(bad[i], strlen(bad[i]), &d, &n) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
	}
}

/* DSSE's base64: standard or URL-safe, one alphabet, padded. */
static void test_dsse_base64(void **state)
{
	static const char *const bad[] = { "+_8=", "-/8=", "-_8", "-_8==", "-_ 8=" };
	_cleanup_free_ uint8_t *a = NULL, *b = NULL;
	size_t na, nb;
	(void)state;
	assert_int_equal(dsse_base64_decode("+/8=", 4, &a, &na), 0);
	assert_int_equal(dsse_base64_decode("-_8=", 4, &b, &nb), 0);
	assert_int_equal(na, 2);
	assert_int_equal(nb, 2);
	assert_memory_equal(a, b, 2);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		uint8_t *d = NULL;
		size_t n;
		if (dsse_base64_decode(bad[i], strlen(bad[i]), &d, &n) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
	}
}

static void test_parse_time(void **state)
{
	time_t t;
	(void)state;
	assert_int_equal(time_parse("1970-01-01T00:00:00Z", &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(time_parse("2027-01-31T12:34:56Z", &t), 0);
	assert_int_equal(t, 1801398896);
	assert_int_equal(time_parse("2027-01-31T14:34:56.123+02:00", &t), 0);
	assert_int_equal(t, 1801398896);
	assert_int_equal(time_parse("2027-01-31t07:04:56-05:30", &t), 0);
	assert_int_equal(t, 1801398896);
	assert_int_equal(time_parse("2024-02-29T00:00:00Z", &t), 0);
	assert_int_equal(time_parse("1801398896", &t), 0);
	assert_int_equal(t, 1801398896);
	static const char *const bad[] = {
		"", "2027-01-31", "2027-01-31T12:34:56", "2027-13-01T00:00:00Z",
		"2023-02-29T00:00:00Z", "2027-01-31T24:00:00Z", "2027-01-31T12:34:56+2:00",
		"2027-01-31T12:34:56.Z", "2027-01-31 12:34:56Z", "-5", "12abc", "2027-01-31T12:34:56ZZ",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (time_parse(bad[i], &t) == 0)
			fail_msg("accepted '%s'", bad[i]);
}

/* Known answer: our key id and signature match RFC 8032 for its key. */
static void test_rfc8032(void **state)
{
	_cleanup_signing_key_ struct signing_key *k = NULL;
	_cleanup_public_key_ struct public_key *pub = NULL;
	_cleanup_free_ char *kp = th_path(tmpdir, "rfc.key");
	_cleanup_free_ uint8_t *sig = NULL;
	char hex[129];
	size_t n;
	ingot_error e = { 0 };
	(void)state;

	put("rfc.key", rfc8032_priv_pem, 0600);
	if (signing_key_load(kp, &k, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(k->type, KEY_ED25519);
	assert_string_equal(k->keyid, rfc8032_keyid);
	assert_int_equal(signing_key_sign(k, "", 0, &sig, &n, &e), 0);
	assert_int_equal(n, 64);
	hex_encode(sig, n, hex);
	assert_string_equal(hex, rfc8032_sig_empty);

	assert_int_equal(public_key_from_pem("rfc.pub", rfc8032_pub_pem, strlen(rfc8032_pub_pem),
					     &pub, &e), 0);
	assert_string_equal(pub->keyid, rfc8032_keyid);
	assert_true(key_verify(pub->pkey, "", 0, sig, n));
	sig[0] ^= 1;
	assert_false(key_verify(pub->pkey, "", 0, sig, n));
	assert_false(key_verify(pub->pkey, "", 0, sig, 3));
}

static void roundtrip(enum key_type type, const char *prefix, const char *pass)
{
	_cleanup_free_ char *kp = NULL, *pp = NULL;
	_cleanup_signing_key_ struct signing_key *k = NULL;
	_cleanup_public_key_ struct public_key *pub = NULL;
	_cleanup_free_ uint8_t *sig = NULL;
	_cleanup_free_ char *base = th_path(tmpdir, prefix);
	char id[KEYID_HEX_LEN + 1];
	struct stat st;
	ingot_error e = { 0 };
	size_t n;

	if (key_generate(type, base, pass, id, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(asprintf(&kp, "%s.key", base) > 0 && asprintf(&pp, "%s.pub", base) > 0, 1);
	assert_int_equal(stat(kp, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(pp, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* never overwrites */
	assert_int_equal(key_generate(type, base, pass, NULL, &e), -EEXIST);

	if (signing_key_load_pass(kp, pass, &k, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(k->type, type);
	assert_string_equal(k->keyid, id);
	assert_int_equal(public_key_load(pp, &pub, &e), 0);
	assert_string_equal(pub->keyid, id);
	assert_int_equal(signing_key_sign(k, "msg", 3, &sig, &n, &e), 0);
	assert_true(key_verify(pub->pkey, "msg", 3, sig, n));
	assert_false(key_verify(pub->pkey, "msh", 3, sig, n));
}

static void test_generate_ed25519(void **state) { (void)state; roundtrip(KEY_ED25519, "ed", NULL); }
static void test_generate_p256(void **state) { (void)state; roundtrip(KEY_P256, "p256", NULL); }

static void test_passphrase(void **state)
{
	_cleanup_free_ char *kp = th_path(tmpdir, "enc.key");
	struct signing_key *k = NULL;
	ingot_error e = { 0 };
	(void)state;

	roundtrip(KEY_P256, "enc", "correct horse");
	assert_int_equal(signing_key_load_pass(kp, NULL, &k, &e), -EACCES);
	assert_non_null(strstr(e.msg, "no passphrase given"));
	assert_int_equal(signing_key_load_pass(kp, "wrong", &k, &e), -EACCES);
	assert_non_null(strstr(e.msg, "wrong passphrase"));
	setenv(KEY_PASSPHRASE_ENV, "correct horse", 1);
	assert_int_equal(signing_key_load(kp, &k, &e), 0);
	unsetenv(KEY_PASSPHRASE_ENV);
	signing_key_free(k);

	/* from a file descriptor, trailing newline dropped */
	int p[2];
	char *pass = NULL;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "correct horse\n", 14), 14);
	close(p[1]);
	assert_int_equal(key_read_passphrase_fd(p[0], &pass, &e), 0);
	close(p[0]);
	assert_string_equal(pass, "correct horse");
	key_passphrase_free(pass);
}

static void test_permissions(void **state)
{
	_cleanup_free_ char *kp = th_path(tmpdir, "loose.key"), *pp = th_path(tmpdir, "rfc.pub");
	struct signing_key *k = NULL;
	ingot_error e = { 0 };
	(void)state;

	static const mode_t bad[] = { 0640, 0604, 0644, 0660, 0602, 0610 };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		unlink(kp);
		put("loose.key", rfc8032_priv_pem, bad[i]);
		assert_int_equal(signing_key_load(kp, &k, &e), -EPERM);
		assert_non_null(strstr(e.msg, "group/other"));
	}
	unlink(kp);
	put("loose.key", rfc8032_priv_pem, 0400);
	assert_int_equal(signing_key_load(kp, &k, &e), 0);
	signing_key_free(k);

	/* a public key is not a private key */
	put("rfc.pub", rfc8032_pub_pem, 0600);
	assert_int_equal(signing_key_load(pp, &k, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "expected a PEM private key"));
	assert_int_equal(signing_key_load(tmpdir, &k, &e), -EINVAL);
}

static void refused(EVP_PKEY *pk, const char *needle)
{
	_cleanup_free_ char *pem = public_key_pem(pk);
	struct public_key *k = NULL;
	ingot_error e = { 0 };
	assert_non_null(pem);
	assert_int_equal(public_key_from_pem("x.pub", pem, strlen(pem), &k, &e), -EINVAL);
	if (!strstr(e.msg, needle))
		fail_msg("expected '%s' in '%s'", needle, e.msg);
	EVP_PKEY_free(pk);
}

/* RSA and other curves are refused by name. */
static void test_wrong_key_types(void **state)
{
	struct public_key *k = NULL;
	ingot_error e = { 0 };
	(void)state;
	refused(EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)1024), "expected an Ed25519 or ECDSA P-256 key, got RSA");
	refused(EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-384"), "got EC curve secp384r1");
	refused(EVP_PKEY_Q_keygen(NULL, NULL, "ED448"), "got ED448");
	assert_int_equal(public_key_from_pem("junk.pub", "hello", 5, &k, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "junk.pub: expected a PEM public key"));
}

/* PEM of pk with one encoding parameter set (point format or curve
 * parameters), as `openssl ec -conv_form compressed` / `-param_enc
 * explicit` write it. */
static char *pem_with(EVP_PKEY *pk, const char *param, const char *value)
{
	_cleanup_(pkey_freep) EVP_PKEY *dup = EVP_PKEY_dup(pk);
	assert_non_null(dup);
	if (param)
		assert_int_equal(EVP_PKEY_set_utf8_string_param(dup, param, value), 1);
	return public_key_pem(dup);
}

/* Key identity is the key, not its encoding: the same P-256 key given
 * uncompressed, compressed and with explicit curve parameters has one id,
 * and a keyring cannot list it twice. */
static void test_key_encodings(void **state)
{
	_cleanup_(pkey_freep) EVP_PKEY *pk = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	_cleanup_free_ char *plain = pem_with(pk, NULL, NULL);
	_cleanup_free_ char *comp = pem_with(pk, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, "compressed");
	_cleanup_free_ char *expl = pem_with(pk, OSSL_PKEY_PARAM_EC_ENCODING, "explicit");
	const char *pems[] = { plain, comp, expl };
	char id[KEYID_HEX_LEN + 1];
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(key_id(pk, id, &e), 0);
	assert_string_not_equal(plain, comp);
	assert_string_not_equal(plain, expl);
	for (size_t i = 0; i < ARRAY_SIZE(pems); i++) {
		_cleanup_public_key_ struct public_key *k = NULL;
		_cleanup_free_ char *back = NULL;
		if (public_key_from_pem("k.pub", pems[i], strlen(pems[i]), &k, &e) < 0)
			fail_msg("encoding %zu: %s", i, e.msg);
		assert_string_equal(k->keyid, id);
		back = public_key_pem(k->pkey);   /* what a keyring stores */
		assert_string_equal(back, plain);
	}

	/* A keyring listing the key twice (each entry self-consistent) is refused. */
	_cleanup_json_ json_t *doc = json_pack("{s:[{s:s,s:s,s:s},{s:s,s:s,s:s}],s:i}", "keys",
		"name", "a", "keyid", id, "public_key", plain,
		"name", "b", "keyid", id, "public_key", comp, "threshold", 2);
	_cleanup_free_ char *ring = th_path(tmpdir, "twice.json");
	_cleanup_keyring_ struct keyring *kr = NULL;
	assert_int_equal(json_write_file(ring, doc, 0644, &e), 0);
	assert_int_equal(keyring_load(ring, &kr, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "keys[1]: duplicate of keys[0] (same key)"));
}

static void test_keyring(void **state)
{
	_cleanup_free_ char *ring = th_path(tmpdir, "ring.json"), *ed = th_path(tmpdir, "ed.pub"), *p256 = th_path(tmpdir, "p256.pub");
	_cleanup_free_ char *rfc = th_path(tmpdir, "rfc.pub");
	_cleanup_keyring_ struct keyring *kr = NULL;
	ingot_error e = { 0 };
	(void)state;

	put("rfc.pub", rfc8032_pub_pem, 0644);
	unlink(ring);
	assert_int_equal(keyring_add(ring, rfc, "rfc", 0, 0, &e), 0);
	assert_int_equal(keyring_add(ring, rfc, "again", 0, 0, &e), -EEXIST);
	assert_non_null(strstr(e.msg, "already in the keyring"));
	assert_int_equal(keyring_add(ring, ed, "rfc", 0, 0, &e), -EEXIST);
	assert_int_equal(keyring_add(ring, ed, "ed", 3, 0, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--threshold: expected 1..2"));
	assert_int_equal(keyring_add(ring, ed, "ed", 2, 0, &e), 0);
	assert_int_equal(keyring_add(ring, p256, "bad name", 0, 0, &e), -EINVAL);

	if (keyring_load(ring, &kr, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(kr->n, 2);
	assert_int_equal(kr->threshold, 2);
	assert_non_null(keyring_find(kr, rfc8032_keyid));
	assert_string_equal(keyring_find(kr, rfc8032_keyid)->name, "rfc");
	assert_null(keyring_find(kr, "00"));
}

/* A keyring with roles gives each role its own keys and threshold, and
 * none to a role it does not name; an untyped one serves only the role
 * it was named for; read whole, one with roles verifies nothing. */
static void test_keyring_roles(void **state)
{
	_cleanup_free_ char *ring = th_path(tmpdir, "roles.json"), *ed = th_path(tmpdir, "ed.pub");
	_cleanup_free_ char *rfc = th_path(tmpdir, "rfc.pub"), *plain = th_path(tmpdir, "plain.json");
	_cleanup_free_ char *p256 = th_path(tmpdir, "p256.pub");
	ingot_error e = { 0 };
	(void)state;

	put("rfc.pub", rfc8032_pub_pem, 0644);
	unlink(ring);
	unlink(plain);
	assert_int_equal(keyring_add(ring, rfc, "pipeline", 0, 1u << KEY_ROLE_MANIFEST, &e), 0);
	assert_int_equal(keyring_add(ring, ed, "verifier", 0,
				     1u << KEY_ROLE_ENROLMENT | 1u << KEY_ROLE_FIRMWARE_REF, &e), 0);
	assert_int_equal(keyring_add(ring, p256, "x", 0, 0, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "name the roles the key is trusted for"));
	{
		_cleanup_keyring_ struct keyring *m = NULL, *en = NULL, *whole = NULL;
		if (keyring_load_role(ring, KEY_ROLE_MANIFEST, false, &m, &e) < 0 ||
		    keyring_load_role(ring, KEY_ROLE_ENROLMENT, true, &en, &e) < 0 || keyring_load(ring, &whole, &e) < 0)
			fail_msg("%s", e.msg);
		assert_int_equal(m->n, 1);
		assert_int_equal(m->threshold, 1);
		assert_string_equal(m->role, "manifest");
		assert_non_null(keyring_find(m, rfc8032_keyid));
		assert_int_equal(en->n, 1);
		assert_null(keyring_find(en, rfc8032_keyid));   /* the manifest key is not an enrolment key */
		assert_string_equal(en->keys[0].name, "verifier");
		assert_int_equal(whole->n, 2);
		assert_int_equal(whole->threshold, 0);           /* read whole: verifies nothing */
		assert_true(whole->has_roles);
	}
	{
		_cleanup_keyring_ struct keyring *kr = NULL;
		assert_int_equal(keyring_load_role(ring, KEY_ROLE_PROMOTION, true, &kr, &e), -ENOKEY);
		assert_non_null(strstr(e.msg, "roles: no \"promotion\" role: no key is trusted for promotion statements"));
		assert_null(kr);
	}
	assert_int_equal(keyring_add(plain, rfc, "pipeline", 0, 0, &e), 0);
	assert_int_equal(keyring_add(plain, ed, "verifier", 0, 1u << KEY_ROLE_ENROLMENT, &e), -EINVAL);
	{
		_cleanup_keyring_ struct keyring *named = NULL, *other = NULL;
		if (keyring_load_role(plain, KEY_ROLE_ENROLMENT, true, &named, &e) < 0)
			fail_msg("%s", e.msg);
		assert_string_equal(named->role, "enrolment");
		assert_int_equal(keyring_load_role(plain, KEY_ROLE_ENROLMENT, false, &other, &e), -ENOKEY);
		assert_non_null(strstr(e.msg, "not named for the enrolment role"));
	}
}

static void test_keyring_errors(void **state)
{
	_cleanup_free_ char *ring = th_path(tmpdir, "bad-ring.json");
	_cleanup_free_ char *pem = NULL;
	(void)state;
	/* JSON-escape the PEM's newlines */
	json_t *s = json_string(rfc8032_pub_pem);
	pem = json_dumps(s, JSON_ENCODE_ANY);
	json_decref(s);
	static const struct { const char *fmt, *needle; } cases[] = {
		{ "{\"keys\":[{\"name\":\"a\",\"keyid\":\"%s\",\"public_key\":%s}],\"threshold\":1}", NULL },
		{ "{\"keys\":[{\"name\":\"a\",\"keyid\":\"%.63s0\",\"public_key\":%s}],\"threshold\":1}",
		  "keys[0]: keyid: the public key's id is 06e3" },
		{ "{\"keys\":[{\"name\":\"a\",\"keyid\":\"%s\",\"public_key\":%s}],\"threshold\":2}",
		  "threshold: expected 1..1" },
		{ "{\"keys\":[{\"name\":\"a\",\"keyid\":\"%s\",\"public_key\":%s}],\"threshold\":0}",
		  "threshold: expected 1..1" },
		{ "{\"keys\":[{\"name\":\"a\",\"keyid\":\"%s\",\"public_key\":%s},"
		  "{\"name\":\"b\",\"keyid\":\"%s\",\"public_key\":%s}],\"threshold\":1}",
		  "keys[1]: duplicate of keys[0] (same key)" },
		{ "{\"keys\":[{\"name\":\"a\",\"keyid\":\"%s\",\"public_key\":%s}],\"threshold\":1,\"x\":1}",
		  "unknown field 'x'" },
		{ "{\"keys\":[{\"name\":\"a\",\"keyid\":\"%s\",\"public_keys\":%s}],\"threshold\":1}",
		  "keys[0]: field 'public_key': missing" },
		{ "[\"%s\",%s]", "expected a JSON object" },
		{ "{\"keys\":[{\"name\":\"a\",\"keyid\":\"%s\",\"public_key\":%s}],\"threshold\":1", "invalid JSON" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char buf[2048];
		struct keyring *kr = NULL;
		ingot_error e = { 0 };
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-extra-args"
		snprintf(buf, sizeof(buf), cases[i].fmt, rfc8032_keyid, pem, rfc8032_keyid, pem);
#pragma GCC diagnostic pop
		unlink(ring);
		put("bad-ring.json", buf, 0644);
		int r = keyring_load(ring, &kr, &e);
		if (!cases[i].needle) {
			if (r < 0)
				fail_msg("case %zu: %s", i, e.msg);
			keyring_free(kr);
			continue;
		}
		assert_true(r < 0);
		if (!strstr(e.msg, cases[i].needle))
			fail_msg("case %zu: expected '%s' in '%s'", i, cases[i].needle, e.msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base64_vectors),
		cmocka_unit_test(test_base64_strict),
		cmocka_unit_test(test_dsse_base64),
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_rfc8032),
		cmocka_unit_test(test_generate_ed25519),
		cmocka_unit_test(test_generate_p256),
		cmocka_unit_test(test_passphrase),
		cmocka_unit_test(test_permissions),
		cmocka_unit_test(test_wrong_key_types),
		cmocka_unit_test(test_key_encodings),
		cmocka_unit_test(test_keyring),
		cmocka_unit_test(test_keyring_roles),
		cmocka_unit_test(test_keyring_errors),
	};
	return cmocka_run_group_tests_name("keys", tests, group_setup, group_teardown);
}
