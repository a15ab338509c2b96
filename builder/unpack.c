#include "builder/unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "builder/deb.h"
#include "builder/gunzip.h"
#include "builder/unpack-cache.h"
#include "lib/writebehind.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/escape.h"
#include "lib/fileio.h"
#include "lib/imgpath.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

#define DATA_BUF (256u << 10)
#define PACK_BUF (1u << 20)   /* write-behind buffers, PACK_NBUF of them */
#define PACK_NBUF 4
#define AHEAD_NBUF 4          /* inflated buffers of DATA_BUF ahead of the tar reader */

/* Per-artifact reading state. */
struct reader {
	const struct store *s;
	const struct artifact *a;
	struct tree *out;
	struct unpack_stats *st;
	uint64_t max_entries, max_bytes;
	EVP_MD_CTX *md;           /* per-file digest */
	ingot_error *e;
	/* the pack: every regular file's bytes, back to back */
	int pack_fd;
	char *pack_tmp;
	uint64_t pack_off;
	struct writebehind wb;    /* file data goes straight into its buffers */
	const char *what;         /* a .deb's "NAME: SOURCE", for messages */
};

/* Archive path -> listing path: "./a/b/" -> "a/b".  Returns 1 for the
 * archive root ("." or "./"), which carries nothing. */
static int normalize(struct reader *rd, const char *raw, const char *what, char **out)
{
	const char *p = raw;
	size_t n;
	ingot_error sub = { 0 };

	if (!utf8_valid(raw))
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
	*out = xstrndup(p, n);
	if (imgpath_check(*out, "path", &sub) < 0) {
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
	if (rd->st->entries >= rd->max_entries)
		return ingot_fail(rd->e, -EFBIG, "%s: %s: expected at most %llu entries, got more (a limit against archive bombs: --max-entries)",
				  rd->a->name, rd->a->source, (unsigned long long)rd->max_entries);
	if (tree_add(rd->out, ent, false, &sub) < 0)
		return ingot_fail(rd->e, sub.code, "%s: archive entry '%s': %s", rd->a->name, raw, sub.msg);
	rd->st->entries++;
	return 0;
}

/* Refuse before the bytes are written: a sparse or bomb entry declares
 * (or decompresses to) far more than its archive holds. */
static int check_bytes(struct reader *rd, const char *raw, uint64_t more)
{
	if (more > rd->max_bytes || rd->st->bytes > rd->max_bytes - more)
		return ingot_fail(rd->e, -EFBIG, "%s: archive entry '%s': expected at most %llu unpacked bytes, got at least %llu (a limit against archive bombs: --max-unpacked-bytes)",
				  rd->a->name, raw, (unsigned long long)rd->max_bytes,
				  (unsigned long long)(more > UINT64_MAX - rd->st->bytes ? UINT64_MAX : rd->st->bytes + more));
	return 0;
}

/* A pack write failed (on the write-behind thread, reported here). */
static int pack_failed(struct reader *rd, int r)
{
	return ingot_fail(rd->e, r, "%s: %s: write failed: %s", rd->a->name, rd->pack_tmp, strerror(-r));
}

static int read_file_data(struct reader *rd, struct archive *ar, const char *raw, struct tree_entry *ent)
{
	int r;

	ent->loc.packed = true;
	ent->loc.fresh = true;
	memcpy(ent->loc.pack, rd->a->sha256, 32);
	ent->loc.off = rd->pack_off;
	ent->size = 0;
	if (!EVP_DigestInit_ex(rd->md, EVP_sha256(), NULL))
		return ingot_fail(rd->e, -EIO, "sha256: cannot initialise digest");
	for (;;) {
		size_t room;
		char *p = writebehind_tail(&rd->wb, &room);
		la_ssize_t n = archive_read_data(ar, p, room < DATA_BUF ? room : DATA_BUF);
		if (n < 0)
			return ingot_fail(rd->e, -EIO, "%s: archive entry '%s': %s", rd->a->name, raw, unpack_archive_error(ar));
		if (n == 0)
			break;
		if ((r = check_bytes(rd, raw, ent->size + (uint64_t)n)) < 0)
			return r;
		if (!EVP_DigestUpdate(rd->md, p, (size_t)n))
			return ingot_fail(rd->e, -EIO, "sha256: digest update failed");
		if ((r = writebehind_advance(&rd->wb, (size_t)n)) < 0)
			return pack_failed(rd, r);
		rd->pack_off += (uint64_t)n;
		ent->size += (uint64_t)n;
	}
	if (!EVP_DigestFinal_ex(rd->md, ent->sha256, NULL))
		return ingot_fail(rd->e, -EIO, "sha256: digest failed");
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
		ent.loc = tgt->loc;
		if ((r = check_bytes(rd, raw, ent.size)) < 0)
			return r;
		rd->st->bytes += ent.size;
		return add_listing(rd, &ent, raw);
	}

	switch (archive_entry_filetype(ae)) {
	case AE_IFREG:
		ent.type = TREE_FILE;
		if (archive_entry_size_is_set(ae) && archive_entry_size(ae) > 0 &&
		    (r = check_bytes(rd, raw, (uint64_t)archive_entry_size(ae))) < 0)
			return r;
		if ((r = read_file_data(rd, ar, raw, &ent)) < 0)
			return r;
		break;
	case AE_IFDIR:
		ent.type = TREE_DIR;
		break;
	case AE_IFLNK: {
		const char *t = archive_entry_symlink(ae);
		ent.type = TREE_SYMLINK;
		if (!t || !*t || strlen(t) > 4095 || !utf8_valid(t))
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
			return ingot_fail(rd->e, -EINVAL, "%s: %s: %s", rd->a->name, what, unpack_archive_error(ar));
		if ((r = read_entry(rd, ar, ae)) < 0)
			return r;
	}
}

/* Read and hash the next bytes of the source: n, 0 at its end, -errno. */
static ssize_t raw_read(struct unpack_source *src, void *buf, size_t cap)
{
	ssize_t n;

	do
		n = read(src->fd, buf, cap);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		src->err = errno;
		return -errno;
	}
	if (!src->hash.started)
		EVP_DigestUpdate(src->md, buf, (size_t)n);
	else if (writebehind_write(&src->hash, buf, (size_t)n) < 0)
		src->err = EIO;   /* the digest failed: it can match no pin */
	src->total += (uint64_t)n;
	return n;
}

/* gunzip's input: what the probe read first, then the file. */
static ssize_t gz_pull(void *ctx, uint8_t *buf, size_t cap)
{
	struct unpack_source *src = ctx;

	if (src->pending) {
		size_t n = src->pending < cap ? src->pending : cap;
		memcpy(buf, src->buf, n);
		memmove(src->buf, src->buf + n, src->pending - n);
		src->pending -= n;
		return (ssize_t)n;
	}
	return raw_read(src, buf, cap);
}

static la_ssize_t source_read(struct archive *ar, void *ctx, const void **buf)
{
	struct unpack_source *src = ctx;
	const char *why = NULL;
	ssize_t n;

	*buf = src->buf;
	if (src->ahead) {
		const uint8_t *p = NULL;
		n = gunzip_ahead_read(src->ahead, &p, &why);
		*buf = p;
		if (n < 0 && ar)
			archive_set_error(ar, EINVAL, "%s", why);
		return n < 0 ? -1 : n;
	}
	if (src->gz) {
		n = gunzip_read(src->gz, (uint8_t *)src->buf, DATA_BUF, &why);
		if (n < 0 && ar)
			archive_set_error(ar, EINVAL, "%s", why);
		return n < 0 ? -1 : n;
	}
	if (src->pending) {
		n = (ssize_t)src->pending;
		src->pending = 0;
		return n;
	}
	n = raw_read(src, src->buf, DATA_BUF);
	if (n < 0 && ar)
		archive_set_error(ar, (int)-n, "read failed: %s", strerror((int)-n));
	return n < 0 ? -1 : n;
}

static int hash_sink(void *md, const char *buf, size_t len)
{
	return EVP_DigestUpdate(md, buf, len) ? 0 : -EIO;
}

/* The source's sha256 (its pin, over the very bytes unpacked) is made on
 * a second thread: on the unpack thread it was a fifth of the cold
 * build's longest artifact, while the other CPU had nothing left to do
 * (docs/bench.md).  Without that thread it is made inline. */
#define HASH_BUF (128u << 10)
#define HASH_NBUF 4

int unpack_source_begin(struct unpack_source *src, int fd)
{
	*src = (struct unpack_source){ .fd = fd, .md = sha256_begin(), .buf = xmalloc(DATA_BUF) };
	if (!src->md) {
		unpack_source_end(src, NULL);
		return -ENOMEM;
	}
	if (writebehind_start_sink(&src->hash, hash_sink, src->md, HASH_BUF, HASH_NBUF) < 0)
		writebehind_free(&src->hash);
	return 0;
}

int unpack_source_begin_pinned(struct unpack_source *src, int fd, const char *path, const uint8_t pin[32],
			       uint8_t got[32], ingot_error *e)
{
	int r = sha256_fd(fd, path, got, NULL, e);

	if (r < 0)
		return r;
	if (memcmp(got, pin, 32))
		return 1;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return ingot_fail(e, -errno, "%s: seek: %s", path, strerror(errno));
	if (unpack_source_begin(src, fd) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	return 0;
}

int unpack_source_open(struct archive *ar, struct unpack_source *src)
{
	return archive_read_open(ar, src, NULL, source_read, NULL);
}

int unpack_source_open_tar(struct archive *ar, struct unpack_source *src)
{
	/* the probe: enough bytes to see a gzip member's magic */
	while (src->pending < 2) {
		ssize_t n = raw_read(src, src->buf + src->pending, DATA_BUF - src->pending);
		if (n <= 0)
			break;
		src->pending += (size_t)n;
	}
	if (gunzip_magic((const uint8_t *)src->buf, src->pending) && !(src->gz = gunzip_new(gz_pull, src))) {
		archive_set_error(ar, ENOMEM, "out of memory");
		return ARCHIVE_FATAL;
	}
	/* From here on gz and the source's reads (raw_read: the pin's
	 * digest, total, err) are the inflate thread's, until
	 * unpack_source_end stops it. */
	if (src->gz)
		src->ahead = gunzip_ahead_start(src->gz, DATA_BUF, AHEAD_NBUF);
	return unpack_source_open(ar, src);
}

int unpack_source_finish(struct unpack_source *src, const char **why)
{
	if (src->ahead)
		return gunzip_ahead_finish(src->ahead, why);
	return src->gz ? gunzip_finish(src->gz, why) : 0;
}

int unpack_source_end(struct unpack_source *src, uint8_t got[32])
{
	/* Hash what the archive reader left (tar padding after the end
	 * marker, trailing bytes): the pin covers the whole file.  The
	 * inflate thread first: what it read is hashed, the rest is read
	 * from where it stopped. */
	gunzip_ahead_stop(src->ahead);
	src->ahead = NULL;
	for (ssize_t n = 1; got && n > 0 && !src->err;)
		n = raw_read(src, src->buf, DATA_BUF);
	if (writebehind_finish(&src->hash) < 0 && !src->err)
		src->err = EIO;
	writebehind_free(&src->hash);
	if (got)
		EVP_DigestFinal_ex(src->md, got, NULL);
	EVP_MD_CTX_free(src->md);
	free(src->buf);
	gunzip_free(src->gz);
	src->gz = NULL;
	src->md = NULL;
	src->buf = NULL;
	return src->err ? -src->err : 0;
}

static int list_tar(struct reader *rd, struct unpack_source *src)
{
	_cleanup_archive_ struct archive *ar = unpack_tar_reader();
	if (!ar)
		return ingot_fail(rd->e, -ENOMEM, "out of memory");
	const char *why = NULL;
	int r;

	if (unpack_source_open_tar(ar, src) != ARCHIVE_OK)
		return ingot_fail(rd->e, -EINVAL, "%s: %s: %s", rd->a->name, rd->a->source, unpack_archive_error(ar));
	if ((r = read_archive(rd, ar, rd->a->source)) < 0)
		return r;
	/* tar's end marker came before the gzip trailer: check it too */
	if (unpack_source_finish(src, &why) < 0)
		return ingot_fail(rd->e, -EINVAL, "%s: %s: %s", rd->a->name, rd->a->source, why);
	return 0;
}

int unpack_read_member(struct archive *a, size_t max, char **out, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = xmalloc(cap + 1);
	for (;;) {
		la_ssize_t k;
		if (n == cap) {
			if (cap >= max) {
				free(buf);
				return -EFBIG;
			}
			buf = xrealloc(buf, cap * 2 + 1);
			cap *= 2;
		}
		k = archive_read_data(a, buf + n, cap - n);
		if (k < 0) {
			free(buf);
			return -EIO;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* The control file's Version (Debian policy's character set: it is
 * printed, compared and put in the manifest) into the stats. */
static int control_version(const char *what, const char *member, char *control, struct unpack_stats *st,
			   ingot_error *e)
{
	/* The SBOM's labels first: deb_control_version edits control. */
	static const char name_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789.+-";
	struct { const char *field; char *out; size_t max; bool name; } f[] = {
		{ "Package", st->deb_package, sizeof(st->deb_package), true },
		{ "Architecture", st->deb_arch, sizeof(st->deb_arch), true },
		{ "Maintainer", st->deb_maintainer, sizeof(st->deb_maintainer), false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		int r = deb_control_field(control, f[i].field, f[i].out, f[i].max);
		if (r < 0 || (r && f[i].name && strspn(f[i].out, name_chars) != strlen(f[i].out)))
			return ingot_fail(e, -EINVAL, "%s: %s: control %s: expected 1 to %zu characters%s, got an empty, longer or other value",
					  what, member, f[i].field, f[i].max - 1,
					  f[i].name ? " of [a-z0-9.+-]" : " without control characters");
	}
	const char *v = deb_control_version(control);

	if (!v)
		return ingot_fail(e, -EINVAL, "%s: %s: expected a control file with a Version: field, got none",
				  what, member);
	if (!deb_version_ok(v, sizeof(st->deb_version)))
		return ingot_fail(e, -EINVAL, "%s: %s: control Version: expected 1 to %zu characters of [A-Za-z0-9.+~:-], got '%.64s'",
				  what, member, sizeof(st->deb_version) - 1, v);
	strcpy(st->deb_version, v);
	return 0;
}

/* Read the control.tar member once, as it streams by, and keep only its
 * control file's Version (the listing carries it to the tuple check). */
int unpack_deb_control(struct archive *outer, const char *what, const char *member, int filter,
		       struct unpack_stats *st, ingot_error *e)
{
	_cleanup_archive_ struct archive *inner = archive_read_new();
	_cleanup_free_ char *ctl = NULL, *control = NULL;
	struct archive_entry *ae;
	size_t ctl_len = 0, control_len = 0;
	int r = unpack_read_member(outer, UNPACK_CONTROL_MAX, &ctl, &ctl_len);

	if (r == -EFBIG)
		return ingot_fail(e, r, "%s: %s: expected at most %u bytes",
				  what, member, UNPACK_CONTROL_MAX);
	if (r == -EIO)
		return ingot_fail(e, -EINVAL, "%s: %s: %s", what, member,
				  unpack_archive_error(outer));
	if (r < 0 || !inner)
		return ingot_fail(e, -ENOMEM, "out of memory");
	archive_read_support_filter_all(inner);
	archive_read_support_format_tar(inner);
	if (archive_read_open_memory(inner, ctl, ctl_len) != ARCHIVE_OK)
		return ingot_fail(e, -EINVAL, "%s: %s: %s", what, member,
				  unpack_archive_error(inner));
	if ((r = deb_check_filter(inner, what, member, filter, e)) < 0)
		return r;
	while ((r = archive_read_next_header(inner, &ae)) == ARCHIVE_OK) {
		const char *p = archive_entry_pathname(ae);
		if (p && (!strcmp(p, "./control") || !strcmp(p, "control"))) {
			if (unpack_read_member(inner, UNPACK_CONTROL_MAX, &control, &control_len) < 0)
				return ingot_fail(e, -EINVAL, "%s: %s: cannot read the control file: %s",
						  what, member, unpack_archive_error(inner));
			return control_version(what, member, control, st, e);
		}
	}
	if (r < ARCHIVE_WARN)
		return ingot_fail(e, -EINVAL, "%s: %s: %s", what, member,
				  unpack_archive_error(inner));
	return ingot_fail(e, -EINVAL, "%s: %s: expected a control file, got none",
			  what, member);
}

static int read_control(void *ctx, struct archive *outer, const char *member, int filter, ingot_error *e)
{
	struct reader *rd = ctx;

	return unpack_deb_control(outer, rd->what, member, filter, rd->st, e);
}

/* A .deb's data.tar, streamed out of the package. */
static int read_data(void *ctx, struct archive *inner, const char *member, ingot_error *e)
{
	struct reader *rd = ctx;
	_cleanup_free_ char *what = xasprintf("%s: %s", rd->a->source, member);

	(void)e;
	return read_archive(rd, inner, what);
}

/* deb(5) with dpkg-deb's rules (builder/deb.h: deb_walk): the control
 * file's Version, then data.tar's entries. */
static int list_deb(struct reader *rd, struct unpack_source *src)
{
	_cleanup_archive_ struct archive *outer = archive_read_new();
	_cleanup_free_ char *what = xasprintf("%s: %s", rd->a->name, rd->a->source);
	struct deb_visitor v = { .ctx = rd, .control = read_control, .data = read_data };

	if (!outer)
		return ingot_fail(rd->e, -ENOMEM, "out of memory");
	archive_read_support_format_ar(outer);
	if (unpack_source_open(outer, src) != ARCHIVE_OK)
		return ingot_fail(rd->e, -EINVAL, "%s: expected a Debian package (ar archive), got: %s", what,
				  unpack_archive_error(outer));
	v.what = rd->what = what;
	return deb_walk(outer, &v, rd->e);
}

static void reader_free(struct reader *rd)
{
	writebehind_free(&rd->wb);   /* before the fd goes: it may still write */
	store_tmp_abort(rd->pack_fd, &rd->pack_tmp);
	EVP_MD_CTX_free(rd->md);
}

/* Unpack an archive artifact from its source into a new pack, checking
 * the source against its pin in the same read; the pack and last the
 * listing are moved into the store only if it matches. */
static int unpack_source(struct reader *rd)
{
	const struct artifact *a = rd->a;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *pack = NULL;
	struct unpack_source src;
	struct stat sb;
	uint8_t got[32];
	int r, r2;

	if ((fd = store_source_open(a->name, a->path, rd->e)) < 0)
		return fd;
	if (fstat(fd, &sb) < 0)
		return ingot_fail(rd->e, -errno, "%s: %s: %s", a->name, a->path, strerror(errno));
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	/* The pin first: an archive is small next to what it unpacks to. */
	if ((r = unpack_source_begin_pinned(&src, fd, a->path, a->sha256, got, rd->e)) < 0)
		return ingot_prefix(rd->e, "%s", a->name);
	if (r > 0)
		return store_pin_mismatch(a->name, a->sha256, got, rd->e);
	rd->pack_fd = store_tmp_create(rd->s, "pack", &rd->pack_tmp, rd->e);
	if (rd->pack_fd < 0) {
		unpack_source_end(&src, NULL);
		return rd->pack_fd;
	}
	if ((r = writebehind_start(&rd->wb, rd->pack_fd, 0, PACK_BUF, PACK_NBUF)) < 0) {
		unpack_source_end(&src, NULL);
		return ingot_fail(rd->e, r, "%s: cannot start the pack writer: %s", a->name, strerror(-r));
	}
	r = a->kind == ART_DEB ? list_deb(rd, &src) : list_tar(rd, &src);
	r2 = writebehind_finish(&rd->wb);
	if (r >= 0 && r2 < 0)
		r = pack_failed(rd, r2);
	/* The bytes unpacked must be the bytes checked above: a source
	 * rewritten meanwhile is a pin mismatch, reported before any parse
	 * error. */
	if ((r2 = unpack_source_end(&src, got)) < 0)
		return ingot_fail(rd->e, r2, "%s: %s: read failed: %s", a->name, a->path, strerror(-r2));
	if (memcmp(got, a->sha256, 32))
		return store_pin_mismatch(a->name, a->sha256, got, rd->e);
	if (r < 0)
		return r;
	rd->st->artifact_bytes = src.total;
	if (!(pack = store_unpacked_path(rd->s, a->sha256, ".pack")))
		return ingot_fail(rd->e, -ENOMEM, "out of memory");
	r2 = store_tmp_commit(rd->pack_fd, &rd->pack_tmp, pack, rd->e);
	rd->pack_fd = -1;
	if (r2 < 0)
		return r2;
	return unpack_cache_write(rd->s, a, rd->out, rd->pack_off, &sb, rd->st, rd->e);
}

static int list_file(struct store *s, const struct artifact *a, struct tree *listing,
		     struct unpack_stats *st, ingot_error *e)
{
	struct tree_entry ent = { .path = a->dest, .type = TREE_FILE, .mode = a->file_mode,
				  .origin = a->name };
	uint64_t size;
	_cleanup_free_ char *blob = store_blob_path(s, a->sha256);
	int r;

	if (!blob)
		return ingot_fail(e, -ENOMEM, "out of memory");
	st->cached = store_has_blob(s, a->sha256);
	if ((r = store_import(s, a->name, a->path, a->sha256, e)) < 0)
		return r;
	if (unpack_file_size(blob, &size) < 0)
		return ingot_fail(e, -ENOENT, "%s: %s: missing from the store", a->name, blob);
	ent.size = size;
	memcpy(ent.sha256, a->sha256, 32);
	st->entries = 1;
	st->bytes = st->artifact_bytes = size;
	return tree_add(listing, &ent, false, e);
}

/* A listing (cached, or of a file artifact) against the limits. */
static int check_limits(const struct reader *rd, ingot_error *e)
{
	const struct unpack_stats *st = rd->st;
	if (st->entries > rd->max_entries)
		return ingot_fail(e, -EFBIG, "%s: %s: expected at most %llu entries, got %llu (a limit against archive bombs: --max-entries)",
				  rd->a->name, rd->a->source, (unsigned long long)rd->max_entries,
				  (unsigned long long)st->entries);
	if (st->bytes > rd->max_bytes)
		return ingot_fail(e, -EFBIG, "%s: %s: expected at most %llu unpacked bytes, got %llu (a limit against archive bombs: --max-unpacked-bytes)",
				  rd->a->name, rd->a->source, (unsigned long long)rd->max_bytes,
				  (unsigned long long)st->bytes);
	return 0;
}

int unpack_list(struct store *s, const struct artifact *a, const struct unpack_limits *lim,
		struct tree *listing, struct unpack_stats *st, ingot_error *e)
{
	struct reader rd = { .s = s, .a = a, .out = listing, .st = st, .e = e, .pack_fd = -1,
			     .max_entries = lim && lim->entries ? lim->entries : UNPACK_MAX_ENTRIES,
			     .max_bytes = lim && lim->bytes ? lim->bytes : UNPACK_MAX_BYTES };
	struct unpack_cache_meta cm;
	int r;

	memset(st, 0, sizeof(*st));
	tree_init(listing);
	if (a->kind == ART_FILE) {
		r = list_file(s, a, listing, st, e);
		if (r >= 0)
			r = check_limits(&rd, e);
		if (r < 0)
			tree_free(listing);
		return r;
	}

	if (unpack_cache_read(s, a, listing, st, &cm) == 0) {
		st->cached = true;
		r = check_limits(&rd, e);
		if (r >= 0)
			r = unpack_cache_check_source(a, st, &cm, e);
		if (r < 0)
			tree_free(listing);
		return r;
	}
	tree_free(listing);
	memset(st, 0, sizeof(*st));

	rd.md = EVP_MD_CTX_new();
	if (!rd.md)
		r = ingot_fail(e, -ENOMEM, "out of memory");
	else
		r = unpack_source(&rd);
	reader_free(&rd);
	if (r < 0)
		tree_free(listing);
	return r;
}
