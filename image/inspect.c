/* Image listing through libsquashfs' reader: superblock, compressor
 * options, id table, fragment table, then the whole directory hierarchy
 * (metadata only) and a streaming read of each file's data. */
#include "image/inspect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>
#include <sqfs/compressor.h>
#include <sqfs/data_reader.h>
#include <sqfs/dir_reader.h>
#include <sqfs/error.h>
#include <sqfs/id_table.h>
#include <sqfs/inode.h>
#include <sqfs/io.h>
#include <sqfs/meta_reader.h>
#include <sqfs/super.h>

#include "image/sqfs-io.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/le.h"
#include "lib/xalloc.h"

struct entries {
	struct image_entry *v;
	size_t n, alloc;
};

struct reader {
	const char *name;
	sqfs_file_t *file;
	sqfs_super_t super;
	sqfs_compressor_t *cmp;
	sqfs_id_table_t *ids;
	sqfs_dir_reader_t *dr;
	sqfs_data_reader_t *data;
	sqfs_tree_node_t *root;
	uint8_t *buf;
	EVP_MD_CTX *md;
	struct entries ents;
};

static int rfail(struct reader *rd, int code, const char *what, ingot_error *e)
{
	return ingot_fail(e, sqfs_to_errno(code), "%s: %s: %s", rd->name, what,
			  sqfs_strerror(code));
}

static void entries_free(struct entries *es)
{
	for (size_t i = 0; i < es->n; i++) {
		free((char *)es->v[i].path);
		free((char *)es->v[i].target);
	}
	free(es->v);
	memset(es, 0, sizeof(*es));
}

static void reader_free(struct reader *rd)
{
	sqfs_dir_tree_destroy(rd->root);
	sqfs_destroy(rd->data);
	sqfs_destroy(rd->dr);
	sqfs_destroy(rd->ids);
	sqfs_destroy(rd->cmp);
	sqfs_destroy(rd->file);
	EVP_MD_CTX_free(rd->md);
	free(rd->buf);
	entries_free(&rd->ents);
}

/* Metadata blocks: at most 8 KiB of data behind a 2-byte header, and a
 * table's index is a list of 8-byte block positions. */
#define META_BLOCK 8192u
#define META_MIN 3u

static uint64_t index_bytes(uint64_t table_bytes)
{
	return (table_bytes + META_BLOCK - 1) / META_BLOCK * 8;
}

/* Cross-check the superblock before any table is read, so every table
 * size is bounded by the image's size: a corrupted count must not become
 * a huge allocation (a fragment count of 2^31 asked for 36 GB). */
static int check_super(struct reader *rd, ingot_error *e)
{
	const sqfs_super_t *s = &rd->super;
	uint64_t end = s->bytes_used;
	const char *bad = NULL;

	if (s->inode_table_start < sizeof(sqfs_super_t) || s->inode_table_start >= s->directory_table_start ||
	    s->directory_table_start >= end)
		bad = "inode and directory tables out of order or beyond the image";
	else if ((uint64_t)s->inode_count * 16 / META_BLOCK >
		 (s->directory_table_start - s->inode_table_start) / META_MIN)
		bad = "inode count larger than the inode table can hold";
	else if (s->id_count == 0 || s->id_table_start >= end ||
		 index_bytes((uint64_t)s->id_count * 4) > end - s->id_table_start)
		bad = "id table beyond the image";
	else if (s->fragment_entry_count > s->inode_count ||
		 (s->fragment_entry_count &&
		  (s->fragment_table_start >= end ||
		   index_bytes((uint64_t)s->fragment_entry_count * 16) > end - s->fragment_table_start)))
		bad = "fragment table larger than the image or than the inode count";
	else if ((s->flags & SQFS_FLAG_EXPORTABLE) && s->export_table_start != UINT64_MAX &&
		 (s->export_table_start >= end ||
		  index_bytes((uint64_t)s->inode_count * 8) > end - s->export_table_start))
		bad = "export table beyond the image";
	else if (s->xattr_id_table_start != UINT64_MAX && s->xattr_id_table_start >= end)
		bad = "xattr table beyond the image";
	if (bad)
		return ingot_fail(e, -EBADMSG, "%s: corrupted superblock: %s", rd->name, bad);
	return 0;
}

/* Skip n bytes of the inode table: they must be there. */
static int skip(sqfs_meta_reader_t *m, uint64_t n)
{
	uint8_t buf[4096];
	int r = 0;

	while (n && !r) {
		size_t k = n < sizeof(buf) ? (size_t)n : sizeof(buf);
		r = sqfs_meta_reader_read(m, buf, k);
		n -= k;
	}
	return r;
}

/* Walk the inode table's inodes by their headers, before libsquashfs
 * decodes any: it allocates a file's block list (size / block size
 * entries) before reading it, so a corrupted size asked for gigabytes.
 * Here every variable part must really be in the table, read in small
 * steps, or the image is refused.  Layouts: squashfs 4.0 inode types. */
static int check_inode_table(struct reader *rd, ingot_error *e)
{
	/* bytes after the 16-byte common header, before the variable part */
	static const uint8_t fixed[] = { [1] = 16, [2] = 16, [3] = 8, [4] = 8, [5] = 8, [6] = 4,
					 [7] = 4, [8] = 24, [9] = 40, [10] = 8, [11] = 12, [12] = 12,
					 [13] = 8, [14] = 8 };
	const sqfs_super_t *s = &rd->super;
	sqfs_meta_reader_t *m = sqfs_meta_reader_create(rd->file, rd->cmp, s->inode_table_start,
							  s->directory_table_start);
	uint8_t h[16 + 40];
	int r = 0;

	if (!m)
		return ingot_fail(e, -ENOMEM, "%s: out of memory", rd->name);
	r = sqfs_meta_reader_seek(m, s->inode_table_start, 0);
	for (uint32_t i = 0; i < s->inode_count && !r; i++) {
		uint16_t type;
		uint64_t more = 0, size = 0, blocks;
		uint32_t frag = 0;

		if ((r = sqfs_meta_reader_read(m, h, 16)))
			break;
		type = (uint16_t)le_get(h, 2);
		if (type < 1 || type > 14) {
			sqfs_destroy(m);
			return ingot_fail(e, -EBADMSG, "%s: corrupted inode table: inode %u: type %u, expected 1..14",
					  rd->name, i + 1, type);
		}
		if ((r = sqfs_meta_reader_read(m, h + 16, fixed[type])))
			break;
		switch (type) {
		case 2:   /* file: u32 size at 28, fragment index at 20 */
		case 9:   /* extended file: u64 size at 24, fragment index at 44 */
			size = type == 2 ? (uint32_t)le_get(h + 28, 4) : le_get(h + 24, 8);
			frag = (uint32_t)le_get(type == 2 ? h + 20 : h + 44, 4);
			blocks = size / s->block_size + (frag == 0xFFFFFFFFu && size % s->block_size);
			more = blocks * 4;
			break;
		case 3: case 10:   /* symlink target (+ xattr index) */
			more = le_get(h + 20, 4) + (type == 10 ? 4 : 0);
			break;
		case 8: {   /* extended dir: index entries {u32, u32, u32 name_size, name} */
			uint16_t n = (uint16_t)le_get(h + 32, 2);
			for (uint16_t k = 0; k < n && !r; k++) {
				uint8_t ix[12];
				if (!(r = sqfs_meta_reader_read(m, ix, sizeof(ix))))
					r = skip(m, (uint64_t)(uint32_t)le_get(ix + 8, 4) + 1);
			}
			break;
		}
		}
		if (!r)
			r = skip(m, more);
	}
	sqfs_destroy(m);
	if (r == SQFS_ERROR_OUT_OF_BOUNDS)
		return ingot_fail(e, -EBADMSG, "%s: corrupted inode table: an inode's sizes run past the table",
				  rd->name);
	if (r)
		return ingot_fail(e, sqfs_to_errno(r), "%s: corrupted inode table: %s", rd->name, sqfs_strerror(r));
	return 0;
}

static int open_image(struct reader *rd, ingot_error *e)
{
	sqfs_compressor_config_t cfg;
	uint64_t size;
	int r;

	/* libsquashfs opens by name, blocking: a FIFO is refused first */
	{
		_cleanup_close_ int fd = open_regular(rd->name, 0, NULL, e);
		if (fd < 0)
			return fd;
	}
	errno = 0;
	rd->file = sqfs_open_file(rd->name, SQFS_FILE_OPEN_READ_ONLY);
	if (!rd->file)
		return ingot_fail(e, errno ? -errno : -EIO, "%s: cannot open: %s", rd->name,
				  errno ? strerror(errno) : "unknown error");
	size = rd->file->get_size(rd->file);
	if (size < sizeof(sqfs_super_t))
		return ingot_fail(e, -EBADMSG, "%s: expected a squashfs image, got %llu bytes "
				  "(shorter than a superblock)", rd->name, (unsigned long long)size);
	r = sqfs_super_read(&rd->super, rd->file);
	if (r)
		return rfail(rd, r, "superblock", e);
	if (rd->super.bytes_used > size)
		return ingot_fail(e, -EBADMSG, "%s: truncated: superblock says %llu bytes, "
				  "file has %llu", rd->name,
				  (unsigned long long)rd->super.bytes_used, (unsigned long long)size);
	if ((r = check_super(rd, e)) < 0)
		return r;
	r = sqfs_compressor_config_init(&cfg, (SQFS_COMPRESSOR)rd->super.compression_id,
					rd->super.block_size, SQFS_COMP_FLAG_UNCOMPRESS);
	if (r == 0)
		r = sqfs_compressor_create(&cfg, &rd->cmp);
	if (r)
		return rfail(rd, r, "compressor", e);
	if (rd->super.flags & SQFS_FLAG_COMPRESSOR_OPTIONS) {
		r = rd->cmp->read_options(rd->cmp, rd->file);
		if (r)
			return rfail(rd, r, "compressor options", e);
	}
	rd->ids = sqfs_id_table_create(0);
	if (!rd->ids)
		return ingot_fail(e, -ENOMEM, "%s: out of memory", rd->name);
	r = sqfs_id_table_read(rd->ids, rd->file, &rd->super, rd->cmp);
	if (r)
		return rfail(rd, r, "id table", e);
	rd->dr = sqfs_dir_reader_create(&rd->super, rd->cmp, rd->file, 0);
	rd->data = sqfs_data_reader_create(rd->file, rd->super.block_size, rd->cmp, 0);
	rd->buf = xmalloc(rd->super.block_size);
	rd->md = EVP_MD_CTX_new();
	if (!rd->dr || !rd->data || !rd->md)
		return ingot_fail(e, -ENOMEM, "%s: out of memory", rd->name);
	r = sqfs_data_reader_load_fragment_table(rd->data, &rd->super);
	if (r)
		return rfail(rd, r, "fragment table", e);
	if ((r = check_inode_table(rd, e)) < 0)
		return r;
	r = sqfs_dir_reader_get_full_hierarchy(rd->dr, rd->ids, NULL, 0, &rd->root);
	if (r)
		return rfail(rd, r, "reading directory tree", e);
	return 0;
}

static int hash_file(struct reader *rd, const char *path, const sqfs_inode_generic_t *in,
		     struct image_entry *ent, ingot_error *e)
{
	sqfs_u64 size, off = 0;

	sqfs_inode_get_file_size(in, &size);
	if (!EVP_DigestInit_ex(rd->md, EVP_sha256(), NULL))
		return ingot_fail(e, -EIO, "%s: sha256 init failed", rd->name);
	while (off < size) {
		sqfs_u32 want = size - off < rd->super.block_size ? (sqfs_u32)(size - off)
								   : rd->super.block_size;
		sqfs_s32 n = sqfs_data_reader_read(rd->data, in, off, rd->buf, want);
		if (n < 0)
			return ingot_fail(e, sqfs_to_errno(n), "%s: %s: reading data at offset "
					  "%llu: %s", rd->name, path, (unsigned long long)off,
					  sqfs_strerror(n));
		if (n == 0)
			return ingot_fail(e, -EBADMSG, "%s: %s: data ends at %llu of %llu bytes",
					  rd->name, path, (unsigned long long)off,
					  (unsigned long long)size);
		EVP_DigestUpdate(rd->md, rd->buf, (size_t)n);
		off += (sqfs_u64)n;
	}
	EVP_DigestFinal_ex(rd->md, ent->sha256, NULL);
	ent->size = size;
	return 0;
}

static int fill_entry(struct reader *rd, const sqfs_tree_node_t *node, char *path,
		      struct image_entry *ent, ingot_error *e)
{
	const sqfs_inode_generic_t *in = node->inode;
	uint32_t devno = 0;

	memset(ent, 0, sizeof(*ent));
	ent->path = path;
	ent->mode = in->base.mode & 07777;
	ent->uid = node->uid;
	ent->gid = node->gid;
	ent->mtime = in->base.mod_time;
	switch (in->base.type) {
	case SQFS_INODE_DIR: ent->type = TREE_DIR; ent->nlink = in->data.dir.nlink; break;
	case SQFS_INODE_EXT_DIR: ent->type = TREE_DIR; ent->nlink = in->data.dir_ext.nlink; break;
	case SQFS_INODE_FILE: ent->type = TREE_FILE; ent->nlink = 1; break;
	case SQFS_INODE_EXT_FILE: ent->type = TREE_FILE; ent->nlink = in->data.file_ext.nlink; break;
	case SQFS_INODE_SLINK: case SQFS_INODE_EXT_SLINK:
		ent->type = TREE_SYMLINK;
		ent->nlink = in->data.slink.nlink;
		ent->target = xstrndup((const char *)in->extra, in->data.slink.target_size);
		break;
	case SQFS_INODE_CDEV: case SQFS_INODE_BDEV:
		ent->type = in->base.type == SQFS_INODE_CDEV ? TREE_CHR : TREE_BLK;
		ent->nlink = in->data.dev.nlink;
		devno = in->data.dev.devno;
		break;
	case SQFS_INODE_EXT_CDEV: case SQFS_INODE_EXT_BDEV:
		ent->type = in->base.type == SQFS_INODE_EXT_CDEV ? TREE_CHR : TREE_BLK;
		ent->nlink = in->data.dev_ext.nlink;
		devno = in->data.dev_ext.devno;
		break;
	case SQFS_INODE_FIFO: case SQFS_INODE_EXT_FIFO:
		ent->type = TREE_FIFO;
		ent->nlink = in->data.ipc.nlink;
		break;
	case SQFS_INODE_SOCKET: case SQFS_INODE_EXT_SOCKET:
		ent->type = TREE_SOCK;
		ent->nlink = in->data.ipc.nlink;
		break;
	default:
		return ingot_fail(e, -EBADMSG, "%s: %s: inode type: expected 1..14, got %u",
				  rd->name, path, in->base.type);
	}
	/* Linux's new_decode_dev(). */
	ent->rdev_major = (devno & 0xfff00) >> 8;
	ent->rdev_minor = (devno & 0xff) | ((devno >> 12) & 0xfff00);
	if (ent->type == TREE_FILE)
		return hash_file(rd, path, in, ent, e);
	return 0;
}

static int walk(struct reader *rd, const sqfs_tree_node_t *dir, const char *prefix,
		ingot_error *e)
{
	for (const sqfs_tree_node_t *n = dir->children; n; n = n->next) {
		struct entries *es = &rd->ents;
		const char *name = (const char *)n->name;
		char *path;
		int r;

		/* what unsquashfs refuses too: a name that is not one path
		 * component, or a directory not in strictly ascending order */
		if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/'))
			return ingot_fail(e, -EBADMSG, "%s: corrupted directory %s/: invalid name '%.64s'",
					  rd->name, prefix, name);
		if (n->next && strcmp(name, (const char *)n->next->name) >= 0)
			return ingot_fail(e, -EBADMSG, "%s: corrupted directory %s/: names unsorted or repeated ('%.64s' before '%.64s')",
					  rd->name, prefix, name, (const char *)n->next->name);
		if (n->inode->base.inode_number == 0 || n->inode->base.inode_number > rd->super.inode_count)
			return ingot_fail(e, -EBADMSG, "%s: corrupted inode of %s/%.64s: number %u, expected 1..%u",
					  rd->name, prefix, name, n->inode->base.inode_number, rd->super.inode_count);
		path = xasprintf("%s/%s", prefix, name);
		if (es->n == es->alloc) {
			size_t na = es->alloc ? 2 * es->alloc : 256;
			es->v = xrealloc(es->v, na * sizeof(*es->v));
			es->alloc = na;
		}
		/* Counted first so the path is freed with the list on error. */
		r = fill_entry(rd, n, path, &es->v[es->n++], e);
		if (r < 0)
			return r;
		if (es->v[es->n - 1].type == TREE_DIR) {
			r = walk(rd, n, path, e);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct image_entry *)a)->path,
		      ((const struct image_entry *)b)->path);
}

/* Every inode the superblock counts is reached from the root, and no
 * other: a corrupted directory table that hides entries (or a count that
 * lies) is refused, not listed as a smaller image.  Hard links share an
 * inode number. */
static int count_inodes(const sqfs_tree_node_t *dir, uint8_t *seen, uint32_t *distinct)
{
	for (const sqfs_tree_node_t *n = dir->children; n; n = n->next) {
		uint32_t k = n->inode->base.inode_number - 1;
		if (!(seen[k / 8] & (1u << (k % 8)))) {
			seen[k / 8] |= (uint8_t)(1u << (k % 8));
			(*distinct)++;
		}
		if (n->children)
			count_inodes(n, seen, distinct);
	}
	return 0;
}

static int check_inode_count(struct reader *rd, ingot_error *e)
{
	_cleanup_free_ uint8_t *seen = xcalloc(rd->super.inode_count / 8 + 1, 1);
	uint32_t distinct = 1;   /* the root */

	count_inodes(rd->root, seen, &distinct);
	if (distinct != rd->super.inode_count)
		return ingot_fail(e, -EBADMSG, "%s: corrupted image: the superblock counts %u inodes, the directory tree reaches %u",
				  rd->name, rd->super.inode_count, distinct);
	return 0;
}

int image_list(const char *path, image_list_fn fn, void *user, struct image_summary *sum,
	       ingot_error *e)
{
	struct reader rd = { .name = path };
	int r;

	r = open_image(&rd, e);
	if (r == 0)
		r = walk(&rd, rd.root, "", e);
	if (r == 0)
		r = check_inode_count(&rd, e);
	if (r == 0) {
		if (rd.ents.n)   /* an image of only "/" lists nothing */
			qsort(rd.ents.v, rd.ents.n, sizeof(*rd.ents.v), cmp_path);
		if (sum) {
			const char *cname = sqfs_compressor_name_from_id(
				(SQFS_COMPRESSOR)rd.super.compression_id);
			memset(sum, 0, sizeof(*sum));
			sum->compression = cname ? cname : "unknown";
			sum->block_size = rd.super.block_size;
			sum->mtime = rd.super.modification_time;
			sum->inodes = rd.super.inode_count;
			sum->bytes_used = rd.super.bytes_used;
			sum->file_size = rd.file->get_size(rd.file);
			sum->root_mode = rd.root->inode->base.mode & 07777;
			sum->root_uid = rd.root->uid;
			sum->root_gid = rd.root->gid;
		}
		for (size_t i = 0; i < rd.ents.n && r == 0; i++)
			r = fn(&rd.ents.v[i], user, e);
	}
	reader_free(&rd);
	return r;
}

void image_mode_string(enum tree_type type, uint32_t mode, char out[11])
{
	static const char types[] = { [TREE_DIR] = 'd', [TREE_FILE] = '-', [TREE_SYMLINK] = 'l',
				      [TREE_CHR] = 'c', [TREE_BLK] = 'b', [TREE_FIFO] = 'p',
				      [TREE_SOCK] = 's' };
	static const char rwx[] = "rwxrwxrwx";

	out[0] = types[type];
	for (int i = 0; i < 9; i++)
		out[1 + i] = (mode & (0400u >> i)) ? rwx[i] : '-';
	if (mode & 04000)
		out[3] = (mode & 0100) ? 's' : 'S';
	if (mode & 02000)
		out[6] = (mode & 0010) ? 's' : 'S';
	if (mode & 01000)
		out[9] = (mode & 0001) ? 't' : 'T';
	out[10] = '\0';
}

json_t *image_entry_to_json(const struct image_entry *ent)
{
	_cleanup_json_ json_t *o = json_object();
	char mode[8];
	int bad = 0;

	if (!o)
		return NULL;
	snprintf(mode, sizeof(mode), "%04o", ent->mode);
	bad |= json_object_set_new(o, "path", json_string(ent->path));
	bad |= json_object_set_new(o, "type", json_string(tree_type_name(ent->type)));
	bad |= json_object_set_new(o, "mode", json_string(mode));
	bad |= json_object_set_new(o, "uid", json_integer(ent->uid));
	bad |= json_object_set_new(o, "gid", json_integer(ent->gid));
	bad |= json_object_set_new(o, "mtime", json_integer(ent->mtime));
	if (ent->type == TREE_FILE) {
		char hex[SHA256_HEX_LEN + 1];
		hex_encode(ent->sha256, 32, hex);
		bad |= json_object_set_new(o, "size", json_integer((json_int_t)ent->size));
		bad |= json_object_set_new(o, "sha256", json_string(hex));
	}
	if (ent->type == TREE_SYMLINK)
		bad |= json_object_set_new(o, "target", json_string(ent->target));
	if (ent->type == TREE_CHR || ent->type == TREE_BLK) {
		bad |= json_object_set_new(o, "major", json_integer(ent->rdev_major));
		bad |= json_object_set_new(o, "minor", json_integer(ent->rdev_minor));
	}
	if (bad)
		return NULL;
	return TAKE_PTR(o);
}
