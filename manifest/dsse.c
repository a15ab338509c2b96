#include "manifest/dsse.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "lib/strbuf.h"

int dsse_base64_decode(const char *in, size_t len, uint8_t **out, size_t *out_len)
{
	_cleanup_free_ char *std = NULL;
	bool url = memchr(in, '-', len) || memchr(in, '_', len);

	if (!url)
		return base64_decode(in, len, out, out_len);
	if (memchr(in, '+', len) || memchr(in, '/', len))
		return -EINVAL;   /* one alphabet per string */
	std = xmalloc(len + 1);
	for (size_t i = 0; i < len; i++)
		std[i] = in[i] == '-' ? '+' : in[i] == '_' ? '/' : in[i];
	return base64_decode(std, len, out, out_len);
}

void dsse_pae(const char *type, const void *body, size_t body_len, uint8_t **out, size_t *out_len)
{
	struct strbuf sb = STRBUF_INIT;
	size_t tlen = strlen(type);

	strbuf_init(&sb, tlen + body_len + 48);
	strbuf_addf(&sb, "DSSEv1 %zu %s %zu ", tlen, type, body_len);
	strbuf_add(&sb, body, body_len);
	*out = (uint8_t *)strbuf_detach(&sb, out_len);
}

static int subject_append(json_t *st, const json_t *file, const json_t *sha256, ingot_error *e)
{
	if (json_array_append_new(json_object_get(st, "subject"),
				  json_pack("{s:O,s:{s:O}}", "name", file, "digest", "sha256", sha256)) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	return 0;
}

/* The statement around a manifest (v1) or head (v2, ref: the manifest
 * file's name and sha256 hex) its caller has checked. */
static int statement_wrap(const json_t *manifest, const char *type, const char *ref_name,
			  const char *ref_sha256, json_t **out, ingot_error *e)
{
	json_t *image = json_object_get(manifest, "image");
	/* The subjects are the image file the manifest describes and, when
	 * the build wrote one, its SBOM, so tools that only speak in-toto can
	 * match either file to its signed statement. */
	json_t *sbom = json_object_get(manifest, "sbom");
	/* The predicate is the caller's manifest itself, not a copy: a deep
	 * copy of a large manifest (and freeing it) cost a fifth of `ingot
	 * sign`.  jansson keeps the count in the value, hence the cast; the
	 * manifest is not modified through the statement (dsse.h). */
	_cleanup_json_ json_t *st = json_pack("{s:s,s:[],s:s,s:O}", "_type", STATEMENT_TYPE,
					      "subject", "predicateType", type,
					      "predicate", (json_t *)manifest);
	_cleanup_json_ json_t *rn = ref_name ? json_string(ref_name) : NULL;
	_cleanup_json_ json_t *rs = ref_sha256 ? json_string(ref_sha256) : NULL;
	int r;

	if (!st || (ref_name && (!rn || !rs)))
		return ingot_fail(e, -ENOMEM, "out of memory");
	if ((r = subject_append(st, json_object_get(image, "file"), json_object_get(image, "sha256"), e)) < 0 ||
	    (sbom && (r = subject_append(st, json_object_get(sbom, "file"), json_object_get(sbom, "sha256"), e)) < 0) ||
	    (rn && (r = subject_append(st, rn, rs, e)) < 0))
		return r;
	*out = TAKE_PTR(st);
	return 0;
}

int statement_for_manifest(const char *name, const json_t *manifest, json_t **out,
			   ingot_error *e)
{
	int r = manifest_check(name, manifest, e);
	return r < 0 ? r : statement_wrap(manifest, MANIFEST_PREDICATE_TYPE, NULL, NULL, out, e);
}

/* A manifest subject's name is looked up beside the envelope: one file
 * name, nothing that leaves the directory. */
static bool ref_name_ok(const char *s, size_t n)
{
	return n > 0 && n <= MANIFEST_REF_NAME_MAX && strlen(s) == n && !strchr(s, '/') &&
	       strcmp(s, ".") && strcmp(s, "..");
}

/* A head is a manifest without files[]. */
static int check_head(const char *name, const json_t *head, ingot_error *e)
{
	if (json_is_object(head) && json_object_get(head, "files"))
		return ingot_fail(e, -EINVAL, "%s: files: expected none in a manifest head (the file list "
				  "is bound by its digest)", name);
	return manifest_check_head(name, head, e);
}

int statement_for_head(const char *name, const json_t *head, const char *manifest_name,
		       const uint8_t manifest_sha256[32], json_t **out, ingot_error *e)
{
	char hex[65];
	int r = check_head(name, head, e);

	if (r < 0)
		return r;
	if (!ref_name_ok(manifest_name, strlen(manifest_name)))
		return ingot_fail(e, -EINVAL, "%s: expected a manifest file name without '/', at most %u "
				  "bytes, got \"%.64s\"", name, MANIFEST_REF_NAME_MAX, manifest_name);
	hex_encode(manifest_sha256, 32, hex);
	return statement_wrap(head, MANIFEST_HEAD_PREDICATE_TYPE, manifest_name, hex, out, e);
}

/* The base64 alphabets DSSE allows (standard and URL-safe) and padding:
 * none of these is escaped by jansson's dump (no JSON_ESCAPE_SLASH). */
static const char b64_chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=";

/* What json_canonical writes after an envelope's "payload" member, given
 * the other members (rest): "\",\n" closing the payload, then the rest
 * as it dumps without its "{\n".  NULL unless "payload" sorts before
 * every other member and there is one (and when out of memory). */
static char *after_payload(const json_t *rest, size_t *len)
{
	static const char close[] = "\",\n";
	_cleanup_free_ char *tail = NULL;
	const char *key;
	json_t *v;
	size_t tlen;
	char *out;

	if (json_object_size(rest) < 1)
		return NULL;
	json_object_foreach((json_t *)rest, key, v)
		if (strcmp(key, "payload") <= 0)
			return NULL;
	if (!(tail = json_canonical(rest, &tlen)) || tlen < 2 || memcmp(tail, "{\n", 2))
		return NULL;
	out = xmalloc(sizeof(close) - 1 + tlen - 2 + 1);
	memcpy(out, close, sizeof(close) - 1);
	memcpy(out + sizeof(close) - 1, tail + 2, tlen - 2 + 1);
	*len = sizeof(close) - 1 + tlen - 2;
	return out;
}

#define ENVELOPE_HEAD "{\n  \"payload\": \""

/* The one envelope writer: json_canonical's bytes for rest plus
 * {"payload": ...}, the payload given either as its base64 (b64) or as
 * the bytes to encode (raw, encoded a chunk at a time so a large one is
 * held once, by the caller). */
static int write_envelope(const json_t *rest, const char *b64, const void *raw, size_t len,
			  const struct json_out *out, ingot_error *e)
{
	/* Whole base64 quanta a chunk: the chunks' encodings concatenate
	 * to the encoding of the whole. */
	enum { CHUNK = 3 * (16u << 10) };
	const uint8_t *p = raw;
	_cleanup_free_ char *tail = NULL;
	size_t tlen;
	int r;

	if (!(tail = after_payload(rest, &tlen)))
		return ingot_fail(e, -EINVAL, "envelope: members other than the payload must sort after it");
	if ((r = out->write(out->ctx, ENVELOPE_HEAD, sizeof(ENVELOPE_HEAD) - 1, e)) < 0)
		return r;
	if (b64 && (r = out->write(out->ctx, b64, len, e)) < 0)
		return r;
	for (size_t off = 0; !b64 && off < len; off += CHUNK) {
		size_t n = len - off < CHUNK ? len - off : CHUNK, k;
		_cleanup_free_ char *enc = base64_encode(p + off, n, &k);
		if (!enc)
			return ingot_fail(e, -ENOMEM, "out of memory");
		if ((r = out->write(out->ctx, enc, k, e)) < 0)
			return r;
	}
	return out->write(out->ctx, tail, tlen, e);
}

char *envelope_canonical(const json_t *env, size_t *len)
{
	const json_t *pl = json_object_get(env, "payload");
	_cleanup_json_ json_t *rest = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *b64 = json_string_value(pl);
	size_t plen = json_string_length(pl);
	ingot_error e = { 0 };

	/* The splice is exact only when the payload dumps verbatim and
	 * sorts first (write_envelope checks the rest); anything else takes
	 * the generic path. */
	if (!b64 || strspn(b64, b64_chars) != plen)
		return json_canonical(env, len);
	rest = json_copy((json_t *)env);
	if (!rest || json_object_del(rest, "payload") < 0)
		return NULL;
	strbuf_init(&sb, plen + 1024);
	if (write_envelope(rest, b64, NULL, plen, &(struct json_out){ json_out_strbuf, &sb }, &e) < 0)
		return e.code == -EINVAL ? json_canonical(env, len) : NULL;
	return strbuf_detach(&sb, len);
}

int envelope_write(const json_t *rest, const void *payload, size_t len, const struct json_out *out,
		   ingot_error *e)
{
	return write_envelope(rest, NULL, payload, len, out, e);
}

/* Signature entries are {"keyid","sig"}; DSSE allows keyid to be absent
 * or empty, which we accept on input (the verifier then tries every
 * trusted key) but never write. */
static int check_sig_entry(const char *name, size_t i, const json_t *s, ingot_error *e)
{
	const char *key;
	json_t *v, *sig, *keyid;

	if (!json_is_object(s))
		return ingot_fail(e, -EINVAL, "%s: signatures[%zu]: expected an object", name, i);
	json_object_foreach((json_t *)s, key, v)
		if (strcmp(key, "keyid") && strcmp(key, "sig"))
			return ingot_fail(e, -EINVAL, "%s: signatures[%zu]: unknown field '%.64s'",
					  name, i, key);
	sig = json_object_get(s, "sig");
	keyid = json_object_get(s, "keyid");
	if (!json_is_string(sig))
		return ingot_fail(e, -EINVAL, "%s: signatures[%zu].sig: expected a base64 string", name, i);
	if (json_string_length(sig) > ENVELOPE_SIG_B64_MAX)
		return ingot_fail(e, -E2BIG, "%s: signatures[%zu].sig: %zu characters, limit %u", name,
				  i, json_string_length(sig), ENVELOPE_SIG_B64_MAX);
	if (keyid && !json_is_string(keyid))
		return ingot_fail(e, -EINVAL, "%s: signatures[%zu].keyid: expected a string", name, i);
	if (keyid && json_string_length(keyid) > ENVELOPE_TYPE_MAX)
		return ingot_fail(e, -E2BIG, "%s: signatures[%zu].keyid: %zu characters, limit %u", name,
				  i, json_string_length(keyid), ENVELOPE_TYPE_MAX);
	return 0;
}

int envelope_parse(const char *name, const json_t *env, uint8_t **payload, size_t *payload_len,
		   ingot_error *e)
{
	const char *key;
	json_t *v, *type, *pl, *sigs;
	size_t i;
	int r;

	if (!json_is_object(env))
		return ingot_fail(e, -EINVAL, "%s: expected a DSSE envelope (JSON object)", name);
	json_object_foreach((json_t *)env, key, v)
		if (strcmp(key, "payloadType") && strcmp(key, "payload") && strcmp(key, "signatures"))
			return ingot_fail(e, -EINVAL, "%s: unknown field '%.64s' (expected payloadType, "
					  "payload, signatures)", name, key);
	type = json_object_get(env, "payloadType");
	pl = json_object_get(env, "payload");
	sigs = json_object_get(env, "signatures");
	if (!json_is_string(type))
		return ingot_fail(e, -EINVAL, "%s: payloadType: expected a string", name);
	if (json_string_length(type) > ENVELOPE_TYPE_MAX ||
	    strlen(json_string_value(type)) != json_string_length(type))
		return ingot_fail(e, -E2BIG, "%s: payloadType: expected at most %u characters without "
				  "NUL, got %zu", name, ENVELOPE_TYPE_MAX, json_string_length(type));
	if (!json_is_string(pl))
		return ingot_fail(e, -EINVAL, "%s: payload: expected a base64 string", name);
	if (json_string_length(pl) > base64_encoded_len(ENVELOPE_PAYLOAD_MAX))
		return ingot_fail(e, -E2BIG, "%s: payload: %zu base64 characters, limit %zu (%u MiB)",
				  name, json_string_length(pl), base64_encoded_len(ENVELOPE_PAYLOAD_MAX),
				  ENVELOPE_PAYLOAD_MAX >> 20);
	if (!json_is_array(sigs))
		return ingot_fail(e, -EINVAL, "%s: signatures: expected an array", name);
	if (json_array_size(sigs) > ENVELOPE_MAX_SIGS)
		return ingot_fail(e, -E2BIG, "%s: signatures: %zu entries, limit %u", name,
				  json_array_size(sigs), ENVELOPE_MAX_SIGS);
	json_array_foreach(sigs, i, v)
		if ((r = check_sig_entry(name, i, v, e)) < 0)
			return r;
	r = dsse_base64_decode(json_string_value(pl), json_string_length(pl), payload, payload_len);
	if (r < 0)
		return ingot_fail(e, r, "%s: payload: expected strict standard base64 or its URL-safe "
				  "form", name);
	return 0;
}

/* Subject i must name the file the manifest's member what (image, sbom)
 * describes, with its sha256. */
static int check_subject(const char *name, size_t i, const json_t *s, const json_t *file,
			 const json_t *sha256, const char *what, ingot_error *e)
{
	const json_t *dig = json_object_get(s, "digest");

	if (!json_is_string(json_object_get(s, "name")) || !json_is_string(json_object_get(dig, "sha256")))
		return ingot_fail(e, -EINVAL, "%s: statement.subject[%zu]: expected {\"name\": string, "
				  "\"digest\": {\"sha256\": string}}", name, i);
	if (!json_equal(json_object_get(s, "name"), file))
		return ingot_fail(e, -EINVAL, "%s: statement.subject[%zu].name: \"%.64s\" but the manifest's "
				  "%s.file is \"%.64s\"", name, i, json_string_value(json_object_get(s, "name")),
				  what, json_string_value(file));
	if (!json_equal(json_object_get(dig, "sha256"), sha256))
		return ingot_fail(e, -EINVAL, "%s: statement.subject[%zu].digest.sha256: %.64s but the "
				  "manifest's %s.sha256 is %s", name, i,
				  json_string_value(json_object_get(dig, "sha256")), what, json_string_value(sha256));
	return 0;
}

/* v2's last subject: the manifest file, a plain file name and a sha256. */
static int check_ref_subject(const char *name, size_t i, const json_t *s, struct manifest_ref *ref,
			     ingot_error *e)
{
	const json_t *n = json_object_get(s, "name");
	const json_t *d = json_object_get(json_object_get(s, "digest"), "sha256");

	if (!json_is_string(n) || !ref_name_ok(json_string_value(n), json_string_length(n)))
		return ingot_fail(e, -EINVAL, "%s: statement.subject[%zu].name: expected the manifest's file "
				  "name (no '/', at most %u bytes), got %s%.64s%s", name, i, MANIFEST_REF_NAME_MAX,
				  json_is_string(n) ? "\"" : "", json_is_string(n) ? json_string_value(n) : "a non-string",
				  json_is_string(n) ? "\"" : "");
	if (!json_is_string(d) || !is_sha256_hex(json_string_value(d)))
		return ingot_fail(e, -EINVAL, "%s: statement.subject[%zu].digest.sha256: expected 64 "
				  "lower-case hex digits (the manifest file's sha256)", name, i);
	snprintf(ref->name, sizeof(ref->name), "%s", json_string_value(n));
	snprintf(ref->sha256, sizeof(ref->sha256), "%s", json_string_value(d));
	ref->subject = i;
	return 0;
}

/* "\"X\"" or "a non-string", for messages. */
#define GOT(v) json_is_string(v) ? "\"" : "", json_is_string(v) ? json_string_value(v) : "a non-string", \
		json_is_string(v) ? "\"" : ""

int statement_parse(const char *name, const uint8_t *payload, size_t len, const char *const *ptypes,
		    json_t **statement, ingot_error *e)
{
	_cleanup_json_ json_t *st = NULL;
	json_error_t je;
	json_t *v;
	const char *key;
	size_t i;

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
	if (!json_is_string(v) || !statement_type_ok(json_string_value(v)))
		return ingot_fail(e, -EINVAL, "%s: statement._type: expected \"%s\" (or v0.1), got %s%.64s%s", name,
				  STATEMENT_TYPE, GOT(v));
	v = json_object_get(st, "predicateType");
	for (i = 0; ptypes[i] && !(json_is_string(v) && !strcmp(json_string_value(v), ptypes[i])); i++)
		;
	if (!ptypes[i])
		return ingot_fail(e, -EINVAL, "%s: statement.predicateType: expected \"%s\"%s%s%s, got %s%.64s%s",
				  name, ptypes[0], ptypes[1] ? " (or \"" : "", ptypes[1] ? ptypes[1] : "",
				  ptypes[1] ? "\")" : "", GOT(v));
	if (!json_is_object(json_object_get(st, "predicate")))
		return ingot_fail(e, -EINVAL, "%s: statement.predicate: %s, expected an object", name,
				  json_object_get(st, "predicate") ? "not an object" : "missing");
	*statement = TAKE_PTR(st);
	return 0;
}

int envelope_statement_parse(const char *name, const uint8_t *payload, size_t len,
			     enum manifest_level level, json_t **statement, json_t **manifest,
			     struct manifest_ref *ref, ingot_error *e)
{
	static const char *const ptypes[] = { MANIFEST_HEAD_PREDICATE_TYPE, MANIFEST_PREDICATE_TYPE, NULL };
	_cleanup_json_ json_t *st = NULL;
	struct manifest_ref tmp;
	json_t *subj, *pred, *image, *sbom;
	bool v2;
	size_t n;
	int r;

	if (!ref)
		ref = &tmp;
	memset(ref, 0, sizeof(*ref));
	if ((r = statement_parse(name, payload, len, ptypes, &st, e)) < 0)
		return r;
	v2 = !strcmp(json_string_value(json_object_get(st, "predicateType")), MANIFEST_HEAD_PREDICATE_TYPE);
	pred = json_object_get(st, "predicate");
	char where[512];
	snprintf(where, sizeof(where), "%s: predicate", name);
	/* A head is small and always ingot's: checked in full even for
	 * review, which needs its subjects to find the file list. */
	r = v2 ? check_head(where, pred, e) : manifest_check_level(where, pred, level, e);
	if (r < 0)
		return r;
	if (level != MANIFEST_FULL && !v2)   /* review: what it claims, not whether it is whole */
		goto done;

	subj = json_object_get(st, "subject");
	sbom = json_object_get(pred, "sbom");
	n = 1 + (sbom != NULL) + v2;
	if (!json_is_array(subj) || json_array_size(subj) != n)
		return ingot_fail(e, -EINVAL, "%s: statement.subject: expected an array of %s", name,
				  n == 1 ? "one entry (the image)" : n == 3 ? "three entries (the image, the SBOM, the manifest)"
				  : sbom ? "two entries (the image, the SBOM)" : "two entries (the image, the manifest)");
	if (sbom && (r = check_subject(name, 1, json_array_get(subj, 1), json_object_get(sbom, "file"),
				       json_object_get(sbom, "sha256"), "sbom", e)) < 0)
		return r;
	image = json_object_get(pred, "image");
	if ((r = check_subject(name, 0, json_array_get(subj, 0), json_object_get(image, "file"),
			       json_object_get(image, "sha256"), "image", e)) < 0)
		return r;
	if (v2 && (r = check_ref_subject(name, n - 1, json_array_get(subj, n - 1), ref, e)) < 0)
		return r;
done:
	*manifest = json_incref(pred);
	if (statement)
		*statement = TAKE_PTR(st);
	return 0;
}

/* The largest envelope ingot writes (largest payload, every signature at
 * its limit) must be one every reader accepts. */
_Static_assert(4ull * ((ENVELOPE_PAYLOAD_MAX + 2ull) / 3) +
	       (uint64_t)ENVELOPE_MAX_SIGS * (ENVELOPE_SIG_B64_MAX + ENVELOPE_TYPE_MAX + 64) +
	       4096 <= ENVELOPE_FILE_MAX, "ENVELOPE_FILE_MAX below the largest envelope");

bool envelope_payload_type_ok(const char *type)
{
	return !strcmp(type, ENVELOPE_PAYLOAD_TYPE) || !strcmp(type, ENVELOPE_PAYLOAD_TYPE_V1);
}

bool statement_type_ok(const char *type)
{
	return !strcmp(type, STATEMENT_TYPE) || !strcmp(type, STATEMENT_TYPE_V01);
}

/* verificationMaterial: a public key (its hint is only a hint, as a DSSE
 * keyid is), nothing keyless. */
static int bundle_material(const char *name, const json_t *vm, ingot_error *e)
{
	static const char *const known[] = { "publicKey", "x509CertificateChain", "certificate", "tlogEntries",
					     "timestampVerificationData" };
	const char *key;
	json_t *v;

	if (!json_is_object(vm))
		return ingot_fail(e, -EINVAL, "%s: verificationMaterial: expected an object", name);
	json_object_foreach((json_t *)vm, key, v) {
		size_t i = 0;
		while (i < ARRAY_SIZE(known) && strcmp(key, known[i]))
			i++;
		if (i == ARRAY_SIZE(known))
			return ingot_fail(e, -EINVAL, "%s: verificationMaterial: unknown field '%.64s'", name, key);
		if (i == 1 || i == 2)
			return ingot_fail(e, -EPROTONOSUPPORT, "%s: verificationMaterial.%s: expected publicKey, got a keyless (Fulcio certificate) bundle, which needs Sigstore's trust root: not supported, sign with a key in the keyring",
					  name, key);
	}
	if (!json_is_object(json_object_get(vm, "publicKey")))
		return ingot_fail(e, -EINVAL, "%s: verificationMaterial.publicKey: expected an object ({\"hint\": ...})", name);
	return 0;
}

/* The media types of bundles v0.1 to v0.3, exactly (protobuf-specs): a
 * later or unknown version may carry what this reader does not check. */
static bool bundle_media_type_ok(const char *mt)
{
	static const char *const known[] = {
		SIGSTORE_BUNDLE_PREFIX "+json;version=0.1", SIGSTORE_BUNDLE_PREFIX "+json;version=0.2",
		SIGSTORE_BUNDLE_PREFIX "+json;version=0.3", SIGSTORE_BUNDLE_PREFIX ".v0.3+json",
	};
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcmp(mt, known[i]))
			return true;
	return false;
}

int sigstore_bundle_envelope(const char *name, const json_t *doc, json_t **env, ingot_error *e)
{
	const json_t *mt = json_object_get(doc, "mediaType"), *dsse;
	const char *key;
	json_t *v;
	int r;

	*env = NULL;
	if (!json_is_object(doc) || !mt)
		return 0;
	if (!json_is_string(mt) || !bundle_media_type_ok(json_string_value(mt)))
		return ingot_fail(e, -EINVAL, "%s: mediaType: expected a Sigstore bundle v0.1 to v0.3 (\"%s.v0.3+json\" or \"%s+json;version=0.1\", 0.2, 0.3), got %s%.64s%s",
				  name, SIGSTORE_BUNDLE_PREFIX, SIGSTORE_BUNDLE_PREFIX, json_is_string(mt) ? "\"" : "",
				  json_is_string(mt) ? json_string_value(mt) : "a non-string", json_is_string(mt) ? "\"" : "");
	json_object_foreach((json_t *)doc, key, v)
		if (strcmp(key, "mediaType") && strcmp(key, "verificationMaterial") && strcmp(key, "dsseEnvelope"))
			return ingot_fail(e, -EINVAL, "%s: unknown field '%.64s' in a Sigstore bundle (expected mediaType, verificationMaterial, dsseEnvelope%s)",
					  name, key, strcmp(key, "messageSignature") ? "" : "; a messageSignature bundle signs a blob, not a statement");
	if ((r = bundle_material(name, json_object_get(doc, "verificationMaterial"), e)) < 0)
		return r;
	dsse = json_object_get(doc, "dsseEnvelope");
	if (!json_is_object(dsse))
		return ingot_fail(e, -EINVAL, "%s: dsseEnvelope: expected the DSSE envelope object", name);
	*env = json_incref((json_t *)dsse);
	return 1;
}

/* A manifest or envelope file's bytes as JSON, a Sigstore bundle as the
 * envelope it holds, within the limit of what it is. */
static int parse_doc(const char *path, const char *buf, size_t len, json_t **doc, ingot_error *e)
{
	_cleanup_json_ json_t *j = NULL, *env = NULL;
	int r = json_read_buf(path, buf, len, &j, e);

	if (r < 0)
		return r;
	if ((r = sigstore_bundle_envelope(path, j, &env, e)) < 0)
		return r == -ENOMEM ? r : -EBADMSG;
	if (r > 0) {
		json_decref(j);
		j = TAKE_PTR(env);
	}
	if (len > MANIFEST_FILE_MAX && !(json_is_object(j) && json_object_get(j, "payloadType")))
		return ingot_fail(e, -EFBIG, "%s: %zu bytes, a manifest may have at most %u", path, len,
				  MANIFEST_FILE_MAX);
	*doc = TAKE_PTR(j);
	return 0;
}

int manifest_read_file(const char *path, json_t **doc, uint8_t sha256[32], ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = read_file(path, ENVELOPE_FILE_MAX, &buf, &len, e);

	if (r < 0 || (r = parse_doc(path, buf, len, doc, e)) < 0)
		return r;
	if (sha256)
		sha256_buf(buf, len, sha256);
	return 0;
}

/* The next top-level member of canonical JSON after p: its "\n", or
 * NULL.  A line break, two spaces and a quote start one and nothing else
 * (deeper lines are indented more; strings escape line breaks). */
static const char *next_member(const char *p, const char *end)
{
	while ((p = memchr(p, '\n', (size_t)(end - p))) && end - p >= 4) {
		if (p[1] == ' ' && p[2] == ' ' && p[3] == '"')
			return p;
		p++;
	}
	return NULL;
}

/* The head of a canonical manifest (buf), files[] cut from the bytes:
 * 1 and *head, or 0 when buf is not a canonical manifest with files[]
 * (the caller parses it whole).  files[] runs from its top-level member
 * to its closing "\n  ]" (only top-level lines are indented by two;
 * memmem of that needle is fast, unlike a scan line by line of the file
 * list, which was a fifth of `ingot sign`); what is left must be the
 * head's canonical bytes exactly, or nothing is cut. */
static int head_cut(const char *path, const char *buf, size_t len, json_t **head, ingot_error *e)
{
	static const char files[] = "\n  \"files\": ", close[] = "\n  ],";
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_json_ json_t *h = NULL;
	_cleanup_free_ char *canon = NULL;
	const char *end = buf + len, *f = buf, *v, *next;
	size_t clen;
	int r;

	if (len > MANIFEST_FILE_MAX || len < 2 || memcmp(buf, "{\n", 2))
		return 0;
	while ((f = next_member(f, end)) && ((size_t)(end - f) < sizeof(files) - 1 ||
					     memcmp(f, files, sizeof(files) - 1)))
		f++;
	if (!f || (size_t)(end - (v = f + sizeof(files) - 1)) < 3)
		return 0;
	if (!memcmp(v, "[],", 3))
		next = v + 3;
	else if (v[0] == '[' && v[1] == '\n' &&
		 (next = memmem(v, (size_t)(end - v), close, sizeof(close) - 1)))
		next += sizeof(close) - 1;
	else
		return 0;
	if ((size_t)(end - next) < 4 || next_member(next, end) != next)
		return 0;
	strbuf_init(&sb, (size_t)(f - buf) + (len - (size_t)(next - buf)) + 1);
	strbuf_add(&sb, buf, (size_t)(f - buf));
	strbuf_add(&sb, next, len - (size_t)(next - buf));
	if (!(h = json_loadb(sb.buf, sb.len, JSON_REJECT_DUPLICATES, NULL)) || !json_is_object(h))
		return 0;
	if (!(canon = json_canonical(h, &clen)))
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (clen != sb.len || memcmp(canon, sb.buf, clen))
		return 0;
	if ((r = check_head(path, h, e)) < 0)
		return r;
	*head = TAKE_PTR(h);
	return 1;
}

/* A file mapped (read-only), or read when it cannot be: a manifest
 * is hashed and cut without being copied (read() of it was a sixth of
 * `ingot sign`). */
struct file_map {
	const char *p;
	size_t len;
	bool mapped;
};

static void file_unmap(struct file_map *m)
{
	if (m->mapped)
		munmap((void *)m->p, m->len);
}

static int map_file(const char *path, struct file_map *m, char **buf, size_t *len, ingot_error *e)
{
	struct stat st;
	_cleanup_close_ int fd = open_regular(path, 0, &st, e);
	void *p;
	int r;

	m->mapped = false;
	if (fd < 0)
		return fd;
	if (st.st_size > 0 && (uint64_t)st.st_size <= ENVELOPE_FILE_MAX &&
	    (p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0)) != MAP_FAILED) {
		*m = (struct file_map){ p, (size_t)st.st_size, true };
		*len = m->len;
		return 0;
	}
	/* Empty or over the limit: read_fd says which. */
	if ((r = read_fd(fd, path, &st, ENVELOPE_FILE_MAX, buf, len, e)) < 0)
		return r;
	*m = (struct file_map){ *buf, *len, false };
	return 0;
}

int manifest_read_signable(const char *path, json_t **env, json_t **head, uint8_t sha256[32],
			   ingot_error *e)
{
	_cleanup_(file_unmap) struct file_map map = { 0 };
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *doc = NULL, *h = NULL;
	size_t len;
	int r;

	*env = *head = NULL;
	if ((r = map_file(path, &map, &buf, &len, e)) < 0 || (r = head_cut(path, map.p, len, head, e)) < 0)
		return r;
	sha256_buf(map.p, len, sha256);
	if (r > 0)
		return 0;
	if ((r = parse_doc(path, map.p, len, &doc, e)) < 0)
		return r;
	if (json_is_object(doc) && json_object_get(doc, "payloadType")) {
		*env = TAKE_PTR(doc);
		return 0;
	}
	/* Not as ingot writes it: checked whole, as before. */
	if ((r = manifest_check(path, doc, e)) < 0)
		return r;
	if (!(h = json_copy(doc)) || json_object_del(h, "files") < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	*head = TAKE_PTR(h);
	return 0;
}

char *manifest_ref_path(const char *envelope_path, const char *path, const struct manifest_ref *ref)
{
	_cleanup_free_ char *dir = NULL;

	if (path)
		return xstrdup(path);
	dir = path_dirname(envelope_path);
	return path_join(dir, ref->name);
}

int manifest_sbom_check(const char *envelope_path, const char *path, const json_t *manifest, char **where,
			ingot_error *e)
{
	const json_t *sbom = json_object_get(manifest, "sbom");
	const char *file = json_string_value(json_object_get(sbom, "file"));
	const char *want = json_string_value(json_object_get(sbom, "sha256"));
	_cleanup_free_ char *dir = NULL;
	uint8_t d[32];
	char hex[65];
	int r;

	*where = NULL;
	if (!sbom) {
		if (path)
			return ingot_fail(e, -ENOENT, "%s: the signed manifest binds no SBOM (no \"sbom\" member)", path);
		return 1;
	}
	if (!file || !want || !is_sha256_hex(want))
		return ingot_fail(e, -EINVAL, "%s: manifest sbom: expected a file name and a sha256", envelope_path);
	if (path) {
		*where = xstrdup(path);
	} else {
		/* beside the envelope: a name, never a path out of its directory */
		if (!*file || strchr(file, '/') || !strcmp(file, ".") || !strcmp(file, ".."))
			return ingot_fail(e, -EINVAL, "%s: manifest sbom.file: expected a plain file name, got '%.64s'",
					  envelope_path, file);
		dir = path_dirname(envelope_path);
		*where = path_join(dir, file);
		if (access(*where, F_OK) < 0 && errno == ENOENT)
			return 1;
	}
	if ((r = sha256_file(*where, d, NULL, e)) < 0)
		return ingot_prefix(e, "SBOM");
	hex_encode(d, sizeof(d), hex);
	if (strcmp(hex, want))
		return ingot_fail(e, -EILSEQ, "%s: sha256: expected %s (sbom.sha256 signed in %s), got %s", *where,
				  want, envelope_path, hex);
	return 0;
}

/* The first member, files[] aside, in which the bound manifest m and the
 * signed head differ (NULL: none). */
static const char *head_differs(const json_t *m, const json_t *head)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)m, key, v)
		if (strcmp(key, "files") && !json_equal(v, json_object_get(head, key)))
			return key;
	json_object_foreach((json_t *)head, key, v)
		if (!json_object_get(m, key))
			return key;
	return NULL;
}

int manifest_ref_load(const char *envelope_path, const char *path, const struct manifest_ref *ref,
		      const json_t *head, enum manifest_level level, json_t **full, ingot_error *e)
{
	_cleanup_free_ char *p = manifest_ref_path(envelope_path, path, ref);
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *m = NULL;
	char hex[65];
	const char *key;
	uint8_t d[32];
	size_t len;
	int r;

	/* Only the digest: a streamed hash, the file never held. */
	if (!full)
		r = sha256_file(p, d, NULL, e);
	else if ((r = read_file(p, MANIFEST_FILE_MAX, &buf, &len, e)) == 0)
		sha256_buf(buf, len, d);
	if (r < 0)
		return ingot_prefix(e, "%s: statement.subject[%zu], the file list", envelope_path, ref->subject);
	hex_encode(d, sizeof(d), hex);
	if (strcmp(hex, ref->sha256))
		return ingot_fail(e, -EILSEQ, "%s: sha256: expected %s (statement.subject[%zu].digest.sha256 "
				  "signed in %s), got %s", p, ref->sha256, ref->subject, envelope_path, hex);
	if (!full)
		return 0;
	if ((r = json_read_buf(p, buf, len, &m, e)) < 0 || (r = manifest_check_level(p, m, level, e)) < 0)
		return r;
	if ((key = head_differs(m, head)))
		return ingot_fail(e, -EINVAL, "%s: %.64s: expected the member signed in %s's statement, "
				  "got another", p, key, envelope_path);
	*full = TAKE_PTR(m);
	return 0;
}
