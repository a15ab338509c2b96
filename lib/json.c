#include "lib/json.h"

#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"

char *json_canonical(const json_t *j, size_t *len)
{
	char *s = json_dumps(j, JSON_CANONICAL_FLAGS);
	if (!s)
		return NULL;
	size_t n = strlen(s);
	char *r = realloc(s, n + 2);
	if (!r) {
		free(s);
		return NULL;
	}
	r[n] = '\n';
	r[n + 1] = '\0';
	if (len)
		*len = n + 1;
	return r;
}

char *json_compact(const json_t *j, size_t *len)
{
	char *s = json_dumps(j, JSON_COMPACT_FLAGS);
	if (s && len)
		*len = strlen(s);
	return s;
}

int json_write_file(const char *path, const json_t *j, int mode, ingot_error *e)
{
	return json_write_file_as(path, j, json_canonical, mode, e);
}

int json_write_file_as(const char *path, const json_t *j, json_dump_fn dump, int mode,
		       ingot_error *e)
{
	size_t n;
	_cleanup_free_ char *s = dump(j, &n);
	if (!s)
		return ingot_fail(e, -ENOMEM, "%s: cannot serialise JSON", path);
	return write_file_atomic(path, s, n, (mode_t)mode, e);
}

int json_read_buf(const char *name, const char *buf, size_t len, json_t **out, ingot_error *e)
{
	json_error_t je;
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return ingot_fail(e, -EBADMSG, "%s:%d:%d: invalid JSON: %s", name, je.line, je.column, je.text);
	*out = j;
	return 0;
}

int json_read_file(const char *path, json_t **out, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = read_file(path, INGOT_JSON_MAX, &buf, &len, e);
	if (r < 0)
		return r;
	return json_read_buf(path, buf, len, out, e);
}

static int get_typed(const json_t *obj, const char *key, const char *what, json_type t,
		     const char *tname, json_t **out, ingot_error *e)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
	if (!v)
		return ingot_fail(e, -EINVAL, "%s: field '%s': missing, expected %s", what, key, tname);
	if (json_typeof(v) != t)
		return ingot_fail(e, -EINVAL, "%s: field '%s': expected %s", what, key, tname);
	*out = v;
	return 0;
}

int json_get_str(const json_t *obj, const char *key, const char *what, const char **out, ingot_error *e)
{
	json_t *v = NULL;
	int r = get_typed(obj, key, what, JSON_STRING, "a string", &v, e);
	if (r == 0)
		*out = json_string_value(v);
	return r;
}

int json_get_int(const json_t *obj, const char *key, const char *what, json_int_t *out, ingot_error *e)
{
	json_t *v = NULL;
	int r = get_typed(obj, key, what, JSON_INTEGER, "an integer", &v, e);
	if (r == 0)
		*out = json_integer_value(v);
	return r;
}

int json_get_obj(const json_t *obj, const char *key, const char *what, json_t **out, ingot_error *e)
{
	return get_typed(obj, key, what, JSON_OBJECT, "an object", out, e);
}

int json_get_arr(const json_t *obj, const char *key, const char *what, json_t **out, ingot_error *e)
{
	return get_typed(obj, key, what, JSON_ARRAY, "an array", out, e);
}
