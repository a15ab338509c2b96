/* Units for verify/boot-inputs.c's enrolled AKs: each record's key is
 * parsed once at load and is that record's (never another node's), also
 * after the records' room grew; a record whose key does not parse fails
 * the load, naming the file, and adds nothing. */
#include "tests/unit/helpers.h"

#include <openssl/evp.h>

#include "attest/enroll.h"
#include "attest/quote.h"
#include "keys/enrolment.h"
#include "keys/envelope.h"
#include "lib/json.h"
#include "manifest/typed.h"
#include "verify/boot-inputs.h"

#define NODES 40   /* past the first two growths of the records' room (16, 32) */

static char dir[64], *ring, *pems[NODES];
static struct signing_key *signer;

/* Sign an enrolment record for node and pem into DIR/recs/NAME. */
static void record(const char *name, const char *node, const char *pem, const char *ak_id)
{
	struct enroll_subject s = { 0 };
	_cleanup_json_ json_t *env = NULL;
	_cleanup_free_ char *recs = th_path(dir, "recs"), *path = NULL;
	ingot_error e = { 0 };

	mkdir(recs, 0755);
	path = path_join(recs, name);
	snprintf(s.node, sizeof(s.node), "%s", node);
	memset(s.ek_cert_sha256, 'e', 64);
	memset(s.ca_bundle_sha256, 'c', 64);
	snprintf(s.ak_id, sizeof(s.ak_id), "%s", ak_id);
	snprintf(s.ak_name, sizeof(s.ak_name), "000b%s", ak_id);
	s.ak_pem = (char *)pem;
	if (enrolment_sign(&s, 1767225600, signer, &env, &e) < 0 ||
	    json_write_file_as(path, env, envelope_canonical, 0644, &e) < 0)
		fail_msg("%s", e.msg);
}

static int setup(void **state)
{
	_cleanup_free_ char *base = NULL, *kp = NULL, *pub = NULL;
	ingot_error e = { 0 };
	(void)state;

	if (th_mkdtemp(dir, sizeof(dir), "bootin") < 0)
		return -1;
	base = th_path(dir, "k");
	ring = th_path(dir, "ring.json");
	if (key_generate(KEY_ED25519, base, NULL, NULL, &e) < 0 || asprintf(&kp, "%s.key", base) < 0 ||
	    asprintf(&pub, "%s.pub", base) < 0 || signing_key_load(kp, &signer, &e) < 0 ||
	    keyring_add(ring, pub, "enrol", 0, 0, &e) < 0)
		fail_msg("%s", e.msg);
	for (int i = 0; i < NODES; i++) {
		EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		char node[32], name[40], id[SHA256_HEX_LEN + 1];
		assert_non_null(k);
		pems[i] = pem_of(k);
		EVP_PKEY_free(k);
		assert_int_equal(attest_ak_id_pem(pems[i], id, &e), 0);
		snprintf(node, sizeof(node), "node-%02d", i);
		snprintf(name, sizeof(name), "%s.json", node);
		record(name, node, pems[i], id);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	signing_key_free(signer);
	for (int i = 0; i < NODES; i++)
		free(pems[i]);
	free(ring);
	return th_rmtree(dir);
}

static void trust_init(struct boot_trust *t)
{
	struct boot_keyrings k = { .role[KEY_ROLE_ENROLMENT] = ring };
	ingot_error e = { 0 };

	if (boot_trust_init(t, &k, &e) < 0)
		fail_msg("%s", e.msg);
}

static void test_each_node_its_own_key(void **state)
{
	_cleanup_free_ char *recs = th_path(dir, "recs");
	struct boot_trust t;
	ingot_error e = { 0 };
	(void)state;

	trust_init(&t);
	if (boot_trust_add_dir(&t, recs, false, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(t.n_en, NODES);
	for (int i = 0; i < NODES; i++) {
		char node[32], id[SHA256_HEX_LEN + 1];
		snprintf(node, sizeof(node), "node-%02d", i);
		const struct enrolled_ak *ak = boot_trust_enrolled(&t, node);
		assert_non_null(ak);
		assert_non_null(ak->key);   /* parsed at load, not per verdict */
		assert_int_equal(attest_ak_id_pem(pems[i], id, &e), 0);
		assert_string_equal(ak->ak_id, id);
		assert_string_equal(ak_key_id(ak->key), id);
		assert_string_equal(ak->pem, pems[i]);
		assert_string_equal(ak->node, node);
	}
	boot_trust_release(&t);
}

/* A signed record whose AK does not parse, as recs/NAME; its path. */
static char *bad_record(const char *name, const char *node)
{
	static const char bad[] = "-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n";
	_cleanup_free_ char *recs = th_path(dir, "recs");
	char id[SHA256_HEX_LEN + 1];

	memset(id, 'a', SHA256_HEX_LEN);
	id[SHA256_HEX_LEN] = '\0';
	record(name, node, bad, id);
	return path_join(recs, name);
}

static void test_unparsable_key_refused_at_load(void **state)
{
	_cleanup_free_ char *recs = th_path(dir, "recs"), *path = bad_record("zz-bad.json", "node-bad");
	struct boot_trust t;
	ingot_error e = { 0 };
	(void)state;

	trust_init(&t);
	assert_int_not_equal(boot_trust_add_enrolment(&t, path, &e), 0);
	assert_non_null(strstr(e.msg, path));
	assert_non_null(strstr(e.msg, "PEM PUBLIC KEY"));
	assert_int_equal(t.n_en, 0);
	assert_null(boot_trust_enrolled(&t, "node-bad"));
	/* In a directory: the whole load fails, naming the record. */
	memset(&e, 0, sizeof(e));
	assert_int_not_equal(boot_trust_add_dir(&t, recs, false, &e), 0);
	assert_non_null(strstr(e.msg, "zz-bad.json"));
	boot_trust_release(&t);
	unlink(path);
}

/* A directory's records are loaded on every core; whichever worker meets
 * a bad one, the load fails naming the first by name, and nothing is
 * added. */
static void test_dir_first_bad_named(void **state)
{
	_cleanup_free_ char *recs = th_path(dir, "recs"), *p1 = bad_record("node-20x-bad.json", "node-bad1"),
			    *p2 = bad_record("zz-bad.json", "node-bad2");
	struct boot_trust t;
	ingot_error e = { 0 };
	(void)state;

	for (int round = 0; round < 20; round++) {
		trust_init(&t);
		memset(&e, 0, sizeof(e));
		assert_int_not_equal(boot_trust_add_dir(&t, recs, false, &e), 0);
		if (!strstr(e.msg, "node-20x-bad.json"))
			fail_msg("expected the first bad record by name, got: %s", e.msg);
		assert_int_equal(t.n_en, 0);
		assert_null(boot_trust_enrolled(&t, "node-00"));
		boot_trust_release(&t);
	}
	unlink(p1);
	unlink(p2);
}

/* The vendors of the trusted manifests, asked once at load: a manifest
 * without tuple.vendor declares none; two that differ are named. */
static void test_mixed_vendors(void **state)
{
	(void)state;
	json_t *nv = json_pack("{s:s}", "vendor", "nvidia"), *amd = json_pack("{s:s}", "vendor", "amd");
	struct manifest none = { 0 }, a = { .tuple = nv }, b = { .tuple = nv }, c = { .tuple = amd };
	struct manifest *mf[] = { &none, &a, &b, &c };
	struct boot_trust t = { .mf = mf, .n_mf = 3 };
	size_t i = 99, j = 99;

	assert_null(boot_manifest_vendor(&none));
	assert_string_equal(boot_manifest_vendor(&c), "amd");
	assert_int_equal(boot_trust_mixed_vendors(&t, &i, &j), 0);
	t.n_mf = 4;
	assert_int_equal(boot_trust_mixed_vendors(&t, &i, &j), 1);
	assert_int_equal(i, 1);
	assert_int_equal(j, 3);
	json_decref(nv);
	json_decref(amd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_node_its_own_key),
		cmocka_unit_test(test_unparsable_key_refused_at_load),
		cmocka_unit_test(test_dir_first_bad_named),
		cmocka_unit_test(test_mixed_vendors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
