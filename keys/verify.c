/* Verification of a signed manifest.  Order matters: the signatures are
 * checked over the envelope bytes as found before anything in the payload
 * is interpreted (DSSE's rule), then what the signed statement says is
 * checked against the policy: expiry, rollback, the files on disk. */
#include "keys/envelope.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attest/predict.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/time.h"

#define STATE_SCHEMA "ingot.verify-state/v1"
#define STATE_FILE_MAX (1u << 20)

/* ---- signatures -------------------------------------------------------- */

/* The keyring key whose signature sig is: the key keyid names when it
 * names one (a signature must not count as "by" a key other than the one
 * it claims); otherwise, a keyid being only a hint (DSSE: absent, or
 * another signer's convention), whichever trusted key verifies it.
 * *named tells which case it was. */
static const struct keyring_key *find_signer(const struct keyring *kr, const char *kid,
					     const uint8_t *pae, size_t pae_len, const uint8_t *sig,
					     size_t siglen, const struct keyring_key **named)
{
	*named = kid && *kid ? keyring_find(kr, kid) : NULL;
	if (*named)
		return key_verify((*named)->key->pkey, pae, pae_len, sig, siglen) ? *named : NULL;
	for (size_t k = 0; k < kr->n; k++)
		if (key_verify(kr->keys[k].key->pkey, pae, pae_len, sig, siglen))
			return &kr->keys[k];
	return NULL;
}

/* Count kk toward the threshold once, whatever number of signatures it
 * made (key ids are of the canonical key: one key, one id). */
static void count_signer(struct verify_outcome *out, const struct keyring_key *kk, size_t i,
			 struct strbuf *why)
{
	for (unsigned j = 0; j < out->valid; j++) {
		if (!strcmp(out->signers[j], kk->key->keyid)) {
			strbuf_addf(why, "; signatures[%zu]: duplicate signature by %s, counted once",
				    i, kk->name);
			return;
		}
	}
	memcpy(out->signers[out->valid], kk->key->keyid, KEYID_HEX_LEN + 1);
	out->signer_names[out->valid++] = kk->name;
}

static int check_signatures(const char *name, const json_t *env, const uint8_t *payload,
			    size_t len, const struct keyring *kr, struct verify_outcome *out,
			    ingot_error *e)
{
	_cleanup_free_ uint8_t *pae = NULL;
	_cleanup_strbuf_ struct strbuf why = STRBUF_INIT;
	json_t *sigs = json_object_get(env, "signatures"), *s;
	size_t pae_len, i;

	/* Fail closed: a keyring with roles read whole has no threshold. */
	if (!kr->threshold)
		return ingot_fail_kind(e, -ENOKEY, ENVELOPE_FAIL_SIGNATURE, "%s: keyring %s was read for no role: "
				       "it verifies nothing", name, kr->file);
	strbuf_init(&why, 128);
	dsse_pae(json_string_value(json_object_get(env, "payloadType")), payload, len, &pae, &pae_len);
	out->threshold = kr->threshold;
	out->valid = 0;

	json_array_foreach(sigs, i, s) {
		_cleanup_free_ uint8_t *sig = NULL;
		const json_t *js = json_object_get(s, "sig");
		const char *kid = json_string_value(json_object_get(s, "keyid"));
		const struct keyring_key *signer, *named;
		size_t siglen;

		if (dsse_base64_decode(json_string_value(js), json_string_length(js), &sig, &siglen) < 0) {
			strbuf_addf(&why, "; signatures[%zu]: sig is not base64", i);
			continue;
		}
		signer = find_signer(kr, kid, pae, pae_len, sig, siglen, &named);
		if (signer)
			count_signer(out, signer, i, &why);
		else if (named)
			strbuf_addf(&why, "; signatures[%zu]: invalid signature by %s", i, named->name);
		else if (kid && *kid)
			strbuf_addf(&why, "; signatures[%zu]: keyid %.16s... is not in the keyring%s%s and no "
				    "trusted key verifies it", i, kid, kr->role ? " for role " : "", kr->role ? kr->role : "");
		else
			strbuf_addf(&why, "; signatures[%zu]: no trusted key verifies it", i);
	}
	if (out->valid < kr->threshold)
		return ingot_fail_kind(e, -EPERM, ENVELOPE_FAIL_SIGNATURE,
					 "%s: signatures: %u valid from distinct trusted keys, threshold %u "
					 "(keyring %s%s%s)%s", name, out->valid, kr->threshold, kr->file,
					 kr->role ? ", role " : "", kr->role ? kr->role : "",
					 json_array_size(sigs) ? why.buf : "; the envelope has no signatures");
	return 0;
}

/* ---- rollback state ---------------------------------------------------- */

static int state_load(const char *path, json_t **out, ingot_error *e)
{
	_cleanup_json_ json_t *st = NULL;
	json_t *serials, *promotions, *v;
	const char *key;
	int r;

	r = json_read_file_max(path, STATE_FILE_MAX, &st, e);
	/* No file yet (a first boot): a fresh state, with every section a
	 * later load has, so that recording into it works (only ENOENT). */
	if (r == -ENOENT) {
		*out = json_pack("{s:s,s:{},s:{}}", "schema", STATE_SCHEMA, "serials", "promotions");
		return *out ? 0 : ingot_fail(e, -ENOMEM, "out of memory");
	}
	if (r < 0)
		return r;
	serials = json_object_get(st, "serials");
	promotions = json_object_get(st, "promotions");
	if (!json_is_object(st) || !json_is_string(json_object_get(st, "schema")) ||
	    strcmp(json_string_value(json_object_get(st, "schema")), STATE_SCHEMA) ||
	    !json_is_object(serials) || (promotions && !json_is_object(promotions)))
		return ingot_fail(e, -EINVAL, "%s: expected a state file {\"schema\":\"%s\",\"serials\":{...}"
				  "[,\"promotions\":{...}]}", path, STATE_SCHEMA);
	json_object_foreach(serials, key, v)
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return ingot_fail(e, -EINVAL, "%s: serials.%.64s: expected a non-negative integer",
					  path, key);
	json_object_foreach(promotions, key, v)
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return ingot_fail(e, -EINVAL, "%s: promotions.%.64s: expected a non-negative integer",
					  path, key);
	/* Files written before promotion serials were recorded have none. */
	if (!promotions && json_object_set_new(st, "promotions", json_object()) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	*out = TAKE_PTR(st);
	return 0;
}

static int state_status(ingot_error *e, int r)
{
	return ingot_set_kind(e, r, r == -EINVAL || r == -EBADMSG ? ENVELOPE_FAIL_MALFORMED : ENVELOPE_FAIL_IO);
}

/* Raise section.key to serial in the state file (one atomic write),
 * never lowering what is there, even if another run raced ahead. */
static int state_raise(const char *path, const char *section, const char *key, uint64_t serial,
		       ingot_error *e)
{
	_cleanup_json_ json_t *state = NULL;
	json_t *obj, *last;
	int r = state_load(path, &state, e);

	if (r < 0)
		return state_status(e, r);
	obj = json_object_get(state, section);
	last = json_object_get(obj, key);
	if (last && (uint64_t)json_integer_value(last) >= serial)
		return 0;
	if (json_object_set_new(obj, key, json_integer((json_int_t)serial)) < 0)
		return ingot_fail_kind(e, -ENOMEM, ENVELOPE_FAIL_IO, "out of memory");
	r = json_write_file(path, state, 0644, e);
	return r < 0 ? ingot_set_kind(e, r, ENVELOPE_FAIL_IO) : 0;
}

int state_promotion_serial(const char *state_path, const char *ring, uint64_t *last, ingot_error *e)
{
	_cleanup_json_ json_t *state = NULL;
	int r = state_load(state_path, &state, e);

	if (r < 0)
		return state_status(e, r);
	*last = (uint64_t)json_integer_value(json_object_get(json_object_get(state, "promotions"), ring));
	return 0;
}

int state_record_promotion(const char *state_path, const char *ring, uint64_t serial, ingot_error *e)
{
	return state_raise(state_path, "promotions", ring, serial, e);
}

/* ---- the whole check --------------------------------------------------- */

static int check_expiry(const char *name, const json_t *m, time_t now,
			struct verify_outcome *out, ingot_error *e)
{
	const char *expires = json_string_value(json_object_get(m, "expires"));
	char buf[TIME_RFC3339_LEN];

	if (!expires)
		return 0;
	if (time_parse(expires, &out->expires) < 0)   /* manifest_check guarantees it parses */
		return ingot_fail_kind(e, -EINVAL, ENVELOPE_FAIL_MALFORMED, "%s: expires: bad time",
					 name);
	out->has_expiry = true;
	if (now >= out->expires)
		return ingot_fail_kind(e, -ETIME, ENVELOPE_FAIL_EXPIRED,
					 "%s: manifest expired at %s (now %s)", name, expires,
					 time_format(now, buf));
	return 0;
}

static int check_rollback(const char *name, const char *state_path, struct verify_outcome *out,
			  ingot_error *e)
{
	_cleanup_json_ json_t *state = NULL;
	json_t *last;
	int r = state_load(state_path, &state, e);

	if (r < 0)
		return state_status(e, r);
	last = json_object_get(json_object_get(state, "serials"), out->recipe);
	out->last_serial = last ? (uint64_t)json_integer_value(last) : 0;
	if (last && out->serial < out->last_serial)
		return ingot_fail_kind(e, -ESTALE, ENVELOPE_FAIL_ROLLBACK,
					 "%s: serial %" PRIu64 " is older than serial %" PRIu64
					 " last seen for \"%s\" (state file %s): refusing a rollback",
					 name, out->serial, out->last_serial, out->recipe, state_path);
	return 0;
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
		return ingot_set_kind(e, r, r == -ENOMEM ? ENVELOPE_FAIL_IO : ENVELOPE_FAIL_MALFORMED);
	r = check_signatures(name, env, pl, len, kr, out, e);
	if (r < 0)
		return r;
	type = json_string_value(json_object_get(env, "payloadType"));
	if (!envelope_payload_type_ok(type))
		return ingot_fail_kind(e, -EINVAL, ENVELOPE_FAIL_MALFORMED,
					 "%s: payloadType: expected \"%s\" or \"%s\", got \"%.64s\"", name,
					 ENVELOPE_PAYLOAD_TYPE, ENVELOPE_PAYLOAD_TYPE_V1, type);
	*payload = TAKE_PTR(pl);
	*payload_len = len;
	return 0;
}

/* A v2 statement's file list: its digest, and unless only that was
 * asked for, the whole manifest in place of the head. */
static int check_file_list(const char *name, const struct verify_policy *p, struct verified_manifest *vm,
			   struct verify_outcome *out, ingot_error *e)
{
	json_t *full = NULL;
	int r;

	if (!vm->ref.name[0] || p->file_list_use == FILE_LIST_HEAD)
		return 0;
	r = manifest_ref_load(name, p->file_list, &vm->ref, vm->manifest, MANIFEST_FULL,
			      p->file_list_use == FILE_LIST_DIGEST ? NULL : &full, e);
	if (r < 0)
		return ingot_set_kind(e, r, r == -EILSEQ ? ENVELOPE_FAIL_DIGEST :
				      r == -EINVAL || r == -EBADMSG || r == -EFBIG ? ENVELOPE_FAIL_MALFORMED
										  : ENVELOPE_FAIL_IO);
	if (full) {
		json_decref(vm->manifest);
		vm->manifest = full;
	}
	out->file_list = true;
	return 0;
}

void verified_manifest_free(struct verified_manifest *vm)
{
	free(vm->payload);
	json_decref(vm->statement);
	json_decref(vm->manifest);
	memset(vm, 0, sizeof(*vm));
}

/* want_digest: a large manifest's digest is a pass over all of it, made
 * only for callers that use it. */
static int verify_manifest(const char *name, const json_t *env, const struct keyring *kr,
			   const struct verify_policy *p, struct verified_manifest *vm,
			   bool want_digest, struct verify_outcome *out, ingot_error *e)
{
	struct verify_outcome tmp;
	const json_t *m;
	const char *recipe;
	int r;

	if (!out)
		out = &tmp;
	memset(out, 0, sizeof(*out));
	memset(vm, 0, sizeof(*vm));

	r = envelope_verify_signatures(name, env, kr, &vm->payload, &vm->payload_len, out, e);
	if (r < 0)
		return r;

	/* Authenticated from here on; now interpret it. */
	r = envelope_statement_parse(name, vm->payload, vm->payload_len, MANIFEST_FULL,
				     &vm->statement, &vm->manifest, &vm->ref, e);
	if (r < 0)
		return ingot_set_kind(e, r, ENVELOPE_FAIL_MALFORMED);
	m = vm->manifest;

	recipe = json_string_value(json_object_get(json_object_get(m, "recipe"), "name"));
	/* The state file keys serials by this name: a cut name would let
	 * two pools share (or dodge) one rollback counter. */
	if (strlen(recipe) >= sizeof(out->recipe))
		return ingot_fail_kind(e, -E2BIG, ENVELOPE_FAIL_MALFORMED,
					 "%s: recipe.name: %zu characters, limit %zu", name,
					 strlen(recipe), sizeof(out->recipe) - 1);
	snprintf(out->recipe, sizeof(out->recipe), "%s", recipe);
	out->serial = (uint64_t)json_integer_value(json_object_get(m, "serial"));
	snprintf(out->image_sha256, sizeof(out->image_sha256), "%s",
		 json_string_value(json_object_get(json_object_get(m, "image"), "sha256")));

	if ((r = check_expiry(name, m, p->now, out, e)) < 0 ||
	    (r = check_file_list(name, p, vm, out, e)) < 0 ||
	    (p->state_path && (r = check_rollback(name, p->state_path, out, e)) < 0))
		return r;
	/* Of the whole manifest; a head alone (v2, digest only) has no
	 * files[] to digest, but carries the digest, signed. */
	if (want_digest && vm->ref.name[0] && p->file_list_use != FILE_LIST_LOAD)
		r = hex_decode(json_string_value(json_object_get(json_object_get(m, "measurement"), "content_digest")),
			       vm->content_digest, sizeof(vm->content_digest));
	else if (want_digest)
		r = attest_content_digest(vm->manifest, vm->content_digest);
	if (r < 0)
		return ingot_fail_kind(e, r, ENVELOPE_FAIL_IO, "%s: cannot compute the content digest",
					 name);
	return 0;
}

int envelope_verify_manifest(const char *name, const json_t *env, const struct keyring *kr,
			     const struct verify_policy *p, struct verified_manifest *vm,
			     struct verify_outcome *out, ingot_error *e)
{
	return verify_manifest(name, env, kr, p, vm, true, out, e);
}

int envelope_verify_json(const char *name, const json_t *env, const struct keyring *kr,
			 const struct verify_policy *p, struct manifest **manifest_out,
			 struct verify_outcome *out, ingot_error *e)
{
	struct verified_manifest vm;
	int r = verify_manifest(name, env, kr, p, &vm, false, out, e);

	/* verify_manifest checked it in full (the statement's parser). */
	if (r == 0 && manifest_out)
		*manifest_out = manifest_decode(name, vm.manifest, MANIFEST_FULL);
	verified_manifest_free(&vm);
	return r;
}

int envelope_record_state(const char *state_path, const struct verify_outcome *out,
			  ingot_error *e)
{
	return state_raise(state_path, "serials", out->recipe, out->serial, e);
}

int envelope_read_file(const char *path, json_t **env, ingot_error *e)
{
	int r = manifest_read_file(path, env, NULL, e);
	if (r < 0)
		return ingot_set_kind(e, r, r == -EFBIG || r == -EBADMSG ? ENVELOPE_FAIL_MALFORMED
								       : ENVELOPE_FAIL_IO);
	return 0;
}

int envelope_verify(const char *path, const struct keyring *kr, const struct verify_policy *p,
		    struct manifest **manifest_out, struct verify_outcome *out, ingot_error *e)
{
	_cleanup_json_ json_t *env = NULL;
	int r = envelope_read_file(path, &env, e);
	if (r < 0)
		return r;
	return envelope_verify_json(path, env, kr, p, manifest_out, out, e);
}
