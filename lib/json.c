#include "lib/json.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

char *json_canonical(const json_t *j, size_t *len)
{
	char *s = json_dumps(j, JSON_CANONICAL_FLAGS);
	if (!s)
		return NULL;
	size_t n = strlen(s);
	char *r = xrealloc(s, n + 2);
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

/* --- spliced dumps ------------------------------------------------------ */

/* A mark is a string jansson always writes the same way: control
 * characters are \u-escaped whatever the flags, so its dump is
 * "\u0001ingot-splice-N".  A document string that happens to dump the
 * same way makes that mark appear twice, which is refused. */
#define MARK_TEXT "\001ingot-splice-"
#define MARK_DUMPED "\"\\u0001ingot-splice-"

json_t *json_splice_mark(unsigned i)
{
	char s[32];
	if (i >= JSON_SPLICE_MAX)
		return NULL;
	snprintf(s, sizeof(s), MARK_TEXT "%u", i);
	return json_string(s);
}

int json_out_strbuf(void *sb, const char *buf, size_t len, ingot_error *e)
{
	(void)e;
	strbuf_add(sb, buf, len);
	return 0;
}

/* jansson hands its callback a token at a time: batch them. */
#define SPLICE_BUF (64u << 10)
struct splice_w {
	const struct json_out *out;
	ingot_error *e;
	int rc;              /* the first error from out->write */
	size_t used, total;
	size_t indent;       /* spaces added after each '\n' of an element */
	char buf[SPLICE_BUF];
};

static int w_flush(struct splice_w *w)
{
	if (w->used && !w->rc)
		w->rc = w->out->write(w->out->ctx, w->buf, w->used, w->e);
	w->used = 0;
	return w->rc;
}

static int w_put(struct splice_w *w, const char *p, size_t n)
{
	w->total += n;
	while (n && !w->rc) {
		size_t k = SPLICE_BUF - w->used < n ? SPLICE_BUF - w->used : n;
		memcpy(w->buf + w->used, p, k);
		w->used += k;
		p += k;
		n -= k;
		if (w->used == SPLICE_BUF)
			w_flush(w);
	}
	return w->rc;
}

static int w_spaces(struct splice_w *w, size_t n)
{
	static const char sp[] = "                                ";
	for (size_t k; n && !w->rc; n -= k) {
		k = n < sizeof(sp) - 1 ? n : sizeof(sp) - 1;
		w_put(w, sp, k);
	}
	return w->rc;
}

/* An element is dumped at depth 0: its line breaks get the indent it
 * has inside the document.  Strings hold no raw '\n' (jansson escapes
 * it), so every '\n' here is one of jansson's line breaks. */
static int elem_cb(const char *buf, size_t size, void *data)
{
	struct splice_w *w = data;

	while (size) {
		const char *nl = w->indent ? memchr(buf, '\n', size) : NULL;
		size_t k = nl ? (size_t)(nl - buf) + 1 : size;
		if (w_put(w, buf, k) < 0 || (nl && w_spaces(w, w->indent) < 0))
			return -1;
		buf += k;
		size -= k;
	}
	return 0;
}

/* jansson's dump_indent: a line break and the depth's spaces, or with no
 * indent a space where one goes unless JSON_COMPACT. */
static int w_break(struct splice_w *w, size_t flags, size_t spaces, bool space)
{
	if (flags & JSON_MAX_INDENT)
		return w_put(w, "\n", 1) < 0 ? w->rc : w_spaces(w, spaces);
	if (space && !(flags & JSON_COMPACT))
		return w_put(w, " ", 1);
	return 0;
}

/* The array as jansson writes one whose own line is indented by line
 * spaces: elements one level deeper, the closing bracket at line. */
static int splice_array(struct splice_w *w, const struct json_splice *sp, size_t flags, size_t line)
{
	size_t step = flags & JSON_MAX_INDENT, k = 0;
	json_t *el;
	int r;

	if (w_put(w, "[", 1) < 0)
		return w->rc;
	for (;;) {
		if ((r = sp->next(sp->ctx, &el, w->e)) < 0)
			return r;
		if (!el)
			break;
		if ((k++ && w_put(w, ",", 1) < 0) || w_break(w, flags, line + step, k > 1) < 0) {
			json_decref(el);
			return w->rc;
		}
		w->indent = step ? line + step : 0;
		r = json_dump_callback(el, elem_cb, w, flags | JSON_ENCODE_ANY);
		json_decref(el);
		w->indent = 0;
		if (r)
			return w->rc ? w->rc : ingot_fail(w->e, -ENOMEM, "cannot serialise JSON");
	}
	if (k && w_break(w, flags, line, false) < 0)
		return w->rc;
	return w_put(w, "]", 1);
}

int json_dump_spliced(const json_t *doc, size_t flags, const struct json_splice *sp, size_t n,
		      const struct json_out *out, size_t *len, ingot_error *e)
{
	_cleanup_free_ struct splice_w *w = xcalloc(1, sizeof(*w));
	_cleanup_free_ char *s = NULL;
	bool seen[JSON_SPLICE_MAX] = { false };
	const char *p, *q;
	int r;

	if (!(s = json_dumps(doc, flags)))
		return ingot_fail(e, -ENOMEM, "cannot serialise JSON");
	if (n > JSON_SPLICE_MAX)
		return ingot_fail(e, -EINVAL, "JSON splice: %zu arrays, limit %d", n, JSON_SPLICE_MAX);
	w->out = out;
	w->e = e;
	for (p = s; (q = strstr(p, MARK_DUMPED)); ) {
		const char *d = q + sizeof(MARK_DUMPED) - 1, *line = q;
		char *end = (char *)d;
		unsigned long i = *d >= '0' && *d <= '9' ? strtoul(d, &end, 10) : 0;

		if (end == d || *end != '"' || i >= n || seen[i])
			return ingot_fail(e, -EINVAL, "JSON splice: mark %.*s unknown or seen twice",
					  (int)(end - d), d);
		seen[i] = true;
		if (w_put(w, p, (size_t)(q - p)) < 0)
			return w->rc;
		while (line > s && line[-1] != '\n')
			line--;
		if ((r = splice_array(w, &sp[i], flags, strspn(line, " "))) < 0)
			return r;
		p = end + 1;
	}
	for (size_t i = 0; i < n; i++)
		if (!seen[i])
			return ingot_fail(e, -EINVAL, "JSON splice: mark %zu not in the document", i);
	if (w_put(w, p, strlen(p)) < 0 || w_flush(w) < 0)
		return w->rc;
	if (len)
		*len = w->total;
	return 0;
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

int json_read_line(const char *name, const char *buf, size_t len, size_t *pos, json_t **out,
		   ingot_error *e)
{
	const char *at = buf + *pos, *nl = memchr(at, '\n', len - *pos);
	json_error_t je;
	json_t *j;

	if (!nl)
		return ingot_fail(e, -EBADMSG, "%s: byte %zu: expected a line ending in a line break", name, *pos);
	j = json_loadb(at, (size_t)(nl - at), JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return ingot_fail(e, -EBADMSG, "%s: byte %zu: invalid JSON: %s", name,
				  *pos + (size_t)je.position, je.text);
	*pos += (size_t)(nl - at) + 1;
	*out = j;
	return 0;
}

int json_read_file_max(const char *path, size_t max, json_t **out, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = read_file(path, max, &buf, &len, e);
	if (r < 0)
		return r;
	return json_read_buf(path, buf, len, out, e);
}

int json_read_file(const char *path, json_t **out, ingot_error *e)
{
	return json_read_file_max(path, INGOT_JSON_MAX, out, e);
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

int json_set_hex(json_t *o, const char *key, const uint8_t *d, size_t len)
{
	_cleanup_free_ char *hex = xmalloc(2 * len + 1);

	hex_encode(d, len, hex);
	return json_object_set_new(o, key, json_string(hex));
}

