/* Units for keys/envelope.c and keys/verify.c: DSSE PAE, envelope
 * creation, several signatures, and the tampering table of
 * envelope_verify with its exit classes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builder/image.h"
#include "attest/predict.h"
#include "builder/manifest.h"
#include "keys/envelope.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/time.h"
#include "helpers.h"

static char dir[64];
static struct signing_key *ka, *kb, *kc;   /* a: ed25519, b: p256, c: untrusted ed25519 */
static struct keyring *ring_a, *ring_ab1, *ring_ab2, *ring_c;
static json_t *manifest;
static char *image_path, *state_path;


static struct signing_key *gen(enum key_type t, const char *name)
{
	return th_signing_key_of(t, dir, name);
}

static struct keyring *ring(const char *file, const char *const *pubs, unsigned threshold)
{
	_cleanup_free_ char *p = th_path(dir, file);
	struct keyring *kr = NULL;
	ingot_error e = { 0 };
	for (size_t i = 0; pubs[i]; i++) {
		_cleanup_free_ char *pub = NULL, *base = th_path(dir, pubs[i]);
		if (asprintf(&pub, "%s.pub", base) < 0 ||
		    keyring_add(p, pub, pubs[i], pubs[i + 1] ? 0 : threshold, 0, &e) < 0)
			fail_msg("%s", e.msg);
	}
	if (keyring_load(p, &kr, &e) < 0)
		fail_msg("%s", e.msg);
	return kr;
}

static const char manifest_fmt[] =
	"{\"schema\":\"ingot.manifest/v1\",\"ingot_version\":\"0.1.0\","
	"\"recipe\":{\"name\":\"h100\",\"version\":\"1\",\"file\":\"h100.yaml\",\"sha256\":\"%s\"},"
	"\"epoch\":1767225600,\"serial\":7,\"expires\":\"2027-06-30T00:00:00Z\",\"tuple\":null,"
	"\"artifacts\":[],"
	"\"files\":[{\"path\":\"/etc\",\"type\":\"dir\",\"mode\":\"0755\",\"uid\":0,\"gid\":0}],"
	"\"image\":{\"file\":\"h100.sqfs\",\"sha256\":\"%s\",\"size\":4096,\"compression\":\"zstd\","
	"\"level\":0,\"block_size\":131072},"
	"\"verity\":{\"file\":\"h100.verity\",\"format\":1,\"hash_algorithm\":\"sha256\","
	"\"data_block_size\":4096,\"hash_block_size\":4096,\"data_blocks\":1,\"hash_offset\":4096,"
	"\"salt\":\"%s\",\"root_hash\":\"%s\",\"uuid\":\"00000000-0000-0000-0000-000000000000\"},"
	"\"measurement\":{\"pcr\":15,\"event_type\":13,\"event_data\":\"ingot:v1\","
	"\"content_digest\":\"%s\",\"digests\":{},\"predicted\":{}}}";

static int group_setup(void **state)
{
	static const char *const a[] = { "a", NULL }, *const ab[] = { "a", "b", NULL };
	static const char *const c[] = { "c", NULL };
	char img[4096], hex[65], buf[4096];
	uint8_t d[32];
	ingot_error e = { 0 };
	(void)state;

	if (th_mkdtemp(dir, sizeof(dir), "envelope") < 0)
		return -1;
	unsetenv(KEY_PASSPHRASE_ENV);
	ka = gen(KEY_ED25519, "a");
	kb = gen(KEY_P256, "b");
	kc = gen(KEY_ED25519, "c");
	ring_a = ring("ring-a.json", a, 1);
	ring_ab1 = ring("ring-ab1.json", ab, 1);
	ring_ab2 = ring("ring-ab2.json", ab, 2);
	ring_c = ring("ring-c.json", c, 1);

	memset(img, 'x', sizeof(img));
	image_path = th_path(dir, "h100.sqfs");
	state_path = th_path(dir, "state.json");
	if (write_file_atomic(image_path, img, sizeof(img), 0644, &e) < 0)
		return -1;
	sha256_buf(img, sizeof(img), d);
	hex_encode(d, 32, hex);
	snprintf(buf, sizeof(buf), manifest_fmt, hex, hex, hex, hex, hex);
	manifest = json_loads(buf, 0, NULL);
	if (!manifest || manifest_check("m", manifest, &e) < 0)
		fail_msg("test manifest: %s", e.msg);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	signing_key_free(ka);
	signing_key_free(kb);
	signing_key_free(kc);
	keyring_free(ring_a);
	keyring_free(ring_ab1);
	keyring_free(ring_ab2);
	keyring_free(ring_c);
	json_decref(manifest);
	free(image_path);
	free(state_path);
	return th_rmtree(dir);
}

static json_t *envelope(const struct signing_key *k)
{
	json_t *env = NULL;
	ingot_error e = { 0 };
	if (envelope_create(manifest, k, &env, &e) < 0)
		fail_msg("%s", e.msg);
	return env;
}

static const struct verify_policy now_ok = { .now = 1800000000 - 20000000 };

static int verify(const json_t *env, const struct keyring *kr, const struct verify_policy *p,
		  ingot_error *e, struct verify_outcome *out)
{
	ingot_error_clear(e);
	return envelope_verify_json("env", env, kr, p ? p : &now_ok, NULL, out, e);
}

static void expect_at(int line, const json_t *env, const struct keyring *kr,
		      const struct verify_policy *p, int want, const char *needle)
{
	ingot_error e = { 0 };
	int r = verify(env, kr, p, &e, NULL);
	if (want == 0 && r < 0)
		fail_msg("line %d: expected success, got: %s", line, e.msg);
	if (want != 0 && (r >= 0 || e.kind != want))
		fail_msg("line %d: expected kind %d, got r=%d kind=%d: %s", line, want, r, e.kind,
			 e.msg);
	if (needle && !strstr(e.msg, needle))
		fail_msg("line %d: expected '%s' in '%s'", line, needle, e.msg);
}
#define expect_status(env, kr, p, want, needle) expect_at(__LINE__, env, kr, p, want, needle)

static void test_pae(void **state)
{
	_cleanup_free_ uint8_t *p = NULL;
	size_t n;
	(void)state;
	/* The DSSE spec's example. */
	dsse_pae("http://example.com/HelloWorld", "hello world", 11, &p, &n);
	static const char want[] = "DSSEv1 29 http://example.com/HelloWorld 11 hello world";
	assert_int_equal(n, strlen(want));
	assert_memory_equal(p, want, n);
}

static void test_create_shape(void **state)
{
	_cleanup_json_ json_t *env = envelope(ka), *st = NULL;
	_cleanup_free_ uint8_t *payload = NULL;
	size_t len;
	ingot_error e = { 0 };
	(void)state;

	assert_string_equal(json_string_value(json_object_get(env, "payloadType")),
			    "application/vnd.in-toto+json");
	assert_int_equal(json_array_size(json_object_get(env, "signatures")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		json_object_get(env, "signatures"), 0), "keyid")), ka->keyid);
	assert_int_equal(envelope_parse("env", env, &payload, &len, &e), 0);
	st = json_loadb((char *)payload, len, 0, NULL);
	assert_non_null(st);
	assert_string_equal(json_string_value(json_object_get(st, "_type")),
			    "https://in-toto.io/Statement/v1");
	assert_string_equal(json_string_value(json_object_get(st, "predicateType")),
			    "https://ingot.dev/manifest/v1");
	json_t *s0 = json_array_get(json_object_get(st, "subject"), 0);
	assert_string_equal(json_string_value(json_object_get(s0, "name")), "h100.sqfs");
	assert_true(json_equal(json_object_get(json_object_get(s0, "digest"), "sha256"),
			       json_object_get(json_object_get(manifest, "image"), "sha256")));
	assert_true(json_equal(json_object_get(st, "predicate"), manifest));
}

/* Ed25519 is deterministic: same manifest, same key -> same bytes. */
static void test_deterministic(void **state)
{
	_cleanup_json_ json_t *x = envelope(ka), *y = envelope(ka);
	_cleanup_free_ char *sx = json_canonical(x, NULL), *sy = json_canonical(y, NULL);
	(void)state;
	assert_string_equal(sx, sy);
}

/* envelope_canonical splices the payload in; it must be json_canonical
 * byte for byte, including the shapes where it falls back. */
static void expect_canonical(const json_t *env)
{
	size_t n1 = 0, n2 = 0;
	_cleanup_free_ char *a = json_canonical(env, &n1), *b = envelope_canonical(env, &n2);
	assert_non_null(b);
	assert_int_equal(n1, n2);
	assert_string_equal(a, b);
}

static void test_canonical_splice(void **state)
{
	_cleanup_json_ json_t *env = envelope(ka);
	ingot_error e = { 0 };
	(void)state;

	expect_canonical(env);   /* spliced */
	assert_int_equal(envelope_add_signature(env, kb, &e), 0);
	expect_canonical(env);
	json_object_set_new(env, "payload", json_string("a-b_c==\"\\/\u00e9\n"));
	expect_canonical(env);   /* would need escaping: generic path */
	json_object_set_new(env, "payload", json_string(""));
	expect_canonical(env);
	json_object_set_new(env, "a_first", json_true());
	expect_canonical(env);   /* a member sorts before "payload" */
	json_object_del(env, "a_first");
	json_object_set_new(env, "payload", json_string("QUJD"));
	json_object_del(env, "payloadType");
	json_object_del(env, "signatures");
	expect_canonical(env);   /* payload alone */
	json_object_set_new(env, "payload", json_integer(1));
	json_object_set_new(env, "signatures", json_array());
	expect_canonical(env);   /* not a string */
}

/* envelope_write_signed writes what envelope_sign_payload's envelope
 * dumps as, the payload encoded a chunk at a time: payloads around the
 * chunk (48 KiB) and base64 quantum boundaries. */
static void test_write_signed(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 49151, 49152, 49153, 3 * 49152 + 2 };
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		_cleanup_free_ char *payload = malloc(sizes[i] + 1), *want = NULL;
		_cleanup_json_ json_t *env = NULL;
		_cleanup_strbuf_ struct strbuf got = STRBUF_INIT;
		ingot_error e = { 0 };

		assert_non_null(payload);
		for (size_t j = 0; j < sizes[i]; j++)
			payload[j] = (char)(j * 7 + i);
		assert_int_equal(envelope_sign_payload(payload, sizes[i], ka, &env, &e), 0);
		assert_non_null(want = json_canonical(env, NULL));
		assert_int_equal(envelope_write_signed(payload, sizes[i], ka,
						       &(struct json_out){ json_out_strbuf, &got }, &e), 0);
		assert_string_equal(got.buf, want);
	}
	{
		/* a member sorting before the payload cannot be written so */
		_cleanup_json_ json_t *rest = json_pack("{s:b}", "a", 1);
		_cleanup_strbuf_ struct strbuf got = STRBUF_INIT;
		ingot_error e = { 0 };
		assert_int_equal(envelope_write(rest, "x", 1, &(struct json_out){ json_out_strbuf, &got }, &e),
				 -EINVAL);
	}
}

static void test_valid(void **state)
{
	_cleanup_json_ json_t *env = envelope(ka);
	_cleanup_manifest_ struct manifest *m = NULL;
	struct verify_outcome out;
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(envelope_verify_json("env", env, ring_a, &now_ok, &m, &out, &e), 0);
	assert_true(json_equal(m->doc, manifest));
	assert_int_equal(m->serial, 7);
	assert_int_equal(out.valid, 1);
	assert_int_equal(out.threshold, 1);
	assert_string_equal(out.signers[0], ka->keyid);
	assert_string_equal(out.signer_names[0], "a");
	assert_int_equal(out.serial, 7);
	assert_true(out.has_expiry);
	/* P-256 alone, against a keyring holding both */
	_cleanup_json_ json_t *envb = envelope(kb);
	expect_status(envb, ring_ab1, NULL, 0, NULL);
	/* keyid is optional in DSSE: every trusted key is tried */
	json_object_del(json_array_get(json_object_get(envb, "signatures"), 0), "keyid");
	expect_status(envb, ring_ab1, NULL, 0, NULL);
}

/* envelope_verify_manifest hands back what it decoded and parsed, each
 * made once: the payload bytes, the statement, its predicate and the
 * content digest; a forgery gives none of them. */
static void test_verify_manifest(void **state)
{
	_cleanup_json_ json_t *env = envelope(ka), *forged = NULL;
	_cleanup_free_ uint8_t *payload = NULL;
	struct verified_manifest vm;
	struct verify_outcome out;
	uint8_t cd[32];
	size_t len;
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(envelope_verify_manifest("env", env, ring_a, &now_ok, &vm, &out, &e), 0);
	assert_int_equal(envelope_parse("env", env, &payload, &len, &e), 0);
	assert_int_equal(vm.payload_len, len);
	assert_memory_equal(vm.payload, payload, len);
	assert_true(json_equal(vm.manifest, manifest));
	assert_ptr_equal(json_object_get(vm.statement, "predicate"), vm.manifest);
	assert_int_equal(attest_content_digest(manifest, cd), 0);
	assert_memory_equal(vm.content_digest, cd, 32);
	verified_manifest_free(&vm);

	forged = envelope(kc);
	assert_true(envelope_verify_manifest("env", forged, ring_a, &now_ok, &vm, &out, &e) < 0);
	assert_null(vm.statement);
	assert_null(vm.manifest);
	verified_manifest_free(&vm);
}

static void test_threshold(void **state)
{
	_cleanup_json_ json_t *env = envelope(ka);
	ingot_error e = { 0 };
	(void)state;

	expect_status(env, ring_ab2, NULL, ENVELOPE_FAIL_SIGNATURE,
		      "signatures: 1 valid from distinct trusted keys, threshold 2");
	/* a second signature by the same key counts once */
	json_array_append(json_object_get(env, "signatures"),
			  json_array_get(json_object_get(env, "signatures"), 0));
	expect_status(env, ring_ab2, NULL, ENVELOPE_FAIL_SIGNATURE, "duplicate signature by a");
	json_array_remove(json_object_get(env, "signatures"), 1);
	/* adding the same key again is refused; a second key is fine */
	assert_int_equal(envelope_add_signature(env, ka, &e), -EEXIST);
	assert_int_equal(envelope_add_signature(env, kb, &e), 0);
	expect_status(env, ring_ab2, NULL, 0, NULL);
	/* a signature labelled with a's keyid but made by b does not count */
	json_t *s1 = json_array_get(json_object_get(env, "signatures"), 1);
	json_object_set_new(s1, "keyid", json_string(ka->keyid));
	expect_status(env, ring_ab2, NULL, ENVELOPE_FAIL_SIGNATURE, "invalid signature by a");
}

static void test_untrusted(void **state)
{
	_cleanup_json_ json_t *env = envelope(kc), *none = envelope(ka);
	(void)state;
	expect_status(env, ring_a, NULL, ENVELOPE_FAIL_SIGNATURE, "is not in the keyring");
	json_array_clear(json_object_get(none, "signatures"));
	expect_status(none, ring_a, NULL, ENVELOPE_FAIL_SIGNATURE, "the envelope has no signatures");
}

static void test_tampered(void **state)
{
	_cleanup_json_ json_t *env = envelope(ka);
	_cleanup_free_ uint8_t *payload = NULL;
	_cleanup_free_ char *b64 = NULL;
	size_t len;
	ingot_error e = { 0 };
	(void)state;

	/* one payload byte: serial 7 -> 9 */
	assert_int_equal(envelope_parse("env", env, &payload, &len, &e), 0);
	char *s = strstr((char *)payload, "\"serial\":7");
	assert_non_null(s);
	s[9] = '9';
	b64 = base64_encode(payload, len, NULL);
	json_t *copy = json_deep_copy(env);
	json_object_set_new(copy, "payload", json_string(b64));
	expect_status(copy, ring_a, NULL, ENVELOPE_FAIL_SIGNATURE, "0 valid");
	json_decref(copy);

	/* payloadType is signed too */
	copy = json_deep_copy(env);
	json_object_set_new(copy, "payloadType", json_string("application/json"));
	expect_status(copy, ring_a, NULL, ENVELOPE_FAIL_SIGNATURE, "invalid signature by a");
	json_decref(copy);

	/* a flipped signature bit */
	copy = json_deep_copy(env);
	json_t *sig = json_object_get(json_array_get(json_object_get(copy, "signatures"), 0), "sig");
	char *sv = strdup(json_string_value(sig));
	sv[0] = sv[0] == 'A' ? 'B' : 'A';
	json_string_set(sig, sv);
	free(sv);
	expect_status(copy, ring_a, NULL, ENVELOPE_FAIL_SIGNATURE, "invalid signature by a");
	json_decref(copy);
}

/* Validly signed but wrong inside: refused as malformed, after the
 * signature check passed. */
static void sign_raw(const char *type, const char *payload, const struct keyring *kr,
		     const char *needle)
{
	_cleanup_free_ uint8_t *pae = NULL, *sig = NULL;
	_cleanup_free_ char *b64p = NULL, *b64s = NULL;
	size_t pl, sl;
	ingot_error e = { 0 };

	dsse_pae(type, payload, strlen(payload), &pae, &pl);
	assert_int_equal(signing_key_sign(ka, pae, pl, &sig, &sl, &e), 0);
	b64p = base64_encode(payload, strlen(payload), NULL);
	b64s = base64_encode(sig, sl, NULL);
	_cleanup_json_ json_t *env = json_pack("{s:s,s:s,s:[{s:s,s:s}]}", "payloadType", type,
					       "payload", b64p, "signatures", "keyid", ka->keyid,
					       "sig", b64s);
	expect_status(env, kr, NULL, ENVELOPE_FAIL_MALFORMED, needle);
}

static void test_signed_but_wrong(void **state)
{
	_cleanup_json_ json_t *st = NULL;
	_cleanup_free_ char *s = NULL;
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(statement_for_manifest("manifest", manifest, &st, &e), 0);
	s = json_compact(st, NULL);
	sign_raw("application/json", s, ring_a, "payloadType: expected \"application/vnd.in-toto+json\"");
	sign_raw(ENVELOPE_PAYLOAD_TYPE, "not json", ring_a, "payload: invalid JSON");

	json_t *subj = json_array_get(json_object_get(st, "subject"), 0);
	json_object_set_new(json_object_get(subj, "digest"), "sha256", json_string(
		"0000000000000000000000000000000000000000000000000000000000000000"));
	free(s);
	s = json_compact(st, NULL);
	sign_raw(ENVELOPE_PAYLOAD_TYPE, s, ring_a, "subject[0].digest.sha256");

	json_object_set_new(st, "predicateType", json_string("https://slsa.dev/provenance/v1"));
	free(s);
	s = json_compact(st, NULL);
	sign_raw(ENVELOPE_PAYLOAD_TYPE, s, ring_a, "predicateType: expected");

	json_object_set_new(st, "predicateType", json_string(MANIFEST_PREDICATE_TYPE));
	/* The statement's predicate is the manifest itself: edit a copy. */
	json_object_set_new(st, "predicate", json_deep_copy(manifest));
	json_object_del(json_object_get(st, "predicate"), "serial");
	free(s);
	s = json_compact(st, NULL);
	sign_raw(ENVELOPE_PAYLOAD_TYPE, s, ring_a, "predicate: serial: missing");
}

static void test_malformed(void **state)
{
	_cleanup_json_ json_t *env = envelope(ka);
	char big[ENVELOPE_SIG_B64_MAX + 8];
	(void)state;

	json_t *c = json_deep_copy(env);
	json_object_del(c, "payload");
	expect_status(c, ring_a, NULL, ENVELOPE_FAIL_MALFORMED, "payload: expected a base64 string");
	json_decref(c);

	c = json_deep_copy(env);
	json_object_set_new(c, "payload", json_string("not base64!"));
	expect_status(c, ring_a, NULL, ENVELOPE_FAIL_MALFORMED, "payload: expected strict standard base64");
	json_decref(c);

	c = json_deep_copy(env);
	json_object_set_new(c, "signatures", json_object());
	expect_status(c, ring_a, NULL, ENVELOPE_FAIL_MALFORMED, "signatures: expected an array");
	json_decref(c);

	c = json_deep_copy(env);
	json_object_set_new(c, "extra", json_true());
	expect_status(c, ring_a, NULL, ENVELOPE_FAIL_MALFORMED, "unknown field 'extra'");
	json_decref(c);

	c = json_array();
	expect_status(c, ring_a, NULL, ENVELOPE_FAIL_MALFORMED, "expected a DSSE envelope");
	json_decref(c);

	/* limits */
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	c = json_deep_copy(env);
	json_object_set_new(json_array_get(json_object_get(c, "signatures"), 0), "sig", json_string(big));
	expect_status(c, ring_a, NULL, ENVELOPE_FAIL_MALFORMED, "signatures[0].sig: 1031 characters, limit 1024");
	json_decref(c);

	c = json_deep_copy(env);
	for (int i = 0; i < ENVELOPE_MAX_SIGS; i++)
		json_array_append(json_object_get(c, "signatures"),
				  json_array_get(json_object_get(env, "signatures"), 0));
	expect_status(c, ring_a, NULL, ENVELOPE_FAIL_MALFORMED, "signatures: 65 entries, limit 64");
	json_decref(c);

	c = json_deep_copy(env);
	big[300] = '\0';
	json_object_set_new(c, "payloadType", json_string(big));
	expect_status(c, ring_a, NULL, ENVELOPE_FAIL_MALFORMED, "payloadType: expected at most 256");
	json_decref(c);
}

static void test_expiry(void **state)
{
	_cleanup_json_ json_t *env = envelope(ka);
	struct verify_policy p = { 0 };
	time_t exp;
	(void)state;

	assert_int_equal(time_parse("2027-06-30T00:00:00Z", &exp), 0);
	p.now = exp - 1;
	expect_status(env, ring_a, &p, 0, NULL);
	p.now = exp;
	expect_status(env, ring_a, &p, ENVELOPE_FAIL_EXPIRED,
		      "manifest expired at 2027-06-30T00:00:00Z (now 2027-06-30T00:00:00Z)");
}

static void test_rollback(void **state)
{
	_cleanup_json_ json_t *env = envelope(ka), *st = NULL;
	struct verify_policy p = now_ok;
	struct verify_outcome out;
	ingot_error e = { 0 };
	(void)state;

	unlink(state_path);
	p.state_path = state_path;
	/* first sight: recorded (by the separate call the commands make) */
	assert_int_equal(verify(env, ring_a, &p, &e, &out), 0);
	assert_int_equal(out.last_serial, 0);
	assert_int_equal(envelope_record_state(state_path, &out, &e), 0);
	assert_int_equal(json_read_file(state_path, &st, &e), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(st, "serials"), "h100")), 7);
	/* same serial again: fine */
	expect_status(env, ring_a, &p, 0, NULL);
	/* a newer one was seen: refused */
	json_object_set_new(json_object_get(st, "serials"), "h100", json_integer(8));
	json_object_set_new(json_object_get(st, "serials"), "other-pool", json_integer(100));
	assert_int_equal(json_write_file(state_path, st, 0644, &e), 0);
	expect_status(env, ring_a, &p, ENVELOPE_FAIL_ROLLBACK,
		      "serial 7 is older than serial 8 last seen for \"h100\"");
	/* a broken state file is not silently reset */
	assert_int_equal(write_file_atomic(state_path, "{}", 2, 0644, &e), 0);
	expect_status(env, ring_a, &p, ENVELOPE_FAIL_MALFORMED, "expected a state file");
	unlink(state_path);
}

static void test_image(void **state)
{
	_cleanup_json_ json_t *env = envelope(ka);
	_cleanup_manifest_ struct manifest *m = NULL;
	_cleanup_free_ char *other = th_path(dir, "other.sqfs");
	struct verify_outcome out;
	struct image_digest got;
	ingot_error e = { 0 };
	char img[4096];
	(void)state;

	assert_int_equal(envelope_verify_json("env", env, ring_a, &now_ok, &m, &out, &e), 0);
	assert_int_equal(image_check_manifest(m, image_path, NULL, &got, &e), 0);
	assert_int_equal(got.size, 4096);
	memset(img, 'x', sizeof(img));
	img[100] = 'y';
	assert_int_equal(write_file_atomic(other, img, sizeof(img), 0644, &e), 0);
	assert_int_equal(image_check_manifest(m, other, NULL, &got, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "but the signed manifest says"));
	assert_int_equal(image_check_manifest(m, "/nonexistent.sqfs", NULL, &got, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "/nonexistent.sqfs"));
}

static void test_add_signature_checks(void **state)
{
	_cleanup_json_ json_t *env = envelope(ka);
	ingot_error e = { 0 };
	(void)state;
	json_object_set_new(env, "payloadType", json_string("text/plain"));
	assert_int_equal(envelope_add_signature(env, kb, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "payloadType"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pae),
		cmocka_unit_test(test_create_shape),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_canonical_splice),
		cmocka_unit_test(test_write_signed),
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_verify_manifest),
		cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_untrusted),
		cmocka_unit_test(test_tampered),
		cmocka_unit_test(test_signed_but_wrong),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_rollback),
		cmocka_unit_test(test_image),
		cmocka_unit_test(test_add_signature_checks),
	};
	return cmocka_run_group_tests_name("envelope", tests, group_setup, group_teardown);
}
