/* Units for builder/unpack.c.  Every archive is written here with
 * libarchive's writer (tar, tar.gz, tar.xz, .deb = ar), including hostile
 * ones that no well-behaved tar would produce. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builder/build.h"
#include "builder/deb.h"
#include "builder/image.h"
#include "recipes/recipe.h"
#include "builder/store.h"
#include "builder/tree.h"
#include "builder/unpack.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "helpers.h"

/* One archive member: type f(ile) d(ir) l(symlink) h(ardlink) c b(devices). */
struct m {
	char type;
	const char *path;
	const char *data;     /* file content, or link target */
	unsigned mode;
};

struct fx {
	char dir[64];
	struct store s;
	int seq;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || th_store_setup(f->dir, sizeof(f->dir), "unpack", &f->s) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int r = th_store_teardown(f->dir, &f->s);
	free(f);
	return r;
}

static void add_members(struct archive *w, const struct m *ms, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *ae = archive_entry_new();
		archive_entry_set_pathname(ae, ms[i].path);
		archive_entry_set_perm(ae, ms[i].mode ? ms[i].mode : (ms[i].type == 'd' ? 0755 : 0644));
		archive_entry_set_uid(ae, 1000);   /* must not reach the image */
		archive_entry_set_mtime(ae, 1234567, 0);
		switch (ms[i].type) {
		case 'f':
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_size(ae, (la_int64_t)strlen(ms[i].data));
			break;
		case 'd': archive_entry_set_filetype(ae, AE_IFDIR); break;
		case 'l':
			archive_entry_set_filetype(ae, AE_IFLNK);
			archive_entry_set_symlink(ae, ms[i].data);
			break;
		case 'h':
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_hardlink(ae, ms[i].data);
			archive_entry_set_size(ae, 0);
			break;
		case 'c':
		case 'b':
			archive_entry_set_filetype(ae, ms[i].type == 'c' ? AE_IFCHR : AE_IFBLK);
			archive_entry_set_rdevmajor(ae, 1);
			archive_entry_set_rdevminor(ae, 3);
			break;
		}
		/* ARCHIVE_WARN: a non-UTF-8 name is written raw, as wanted here */
		assert_true(archive_write_header(w, ae) >= ARCHIVE_WARN);
		if (ms[i].type == 'f')
			assert_int_equal(archive_write_data(w, ms[i].data, strlen(ms[i].data)), (la_ssize_t)strlen(ms[i].data));
		archive_entry_free(ae);
	}
}

/* Write a tar (filter: "gzip", "xz" or NULL) and return its path. */
static char *make_tar(struct fx *f, const char *filter, const struct m *ms, size_t n)
{
	char *path;
	struct archive *w = archive_write_new();
	assert_true(asprintf(&path, "%s/a%d.tar", f->dir, f->seq++) > 0);
	archive_write_set_format_pax_restricted(w);
	if (filter)
		assert_int_equal(archive_write_add_filter_by_name(w, filter), ARCHIVE_OK);
	assert_int_equal(archive_write_open_filename(w, path), ARCHIVE_OK);
	add_members(w, ms, n);
	archive_write_close(w);
	archive_write_free(w);
	return path;
}

static void ar_member(struct archive *w, const char *name, const void *data, size_t len)
{
	struct archive_entry *ae = archive_entry_new();
	archive_entry_set_pathname(ae, name);
	archive_entry_set_filetype(ae, AE_IFREG);
	archive_entry_set_perm(ae, 0644);
	archive_entry_set_size(ae, (la_int64_t)len);
	assert_int_equal(archive_write_header(w, ae), ARCHIVE_OK);
	assert_int_equal(archive_write_data(w, data, len), (la_ssize_t)len);
	archive_entry_free(ae);
}

static char *make_deb(struct fx *f, const struct m *ms, size_t n)
{
	_cleanup_free_ char *control = NULL, *data = NULL, *cbuf = NULL, *dbuf = NULL;
	static const struct m ctl[] = { { 'f', "./control", "Package: p\nVersion: 1\n", 0 } };
	size_t clen, dlen;
	ingot_error e = { 0 };
	char *path;
	struct archive *w;

	control = make_tar(f, "gzip", ctl, 1);
	data = make_tar(f, "xz", ms, n);
	assert_int_equal(read_file(control, 1 << 20, &cbuf, &clen, &e), 0);
	assert_int_equal(read_file(data, 1 << 20, &dbuf, &dlen, &e), 0);
	assert_true(asprintf(&path, "%s/p%d.deb", f->dir, f->seq++) > 0);
	w = archive_write_new();
	archive_write_set_format_ar_bsd(w);
	assert_int_equal(archive_write_open_filename(w, path), ARCHIVE_OK);
	ar_member(w, "debian-binary", "2.0\n", 4);
	ar_member(w, "control.tar.gz", cbuf, clen);
	ar_member(w, "data.tar.xz", dbuf, dlen);
	archive_write_close(w);
	archive_write_free(w);
	return path;
}

/* An artifact for path, imported into the store under its real digest. */
static void artifact_for(struct fx *f, const char *path, enum artifact_kind kind, struct artifact *a)
{
	ingot_error e = { 0 };
	memset(a, 0, sizeof(*a));
	a->name = "art";
	a->source = (char *)path;
	a->path = (char *)path;
	a->kind = kind;
	a->dest = "";
	assert_int_equal(sha256_file(path, a->sha256, NULL, &e), 0);
	assert_int_equal(store_import(&f->s, a->name, path, a->sha256, &e), 0);
}

/* Unpack an archive that must be refused; returns the message. */
static void expect_refused(struct fx *f, const struct m *ms, size_t n, const char *msg)
{
	_cleanup_free_ char *p = make_tar(f, NULL, ms, n);
	struct artifact a;
	struct tree l;
	struct unpack_stats st;
	ingot_error e = { 0 };

	artifact_for(f, p, ART_TAR, &a);
	assert_true(unpack_list(&f->s, &a, NULL, &l, &st, &e) < 0);
	if (strcmp(e.msg, msg))
		fail_msg("expected: %s\ngot:      %s", msg, e.msg);
	assert_int_equal(l.n, 0);
}

static const struct m good[] = {
	{ 'd', "./", NULL, 0755 },
	{ 'd', "./pkg/", NULL, 0755 },
	{ 'd', "./pkg/bin/", NULL, 0750 },
	{ 'f', "./pkg/bin/tool", "#!/bin/sh\necho tool\n", 04755 },
	{ 'h', "./pkg/bin/tool2", "./pkg/bin/tool", 0 },
	{ 'f', "./pkg/lib/libx.so.1", "ELF...", 0644 },
	{ 'l', "./pkg/lib/libx.so", "libx.so.1", 0777 },
	{ 'f', "./pkg/share/doc/README", "docs", 0600 },
	{ 'f', "./pkg/top", "dropped by strip? no: kept", 0644 },
	{ 'f', "rootfile", "dropped by strip-components 1", 0644 },
};

static void test_list_and_cache(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *p = make_tar(f, "gzip", good, sizeof(good) / sizeof(good[0]));
	struct artifact a;
	struct tree l, l2;
	struct unpack_stats st, st2;
	ingot_error e = { 0 };
	uint8_t d[32];

	artifact_for(f, p, ART_TAR, &a);
	assert_int_equal(unpack_list(&f->s, &a, NULL, &l, &st, &e), 0);
	assert_false(st.cached);
	assert_int_equal(l.n, 9);  /* "./" itself carries nothing */
	assert_string_equal(l.v[0].path, "pkg");
	struct tree_entry *t = tree_find(&l, "pkg/bin/tool");
	assert_non_null(t);
	assert_int_equal(t->mode, 04755);
	assert_int_equal(t->uid, 0);
	sha256_buf("#!/bin/sh\necho tool\n", 20, d);
	assert_memory_equal(t->sha256, d, 32);
	/* the bytes are in the artifact's pack, at the listed offset */
	assert_true(t->loc.packed && t->loc.fresh);
	assert_memory_equal(t->loc.pack, a.sha256, 32);
	struct store_content sc;
	char got[32];
	assert_int_equal(store_content_open(&f->s, &t->loc, t->sha256, t->size, &sc, &e), 0);
	assert_int_equal(store_content_read(&sc, got, sizeof(got)), 20);
	assert_int_equal(store_content_read(&sc, got, sizeof(got)), 0);
	store_content_close(&sc);
	assert_memory_equal(got, "#!/bin/sh\necho tool\n", 20);
	assert_false(store_has_blob(&f->s, d));
	/* copied out of the pack only for a reader that needs a file */
	_cleanup_free_ char *bp = NULL;
	assert_int_equal(store_content_blob(&f->s, &t->loc, t->sha256, t->size, &bp, &e), 0);
	assert_true(store_has_blob(&f->s, d));
	struct tree_entry *h = tree_find(&l, "pkg/bin/tool2");
	assert_int_equal(h->type, TREE_FILE);
	assert_memory_equal(h->sha256, d, 32);
	assert_int_equal(h->size, 20);
	assert_int_equal(h->loc.off, t->loc.off);  /* a hardlink: the same bytes */
	assert_string_equal(tree_find(&l, "pkg/lib/libx.so")->target, "libx.so.1");
	assert_int_equal(tree_find(&l, "pkg/bin")->mode, 0750);

	/* second time from unpacked/<sha>.jsonl, same listing */
	assert_int_equal(unpack_list(&f->s, &a, NULL, &l2, &st2, &e), 0);
	assert_true(st2.cached);
	assert_int_equal(st2.bytes, st.bytes);
	th_assert_trees_equal(&l, &l2);
	assert_false(tree_find(&l2, "pkg/bin/tool")->loc.fresh);  /* re-hashed when imaged */
	assert_int_equal(tree_find(&l2, "pkg/bin/tool")->loc.off, t->loc.off);
	tree_free(&l2);

	/* a short pack is not trusted either */
	char pack[256];
	hex_encode(a.sha256, 32, pack);
	{
		char pp[300];
		snprintf(pp, sizeof(pp), "%s/unpacked/%s.pack", f->s.root, pack);
		assert_int_equal(truncate(pp, 5), 0);
	}
	assert_int_equal(unpack_list(&f->s, &a, NULL, &l2, &st2, &e), 0);
	assert_false(st2.cached);
	tree_free(&l2);

	/* an entry limit: more entries than allowed is refused, cached or not */
	assert_int_equal(unpack_list(&f->s, &a, &(struct unpack_limits){ .entries = 3 }, &l2, &st2, &e), -EFBIG);
	assert_non_null(strstr(e.msg, "expected at most 3 entries"));

	/* a damaged cache is not trusted: unpacked again */
	char hex[65], cache[256];
	hex_encode(a.sha256, 32, hex);
	snprintf(cache, sizeof(cache), "%s/unpacked/%s.jsonl", f->s.root, hex);
	assert_int_equal(write_file_atomic(cache, "{\"schema\":", 10, 0644, &e), 0);
	assert_int_equal(unpack_list(&f->s, &a, NULL, &l2, &st2, &e), 0);
	assert_false(st2.cached);
	assert_int_equal(l2.n, l.n);
	tree_free(&l2);

	/* nor is one cut at a line break: each line parses, but the header
	 * counts one entry more than there are */
	{
		_cleanup_free_ char *text = NULL;
		size_t len;
		assert_int_equal(read_file(cache, 1u << 20, &text, &len, &e), 0);
		assert_true(len > 1 && text[len - 1] == '\n');
		for (len--; len && text[len - 1] != '\n'; len--)
			;
		assert_int_equal(write_file_atomic(cache, text, len, 0644, &e), 0);
		assert_int_equal(unpack_list(&f->s, &a, NULL, &l2, &st2, &e), 0);
		assert_false(st2.cached);
		assert_int_equal(l2.n, l.n);
		tree_free(&l2);
		/* and the listing it wrote again is trusted */
		assert_int_equal(unpack_list(&f->s, &a, NULL, &l2, &st2, &e), 0);
		assert_true(st2.cached);
		assert_int_equal(l2.n, l.n);
		tree_free(&l2);
	}

	/* the recipe's view: strip, include, exclude, dest, modes */
	static char *inc[] = { "bin", "lib/*" }, *exc[] = { "*.so" };
	struct mode_override mo[] = { { .glob = "opt/x/bin/*", .mode = 0700, .uid = 5, .gid = -1 } };
	struct tree img;
	a.strip_components = 1;
	a.include = inc; a.n_include = 2;
	a.exclude = exc; a.n_exclude = 1;
	a.dest = "opt/x";
	a.modes = mo; a.n_modes = 1;
	tree_init(&img);
	assert_int_equal(unpack_apply(&a, &l, &img, &e), 0);
	assert_int_equal(img.n, 4);
	assert_non_null(tree_find(&img, "opt/x/bin"));
	assert_int_equal(tree_find(&img, "opt/x/bin")->mode, 0750);
	assert_int_equal(tree_find(&img, "opt/x/bin/tool")->mode, 0700);
	assert_int_equal(tree_find(&img, "opt/x/bin/tool")->uid, 5);
	assert_int_equal(tree_find(&img, "opt/x/bin/tool2")->mode, 0700);
	assert_non_null(tree_find(&img, "opt/x/lib/libx.so.1"));
	assert_null(tree_find(&img, "opt/x/lib/libx.so"));
	assert_null(tree_find(&img, "opt/x/top"));
	assert_null(tree_find(&img, "rootfile"));
	tree_free(&img);
	tree_free(&l);
}

static void test_hostile(void **state)
{
	struct fx *f = *state;
	const struct m abs[] = { { 'f', "/etc/passwd", "root::0:0", 0 } };
	const struct m dotdot[] = { { 'f', "a/../../escape", "x", 0 } };
	const struct m hl_out[] = { { 'f', "a", "x", 0 }, { 'h', "b", "/etc/shadow", 0 } };
	const struct m hl_missing[] = { { 'f', "a", "x", 0 }, { 'h', "b", "nothere", 0 } };
	const struct m hl_dir[] = { { 'd', "d", NULL, 0 }, { 'h', "b", "d", 0 } };
	const struct m dup[] = { { 'f', "x", "1", 0 }, { 'f', "./x", "2", 0 } };
	const struct m badname[] = { { 'f', "caf\xe9", "latin-1", 0 } };
	const struct m badlink[] = { { 'l', "l", "\xff\xfe", 0 } };

	expect_refused(f, abs, 1, "art: archive entry '/etc/passwd': expected a relative path, got an absolute one");
	expect_refused(f, dotdot, 1, "art: archive entry 'a/../../escape': path: '.' or '..' component in 'a/../../escape' refused");
	expect_refused(f, hl_out, 2, "art: hardlink target of '/etc/shadow': expected a relative path, got an absolute one");
	expect_refused(f, hl_missing, 2, "art: archive entry 'b': hardlink target 'nothere': expected a regular file earlier in the same artifact, got nothing");
	expect_refused(f, hl_dir, 2, "art: archive entry 'b': hardlink target 'd': expected a regular file earlier in the same artifact, got dir");
	expect_refused(f, dup, 2, "art: archive entry './x': expected each path once, got it twice");
	expect_refused(f, badname, 1, "art: archive entry 'caf\\xe9': expected a UTF-8 name, got invalid bytes");
	expect_refused(f, badlink, 1, "art: archive entry 'l': expected a UTF-8 symlink target of 1 to 4095 bytes, got an invalid one");
}

static void apply_one(struct fx *f, const struct m *ms, size_t n, bool allow_devices, struct tree *img,
		      int want, const char *msg)
{
	_cleanup_free_ char *p = make_tar(f, NULL, ms, n);
	struct artifact a;
	struct tree l;
	struct unpack_stats st;
	ingot_error e = { 0 };

	artifact_for(f, p, ART_TAR, &a);
	a.allow_devices = allow_devices;
	assert_int_equal(unpack_list(&f->s, &a, NULL, &l, &st, &e), 0);
	assert_int_equal(unpack_apply(&a, &l, img, &e), want);
	if (msg && strcmp(e.msg, msg))
		fail_msg("expected: %s\ngot:      %s", msg, e.msg);
	tree_free(&l);
}

static void test_apply_refusals(void **state)
{
	struct fx *f = *state;
	struct tree img;
	const struct m through[] = { { 'l', "lib", "/etc", 0 }, { 'f', "lib/passwd", "evil", 0 } };
	const struct m dev[] = { { 'c', "dev/null", NULL, 0666 } };

	tree_init(&img);
	apply_one(f, through, 2, false, &img, -ENOTDIR,
		  "art: archive entry 'lib/passwd': path goes through '/lib', which is a symlink from 'art', not a directory");
	tree_free(&img);

	tree_init(&img);
	apply_one(f, dev, 1, false, &img, -EPERM,
		  "art: archive entry 'dev/null': expected no device nodes, got a character device 1:3 (set 'allow-devices: true' to allow)");
	assert_int_equal(img.n, 0);
	apply_one(f, dev, 1, true, &img, 0, NULL);
	assert_int_equal(tree_find(&img, "dev/null")->type, TREE_CHR);
	assert_int_equal(tree_find(&img, "dev/null")->rdev_minor, 3);
	tree_free(&img);
}

/* Two artifacts on one path: refused unless the later says replace. */
static void test_conflict_replace(void **state)
{
	struct fx *f = *state;
	const struct m one[] = { { 'f', "etc/conf", "one", 0 } };
	const struct m two[] = { { 'f', "etc/conf", "two", 0 } };
	_cleanup_free_ char *p1 = make_tar(f, NULL, one, 1);
	_cleanup_free_ char *p2 = make_tar(f, "xz", two, 1);
	struct artifact a1, a2;
	struct tree l1, l2, img;
	struct unpack_stats st;
	ingot_error e = { 0 };
	uint8_t d[32];

	artifact_for(f, p1, ART_TAR, &a1);
	artifact_for(f, p2, ART_TAR, &a2);
	a2.name = "override";
	assert_int_equal(unpack_list(&f->s, &a1, NULL, &l1, &st, &e), 0);
	assert_int_equal(unpack_list(&f->s, &a2, NULL, &l2, &st, &e), 0);
	tree_init(&img);
	assert_int_equal(unpack_apply(&a1, &l1, &img, &e), 0);
	assert_int_equal(unpack_apply(&a2, &l2, &img, &e), -EEXIST);
	assert_string_equal(e.msg, "override: path 'etc/conf' also written by 'art' (mark one artifact 'replace: true' to say which wins)");
	a2.replace = true;
	assert_int_equal(unpack_apply(&a2, &l2, &img, &e), 0);
	sha256_buf("two", 3, d);
	assert_memory_equal(tree_find(&img, "etc/conf")->sha256, d, 32);
	assert_string_equal(tree_find(&img, "etc/conf")->origin, "override");
	tree_free(&img);
	tree_free(&l1);
	tree_free(&l2);
}

static void test_deb_and_formats(void **state)
{
	struct fx *f = *state;
	const struct m data[] = {
		{ 'd', "./usr/", NULL, 0755 },
		{ 'f', "./usr/bin/nvidia-ctk", "ctk 1.17.8", 0755 },
	};
	_cleanup_free_ char *deb = make_deb(f, data, 2);
	_cleanup_free_ char *notdeb = make_tar(f, NULL, data, 2);
	struct artifact a;
	struct tree l;
	struct unpack_stats st;
	ingot_error e = { 0 };

	artifact_for(f, deb, ART_DEB, &a);
	assert_int_equal(unpack_list(&f->s, &a, NULL, &l, &st, &e), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(tree_find(&l, "usr/bin/nvidia-ctk")->mode, 0755);
	assert_int_equal(st.bytes, 10);
	assert_string_equal(st.deb_version, "1");
	tree_free(&l);
	/* the control Version is kept in the listing: a warm read has it */
	assert_int_equal(unpack_list(&f->s, &a, NULL, &l, &st, &e), 0);
	assert_true(st.cached);
	assert_string_equal(st.deb_version, "1");
	tree_free(&l);

	/* the same bytes listed as a tar are not a tar */
	artifact_for(f, deb, ART_TAR, &a);
	assert_true(unpack_list(&f->s, &a, NULL, &l, &st, &e) < 0);
	assert_non_null(strstr(e.msg, "art: "));
	/* a tar declared as deb is not a Debian package */
	artifact_for(f, notdeb, ART_DEB, &a);
	assert_true(unpack_list(&f->s, &a, NULL, &l, &st, &e) < 0);
	assert_non_null(strstr(e.msg, "expected a Debian package"));
}

/* build_stage_tree: the same tree with 1 or 8 workers, and the same
 * error (the first failing artifact in recipe order) whatever finishes first. */
static int stage(struct fx *f, const char *yaml, unsigned workers, struct tree *t, ingot_error *e)
{
	struct recipe *r = NULL;
	size_t cached;
	int rc = recipe_load_buf("w.yaml", f->dir, yaml, strlen(yaml), NULL, &r, e);
	assert_int_equal(rc, 0);
	rc = build_stage_tree(r, &f->s, workers, NULL, NULL, NULL, t, &cached, NULL, e);
	recipe_free(r);
	return rc;
}

static void test_workers(void **state)
{
	struct fx *f = *state;
	char yaml[8192], hex[65];
	size_t len;
	struct tree t1, t8;
	ingot_error e1 = { 0 }, e8 = { 0 };

	len = (size_t)snprintf(yaml, sizeof(yaml), "name: w\nversion: \"1\"\nepoch: 1\nartifacts:\n");
	for (int i = 0; i < 8; i++) {
		char p0[64], p1[64], body[32];
		snprintf(p0, sizeof(p0), "d%d/shared", i % 3);
		snprintf(p1, sizeof(p1), "d%d/f%d", i % 3, i);
		snprintf(body, sizeof(body), "body %d", i);
		const struct m ms[] = { { 'd', p0, NULL, 0750 }, { 'f', p1, body, 0644 } };
		_cleanup_free_ char *p = make_tar(f, i % 2 ? "gzip" : NULL, ms, 2);
		uint8_t d[32];
		ingot_error e = { 0 };
		assert_int_equal(sha256_file(p, d, NULL, &e), 0);
		hex_encode(d, 32, hex);
		len += (size_t)snprintf(yaml + len, sizeof(yaml) - len,
					"  - name: a%d\n    kind: tar\n    source: %s\n    sha256: %s\n", i, strrchr(p, '/') + 1, hex);
	}
	assert_int_equal(stage(f, yaml, 1, &t1, &e1), 0);
	assert_int_equal(stage(f, yaml, 8, &t8, &e8), 0);
	assert_int_equal(t1.n, 8 + 3 + 3);
	th_assert_trees_equal(&t1, &t8);
	tree_free(&t1);
	tree_free(&t8);

	/* artifacts 2 and 6 are hostile: both worker counts report a2 */
	for (int bad = 6; bad >= 2; bad -= 4) {
		const struct m evil[] = { { 'f', "/etc/shadow", "x", 0 } };
		_cleanup_free_ char *p = make_tar(f, NULL, evil, 1);
		uint8_t d[32];
		ingot_error e = { 0 };
		char needle[32], *at;
		assert_int_equal(sha256_file(p, d, NULL, &e), 0);
		hex_encode(d, 32, hex);
		snprintf(needle, sizeof(needle), "name: a%d\n", bad);
		at = strstr(yaml, needle);
		assert_non_null(at);
		at = strstr(at, "source: ") + 8;
		memcpy(at, strrchr(p, '/') + 1, strlen(strrchr(p, '/') + 1));  /* same length: aNN.tar */
		at = strstr(at, "sha256: ") + 8;
		memcpy(at, hex, 64);
	}
	assert_true(stage(f, yaml, 1, &t1, &e1) < 0);
	assert_true(stage(f, yaml, 8, &t8, &e8) < 0);
	assert_string_equal(e1.msg, "a2: archive entry '/etc/shadow': expected a relative path, got an absolute one");
	assert_string_equal(e8.msg, e1.msg);
}

/* Bytes of a cached pack are checked when they go into an image: a
 * flipped byte stops the write (the verifier thread), fresh bytes are not
 * hashed twice, and the image is the same cold or warm. */
static int write_img(struct fx *f, const struct tree *t, const char *name, ingot_error *e)
{
	char path[256];
	struct image_opts o = { .compression = "zstd", .level = 3, .block_size = 131072, .workers = 2,
				.mtime = 1700000000u };
	struct image_info ii;
	int fd, r;
	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	r = image_write(t, &f->s, &o, fd, path, &ii, e);
	close(fd);
	return r;
}

static void staged(struct fx *f, struct artifact *a, struct tree *img, bool *fresh)
{
	struct tree l;
	struct unpack_stats st;
	ingot_error e = { 0 };
	assert_int_equal(unpack_list(&f->s, a, NULL, &l, &st, &e), 0);
	tree_init(img);
	assert_int_equal(unpack_apply(a, &l, img, &e), 0);
	assert_int_equal(tree_finalize(img, &e), 0);
	*fresh = tree_find(img, "pkg/bin/tool")->loc.fresh;
	tree_free(&l);
}

static void test_pack_checked(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *p = make_tar(f, "gzip", good, sizeof(good) / sizeof(good[0]));
	struct artifact a;
	struct tree t;
	ingot_error e = { 0 };
	bool fresh;
	char pack[300], hex[65];

	artifact_for(f, p, ART_TAR, &a);
	staged(f, &a, &t, &fresh);
	assert_true(fresh);
	assert_int_equal(write_img(f, &t, "cold.sqfs", &e), 0);
	tree_free(&t);
	staged(f, &a, &t, &fresh);   /* from the cache: bytes not trusted */
	assert_false(fresh);
	assert_int_equal(write_img(f, &t, "warm.sqfs", &e), 0);
	{
		char c1[300], c2[300];
		size_t l1, l2;
		snprintf(c1, sizeof(c1), "%s/cold.sqfs", f->dir);
		snprintf(c2, sizeof(c2), "%s/warm.sqfs", f->dir);
		_cleanup_free_ uint8_t *b1 = th_slurp(c1, &l1), *b2 = th_slurp(c2, &l2);
		assert_int_equal(l1, l2);
		assert_memory_equal(b1, b2, l1);
	}
	hex_encode(a.sha256, 32, hex);
	snprintf(pack, sizeof(pack), "%s/unpacked/%s.pack", f->s.root, hex);
	th_flip_byte(pack, 3, 1);
	assert_int_equal(write_img(f, &t, "bad.sqfs", &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "store pack: expected"));
	/* and a pack shorter than its listing */
	assert_int_equal(truncate(pack, 2), 0);
	assert_int_equal(write_img(f, &t, "short.sqfs", &e), -EBADMSG);
	assert_non_null(strstr(e.msg, ".pack: expected"));
	tree_free(&t);
}

/* The source's sha256 covers every byte of the file, the ones the
 * archive reader never asked for too (junk after the gzip stream), when
 * it is made on its own thread across many buffers. */
static void test_source_digest(void **state)
{
	struct fx *f = *state;
	size_t big = 700000;
	_cleanup_free_ char *data = malloc(big + 1);
	struct m ms[] = { { 'f', "big", NULL, 0 }, { 'f', "small", "x", 0 } };
	struct unpack_source src;
	struct archive_entry *ae;
	struct archive *ar;
	uint8_t got[32], want[32];
	uint64_t size;
	const char *why = NULL;
	ingot_error e = { 0 };
	char *path;
	int fd, entries = 0;
	FILE *fp;

	assert_non_null(data);
	for (uint32_t i = 0, x = 2463534242u; i < big; i++) {   /* xorshift: compresses poorly */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		data[i] = (char)('!' + x % 90);
	}
	data[big] = 0;
	ms[0].data = data;
	path = make_tar(f, "gzip", ms, 2);
	assert_non_null(fp = fopen(path, "a"));
	fputs("trailing bytes no reader asks for", fp);
	fclose(fp);

	assert_true((fd = open(path, O_RDONLY)) >= 0);
	assert_int_equal(unpack_source_begin(&src, fd), 0);
	assert_non_null(ar = archive_read_new());
	archive_read_support_format_tar(ar);
	assert_int_equal(unpack_source_open_tar(ar, &src), ARCHIVE_OK);
	while (archive_read_next_header(ar, &ae) == ARCHIVE_OK) {
		assert_int_equal(archive_read_data_skip(ar), ARCHIVE_OK);
		entries++;
	}
	assert_int_equal(entries, 2);
	assert_int_equal(unpack_source_finish(&src, &why), 0);
	archive_read_free(ar);
	assert_int_equal(unpack_source_end(&src, got), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(sha256_fd(fd, path, want, &size, &e), 0);
	assert_memory_equal(got, want, 32);
	assert_int_equal(src.total, size);
	assert_true(size > 300000);
	close(fd);
	free(path);
}

static void test_glob(void **state)
{
	(void)state;
	assert_true(unpack_glob_match("usr/share/doc", "usr/share/doc/x/y"));
	assert_true(unpack_glob_match("*.a", "usr/lib/libz.a"));
	assert_true(unpack_glob_match("lib/*", "lib/modules/6.8/kernel"));
	assert_false(unpack_glob_match("usr/share/doc", "usr/share/docs"));
	assert_false(unpack_glob_match("lib/*.so", "lib/x.so.1"));
}

/* deb(5) member names and debian-binary, as dpkg-deb reads them. */
static void test_deb_rules(void **state)
{
	static const struct { const char *name; enum deb_member kind; int filter; } names[] = {
		{ "control.tar", DEB_CONTROL, ARCHIVE_FILTER_NONE },
		{ "control.tar.zst", DEB_CONTROL, ARCHIVE_FILTER_ZSTD },
		{ "control.tar.bz2", DEB_BAD_SUFFIX, 0 },   /* data only */
		{ "control.tar.gz~", DEB_BAD_SUFFIX, 0 },
		{ "data.tar.lzma", DEB_DATA, ARCHIVE_FILTER_LZMA },
		{ "data.tar.xz.bak", DEB_BAD_SUFFIX, 0 },
		{ "data.tarx", DEB_BAD_SUFFIX, 0 },
		{ "_gpgorigin", DEB_SKIP, 0 },
		{ "debian-binary", DEB_UNKNOWN, 0 },
		{ "", DEB_UNKNOWN, 0 },
	};
	char ctl[] = "Package: p\nVersion: 1:2.0-1 \r\nArchitecture: all\n";
	char none[] = "Package: p\n";
	int f;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(deb_member_kind(names[i].name, &f), names[i].kind);
		if (names[i].kind == DEB_CONTROL || names[i].kind == DEB_DATA)
			assert_int_equal(f, names[i].filter);
	}
	assert_true(deb_binary_ok("2.0\n", 4));
	assert_true(deb_binary_ok("2.10\n", 5));
	assert_false(deb_binary_ok("2.0", 3));
	assert_false(deb_binary_ok("2.\n", 3));
	assert_false(deb_binary_ok("3.0\n", 4));
	assert_false(deb_binary_ok("2.0\nx", 5));
	assert_string_equal(deb_control_version(ctl), "1:2.0-1");
	assert_null(deb_control_version(none));
	assert_true(deb_version_ok("1:2.0-1~rc1+b1", 128));
	assert_false(deb_version_ok("1.0\x1b[31m", 128));
	assert_false(deb_version_ok("", 128));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_list_and_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deb_and_formats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pack_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source_digest, setup, teardown),
		cmocka_unit_test(test_glob),
		cmocka_unit_test(test_deb_rules),
	};
	return cmocka_run_group_tests_name("unpack", tests, NULL, NULL);
}
