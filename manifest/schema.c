#include "manifest/schema.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/time.h"

/* Field kinds for the table-driven schema check. */
enum fk { F_STR, F_HEX64, F_HEX, F_UINT, F_INT, F_OBJ, F_ARR, F_OBJ_OR_NULL, F_TIME_OR_NULL,
	  F_MODE, F_ABSPATH };

/* When a member must be there: always, optionally, or only for MANIFEST_FULL. */
enum need { N_REQ, N_OPT, N_FULL };

struct schema_field {
	const char *key;
	enum fk kind;
	enum need need;
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
	case F_TIME_OR_NULL: return time_parse(s, &t) == 0;
	case F_MODE:
		return n == 4 && strspn(s, "01234567") == 4;
	case F_ABSPATH: return s[0] == '/';
	default: return false;
	}
}

/* Where in the manifest a check is: what ("files", "image", "" for the
 * top level) and, for array items, the index.  Formatted only for an
 * error message: a snprintf per files[] entry was a tenth of the check. */
#define NO_INDEX SIZE_MAX
struct where {
	const char *what;
	size_t i;
};

static const char *where_str(const struct where *w, char buf[48])
{
	if (w->i == NO_INDEX)
		return w->what;
	snprintf(buf, 48, "%s[%zu]", w->what, w->i);
	return buf;
}

/* The most fields one object has (top_fields); vals arrays are this long. */
#define FIELDS_MAX 16

/* Check obj against fields; unknown members are refused so a typo or a
 * field from a future schema is not silently ignored.  vals (FIELDS_MAX
 * long) gets each field's value, NULL when absent.  One walk over the
 * members rather than a lookup per field; the first error is the same:
 * fields in table order first, then the first unknown member. */
static int check_fields(const char *name, const struct where *w, const json_t *obj,
			const struct schema_field *fields, size_t nfields, enum manifest_level level,
			const json_t **vals, ingot_error *e)
{
	const char *key, *unknown = NULL, *where;
	char buf[48];
	json_t *v;
	size_t i;

	if (!json_is_object(obj))
		return ingot_fail(e, -EINVAL, "%s: %s: expected an object, got %s", name,
				  where_str(w, buf), jtype(obj));
	memset(vals, 0, nfields * sizeof(*vals));
	json_object_foreach((json_t *)obj, key, v) {
		for (i = 0; i < nfields && strcmp(key, fields[i].key); i++)
			;
		if (i < nfields)
			vals[i] = v;
		else if (!unknown)
			unknown = key;
	}
	for (i = 0; i < nfields; i++) {
		if (!vals[i]) {
			if (fields[i].need == N_OPT ||
			    (fields[i].need == N_FULL && level != MANIFEST_FULL))
				continue;
			where = where_str(w, buf);
			return ingot_fail(e, -EINVAL, "%s: %s%s%s: missing, expected %s", name, where,
					  *where ? "." : "", fields[i].key, fk_expect(fields[i].kind));
		}
		if (!value_ok(vals[i], fields[i].kind)) {
			char got[96];
			if (json_is_string(vals[i]))
				snprintf(got, sizeof(got), "\"%.64s%s\"", json_string_value(vals[i]),
					 json_string_length(vals[i]) > 64 ? "..." : "");
			else
				snprintf(got, sizeof(got), "%s", jtype(vals[i]));
			where = where_str(w, buf);
			return ingot_fail(e, -EINVAL, "%s: %s%s%s: expected %s, got %s", name, where,
					  *where ? "." : "", fields[i].key, fk_expect(fields[i].kind), got);
		}
	}
	if (unknown) {
		where = where_str(w, buf);
		return ingot_fail(e, -EINVAL, "%s: %s%sunknown field '%.64s'", name, where,
				  *where ? ": " : "", unknown);
	}
	return 0;
}

static int check_enum(const char *name, const struct where *w, const json_t *v, const char *key,
		      const char *const *allowed, ingot_error *e)
{
	const char *s = json_string_value(v);
	char buf[48];
	if (!s)   /* absent: check_fields decided whether that is allowed */
		return 0;
	for (size_t i = 0; allowed[i]; i++)
		if (!strcmp(s, allowed[i]))
			return 0;
	return ingot_fail(e, -EINVAL, "%s: %s.%s: expected one of %s, got \"%.64s\"", name,
			  where_str(w, buf), key,
			  !strcmp(key, "kind") ? "tar, deb, file"
					       : "file, dir, symlink, char, block, fifo, socket", s);
}

static const struct schema_field top_fields[] = {
	{ "schema", F_STR, N_REQ }, { "ingot_version", F_STR, N_FULL },
	{ "recipe", F_OBJ, N_REQ }, { "epoch", F_UINT, N_FULL }, { "serial", F_UINT, N_FULL },
	{ "expires", F_TIME_OR_NULL, N_FULL }, { "tuple", F_OBJ_OR_NULL, N_FULL },
	{ "artifacts", F_ARR, N_REQ }, { "files", F_ARR, N_REQ }, { "image", F_OBJ, N_FULL },
	{ "verity", F_OBJ, N_FULL }, { "measurement", F_OBJ, N_FULL },
	{ "boot", F_OBJ, N_OPT },  /* builder/uki.c: recipes with a boot: section */
	{ "sbom", F_OBJ, N_OPT },  /* builder/sbom.c: the SPDX document, a second subject */
};
/* boot.secure_boot (builder/uki.c, a recipe with boot.secure-boot): the
 * rest of "boot" is the predictor's, read where it is used. */
static const struct schema_field secure_boot_fields[] = {
	{ "signer_cert_sha256", F_HEX64, N_REQ },
};
static const struct schema_field sbom_fields[] = {
	{ "file", F_STR, N_REQ }, { "sha256", F_HEX64, N_REQ },
};
static const struct schema_field recipe_fields[] = {
	{ "name", F_STR, N_FULL }, { "version", F_STR, N_FULL }, { "file", F_STR, N_FULL },
	{ "sha256", F_HEX64, N_FULL },
};
enum { AF_NAME, AF_KIND, AF_SOURCE, AF_SHA256, AF_SIZE };
static const struct schema_field artifact_fields[] = {
	[AF_NAME] = { "name", F_STR, N_REQ }, [AF_KIND] = { "kind", F_STR, N_FULL },
	[AF_SOURCE] = { "source", F_STR, N_FULL }, [AF_SHA256] = { "sha256", F_HEX64, N_FULL },
	[AF_SIZE] = { "size", F_UINT, N_FULL },
};
/* check_file reads the values check_fields found by these indices. */
enum { FF_PATH, FF_TYPE, FF_MODE, FF_UID, FF_GID, FF_SIZE, FF_SHA256, FF_TARGET, FF_MAJOR,
       FF_MINOR };
static const struct schema_field file_fields[] = {
	[FF_PATH] = { "path", F_ABSPATH, N_REQ }, [FF_TYPE] = { "type", F_STR, N_FULL },
	[FF_MODE] = { "mode", F_MODE, N_FULL }, [FF_UID] = { "uid", F_UINT, N_FULL },
	[FF_GID] = { "gid", F_UINT, N_FULL }, [FF_SIZE] = { "size", F_UINT, N_OPT },
	[FF_SHA256] = { "sha256", F_HEX64, N_OPT }, [FF_TARGET] = { "target", F_STR, N_OPT },
	[FF_MAJOR] = { "major", F_UINT, N_OPT }, [FF_MINOR] = { "minor", F_UINT, N_OPT },
};
static const struct schema_field image_fields[] = {
	{ "file", F_STR, N_FULL }, { "sha256", F_HEX64, N_FULL }, { "size", F_UINT, N_FULL },
	{ "compression", F_STR, N_FULL }, { "level", F_INT, N_FULL }, { "block_size", F_UINT, N_FULL },
};
static const struct schema_field verity_fields[] = {
	{ "file", F_STR, N_FULL }, { "format", F_UINT, N_FULL }, { "hash_algorithm", F_STR, N_FULL },
	{ "data_block_size", F_UINT, N_FULL }, { "hash_block_size", F_UINT, N_FULL },
	{ "data_blocks", F_UINT, N_FULL }, { "hash_offset", F_UINT, N_FULL },
	{ "salt", F_HEX, N_FULL }, { "root_hash", F_HEX64, N_FULL }, { "uuid", F_STR, N_FULL },
};
static const struct schema_field measurement_fields[] = {
	{ "pcr", F_UINT, N_FULL }, { "event_type", F_UINT, N_FULL }, { "event_data", F_STR, N_FULL },
	{ "content_digest", F_HEX64, N_FULL }, { "digests", F_OBJ, N_FULL },
	{ "predicted", F_OBJ, N_FULL },
};

_Static_assert(ARRAY_SIZE(top_fields) <= FIELDS_MAX && ARRAY_SIZE(sbom_fields) <= FIELDS_MAX &&
	       ARRAY_SIZE(recipe_fields) <= FIELDS_MAX && ARRAY_SIZE(artifact_fields) <= FIELDS_MAX &&
	       ARRAY_SIZE(file_fields) <= FIELDS_MAX && ARRAY_SIZE(image_fields) <= FIELDS_MAX &&
	       ARRAY_SIZE(verity_fields) <= FIELDS_MAX &&
	       ARRAY_SIZE(measurement_fields) <= FIELDS_MAX, "FIELDS_MAX below a field table");

static int check_file(const char *name, size_t i, const json_t *f, const char *prev,
		      enum manifest_level level, ingot_error *e)
{
	static const char *const types[] = { "file", "dir", "symlink", "char", "block", "fifo",
					     "socket", NULL };
	const struct where w = { "files", i };
	const json_t *v[FIELDS_MAX];
	const char *type, *path;
	char buf[48];
	int r;

	r = check_fields(name, &w, f, file_fields, ARRAY_SIZE(file_fields), level, v, e);
	if (r < 0 || (r = check_enum(name, &w, v[FF_TYPE], "type", types, e)) < 0)
		return r;
	type = json_string_value(v[FF_TYPE]);
	path = json_string_value(v[FF_PATH]);
	if (prev && strcmp(prev, path) >= 0 && level == MANIFEST_FULL)
		return ingot_fail(e, -EINVAL, "%s: %s.path: expected paths in strictly increasing byte "
				  "order, got \"%.64s\" after \"%.64s\"", name, where_str(&w, buf), path,
				  prev);
	if (level != MANIFEST_FULL)
		return 0;
	bool is_file = !strcmp(type, "file"), is_link = !strcmp(type, "symlink");
	bool is_dev = !strcmp(type, "char") || !strcmp(type, "block");
	if (is_file != (v[FF_SIZE] != NULL) || is_file != (v[FF_SHA256] != NULL))
		return ingot_fail(e, -EINVAL, "%s: %s: \"size\" and \"sha256\" are required for type file "
				  "and only for it (type is %s)", name, where_str(&w, buf), type);
	if (is_link != (v[FF_TARGET] != NULL))
		return ingot_fail(e, -EINVAL, "%s: %s: \"target\" is required for symlinks and only for "
				  "them (type is %s)", name, where_str(&w, buf), type);
	if (is_dev != (v[FF_MAJOR] != NULL) || is_dev != (v[FF_MINOR] != NULL))
		return ingot_fail(e, -EINVAL, "%s: %s: \"major\" and \"minor\" are required for char/block "
				  "devices and only for them (type is %s)", name, where_str(&w, buf), type);
	return 0;
}

static int check_member(const char *name, const json_t *m, const char *key,
			const struct schema_field *fields, size_t n, enum manifest_level level,
			ingot_error *e)
{
	const json_t *v = json_object_get(m, key), *vals[FIELDS_MAX];
	if (!v && level != MANIFEST_FULL)   /* check_fields on m allowed its absence */
		return 0;
	return check_fields(name, &(struct where){ key, NO_INDEX }, v, fields, n, level, vals, e);
}

int manifest_check_level(const char *name, const json_t *m, enum manifest_level level,
			 ingot_error *e)
{
	static const char *const kinds[] = { "tar", "deb", "file", NULL };
	const char *schema, *prev = NULL, *rname;
	const json_t *v[FIELDS_MAX];
	json_t *arr, *item;
	size_t i;
	int r;

	/* Bounded before any entry is looked at. */
	if (json_array_size(json_object_get(m, "files")) > MANIFEST_MAX_FILES)
		return ingot_fail(e, -EFBIG, "%s: files: %zu entries, limit %u", name,
				  json_array_size(json_object_get(m, "files")), MANIFEST_MAX_FILES);
	/* The schema first: another document is "not a manifest", not a
	 * manifest with a missing member. */
	schema = json_string_value(json_object_get(m, "schema"));
	if (schema && strcmp(schema, MANIFEST_SCHEMA_V1))
		return ingot_fail(e, -EINVAL, "%s: schema: expected \"%s\", got \"%.64s\"", name,
				  MANIFEST_SCHEMA_V1, schema);
	r = check_fields(name, &(struct where){ "", NO_INDEX }, m, top_fields, ARRAY_SIZE(top_fields),
			 level, v, e);
	if (r < 0)
		return r;
	if ((r = check_member(name, m, "recipe", recipe_fields, ARRAY_SIZE(recipe_fields), level, e)) < 0 ||
	    (r = check_member(name, m, "image", image_fields, ARRAY_SIZE(image_fields), level, e)) < 0 ||
	    (r = check_member(name, m, "verity", verity_fields, ARRAY_SIZE(verity_fields), level, e)) < 0 ||
	    (r = check_member(name, m, "measurement", measurement_fields,
			      ARRAY_SIZE(measurement_fields), level, e)) < 0 ||
	    (json_object_get(m, "sbom") &&
	     (r = check_member(name, m, "sbom", sbom_fields, ARRAY_SIZE(sbom_fields), level, e)) < 0))
		return r;
	if (json_is_object(json_object_get(m, "boot")) && json_object_get(json_object_get(m, "boot"), "secure_boot") &&
	    (r = check_fields(name, &(struct where){ "boot.secure_boot", NO_INDEX },
			      json_object_get(json_object_get(m, "boot"), "secure_boot"), secure_boot_fields,
			      ARRAY_SIZE(secure_boot_fields), level, v, e)) < 0)
		return r;
	rname = json_string_value(json_object_get(json_object_get(m, "recipe"), "name"));
	if (rname && !*rname)
		return ingot_fail(e, -EINVAL, "%s: recipe.name: expected a non-empty string", name);

	arr = json_object_get(m, "artifacts");
	json_array_foreach(arr, i, item) {
		const struct where w = { "artifacts", i };
		if ((r = check_fields(name, &w, item, artifact_fields, ARRAY_SIZE(artifact_fields),
				      level, v, e)) < 0 ||
		    (r = check_enum(name, &w, v[AF_KIND], "kind", kinds, e)) < 0)
			return r;
	}
	arr = json_object_get(m, "files");
	json_array_foreach(arr, i, item) {
		if ((r = check_file(name, i, item, prev, level, e)) < 0)
			return r;
		prev = json_string_value(json_object_get(item, "path"));
	}
	return 0;
}

/* What the in-toto statement adds around the manifest: types, the image
 * digest and its name (a copy of image.file, escaped at most 6 bytes a
 * character). */
#define STATEMENT_OVERHEAD_MAX (512 + 6 * MANIFEST_MAX_STRING)

/* Bytes jansson would write, counted without writing them. */
static int count_bytes(const char *buf, size_t size, void *data)
{
	(void)buf;
	*(size_t *)data += size;
	return 0;
}

static size_t dumped_size(const json_t *j, size_t flags)
{
	size_t n = 0;
	return json_dump_callback(j, count_bytes, &n, flags) == 0 ? n : SIZE_MAX;
}

int manifest_check_sizes(size_t files, size_t canonical, size_t compact,
			 const struct manifest_limits *l, ingot_error *e)
{
	if (files > l->max_files)
		return ingot_fail(e, -EFBIG, "manifest: %zu files, readers accept at most %zu",
				  files, l->max_files);
	if (canonical > l->file_max)
		return ingot_fail(e, -EFBIG, "manifest: %zu bytes as written, readers accept at most "
				  "%zu (%zu files)", canonical, l->file_max, files);
	/* The statement's compact form is the manifest's plus a fixed
	 * wrapper (subject, types): bound it by the manifest's own. */
	if (compact > SIZE_MAX - STATEMENT_OVERHEAD_MAX ||
	    compact + STATEMENT_OVERHEAD_MAX > l->payload_max)
		return ingot_fail(e, -EFBIG, "manifest: its signed statement would be %zu bytes, "
				  "readers accept at most %zu (%zu files)",
				  compact > SIZE_MAX - STATEMENT_OVERHEAD_MAX ? SIZE_MAX
									     : compact + STATEMENT_OVERHEAD_MAX,
				  l->payload_max, files);
	return 0;
}

int manifest_check_size(const json_t *m, const struct manifest_limits *l, ingot_error *e)
{
	size_t files = json_array_size(json_object_get(m, "files"));

	if (files > l->max_files)   /* before dumping what could be huge */
		return manifest_check_sizes(files, 0, 0, l, e);
	size_t canonical = dumped_size(m, JSON_CANONICAL_FLAGS);
	if (canonical != SIZE_MAX)
		canonical++;   /* json_canonical adds a newline */
	return manifest_check_sizes(files, canonical, dumped_size(m, JSON_COMPACT_FLAGS), l, e);
}

int manifest_check_head(const char *name, const json_t *m, ingot_error *e)
{
	/* A shallow copy: only the top level is new. */
	_cleanup_json_ json_t *head = json_copy((json_t *)m);

	if (!head || json_object_set_new(head, "files", json_array()) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	return manifest_check(name, head, e);
}

int manifest_check_file(const char *name, size_t i, const json_t *f, const char *prev,
			ingot_error *e)
{
	return check_file(name, i, f, prev, MANIFEST_FULL, e);
}
