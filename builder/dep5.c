#include "builder/dep5.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/escape.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

/* DEP-5's short names (copyright-format 1.0, "License short name") and
 * what SPDX calls them: 'L' a license NAME[-VERSION] (SPDX's id, and its
 * "or later" id for NAME-VERSION+ where SPDX has one: without it, "+" has
 * no SPDX identifier), 'X' the KEYWORD of "with KEYWORD exception".
 * Names are case-insensitive, versions equal without trailing ".0"s
 * (GPL-2 is GPL-2.0).  Not here, so a LicenseRef with the file's text:
 * public-domain, the OpenSSL exception (neither has an SPDX identifier),
 * a versionless GPL and the like. */
static const struct dep5_name {
	char kind;
	const char *name, *version, *spdx, *later;
} names[] = {
	{ 'L', "Apache", "1.0", "Apache-1.0", NULL },
	{ 'L', "Apache", "1.1", "Apache-1.1", NULL },
	{ 'L', "Apache", "2.0", "Apache-2.0", NULL },
	{ 'L', "Artistic", "1.0", "Artistic-1.0", NULL },
	{ 'L', "Artistic", "2.0", "Artistic-2.0", NULL },
	{ 'L', "BSD-2-clause", NULL, "BSD-2-Clause", NULL },
	{ 'L', "BSD-3-clause", NULL, "BSD-3-Clause", NULL },
	{ 'L', "BSD-4-clause", NULL, "BSD-4-Clause", NULL },
	{ 'L', "ISC", NULL, "ISC", NULL },
	{ 'L', "CC-BY", "1.0", "CC-BY-1.0", NULL },
	{ 'L', "CC-BY", "2.0", "CC-BY-2.0", NULL },
	{ 'L', "CC-BY", "2.5", "CC-BY-2.5", NULL },
	{ 'L', "CC-BY", "3.0", "CC-BY-3.0", NULL },
	{ 'L', "CC-BY", "4.0", "CC-BY-4.0", NULL },
	{ 'L', "CC-BY-SA", "1.0", "CC-BY-SA-1.0", NULL },
	{ 'L', "CC-BY-SA", "2.0", "CC-BY-SA-2.0", NULL },
	{ 'L', "CC-BY-SA", "2.5", "CC-BY-SA-2.5", NULL },
	{ 'L', "CC-BY-SA", "3.0", "CC-BY-SA-3.0", NULL },
	{ 'L', "CC-BY-SA", "4.0", "CC-BY-SA-4.0", NULL },
	{ 'L', "CC0", NULL, "CC0-1.0", NULL },          /* there is one CC0 */
	{ 'L', "CC0", "1.0", "CC0-1.0", NULL },
	{ 'L', "CDDL", "1.0", "CDDL-1.0", NULL },
	{ 'L', "CDDL", "1.1", "CDDL-1.1", NULL },
	{ 'L', "CPL", "1.0", "CPL-1.0", NULL },
	{ 'L', "EFL", "1.0", "EFL-1.0", NULL },
	{ 'L', "EFL", "2.0", "EFL-2.0", NULL },
	{ 'L', "Expat", NULL, "MIT", NULL },
	{ 'L', "MIT", NULL, "MIT", NULL },              /* not DEP-5's, but SPDX's */
	{ 'L', "BSL", "1.0", "BSL-1.0", NULL },
	{ 'L', "GPL", "1.0", "GPL-1.0-only", "GPL-1.0-or-later" },
	{ 'L', "GPL", "2.0", "GPL-2.0-only", "GPL-2.0-or-later" },
	{ 'L', "GPL", "3.0", "GPL-3.0-only", "GPL-3.0-or-later" },
	{ 'L', "AGPL", "3.0", "AGPL-3.0-only", "AGPL-3.0-or-later" },
	{ 'L', "LGPL", "2.0", "LGPL-2.0-only", "LGPL-2.0-or-later" },
	{ 'L', "LGPL", "2.1", "LGPL-2.1-only", "LGPL-2.1-or-later" },
	{ 'L', "LGPL", "3.0", "LGPL-3.0-only", "LGPL-3.0-or-later" },
	{ 'L', "GFDL", "1.1", "GFDL-1.1-only", "GFDL-1.1-or-later" },
	{ 'L', "GFDL", "1.2", "GFDL-1.2-only", "GFDL-1.2-or-later" },
	{ 'L', "GFDL", "1.3", "GFDL-1.3-only", "GFDL-1.3-or-later" },
	{ 'L', "GFDL-NIV", "1.1", "GFDL-1.1-no-invariants-only", "GFDL-1.1-no-invariants-or-later" },
	{ 'L', "GFDL-NIV", "1.2", "GFDL-1.2-no-invariants-only", "GFDL-1.2-no-invariants-or-later" },
	{ 'L', "GFDL-NIV", "1.3", "GFDL-1.3-no-invariants-only", "GFDL-1.3-no-invariants-or-later" },
	{ 'L', "LPPL", "1.0", "LPPL-1.0", NULL },
	{ 'L', "LPPL", "1.1", "LPPL-1.1", NULL },
	{ 'L', "LPPL", "1.2", "LPPL-1.2", NULL },
	{ 'L', "LPPL", "1.3a", "LPPL-1.3a", NULL },
	{ 'L', "LPPL", "1.3c", "LPPL-1.3c", NULL },
	{ 'L', "MPL", "1.0", "MPL-1.0", NULL },
	{ 'L', "MPL", "1.1", "MPL-1.1", NULL },
	{ 'L', "MPL", "2.0", "MPL-2.0", NULL },
	/* DEP-5: "Perl license (use 'GPL-1+ or Artistic-1' instead)" */
	{ 'L', "Perl", NULL, "Artistic-1.0-Perl OR GPL-1.0-or-later", NULL },
	{ 'L', "Python", "2.0", "Python-2.0", NULL },
	{ 'L', "QPL", "1.0", "QPL-1.0", NULL },
	{ 'L', "W3C", NULL, "W3C", NULL },
	{ 'L', "Zlib", NULL, "Zlib", NULL },
	{ 'L', "Zope", "1.1", "ZPL-1.1", NULL },
	{ 'L', "Zope", "2.0", "ZPL-2.0", NULL },
	{ 'L', "Zope", "2.1", "ZPL-2.1", NULL },
	{ 'X', "Classpath", NULL, "Classpath-exception-2.0", NULL },
	{ 'X', "Font", NULL, "Font-exception-2.0", NULL },
	{ 'X', "Libtool", NULL, "Libtool-exception", NULL },
	{ 'X', "LLVM", NULL, "LLVM-exception", NULL },
};

struct span {
	const char *p;
	size_t n;
};

static bool span_is(struct span s, const char *word)
{
	return s.n == strlen(word) && !strncasecmp(s.p, word, s.n);
}

/* A version without its trailing ".0"s: "2.0" and "2" are one version. */
static struct span version_core(struct span v)
{
	while (v.n > 2 && v.p[v.n - 2] == '.' && v.p[v.n - 1] == '0')
		v.n -= 2;
	return v;
}

static bool version_eq(struct span a, const char *b)
{
	struct span bs = version_core((struct span){ b, strlen(b) });
	a = version_core(a);
	return a.n == bs.n && !strncasecmp(a.p, bs.p, a.n);
}

static const struct dep5_name *find(char kind, struct span name, struct span ver, bool has_ver)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct dep5_name *d = &names[i];
		if (d->kind == kind && span_is(name, d->name) && !d->version == !has_ver &&
		    (!has_ver || version_eq(ver, d->version)))
			return d;
	}
	return NULL;
}

/* SPDX's expression for the short name tok ("GPL-2+", "BSD-3-clause")
 * with the exception keyword kw (n 0: none); NULL when it has none. */
static const char *map_name(struct span tok, struct span kw, char buf[160])
{
	struct span name = tok, ver = { NULL, 0 };
	bool plus = tok.n > 1 && tok.p[tok.n - 1] == '+';
	const struct dep5_name *d, *x = NULL;
	const char *id;

	if (plus)
		name.n--;
	/* NAME-VERSION: a version starts with a digit after the last '-' */
	for (size_t i = name.n; i-- > 1;) {
		if (name.p[i] != '-')
			continue;
		if (i + 1 < name.n && name.p[i + 1] >= '0' && name.p[i + 1] <= '9') {
			ver = (struct span){ name.p + i + 1, name.n - i - 1 };
			name.n = i;
		}
		break;
	}
	if (!(d = find('L', name, ver, ver.p != NULL)) || (plus && !d->later) ||
	    (kw.n && (!(x = find('X', kw, ver, false)) || strchr(d->spdx, ' '))))
		return NULL;
	id = plus ? d->later : d->spdx;
	if (!x)
		return id;
	snprintf(buf, 160, "%s WITH %s", id, x->spdx);
	return buf;
}

/* A License: field's text (its continuation lines) as the text it
 * stands for: one leading blank off each line, " ." an empty line. */
static char *field_text(struct span body)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *p = body.p, *end = body.p + body.n;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		if (n && (*p == ' ' || *p == '\t'))
			p++, n--;
		while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (sb.len)
			strbuf_addch(&sb, '\n');
		if (!(n == 1 && *p == '.'))
			strbuf_add(&sb, p, n);
		p = nl ? nl + 1 : end;
	}
	return sb.len ? strbuf_detach(&sb, NULL) : NULL;
}

/* What the file holds that the expression needs: the Files: *
 * paragraph's License (first line and text), and the stand-alone License
 * paragraphs (name and text). */
#define STANDALONE_MAX 64
struct copyright {
	struct span lic, body;
	struct span alone[STANDALONE_MAX][2];
	size_t n_alone;
	unsigned names;            /* names in lic (the text is lic's only with one) */
};

/* A LicenseRef for the name span (with its text from c), added to out
 * once; NULL when the file gives no text for it. */
static const char *license_ref(const struct copyright *c, struct span name, struct dep5_license *out)
{
	_cleanup_free_ char *text = NULL;
	uint8_t d[SHA256_LEN];
	char hex[2 * SHA256_LEN + 1], id[96];
	size_t k = 0;

	if (c->names == 1 && c->body.n)
		text = field_text(c->body);
	for (size_t i = 0; !text && i < c->n_alone; i++)
		if (c->alone[i][0].n == name.n && !strncasecmp(c->alone[i][0].p, name.p, name.n) && c->alone[i][1].n)
			text = field_text(c->alone[i][1]);
	/* a JSON string: UTF-8 (a Latin-1 copyright file has no usable text) */
	if (!text || !utf8_valid(text))
		return NULL;
	sha256_buf(text, strlen(text), d);
	hex_encode(d, 4, hex);
	k = (size_t)snprintf(id, sizeof(id), "LicenseRef-");
	/* SPDX ids are [A-Za-z0-9.-]: "GPL-2+ with OpenSSL exception" ->
	 * GPL-2plus-with-OpenSSL-exception */
	for (size_t i = 0; i < name.n && k < 64; i++) {
		char ch = name.p[i];
		if (ch == '+')
			k += (size_t)snprintf(id + k, sizeof(id) - k, "plus");
		else
			id[k++] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
						  ch == '.' ? ch : '-';
	}
	snprintf(id + k, sizeof(id) - k, "-%s", hex);
	for (size_t i = 0; i < out->n_refs; i++)
		if (!strcmp(out->refs[i].id, id))
			return out->refs[i].id;
	if (out->n_refs == DEP5_REFS_MAX)
		return NULL;
	struct dep5_ref *r = &out->refs[out->n_refs++];
	snprintf(r->id, sizeof(r->id), "%s", id);
	r->name = xstrndup(name.p, name.n);
	r->text = TAKE_PTR(text);
	return r->id;
}

/* The next blank-separated word of line at *pos; *comma when it ended
 * with ',' (not part of the word). */
static bool next_word(struct span line, size_t *pos, struct span *w, bool *comma)
{
	size_t i = *pos;

	while (i < line.n && (line.p[i] == ' ' || line.p[i] == '\t'))
		i++;
	if (i == line.n)
		return false;
	w->p = line.p + i;
	while (i < line.n && line.p[i] != ' ' && line.p[i] != '\t')
		i++;
	w->n = (size_t)(line.p + i - w->p);
	*comma = w->n > 1 && w->p[w->n - 1] == ',';
	w->n -= *comma;
	*pos = i;
	return true;
}

/* A License: line as items: names (the short name, its exception
 * keyword, the whole "NAME with KEYWORD exception"), operators, and the
 * commas that close a group. */
#define ITEMS_MAX 256
struct item {
	enum { NAME, AND, OR, COMMA } kind;
	struct span word, kw, whole;
};

static int tokenize(struct span line, struct item *it, size_t *n)
{
	struct span w;
	size_t pos = 0;
	bool comma;

	*n = 0;
	while (next_word(line, &pos, &w, &comma)) {
		struct item x = { span_is(w, "and") ? AND : span_is(w, "or") ? OR : NAME, w, { NULL, 0 }, w };
		size_t save = pos;
		bool cm;
		struct span v;

		if (x.kind == NAME && !comma && next_word(line, &pos, &v, &cm) && span_is(v, "with") && !cm) {
			/* "with KEYWORD... exception" */
			while (next_word(line, &pos, &v, &comma) && !span_is(v, "exception") && !comma) {
				x.kw.p = x.kw.p ? x.kw.p : v.p;
				x.kw.n = (size_t)(v.p + v.n - x.kw.p);
			}
			if (!x.kw.p || !span_is(v, "exception"))
				return -1;
			x.whole.n = (size_t)(v.p + v.n - w.p);
		} else {
			pos = save;
		}
		if (*n + 2 > ITEMS_MAX)
			return -1;
		it[(*n)++] = x;
		if (comma)
			it[(*n)++] = (struct item){ .kind = COMMA };
	}
	return 0;
}

static void add_part(struct strbuf *sb, const char *s, bool compound)
{
	strbuf_addf(sb, compound ? "(%s)" : "%s", s);
}

/* DEP-5's "A or B, and C": a comma closes a group, (A OR B) AND C;
 * within one, "and" and "or" mixed are ambiguous, so refused.  0, or -1
 * when the line is not that or a name does not map. */
static int expression(struct copyright *c, struct dep5_license *out)
{
	struct item it[ITEMS_MAX];
	_cleanup_strbuf_ struct strbuf acc = STRBUF_INIT;
	bool acc_compound = false;
	size_t n, i = 0;
	int join = 0;   /* the operator before the next group */

	if (tokenize(c->lic, it, &n) < 0)
		return -1;
	for (size_t k = 0; k < n; k++)
		c->names += it[k].kind == NAME;
	while (i < n) {
		_cleanup_strbuf_ struct strbuf grp = STRBUF_INIT;
		size_t parts = 0;
		int op = 0;
		const char *s = NULL;
		char buf[160];

		/* NAME (OP NAME)*, one OP throughout */
		for (;; i++) {
			if (i == n || it[i].kind != NAME ||
			    (!(s = map_name(it[i].word, it[i].kw, buf)) && !(s = license_ref(c, it[i].whole, out))))
				return -1;
			if (parts++)
				strbuf_addstr(&grp, op == AND ? " AND " : " OR ");
			/* Perl's expression is compound: bracketed among others */
			add_part(&grp, s, strchr(s, ' ') && !(parts == 1 && (i + 1 == n || it[i + 1].kind == COMMA)));
			if (++i == n || it[i].kind == COMMA)
				break;
			if (op && (int)it[i].kind != op)
				return -1;
			op = (int)it[i].kind;
		}
		if (acc.len) {
			_cleanup_strbuf_ struct strbuf both = STRBUF_INIT;
			add_part(&both, acc.buf, acc_compound);
			strbuf_addstr(&both, join == AND ? " AND " : " OR ");
			add_part(&both, grp.buf, parts > 1 || strchr(grp.buf, ' '));
			strbuf_reset(&acc);
			strbuf_addstr(&acc, both.buf);
			acc_compound = true;
		} else {
			strbuf_addstr(&acc, grp.buf);
			acc_compound = parts > 1 || strchr(grp.buf, ' ');
		}
		if (i == n)
			break;
		/* ", and" / ", or" then the next group */
		if (++i == n || (it[i].kind != AND && it[i].kind != OR))
			return -1;
		join = (int)it[i++].kind;
		if (i == n)
			return -1;
	}
	if (!acc.len || acc.len >= DEP5_LICENSE_MAX)
		return -1;
	memcpy(out->expr, acc.buf, acc.len + 1);
	return 0;
}

void dep5_license_free(struct dep5_license *l)
{
	for (size_t i = 0; i < l->n_refs; i++) {
		free(l->refs[i].name);
		free(l->refs[i].text);
	}
	l->n_refs = 0;
}

/* The value of field (with its colon) if line is that field, else NULL;
 * *n its length without trailing blanks. */
static const char *field(const char *line, size_t len, const char *name, size_t *n)
{
	size_t k = strlen(name);

	if (len < k || strncasecmp(line, name, k))
		return NULL;
	line += k, len -= k;
	while (len && (*line == ' ' || *line == '\t'))
		line++, len--;
	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
		len--;
	*n = len;
	return line;
}

static bool blank(const char *p, size_t n)
{
	while (n && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++, n--;
	return !n;
}

/* One paragraph as read: its Files: (is it "*") and License: (first line
 * and the continuation lines after it). */
struct para {
	bool files, star;
	struct span lic, body;
};

/* Fold a finished paragraph into c: the first Files: * one, or a
 * stand-alone License one. */
static void para_end(struct copyright *c, struct para *p, bool *have_star)
{
	if (p->files && p->star && !*have_star && p->lic.p) {
		c->lic = p->lic, c->body = p->body;
		*have_star = true;
	} else if (p->files && p->star) {
		*have_star = true;   /* the first Files: * paragraph is the one */
	} else if (!p->files && p->lic.p && c->n_alone < STANDALONE_MAX) {
		c->alone[c->n_alone][0] = p->lic;
		c->alone[c->n_alone++][1] = p->body;
	}
	*p = (struct para){ 0 };
}

void dep5_license(const char *text, size_t len, struct dep5_license *out)
{
	struct copyright c = { 0 };
	struct para p = { 0 };
	bool first = true, have_star = false, in_lic = false;
	const char *s = text, *end = text + len, *v;
	size_t vn;

	memset(out, 0, sizeof(*out));
	snprintf(out->expr, DEP5_LICENSE_MAX, "NOASSERTION");
	while (s <= end) {
		const char *nl = s < end ? memchr(s, '\n', (size_t)(end - s)) : NULL;
		size_t n = (size_t)((nl ? nl : end) - s);

		if (first) {
			/* the header paragraph's first field names the format */
			if (!(v = field(s, n, "Format:", &vn)) || !memmem(v, vn, "copyright-format/1.0", 20))
				return;
			first = false;
		} else if (blank(s, n)) {
			para_end(&c, &p, &have_star);   /* a blank line ends a paragraph */
			in_lic = false;
		} else if (*s == ' ' || *s == '\t') {
			if (in_lic) {   /* the License: field's text */
				p.body.p = p.body.p ? p.body.p : s;
				p.body.n = (size_t)(s + n - p.body.p);
			}
		} else {
			in_lic = false;
			if ((v = field(s, n, "Files:", &vn))) {
				p.files = true;
				p.star = vn == 1 && *v == '*';
			} else if ((v = field(s, n, "License:", &vn))) {
				p.lic = (struct span){ v, vn };
				in_lic = true;
			}
		}
		if (!nl)
			break;
		s = nl + 1;
	}
	para_end(&c, &p, &have_star);
	if (!c.lic.p || expression(&c, out) < 0) {
		dep5_license_free(out);
		snprintf(out->expr, DEP5_LICENSE_MAX, "NOASSERTION");
	}
}
