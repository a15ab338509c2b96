#include "builder/manifest.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "attest/predict.h"
#include "builder/image.h"
#include "recipes/recipe.h"
#include "builder/tree.h"
#include "lib/meta.h"
#include "keys/envelope.h"    /* parse_time */
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"
#include "recipes/tuple.h"

/* ---- building ---------------------------------------------------------- */

static const char *kind_name(enum artifact_kind k)
{
	switch (k) {
	case ART_TAR: return "tar";
	case ART_DEB: return "deb";
	case ART_FILE: return "file";
	}
	return "?";
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static json_t *hex_json(const uint8_t *b, size_t n)
{
	char hex[2 * 64 + 1];
	if (n > 64)
		return NULL;
	hex_encode(b, n, hex);
	return json_string(hex);
}

/* jansson integers are signed 64-bit; every count we store fits, but say
 * so instead of wrapping if one ever does not. */
static int set_u64(json_t *o, const char *key, uint64_t v, const char *what, ingot_error *e)
{
	if (v > (uint64_t)INT64_MAX)
		return ingot_fail(e, -ERANGE, "%s: %s: %" PRIu64 " does not fit in JSON", what, key, v);
	if (json_object_set_new(o, key, json_integer((json_int_t)v)) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	return 0;
}

static int set_new(json_t *o, const char *key, json_t *v, ingot_error *e)
{
	if (!v || json_object_set_new(o, key, v) < 0)
		return ingot_fail(e, -ENOMEM, "manifest: out of memory building '%s'", key);
	return 0;
}

static json_t *file_entry(const struct tree_entry *te, ingot_error *e)
{
	_cleanup_json_ json_t *f = json_object();
	_cleanup_free_ char *path = NULL;
	char mode[8];

	if (!f || asprintf(&path, "/%s", te->path) < 0) {
		ingot_fail(e, -ENOMEM, "out of memory");
		return NULL;
	}
	snprintf(mode, sizeof(mode), "%04o", te->mode & 07777);
	if (set_new(f, "path", json_string(path), e) < 0 ||
	    set_new(f, "type", json_string(tree_type_name(te->type)), e) < 0 ||
	    set_new(f, "mode", json_string(mode), e) < 0 ||
	    set_u64(f, "uid", te->uid, path, e) < 0 ||
	    set_u64(f, "gid", te->gid, path, e) < 0)
		return NULL;
	switch (te->type) {
	case TREE_FILE:
		if (set_u64(f, "size", te->size, path, e) < 0 ||
		    set_new(f, "sha256", hex_json(te->sha256, 32), e) < 0)
			return NULL;
		break;
	case TREE_SYMLINK:
		if (!te->target) {
			ingot_fail(e, -EINVAL, "manifest: %s: symlink without a target", path);
			return NULL;
		}
		if (set_new(f, "target", json_string(te->target), e) < 0)
			return NULL;
		break;
	case TREE_CHR:
	case TREE_BLK:
		if (set_u64(f, "major", te->rdev_major, path, e) < 0 ||
		    set_u64(f, "minor", te->rdev_minor, path, e) < 0)
			return NULL;
		break;
	default:
		break;
	}
	return TAKE_PTR(f);
}

static int build_files(const struct tree *t, json_t *m, ingot_error *e)
{
	json_t *files = json_array();
	if (set_new(m, "files", files, e) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		/* The manifest lists files in byte order of their path, as the
		 * image writer does; an unsorted tree is a caller bug. */
		if (i > 0 && strcmp(t->v[i - 1].path, t->v[i].path) >= 0)
			return ingot_fail(e, -EINVAL, "manifest: tree not finalized: '%s' before '%s'",
					  t->v[i - 1].path, t->v[i].path);
		json_t *f = file_entry(&t->v[i], e);
		if (!f)
			return e && e->code ? e->code : -ENOMEM;
		if (json_array_append_new(files, f) < 0)
			return ingot_fail(e, -ENOMEM, "out of memory");
	}
	return 0;
}

static int build_artifacts(const struct recipe *r, const uint64_t *sizes, json_t *m, ingot_error *e)
{
	json_t *arts = json_array();
	if (set_new(m, "artifacts", arts, e) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_artifacts; i++) {
		const struct artifact *a = &r->artifacts[i];
		struct stat st;
		json_t *o = json_object();

		if (json_array_append_new(arts, o) < 0 || !o)
			return ingot_fail(e, -ENOMEM, "out of memory");
		if (sizes)
			st.st_size = (off_t)sizes[i];
		else if (stat(a->path, &st) < 0)
			return ingot_fail(e, -errno, "manifest: artifact '%s': %s: cannot stat: %s",
					  a->name, a->path, strerror(errno));
		if (set_new(o, "name", json_string(a->name), e) < 0 ||
		    set_new(o, "kind", json_string(kind_name(a->kind)), e) < 0 ||
		    set_new(o, "source", json_string(base_name(a->source)), e) < 0 ||
		    set_new(o, "sha256", hex_json(a->sha256, 32), e) < 0 ||
		    set_u64(o, "size", (uint64_t)st.st_size, a->name, e) < 0)
			return e && e->code ? e->code : -ENOMEM;
	}
	return 0;
}

static void uuid_str(const uint8_t u[16], char out[37])
{
	static const int groups[] = { 4, 2, 2, 2, 6 };
	char *p = out;
	const uint8_t *b = u;
	for (size_t g = 0; g < ARRAY_SIZE(groups); g++) {
		if (g)
			*p++ = '-';
		hex_encode(b, (size_t)groups[g], p);
		p += 2 * groups[g];
		b += groups[g];
	}
	*p = '\0';
}

int manifest_build(const struct recipe *r, const struct tree *t, const struct image_opts *io,
		   const struct image_info *ii, const struct verity_info *vi, json_t **out,
		   ingot_error *e)
{
	return manifest_build_sized(r, NULL, t, io, ii, vi, out, e);
}

int manifest_build_sized(const struct recipe *r, const uint64_t *sizes, const struct tree *t,
			 const struct image_opts *io, const struct image_info *ii,
			 const struct verity_info *vi, json_t **out, ingot_error *e)
{
	_cleanup_json_ json_t *m = json_object();
	_cleanup_free_ char *img_file = NULL, *ver_file = NULL;
	json_t *o, *meas;
	uint8_t content[32];
	char uuid[37];
	time_t exp;
	int rc;

	if (!m)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (vi->salt_len > 32)
		return ingot_fail(e, -EINVAL, "manifest: verity salt of %u bytes, limit 32", vi->salt_len);
	if (ii->size != vi->image_size)
		return ingot_fail(e, -EINVAL, "manifest: image size %" PRIu64 " but verity hashed %" PRIu64
				  " bytes", ii->size, vi->image_size);
	if (r->expires && parse_time(r->expires, &exp) < 0)
		return ingot_fail(e, -EINVAL, "manifest: expires: expected RFC 3339 time, got \"%s\"",
				  r->expires);
	if (asprintf(&img_file, "%s.sqfs", r->name) < 0 || asprintf(&ver_file, "%s.verity", r->name) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");

	if ((rc = set_new(m, "schema", json_string(MANIFEST_SCHEMA_V1), e)) < 0 ||
	    (rc = set_new(m, "ingot_version", json_string(INGOT_VERSION), e)) < 0)
		return rc;
	o = json_pack("{s:s,s:s,s:s}", "name", r->name, "version", r->version ? r->version : "",
		      "file", base_name(r->file));
	if ((rc = set_new(m, "recipe", o, e)) < 0 ||
	    (rc = set_new(o, "sha256", hex_json(r->file_sha256, 32), e)) < 0 ||
	    (rc = set_u64(m, "epoch", r->epoch, "manifest", e)) < 0 ||
	    (rc = set_u64(m, "serial", r->serial, "manifest", e)) < 0 ||
	    (rc = set_new(m, "expires", r->expires ? json_string(r->expires) : json_null(), e)) < 0 ||
	    (rc = set_new(m, "tuple", r->tuple ? tuple_to_json(r->tuple) : json_null(), e)) < 0 ||
	    (rc = build_artifacts(r, sizes, m, e)) < 0 ||
	    (rc = build_files(t, m, e)) < 0)
		return rc;

	o = json_pack("{s:s,s:s,s:I}", "file", img_file, "compression",
		      io->compression ? io->compression : "", "level", (json_int_t)io->level);
	if ((rc = set_new(m, "image", o, e)) < 0 ||
	    (rc = set_new(o, "sha256", hex_json(vi->image_sha256, 32), e)) < 0 ||
	    (rc = set_u64(o, "size", vi->image_size, "image", e)) < 0 ||
	    (rc = set_u64(o, "block_size", io->block_size, "image", e)) < 0)
		return rc;

	uuid_str(vi->uuid, uuid);
	o = json_pack("{s:s,s:i,s:s,s:s}", "file", ver_file, "format", 1, "hash_algorithm", "sha256",
		      "uuid", uuid);
	if ((rc = set_new(m, "verity", o, e)) < 0 ||
	    (rc = set_u64(o, "data_block_size", vi->data_block_size, "verity", e)) < 0 ||
	    (rc = set_u64(o, "hash_block_size", vi->hash_block_size, "verity", e)) < 0 ||
	    (rc = set_u64(o, "data_blocks", vi->data_blocks, "verity", e)) < 0 ||
	    (rc = set_u64(o, "hash_offset", vi->hash_offset, "verity", e)) < 0 ||
	    (rc = set_new(o, "salt", hex_json(vi->salt, vi->salt_len), e)) < 0 ||
	    (rc = set_new(o, "root_hash", hex_json(vi->root_hash, 32), e)) < 0)
		return rc;

	/* The measurement binds the rest of the manifest (content digest), so
	 * it is computed last, over everything above. */
	if (attest_content_digest(m, content) < 0)
		return ingot_fail(e, -ENOMEM, "manifest: cannot compute the content digest");
	meas = attest_predict_measurement(r->name, vi->image_sha256, vi->root_hash, content,
					  ATTEST_DEFAULT_PCR);
	if (!meas)
		return ingot_fail(e, -EINVAL, "manifest: recipe name \"%s\" cannot be measured "
				  "(1..255 printable characters, no spaces)", r->name);
	if ((rc = set_new(m, "measurement", meas, e)) < 0)
		return rc;

	rc = manifest_check("manifest", m, e);
	if (rc < 0)
		return ingot_prefix(e, "manifest_build produced an invalid manifest");
	*out = TAKE_PTR(m);
	return 0;
}

/* ---- checking ---------------------------------------------------------- */

/* Field kinds for the table-driven schema check. */
enum fk { F_STR, F_HEX64, F_HEX, F_UINT, F_INT, F_OBJ, F_ARR, F_OBJ_OR_NULL, F_TIME_OR_NULL,
	  F_MODE, F_ABSPATH };

struct field {
	const char *key;
	enum fk kind;
	bool optional;
};

static const char *fk_expect(enum fk k)
{
	switch (k) {
	case F_STR: return "a string";
	case F_HEX64: return "64 lower-case hex digits";
	case F_HEX: return "lower-case hex digits";
	case F_UINT: return "a non-negative integer";
	case F_INT: return "an integer";
	case F_OBJ: return "an object";
	case F_ARR: return "an array";
	case F_OBJ_OR_NULL: return "an object or null";
	case F_TIME_OR_NULL: return "an RFC 3339 time or null";
	case F_MODE: return "4 octal digits (\"0644\")";
	case F_ABSPATH: return "an absolute path";
	}
	return "?";
}

static const char *jtype(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

static bool is_lower_hex(const char *s, size_t n)
{
	if (n == 0 || n % 2)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool value_ok(const json_t *v, enum fk k)
{
	const char *s;
	size_t n;
	time_t t;

	switch (k) {
	case F_OBJ: return json_is_object(v);
	case F_ARR: return json_is_array(v);
	case F_OBJ_OR_NULL: return json_is_object(v) || json_is_null(v);
	case F_INT: return json_is_integer(v);
	case F_UINT: return json_is_integer(v) && json_integer_value(v) >= 0;
	default: break;
	}
	if (k == F_TIME_OR_NULL && json_is_null(v))
		return true;
	if (!json_is_string(v))
		return false;
	s = json_string_value(v);
	n = json_string_length(v);
	if (n > MANIFEST_MAX_STRING || strlen(s) != n)   /* no embedded NUL */
		return false;
	switch (k) {
	case F_STR: return true;
	case F_HEX64: return n == 64 && is_lower_hex(s, n);
	case F_HEX: return is_lower_hex(s, n);
	case F_TIME_OR_NULL: return parse_time(s, &t) == 0;
	case F_MODE:
		return n == 4 && strspn(s, "01234567") == 4;
	case F_ABSPATH: return s[0] == '/';
	default: return false;
	}
}

/* Check obj against fields; unknown members are refused so a typo or a
 * field from a future schema is not silently ignored. */
static int check_fields(const char *name, const char *where, const json_t *obj,
			const struct field *fields, size_t nfields, ingot_error *e)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return ingot_fail(e, -EINVAL, "%s: %s: expected an object, got %s", name, where, jtype(obj));
	for (size_t i = 0; i < nfields; i++) {
		v = json_object_get(obj, fields[i].key);
		if (!v) {
			if (fields[i].optional)
				continue;
			return ingot_fail(e, -EINVAL, "%s: %s%s%s: missing, expected %s", name, where,
					  *where ? "." : "", fields[i].key, fk_expect(fields[i].kind));
		}
		if (!value_ok(v, fields[i].kind)) {
			char got[96];
			if (json_is_string(v))
				snprintf(got, sizeof(got), "\"%.64s%s\"", json_string_value(v),
					 json_string_length(v) > 64 ? "..." : "");
			else
				snprintf(got, sizeof(got), "%s", jtype(v));
			return ingot_fail(e, -EINVAL, "%s: %s%s%s: expected %s, got %s", name, where,
					  *where ? "." : "", fields[i].key, fk_expect(fields[i].kind), got);
		}
	}
	json_object_foreach((json_t *)obj, key, v) {
		size_t i;
		for (i = 0; i < nfields; i++)
			if (!strcmp(key, fields[i].key))
				break;
		if (i == nfields)
			return ingot_fail(e, -EINVAL, "%s: %s%sunknown field '%.64s'", name, where,
					  *where ? ": " : "", key);
	}
	return 0;
}

static int check_enum(const char *name, const char *where, const json_t *obj, const char *key,
		      const char *const *allowed, ingot_error *e)
{
	const char *s = json_string_value(json_object_get(obj, key));
	for (size_t i = 0; allowed[i]; i++)
		if (!strcmp(s, allowed[i]))
			return 0;
	return ingot_fail(e, -EINVAL, "%s: %s.%s: expected one of %s, got \"%.64s\"", name, where, key,
			  !strcmp(key, "kind") ? "tar, deb, file"
					       : "file, dir, symlink, char, block, fifo, socket", s);
}

static const struct field top_fields[] = {
	{ "schema", F_STR, false }, { "ingot_version", F_STR, false },
	{ "recipe", F_OBJ, false }, { "epoch", F_UINT, false }, { "serial", F_UINT, false },
	{ "expires", F_TIME_OR_NULL, false }, { "tuple", F_OBJ_OR_NULL, false },
	{ "artifacts", F_ARR, false }, { "files", F_ARR, false }, { "image", F_OBJ, false },
	{ "verity", F_OBJ, false }, { "measurement", F_OBJ, false },
};
static const struct field recipe_fields[] = {
	{ "name", F_STR, false }, { "version", F_STR, false }, { "file", F_STR, false },
	{ "sha256", F_HEX64, false },
};
static const struct field artifact_fields[] = {
	{ "name", F_STR, false }, { "kind", F_STR, false }, { "source", F_STR, false },
	{ "sha256", F_HEX64, false }, { "size", F_UINT, false },
};
static const struct field file_fields[] = {
	{ "path", F_ABSPATH, false }, { "type", F_STR, false }, { "mode", F_MODE, false },
	{ "uid", F_UINT, false }, { "gid", F_UINT, false }, { "size", F_UINT, true },
	{ "sha256", F_HEX64, true }, { "target", F_STR, true }, { "major", F_UINT, true },
	{ "minor", F_UINT, true },
};
static const struct field image_fields[] = {
	{ "file", F_STR, false }, { "sha256", F_HEX64, false }, { "size", F_UINT, false },
	{ "compression", F_STR, false }, { "level", F_INT, false }, { "block_size", F_UINT, false },
};
static const struct field verity_fields[] = {
	{ "file", F_STR, false }, { "format", F_UINT, false }, { "hash_algorithm", F_STR, false },
	{ "data_block_size", F_UINT, false }, { "hash_block_size", F_UINT, false },
	{ "data_blocks", F_UINT, false }, { "hash_offset", F_UINT, false },
	{ "salt", F_HEX, false }, { "root_hash", F_HEX64, false }, { "uuid", F_STR, false },
};
static const struct field measurement_fields[] = {
	{ "pcr", F_UINT, false }, { "event_type", F_UINT, false }, { "event_data", F_STR, false },
	{ "content_digest", F_HEX64, false }, { "digests", F_OBJ, false },
	{ "predicted", F_OBJ, false },
};

static int check_file(const char *name, size_t i, const json_t *f, const char *prev, ingot_error *e)
{
	static const char *const types[] = { "file", "dir", "symlink", "char", "block", "fifo",
					     "socket", NULL };
	char where[48];
	const char *type, *path;
	int r;

	snprintf(where, sizeof(where), "files[%zu]", i);
	r = check_fields(name, where, f, file_fields, ARRAY_SIZE(file_fields), e);
	if (r < 0 || (r = check_enum(name, where, f, "type", types, e)) < 0)
		return r;
	type = json_string_value(json_object_get(f, "type"));
	path = json_string_value(json_object_get(f, "path"));
	if (prev && strcmp(prev, path) >= 0)
		return ingot_fail(e, -EINVAL, "%s: %s.path: expected paths in strictly increasing byte "
				  "order, got \"%.64s\" after \"%.64s\"", name, where, path, prev);
	bool is_file = !strcmp(type, "file"), is_link = !strcmp(type, "symlink");
	bool is_dev = !strcmp(type, "char") || !strcmp(type, "block");
	if (is_file != (json_object_get(f, "size") != NULL) ||
	    is_file != (json_object_get(f, "sha256") != NULL))
		return ingot_fail(e, -EINVAL, "%s: %s: \"size\" and \"sha256\" are required for type file "
				  "and only for it (type is %s)", name, where, type);
	if (is_link != (json_object_get(f, "target") != NULL))
		return ingot_fail(e, -EINVAL, "%s: %s: \"target\" is required for symlinks and only for "
				  "them (type is %s)", name, where, type);
	if (is_dev != (json_object_get(f, "major") != NULL) ||
	    is_dev != (json_object_get(f, "minor") != NULL))
		return ingot_fail(e, -EINVAL, "%s: %s: \"major\" and \"minor\" are required for char/block "
				  "devices and only for them (type is %s)", name, where, type);
	return 0;
}

int manifest_check(const char *name, const json_t *m, ingot_error *e)
{
	static const char *const kinds[] = { "tar", "deb", "file", NULL };
	const char *schema, *prev = NULL;
	json_t *arr, *item;
	size_t i;
	int r;

	r = check_fields(name, "", m, top_fields, ARRAY_SIZE(top_fields), e);
	if (r < 0)
		return r;
	schema = json_string_value(json_object_get(m, "schema"));
	if (strcmp(schema, MANIFEST_SCHEMA_V1))
		return ingot_fail(e, -EINVAL, "%s: schema: expected \"%s\", got \"%.64s\"", name,
				  MANIFEST_SCHEMA_V1, schema);
	if ((r = check_fields(name, "recipe", json_object_get(m, "recipe"), recipe_fields,
			      ARRAY_SIZE(recipe_fields), e)) < 0 ||
	    (r = check_fields(name, "image", json_object_get(m, "image"), image_fields,
			      ARRAY_SIZE(image_fields), e)) < 0 ||
	    (r = check_fields(name, "verity", json_object_get(m, "verity"), verity_fields,
			      ARRAY_SIZE(verity_fields), e)) < 0 ||
	    (r = check_fields(name, "measurement", json_object_get(m, "measurement"),
			      measurement_fields, ARRAY_SIZE(measurement_fields), e)) < 0)
		return r;
	if (!*json_string_value(json_object_get(json_object_get(m, "recipe"), "name")))
		return ingot_fail(e, -EINVAL, "%s: recipe.name: expected a non-empty string", name);

	arr = json_object_get(m, "artifacts");
	json_array_foreach(arr, i, item) {
		char where[48];
		snprintf(where, sizeof(where), "artifacts[%zu]", i);
		if ((r = check_fields(name, where, item, artifact_fields, ARRAY_SIZE(artifact_fields), e)) < 0 ||
		    (r = check_enum(name, where, item, "kind", kinds, e)) < 0)
			return r;
	}
	arr = json_object_get(m, "files");
	json_array_foreach(arr, i, item) {
		if ((r = check_file(name, i, item, prev, e)) < 0)
			return r;
		prev = json_string_value(json_object_get(item, "path"));
	}
	return 0;
}

int manifest_load(const char *path, json_t **out, ingot_error *e)
{
	_cleanup_json_ json_t *m = NULL;
	int r = json_read_file(path, &m, e);
	if (r < 0)
		return r;
	r = manifest_check(path, m, e);
	if (r < 0)
		return r;
	*out = TAKE_PTR(m);
	return 0;
}
