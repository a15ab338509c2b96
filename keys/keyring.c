#include "keys/keyring.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/xalloc.h"

static const char *const role_names[KEY_ROLE_COUNT] = {
	[KEY_ROLE_MANIFEST] = "manifest", [KEY_ROLE_ENROLMENT] = "enrolment",
	[KEY_ROLE_FIRMWARE_REF] = "firmware-ref", [KEY_ROLE_EVIDENCE] = "evidence",
	[KEY_ROLE_PROMOTION] = "promotion",
};

const char *key_role_name(enum key_role role)
{
	return (unsigned)role < KEY_ROLE_COUNT ? role_names[role] : "?";
}

int key_role_parse(const char *name, enum key_role *out)
{
	for (unsigned i = 0; i < KEY_ROLE_COUNT; i++)
		if (!strcmp(name, role_names[i])) {
			*out = (enum key_role)i;
			return 0;
		}
	return -EINVAL;
}

void keyring_free(struct keyring *kr)
{
	if (!kr)
		return;
	for (unsigned i = 0; i < KEY_ROLE_COUNT; i++)
		free(kr->roles[i].idx);
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

static size_t key_index(const struct keyring *kr, const char *name)
{
	for (size_t i = 0; i < kr->n; i++)
		if (!strcmp(kr->keys[i].name, name))
			return i;
	return SIZE_MAX;
}

/* roles: {"ROLE": {"keys": [NAME...], "threshold": N}}, each NAME one of
 * the file's keys, at most once in a role. */
static int roles_from_json(const char *path, const json_t *roles, struct keyring *kr, ingot_error *e)
{
	const char *role;
	json_t *def;

	if (!json_is_object(roles))
		return ingot_fail(e, -EINVAL, "%s: roles: expected an object of ROLE: {keys, threshold}", path);
	kr->has_roles = true;
	json_object_foreach((json_t *)roles, role, def) {
		struct keyring_role *kro;
		enum key_role k;
		json_t *names, *item, *v;
		json_int_t threshold;
		const char *field;
		char what[96];
		size_t i;
		int r;

		snprintf(what, sizeof(what), "%s: roles.%.40s", path, role);
		if (key_role_parse(role, &k) < 0)
			return ingot_fail(e, -EINVAL, "%s: unknown role (expected manifest, enrolment, firmware-ref, "
					  "evidence or promotion)", what);
		if (!json_is_object(def))
			return ingot_fail(e, -EINVAL, "%s: expected an object with keys and threshold", what);
		json_object_foreach(def, field, v)
			if (strcmp(field, "keys") && strcmp(field, "threshold"))
				return ingot_fail(e, -EINVAL, "%s: unknown field '%.64s' (expected keys, threshold)",
						  what, field);
		if ((r = json_get_arr(def, "keys", what, &names, e)) < 0 ||
		    (r = json_get_int(def, "threshold", what, &threshold, e)) < 0)
			return r;
		if (threshold < 1 || (size_t)threshold > json_array_size(names))
			return ingot_fail(e, -EINVAL, "%s.threshold: expected 1..%zu (the number of the role's keys), "
					  "got %lld", what, json_array_size(names), (long long)threshold);
		kro = &kr->roles[k];
		kro->idx = xcalloc(json_array_size(names), sizeof(*kro->idx));
		kro->threshold = (unsigned)threshold;
		json_array_foreach(names, i, item) {
			size_t at = json_is_string(item) ? key_index(kr, json_string_value(item)) : SIZE_MAX;
			if (at == SIZE_MAX)
				return ingot_fail(e, -EINVAL, "%s.keys[%zu]: expected the name of one of the file's keys",
						  what, i);
			for (size_t j = 0; j < kro->n; j++)
				if (kro->idx[j] == at)
					return ingot_fail(e, -EINVAL, "%s.keys[%zu]: \"%s\" is named twice (one signer "
							  "must not count twice)", what, i, kr->keys[at].name);
			kro->idx[kro->n++] = at;
		}
	}
	return 0;
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
		return ingot_fail(e, -EINVAL, "%s: expected a JSON object with \"keys\" and \"threshold\" or \"roles\"",
				  path);
	json_object_foreach((json_t *)doc, key, v)
		if (strcmp(key, "keys") && strcmp(key, "threshold") && strcmp(key, "roles"))
			return ingot_fail(e, -EINVAL, "%s: unknown field '%s' (expected keys, threshold, roles)",
					  path, key);
	if ((r = json_get_arr(doc, "keys", path, &keys, e)) < 0)
		return r;
	if (json_array_size(keys) > KEYRING_MAX_KEYS)
		return ingot_fail(e, -E2BIG, "%s: keys: %zu keys, limit %u", path,
				  json_array_size(keys), KEYRING_MAX_KEYS);
	/* One threshold for the file or one per role, never both: a
	 * top-level threshold beside roles would read as applying to them. */
	if (json_object_get(doc, "roles")) {
		if (json_object_get(doc, "threshold"))
			return ingot_fail(e, -EINVAL, "%s: threshold: a keyring with roles sets a threshold "
					  "per role (roles.ROLE.threshold), not one for the file", path);
		threshold = 0;
	} else {
		if ((r = json_get_int(doc, "threshold", path, &threshold, e)) < 0)
			return r;
		if (threshold < 1 || (size_t)threshold > json_array_size(keys))
			return ingot_fail(e, -EINVAL, "%s: threshold: expected 1..%zu (the number of keys), got %lld",
					  path, json_array_size(keys), (long long)threshold);
	}

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
	if ((v = json_object_get(doc, "roles")) && (r = roles_from_json(path, v, kr, e)) < 0)
		return r;
	*out = TAKE_PTR(kr);
	return 0;
}

int keyring_load(const char *path, struct keyring **out, ingot_error *e)
{
	_cleanup_json_ json_t *doc = NULL;
	int r = json_read_file_max(path, KEYRING_FILE_MAX, &doc, e);

	if (r < 0)
		return r;
	return keyring_from_json(path, doc, out, e);
}

int keyring_load_role(const char *path, enum key_role role, bool named_for_role, struct keyring **out,
		      ingot_error *e)
{
	_cleanup_(keyring_freep) struct keyring *kr = NULL;
	const char *name = key_role_name(role);
	struct keyring_role *kro;
	int r;

	if ((r = keyring_load(path, &kr, e)) < 0)
		return r;
	if (!kr->has_roles) {
		if (!named_for_role)
			return ingot_fail(e, -ENOKEY, "%s: an untyped keyring (no \"roles\") vouches only for the "
					  "statements it is named for, and it was not named for the %s role: "
					  "no key is trusted for %s statements", path, name, name);
		kr->role = name;
		*out = TAKE_PTR(kr);
		return 0;
	}
	kro = &kr->roles[role];
	if (!kro->idx)
		return ingot_fail(e, -ENOKEY, "%s: roles: no \"%s\" role: no key is trusted for %s statements",
				  path, name, name);
	/* Keep the role's keys (in the role's order), free the others. */
	struct keyring_key *keys = xcalloc(kro->n, sizeof(*keys));
	for (size_t i = 0; i < kro->n; i++) {
		keys[i] = kr->keys[kro->idx[i]];
		kr->keys[kro->idx[i]] = (struct keyring_key){ 0 };
	}
	for (size_t i = 0; i < kr->n; i++) {
		free(kr->keys[i].name);
		public_key_free(kr->keys[i].key);
	}
	free(kr->keys);
	kr->keys = keys;
	kr->n = kro->n;
	kr->threshold = kro->threshold;
	kr->role = name;
	for (unsigned i = 0; i < KEY_ROLE_COUNT; i++) {
		free(kr->roles[i].idx);
		kr->roles[i] = (struct keyring_role){ 0 };
	}
	*out = TAKE_PTR(kr);
	return 0;
}

/* The key named name into each role of the mask, threshold > 0 set. */
static int add_to_roles(json_t *doc, const char *name, unsigned threshold, unsigned roles, ingot_error *e)
{
	json_t *rs = json_object_get(doc, "roles");

	for (unsigned i = 0; i < KEY_ROLE_COUNT; i++) {
		json_t *def;
		if (!(roles & (1u << i)))
			continue;
		if (!(def = json_object_get(rs, role_names[i]))) {
			def = json_pack("{s:[],s:i}", "keys", "threshold", 1);
			if (!def || json_object_set_new(rs, role_names[i], def) < 0)
				return ingot_fail(e, -ENOMEM, "out of memory");
		}
		if (json_array_append_new(json_object_get(def, "keys"), json_string(name)) < 0)
			return ingot_fail(e, -ENOMEM, "out of memory");
		if (threshold > json_array_size(json_object_get(def, "keys")))
			return ingot_fail(e, -EINVAL, "--threshold: expected 1..%zu (the number of the %s role's keys), "
					  "got %u", json_array_size(json_object_get(def, "keys")), role_names[i], threshold);
		if (threshold > 0)
			json_object_set_new(def, "threshold", json_integer(threshold));
	}
	return 0;
}

int keyring_add(const char *path, const char *pub_path, const char *name, unsigned threshold,
		unsigned roles, ingot_error *e)
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
		/* A key's roles are stated, never inferred: an untyped keyring
		 * does not become one with roles by an addition, and a key in
		 * a keyring with roles is trusted for the roles named. */
		if (old->has_roles && !roles)
			return ingot_fail(e, -EINVAL, "%s: a keyring with roles: name the roles the key is trusted "
					  "for (--role)", path);
		if (!old->has_roles && roles)
			return ingot_fail(e, -EINVAL, "%s: an untyped keyring (no \"roles\"): --role applies to a "
					  "keyring with roles (a new file)", path);
		r = json_read_file_max(path, KEYRING_FILE_MAX, &doc, e);
		if (r < 0)
			return r;
	} else if (errno == ENOENT) {
		doc = roles ? json_pack("{s:[],s:{}}", "keys", "roles") : json_pack("{s:[],s:i}", "keys", "threshold", 1);
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
	if (roles) {
		if ((r = add_to_roles(doc, name, threshold, roles, e)) < 0)
			return r;
	} else if (threshold > 0) {
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
