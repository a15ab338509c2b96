/* Verification of a signed manifest.  Order matters: the signatures are
 * checked over the envelope bytes as found before anything in the payload
 * is interpreted (DSSE's rule), then what the signed statement says is
 * checked against the policy: expiry, rollback, the files on disk. */
#include "keys/envelope.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "builder/image.h"
#include "builder/manifest.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/strbuf.h"

#define STATE_SCHEMA "ingot.verify-state/v1"
#define STATE_FILE_MAX (1u << 20)

/* ---- time -------------------------------------------------------------- */

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int parse_time(const char *s, time_t *out)
{
	int Y, M, D, h, m, sec, oh = 0, om = 0, sign = 0;
	size_t n = strlen(s);
	const char *p;
	struct tm tm = { 0 };

	if (n > 0 && n <= 19 && strspn(s, "0123456789") == n) {
		unsigned long long v = strtoull(s, NULL, 10);
		if (v > (unsigned long long)INT64_MAX / 2)
			return -ERANGE;
		*out = (time_t)v;
		return 0;
	}
	/* YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM) */
	if (n < 20 || digits(s, 4, &Y) || s[4] != '-' || digits(s + 5, 2, &M) || s[7] != '-' ||
	    digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) ||
	    s[13] != ':' || digits(s + 14, 2, &m) || s[16] != ':' || digits(s + 17, 2, &sec))
		return -EINVAL;
	p = s + 19;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		while (isdigit((unsigned char)*p))
			p++;     /* sub-second precision does not matter for expiry */
	}
	if ((*p == 'Z' || *p == 'z') && p[1] == '\0') {
		sign = 0;
	} else if ((*p == '+' || *p == '-') && strlen(p) == 6 && !digits(p + 1, 2, &oh) &&
		   p[3] == ':' && !digits(p + 4, 2, &om)) {
		sign = *p == '+' ? 1 : -1;
		if (oh > 23 || om > 59)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
	if (M < 1 || M > 12 || D < 1 || D > mdays[M - 1] || (M == 2 && D == 29 && !leap) ||
	    h > 23 || m > 59 || sec > 60)
		return -EINVAL;
	tm.tm_year = Y - 1900;
	tm.tm_mon = M - 1;
	tm.tm_mday = D;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	*out = timegm(&tm) - (time_t)sign * (oh * 3600 + om * 60);
	return 0;
}

static void fmt_time(time_t t, char *buf, size_t n)
{
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, n, "%lld", (long long)t);
}

/* ---- statement --------------------------------------------------------- */

/* Parse the (already authenticated) payload as an in-toto statement about
 * an ingot manifest and return the manifest (new reference). */
int envelope_statement_manifest(const char *name, const uint8_t *payload, size_t len,
					json_t **manifest, ingot_error *e)
{
	_cleanup_json_ json_t *st = NULL;
	json_error_t je;
	json_t *subj, *s0, *dig, *pred, *image, *v;
	const char *key;
	int r;

	st = json_loadb((const char *)payload, len, JSON_REJECT_DUPLICATES, &je);
	if (!st)
		return ingot_fail(e, -EBADMSG, "%s: payload: invalid JSON at %d:%d: %s", name, je.line,
				  je.column, je.text);
	if (!json_is_object(st))
		return ingot_fail(e, -EINVAL, "%s: payload: expected an in-toto statement object", name);
	json_object_foreach(st, key, v)
		if (strcmp(key, "_type") && strcmp(key, "subject") && strcmp(key, "predicateType") &&
		    strcmp(key, "predicate"))
			return ingot_fail(e, -EINVAL, "%s: statement: unknown field '%.64s'", name, key);
	v = json_object_get(st, "_type");
	if (!json_is_string(v) || strcmp(json_string_value(v), STATEMENT_TYPE))
		return ingot_fail(e, -EINVAL, "%s: statement._type: expected \"%s\", got %s%.64s%s", name,
				  STATEMENT_TYPE, json_is_string(v) ? "\"" : "",
				  json_is_string(v) ? json_string_value(v) : "a non-string",
				  json_is_string(v) ? "\"" : "");
	v = json_object_get(st, "predicateType");
	if (!json_is_string(v) || strcmp(json_string_value(v), MANIFEST_PREDICATE_TYPE))
		return ingot_fail(e, -EINVAL, "%s: statement.predicateType: expected \"%s\", got %s%.64s%s",
				  name, MANIFEST_PREDICATE_TYPE, json_is_string(v) ? "\"" : "",
				  json_is_string(v) ? json_string_value(v) : "a non-string",
				  json_is_string(v) ? "\"" : "");
	pred = json_object_get(st, "predicate");
	if (!pred)
		return ingot_fail(e, -EINVAL, "%s: statement.predicate: missing, expected the manifest", name);
	char where[512];
	snprintf(where, sizeof(where), "%s: predicate", name);
	r = manifest_check(where, pred, e);
	if (r < 0)
		return r;

	subj = json_object_get(st, "subject");
	if (!json_is_array(subj) || json_array_size(subj) != 1)
		return ingot_fail(e, -EINVAL, "%s: statement.subject: expected an array of one entry "
				  "(the image)", name);
	s0 = json_array_get(subj, 0);
	dig = json_object_get(s0, "digest");
	image = json_object_get(pred, "image");
	if (!json_is_string(json_object_get(s0, "name")) ||
	    !json_is_string(json_object_get(dig, "sha256")))
		return ingot_fail(e, -EINVAL, "%s: statement.subject[0]: expected {\"name\": string, "
				  "\"digest\": {\"sha256\": string}}", name);
	if (!json_equal(json_object_get(s0, "name"), json_object_get(image, "file")))
		return ingot_fail(e, -EINVAL, "%s: statement.subject[0].name: \"%.64s\" but the manifest's "
				  "image.file is \"%.64s\"", name,
				  json_string_value(json_object_get(s0, "name")),
				  json_string_value(json_object_get(image, "file")));
	if (!json_equal(json_object_get(dig, "sha256"), json_object_get(image, "sha256")))
		return ingot_fail(e, -EINVAL, "%s: statement.subject[0].digest.sha256: %.64s but the "
				  "manifest's image.sha256 is %s", name,
				  json_string_value(json_object_get(dig, "sha256")),
				  json_string_value(json_object_get(image, "sha256")));
	*manifest = json_incref(pred);
	return 0;
}

/* ---- signatures -------------------------------------------------------- */

static int check_signatures(const char *name, const json_t *env, const uint8_t *payload,
			    size_t len, const struct keyring *kr, struct verify_outcome *out,
			    ingot_error *e)
{
	_cleanup_free_ uint8_t *pae = NULL;
	_cleanup_strbuf_ struct strbuf why = STRBUF_INIT;
	json_t *sigs = json_object_get(env, "signatures"), *s;
	size_t pae_len, i;

	strbuf_init(&why, 128);
	if (dsse_pae(json_string_value(json_object_get(env, "payloadType")), payload, len, &pae,
		     &pae_len) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	out->threshold = kr->threshold;
	out->valid = 0;

	json_array_foreach(sigs, i, s) {
		_cleanup_free_ uint8_t *sig = NULL;
		const json_t *js = json_object_get(s, "sig");
		const char *kid = json_string_value(json_object_get(s, "keyid"));
		size_t siglen;
		bool matched = false, tried = false;

		if (base64_decode(json_string_value(js), json_string_length(js), &sig, &siglen) < 0) {
			strbuf_addf(&why, "; signatures[%zu]: sig is not base64", i);
			continue;
		}
		for (size_t k = 0; k < kr->n && !matched; k++) {
			const struct keyring_key *kk = &kr->keys[k];
			/* A keyid is only a hint, but when present it must match:
			 * otherwise a signature would be "by" a key it does not name. */
			if (kid && *kid && strcmp(kid, kk->key->keyid))
				continue;
			tried = true;
			if (!key_verify(kk->key->pkey, pae, pae_len, sig, siglen))
				continue;
			matched = true;
			size_t j;
			for (j = 0; j < out->valid; j++)
				if (!strcmp(out->signers[j], kk->key->keyid))
					break;
			if (j == out->valid) {   /* the same key twice counts once */
				memcpy(out->signers[j], kk->key->keyid, KEYID_HEX_LEN + 1);
				out->signer_names[j] = kk->name;
				out->valid++;
			} else {
				strbuf_addf(&why, "; signatures[%zu]: duplicate signature by %s, counted once",
					    i, kk->name);
			}
		}
		if (!tried)
			strbuf_addf(&why, "; signatures[%zu]: keyid %.16s... is not in the keyring", i,
				    kid ? kid : "");
		else if (!matched && kid && *kid)
			strbuf_addf(&why, "; signatures[%zu]: invalid signature by %s", i,
				    keyring_find(kr, kid)->name);
		else if (!matched)
			strbuf_addf(&why, "; signatures[%zu]: no trusted key verifies it", i);
	}
	if (out->valid < kr->threshold)
		return ingot_fail_status(e, -EPERM, ENVELOPE_EXIT_SIGNATURE,
					 "%s: signatures: %u valid from distinct trusted keys, threshold %u "
					 "(keyring %s)%s", name, out->valid, kr->threshold, kr->file,
					 json_array_size(sigs) ? why.buf : "; the envelope has no signatures");
	return 0;
}

/* ---- rollback state ---------------------------------------------------- */

static int state_load(const char *path, json_t **out, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *st = NULL;
	json_t *serials, *v;
	const char *key;
	size_t len;
	int r;

	r = read_file(path, STATE_FILE_MAX, &buf, &len, e);
	if (r == -ENOENT) {
		*out = json_pack("{s:s,s:{}}", "schema", STATE_SCHEMA, "serials");
		return *out ? 0 : ingot_fail(e, -ENOMEM, "out of memory");
	}
	if (r < 0)
		return r;
	r = json_read_buf(path, buf, len, &st, e);
	if (r < 0)
		return r;
	serials = json_object_get(st, "serials");
	if (!json_is_object(st) || !json_is_string(json_object_get(st, "schema")) ||
	    strcmp(json_string_value(json_object_get(st, "schema")), STATE_SCHEMA) ||
	    !json_is_object(serials))
		return ingot_fail(e, -EINVAL, "%s: expected a state file {\"schema\":\"%s\",\"serials\":{...}}",
				  path, STATE_SCHEMA);
	json_object_foreach(serials, key, v)
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return ingot_fail(e, -EINVAL, "%s: serials.%.64s: expected a non-negative integer",
					  path, key);
	*out = TAKE_PTR(st);
	return 0;
}

/* ---- the whole check --------------------------------------------------- */

static int with_status(ingot_error *e, int r, int status)
{
	if (e && !e->status)
		e->status = status;
	return r;
}

int envelope_verify_signatures(const char *name, const json_t *env, const struct keyring *kr,
			       uint8_t **payload, size_t *payload_len, struct verify_outcome *out,
			       ingot_error *e)
{
	_cleanup_free_ uint8_t *pl = NULL;
	const char *type;
	size_t len;
	int r;

	memset(out, 0, sizeof(*out));
	r = envelope_parse(name, env, &pl, &len, e);
	if (r < 0)
		return with_status(e, r, r == -ENOMEM ? ENVELOPE_EXIT_IO : ENVELOPE_EXIT_MALFORMED);
	r = check_signatures(name, env, pl, len, kr, out, e);
	if (r < 0)
		return r;
	type = json_string_value(json_object_get(env, "payloadType"));
	if (strcmp(type, ENVELOPE_PAYLOAD_TYPE))
		return ingot_fail_status(e, -EINVAL, ENVELOPE_EXIT_MALFORMED,
					 "%s: payloadType: expected \"%s\", got \"%.64s\"", name,
					 ENVELOPE_PAYLOAD_TYPE, type);
	*payload = TAKE_PTR(pl);
	*payload_len = len;
	return 0;
}

int envelope_verify_json(const char *name, const json_t *env, const struct keyring *kr,
			 const struct verify_policy *p, json_t **manifest_out,
			 struct verify_outcome *out, ingot_error *e)
{
	_cleanup_free_ uint8_t *payload = NULL;
	_cleanup_json_ json_t *m = NULL, *state = NULL;
	struct verify_outcome tmp;
	const char *recipe, *expires;
	json_t *image, *last = NULL;
	size_t len;
	int r;

	if (!out)
		out = &tmp;
	memset(out, 0, sizeof(*out));

	r = envelope_verify_signatures(name, env, kr, &payload, &len, out, e);
	if (r < 0)
		return r;

	/* Authenticated from here on; now interpret it. */
	r = envelope_statement_manifest(name, payload, len, &m, e);
	if (r < 0)
		return with_status(e, r, ENVELOPE_EXIT_MALFORMED);

	recipe = json_string_value(json_object_get(json_object_get(m, "recipe"), "name"));
	snprintf(out->recipe, sizeof(out->recipe), "%s", recipe);
	out->serial = (uint64_t)json_integer_value(json_object_get(m, "serial"));
	image = json_object_get(m, "image");
	snprintf(out->image_sha256, sizeof(out->image_sha256), "%s",
		 json_string_value(json_object_get(image, "sha256")));

	expires = json_string_value(json_object_get(m, "expires"));
	if (expires) {
		char now[32];
		if (parse_time(expires, &out->expires) < 0)   /* manifest_check guarantees it parses */
			return ingot_fail_status(e, -EINVAL, ENVELOPE_EXIT_MALFORMED, "%s: expires: bad time",
						 name);
		out->has_expiry = true;
		if (p->now >= out->expires) {
			fmt_time(p->now, now, sizeof(now));
			return ingot_fail_status(e, -ETIME, ENVELOPE_EXIT_EXPIRED,
						 "%s: manifest expired at %s (now %s)", name, expires, now);
		}
	}

	if (p->state_path) {
		r = state_load(p->state_path, &state, e);
		if (r < 0)
			return with_status(e, r, r == -EINVAL || r == -EBADMSG ? ENVELOPE_EXIT_MALFORMED
									 : ENVELOPE_EXIT_IO);
		last = json_object_get(json_object_get(state, "serials"), recipe);
		out->last_serial = last ? (uint64_t)json_integer_value(last) : 0;
		if (last && out->serial < out->last_serial)
			return ingot_fail_status(e, -ESTALE, ENVELOPE_EXIT_ROLLBACK,
						 "%s: serial %" PRIu64 " is older than serial %" PRIu64
						 " last seen for \"%s\" (state file %s): refusing a rollback",
						 name, out->serial, out->last_serial, recipe, p->state_path);
	}

	if (p->verity_path && !p->image_path)
		return ingot_fail_status(e, -EINVAL, ENVELOPE_EXIT_IO,
					 "%s: checking a verity file needs the image too", name);
	if (p->image_path) {
		uint8_t got[SHA256_LEN];
		char hex[SHA256_HEX_LEN + 1];
		uint64_t size;
		json_int_t want_size = json_integer_value(json_object_get(image, "size"));

		r = sha256_file(p->image_path, got, &size, e);
		if (r < 0)
			return with_status(e, r, ENVELOPE_EXIT_IO);
		hex_encode(got, sizeof(got), hex);
		if (strcmp(hex, out->image_sha256))
			return ingot_fail_status(e, -EBADF, ENVELOPE_EXIT_DIGEST,
						 "%s: sha256 %s, but the signed manifest says %s", p->image_path,
						 hex, out->image_sha256);
		if (size != (uint64_t)want_size)
			return ingot_fail_status(e, -EBADF, ENVELOPE_EXIT_DIGEST,
						 "%s: %" PRIu64 " bytes, but the signed manifest says %lld",
						 p->image_path, size, (long long)want_size);
		out->image_checked = true;
	}
	if (p->verity_path) {
		uint8_t root[32];
		const char *hex = json_string_value(json_object_get(json_object_get(m, "verity"),
								    "root_hash"));
		if (hex_decode(hex, root, sizeof(root)) < 0)
			return ingot_fail_status(e, -EINVAL, ENVELOPE_EXIT_MALFORMED,
						 "%s: verity.root_hash: expected 64 hex digits", name);
		r = verity_check(p->image_path, p->verity_path, root, e);
		if (r < 0) {
			ingot_prefix(e, "%s: verity root %.16s... does not verify", p->verity_path, hex);
			return with_status(e, r, r == -ENOENT || r == -EACCES ? ENVELOPE_EXIT_IO
									      : ENVELOPE_EXIT_DIGEST);
		}
		out->verity_checked = true;
	}

	if (p->state_path && p->record_state && (!last || out->serial > out->last_serial)) {
		json_t *serials = json_object_get(state, "serials");
		if (json_object_set_new(serials, recipe, json_integer((json_int_t)out->serial)) < 0)
			return ingot_fail_status(e, -ENOMEM, ENVELOPE_EXIT_IO, "out of memory");
		r = json_write_file(p->state_path, state, 0644, e);
		if (r < 0)
			return with_status(e, r, ENVELOPE_EXIT_IO);
	}
	if (manifest_out)
		*manifest_out = TAKE_PTR(m);
	return 0;
}

int envelope_read_file(const char *path, json_t **env, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r;

	r = read_file(path, ENVELOPE_FILE_MAX, &buf, &len, e);
	if (r < 0)
		return with_status(e, r, r == -EFBIG ? ENVELOPE_EXIT_MALFORMED : ENVELOPE_EXIT_IO);
	r = json_read_buf(path, buf, len, env, e);
	return r < 0 ? with_status(e, r, ENVELOPE_EXIT_MALFORMED) : 0;
}

int envelope_verify(const char *path, const struct keyring *kr, const struct verify_policy *p,
		    json_t **manifest_out, struct verify_outcome *out, ingot_error *e)
{
	_cleanup_json_ json_t *env = NULL;
	int r = envelope_read_file(path, &env, e);
	if (r < 0)
		return r;
	return envelope_verify_json(path, env, kr, p, manifest_out, out, e);
}
