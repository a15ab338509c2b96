/* Fixtures shared by the unit tests: temporary directories, a store in
 * one, whole-file reads, running a helper command, a tuple from YAML and
 * comparing two trees.  Header-only (static inline) because the Makefile
 * builds each tests/unit/test_*.c alone against libingot.a. */
#ifndef INGOT_TEST_HELPERS_H
#define INGOT_TEST_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/bio.h>
#include <openssl/pem.h>

#include "builder/store.h"
#include "builder/tree.h"
#include "keys/key.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/yamlx.h"
#include "recipes/tuple.h"

/* Makes /tmp/ingot-TAG.XXXXXX into dir (size bytes); 0 or -1, as cmocka
 * setup functions return. */
static inline int th_mkdtemp(char *dir, size_t size, const char *tag)
{
	int n = snprintf(dir, size, "/tmp/ingot-%s.XXXXXX", tag);
	if (n < 0 || (size_t)n >= size)
		return -1;
	return mkdtemp(dir) ? 0 : -1;
}

static inline int th_remove_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

/* rm -rf without a shell, so no quoting of the path can go wrong. */
static inline int th_rmtree(const char *dir)
{
	return nftw(dir, th_remove_cb, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

/* DIR/NAME, for the caller to free. */
static inline char *th_path(const char *dir, const char *name)
{
	char *p = path_join(dir, name);
	assert_non_null(p);
	return p;
}

/* A temporary directory holding an open store in DIR/store. */
static inline int th_store_setup(char *dir, size_t size, const char *tag, struct store *s)
{
	ingot_error e = { 0 };
	_cleanup_free_ char *root = NULL;
	if (th_mkdtemp(dir, size, tag) < 0 || !(root = path_join(dir, "store")))
		return -1;
	return store_open(s, root, &e) < 0 ? -1 : 0;
}

static inline int th_store_teardown(const char *dir, struct store *s)
{
	store_close(s);
	return th_rmtree(dir);
}

/* The whole file (NUL-terminated); the test fails if it cannot be read. */
static inline uint8_t *th_slurp(const char *path, size_t *len)
{
	ingot_error e = { 0 };
	char *buf = NULL;
	if (read_file(path, (size_t)1 << 32, &buf, len, &e) < 0)
		fail_msg("%s", e.msg);
	return (uint8_t *)buf;
}

/* XOR the byte at off of path with mask (damage a file on disk). */
static inline void th_flip_byte(const char *path, off_t off, uint8_t mask)
{
	int fd = open(path, O_RDWR);
	uint8_t b;
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= mask;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

/* A shell command's exit status, -1 if it could not run or was killed. */
static inline int th_run(const char *cmd)
{
	int r = system(cmd);
	return r == -1 || !WIFEXITED(r) ? -1 : WEXITSTATUS(r);
}

/* The tuple of "tuple:\n" BODY; the test fails if it does not parse. */
static inline struct tuple *th_tuple_of(const char *body)
{
	_cleanup_ydoc_ struct ydoc d = { 0 };
	struct tuple *t = NULL;
	ingot_error e = { 0 };
	char buf[2048];

	snprintf(buf, sizeof(buf), "tuple:\n%s", body);
	assert_int_equal(ydoc_load_buf(&d, "t.yaml", buf, strlen(buf), &e), 0);
	if (tuple_parse(&d, ydoc_get(&d, ydoc_root(&d), "tuple"), &t, &e) < 0)
		fail_msg("%s", e.msg);
	return t;
}

static inline void th_assert_str_or_null(const char *a, const char *b)
{
	if (a && b)
		assert_string_equal(a, b);
	else
		assert_ptr_equal(a, b);
}

/* Same entries, in the same order, with the same metadata and content. */
static inline void th_assert_trees_equal(const struct tree *a, const struct tree *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_string_equal(a->v[i].path, b->v[i].path);
		assert_int_equal(a->v[i].type, b->v[i].type);
		assert_int_equal(a->v[i].mode, b->v[i].mode);
		assert_memory_equal(a->v[i].sha256, b->v[i].sha256, 32);
		th_assert_str_or_null(a->v[i].origin, b->v[i].origin);
		th_assert_str_or_null(a->v[i].target, b->v[i].target);
	}
}

/* A signing key of type t generated as DIR/NAME.key and DIR/NAME.pub. */
static inline struct signing_key *th_signing_key_of(enum key_type t, const char *dir, const char *name)
{
	_cleanup_free_ char *base = th_path(dir, name), *kp = NULL;
	struct signing_key *k = NULL;
	ingot_error e = { 0 };

	if (key_generate(t, base, NULL, NULL, &e) < 0 || asprintf(&kp, "%s.key", base) < 0 ||
	    signing_key_load(kp, &k, &e) < 0)
		fail_msg("%s", e.msg);
	return k;
}

/* An Ed25519 one. */
static inline struct signing_key *th_signing_key(const char *dir, const char *name)
{
	return th_signing_key_of(KEY_ED25519, dir, name);
}

/* The SubjectPublicKeyInfo PEM of k (malloc'd). */
static inline char *pem_of(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *s;
	long n;

	assert_non_null(b);
	assert_int_equal(PEM_write_bio_PUBKEY(b, k), 1);
	n = BIO_get_mem_data(b, &data);
	s = strndup(data, (size_t)n);
	BIO_free(b);
	return s;
}

#endif
