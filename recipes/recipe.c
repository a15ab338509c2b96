/* Recipe parser: YAML (libyaml) -> struct recipe, validating every field.
 * Errors read "FILE:LINE:COL: FIELD: expected X, got Y", where FIELD is
 * the dotted path of the value, e.g. "artifacts[2].sha256". */
#include "recipes/recipe.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/str.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/imgpath.h"
#include "lib/yamlx.h"
#include "lib/xalloc.h"
#include "recipes/boot.h"
#include "recipes/tuple.h"

#define NAME_MAX_LEN 64
#define INLINE_MAX (1u << 20)      /* inline file content limit */
#define ID_MAX 4294967294ull       /* uid/gid: 2^32-2 (2^32-1 is "no id") */
#define EPOCH_MAX 4294967295ull    /* squashfs timestamps are 32-bit */

struct parser {
	struct ydoc *d;
	struct recipe *r;
	ingot_error *e;
};

const char *artifact_kind_name(enum artifact_kind k)
{
	switch (k) {
	case ART_TAR: return "tar";
	case ART_DEB: return "deb";
	case ART_FILE: return "file";
	}
	return "unknown";
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static size_t seq_len(yaml_node_t *n)
{
	return n && n->type == YAML_SEQUENCE_NODE ?
	       (size_t)(n->data.sequence.items.top - n->data.sequence.items.start) : 0;
}

/* "got" part of messages: the scalar quoted, or the node kind. */
#define GOT_FMT "%s%s%s"
#define GOT(n) (scalar(n) && (n)->data.scalar.length ? "'" : ""), \
	       (scalar(n) && (n)->data.scalar.length ? scalar(n) : ydoc_kind(n)), \
	       (scalar(n) && (n)->data.scalar.length ? "'" : "")

/* "F.key" in the buffer ff, for a value under the item named in f. */
#define FIELD(key) (snprintf(ff, sizeof(ff), "%s.%s", f, key), ff)

static int dup_str(struct parser *p, yaml_node_t *n, const char *field, char **out)
{
	const char *s;
	int r = ydoc_str(p->d, n, field, &s, p->e);
	if (r < 0)
		return r;
	*out = xstrdup(s);
	return 0;
}

static bool name_ok(const char *s, bool allow_plus)
{
	size_t n = strlen(s);
	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '.' ||
		      *s == '_' || *s == '-' || (allow_plus && *s == '+')))
			return false;
	return true;
}

static bool version_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("._+~-", *s)))
			return false;
	return true;
}

/* Modes are octal whether written 0755, 755 or 0o755 (YAML 1.1 reads a
 * leading 0 as octal; a decimal reading would silently give 01363). */
static int parse_mode(struct parser *p, yaml_node_t *n, const char *field, uint32_t *out)
{
	const char *s = scalar(n);
	uint32_t v = 0;

	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !*s)
		goto bad;
	if (s[0] == '0' && s[1] == 'o')
		s += 2;
	if (!*s || strlen(s) > 5)
		goto bad;
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '7')
			goto bad;
		v = v * 8 + (uint32_t)(*c - '0');
	}
	if (v > 07777)
		goto bad;
	*out = v;
	return 0;
bad:
	return ydoc_fail(p->d, n, p->e, "%s: expected an octal mode <= 07777, got " GOT_FMT, field, GOT(n));
}

static int parse_id(struct parser *p, yaml_node_t *n, const char *field, uint32_t *out)
{
	uint64_t v;
	int r = ydoc_uint(p->d, n, field, 0, ID_MAX, &v, p->e);
	if (r < 0)
		return r;
	*out = (uint32_t)v;
	return 0;
}

/* An image path as written in the recipe ("/etc/x" or "etc/x") -> the
 * tree's relative form.  root_ok allows "/" (-> ""), for dest. */
static int parse_image_path(struct parser *p, yaml_node_t *n, const char *field, bool root_ok, char **out)
{
	const char *s;
	ingot_error sub = { 0 };
	int r = ydoc_str(p->d, n, field, &s, p->e);
	if (r < 0)
		return r;
	_cleanup_free_ char *cp = NULL;
	if (s[0] == '/')
		s++;
	if (root_ok) {
		/* dest names a directory: "/usr/" means "usr" */
		size_t n = strlen(s);
		while (n && s[n - 1] == '/')
			n--;
		cp = xstrndup(s, n);
		s = cp;
	}
	if (!*s) {
		if (!root_ok)
			return ydoc_fail(p->d, n, p->e, "%s: expected a path below '/', got '/'", field);
	} else if (imgpath_check(s, field, &sub) < 0) {
		return ydoc_fail(p->d, n, p->e, "%s", sub.msg);
	}
	*out = xstrdup(s);
	return 0;
}

/* source: a path or a file:// URL; relative ones resolve against the
 * recipe's directory, so a recipe means the same thing from any cwd. */
static int parse_source(struct parser *p, yaml_node_t *n, const char *field, struct artifact *a)
{
	const char *s;
	_cleanup_free_ char *path = NULL;
	int r = dup_str(p, n, field, &a->source);
	if (r < 0)
		return r;
	s = a->source;
	if (!strncmp(s, "file://", 7)) {
		const char *u = s + 7;
		char *o;
		if (!strncmp(u, "localhost/", 10))
			u += 9;
		path = xmalloc(strlen(u) + 1);
		for (o = path; *u; u++) {
			if (*u == '%') {
				int h = hexval(u[1]), l = h < 0 ? -1 : hexval(u[2]);
				if (l < 0 || (h == 0 && l == 0))
					return ydoc_fail(p->d, n, p->e, "%s: expected a valid %%XX escape in file URL, got '%s'", field, s);
				*o++ = (char)(h * 16 + l);
				u += 2;
			} else {
				*o++ = *u;
			}
		}
		*o = '\0';
	} else {
		const char *colon = strstr(s, "://");
		if (colon)
			return ydoc_fail(p->d, n, p->e, "%s: expected a path or file:// URL, got scheme '%.*s'",
					 field, (int)(colon - s), s);
		path = xstrdup(s);
	}
	if (!*path)
		return ydoc_fail(p->d, n, p->e, "%s: expected a file path, got an empty one", field);
	if (path[0] == '/')
		a->path = TAKE_PTR(path);
	else
		a->path = path_join(p->r->dir, path);
	return 0;
}

static int parse_globs(struct parser *p, yaml_node_t *n, const char *field, char ***out, size_t *count)
{
	yaml_node_t *it;
	size_t i = 0;
	int r = ydoc_expect_seq(p->d, n, field, p->e);
	if (r < 0)
		return r;
	*out = xcalloc(seq_len(n) + 1, sizeof(char *));
	ydoc_seq_foreach(p->d, n, it) {
		char f[128];
		const char *s;
		snprintf(f, sizeof(f), "%s[%zu]", field, i);
		r = ydoc_str(p->d, it, f, &s, p->e);
		if (r < 0)
			return r;
		/* Globs match relative paths: a leading "/" or "./" is dropped. */
		while (s[0] == '/' || (s[0] == '.' && s[1] == '/'))
			s += s[0] == '/' ? 1 : 2;
		if (!*s)
			return ydoc_fail(p->d, it, p->e, "%s: expected a glob pattern, got an empty one", f);
		(*out)[i] = xstrdup(s);
		*count = ++i;
	}
	return 0;
}

static int parse_modes(struct parser *p, yaml_node_t *n, const char *field, struct artifact *a)
{
	static const char *const keys[] = { "glob", "mode", "uid", "gid", NULL };
	yaml_node_t *it;
	size_t i = 0;
	int r = ydoc_expect_seq(p->d, n, field, p->e);
	if (r < 0)
		return r;
	a->modes = xcalloc(seq_len(n) + 1, sizeof(*a->modes));
	ydoc_seq_foreach(p->d, n, it) {
		struct mode_override *m = &a->modes[i];
		char f[160];
		yaml_node_t *v;
		const char *g;
		uint32_t u;

		snprintf(f, sizeof(f), "%s[%zu]", field, i);
		m->mode = -1;
		m->uid = m->gid = -1;
		if ((r = ydoc_check_keys(p->d, it, f, keys, p->e)) < 0)
			return r;
		if ((r = ydoc_need(p->d, it, "glob", f, &v, p->e)) < 0)
			return r;
		snprintf(f, sizeof(f), "%s[%zu].glob", field, i);
		if ((r = ydoc_str(p->d, v, f, &g, p->e)) < 0)
			return r;
		while (g[0] == '/')
			g++;
		if (!*g)
			return ydoc_fail(p->d, v, p->e, "%s: expected a glob pattern below '/', got '/'", f);
		m->glob = xstrdup(g);
		a->n_modes = ++i;
		if ((v = ydoc_get(p->d, it, "mode"))) {
			snprintf(f, sizeof(f), "%s[%zu].mode", field, i - 1);
			if ((r = parse_mode(p, v, f, &u)) < 0)
				return r;
			m->mode = (int32_t)u;
		}
		if ((v = ydoc_get(p->d, it, "uid"))) {
			snprintf(f, sizeof(f), "%s[%zu].uid", field, i - 1);
			if ((r = parse_id(p, v, f, &u)) < 0)
				return r;
			m->uid = u;
		}
		if ((v = ydoc_get(p->d, it, "gid"))) {
			snprintf(f, sizeof(f), "%s[%zu].gid", field, i - 1);
			if ((r = parse_id(p, v, f, &u)) < 0)
				return r;
			m->gid = u;
		}
		if (m->mode < 0 && m->uid < 0 && m->gid < 0) {
			snprintf(f, sizeof(f), "%s[%zu]", field, i - 1);
			return ydoc_fail(p->d, it, p->e, "%s: expected at least one of mode, uid, gid, got none", f);
		}
	}
	return 0;
}

/* built-from: [{name, sha256, version?, purl?}, ...]: the inputs an
 * artifact made by the pipeline (modules from a source package and a
 * patch) was built from; only the SBOM reads them. */
static int parse_built_from(struct parser *p, yaml_node_t *n, const char *field, struct artifact *a)
{
	static const char *const keys[] = { "name", "sha256", "version", "purl", NULL };
	yaml_node_t *it, *v;
	int r = ydoc_expect_seq(p->d, n, field, p->e);

	if (r < 0)
		return r;
	a->from = xcalloc(seq_len(n) + 1, sizeof(*a->from));
	ydoc_seq_foreach(p->d, n, it) {
		struct built_from *b = &a->from[a->n_from];
		char f[160], ff[192];
		const char *s;

		snprintf(f, sizeof(f), "%s[%zu]", field, a->n_from++);
		if ((r = ydoc_check_keys(p->d, it, f, keys, p->e)) < 0 ||
		    (r = ydoc_need(p->d, it, "name", f, &v, p->e)) < 0 || (r = dup_str(p, v, FIELD("name"), &b->name)) < 0)
			return r;
		if (!name_ok(b->name, true))
			return ydoc_fail(p->d, v, p->e, "%s: expected [a-z0-9][a-z0-9._+-]* (at most %d characters), got '%s'",
					 ff, NAME_MAX_LEN, b->name);
		if ((r = ydoc_need(p->d, it, "sha256", f, &v, p->e)) < 0 || (r = ydoc_str(p->d, v, FIELD("sha256"), &s, p->e)) < 0)
			return r;
		if (!is_sha256_hex(s))
			return ydoc_fail(p->d, v, p->e, "%s: expected 64 lower-case hex digits, got '%s'", ff, s);
		hex_decode(s, b->sha256, sizeof(b->sha256));
		if ((r = recipe_labels_parse(p->d, it, f, &b->version, &b->purl, p->e)) < 0)
			return r;
	}
	return 0;
}

static int parse_artifact(struct parser *p, yaml_node_t *n, size_t idx, struct artifact *a)
{
	static const char *const keys[] = { "name", "source", "sha256", "kind", "dest", "strip-components",
		"include", "exclude", "modes", "allow-devices", "replace", "mode", "built-from", "version", "purl", NULL };
	char f[96], ff[128];
	yaml_node_t *v;
	const char *s;
	uint64_t u;
	int r;

	snprintf(f, sizeof(f), "artifacts[%zu]", idx);
	a->line = n->start_mark.line + 1;
	a->column = n->start_mark.column + 1;
	a->file_mode = 0644;
	if ((r = ydoc_check_keys(p->d, n, f, keys, p->e)) < 0)
		return r;

	if ((r = ydoc_need(p->d, n, "name", f, &v, p->e)) < 0 || (r = dup_str(p, v, FIELD("name"), &a->name)) < 0)
		return r;
	if (!name_ok(a->name, true))
		return ydoc_fail(p->d, v, p->e, "%s: expected [a-z0-9][a-z0-9._+-]* (at most %d characters), got '%s'",
				 ff, NAME_MAX_LEN, a->name);
	for (size_t j = 0; j < idx; j++)
		if (!strcmp(p->r->artifacts[j].name, a->name))
			return ydoc_fail(p->d, v, p->e, "%s: expected a unique artifact name, got '%s' again (first at line %zu)",
					 ff, a->name, p->r->artifacts[j].line);

	if ((r = ydoc_need(p->d, n, "kind", f, &v, p->e)) < 0 || (r = ydoc_str(p->d, v, FIELD("kind"), &s, p->e)) < 0)
		return r;
	if (!strcmp(s, "tar"))
		a->kind = ART_TAR;
	else if (!strcmp(s, "deb"))
		a->kind = ART_DEB;
	else if (!strcmp(s, "file"))
		a->kind = ART_FILE;
	else
		return ydoc_fail(p->d, v, p->e, "%s: expected tar, deb or file, got '%s'", ff, s);

	if ((r = ydoc_need(p->d, n, "source", f, &v, p->e)) < 0 || (r = parse_source(p, v, FIELD("source"), a)) < 0)
		return r;

	if ((r = ydoc_need(p->d, n, "sha256", f, &v, p->e)) < 0 || (r = ydoc_str(p->d, v, FIELD("sha256"), &s, p->e)) < 0)
		return r;
	if (!is_sha256_hex(s))
		return ydoc_fail(p->d, v, p->e, "%s: expected 64 lower-case hex digits, got '%s'", ff, s);
	hex_decode(s, a->sha256, sizeof(a->sha256));

	if (a->kind == ART_FILE) {
		/* A single file: dest is its full image path. */
		if ((r = ydoc_need(p->d, n, "dest", f, &v, p->e)) < 0 ||
		    (r = parse_image_path(p, v, FIELD("dest"), false, &a->dest)) < 0)
			return r;
		static const char *const archive_only[] = { "strip-components", "include", "exclude", NULL };
		for (const char *const *k = archive_only; *k; k++)
			if ((v = ydoc_get(p->d, n, *k)))
				return ydoc_fail(p->d, v, p->e, "%s: expected no '%s' for kind file, got one", FIELD(*k), *k);
		if ((v = ydoc_get(p->d, n, "mode")) && (r = parse_mode(p, v, FIELD("mode"), &a->file_mode)) < 0)
			return r;
	} else {
		if ((v = ydoc_get(p->d, n, "dest"))) {
			if ((r = parse_image_path(p, v, FIELD("dest"), true, &a->dest)) < 0)
				return r;
		} else {
			a->dest = xstrdup("");
		}
		if ((v = ydoc_get(p->d, n, "mode")))
			return ydoc_fail(p->d, v, p->e, "%s: expected no 'mode' for kind %s (use modes:), got one",
					 FIELD("mode"), artifact_kind_name(a->kind));
		if ((v = ydoc_get(p->d, n, "strip-components"))) {
			if ((r = ydoc_uint(p->d, v, FIELD("strip-components"), 0, 64, &u, p->e)) < 0)
				return r;
			a->strip_components = (unsigned)u;
		}
		if ((v = ydoc_get(p->d, n, "include")) &&
		    (r = parse_globs(p, v, FIELD("include"), &a->include, &a->n_include)) < 0)
			return r;
		if ((v = ydoc_get(p->d, n, "exclude")) &&
		    (r = parse_globs(p, v, FIELD("exclude"), &a->exclude, &a->n_exclude)) < 0)
			return r;
	}
	if ((v = ydoc_get(p->d, n, "modes")) && (r = parse_modes(p, v, FIELD("modes"), a)) < 0)
		return r;
	if ((v = ydoc_get(p->d, n, "allow-devices")) && (r = ydoc_bool(p->d, v, FIELD("allow-devices"), &a->allow_devices, p->e)) < 0)
		return r;
	if ((v = ydoc_get(p->d, n, "replace")) && (r = ydoc_bool(p->d, v, FIELD("replace"), &a->replace, p->e)) < 0)
		return r;
	if ((r = recipe_labels_parse(p->d, n, f, &a->version, &a->purl, p->e)) < 0)
		return r;
	if ((v = ydoc_get(p->d, n, "built-from")) && (r = parse_built_from(p, v, FIELD("built-from"), a)) < 0)
		return r;
	return 0;
}

/* Inline entries (files:, directories:, symlinks:) must not collide with
 * one another; checked here so the error can point at the line. */
struct seen { const char *path; size_t line; };

static int check_unique(struct parser *p, yaml_node_t *n, const char *field, const char *path,
			struct seen *seen, size_t *n_seen)
{
	for (size_t i = 0; i < *n_seen; i++)
		if (!strcmp(seen[i].path, path))
			return ydoc_fail(p->d, n, p->e, "%s: expected a path not declared before, got '/%s' again (line %zu)",
					 field, path, seen[i].line);
	seen[*n_seen].path = path;
	seen[*n_seen].line = n->start_mark.line + 1;
	(*n_seen)++;
	return 0;
}

/* files:, directories: and symlinks: entries share their steps (position,
 * known keys, a unique image path, then mode/uid/gid where the kind has an
 * owner); one parser walks all three, and only content: and target: are
 * kind-specific. */
enum item_kind { ITEM_FILE, ITEM_DIR, ITEM_SYMLINK };

static const struct item_spec {
	const char *section;
	const char *const keys[6];
	bool owned;        /* takes mode, uid and gid */
	uint32_t mode;     /* default mode of an owned entry */
} item_specs[] = {
	[ITEM_FILE] = { "files", { "path", "content", "mode", "uid", "gid", NULL }, true, 0644 },
	[ITEM_DIR] = { "directories", { "path", "mode", "uid", "gid", NULL }, true, 0755 },
	[ITEM_SYMLINK] = { "symlinks", { "path", "target", NULL }, false, 0 },
};

/* Where the shared steps write, in an entry of whichever kind. */
struct item_slot {
	char **path;
	uint32_t *mode, *uid, *gid;   /* NULL when the kind has no owner */
	size_t *line, *column;
};

static void items_alloc(struct recipe *r, enum item_kind k, size_t n)
{
	switch (k) {
	case ITEM_FILE: r->files = xcalloc(n + 1, sizeof(*r->files)); break;
	case ITEM_DIR: r->dirs = xcalloc(n + 1, sizeof(*r->dirs)); break;
	case ITEM_SYMLINK: r->symlinks = xcalloc(n + 1, sizeof(*r->symlinks)); break;
	}
}

/* Claims the next entry of kind k and returns its index; counted at once
 * so that recipe_free releases whatever a failed parse left in it. */
static size_t item_next(struct recipe *r, enum item_kind k, struct item_slot *s)
{
	switch (k) {
	case ITEM_FILE: {
		struct inline_file *o = &r->files[r->n_files];
		*s = (struct item_slot){ &o->path, &o->mode, &o->uid, &o->gid, &o->line, &o->column };
		return r->n_files++;
	}
	case ITEM_DIR: {
		struct recipe_dir *o = &r->dirs[r->n_dirs];
		*s = (struct item_slot){ &o->path, &o->mode, &o->uid, &o->gid, &o->line, &o->column };
		return r->n_dirs++;
	}
	case ITEM_SYMLINK:
		break;
	}
	struct recipe_symlink *o = &r->symlinks[r->n_symlinks];
	*s = (struct item_slot){ &o->path, NULL, NULL, NULL, &o->line, &o->column };
	return r->n_symlinks++;
}

static int parse_content(struct parser *p, yaml_node_t *it, const char *f, struct inline_file *fl)
{
	char ff[96];
	yaml_node_t *v;
	const char *s;
	int r;

	if ((r = ydoc_need(p->d, it, "content", f, &v, p->e)) < 0)
		return r;
	/* An empty file is content: "" (quoted); a bare "content:" is a mistake. */
	if ((r = ydoc_str(p->d, v, FIELD("content"), &s, p->e)) < 0)
		return r;
	if (v->data.scalar.length > INLINE_MAX)
		return ydoc_fail(p->d, v, p->e, "%s: expected at most %u bytes (use an artifact), got %zu",
				 ff, INLINE_MAX, v->data.scalar.length);
	fl->len = v->data.scalar.length;
	fl->content = xmalloc(fl->len + 1);
	memcpy(fl->content, s, fl->len + 1);
	return 0;
}

static int parse_target(struct parser *p, yaml_node_t *it, const char *f, struct recipe_symlink *sl)
{
	char ff[96];
	yaml_node_t *v;
	int r;

	if ((r = ydoc_need(p->d, it, "target", f, &v, p->e)) < 0 ||
	    (r = dup_str(p, v, FIELD("target"), &sl->target)) < 0)
		return r;
	if (strlen(sl->target) > 4095)
		return ydoc_fail(p->d, v, p->e, "%s: expected at most 4095 bytes, got %zu", ff, strlen(sl->target));
	return 0;
}

static int parse_items(struct parser *p, yaml_node_t *n, enum item_kind k, struct seen *seen, size_t *n_seen)
{
	const struct item_spec *sp = &item_specs[k];
	yaml_node_t *it, *v;
	int r = ydoc_expect_seq(p->d, n, sp->section, p->e);
	if (r < 0)
		return r;
	items_alloc(p->r, k, seq_len(n));
	ydoc_seq_foreach(p->d, n, it) {
		struct item_slot s;
		size_t i = item_next(p->r, k, &s);
		char f[64], ff[96];

		snprintf(f, sizeof(f), "%s[%zu]", sp->section, i);
		*s.line = it->start_mark.line + 1;
		*s.column = it->start_mark.column + 1;
		if (sp->owned)
			*s.mode = sp->mode;
		if ((r = ydoc_check_keys(p->d, it, f, sp->keys, p->e)) < 0)
			return r;
		if ((r = ydoc_need(p->d, it, "path", f, &v, p->e)) < 0 ||
		    (r = parse_image_path(p, v, FIELD("path"), false, s.path)) < 0 ||
		    (r = check_unique(p, v, ff, *s.path, seen, n_seen)) < 0)
			return r;
		if (k == ITEM_FILE && (r = parse_content(p, it, f, &p->r->files[i])) < 0)
			return r;
		if (k == ITEM_SYMLINK && (r = parse_target(p, it, f, &p->r->symlinks[i])) < 0)
			return r;
		if (!sp->owned)
			continue;
		if ((v = ydoc_get(p->d, it, "mode")) && (r = parse_mode(p, v, FIELD("mode"), s.mode)) < 0)
			return r;
		if ((v = ydoc_get(p->d, it, "uid")) && (r = parse_id(p, v, FIELD("uid"), s.uid)) < 0)
			return r;
		if ((v = ydoc_get(p->d, it, "gid")) && (r = parse_id(p, v, FIELD("gid"), s.gid)) < 0)
			return r;
	}
	return 0;
}

static bool is_leap(unsigned y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* RFC 3339 date-time: YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM). */
static bool rfc3339_ok(const char *s)
{
	static const unsigned mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	unsigned y, mo, d, h, mi, sec;
	int n = 0;

	if (strlen(s) < 20 || sscanf(s, "%4u-%2u-%2u%n", &y, &mo, &d, &n) != 3 || n != 10)
		return false;
	for (int i = 0; i < 10; i++)
		if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9'))
			return false;
	if (s[10] != 'T' && s[10] != 't')
		return false;
	for (int i = 11; i < 19; i++)
		if ((i == 13 || i == 16) ? s[i] != ':' : (s[i] < '0' || s[i] > '9'))
			return false;
	if (sscanf(s + 11, "%2u:%2u:%2u", &h, &mi, &sec) != 3)
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && is_leap(y)) ||
	    h > 23 || mi > 59 || sec > 60)
		return false;
	s += 19;
	if (*s == '.') {
		if (!(s[1] >= '0' && s[1] <= '9'))
			return false;
		for (s++; *s >= '0' && *s <= '9'; s++)
			;
	}
	if ((*s == 'Z' || *s == 'z') && !s[1])
		return true;
	if ((*s == '+' || *s == '-') && strlen(s) == 6 && s[3] == ':') {
		unsigned oh, om;
		for (int i = 1; i < 6; i++)
			if (i != 3 && (s[i] < '0' || s[i] > '9'))
				return false;
		return sscanf(s + 1, "%2u:%2u", &oh, &om) == 2 && oh <= 23 && om <= 59;
	}
	return false;
}

static int parse_compression(struct parser *p, yaml_node_t *n)
{
	static const char *const keys[] = { "algorithm", "level", "block-size", NULL };
	static const struct { const char *name; int min, max; } algs[] = {
		{ "zstd", 1, 22 }, { "xz", 0, 9 }, { "gzip", 1, 9 }, { "lz4", 0, 0 },
	};
	struct recipe *r = p->r;
	yaml_node_t *v;
	const char *s;
	uint64_t u;
	size_t ai = 0;
	int rc;

	if ((rc = ydoc_check_keys(p->d, n, "compression", keys, p->e)) < 0)
		return rc;
	if ((v = ydoc_get(p->d, n, "algorithm"))) {
		if ((rc = ydoc_str(p->d, v, "compression.algorithm", &s, p->e)) < 0)
			return rc;
		for (ai = 0; ai < ARRAY_SIZE(algs) && strcmp(algs[ai].name, s); ai++)
			;
		if (ai == ARRAY_SIZE(algs))
			return ydoc_fail(p->d, v, p->e, "compression.algorithm: expected zstd, xz, gzip or lz4, got '%s'%s", s,
					 !strcmp(s, "lzo") ? " (libsquashfs cannot write LZO: its LZO support is GPL-only)" : "");
		free(r->compression);
		r->compression = xstrdup(s);
	}
	if ((v = ydoc_get(p->d, n, "level"))) {
		if (algs[ai].max == 0)
			return ydoc_fail(p->d, v, p->e, "compression.level: expected no level for %s, got " GOT_FMT,
					 algs[ai].name, GOT(v));
		if (ydoc_uint(p->d, v, "compression.level", (uint64_t)algs[ai].min, (uint64_t)algs[ai].max, &u, p->e) < 0)
			return ydoc_fail(p->d, v, p->e, "compression.level: expected an integer in [%d, %d] for %s, got " GOT_FMT,
					 algs[ai].min, algs[ai].max, algs[ai].name, GOT(v));
		r->level = (int)u;
	}
	if ((v = ydoc_get(p->d, n, "block-size"))) {
		if ((rc = ydoc_uint(p->d, v, "compression.block-size", 4096, 1048576, &u, p->e)) < 0)
			return rc;
		if (u & (u - 1))
			return ydoc_fail(p->d, v, p->e, "compression.block-size: expected a power of two in [4096, 1048576], got %" PRIu64, u);
		r->block_size = (uint32_t)u;
	}
	return 0;
}

static int parse_epoch(struct parser *p, yaml_node_t *root, const char *env_epoch)
{
	yaml_node_t *v;
	int r = ydoc_need(p->d, root, "epoch", "recipe", &v, p->e);
	if (r < 0)
		return r;
	if ((r = ydoc_uint(p->d, v, "epoch", 0, EPOCH_MAX, &p->r->epoch, p->e)) < 0)
		return r;
	if ((v = ydoc_get(p->d, root, "allow-source-date-epoch")) &&
	    (r = ydoc_bool(p->d, v, "allow-source-date-epoch", &p->r->allow_source_date_epoch, p->e)) < 0)
		return r;
	/* SOURCE_DATE_EPOCH is ignored unless the recipe opts in: the
	 * recipe alone must determine the image. */
	if (env_epoch && p->r->allow_source_date_epoch) {
		char *end;
		unsigned long long e;
		errno = 0;
		e = strtoull(env_epoch, &end, 10);
		if (!*env_epoch || *env_epoch < '0' || *env_epoch > '9' || *end || errno || e > EPOCH_MAX)
			return ingot_fail(p->e, -EINVAL, "SOURCE_DATE_EPOCH: expected an integer in [0, %llu], got '%s'",
					  EPOCH_MAX, env_epoch);
		p->r->epoch = e;
	}
	return 0;
}

static int parse_root(struct parser *p, yaml_node_t *root, const char *env_epoch)
{
	static const char *const keys[] = { "name", "version", "epoch", "allow-source-date-epoch",
		"compression", "serial", "expires", "max-unpacked-bytes", "artifacts", "files",
		"directories", "symlinks", "tuple", "boot", NULL };
	struct recipe *r = p->r;
	yaml_node_t *v, *it;
	_cleanup_free_ struct seen *seen = NULL;
	size_t n_seen = 0;
	const char *s;
	int rc;

	if ((rc = ydoc_check_keys(p->d, root, "recipe", keys, p->e)) < 0)
		return rc;
	if ((rc = ydoc_need(p->d, root, "name", "recipe", &v, p->e)) < 0 || (rc = dup_str(p, v, "name", &r->name)) < 0)
		return rc;
	if (!name_ok(r->name, false))
		return ydoc_fail(p->d, v, p->e, "name: expected [a-z0-9][a-z0-9._-]* (at most %d characters), got '%s'",
				 NAME_MAX_LEN, r->name);
	if ((rc = ydoc_need(p->d, root, "version", "recipe", &v, p->e)) < 0 || (rc = dup_str(p, v, "version", &r->version)) < 0)
		return rc;
	if (!version_ok(r->version))
		return ydoc_fail(p->d, v, p->e, "version: expected [A-Za-z0-9._+~-] (1 to %d characters), got '%s'",
				 NAME_MAX_LEN, r->version);
	if ((rc = parse_epoch(p, root, env_epoch)) < 0)
		return rc;

	r->compression = xstrdup("zstd");
	r->block_size = 131072;
	if ((v = ydoc_get(p->d, root, "compression")) && (rc = parse_compression(p, v)) < 0)
		return rc;
	if ((v = ydoc_get(p->d, root, "serial")) && (rc = ydoc_uint(p->d, v, "serial", 0, INT64_MAX, &r->serial, p->e)) < 0)
		return rc;
	if ((v = ydoc_get(p->d, root, "max-unpacked-bytes")) &&
	    (rc = ydoc_uint(p->d, v, "max-unpacked-bytes", 1, INT64_MAX, &r->max_unpacked_bytes, p->e)) < 0)
		return rc;
	if ((v = ydoc_get(p->d, root, "expires"))) {
		if ((rc = ydoc_str(p->d, v, "expires", &s, p->e)) < 0)
			return rc;
		if (!rfc3339_ok(s))
			return ydoc_fail(p->d, v, p->e, "expires: expected an RFC 3339 date-time like 2027-01-31T00:00:00Z, got '%s'", s);
		r->expires = xstrdup(s);
	}

	if ((v = ydoc_get(p->d, root, "artifacts"))) {
		if ((rc = ydoc_expect_seq(p->d, v, "artifacts", p->e)) < 0)
			return rc;
		r->artifacts = xcalloc(seq_len(v) + 1, sizeof(*r->artifacts));
		ydoc_seq_foreach(p->d, v, it) {
			r->n_artifacts++;
			if ((rc = parse_artifact(p, it, r->n_artifacts - 1, &r->artifacts[r->n_artifacts - 1])) < 0)
				return rc;
		}
	}
	seen = xcalloc(seq_len(ydoc_get(p->d, root, "files")) + seq_len(ydoc_get(p->d, root, "directories")) +
		       seq_len(ydoc_get(p->d, root, "symlinks")) + 1, sizeof(*seen));
	for (enum item_kind k = ITEM_FILE; k <= ITEM_SYMLINK; k++)
		if ((v = ydoc_get(p->d, root, item_specs[k].section)) && (rc = parse_items(p, v, k, seen, &n_seen)) < 0)
			return rc;
	if ((v = ydoc_get(p->d, root, "tuple")) && (rc = tuple_parse(p->d, v, &r->tuple, p->e)) < 0)
		return rc;
	if ((v = ydoc_get(p->d, root, "boot")) && (rc = boot_parse(p->d, v, r->dir, &r->boot, p->e)) < 0)
		return rc;
	/* A recipe with nothing to put in the image is a mistake (a section
	 * emptied or left out), not a request for an empty image. */
	if (!r->n_artifacts && !r->n_files && !r->n_dirs && !r->n_symlinks)
		return ydoc_fail(p->d, root, p->e,
				 "recipe: expected at least one artifact or files/directories/symlinks entry");
	return 0;
}

/* NAME=VALUE in vars: VALUE, or NULL when NAME has none. */
static const char *var_value(const char *const *vars, size_t n_vars, const char *name, size_t len)
{
	for (size_t i = 0; i < n_vars; i++)
		if (!strncmp(vars[i], name, len) && vars[i][len] == '=')
			return vars[i] + len + 1;
	return NULL;
}

static bool var_name_ok(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* ${NAME} in a source:, sha256:, version: or purl: value becomes NAME's
 * value (ingot build --set NAME=VALUE): a recipe can name bytes another
 * step produces (the real image's root filesystem, modules), and their
 * version, and still be a file.  Only those keys, so inline file content keeps its "${" as written; on the
 * parsed nodes, so a value never changes the document's structure, and
 * positions stay those of the file.  A reference without a value is an
 * error: a pin is never left unresolved. */
static int substitute_vars(struct ydoc *d, const char *const *vars, size_t n_vars, ingot_error *e)
{
	for (yaml_node_t *m = d->doc.nodes.start; m < d->doc.nodes.top; m++) {
		if (m->type != YAML_MAPPING_NODE)
			continue;
		for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
			const char *key = scalar(ydoc_node(d, pr->key));
			yaml_node_t *v = ydoc_node(d, pr->value);
			const char *s = scalar(v), *ref;
			_cleanup_free_ char *buf = NULL;
			size_t used = 0, cap;

			if (!key || (strcmp(key, "source") && strcmp(key, "sha256") && strcmp(key, "version") && strcmp(key, "purl")) ||
			    !s || !strstr(s, "${"))
				continue;
			cap = strlen(s) + 1;
			buf = xmalloc(cap);
			while ((ref = strstr(s, "${"))) {
				const char *end = strchr(ref + 2, '}'), *val;
				size_t pre = (size_t)(ref - s), vl;
				if (!end || !var_name_ok(ref + 2, (size_t)(end - ref - 2)))
					return ydoc_fail(d, v, e, "%s: expected ${NAME} (NAME of A-Z, 0-9, _), got '%s'",
							 key, scalar(v));
				val = var_value(vars, n_vars, ref + 2, (size_t)(end - ref - 2));
				if (!val)
					return ydoc_fail(d, v, e, "%s: ${%.*s} has no value (ingot build --set %.*s=VALUE)",
							 key, (int)(end - ref - 2), ref + 2, (int)(end - ref - 2), ref + 2);
				vl = strlen(val);
				cap += pre + vl;
				buf = xrealloc(buf, cap);
				memcpy(buf + used, s, pre);
				memcpy(buf + used + pre, val, vl);
				used += pre + vl;
				s = end + 1;
			}
			buf = xrealloc(buf, used + strlen(s) + 1);
			strcpy(buf + used, s);
			/* libyaml frees node values with free() */
			free(v->data.scalar.value);
			v->data.scalar.length = strlen(buf);
			v->data.scalar.value = (yaml_char_t *)buf;
			buf = NULL;
		}
	}
	return 0;
}

int recipe_load_buf(const char *name, const char *dir, const char *buf, size_t len,
		    const char *env_epoch, struct recipe **out, ingot_error *e)
{
	return recipe_load_buf_vars(name, dir, buf, len, env_epoch, NULL, 0, out, e);
}

int recipe_load_buf_vars(const char *name, const char *dir, const char *buf, size_t len,
			 const char *env_epoch, const char *const *vars, size_t n_vars,
			 struct recipe **out, ingot_error *e)
{
	_cleanup_ydoc_ struct ydoc d = { 0 };
	struct recipe *r;
	struct parser p;
	int rc;

	*out = NULL;
	r = xcalloc(1, sizeof(*r));
	r->file = xstrdup(name);
	r->dir = xstrdup(dir ? dir : ".");
	sha256_buf(buf, len, r->file_sha256);
	p = (struct parser){ .d = &d, .r = r, .e = e };
	rc = ydoc_load_buf(&d, name, buf, len, e);
	if (rc >= 0)
		rc = ydoc_expect_map(&d, ydoc_root(&d), "recipe", e);
	if (rc >= 0)
		rc = substitute_vars(&d, vars, n_vars, e);
	if (rc >= 0)
		rc = parse_root(&p, ydoc_root(&d), env_epoch);
	if (rc < 0) {
		recipe_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int recipe_load(const char *path, const char *env_epoch, struct recipe **out, ingot_error *e)
{
	return recipe_load_vars(path, env_epoch, NULL, 0, out, e);
}

int recipe_load_vars(const char *path, const char *env_epoch, const char *const *vars, size_t n_vars,
		     struct recipe **out, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_free_ char *dir = NULL;
	size_t len;
	int r;

	*out = NULL;
	r = read_file(path, YDOC_MAX_BYTES, &buf, &len, e);
	if (r < 0)
		return r;
	dir = path_dirname(path);
	return recipe_load_buf_vars(path, dir, buf, len, env_epoch, vars, n_vars, out, e);
}

void recipe_free(struct recipe *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_artifacts; i++) {
		struct artifact *a = &r->artifacts[i];
		free(a->name);
		free(a->source);
		free(a->path);
		free(a->dest);
		for (size_t j = 0; j < a->n_include; j++)
			free(a->include[j]);
		free(a->include);
		for (size_t j = 0; j < a->n_exclude; j++)
			free(a->exclude[j]);
		free(a->exclude);
		for (size_t j = 0; j < a->n_modes; j++)
			free(a->modes[j].glob);
		free(a->modes);
		for (size_t j = 0; j < a->n_from; j++) {
			free(a->from[j].name);
			free(a->from[j].version);
			free(a->from[j].purl);
		}
		free(a->from);
		free(a->version);
		free(a->purl);
	}
	free(r->artifacts);
	for (size_t i = 0; i < r->n_files; i++) {
		free(r->files[i].path);
		free(r->files[i].content);
	}
	free(r->files);
	for (size_t i = 0; i < r->n_dirs; i++)
		free(r->dirs[i].path);
	free(r->dirs);
	for (size_t i = 0; i < r->n_symlinks; i++) {
		free(r->symlinks[i].path);
		free(r->symlinks[i].target);
	}
	free(r->symlinks);
	if (r->tuple)
		tuple_free(r->tuple);
	boot_free(r->boot);
	free(r->file);
	free(r->dir);
	free(r->name);
	free(r->version);
	free(r->compression);
	free(r->expires);
	free(r);
}
