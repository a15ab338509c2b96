/* Content-addressed store: blobs are hashed while they are written into
 * tmp/ and renamed to blobs/xx/<sha256> only once the digest is known
 * (and, for pinned artifacts, equal to the pin). */
#include "builder/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/privdir.h"
#include "lib/xalloc.h"

#define BLOB_MODE 0644
#define COPY_BUF (256u << 10)

char *store_default_root(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	const char *h;

	if (x && x[0] == '/')
		return path_join(x, "ingot");
	h = getenv("HOME");
	if (!h || !*h)
		return NULL;
	return xasprintf("%s/.cache/ingot", h);
}

/* A build waits while a gc runs (exclusive), never the other way round. */
static int take_lock(struct store *s, const char *root, ingot_error *e)
{
	_cleanup_free_ char *p = path_join(root, "lock");

	s->lock_fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (s->lock_fd < 0)
		return ingot_fail(e, -errno, "%s: %s", p, strerror(errno));
	while (flock(s->lock_fd, LOCK_SH) < 0) {
		int r = -errno;
		if (r == -EINTR)
			continue;
		close(s->lock_fd);
		s->lock_fd = -1;
		return ingot_fail(e, r, "%s: cannot lock: %s", p, strerror(-r));
	}
	return 0;
}

int store_open(struct store *s, const char *root, ingot_error *e)
{
	static const char *const subs[] = { "blobs", "tmp", "unpacked" };
	/* Listings and packs are trusted once written (lib/privdir.h). */
	static const char why[] = "the store is a trusted cache; use a private one";
	_cleanup_free_ char *def = NULL;
	int r;

	s->root = NULL;
	s->lock_fd = -1;
	if (!root && !(root = def = store_default_root()))
		return ingot_fail(e, -EINVAL, "store: no --store given and neither XDG_CACHE_HOME nor HOME is set");
	r = mkdir_p(root, 0755, e);
	if (r < 0)
		return ingot_prefix(e, "store");
	if ((r = privdir_check(root, "store", why, e)) < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++) {
		_cleanup_free_ char *p = path_join(root, subs[i]);
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return ingot_fail(e, -errno, "%s: cannot create store directory: %s", p, strerror(errno));
		if ((r = privdir_check(p, "store", why, e)) < 0)
			return r;
		if (!strcmp(subs[i], "tmp"))   /* tmp/<pid>.<what>.XXXXXX of killed builds */
			remove_dead_temps(p, "", 0);
	}
	if ((r = take_lock(s, root, e)) < 0)
		return r;
	s->root = xstrdup(root);
	return 0;
}

int store_lock_exclusive(struct store *s, ingot_error *e)
{
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) < 0)
		return ingot_fail(e, errno == EWOULDBLOCK ? -EBUSY : -errno,
				  "%s: store in use by another ingot process (a build, or a gc); try again when it has finished",
				  s->root);
	return 0;
}

/* STORE/blobs/ab/<hex> (fanout) or STORE/unpacked/<hex><suffix>. */
static char *hex_path(const struct store *s, const uint8_t sha256[32], bool fanout, const char *suffix)
{
	char hex[SHA256_HEX_LEN + 1];

	hex_encode(sha256, 32, hex);
	return fanout ? xasprintf("%s/blobs/%.2s/%s", s->root, hex, hex)
		      : xasprintf("%s/unpacked/%s%s", s->root, hex, suffix);
}

char *store_unpacked_path(const struct store *s, const uint8_t artifact[32], const char *suffix)
{
	return hex_path(s, artifact, false, suffix);
}

int store_tmp_create(const struct store *s, const char *what, char **path, ingot_error *e)
{
	int fd;

	*path = xasprintf("%s/tmp/%ld.%s.XXXXXX", s->root, (long)getpid(), what);
	fd = mkostemp(*path, O_CLOEXEC);
	if (fd < 0 || fchmod(fd, BLOB_MODE) < 0) {
		int err = errno;
		store_tmp_abort(fd, path);
		return ingot_fail(e, -err, "%s/tmp: cannot create temporary file: %s", s->root, strerror(err));
	}
	return fd;
}

void store_tmp_abort(int fd, char **tmp)
{
	if (fd >= 0)
		close(fd);
	if (*tmp) {
		unlink(*tmp);
		free(*tmp);
		*tmp = NULL;
	}
}

int store_tmp_commit_at(int fd, char **tmp, int dirfd, const char *name, const char *dir, ingot_error *e)
{
	int r = close(fd) < 0 ? -errno : 0;

	if (r == 0 && renameat(AT_FDCWD, *tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0) {
		store_tmp_abort(-1, tmp);
		return ingot_fail(e, r, "%s%s%s: cannot move into the store: %s", dir ? dir : "", dir ? "/" : "",
				  name, strerror(-r));
	}
	free(*tmp);
	*tmp = NULL;
	return 0;
}

int store_tmp_commit(int fd, char **tmp, const char *dst, ingot_error *e)
{
	return store_tmp_commit_at(fd, tmp, AT_FDCWD, dst, NULL, e);
}

int store_write_file(const struct store *s, const char *dst, const void *buf, size_t len, ingot_error *e)
{
	_cleanup_free_ char *tmp = NULL;
	int fd = store_tmp_create(s, "file", &tmp, e), r;

	if (fd < 0)
		return fd;
	if ((r = write_all(fd, buf, len)) < 0) {
		ingot_fail(e, r, "%s: write failed: %s", tmp, strerror(-r));
		store_tmp_abort(fd, &tmp);
		return r;
	}
	return store_tmp_commit(fd, &tmp, dst, e);
}

int store_content_open(const struct store *s, const struct store_loc *loc, const uint8_t sha256[32],
		       uint64_t size, struct store_content *c, ingot_error *e)
{
	c->off = loc && loc->packed ? loc->off : 0;
	c->left = size;
	c->path = loc && loc->packed ? store_unpacked_path(s, loc->pack, ".pack") : store_blob_path(s, sha256);
	c->fd = -1;
	c->fd = open_regular(c->path, O_NOFOLLOW, NULL, e);
	if (c->fd < 0) {
		int err = c->fd;
		ingot_prefix(e, "store");
		store_content_close(c);
		return err;
	}
	if (!loc || !loc->packed)
		posix_fadvise(c->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

ssize_t store_content_read(struct store_content *c, void *buf, size_t len)
{
	ssize_t n;

	if (len > c->left)
		len = (size_t)c->left;
	if (!len)
		return 0;
	do
		n = pread(c->fd, buf, len, (off_t)c->off);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	c->off += (uint64_t)n;
	c->left -= (uint64_t)n;
	return n;
}

void store_content_close(struct store_content *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->path);
	c->path = NULL;
}

static int writer_finish(struct store_writer *w, const char *name, const uint8_t *want,
			 uint8_t out[32], ingot_error *e);

int store_content_blob(const struct store *s, const struct store_loc *loc, const uint8_t sha256[32],
		       uint64_t size, char **path, ingot_error *e)
{
	struct store_content c;
	struct store_writer w;
	_cleanup_free_ char *buf = NULL;
	uint8_t got[32];
	int r;

	*path = store_blob_path(s, sha256);
	if (!loc || !loc->packed || store_has_blob(s, sha256))
		return 0;
	buf = xmalloc(COPY_BUF);
	if ((r = store_content_open(s, loc, sha256, size, &c, e)) < 0)
		return r;
	if ((r = store_writer_begin(s, &w, e)) < 0) {
		store_content_close(&c);
		return r;
	}
	for (;;) {
		ssize_t n = store_content_read(&c, buf, COPY_BUF);
		if (n < 0) {
			r = ingot_fail(e, (int)n, "%s: read failed: %s", c.path, strerror((int)-n));
			break;
		}
		if (n == 0)
			break;
		if ((r = store_writer_write(&w, buf, (size_t)n, e)) < 0)
			break;
	}
	store_content_close(&c);
	if (r < 0) {
		store_writer_abort(&w);
		return r;
	}
	return writer_finish(&w, "pack", sha256, got, e);
}

void store_close(struct store *s)
{
	if (s->root && s->lock_fd >= 0)   /* root is set only by a good store_open */
		close(s->lock_fd);
	s->lock_fd = -1;
	free(s->root);
	s->root = NULL;
}

char *store_blob_path(const struct store *s, const uint8_t sha256[32])
{
	return hex_path(s, sha256, true, NULL);
}

int store_has_blob(const struct store *s, const uint8_t sha256[32])
{
	_cleanup_free_ char *p = store_blob_path(s, sha256);
	struct stat st;
	return p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int blob_dir(const struct store *s, const uint8_t sha256[32], ingot_error *e)
{
	char hex[SHA256_HEX_LEN + 1];
	_cleanup_free_ char *d = NULL;

	hex_encode(sha256, 32, hex);
	d = xasprintf("%s/blobs/%.2s", s->root, hex);
	if (mkdir(d, 0755) < 0 && errno != EEXIST)
		return ingot_fail(e, -errno, "%s: cannot create store directory: %s", d, strerror(errno));
	return 0;
}

int store_writer_begin(const struct store *s, struct store_writer *w, ingot_error *e)
{
	memset(w, 0, sizeof(*w));
	w->s = s;
	w->fd = store_tmp_create(s, "blob", &w->tmp, e);
	if (w->fd < 0)
		return w->fd;
	w->md = EVP_MD_CTX_new();
	if (!w->md || !EVP_DigestInit_ex(w->md, EVP_sha256(), NULL)) {
		store_writer_abort(w);
		return ingot_fail(e, -ENOMEM, "sha256: cannot initialise digest");
	}
	return 0;
}

int store_writer_write(struct store_writer *w, const void *buf, size_t len, ingot_error *e)
{
	int r;
	if (!EVP_DigestUpdate(w->md, buf, len))
		return ingot_fail(e, -EIO, "sha256: digest update failed");
	r = write_all(w->fd, buf, len);
	if (r < 0)
		return ingot_fail(e, r, "%s: write failed: %s", w->tmp, strerror(-r));
	w->size += len;
	return 0;
}

/* Finish the digest and rename into place; if want is given the digest
 * must equal it, otherwise the temporary is removed. */
static int writer_finish(struct store_writer *w, const char *name, const uint8_t *want,
			 uint8_t out[32], ingot_error *e)
{
	uint8_t got[32];
	unsigned int dl = 0;
	_cleanup_free_ char *dst = NULL;
	int r;

	if (!EVP_DigestFinal_ex(w->md, got, &dl) || dl != 32) {
		store_writer_abort(w);
		return ingot_fail(e, -EIO, "sha256: digest failed");
	}
	if (want && memcmp(want, got, 32)) {
		store_writer_abort(w);
		return store_pin_mismatch(name, want, got, e);
	}
	if (close(w->fd) < 0) {
		int err = errno;
		w->fd = -1;
		store_writer_abort(w);
		return ingot_fail(e, -err, "%s: cannot finish blob: %s", name, strerror(err));
	}
	w->fd = -1;
	dst = store_blob_path(w->s, got);
	/* The blobs/xx/ directory usually exists: create it only on demand. */
	r = rename(w->tmp, dst) < 0 ? -errno : 0;
	if (r == -ENOENT) {
		if ((r = blob_dir(w->s, got, e)) < 0) {
			store_writer_abort(w);
			return r;
		}
		r = rename(w->tmp, dst) < 0 ? -errno : 0;
	}
	if (r < 0) {
		store_writer_abort(w);
		return ingot_fail(e, r, "%s: cannot move blob into the store: %s", dst, strerror(-r));
	}
	free(w->tmp);
	w->tmp = NULL;
	memcpy(out, got, 32);
	store_writer_abort(w);  /* frees the digest context */
	return 0;
}

int store_writer_commit(struct store_writer *w, uint8_t sha256[32], uint64_t *size, ingot_error *e)
{
	uint64_t sz = w->size;
	int r = writer_finish(w, "blob", NULL, sha256, e);
	if (r >= 0 && size)
		*size = sz;
	return r;
}

void store_writer_abort(struct store_writer *w)
{
	store_tmp_abort(w->fd, &w->tmp);
	w->fd = -1;
	EVP_MD_CTX_free(w->md);
	w->md = NULL;
}

int store_pin_mismatch(const char *name, const uint8_t want[32], const uint8_t got[32], ingot_error *e)
{
	char hw[SHA256_HEX_LEN + 1], hg[SHA256_HEX_LEN + 1];
	hex_encode(want, 32, hw);
	hex_encode(got, 32, hg);
	return ingot_fail(e, -EBADMSG, "%s: sha256 mismatch: recipe pins %s, file has %s", name, hw, hg);
}

int store_source_open(const char *name, const char *src, ingot_error *e)
{
	/* a symlink to a regular file is fine, one to /dev/zero is not */
	int fd = open_regular(src, 0, NULL, e);

	if (fd < 0)
		return ingot_prefix(e, "%s", name);
	return fd;
}

int store_check_source(const char *name, const char *src, const uint8_t want[32], ingot_error *e)
{
	_cleanup_close_ int fd = store_source_open(name, src, e);
	uint8_t got[32];
	int r;

	if (fd < 0)
		return fd;
	if ((r = sha256_fd(fd, src, got, NULL, e)) < 0)
		return ingot_prefix(e, "%s", name);
	if (memcmp(got, want, 32))
		return store_pin_mismatch(name, want, got, e);
	return 0;
}

int store_import(struct store *s, const char *name, const char *src, const uint8_t want[32],
		 ingot_error *e)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct store_writer w;
	uint8_t got[32];
	int r;

	if (store_has_blob(s, want)) {
		/* Already verified when it entered the store.  A source that is
		 * still there must still match its pin, so a changed file is
		 * reported rather than silently shadowed by the cache; a source
		 * that is gone is fine (offline rebuild from the store). */
		if (access(src, F_OK) < 0 && errno == ENOENT)
			return 0;
		return store_check_source(name, src, want, e);
	}
	if ((fd = store_source_open(name, src, e)) < 0)
		return fd;
	buf = xmalloc(COPY_BUF);
	if ((r = store_writer_begin(s, &w, e)) < 0)
		return r;
	for (;;) {
		ssize_t n = read(fd, buf, COPY_BUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;
			store_writer_abort(&w);
			return ingot_fail(e, -err, "%s: %s: read failed: %s", name, src, strerror(err));
		}
		if (n == 0)
			break;
		if ((r = store_writer_write(&w, buf, (size_t)n, e)) < 0) {
			store_writer_abort(&w);
			return r;
		}
	}
	return writer_finish(&w, name, want, got, e);
}

static int verify_dir(const struct store *s, const char *sub, uint64_t *checked, ingot_error *e)
{
	_cleanup_free_ char *dir = NULL;
	DIR *d;
	struct dirent *de;
	int r = 0;

	struct stat st;
	int fd;

	dir = xasprintf("%s/blobs/%s", s->root, sub);
	/* never through a symlink: what is checked is the store */
	if ((fd = open_dir_at(AT_FDCWD, dir, &st)) == -ENOTDIR)
		return ingot_fail(e, -ENOTDIR, "%s: expected a directory of blobs, got a %s", dir,
				  file_type_name(st.st_mode));
	if (fd < 0 || !(d = fdopendir(fd))) {
		int err = fd < 0 ? -fd : errno;
		if (fd >= 0)
			close(fd);
		return ingot_fail(e, -err, "%s: cannot open: %s", dir, strerror(err));
	}
	while ((de = readdir(d))) {
		uint8_t want[32], got[32];
		_cleanup_free_ char *p = NULL;
		if (de->d_name[0] == '.')
			continue;
		p = path_join(dir, de->d_name);
		if (!is_sha256_hex(de->d_name) || strncmp(de->d_name, sub, 2)) {
			r = ingot_fail(e, -EBADMSG, "%s: expected a blob named by its sha256, got '%s'", p, de->d_name);
			break;
		}
		hex_decode(de->d_name, want, 32);
		{
			/* what ingot writes: a regular file, not a FIFO (that hung
			 * verify), a device or a symlink to one */
			_cleanup_close_ int fd = open_regular(p, O_NOFOLLOW, NULL, e);
			if (fd < 0 || (r = sha256_fd(fd, p, got, NULL, e)) < 0) {
				r = fd < 0 ? fd : r;
				ingot_prefix(e, "store verify: blob");
				break;
			}
		}
		if (memcmp(want, got, 32)) {
			char hg[SHA256_HEX_LEN + 1];
			hex_encode(got, 32, hg);
			r = ingot_fail(e, -EBADMSG, "%s: corrupt blob: name says %s, content has %s", p, de->d_name, hg);
			break;
		}
		(*checked)++;
	}
	closedir(d);
	return r;
}

int store_verify(const struct store *s, uint64_t *checked, ingot_error *e)
{
	_cleanup_free_ char *blobs = path_join(s->root, "blobs");
	struct dirent **names = NULL;
	int n, r = 0;

	*checked = 0;
	/* Sorted, so the first bad blob reported is the same on every run. */
	n = scandir(blobs, &names, NULL, alphasort);
	if (n < 0)
		return ingot_fail(e, -errno, "%s: cannot open: %s", blobs, strerror(errno));
	for (int i = 0; i < n; i++) {
		if (r >= 0 && names[i]->d_name[0] != '.')
			r = verify_dir(s, names[i]->d_name, checked, e);
		free(names[i]);
	}
	free(names);
	return r;
}
