#include "builder/dpkg-status.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/xalloc.h"

/* One stanza's fields of interest, as pointers into the text (value
 * start and length; continuation lines are not needed for these). */
struct stanza {
	const char *f[6];
	size_t len[6];
	size_t line;      /* of its first field */
};

enum { F_PACKAGE, F_VERSION, F_ARCH, F_SOURCE, F_MAINT, F_STATUS };
static const char *const field_names[] = { "Package", "Version", "Architecture", "Source", "Maintainer", "Status" };

static char *dup_trim(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	return xstrndup(s, n);
}

/* "install ok installed": the third word is the package's state. */
static bool installed(const struct stanza *st)
{
	static const char want[] = " installed";
	size_t n = st->len[F_STATUS];
	const char *s = st->f[F_STATUS];

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\r'))
		n--;
	return s && n >= sizeof(want) - 1 && !memcmp(s + n - (sizeof(want) - 1), want, sizeof(want) - 1);
}

static int take(const struct stanza *st, const char *file, struct dpkg_db *db, size_t *alloc, ingot_error *e)
{
	struct dpkg_pkg *p;

	if (!st->f[F_STATUS] || !installed(st))
		return 0;
	for (int k = F_PACKAGE; k <= F_ARCH; k++)
		if (!st->f[k] || !st->len[k])
			return ingot_fail(e, -EBADMSG, "%s:%zu: %s: expected a value in an installed package's stanza, got none",
					  file, st->line, field_names[k]);
	if (db->n == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 64;
		db->v = xrealloc(db->v, *alloc * sizeof(*db->v));
	}
	p = &db->v[db->n++];
	*p = (struct dpkg_pkg){ .name = dup_trim(st->f[F_PACKAGE], st->len[F_PACKAGE]),
				.version = dup_trim(st->f[F_VERSION], st->len[F_VERSION]),
				.arch = dup_trim(st->f[F_ARCH], st->len[F_ARCH]),
				.maintainer = st->f[F_MAINT] ? dup_trim(st->f[F_MAINT], st->len[F_MAINT]) : xstrdup("") };
	if (st->f[F_SOURCE]) {
		/* "glibc" or "glibc (2.41-12)": a binNMU's source has the version without +bN */
		const char *s = st->f[F_SOURCE], *paren = memchr(s, '(', st->len[F_SOURCE]), *close;
		p->source = dup_trim(s, paren ? (size_t)(paren - s) : st->len[F_SOURCE]);
		if (paren && (close = memchr(paren, ')', st->len[F_SOURCE] - (size_t)(paren - s))))
			p->source_version = dup_trim(paren + 1, (size_t)(close - paren - 1));
	}
	if (!p->source || !*p->source) {
		free(p->source);
		p->source = xstrdup(p->name);
	}
	if (!p->source_version)
		p->source_version = xstrdup(p->version);
	return 0;
}

static int cmp_pkg(const void *a, const void *b)
{
	const struct dpkg_pkg *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->arch, y->arch);
}

void dpkg_db_free(struct dpkg_db *db)
{
	for (size_t i = 0; i < db->n; i++) {
		struct dpkg_pkg *p = &db->v[i];
		free(p->name), free(p->version), free(p->arch);
		free(p->source), free(p->source_version), free(p->maintainer);
	}
	free(db->v);
	*db = (struct dpkg_db){ 0 };
}

int dpkg_status_parse(const char *text, size_t len, const char *file, struct dpkg_db *db, ingot_error *e)
{
	struct stanza st = { 0 };
	const char *p = text, *end = text + len;
	size_t alloc = 0, line = 0;
	int rc = 0;

	*db = (struct dpkg_db){ 0 };
	while (rc >= 0 && p <= end) {
		const char *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL, *colon;
		size_t n = (nl ? nl : end) - p;

		line++;
		if (!n || (n == 1 && *p == '\r')) {
			/* a blank line (or the end) closes the stanza */
			if (st.line)
				rc = take(&st, file, db, &alloc, e);
			st = (struct stanza){ 0 };
		} else if (*p == ' ' || *p == '\t') {
			if (!st.line)
				rc = ingot_fail(e, -EBADMSG, "%s:%zu: expected a field, got a continuation line", file, line);
		} else if (!(colon = memchr(p, ':', n)) || colon == p) {
			rc = ingot_fail(e, -EBADMSG, "%s:%zu: expected \"Field: value\", got \"%.*s\"", file, line,
					(int)(n > 60 ? 60 : n), p);
		} else {
			if (!st.line)
				st.line = line;
			for (size_t k = 0; k < sizeof(field_names) / sizeof(*field_names); k++)
				if ((size_t)(colon - p) == strlen(field_names[k]) &&
				    !strncasecmp(p, field_names[k], (size_t)(colon - p))) {
					st.f[k] = colon + 1;
					st.len[k] = n - (size_t)(colon + 1 - p);
				}
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	if (rc >= 0 && st.line)
		rc = take(&st, file, db, &alloc, e);
	if (rc < 0) {
		dpkg_db_free(db);
		return rc;
	}
	if (db->n)
		qsort(db->v, db->n, sizeof(*db->v), cmp_pkg);
	return 0;
}
