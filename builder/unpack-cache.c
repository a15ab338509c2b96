/* The unpack listing cache (see unpack-cache.h). */
#include "builder/unpack-cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/escape.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/strbuf.h"

/* --- listing cache (unpacked/<sha>.json) --- */

static uint64_t mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
}

/* entries[]: one object per listing entry (json_splice's next). */
struct cache_entries {
	const struct tree *l;
	size_t i;
};

static int cache_entry_next(void *ctx, json_t **elem, ingot_error *e)
{
	struct cache_entries *c = ctx;
	const struct tree_entry *x;
	char hex[SHA256_HEX_LEN + 1];
	json_t *o;
	int bad;

	*elem = NULL;
	if (c->i >= c->l->n)
		return 0;
	x = &c->l->v[c->i++];
	if (!(o = json_object()))
		return ingot_fail(e, -ENOMEM, "out of memory");
	bad = json_object_set_new(o, "path", json_string(x->path)) |
	      json_object_set_new(o, "type", json_string(tree_type_name(x->type))) |
	      json_object_set_new(o, "mode", json_integer(x->mode));
	if (x->type == TREE_FILE) {
		hex_encode(x->sha256, 32, hex);
		bad |= json_object_set_new(o, "size", json_integer((json_int_t)x->size)) |
		       json_object_set_new(o, "sha256", json_string(hex)) |
		       json_object_set_new(o, "offset", json_integer((json_int_t)x->loc.off));
	}
	if (x->target)
		bad |= json_object_set_new(o, "target", json_string(x->target));
	if (x->type == TREE_CHR || x->type == TREE_BLK)
		bad |= json_object_set_new(o, "major", json_integer(x->rdev_major)) |
		       json_object_set_new(o, "minor", json_integer(x->rdev_minor));
	if (bad) {
		json_decref(o);
		return ingot_fail(e, -ENOMEM, "out of memory");
	}
	*elem = o;
	return 0;
}

/* JSON Lines: a header, then an entry a line, written and read an entry
 * at a time: as one tree, a listing of 50,000 files was most of a
 * build's peak memory. */
int unpack_cache_write(const struct store *s, const struct artifact *a, const struct tree *l,
		       uint64_t pack_size, const struct stat *src, const struct unpack_stats *st,
		       ingot_error *e)
{
	_cleanup_json_ json_t *root = json_object();
	_cleanup_free_ char *p = store_unpacked_path(s, a->sha256, ".jsonl");
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	struct cache_entries ce = { l, 0 };
	char hex[SHA256_HEX_LEN + 1];
	json_t *o;
	int r;

	if (!root || !p)
		return ingot_fail(e, -ENOMEM, "out of memory");
	hex_encode(a->sha256, 32, hex);
	json_object_set_new(root, "schema", json_string(UNPACK_CACHE_SCHEMA));
	json_object_set_new(root, "artifact", json_string(hex));
	json_object_set_new(root, "kind", json_string(artifact_kind_name(a->kind)));
	json_object_set_new(root, "artifact-size", json_integer((json_int_t)st->artifact_bytes));
	json_object_set_new(root, "pack-size", json_integer((json_int_t)pack_size));
	/* what the pin was last checked against: an unchanged source is not
	 * hashed again (like git's index) */
	json_object_set_new(root, "source-mtime-ns",
			    json_integer((json_int_t)mtime_ns(src)));
	json_object_set_new(root, "source-ino", json_integer((json_int_t)src->st_ino));
	if (a->kind == ART_DEB) {
		json_object_set_new(root, "deb-version", json_string(st->deb_version));
		json_object_set_new(root, "deb-package", json_string(st->deb_package));
		json_object_set_new(root, "deb-arch", json_string(st->deb_arch));
		json_object_set_new(root, "deb-maintainer", json_string(st->deb_maintainer));
	}
	json_object_set_new(root, "entries", json_integer((json_int_t)l->n));
	for (o = json_incref(root); o; ) {
		_cleanup_free_ char *line = json_dumps(o, JSON_COMPACT_FLAGS);
		json_decref(o);
		if (!line)
			return ingot_fail(e, -ENOMEM, "out of memory");
		strbuf_addstr(&text, line);
		strbuf_addch(&text, '\n');
		if ((r = cache_entry_next(&ce, &o, e)) < 0)
			return r;
	}
	return store_write_file(s, p, text.buf, text.len, e);
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

int unpack_file_size(const char *path, uint64_t *size)
{
	struct stat sb;
	if (!path || stat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
		return -ENOENT;
	*size = (uint64_t)sb.st_size;
	return 0;
}


/* Load a cached listing; any problem (missing, stale, damaged, pack
 * gone or short) returns < 0 and the artifact is simply unpacked again. */
/* A string the listing carries for the SBOM ("" allowed). */
static int cache_label(const json_t *root, const char *key, char *out, size_t max)
{
	const char *str;
	ingot_error e = { 0 };

	if (json_get_str(root, key, "cache", &str, &e) < 0 || strlen(str) >= max)
		return -EINVAL;
	strcpy(out, str);
	return 0;
}

int unpack_cache_read(const struct store *s, const struct artifact *a, struct tree *l,
		      struct unpack_stats *st, struct unpack_cache_meta *cm)
{
	_cleanup_free_ char *p = store_unpacked_path(s, a->sha256, ".jsonl");
	_cleanup_free_ char *pack = store_unpacked_path(s, a->sha256, ".pack");
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *root = NULL;
	ingot_error e = { 0 };
	char hex[SHA256_HEX_LEN + 1];
	const char *str;
	json_int_t asz, psz, mt, ino, n;
	uint64_t have;
	size_t len, pos = 0;

	if (!p || read_file(p, INGOT_JSON_MAX, &buf, &len, &e) < 0 ||
	    json_read_line(p, buf, len, &pos, &root, &e) < 0)
		return -ENOENT;
	hex_encode(a->sha256, 32, hex);
	if (json_get_str(root, "schema", "cache", &str, &e) < 0 || strcmp(str, UNPACK_CACHE_SCHEMA) ||
	    json_get_str(root, "artifact", "cache", &str, &e) < 0 || strcmp(str, hex) ||
	    json_get_str(root, "kind", "cache", &str, &e) < 0 || strcmp(str, artifact_kind_name(a->kind)) ||
	    json_get_int(root, "artifact-size", "cache", &asz, &e) < 0 || asz < 0 ||
	    json_get_int(root, "pack-size", "cache", &psz, &e) < 0 || psz < 0 ||
	    json_get_int(root, "source-mtime-ns", "cache", &mt, &e) < 0 ||
	    json_get_int(root, "source-ino", "cache", &ino, &e) < 0 ||
	    json_get_int(root, "entries", "cache", &n, &e) < 0 || n < 0)
		return -EINVAL;
	if (unpack_file_size(pack, &have) < 0 || have != (uint64_t)psz)
		return -ENOENT;
	if (a->kind == ART_DEB) {
		if (json_get_str(root, "deb-version", "cache", &str, &e) < 0 || !*str ||
		    strlen(str) >= sizeof(st->deb_version))
			return -EINVAL;
		strcpy(st->deb_version, str);
		if (cache_label(root, "deb-package", st->deb_package, sizeof(st->deb_package)) < 0 ||
		    cache_label(root, "deb-arch", st->deb_arch, sizeof(st->deb_arch)) < 0 ||
		    cache_label(root, "deb-maintainer", st->deb_maintainer, sizeof(st->deb_maintainer)) < 0)
			return -EINVAL;
	}
	st->artifact_bytes = (uint64_t)asz;
	cm->mtime_ns = (uint64_t)mt;
	cm->ino = (uint64_t)ino;
	for (json_int_t i = 0; i < n; i++) {
		_cleanup_json_ json_t *o = NULL;
		struct tree_entry ent = { .origin = a->name };
		json_int_t mode = 0, v, off;
		const char *path, *type;
		if (json_read_line(p, buf, len, &pos, &o, &e) < 0 ||
		    json_get_str(o, "path", "entry", &path, &e) < 0 || json_get_str(o, "type", "entry", &type, &e) < 0 ||
		    json_get_int(o, "mode", "entry", &mode, &e) < 0 || type_from_name(type, &ent.type) < 0 ||
		    mode < 0 || mode > 07777)
			return -EINVAL;
		ent.path = (char *)path;
		ent.mode = (uint32_t)mode;
		if (ent.type == TREE_FILE) {
			if (json_get_int(o, "size", "entry", &v, &e) < 0 || v < 0 ||
			    json_get_int(o, "offset", "entry", &off, &e) < 0 || off < 0 || off > psz || v > psz - off ||
			    json_get_str(o, "sha256", "entry", &str, &e) < 0 || !is_sha256_hex(str))
				return -EINVAL;
			ent.size = (uint64_t)v;
			hex_decode(str, ent.sha256, 32);
			ent.loc.packed = true;
			memcpy(ent.loc.pack, a->sha256, 32);
			ent.loc.off = (uint64_t)off;
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
	/* The count in the header and the lines agree, to the last byte. */
	return pos == len ? 0 : -EINVAL;
}

/* A cached artifact whose source is still there must still match its pin,
 * so an edited file is reported rather than shadowed by the cache; the
 * hash is skipped while the file is the one checked last time.  A source
 * that is gone is fine (offline rebuild from the store). */
int unpack_cache_check_source(const struct artifact *a, const struct unpack_stats *st,
			       const struct unpack_cache_meta *cm, ingot_error *e)
{
	struct stat sb;

	if (stat(a->path, &sb) < 0)
		return errno == ENOENT ? 0 : ingot_fail(e, -errno, "%s: %s: %s", a->name, a->path, strerror(errno));
	if ((uint64_t)sb.st_size == st->artifact_bytes && (uint64_t)sb.st_ino == cm->ino &&
	    mtime_ns(&sb) == cm->mtime_ns)
		return 0;
	return store_check_source(a->name, a->path, a->sha256, e);
}

