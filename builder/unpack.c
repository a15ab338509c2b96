#include "builder/unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"

#define DATA_BUF (256u << 10)
#define CACHE_SCHEMA "ingot.unpacked/v1"

/* Per-artifact reading state. */
struct reader {
	struct store *s;
	const struct artifact *a;
	struct tree *out;
	struct unpack_stats *st;
	char *buf;
	ingot_error *e;
};

static void archive_freep(struct archive **a)
{
	if (*a)
		archive_read_free(*a);
}
#define _cleanup_archive_ __attribute__((cleanup(archive_freep)))

static bool utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned c = *p, n;
		uint32_t cp;
		if (c < 0x80) {
			p++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			n = 1; cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			n = 2; cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			n = 3; cp = c & 0x07;
		} else {
			return false;
		}
		for (unsigned i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		/* overlong forms, surrogates, beyond U+10FFFF */
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			return false;
		p += n + 1;
	}
	return true;
}

/* Archive path -> listing path: "./a/b/" -> "a/b".  Returns 1 for the
 * archive root ("." or "./"), which carries nothing. */
static int normalize(struct reader *rd, const char *raw, const char *what, char **out)
{
	const char *p = raw;
	size_t n;
	ingot_error sub = { 0 };

	if (!utf8_ok(raw))
		return ingot_fail(rd->e, -EILSEQ, "%s: %s '%s': expected a UTF-8 name, got invalid bytes",
				  rd->a->name, what, raw);
	if (raw[0] == '/')
		return ingot_fail(rd->e, -EINVAL, "%s: %s '%s': expected a relative path, got an absolute one",
				  rd->a->name, what, raw);
	while (p[0] == '.' && p[1] == '/')
		for (p += 2; *p == '/'; p++)
			;
	if (!strcmp(p, ".") || !*p)
		return 1;
	n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		n--;
	*out = strndup(p, n);
	if (!*out)
		return ingot_fail(rd->e, -ENOMEM, "out of memory");
	if (tree_check_path(*out, "path", &sub) < 0) {
		free(*out);
		*out = NULL;
		return ingot_fail(rd->e, -EINVAL, "%s: %s '%s': %s", rd->a->name, what, raw, sub.msg);
	}
	return 0;
}

static int add_listing(struct reader *rd, struct tree_entry *ent, const char *raw)
{
	struct tree_entry *old = tree_find(rd->out, ent->path);
	ingot_error sub = { 0 };

	/* Tar may repeat a directory; anything else twice is ambiguous. */
	if (old && !(old->type == TREE_DIR && ent->type == TREE_DIR))
		return ingot_fail(rd->e, -EEXIST, "%s: archive entry '%s': expected each path once, got it twice",
				  rd->a->name, raw);
	if (tree_add(rd->out, ent, false, &sub) < 0)
		return ingot_fail(rd->e, sub.code, "%s: archive entry '%s': %s", rd->a->name, raw, sub.msg);
	rd->st->entries++;
	return 0;
}

static int read_file_data(struct reader *rd, struct archive *ar, const char *raw, struct tree_entry *ent)
{
	struct store_writer w;
	int r = store_writer_begin(rd->s, &w, rd->e);
	if (r < 0)
		return r;
	for (;;) {
		la_ssize_t n = archive_read_data(ar, rd->buf, DATA_BUF);
		if (n < 0) {
			r = ingot_fail(rd->e, -EIO, "%s: archive entry '%s': %s", rd->a->name, raw, archive_error_string(ar));
			store_writer_abort(&w);
			return r;
		}
		if (n == 0)
			break;
		if ((r = store_writer_write(&w, rd->buf, (size_t)n, rd->e)) < 0) {
			store_writer_abort(&w);
			return r;
		}
	}
	r = store_writer_commit(&w, ent->sha256, &ent->size, rd->e);
	if (r < 0)
		return r;
	rd->st->bytes += ent->size;
	return 0;
}

static int read_entry(struct reader *rd, struct archive *ar, struct archive_entry *ae)
{
	const char *raw = archive_entry_pathname(ae);
	const char *hl = archive_entry_hardlink(ae);
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ char *hpath = NULL;
	struct tree_entry ent = { .origin = (char *)rd->a->name };
	int r;

	if (!raw)
		return ingot_fail(rd->e, -EINVAL, "%s: archive entry without a name", rd->a->name);
	r = normalize(rd, raw, "archive entry", &path);
	if (r < 0)
		return r;
	if (r == 1)
		return 0;
	ent.path = path;
	ent.mode = archive_entry_perm(ae) & 07777;

	if (hl) {
		/* A hardlink is a second name for an earlier regular file of
		 * this artifact: it becomes a file entry with that content. */
		struct tree_entry *tgt;
		r = normalize(rd, hl, "hardlink target of", &hpath);
		if (r < 0)
			return r;
		tgt = r == 1 ? NULL : tree_find(rd->out, hpath);
		if (!tgt || tgt->type != TREE_FILE)
			return ingot_fail(rd->e, -EINVAL, "%s: archive entry '%s': hardlink target '%s': expected a regular file earlier in the same artifact, got %s",
					  rd->a->name, raw, hl, tgt ? tree_type_name(tgt->type) : "nothing");
		ent.type = TREE_FILE;
		ent.size = tgt->size;
		memcpy(ent.sha256, tgt->sha256, 32);
		rd->st->bytes += ent.size;
		return add_listing(rd, &ent, raw);
	}

	switch (archive_entry_filetype(ae)) {
	case AE_IFREG:
		ent.type = TREE_FILE;
		if ((r = read_file_data(rd, ar, raw, &ent)) < 0)
			return r;
		break;
	case AE_IFDIR:
		ent.type = TREE_DIR;
		break;
	case AE_IFLNK: {
		const char *t = archive_entry_symlink(ae);
		ent.type = TREE_SYMLINK;
		if (!t || !*t || strlen(t) > 4095 || !utf8_ok(t))
			return ingot_fail(rd->e, -EINVAL, "%s: archive entry '%s': expected a UTF-8 symlink target of 1 to 4095 bytes, got %s",
					  rd->a->name, raw, !t || !*t ? "an empty one" : "an invalid one");
		ent.target = (char *)t;
		break;
	}
	case AE_IFCHR:
	case AE_IFBLK:
		ent.type = archive_entry_filetype(ae) == AE_IFCHR ? TREE_CHR : TREE_BLK;
		ent.rdev_major = (uint32_t)archive_entry_rdevmajor(ae);
		ent.rdev_minor = (uint32_t)archive_entry_rdevminor(ae);
		break;
	case AE_IFIFO:
		ent.type = TREE_FIFO;
		break;
	case AE_IFSOCK:
		ent.type = TREE_SOCK;
		break;
	default:
		return ingot_fail(rd->e, -EINVAL, "%s: archive entry '%s': expected a file, directory, symlink or device, got type 0%o",
				  rd->a->name, raw, (unsigned)archive_entry_filetype(ae));
	}
	return add_listing(rd, &ent, raw);
}

static int read_archive(struct reader *rd, struct archive *ar, const char *what)
{
	struct archive_entry *ae;
	for (;;) {
		int r = archive_read_next_header(ar, &ae);
		if (r == ARCHIVE_EOF)
			return 0;
		if (r < ARCHIVE_WARN)
			return ingot_fail(rd->e, -EINVAL, "%s: %s: %s", rd->a->name, what, archive_error_string(ar));
		if ((r = read_entry(rd, ar, ae)) < 0)
			return r;
	}
}

static struct archive *new_tar_reader(void)
{
	struct archive *ar = archive_read_new();
	if (!ar)
		return NULL;
	/* Only tar formats: a recipe saying "tar" must not accept a zip or cpio. */
	archive_read_support_filter_all(ar);
	archive_read_support_format_tar(ar);
	archive_read_support_format_gnutar(ar);
	return ar;
}

static int list_tar(struct reader *rd, const char *blob)
{
	_cleanup_archive_ struct archive *ar = new_tar_reader();
	if (!ar)
		return ingot_fail(rd->e, -ENOMEM, "out of memory");
	if (archive_read_open_filename(ar, blob, DATA_BUF) != ARCHIVE_OK)
		return ingot_fail(rd->e, -EINVAL, "%s: %s: %s", rd->a->name, rd->a->source, archive_error_string(ar));
	return read_archive(rd, ar, rd->a->source);
}

/* The inner data.tar.* of a .deb is read straight out of the outer ar
 * stream, without a temporary copy. */
struct ar_member {
	struct archive *outer;
	char *buf;
};

static la_ssize_t member_read(struct archive *inner, void *ctx, const void **buf)
{
	struct ar_member *m = ctx;
	la_ssize_t n = archive_read_data(m->outer, m->buf, DATA_BUF);
	(void)inner;
	*buf = m->buf;
	return n;
}

static int list_deb(struct reader *rd, const char *blob)
{
	_cleanup_archive_ struct archive *outer = archive_read_new();
	_cleanup_free_ char *mbuf = malloc(DATA_BUF);
	struct archive_entry *ae;
	bool first = true;
	int r;

	if (!outer || !mbuf)
		return ingot_fail(rd->e, -ENOMEM, "out of memory");
	archive_read_support_format_ar(outer);
	if (archive_read_open_filename(outer, blob, DATA_BUF) != ARCHIVE_OK)
		return ingot_fail(rd->e, -EINVAL, "%s: %s: expected a Debian package (ar archive), got: %s",
				  rd->a->name, rd->a->source, archive_error_string(outer));
	for (;;) {
		const char *name;
		r = archive_read_next_header(outer, &ae);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			return ingot_fail(rd->e, -EINVAL, "%s: %s: expected a Debian package (ar archive), got: %s",
					  rd->a->name, rd->a->source, archive_error_string(outer));
		name = archive_entry_pathname(ae);
		if (first) {
			char v[16] = { 0 };
			la_ssize_t n = archive_read_data(outer, v, sizeof(v) - 1);
			if (!name || strcmp(name, "debian-binary") || n < 4 || strncmp(v, "2.", 2))
				return ingot_fail(rd->e, -EINVAL, "%s: %s: expected a Debian package starting with debian-binary 2.x, got member '%s'",
						  rd->a->name, rd->a->source, name ? name : "?");
			first = false;
			continue;
		}
		if (name && !strncmp(name, "data.tar", 8)) {
			_cleanup_archive_ struct archive *inner = new_tar_reader();
			struct ar_member m = { .outer = outer, .buf = mbuf };
			_cleanup_free_ char *what = NULL;
			if (!inner || asprintf(&what, "%s: %s", rd->a->source, name) < 0)
				return ingot_fail(rd->e, -ENOMEM, "out of memory");
			if (archive_read_open(inner, &m, NULL, member_read, NULL) != ARCHIVE_OK)
				return ingot_fail(rd->e, -EINVAL, "%s: %s: %s", rd->a->name, what, archive_error_string(inner));
			return read_archive(rd, inner, what);
		}
	}
	return ingot_fail(rd->e, -EINVAL, "%s: %s: expected a Debian package with a data.tar member, got none",
			  rd->a->name, rd->a->source);
}

/* --- listing cache (unpacked/<sha>.json) --- */

static char *cache_path(const struct store *s, const struct artifact *a)
{
	char hex[SHA256_HEX_LEN + 1];
	char *p;
	hex_encode(a->sha256, 32, hex);
	if (asprintf(&p, "%s/unpacked/%s.json", s->root, hex) < 0)
		return NULL;
	return p;
}

static int cache_write(const struct store *s, const struct artifact *a, const struct tree *l, ingot_error *e)
{
	_cleanup_json_ json_t *root = json_object();
	_cleanup_free_ char *p = cache_path(s, a);
	json_t *arr = json_array();
	char hex[SHA256_HEX_LEN + 1];

	if (!root || !arr || !p) {
		json_decref(arr);
		return ingot_fail(e, -ENOMEM, "out of memory");
	}
	hex_encode(a->sha256, 32, hex);
	json_object_set_new(root, "schema", json_string(CACHE_SCHEMA));
	json_object_set_new(root, "artifact", json_string(hex));
	json_object_set_new(root, "kind", json_string(artifact_kind_name(a->kind)));
	json_object_set_new(root, "entries", arr);
	for (size_t i = 0; i < l->n; i++) {
		const struct tree_entry *x = &l->v[i];
		json_t *o = json_object();
		if (!o)
			return ingot_fail(e, -ENOMEM, "out of memory");
		json_object_set_new(o, "path", json_string(x->path));
		json_object_set_new(o, "type", json_string(tree_type_name(x->type)));
		json_object_set_new(o, "mode", json_integer(x->mode));
		if (x->type == TREE_FILE) {
			hex_encode(x->sha256, 32, hex);
			json_object_set_new(o, "size", json_integer((json_int_t)x->size));
			json_object_set_new(o, "sha256", json_string(hex));
		}
		if (x->target)
			json_object_set_new(o, "target", json_string(x->target));
		if (x->type == TREE_CHR || x->type == TREE_BLK) {
			json_object_set_new(o, "major", json_integer(x->rdev_major));
			json_object_set_new(o, "minor", json_integer(x->rdev_minor));
		}
		json_array_append_new(arr, o);
	}
	return json_write_file(p, root, 0644, e);
}

static int type_from_name(const char *s, enum tree_type *t)
{
	for (int i = TREE_DIR; i <= TREE_SOCK; i++)
		if (!strcmp(tree_type_name((enum tree_type)i), s)) {
			*t = (enum tree_type)i;
			return 0;
		}
	return -EINVAL;
}

/* Load a cached listing; any problem (missing, stale, damaged, blob
 * gone) returns < 0 and the artifact is simply unpacked again. */
static int cache_read(struct store *s, const struct artifact *a, struct tree *l, struct unpack_stats *st)
{
	_cleanup_free_ char *p = cache_path(s, a);
	_cleanup_json_ json_t *root = NULL;
	ingot_error e = { 0 };
	char hex[SHA256_HEX_LEN + 1];
	const char *str;
	json_t *arr, *o;
	size_t i;

	if (!p || json_read_file(p, &root, &e) < 0)
		return -ENOENT;
	hex_encode(a->sha256, 32, hex);
	if (json_get_str(root, "schema", "cache", &str, &e) < 0 || strcmp(str, CACHE_SCHEMA) ||
	    json_get_str(root, "artifact", "cache", &str, &e) < 0 || strcmp(str, hex) ||
	    json_get_str(root, "kind", "cache", &str, &e) < 0 || strcmp(str, artifact_kind_name(a->kind)) ||
	    json_get_arr(root, "entries", "cache", &arr, &e) < 0)
		return -EINVAL;
	json_array_foreach(arr, i, o) {
		struct tree_entry ent = { .origin = a->name };
		json_int_t mode = 0, v;
		const char *path, *type;
		if (json_get_str(o, "path", "entry", &path, &e) < 0 || json_get_str(o, "type", "entry", &type, &e) < 0 ||
		    json_get_int(o, "mode", "entry", &mode, &e) < 0 || type_from_name(type, &ent.type) < 0 ||
		    mode < 0 || mode > 07777)
			return -EINVAL;
		ent.path = (char *)path;
		ent.mode = (uint32_t)mode;
		if (ent.type == TREE_FILE) {
			if (json_get_int(o, "size", "entry", &v, &e) < 0 || v < 0 ||
			    json_get_str(o, "sha256", "entry", &str, &e) < 0 || !is_sha256_hex(str))
				return -EINVAL;
			ent.size = (uint64_t)v;
			hex_decode(str, ent.sha256, 32);
			if (!store_has_blob(s, ent.sha256))
				return -ENOENT;
			st->bytes += ent.size;
		}
		if (ent.type == TREE_SYMLINK) {
			if (json_get_str(o, "target", "entry", &str, &e) < 0)
				return -EINVAL;
			ent.target = (char *)str;
		}
		if (ent.type == TREE_CHR || ent.type == TREE_BLK) {
			json_int_t mj, mn;
			if (json_get_int(o, "major", "entry", &mj, &e) < 0 || json_get_int(o, "minor", "entry", &mn, &e) < 0 ||
			    mj < 0 || mn < 0 || mj > UINT32_MAX || mn > UINT32_MAX)
				return -EINVAL;
			ent.rdev_major = (uint32_t)mj;
			ent.rdev_minor = (uint32_t)mn;
		}
		if (tree_add(l, &ent, false, &e) < 0)
			return -EINVAL;
		st->entries++;
	}
	return 0;
}

int unpack_list(struct store *s, const struct artifact *a, struct tree *listing,
		struct unpack_stats *st, ingot_error *e)
{
	_cleanup_free_ char *blob = store_blob_path(s, a->sha256);
	_cleanup_free_ char *buf = NULL;
	struct reader rd = { .s = s, .a = a, .out = listing, .st = st, .e = e };
	int r;

	memset(st, 0, sizeof(*st));
	tree_init(listing);
	if (!blob)
		return ingot_fail(e, -ENOMEM, "out of memory");

	if (a->kind == ART_FILE) {
		struct stat sb;
		struct tree_entry ent = { .path = a->dest, .type = TREE_FILE, .mode = a->file_mode,
					  .origin = a->name };
		if (stat(blob, &sb) < 0)
			return ingot_fail(e, -errno, "%s: %s: %s", a->name, blob, strerror(errno));
		ent.size = (uint64_t)sb.st_size;
		memcpy(ent.sha256, a->sha256, 32);
		st->entries = 1;
		st->bytes = ent.size;
		return tree_add(listing, &ent, false, e);
	}

	if (cache_read(s, a, listing, st) == 0) {
		st->cached = true;
		return 0;
	}
	tree_free(listing);
	memset(st, 0, sizeof(*st));

	buf = malloc(DATA_BUF);
	if (!buf)
		return ingot_fail(e, -ENOMEM, "out of memory");
	rd.buf = buf;
	r = a->kind == ART_DEB ? list_deb(&rd, blob) : list_tar(&rd, blob);
	if (r < 0) {
		tree_free(listing);
		return r;
	}
	r = cache_write(s, a, listing, e);
	if (r < 0)
		tree_free(listing);
	return r;
}

bool unpack_glob_match(const char *pattern, const char *path)
{
	_cleanup_free_ char *p = strdup(path);
	char *slash;

	if (!p)
		return false;
	for (;;) {
		if (fnmatch(pattern, p, 0) == 0)
			return true;
		slash = strrchr(p, '/');
		if (!slash)
			return false;
		*slash = '\0';
	}
}

/* Refuse an entry whose parent (or any ancestor) is already in the tree
 * as something other than a directory, e.g. a symlink: writing through
 * it would put the file somewhere the recipe does not say. */
static int check_ancestors(const struct artifact *a, struct tree *t, const char *path, const char *raw, ingot_error *e)
{
	_cleanup_free_ char *p = strdup(path);
	char *slash;

	if (!p)
		return ingot_fail(e, -ENOMEM, "out of memory");
	while ((slash = strrchr(p, '/'))) {
		struct tree_entry *par;
		*slash = '\0';
		par = tree_find(t, p);
		if (!par)
			continue;
		if (par->type == TREE_DIR)
			return 0;
		return ingot_fail(e, -ENOTDIR, "%s: archive entry '%s': path goes through '/%s', which is a %s from '%s', not a directory",
				  a->name, raw, p, tree_type_name(par->type), par->origin);
	}
	return 0;
}

/* Strip n leading components; NULL when nothing is left. */
static const char *strip(const char *path, unsigned n)
{
	while (n--) {
		const char *s = strchr(path, '/');
		if (!s)
			return NULL;
		path = s + 1;
	}
	return path;
}

int unpack_apply(const struct artifact *a, const struct tree *listing, struct tree *t, ingot_error *e)
{
	for (size_t i = 0; i < listing->n; i++) {
		const struct tree_entry *src = &listing->v[i];
		struct tree_entry ent = *src;
		_cleanup_free_ char *img = NULL;
		const char *rel = src->path;
		struct tree_entry *old;
		ingot_error sub = { 0 };
		int r;

		if (a->kind != ART_FILE) {
			bool keep = a->n_include == 0;
			rel = strip(src->path, a->strip_components);
			if (!rel)
				continue;
			for (size_t j = 0; j < a->n_include && !keep; j++)
				keep = unpack_glob_match(a->include[j], rel);
			for (size_t j = 0; j < a->n_exclude && keep; j++)
				keep = !unpack_glob_match(a->exclude[j], rel);
			if (!keep)
				continue;
			img = a->dest && *a->dest ? path_join(a->dest, rel) : strdup(rel);
			if (!img)
				return ingot_fail(e, -ENOMEM, "out of memory");
			ent.path = img;
		}
		if ((ent.type == TREE_CHR || ent.type == TREE_BLK) && !a->allow_devices)
			return ingot_fail(e, -EPERM, "%s: archive entry '%s': expected no device nodes, got a %s device %u:%u (set 'allow-devices: true' to allow)",
					  a->name, src->path, ent.type == TREE_CHR ? "character" : "block",
					  ent.rdev_major, ent.rdev_minor);
		ent.uid = ent.gid = 0;
		ent.origin = (char *)a->name;
		for (size_t j = 0; j < a->n_modes; j++) {
			const struct mode_override *m = &a->modes[j];
			if (fnmatch(m->glob, ent.path, 0) != 0)
				continue;
			if (m->mode >= 0)
				ent.mode = (uint32_t)m->mode;
			if (m->uid >= 0)
				ent.uid = (uint32_t)m->uid;
			if (m->gid >= 0)
				ent.gid = (uint32_t)m->gid;
		}
		if ((r = check_ancestors(a, t, ent.path, src->path, e)) < 0)
			return r;
		old = tree_find(t, ent.path);
		if (old && old->origin && !strcmp(old->origin, a->name) &&
		    !(old->type == TREE_DIR && ent.type == TREE_DIR))
			return ingot_fail(e, -EEXIST, "%s: archive entry '%s': expected each image path once, got '/%s' twice (after strip-components)",
					  a->name, src->path, ent.path);
		if (tree_add(t, &ent, a->replace, &sub) < 0)
			return ingot_fail(e, sub.code, "%s", sub.msg);
	}
	return 0;
}
