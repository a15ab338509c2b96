/* Units for keys/enrolment.c (signed enrolment records: round trip,
 * tampering, an unknown signer, a record naming one key and carrying
 * another) and attest/enroll.c (KDFa against the TPM spec's shape,
 * MakeCredential undone in software with the EK's private key, the
 * challenge's single use and expiry). */
#include "tests/unit/helpers.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "attest/enroll.h"
#include "attest/quote.h"
#include "keys/enrolment.h"
#include "keys/envelope.h"
#include "lib/base64.h"
#include "lib/digest.h"
#include "lib/json.h"

static char dir[64];
static struct signing_key *ka, *kc;    /* a: trusted, c: not */
static struct keyring *ring_a;
static char *ak_pem, *ak2_pem;

static char *gen_ak_pem(void)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	char *s;

	assert_non_null(k);
	s = pem_of(k);
	EVP_PKEY_free(k);
	return s;
}

static int setup(void **state)
{
	_cleanup_free_ char *ring = NULL, *pub = NULL;
	ingot_error e = { 0 };
	(void)state;

	if (th_mkdtemp(dir, sizeof(dir), "enrol") < 0)
		return -1;
	ka = th_signing_key(dir, "a");
	kc = th_signing_key(dir, "c");
	ring = th_path(dir, "ring.json");
	pub = th_path(dir, "a.pub");
	if (keyring_add(ring, pub, "verifier", 0, 0, &e) < 0 || keyring_load(ring, &ring_a, &e) < 0)
		fail_msg("%s", e.msg);
	ak_pem = gen_ak_pem();
	ak2_pem = gen_ak_pem();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	signing_key_free(ka);
	signing_key_free(kc);
	keyring_free(ring_a);
	free(ak_pem);
	free(ak2_pem);
	return th_rmtree(dir);
}

static void subject(struct enroll_subject *s, const char *pem)
{
	ingot_error e = { 0 };

	memset(s, 0, sizeof(*s));
	snprintf(s->node, sizeof(s->node), "gpu-node-07");
	memset(s->ek_cert_sha256, 'e', 64);
	memset(s->ca_bundle_sha256, 'c', 64);
	snprintf(s->ak_name, sizeof(s->ak_name), "000b%064d", 0);
	s->ak_pem = (char *)pem;
	if (attest_ak_id_pem(pem, s->ak_id, &e) < 0)
		fail_msg("%s", e.msg);
}

/* Sign s with k into DIR/name; the path (caller frees). */
static char *record(const char *name, const struct enroll_subject *s, const struct signing_key *k)
{
	_cleanup_json_ json_t *env = NULL;
	char *path = th_path(dir, name);
	ingot_error e = { 0 };

	if (enrolment_sign(s, 1767225600, k, &env, &e) < 0 ||
	    json_write_file_as(path, env, envelope_canonical, 0644, &e) < 0)
		fail_msg("%s", e.msg);
	return path;
}

static void test_roundtrip(void **state)
{
	struct enroll_subject s;
	struct enrolment en;
	ingot_error e = { 0 };
	char id[65];
	(void)state;

	subject(&s, ak_pem);
	_cleanup_free_ char *path = record("good.dsse.json", &s, ka);
	if (enrolment_load(path, ring_a, &en, &e) < 0)
		fail_msg("%s", e.msg);
	assert_string_equal(en.node, "gpu-node-07");
	assert_string_equal(en.ak_pem, ak_pem);
	assert_int_equal(attest_ak_id_pem(ak_pem, id, &e), 0);
	assert_string_equal(en.ak_id, id);
	assert_int_equal(strlen(en.ek_cert_sha256), 64);
	assert_int_equal(en.ek_cert_sha256[0], 'e');
	enrolment_release(&en);
	assert_null(en.ak_pem);
}

static void test_unknown_signer(void **state)
{
	struct enroll_subject s;
	struct enrolment en;
	ingot_error e = { 0 };
	(void)state;

	subject(&s, ak_pem);
	_cleanup_free_ char *path = record("other.dsse.json", &s, kc);
	assert_int_equal(enrolment_load(path, ring_a, &en, &e), -EPERM);
	assert_int_equal(e.kind, ENVELOPE_FAIL_SIGNATURE);
	assert_null(en.ak_pem);
}

static void test_tampered(void **state)
{
	struct enroll_subject s;
	struct enrolment en;
	ingot_error e = { 0 };
	_cleanup_json_ json_t *env = NULL, *st = NULL;
	_cleanup_free_ uint8_t *payload = NULL;
	_cleanup_free_ char *b64 = NULL, *compact = NULL;
	size_t len;
	(void)state;

	/* Another AK swapped into a validly signed record's payload. */
	subject(&s, ak_pem);
	_cleanup_free_ char *path = record("tamper.dsse.json", &s, ka);
	assert_int_equal(json_read_file(path, &env, &e), 0);
	json_t *pl = json_object_get(env, "payload");
	assert_int_equal(base64_decode(json_string_value(pl), json_string_length(pl), &payload, &len), 0);
	st = json_loadb((const char *)payload, len, 0, NULL);
	assert_non_null(st);
	json_object_set_new(json_object_get(st, "predicate"), "ak_public_key", json_string(ak2_pem));
	compact = json_compact(st, &len);
	b64 = base64_encode(compact, len, NULL);
	json_object_set_new(env, "payload", json_string(b64));
	assert_int_equal(json_write_file(path, env, 0644, &e), 0);
	assert_int_equal(enrolment_load(path, ring_a, &en, &e), -EPERM);
	assert_int_equal(e.kind, ENVELOPE_FAIL_SIGNATURE);
}

static void test_inconsistent(void **state)
{
	struct enroll_subject s;
	struct enrolment en;
	ingot_error e = { 0 };
	(void)state;

	/* Signed, but its ak_id is not the id of the key it carries. */
	subject(&s, ak_pem);
	s.ak_id[0] = s.ak_id[0] == '0' ? '1' : '0';
	_cleanup_free_ char *p1 = record("wrongid.dsse.json", &s, ka);
	assert_int_equal(enrolment_load(p1, ring_a, &en, &e), -EINVAL);
	assert_int_equal(e.kind, ENVELOPE_FAIL_MALFORMED);
	assert_non_null(strstr(e.msg, "predicate.ak_id: expected"));

	/* A node name that is not one. */
	subject(&s, ak_pem);
	snprintf(s.node, sizeof(s.node), "../etc");
	_cleanup_free_ char *p2 = record("badnode.dsse.json", &s, ka);
	assert_int_equal(enrolment_load(p2, ring_a, &en, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "predicate.node"));
}

/* ---- attest/enroll.c ----------------------------------------------------- */

/* KDFa must take the label with its NUL and the bit count at the end:
 * recomputed here from the definition with one HMAC call. */
static void test_kdfa(void **state)
{
	uint8_t key[32], u[34], out[40], want[64], msg[4 + 8 + 34 + 4];
	unsigned mdlen;
	(void)state;

	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof(u); i++)
		u[i] = (uint8_t)(0xa0 + i);
	assert_int_equal(enroll_kdfa_sha256(key, sizeof(key), "STORAGE", u, sizeof(u), NULL, 0, 320,
					    out), 0);
	for (uint8_t c = 1; c <= 2; c++) {
		size_t n = 0;
		msg[n++] = 0; msg[n++] = 0; msg[n++] = 0; msg[n++] = c;
		memcpy(msg + n, "STORAGE", 8);   /* with its NUL */
		n += 8;
		memcpy(msg + n, u, sizeof(u));
		n += sizeof(u);
		msg[n++] = 0; msg[n++] = 0; msg[n++] = 0x01; msg[n++] = 0x40;   /* 320 */
		assert_non_null(HMAC(EVP_sha256(), key, sizeof(key), msg, n, want + 32 * (c - 1), &mdlen));
	}
	assert_memory_equal(out, want, sizeof(out));
}

/* TPM2_ActivateCredential in software, from its definition (Part 1
 * section 24), with the EK's private key: what a TPM would recover. */
static int soft_activate(EVP_PKEY *ek, const uint8_t *name, size_t name_len, const uint8_t *blob,
			 size_t blob_len, const uint8_t *secret, size_t secret_len, uint8_t *cred,
			 size_t *cred_len)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(ek, NULL);
	unsigned char *label = OPENSSL_malloc(9);
	uint8_t seed[256], sym[16], hkey[32], mac[32], iv[16] = { 0 }, plain[80];
	size_t seed_len = sizeof(seed), enc_len;
	unsigned mlen;
	int n = 0, n2 = 0;
	EVP_CIPHER_CTX *cc;

	memcpy(label, "IDENTITY", 9);
	if (EVP_PKEY_decrypt_init(c) <= 0 || EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_oaep_md(c, EVP_sha256()) <= 0 ||
	    EVP_PKEY_CTX_set0_rsa_oaep_label(c, label, 9) <= 0 ||
	    (size_t)((secret[0] << 8) | secret[1]) != secret_len - 2 ||
	    EVP_PKEY_decrypt(c, seed, &seed_len, secret + 2, secret_len - 2) <= 0) {
		EVP_PKEY_CTX_free(c);
		return -1;
	}
	EVP_PKEY_CTX_free(c);
	if ((size_t)((blob[0] << 8) | blob[1]) != blob_len - 2 || blob[2] != 0 || blob[3] != 32)
		return -1;
	enc_len = blob_len - 4 - 32;
	assert_int_equal(enroll_kdfa_sha256(seed, seed_len, "INTEGRITY", NULL, 0, NULL, 0, 256, hkey), 0);
	assert_int_equal(enroll_kdfa_sha256(seed, seed_len, "STORAGE", name, name_len, NULL, 0, 128, sym), 0);
	uint8_t hm[128];
	memcpy(hm, blob + 36, enc_len);
	memcpy(hm + enc_len, name, name_len);
	HMAC(EVP_sha256(), hkey, 32, hm, enc_len + name_len, mac, &mlen);
	if (memcmp(mac, blob + 4, 32))
		return -2;   /* integrity: wrong name or key */
	cc = EVP_CIPHER_CTX_new();
	assert_int_equal(EVP_DecryptInit_ex(cc, EVP_aes_128_cfb128(), NULL, sym, iv), 1);
	assert_int_equal(EVP_DecryptUpdate(cc, plain, &n, blob + 36, (int)enc_len), 1);
	assert_int_equal(EVP_DecryptFinal_ex(cc, plain + n, &n2), 1);
	EVP_CIPHER_CTX_free(cc);
	*cred_len = (size_t)((plain[0] << 8) | plain[1]);
	memcpy(cred, plain + 2, *cred_len);
	return 0;
}

static void test_make_credential(void **state)
{
	EVP_PKEY *ek = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	EVP_PKEY *ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	uint8_t name[34] = { 0x00, 0x0b }, cred[32], got[64];
	_cleanup_free_ uint8_t *blob = NULL, *secret = NULL;
	size_t blob_len, secret_len, got_len;
	ingot_error e = { 0 };
	(void)state;

	for (size_t i = 0; i < sizeof(cred); i++)
		cred[i] = (uint8_t)(3 * i + 1);
	for (size_t i = 2; i < sizeof(name); i++)
		name[i] = (uint8_t)i;
	assert_int_equal(enroll_make_credential(ek, name, sizeof(name), cred, sizeof(cred), &blob,
						&blob_len, &secret, &secret_len, &e), 0);
	assert_int_equal(soft_activate(ek, name, sizeof(name), blob, blob_len, secret, secret_len,
				       got, &got_len), 0);
	assert_int_equal(got_len, sizeof(cred));
	assert_memory_equal(got, cred, sizeof(cred));
	/* Bound to the name: another AK's name fails the integrity check. */
	name[5] ^= 1;
	assert_int_equal(soft_activate(ek, name, sizeof(name), blob, blob_len, secret, secret_len,
				       got, &got_len), -2);
	/* A credential the TPM would refuse (over the EK nameAlg's size). */
	uint8_t big[33] = { 0 }, *b1 = NULL, *s1 = NULL;
	assert_int_equal(enroll_make_credential(ek, name, sizeof(name), big, sizeof(big), &b1,
						&blob_len, &s1, &secret_len, &e), -EINVAL);
	assert_null(b1);
	/* An ECC EK is refused with one line, not mishandled. */
	uint8_t *b2 = NULL, *s2 = NULL;
	assert_int_equal(enroll_make_credential(ec, name, sizeof(name), cred, sizeof(cred), &b2,
						&blob_len, &s2, &secret_len, &e), -ENOTSUP);
	assert_non_null(strstr(e.msg, "expected an RSA EK"));
	EVP_PKEY_free(ek);
	EVP_PKEY_free(ec);
}

/* tpm2_makecredential --tcti none (tpm2-tools' software MakeCredential)
 * must produce what the same software activation undoes: the two
 * implementations agree on KDFa, OAEP label and layout. */
static void test_makecredential_interop(void **state)
{
	EVP_PKEY *ek = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	_cleanup_free_ char *ekp = th_path(dir, "ek.pem"), *np = th_path(dir, "name.bin"),
			    *sp = th_path(dir, "secret.bin"), *op = th_path(dir, "cred.out"),
			    *cmd = NULL, *pem = NULL, *out = NULL;
	uint8_t name[34] = { 0x00, 0x0b }, cred[32], got[64];
	size_t len, got_len;
	ingot_error e = { 0 };
	(void)state;

	if (system("command -v tpm2_makecredential >/dev/null 2>&1") != 0)
		skip();
	for (size_t i = 0; i < sizeof(cred); i++)
		cred[i] = (uint8_t)(7 * i + 5);
	for (size_t i = 2; i < sizeof(name); i++)
		name[i] = (uint8_t)(0x40 + i);
	pem = pem_of(ek);
	assert_int_equal(write_file_atomic(ekp, pem, strlen(pem), 0644, &e), 0);
	assert_int_equal(write_file_atomic(np, name, sizeof(name), 0644, &e), 0);
	assert_int_equal(write_file_atomic(sp, cred, sizeof(cred), 0644, &e), 0);
	assert_true(asprintf(&cmd, "tpm2_makecredential --tcti none -G rsa -u %s -s %s -n $(xxd -p -c 256 %s) -o %s 2>/dev/null",
			     ekp, sp, np, op) > 0);
	if (system(cmd) != 0)
		skip();
	assert_int_equal(read_file(op, 4096, &out, &len, &e), 0);
	/* Header: magic BADCC0DE, version 1; then TPM2B_ID_OBJECT, TPM2B_ENCRYPTED_SECRET. */
	assert_true(len > 8 + 2);
	assert_memory_equal(out, "\xba\xdc\xc0\xde\x00\x00\x00\x01", 8);
	const uint8_t *p = (const uint8_t *)out + 8;
	size_t bl = 2 + (size_t)((p[0] << 8) | p[1]);
	assert_true(8 + bl + 2 <= len);
	assert_int_equal(soft_activate(ek, name, sizeof(name), p, bl, p + bl, len - 8 - bl, got,
				       &got_len), 0);
	assert_int_equal(got_len, sizeof(cred));
	assert_memory_equal(got, cred, sizeof(cred));
	EVP_PKEY_free(ek);
}

/* The state's single use and expiry, without a TPM: the answer is
 * computed from the credential the test sealed itself. */
static void test_state_single_use(void **state)
{
	EVP_PKEY *ek = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	struct enroll_subject s, done;
	_cleanup_json_ json_t *ch = NULL, *st = NULL, *taken = NULL, *again = NULL, *ans = NULL;
	_cleanup_free_ uint8_t *blob = NULL, *secret = NULL;
	_cleanup_free_ char *sdir = th_path(dir, "state");
	uint8_t cred[64];
	char hex[129];
	size_t bl, sl, cl;
	ingot_error e = { 0 };
	(void)state;

	subject(&s, ak_pem);
	s.ek = ek;
	s.name_len = 34;
	s.name[0] = 0x00;
	s.name[1] = 0x0b;
	assert_int_equal(enroll_challenge(&s, 1000, 60, &ch, &st, &e), 0);
	assert_int_equal(enroll_state_store(sdir, st, &e), 0);
	const json_t *jb = json_object_get(ch, "credential_blob"), *js = json_object_get(ch, "secret");
	assert_int_equal(base64_decode(json_string_value(jb), json_string_length(jb), &blob, &bl), 0);
	assert_int_equal(base64_decode(json_string_value(js), json_string_length(js), &secret, &sl), 0);
	assert_int_equal(soft_activate(ek, s.name, s.name_len, blob, bl, secret, sl, cred, &cl), 0);
	hex_encode(cred, cl, hex);
	ans = json_pack("{s:s,s:s,s:s}", "format", ENROLL_ANSWER_FORMAT, "id",
			json_string_value(json_object_get(ch, "id")), "credential", hex);

	assert_int_equal(enroll_state_take(sdir, ans, "answer", &taken, &e), 0);
	/* Expired: judged at the expiry instant. */
	assert_int_equal(enroll_finish(taken, ans, "answer", 1060, &done, &e), -ETIME);
	assert_non_null(strstr(e.msg, "expired"));
	/* In time: accepted, and what the record will say is the request's. */
	assert_int_equal(enroll_finish(taken, ans, "answer", 1059, &done, &e), 0);
	assert_string_equal(done.ak_id, s.ak_id);
	assert_string_equal(done.node, "gpu-node-07");
	enroll_subject_release(&done);
	/* A replay finds the state taken. */
	assert_int_equal(enroll_state_take(sdir, ans, "answer", &again, &e), -EALREADY);
	assert_non_null(strstr(e.msg, "already answered"));
	/* A wrong credential is refused. */
	hex[0] = hex[0] == '0' ? '1' : '0';
	json_object_set_new(ans, "credential", json_string(hex));
	assert_int_equal(enroll_finish(taken, ans, "answer", 1001, &done, &e), -EPERM);
	assert_non_null(strstr(e.msg, "not activated"));
	EVP_PKEY_free(ek);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_unknown_signer),
		cmocka_unit_test(test_tampered),
		cmocka_unit_test(test_inconsistent),
		cmocka_unit_test(test_kdfa),
		cmocka_unit_test(test_make_credential),
		cmocka_unit_test(test_makecredential_interop),
		cmocka_unit_test(test_state_single_use),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
