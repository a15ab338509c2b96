#include "attest/predict.h"

#include <stdbool.h>
#include <string.h>

#include "attest/bank.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"

int attest_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 255)
		return 0;
	for (const char *p = name; *p; p++)
		if (*p <= ' ' || *p >= 0x7f)
			return 0;
	return 1;
}

int attest_event_data(const char *image_name, const uint8_t image_sha256[32],
		      const uint8_t verity_root[32], const uint8_t content_digest[32],
		      struct strbuf *out)
{
	char img[65], root[65], cd[65];

	if (!attest_name_ok(image_name))
		return -EINVAL;
	hex_encode(image_sha256, 32, img);
	hex_encode(verity_root, 32, root);
	hex_encode(content_digest, 32, cd);
	strbuf_addf(out, ATTEST_EVENT_PREFIX "image=%s sha256=%s verity=%s manifest=%s",
		    image_name, img, root, cd);
	return 0;
}

json_t *attest_predict_measurement(const char *image_name, const uint8_t image_sha256[32],
				   const uint8_t verity_root[32],
				   const uint8_t content_digest[32], unsigned pcr)
{
	_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;
	_cleanup_json_ json_t *m = NULL;
	json_t *digests, *predicted;

	if (pcr >= PCR_COUNT)
		return NULL;
	strbuf_init(&ev, 256);
	if (attest_event_data(image_name, image_sha256, verity_root, content_digest, &ev) < 0)
		return NULL;

	m = json_object();
	digests = json_object();
	predicted = json_object();
	if (!m || json_object_set_new(m, "digests", digests) ||
	    json_object_set_new(m, "predicted", predicted))
		return NULL;
	for (size_t i = 0; i < BANK_COUNT; i++) {
		const struct bank *b = &bank_table[i];
		uint8_t d[BANK_MAX_DIGEST], p[BANK_MAX_DIGEST] = { 0 };

		if (bank_hash(b, ev.buf, ev.len, d) < 0 || bank_extend(b, p, d) < 0 ||
		    json_set_hex(digests, b->name, d, b->size) || json_set_hex(predicted, b->name, p, b->size))
			return NULL;
	}
	if (json_object_set_new(m, "pcr", json_integer(pcr)) ||
	    json_object_set_new(m, "event_type", json_integer(ATTEST_EV_IPL)) ||
	    json_object_set_new(m, "event_data", json_string(ev.buf)) ||
	    json_set_hex(m, "content_digest", content_digest, 32))
		return NULL;
	return TAKE_PTR(m);
}

int attest_content_digest_spliced(const json_t *manifest, const struct json_splice *sp, size_t n,
				  uint8_t out[32], size_t *len, ingot_error *e)
{
	_cleanup_json_ json_t *copy = NULL;
	EVP_MD_CTX *md;
	int r;

	if (!json_is_object(manifest))
		return ingot_fail(e, -EINVAL, "manifest: expected an object");
	/* Shallow copy: only the top-level "measurement" member goes. */
	copy = json_copy((json_t *)manifest);
	if (!copy || !(md = sha256_begin()))
		return ingot_fail(e, -ENOMEM, "out of memory");
	json_object_del(copy, "measurement");
	r = json_dump_spliced(copy, JSON_COMPACT_FLAGS, sp, n, &(struct json_out){ sha256_write, md },
			      len, e);
	sha256_end(md, out);
	return r;
}

int attest_content_digest(const json_t *manifest, uint8_t out[32])
{
	return attest_content_digest_spliced(manifest, NULL, 0, out, NULL, NULL);
}

/* obj.key.sub as 32 bytes from 64 hex digits. */
static int get_hex32(const json_t *manifest, const char *key, const char *sub,
		     uint8_t out[32], ingot_error *e)
{
	json_t *obj;
	const char *s;
	int r;

	r = json_get_obj(manifest, key, "manifest", &obj, e);
	if (r < 0)
		return r;
	r = json_get_str(obj, sub, "manifest", &s, e);
	if (r < 0)
		return r;
	if (!is_sha256_hex(s) || hex_decode(s, out, 32) < 0)
		return ingot_fail(e, -EINVAL, "manifest: %s.%s: expected 64 lower-case hex digits, got '%.80s'",
				  key, sub, s);
	return 0;
}

/* The event data and, into img, root and cd, the digests it names:
 * each computed once for both callers. */
static int event_data(const json_t *manifest, struct strbuf *out, uint8_t img[32],
		      uint8_t root[32], uint8_t cd[32], bool head, const char **namep, ingot_error *e)
{
	const char *name;
	json_t *recipe;
	int r;

	if (!json_is_object(manifest))
		return ingot_fail(e, -EINVAL, "manifest: expected a JSON object");
	r = json_get_obj(manifest, "recipe", "manifest", &recipe, e);
	if (r < 0)
		return r;
	r = json_get_str(recipe, "name", "manifest", &name, e);
	if (r < 0)
		return r;
	if (!attest_name_ok(name))
		return ingot_fail(e, -EINVAL, "manifest: recipe.name: expected 1-255 printable characters without spaces, got '%.80s'",
				  name);
	if ((r = get_hex32(manifest, "image", "sha256", img, e)) < 0 ||
	    (r = get_hex32(manifest, "verity", "root_hash", root, e)) < 0)
		return r;
	if (head && (r = get_hex32(manifest, "measurement", "content_digest", cd, e)) < 0)
		return r;
	if (!head && (r = attest_content_digest(manifest, cd)) < 0)
		return ingot_fail(e, r, "manifest: cannot compute the content digest");
	*namep = name;
	return attest_event_data(name, img, root, cd, out);
}

int attest_event_data_from_manifest(const json_t *manifest, struct strbuf *out, ingot_error *e)
{
	uint8_t img[32], root[32], cd[32];
	const char *name;

	return event_data(manifest, out, img, root, cd, false, &name, e);
}

static json_t *measurement_for(const json_t *manifest, int pcr, bool head, ingot_error *e)
{
	_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;
	uint8_t img[32], root[32], cd[32];
	json_t *m, *have = NULL;   /* measurement.pcr */
	const char *name;

	strbuf_init(&ev, 256);
	if (event_data(manifest, &ev, img, root, cd, head, &name, e) < 0)
		return NULL;
	json_unpack((json_t *)manifest, "{s?{s?o}}", "measurement", "pcr", &have);
	if (pcr < 0 && json_is_integer(have))
		pcr = (int)json_integer_value(have);
	else if (pcr < 0)
		pcr = ATTEST_DEFAULT_PCR;
	if (pcr >= PCR_COUNT) {
		ingot_fail(e, -EINVAL, "manifest: measurement.pcr: expected 0-%d, got %d", PCR_COUNT - 1, pcr);
		return NULL;
	}
	m = attest_predict_measurement(name, img, root, cd, (unsigned)pcr);
	if (!m)
		ingot_fail(e, -ENOMEM, "manifest: cannot compute the measurement");
	return m;
}

json_t *attest_measurement_for_manifest(const json_t *manifest, int pcr, ingot_error *e)
{
	return measurement_for(manifest, pcr, false, e);
}

static int check_measurement(const json_t *manifest, bool head, unsigned *pcr, ingot_error *e)
{
	_cleanup_json_ json_t *want = NULL;
	json_t *have;
	json_int_t n;
	int r;

	r = json_get_obj(manifest, "measurement", "manifest", &have, e);
	if (r < 0)
		return r;
	r = json_get_int(have, "pcr", "manifest: measurement", &n, e);
	if (r < 0)
		return r;
	if (n < 0 || n >= PCR_COUNT)
		return ingot_fail(e, -EINVAL, "manifest: measurement.pcr: expected 0-%d, got %lld",
				  PCR_COUNT - 1, (long long)n);
	want = measurement_for(manifest, (int)n, head, e);
	if (!want)
		return e ? e->code : -EINVAL;
	if (!json_equal(want, have)) {
		const char *got = NULL, *expected = NULL;

		json_unpack(have, "{s?s}", "event_data", &got);
		json_unpack(want, "{s?s}", "event_data", &expected);
		return ingot_fail(e, -EBADMSG, "manifest: measurement: expected event data '%s' and its digests, got '%.300s'",
				  expected, got ? got : "(other digests)");
	}
	if (pcr)
		*pcr = (unsigned)n;
	return 0;
}

int attest_check_measurement(const json_t *manifest, unsigned *pcr, ingot_error *e)
{
	return check_measurement(manifest, false, pcr, e);
}

int attest_check_head_measurement(const json_t *head, unsigned *pcr, ingot_error *e)
{
	return check_measurement(head, true, pcr, e);
}
