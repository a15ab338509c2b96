/* The one statements module (keys/statement.h): opening, verifying and
 * signing ingot's in-toto statements. */
#include "keys/statement.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/xalloc.h"

void statement_release(struct statement *st)
{
	json_decref(st->doc);
	memset(st, 0, sizeof(*st));
}

bool statement_one_subject(const struct statement *st, const char **name, const char **sha256)
{
	const json_t *subj = json_object_get(st->doc, "subject"), *s = json_array_get(subj, 0);

	*name = json_string_value(json_object_get(s, "name"));
	*sha256 = json_string_value(json_object_get(json_object_get(s, "digest"), "sha256"));
	return json_is_array(subj) && json_array_size(subj) == 1 && *name && *sha256;
}

int statement_verify(const char *name, const json_t *env, const struct keyring *kr, const char *ptype,
		     struct statement *st, struct verify_outcome *out, ingot_error *e)
{
	const char *const ptypes[] = { ptype, NULL };
	_cleanup_json_ json_t *inner = NULL;
	_cleanup_free_ uint8_t *payload = NULL;
	struct verify_outcome tmp;
	size_t len;
	int r;

	memset(st, 0, sizeof(*st));
	if ((r = sigstore_bundle_envelope(name, env, &inner, e)) < 0)
		return ingot_set_kind(e, r, r == -ENOMEM ? ENVELOPE_FAIL_IO : ENVELOPE_FAIL_MALFORMED);
	if ((r = envelope_verify_signatures(name, inner ? inner : env, kr, &payload, &len, out ? out : &tmp,
					     e)) < 0)
		return r;
	/* Authenticated from here on; now interpret it. */
	if ((r = statement_parse(name, payload, len, ptypes, &st->doc, e)) < 0)
		return ingot_set_kind(e, r, ENVELOPE_FAIL_MALFORMED);
	st->predicate = json_object_get(st->doc, "predicate");
	return 0;
}

int statement_peek(const char *name, const json_t *env, struct statement *st, ingot_error *e)
{
	_cleanup_free_ uint8_t *payload = NULL;
	json_t *pred = NULL;
	size_t len = 0;
	int r;

	memset(st, 0, sizeof(*st));
	if ((r = envelope_parse(name, env, &payload, &len, e)) < 0)
		return r;
	st->doc = json_loadb((const char *)payload, len, 0, NULL);
	json_unpack(st->doc, "{s?o}", "predicate", &pred);
	if (!json_is_object(pred)) {
		statement_release(st);
		return ingot_fail(e, -EBADMSG, "%s: expected a statement with a predicate object", name);
	}
	st->predicate = pred;
	return 0;
}

int statement_open(const char *path, const struct keyring *kr, const char *ptype, struct statement *st,
		   struct verify_outcome *out, ingot_error *e)
{
	_cleanup_json_ json_t *env = NULL;
	int r;

	memset(st, 0, sizeof(*st));
	if ((r = envelope_read_file(path, &env, e)) < 0)
		return r;
	return statement_verify(path, env, kr, ptype, st, out, e);
}

json_t *statement_new(const char *ptype, const char *subject_name, const char *subject_sha256,
		      json_t *predicate)
{
	return json_pack("{s:s,s:[{s:s,s:{s:s}}],s:s,s:o}", "_type", STATEMENT_TYPE, "subject", "name",
			 subject_name, "digest", "sha256", subject_sha256, "predicateType", ptype,
			 "predicate", predicate);
}

int image_statement(const char *ptype, const struct manifest *m, json_t *predicate, json_t **out,
		    ingot_error *e)
{
	*out = statement_new(ptype, m->image.file, m->have & MF_IMAGE ? m->image.sha256_hex : NULL,
			     predicate);
	return *out ? 0 : ingot_fail(e, -ENOMEM, "out of memory");
}

int image_subject(const char *name, const struct statement *st, char sha256[65], ingot_error *e)
{
	const char *file, *sha;

	if (!statement_one_subject(st, &file, &sha) || !is_sha256_hex(sha))
		return ingot_fail_kind(e, -EINVAL, ENVELOPE_FAIL_MALFORMED, "%s: statement.subject: expected one "
				       "image with a digest.sha256 of 64 hex digits", name);
	memcpy(sha256, sha, 65);
	return 0;
}

int statement_sign(const json_t *st, struct signing_key *const *keys, size_t n_keys, json_t **envelope,
		   ingot_error *e)
{
	_cleanup_json_ json_t *env = NULL;
	int r;

	/* The payload is json_compact(st): equal for every key, so the
	 * signatures of one-key envelopes can be gathered into the first. */
	for (size_t i = 0; i < n_keys; i++) {
		_cleanup_json_ json_t *one = NULL;
		r = envelope_sign_statement(st, keys[i], i ? &one : &env, e);
		if (r < 0)
			return r;
		if (one && json_array_extend(json_object_get(env, "signatures"),
					     json_object_get(one, "signatures")) < 0)
			return ingot_fail(e, -ENOMEM, "out of memory");
	}
	*envelope = TAKE_PTR(env);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void statement_dir_free(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

int statement_dir_list(const char *dir, const char *suffix, char ***paths, size_t *n,
		       ingot_error *e)
{
	DIR *d = opendir(dir);
	char **v = NULL;
	size_t cnt = 0, sl = strlen(suffix);
	struct dirent *de;

	if (!d)
		return ingot_fail(e, -errno, "%s: cannot open directory: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		size_t nl = strlen(de->d_name);
		if (de->d_name[0] == '.' || nl <= sl || strcmp(de->d_name + nl - sl, suffix))
			continue;
		if (cnt == STATEMENT_DIR_MAX) {
			closedir(d);
			statement_dir_free(v, cnt);
			return ingot_fail(e, -E2BIG, "%s: more than %u *%s files", dir,
					  STATEMENT_DIR_MAX, suffix);
		}
		v = xrealloc(v, (cnt + 1) * sizeof(*v));
		v[cnt++] = path_join(dir, de->d_name);
	}
	closedir(d);
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_str);
	*paths = v;
	*n = cnt;
	return 0;
}
