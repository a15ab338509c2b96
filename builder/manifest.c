#include "builder/manifest.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "attest/predict.h"
#include "builder/image.h"
#include "recipes/recipe.h"
#include "builder/tree.h"
#include "lib/meta.h"
#include "lib/cleanup.h"
#include "lib/str.h"
#include "lib/xalloc.h"
#include "lib/digest.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/time.h"
#include "recipes/tuple.h"

static const char *kind_name(enum artifact_kind k)
{
	switch (k) {
	case ART_TAR: return "tar";
	case ART_DEB: return "deb";
	case ART_FILE: return "file";
	}
	return "?";
}

static json_t *hex_json(const uint8_t *b, size_t n)
{
	char hex[2 * 64 + 1];
	if (n > 64)
		return NULL;
	hex_encode(b, n, hex);
	return json_string(hex);
}

/* jansson integers are signed 64-bit; every count we store fits, but say
 * so instead of wrapping if one ever does not. */
static int set_u64(json_t *o, const char *key, uint64_t v, const char *what, ingot_error *e)
{
	if (v > (uint64_t)INT64_MAX)
		return ingot_fail(e, -ERANGE, "%s: %s: %" PRIu64 " does not fit in JSON", what, key, v);
	if (json_object_set_new(o, key, json_integer((json_int_t)v)) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	return 0;
}

static int set_new(json_t *o, const char *key, json_t *v, ingot_error *e)
{
	if (!v || json_object_set_new(o, key, v) < 0)
		return ingot_fail(e, -ENOMEM, "manifest: out of memory building '%s'", key);
	return 0;
}

static json_t *file_entry(const struct tree_entry *te, ingot_error *e)
{
	_cleanup_json_ json_t *f = json_object();
	_cleanup_free_ char *path = xasprintf("/%s", te->path);
	char mode[8];

	if (!f) {
		ingot_fail(e, -ENOMEM, "out of memory");
		return NULL;
	}
	snprintf(mode, sizeof(mode), "%04o", te->mode & 07777);
	if (set_new(f, "path", json_string(path), e) < 0 ||
	    set_new(f, "type", json_string(tree_type_name(te->type)), e) < 0 ||
	    set_new(f, "mode", json_string(mode), e) < 0 ||
	    set_u64(f, "uid", te->uid, path, e) < 0 ||
	    set_u64(f, "gid", te->gid, path, e) < 0)
		return NULL;
	switch (te->type) {
	case TREE_FILE:
		if (set_u64(f, "size", te->size, path, e) < 0 ||
		    set_new(f, "sha256", hex_json(te->sha256, 32), e) < 0)
			return NULL;
		break;
	case TREE_SYMLINK:
		if (!te->target) {
			ingot_fail(e, -EINVAL, "manifest: %s: symlink without a target", path);
			return NULL;
		}
		if (set_new(f, "target", json_string(te->target), e) < 0)
			return NULL;
		break;
	case TREE_CHR:
	case TREE_BLK:
		if (set_u64(f, "major", te->rdev_major, path, e) < 0 ||
		    set_u64(f, "minor", te->rdev_minor, path, e) < 0)
			return NULL;
		break;
	default:
		break;
	}
	return TAKE_PTR(f);
}

void manifest_files_init(struct manifest_files *f, const struct tree *t, bool check)
{
	*f = (struct manifest_files){ .t = t, .check = check };
	strbuf_init(&f->prev, 0);
}

void manifest_files_release(struct manifest_files *f)
{
	strbuf_release(&f->prev);
}

int manifest_files_next(void *ctx, json_t **elem, ingot_error *e)
{
	struct manifest_files *f = ctx;
	const struct tree *t = f->t;
	size_t i = f->i;
	_cleanup_json_ json_t *j = NULL;
	int r;

	*elem = NULL;
	if (i >= t->n)
		return 0;
	/* The manifest lists files in byte order of their path, as the image
	 * writer does; an unsorted tree is a caller bug. */
	if (i > 0 && strcmp(t->v[i - 1].path, t->v[i].path) >= 0)
		return ingot_fail(e, -EINVAL, "manifest: tree not finalized: '%s' before '%s'",
				  t->v[i - 1].path, t->v[i].path);
	if (!(j = file_entry(&t->v[i], e)))
		return e && e->code ? e->code : -ENOMEM;
	if (f->check) {
		if ((r = manifest_check_file("manifest", i, j, i ? f->prev.buf : NULL, e)) < 0)
			return ingot_prefix(e, "manifest_build produced an invalid manifest");
		strbuf_reset(&f->prev);
		strbuf_addstr(&f->prev, json_string_value(json_object_get(j, "path")));
	}
	f->i++;
	*elem = TAKE_PTR(j);
	return 0;
}

static int build_artifacts(const struct recipe *r, const uint64_t *sizes, json_t *m, ingot_error *e)
{
	json_t *arts = json_array();
	if (set_new(m, "artifacts", arts, e) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_artifacts; i++) {
		const struct artifact *a = &r->artifacts[i];
		struct stat st;
		json_t *o = json_object();

		if (json_array_append_new(arts, o) < 0 || !o)
			return ingot_fail(e, -ENOMEM, "out of memory");
		if (sizes)
			st.st_size = (off_t)sizes[i];
		else if (stat(a->path, &st) < 0)
			return ingot_fail(e, -errno, "manifest: artifact '%s': %s: cannot stat: %s",
					  a->name, a->path, strerror(errno));
		if (set_new(o, "name", json_string(a->name), e) < 0 ||
		    set_new(o, "kind", json_string(kind_name(a->kind)), e) < 0 ||
		    set_new(o, "source", json_string(base_name(a->source)), e) < 0 ||
		    set_new(o, "sha256", hex_json(a->sha256, 32), e) < 0 ||
		    set_u64(o, "size", (uint64_t)st.st_size, a->name, e) < 0)
			return e && e->code ? e->code : -ENOMEM;
	}
	return 0;
}

static void uuid_str(const uint8_t u[16], char out[37])
{
	static const int groups[] = { 4, 2, 2, 2, 6 };
	char *p = out;
	const uint8_t *b = u;
	for (size_t g = 0; g < ARRAY_SIZE(groups); g++) {
		if (g)
			*p++ = '-';
		hex_encode(b, (size_t)groups[g], p);
		p += 2 * groups[g];
		b += groups[g];
	}
	*p = '\0';
}

int manifest_build(const struct recipe *r, const struct tree *t, const struct image_opts *io,
		   const struct image_info *ii, const struct verity_info *vi, json_t **out,
		   ingot_error *e)
{
	return manifest_build_sized(r, NULL, t, io, ii, vi, out, e);
}

int manifest_build_head(const struct recipe *r, const uint64_t *sizes, const struct image_opts *io,
			const struct image_info *ii, const struct verity_info *vi, json_t **out, ingot_error *e)
{
	_cleanup_json_ json_t *m = json_object();
	_cleanup_free_ char *img_file = NULL, *ver_file = NULL;
	json_t *o;
	char uuid[37];
	time_t exp;
	int rc;

	if (!m)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (vi->salt_len > 32)
		return ingot_fail(e, -EINVAL, "manifest: verity salt of %u bytes, limit 32", vi->salt_len);
	if (ii->size != vi->image_size)
		return ingot_fail(e, -EINVAL, "manifest: image size %" PRIu64 " but verity hashed %" PRIu64
				  " bytes", ii->size, vi->image_size);
	if (r->expires && time_parse(r->expires, &exp) < 0)
		return ingot_fail(e, -EINVAL, "manifest: expires: expected RFC 3339 time, got \"%s\"",
				  r->expires);
	img_file = xasprintf("%s.sqfs", r->name);
	ver_file = xasprintf("%s.verity", r->name);

	if ((rc = set_new(m, "schema", json_string(MANIFEST_SCHEMA_V1), e)) < 0 ||
	    (rc = set_new(m, "ingot_version", json_string(INGOT_VERSION), e)) < 0)
		return rc;
	o = json_pack("{s:s,s:s,s:s}", "name", r->name, "version", r->version ? r->version : "",
		      "file", base_name(r->file));
	if ((rc = set_new(m, "recipe", o, e)) < 0 ||
	    (rc = set_new(o, "sha256", hex_json(r->file_sha256, 32), e)) < 0 ||
	    (rc = set_u64(m, "epoch", r->epoch, "manifest", e)) < 0 ||
	    (rc = set_u64(m, "serial", r->serial, "manifest", e)) < 0 ||
	    (rc = set_new(m, "expires", r->expires ? json_string(r->expires) : json_null(), e)) < 0 ||
	    (rc = set_new(m, "tuple", r->tuple ? tuple_to_json(r->tuple) : json_null(), e)) < 0 ||
	    (rc = build_artifacts(r, sizes, m, e)) < 0 ||
	    (rc = set_new(m, "files", json_splice_mark(0), e)) < 0)
		return rc;

	o = json_pack("{s:s,s:s,s:I}", "file", img_file, "compression",
		      io->compression ? io->compression : "", "level", (json_int_t)io->level);
	if ((rc = set_new(m, "image", o, e)) < 0 ||
	    (rc = set_new(o, "sha256", hex_json(vi->image_sha256, 32), e)) < 0 ||
	    (rc = set_u64(o, "size", vi->image_size, "image", e)) < 0 ||
	    (rc = set_u64(o, "block_size", io->block_size, "image", e)) < 0)
		return rc;

	uuid_str(vi->uuid, uuid);
	o = json_pack("{s:s,s:i,s:s,s:s}", "file", ver_file, "format", 1, "hash_algorithm", "sha256",
		      "uuid", uuid);
	if ((rc = set_new(m, "verity", o, e)) < 0 ||
	    (rc = set_u64(o, "data_block_size", vi->data_block_size, "verity", e)) < 0 ||
	    (rc = set_u64(o, "hash_block_size", vi->hash_block_size, "verity", e)) < 0 ||
	    (rc = set_u64(o, "data_blocks", vi->data_blocks, "verity", e)) < 0 ||
	    (rc = set_u64(o, "hash_offset", vi->hash_offset, "verity", e)) < 0 ||
	    (rc = set_new(o, "salt", hex_json(vi->salt, vi->salt_len), e)) < 0 ||
	    (rc = set_new(o, "root_hash", hex_json(vi->root_hash, 32), e)) < 0)
		return rc;
	*out = TAKE_PTR(m);
	return 0;
}

int manifest_seal(json_t *m, const char *name, const struct verity_info *vi, const struct tree *t,
		  size_t *compact, ingot_error *e)
{
	struct manifest_files f;
	struct json_splice sp = { manifest_files_next, &f };
	_cleanup_free_ char *mc = NULL;
	json_t *meas;
	uint8_t content[32];
	size_t len = 0;
	int rc;

	/* The measurement binds the rest of the manifest (content digest),
	 * so it is computed last, over everything else.  This pass also
	 * checks each files[] entry as a reader will. */
	manifest_files_init(&f, t, true);
	rc = attest_content_digest_spliced(m, &sp, 1, content, &len, e);
	manifest_files_release(&f);
	if (rc < 0)
		return rc;
	meas = attest_predict_measurement(name, vi->image_sha256, vi->root_hash, content, ATTEST_DEFAULT_PCR);
	if (!meas)
		return ingot_fail(e, -EINVAL, "manifest: recipe name \"%s\" cannot be measured "
				  "(1..255 printable characters, no spaces)", name);
	if ((rc = set_new(m, "measurement", meas, e)) < 0)
		return rc;
	if ((rc = manifest_check_head("manifest", m, e)) < 0)
		return ingot_prefix(e, "manifest_build produced an invalid manifest");
	/* The compact bytes with the measurement: one more member of a
	 * non-empty object adds its own compact bytes and a comma. */
	if (!(mc = json_compact(json_object_get(m, "measurement"), NULL)))
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (compact)
		*compact = len + strlen("\"measurement\":") + strlen(mc) + 1;
	return 0;
}

int manifest_build_sized(const struct recipe *r, const uint64_t *sizes, const struct tree *t,
			 const struct image_opts *io, const struct image_info *ii,
			 const struct verity_info *vi, json_t **out, ingot_error *e)
{
	_cleanup_json_ json_t *m = NULL, *files = json_array();
	struct manifest_files f;
	json_t *el;
	int rc;

	if (!files)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if ((rc = manifest_build_head(r, sizes, io, ii, vi, &m, e)) < 0 ||
	    (rc = manifest_seal(m, r->name, vi, t, NULL, e)) < 0)
		return rc;
	/* The whole tree: the entries the seal checked, in order. */
	manifest_files_init(&f, t, false);
	while ((rc = manifest_files_next(&f, &el, e)) == 0 && el)
		if (json_array_append_new(files, el) < 0) {
			rc = ingot_fail(e, -ENOMEM, "out of memory");
			break;
		}
	manifest_files_release(&f);
	if (rc < 0 || (rc = set_new(m, "files", TAKE_PTR(files), e)) < 0)
		return rc;
	rc = manifest_check_size(m, &MANIFEST_LIMITS, e);
	if (rc < 0)
		return ingot_prefix(e, "%s", r->name);
	*out = TAKE_PTR(m);
	return 0;
}
