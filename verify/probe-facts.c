/* The node probe's fact list, the helpers every probe uses and the
 * text parsers: below both the probes (probe-*.c) and the runner
 * (nodeprobe.c), which call them and never each other in a loop. */
#include "verify/probe-private.h"

#include <ctype.h>
#include <glob.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

void node_probe_free(struct node_probe *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].key);
		free(p->v[i].value);
		free(p->v[i].source);
	}
	free(p->v);
	free(p->root);
	free(p);
}

const struct probe_fact *probe_find(const struct node_probe *p, const char *key)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].key, key))
			return &p->v[i];
	return NULL;
}

const char *probe_get(const struct node_probe *p, const char *key)
{
	const struct probe_fact *f = probe_find(p, key);
	return f ? f->value : NULL;
}

int probe_set(struct node_probe *p, const char *key, const char *value, const char *source)
{
	struct probe_fact *f = (struct probe_fact *)probe_find(p, key);
	if (f) {
		if (f->value || !value)
			return 0;   /* first found value wins; not-found never overrides */
		free(f->value); free(f->source);
		f->value = xstrdup(value);
		f->source = xstrdup(source);
		return 0;
	}
	if (p->n == p->alloc) {
		size_t na = p->alloc ? p->alloc * 2 : 32;
		struct probe_fact *nv = xrealloc(p->v, na * sizeof(*nv));
		p->v = nv;
		p->alloc = na;
	}
	f = &p->v[p->n];
	f->key = xstrdup(key);
	f->value = value ? xstrdup(value) : NULL;
	f->source = xstrdup(source);
	f->unreadable = false;
	p->n++;
	return 0;
}

static int fact_cmp(const void *a, const void *b)
{
	return strcmp(((const struct probe_fact *)a)->key, ((const struct probe_fact *)b)->key);
}

json_t *probe_to_json(const struct node_probe *p)
{
	json_t *facts = json_array();
	struct probe_fact *sorted;

	if (!facts)
		return NULL;
	sorted = xmalloc((p->n ? p->n : 1) * sizeof(*sorted));
	memcpy(sorted, p->v, p->n * sizeof(*sorted));
	qsort(sorted, p->n, sizeof(*sorted), fact_cmp);
	for (size_t i = 0; i < p->n; i++) {
		json_t *f = json_pack("{s:s, s:o, s:s}", "key", sorted[i].key,
			"value", sorted[i].value ? json_string(sorted[i].value) : json_null(),
			"source", sorted[i].source);
		if (f && sorted[i].unreadable)
			json_object_set_new(f, "unreadable", json_true());
		json_array_append_new(facts, f);
	}
	free(sorted);
	return json_pack("{s:s, s:o}", "root", p->root, "facts", facts);
}

char *probe_path(const struct node_probe *p, const char *abs)
{
	while (*abs == '/')
		abs++;
	if (!strcmp(p->root, "/")) {
		return xasprintf("/%s", abs);
	}
	return path_join(p->root, abs);
}

/* glob(3) a node path pattern under the root; the root itself is escaped
 * so a temporary directory with odd characters can't widen the match. */
int probe_glob(const struct node_probe *p, const char *pattern, glob_t *g)
{
	struct strbuf sb = STRBUF_INIT;
	int r;
	strbuf_init(&sb, 256);
	if (strcmp(p->root, "/")) {
		for (const char *c = p->root; *c; c++) {
			if (strchr("*?[]\\", *c))
				strbuf_addch(&sb, '\\');
			strbuf_addch(&sb, *c);
		}
	}
	if (sb.len == 0 || sb.buf[sb.len - 1] != '/')
		strbuf_addch(&sb, '/');
	while (*pattern == '/')
		pattern++;
	strbuf_addstr(&sb, pattern);
	r = glob(sb.buf, 0, NULL, g);
	strbuf_release(&sb);
	return r == 0 ? 0 : -ENOENT;
}

/* The node path of a host path under the root (for sources in reports). */
const char *probe_node_rel(const struct node_probe *p, const char *host)
{
	size_t l = strlen(p->root);
	if (strcmp(p->root, "/") && !strncmp(host, p->root, l) && host[l] == '/')
		return host + l;
	return host;
}

/* Read a small file, strip trailing whitespace.  NULL when absent. */
char *probe_read_trimmed(const struct node_probe *p, const char *abs)
{
	_cleanup_free_ char *path = probe_path(p, abs);
	char *buf = NULL;
	size_t len = 0;
	ingot_error e = { 0 };
	if (!path || read_file(path, SMALL_FILE_MAX, &buf, &len, &e) < 0)
		return NULL;
	while (len && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	return buf;
}

int probe_is_version_char(int c) { return isdigit(c) || c == '.'; }

/* A dotted version at s: digits(.digits)+ ; returns its length or 0. */
size_t probe_version_len(const char *s)
{
	size_t n = 0, dots = 0;
	if (!isdigit((unsigned char)s[0]))
		return 0;
	while (probe_is_version_char((unsigned char)s[n])) {
		if (s[n] == '.') {
			if (!isdigit((unsigned char)s[n + 1]))
				break;
			dots++;
		}
		n++;
	}
	return dots ? n : 0;
}

char *probe_first_version(const char *text)
{
	for (const char *s = text; *s; s++) {
		if (s != text && (isalnum((unsigned char)s[-1]) || s[-1] == '.'))
			continue;
		size_t n = probe_version_len(s);
		if (n)
			return xstrndup(s, n);
	}
	return NULL;
}

char *probe_parse_nvrm_version(const char *text, int *open_flavor)
{
	const char *line = strstr(text, "NVRM version:");
	const char *km;
	if (!line)
		return NULL;
	_cleanup_free_ char *first = xstrndup(line, strcspn(line, "\n"));
	/* "NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build ..."
	 * versus the proprietary "NVIDIA UNIX x86_64 Kernel Module  580.95.05 ..." */
	if (open_flavor)
		*open_flavor = strstr(first, "Open Kernel Module") != NULL;
	km = strstr(first, "Kernel Module");
	return probe_first_version(km ? km : first);
}

/* Debian version "1:580.95.05-1ubuntu1" -> upstream "580.95.05". */
static char *debian_upstream(const char *v)
{
	const char *colon = strchr(v, ':');
	if (colon)
		v = colon + 1;
	size_t n = strcspn(v, "-~+");
	return xstrndup(v, n);
}

char *probe_parse_dpkg_version(const char *status, const char *const *packages, char **pkg_out)
{
	/* Stanzas separated by blank lines; only "install ok installed" counts. */
	const char *s = status;
	while (*s) {
		const char *end = strstr(s, "\n\n");
		size_t len = end ? (size_t)(end - s) : strlen(s);
		_cleanup_free_ char *st = xstrndup(s, len);
		char pkg[256] = "", ver[256] = "", stat[256] = "";
		char *save = NULL;
		for (char *l = strtok_r(st, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			if (!strncmp(l, "Package: ", 9))
				snprintf(pkg, sizeof(pkg), "%s", l + 9);
			else if (!strncmp(l, "Version: ", 9))
				snprintf(ver, sizeof(ver), "%s", l + 9);
			else if (!strncmp(l, "Status: ", 8))
				snprintf(stat, sizeof(stat), "%s", l + 8);
		}
		if (pkg[0] && ver[0] && !strcmp(stat, "install ok installed")) {
			for (size_t i = 0; packages[i]; i++) {
				size_t pl = strlen(packages[i]);
				/* "nvidia-fabricmanager-*" matches the branch-suffixed names. */
				int match = packages[i][pl - 1] == '*'
					? !strncmp(pkg, packages[i], pl - 1)
					: !strcmp(pkg, packages[i]);
				if (match) {
					if (pkg_out)
						*pkg_out = xstrdup(pkg);
					return debian_upstream(ver);
				}
			}
		}
		if (!end)
			break;
		s = end + 2;
	}
	return NULL;
}

static int probe_vset(struct node_probe *p, const char *key, const char *value, bool unreadable,
		      const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;
	int r;
	if (unreadable && probe_find(p, key))
		return 0;
	strbuf_init(&sb, 128);
	strbuf_vaddf(&sb, fmt, ap);
	r = probe_set(p, key, value, sb.buf);
	strbuf_release(&sb);
	if (r == 0 && unreadable)
		((struct probe_fact *)probe_find(p, key))->unreadable = true;
	return r;
}

int probe_setf(struct node_probe *p, const char *key, const char *value, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = probe_vset(p, key, value, false, fmt, ap);
	va_end(ap);
	return r;
}

int probe_set_unreadable(struct node_probe *p, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = probe_vset(p, key, NULL, true, fmt, ap);
	va_end(ap);
	return r;
}

int probe_module_loaded(const struct node_probe *p, const char *name)
{
	const char *m = probe_get(p, "modules");
	size_t n = strlen(name);
	for (const char *s = m; s && *s;) {
		size_t l = strcspn(s, ",");
		if (l == n && !strncmp(s, name, n))
			return 1;
		s += l + (s[l] == ',');
	}
	return 0;
}
