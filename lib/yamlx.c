#include "lib/yamlx.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/xalloc.h"

int ydoc_load_buf(struct ydoc *d, const char *name, const char *buf, size_t len, ingot_error *e)
{
	yaml_parser_t p;
	int r = 0;

	memset(d, 0, sizeof(*d));
	d->file = xstrdup(name);
	if (!yaml_parser_initialize(&p))
		return ingot_fail(e, -ENOMEM, "%s: cannot initialise YAML parser", name);
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&p, &d->doc)) {
		r = ingot_fail(e, -EINVAL, "%s:%zu:%zu: YAML syntax error: %s%s%s", name,
			       p.problem_mark.line + 1, p.problem_mark.column + 1,
			       p.problem ? p.problem : "unknown problem",
			       p.context ? " " : "", p.context ? p.context : "");
	} else {
		d->loaded = true;
		if (!yaml_document_get_root_node(&d->doc))
			r = ingot_fail(e, -EINVAL, "%s:1:1: empty document, expected a mapping", name);
	}
	yaml_parser_delete(&p);
	return r;
}

int ydoc_load(struct ydoc *d, const char *path, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r;

	memset(d, 0, sizeof(*d));
	r = read_file(path, YDOC_MAX_BYTES, &buf, &len, e);
	if (r < 0)
		return r;
	return ydoc_load_buf(d, path, buf, len, e);
}

void ydoc_free(struct ydoc *d)
{
	if (d->loaded)
		yaml_document_delete(&d->doc);
	d->loaded = false;
	free(d->file);
	d->file = NULL;
}

yaml_node_t *ydoc_root(struct ydoc *d)
{
	return d->loaded ? yaml_document_get_root_node(&d->doc) : NULL;
}

yaml_node_t *ydoc_node(struct ydoc *d, int id)
{
	return yaml_document_get_node(&d->doc, id);
}

int ydoc_fail(struct ydoc *d, const yaml_node_t *n, ingot_error *e, const char *fmt, ...)
{
	char msg[INGOT_ERR_MSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n)
		return ingot_fail(e, -EINVAL, "%s:%zu:%zu: %s", d->file,
				  n->start_mark.line + 1, n->start_mark.column + 1, msg);
	return ingot_fail(e, -EINVAL, "%s: %s", d->file, msg);
}

const char *ydoc_kind(const yaml_node_t *n)
{
	if (!n)
		return "nothing";
	switch (n->type) {
	case YAML_MAPPING_NODE:
		return "mapping";
	case YAML_SEQUENCE_NODE:
		return "sequence";
	case YAML_SCALAR_NODE:
		if (n->data.scalar.length == 0 && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
			return "empty value";
		return "scalar";
	default:
		return "nothing";
	}
}

int ydoc_expect_map(struct ydoc *d, yaml_node_t *n, const char *field, ingot_error *e)
{
	if (!n || n->type != YAML_MAPPING_NODE)
		return ydoc_fail(d, n, e, "%s: expected a mapping, got %s", field, ydoc_kind(n));
	return 0;
}

int ydoc_expect_seq(struct ydoc *d, yaml_node_t *n, const char *field, ingot_error *e)
{
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return ydoc_fail(d, n, e, "%s: expected a sequence, got %s", field, ydoc_kind(n));
	return 0;
}

static bool key_is(const yaml_node_t *k, const char *key)
{
	size_t n = strlen(key);
	return k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == n &&
	       memcmp(k->data.scalar.value, key, n) == 0;
}

yaml_node_t *ydoc_get(struct ydoc *d, yaml_node_t *map, const char *key)
{
	yaml_node_t *k, *v;
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	ydoc_map_foreach(d, map, k, v)
		if (key_is(k, key))
			return v;
	return NULL;
}

int ydoc_need(struct ydoc *d, yaml_node_t *map, const char *key, const char *what,
	      yaml_node_t **out, ingot_error *e)
{
	yaml_node_t *v = ydoc_get(d, map, key);
	if (!v)
		return ydoc_fail(d, map, e, "%s: missing required field '%s'", what, key);
	*out = v;
	return 0;
}

int ydoc_check_keys(struct ydoc *d, yaml_node_t *map, const char *what,
		    const char *const *allowed, ingot_error *e)
{
	yaml_node_t *k, *v;
	int r = ydoc_expect_map(d, map, what, e);
	if (r < 0)
		return r;
	ydoc_map_foreach(d, map, k, v) {
		bool ok = false;
		(void)v;
		if (!k || k->type != YAML_SCALAR_NODE)
			return ydoc_fail(d, k, e, "%s: expected a string key, got %s", what, ydoc_kind(k));
		for (const char *const *a = allowed; *a; a++)
			if (key_is(k, *a))
				ok = true;
		if (!ok)
			return ydoc_fail(d, k, e, "%s: unknown key '%.*s'", what,
					 (int)k->data.scalar.length, (const char *)k->data.scalar.value);
		for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < _p; q++) {
			yaml_node_t *k2 = ydoc_node(d, q->key);
			if (k2 && k2->type == YAML_SCALAR_NODE &&
			    k2->data.scalar.length == k->data.scalar.length &&
			    memcmp(k2->data.scalar.value, k->data.scalar.value, k->data.scalar.length) == 0)
				return ydoc_fail(d, k, e, "%s: duplicate key '%.*s'", what,
						 (int)k->data.scalar.length, (const char *)k->data.scalar.value);
		}
	}
	return 0;
}

int ydoc_str(struct ydoc *d, yaml_node_t *n, const char *field, const char **out, ingot_error *e)
{
	if (!n || n->type != YAML_SCALAR_NODE ||
	    (n->data.scalar.length == 0 && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE))
		return ydoc_fail(d, n, e, "%s: expected a string, got %s", field, ydoc_kind(n));
	if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length)
		return ydoc_fail(d, n, e, "%s: expected a string without NUL bytes", field);
	*out = (const char *)n->data.scalar.value;
	return 0;
}

int ydoc_uint(struct ydoc *d, yaml_node_t *n, const char *field, uint64_t min, uint64_t max,
	      uint64_t *out, ingot_error *e)
{
	const char *s;
	char *end;
	unsigned long long v;

	if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    n->data.scalar.length == 0)
		return ydoc_fail(d, n, e, "%s: expected an integer in [%" PRIu64 ", %" PRIu64 "], got %s",
				 field, min, max, ydoc_kind(n));
	s = (const char *)n->data.scalar.value;
	if (s[0] < '0' || s[0] > '9')
		goto bad;
	errno = 0;
	v = strtoull(s, &end, s[0] == '0' && (s[1] == 'o' || s[1] == 'x') ? 0 : 10);
	if (s[0] == '0' && s[1] == 'o')
		v = strtoull(s + 2, &end, 8);
	if (errno || *end || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return ydoc_fail(d, n, e, "%s: expected an integer in [%" PRIu64 ", %" PRIu64 "], got '%s'",
			 field, min, max, s);
}

int ydoc_bool(struct ydoc *d, yaml_node_t *n, const char *field, bool *out, ingot_error *e)
{
	const char *s;
	if (n && n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		s = (const char *)n->data.scalar.value;
		if (!strcmp(s, "true")) {
			*out = true;
			return 0;
		}
		if (!strcmp(s, "false")) {
			*out = false;
			return 0;
		}
	}
	return ydoc_fail(d, n, e, "%s: expected true or false, got %s", field,
			 n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : ydoc_kind(n));
}
