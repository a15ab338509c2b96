#include "keys/keyring.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/xalloc.h"

void keyring_free(struct keyring *kr)
{
	if (!kr)
		return;
	for (size_t i = 0; i < kr->n; i++) {
		free(kr->keys[i].name);
		public_key_free(kr->keys[i].key);
	}
	free(kr->keys);
	free(kr->file);
	free(kr);
}

const struct keyring_key *keyring_find(const struct keyring *kr, const char *keyid)
{
	for (size_t i = 0; i < kr->n; i++)
		if (!strcmp(kr->keys[i].key->keyid, keyid))
			return &kr->keys[i];
	return NULL;
}

static int name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > KEYRING_NAME_MAX)
		return 0;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
			return 0;
	return 1;
}

static int keyring_from_json(const char *path, const json_t *doc, struct keyring **out,
			     ingot_error *e)
{
	_cleanup_(keyring_freep) struct keyring *kr = NULL;
	json_t *keys, *item, *v;
	json_int_t threshold;
	const char *key;
	size_t i;
	int r;

	if (!json_is_object(doc))
		return ingot_fail(e, -EINVAL, "%s: expected a JSON object with \"keys\" and \"threshold\"", path);
	json_object_foreach((json_t *)doc, key, v)
		if (strcmp(key, "keys") && strcmp(key, "threshold"))
			return ingot_fail(e, -EINVAL, "%s: unknown field '%s' (expected keys, threshold)",
					  path, key);
	if ((r = json_get_arr(doc, "keys", path, &keys, e)) < 0 ||
	    (r = json_get_int(doc, "threshold", path, &threshold, e)) < 0)
		return r;
	if (json_array_size(keys) > KEYRING_MAX_KEYS)
		return ingot_fail(e, -E2BIG, "%s: keys: %zu keys, limit %u", path,
				  json_array_size(keys), KEYRING_MAX_KEYS);
	if (threshold < 1 || (size_t)threshold > json_array_size(keys))
		return ingot_fail(e, -EINVAL, "%s: threshold: expected 1..%zu (the number of keys), got %lld",
				  path, json_array_size(keys), (long long)threshold);

	kr = xcalloc(1, sizeof(*kr));
	kr->file = xstrdup(path);
	kr->keys = xcalloc(json_array_size(keys), sizeof(*kr->keys));
	kr->threshold = (unsigned)threshold;

	json_array_foreach(keys, i, item) {
		char what[128];
		const char *name, *keyid, *pem;
		struct public_key *pk = NULL;

		snprintf(what, sizeof(what), "%s: keys[%zu]", path, i);
		if (!json_is_object(item))
			return ingot_fail(e, -EINVAL, "%s: expected an object", what);
		if ((r = json_get_str(item, "name", what, &name, e)) < 0 ||
		    (r = json_get_str(item, "keyid", what, &keyid, e)) < 0 ||
		    (r = json_get_str(item, "public_key", what, &pem, e)) < 0)
			return r;
		if (!name_ok(name))
			return ingot_fail(e, -EINVAL, "%s: name: expected 1..%d printable characters "
					  "without spaces, got \"%.64s\"", what, KEYRING_NAME_MAX, name);
		r = public_key_from_pem(what, pem, json_string_length(json_object_get(item, "public_key")),
					&pk, e);
		if (r < 0)
			return r;
		/* Ids are of the canonical key: the same key in two encodings is
		 * a duplicate (one signer must not count twice). */
		for (size_t j = 0; j < kr->n; j++) {
			if (!strcmp(kr->keys[j].name, name) || !strcmp(kr->keys[j].key->keyid, pk->keyid)) {
				r = ingot_fail(e, -EINVAL, "%s: duplicate of keys[%zu] (same %s)", what, j,
					       strcmp(kr->keys[j].name, name) ? "key" : "name");
				public_key_free(pk);
				return r;
			}
		}
		if (strcmp(pk->keyid, keyid)) {
			r = ingot_fail(e, -EINVAL, "%s: keyid: the public key's id is %s, got %.80s",
				       what, pk->keyid, keyid);
			public_key_free(pk);
			return r;
		}
		kr->keys[kr->n].key = pk;
		kr->keys[kr->n].name = xstrdup(name);
		kr->n++;
	}
	*out = TAKE_PTR(kr);
	return 0;
}

int keyring_load(const char *path, struct keyring **out, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *doc = NULL;
	size_t len;
	int r;

	r = read_file(path, KEYRING_FILE_MAX, &buf, &len, e);
	if (r < 0)
		return r;
	r = json_read_buf(path, buf, len, &doc, e);
	if (r < 0)
		return r;
	return keyring_from_json(path, doc, out, e);
}

int keyring_add(const char *path, const char *pub_path, const char *name, unsigned threshold,
		ingot_error *e)
{
	_cleanup_(public_key_freep) struct public_key *pk = NULL;
	_cleanup_(keyring_freep) struct keyring *check = NULL;
	_cleanup_json_ json_t *doc = NULL;
	_cleanup_free_ char *pem = NULL;
	struct stat st;
	json_t *keys, *entry;
	size_t nkeys;
	int r;

	if (!name_ok(name))
		return ingot_fail(e, -EINVAL, "--name: expected 1..%d printable characters without "
				  "spaces, got \"%.64s\"", KEYRING_NAME_MAX, name);
	r = public_key_load(pub_path, &pk, e);
	if (r < 0)
		return r;
	if (stat(path, &st) == 0) {
		_cleanup_(keyring_freep) struct keyring *old = NULL;
		r = keyring_load(path, &old, e);   /* validates before we touch it */
		if (r < 0)
			return r;
		if (keyring_find(old, pk->keyid))
			return ingot_fail(e, -EEXIST, "%s: key %s is already in the keyring", path, pk->keyid);
		for (size_t i = 0; i < old->n; i++)
			if (!strcmp(old->keys[i].name, name))
				return ingot_fail(e, -EEXIST, "%s: a key named \"%s\" is already in the keyring",
						  path, name);
		r = json_read_file(path, &doc, e);
		if (r < 0)
			return r;
	} else if (errno == ENOENT) {
		doc = json_pack("{s:[],s:i}", "keys", "threshold", 1);
		if (!doc)
			return ingot_fail(e, -ENOMEM, "out of memory");
	} else {
		return ingot_fail(e, -errno, "%s: cannot stat: %s", path, strerror(errno));
	}

	pem = public_key_pem(pk->pkey);
	if (!pem)
		return ingot_fail(e, -ENOMEM, "out of memory");
	keys = json_object_get(doc, "keys");
	entry = json_pack("{s:s,s:s,s:s}", "name", name, "keyid", pk->keyid, "public_key", pem);
	if (!entry || json_array_append_new(keys, entry) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	nkeys = json_array_size(keys);
	if (threshold > 0) {
		if (threshold > nkeys)
			return ingot_fail(e, -EINVAL, "--threshold: expected 1..%zu (the number of keys), got %u",
					  nkeys, threshold);
		json_object_set_new(doc, "threshold", json_integer(threshold));
	}
	/* Re-validate what we are about to write. */
	r = keyring_from_json(path, doc, &check, e);
	if (r < 0)
		return r;
	return json_write_file(path, doc, 0644, e);
}
