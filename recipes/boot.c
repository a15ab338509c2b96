/* Parser of the recipe's `boot:` section (see boot.h). */
#include "recipes/boot.h"

#include <stdlib.h>
#include <string.h>

#include "lib/boot-contract.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/xalloc.h"

static int dup_scalar(struct ydoc *d, yaml_node_t *n, const char *field, char **out, ingot_error *e)
{
	const char *s;
	int r = ydoc_str(d, n, field, &s, e);
	if (r < 0)
		return r;
	*out = xstrdup(s);
	return 0;
}

int recipe_labels_parse(struct ydoc *d, yaml_node_t *map, const char *f, char **version, char **purl, ingot_error *e)
{
	yaml_node_t *v;
	int r;

	if ((v = ydoc_get(d, map, "version"))) {
		if ((r = dup_scalar(d, v, f, version, e)) < 0)
			return r;
		if (!**version || (*version)[strcspn(*version, " \t\r\n")])
			return ydoc_fail(d, v, e, "%s.version: expected a non-empty version without blanks, got '%s'", f,
					 *version);
	}
	if ((v = ydoc_get(d, map, "purl"))) {
		if ((r = dup_scalar(d, v, f, purl, e)) < 0)
			return r;
		/* purl-spec: "pkg:TYPE/...", no whitespace (it is percent-encoded) */
		if (strncmp(*purl, "pkg:", 4) || (*purl)[4] == '/' || !strchr(*purl + 4, '/') ||
		    (*purl)[strcspn(*purl, " \t\r\n")])
			return ydoc_fail(d, v, e, "%s.purl: expected a package URL (pkg:TYPE/NAME@VERSION), got '%s'", f,
					 *purl);
	}
	return 0;
}

/* map's member key (map itself is the field parent) into in. */
static int parse_input_in(struct ydoc *d, yaml_node_t *map, const char *parent, const char *key, const char *dir,
			  struct boot_input *in, ingot_error *e)
{
	static const char *const keys[] = { "source", "sha256", "version", "purl", NULL };
	char f[64];
	yaml_node_t *n, *v;
	const char *s;
	int r;

	snprintf(f, sizeof(f), "%s.%s", parent, key);
	if ((r = ydoc_need(d, map, key, parent, &n, e)) < 0 || (r = ydoc_expect_map(d, n, f, e)) < 0 ||
	    (r = ydoc_check_keys(d, n, f, keys, e)) < 0)
		return r;
	in->line = n->start_mark.line + 1;
	in->column = n->start_mark.column + 1;
	if ((r = ydoc_need(d, n, "source", f, &v, e)) < 0 || (r = dup_scalar(d, v, f, &in->source, e)) < 0)
		return r;
	if (!in->source[0] || strstr(in->source, "://"))
		return ydoc_fail(d, v, e, "%s.source: expected a file path, got '%s'", f, in->source);
	in->path = in->source[0] == '/' ? xstrdup(in->source) : path_join(dir, in->source);
	if ((r = ydoc_need(d, n, "sha256", f, &v, e)) < 0 || (r = ydoc_str(d, v, f, &s, e)) < 0)
		return r;
	if (!is_sha256_hex(s))
		return ydoc_fail(d, v, e, "%s.sha256: expected 64 lower-case hex digits, got '%s'", f, s);
	if ((r = hex_decode(s, in->sha256, sizeof(in->sha256))) < 0)
		return r;
	return recipe_labels_parse(d, n, f, &in->version, &in->purl, e);
}

static int parse_input(struct ydoc *d, yaml_node_t *map, const char *key, const char *dir,
		       struct boot_input *in, ingot_error *e)
{
	return parse_input_in(d, map, "boot", key, dir, in, e);
}

/* secure-boot: {key: INPUT, cert: INPUT} */
static int parse_secure_boot(struct ydoc *d, yaml_node_t *n, const char *dir, struct boot_spec *b, ingot_error *e)
{
	static const char *const keys[] = { "key", "cert", NULL };
	int r;
	if ((r = ydoc_expect_map(d, n, "boot.secure-boot", e)) < 0 ||
	    (r = ydoc_check_keys(d, n, "boot.secure-boot", keys, e)) < 0 ||
	    (r = parse_input_in(d, n, "boot.secure-boot", "key", dir, &b->sb_key, e)) < 0 ||
	    (r = parse_input_in(d, n, "boot.secure-boot", "cert", dir, &b->sb_cert, e)) < 0)
		return r;
	b->secure_boot = 1;
	return 0;
}

/* Module names as the kernel and modinfo spell them: [A-Za-z0-9_-]. */
static int module_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 55)
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

int boot_module_eq(const char *a, const char *b, size_t blen)
{
	size_t i;
	for (i = 0; i < blen && a[i]; i++)
		if (a[i] != b[i] && !((a[i] == '-' || a[i] == '_') && (b[i] == '-' || b[i] == '_')))
			return 0;
	return i == blen && !a[i];
}

static int parse_modules(struct ydoc *d, yaml_node_t *n, struct boot_spec *b, ingot_error *e)
{
	yaml_node_t *it;
	char f[48];
	int r;

	if ((r = ydoc_expect_seq(d, n, "boot.modules", e)) < 0)
		return r;
	b->modules = xcalloc(BOOT_MAX_MODULES, sizeof(*b->modules));
	ydoc_seq_foreach(d, n, it) {
		snprintf(f, sizeof(f), "boot.modules[%zu]", b->n_modules);
		if (b->n_modules == BOOT_MAX_MODULES)
			return ydoc_fail(d, it, e, "%s: expected at most %d modules", f, BOOT_MAX_MODULES);
		if ((r = dup_scalar(d, it, f, &b->modules[b->n_modules], e)) < 0)
			return r;
		const char *m = b->modules[b->n_modules++];
		if (!module_name_ok(m))
			return ydoc_fail(d, it, e, "%s: expected a module name ([A-Za-z0-9_-]), got '%s'", f, m);
		for (size_t j = 0; j + 1 < b->n_modules; j++)
			if (boot_module_eq(b->modules[j], m, strlen(m)))
				return ydoc_fail(d, it, e, "%s: expected each module once, got '%s' twice "
						 "(boot.modules[%zu] is '%s')", f, m, j, b->modules[j]);
	}
	return 0;
}

static int parse_cmdline(struct ydoc *d, yaml_node_t *n, struct boot_spec *b, ingot_error *e)
{
	int r = dup_scalar(d, n, "boot.cmdline", &b->cmdline, e);
	if (r < 0)
		return r;
	if (strlen(b->cmdline) > BOOT_CMDLINE_MAX)
		return ydoc_fail(d, n, e, "boot.cmdline: expected at most %d characters", BOOT_CMDLINE_MAX);
	/* ingot writes these itself; one given here would contradict them. */
	static const char *const own[] = { BOOT_KEY_IMAGE, BOOT_KEY_ROOT, BOOT_KEY_SALT, BOOT_KEY_BLOCKS };
	for (const char *p = b->cmdline; *p; p++) {
		if ((unsigned char)*p < ' ' || (unsigned char)*p > '~')
			return ydoc_fail(d, n, e, "boot.cmdline: expected printable ASCII, got byte 0x%02x",
					 (unsigned char)*p);
		for (size_t i = 0; i < ARRAY_SIZE(own) && (p == b->cmdline || p[-1] == ' '); i++)
			if (!strncmp(p, own[i], strlen(own[i])))
				return ydoc_fail(d, n, e, "boot.cmdline: expected no %.*s parameter (ingot sets it), got '%s'",
						 (int)strlen(own[i]) - 1, own[i], p);
	}
	return 0;
}

int boot_parse(struct ydoc *d, yaml_node_t *n, const char *dir, struct boot_spec **out, ingot_error *e)
{
	static const char *const keys[] = { "kernel", "stub", "init", "modules", "cmdline", "secure-boot", NULL };
	struct boot_spec *b;
	yaml_node_t *v;
	int r;

	*out = NULL;
	if ((r = ydoc_expect_map(d, n, "boot", e)) < 0 || (r = ydoc_check_keys(d, n, "boot", keys, e)) < 0)
		return r;
	b = xcalloc(1, sizeof(*b));
	b->line = n->start_mark.line + 1;
	b->column = n->start_mark.column + 1;
	if ((r = parse_input(d, n, "kernel", dir, &b->kernel, e)) >= 0 &&
	    (r = parse_input(d, n, "stub", dir, &b->stub, e)) >= 0 &&
	    (r = parse_input(d, n, "init", dir, &b->init, e)) >= 0) {
		if ((v = ydoc_get(d, n, "modules")))
			r = parse_modules(d, v, b, e);
		if (r >= 0 && (v = ydoc_get(d, n, "cmdline")))
			r = parse_cmdline(d, v, b, e);
		else if (r >= 0)
			b->cmdline = xstrdup("");
		if (r >= 0 && (v = ydoc_get(d, n, "secure-boot")))
			r = parse_secure_boot(d, v, dir, b, e);
	}
	if (r < 0) {
		boot_free(b);
		return r;
	}
	*out = b;
	return 0;
}

static void input_free(struct boot_input *in)
{
	free(in->source);
	free(in->path);
	free(in->version);
	free(in->purl);
}

void boot_free(struct boot_spec *b)
{
	if (!b)
		return;
	input_free(&b->kernel);
	input_free(&b->stub);
	input_free(&b->init);
	input_free(&b->sb_key);
	input_free(&b->sb_cert);
	for (size_t i = 0; i < b->n_modules; i++)
		free(b->modules[i]);
	free(b->modules);
	free(b->cmdline);
	free(b);
}
