/* Units for builder/tree.c: byte-order sorting, implicit parents,
 * conflicts and replace, entries under non-directories, the hash index. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "builder/tree.h"

static int add(struct tree *t, const char *path, enum tree_type type, const char *origin, bool replace,
	       ingot_error *e)
{
	struct tree_entry ent = { .path = (char *)path, .type = type, .mode = type == TREE_DIR ? 0755 : 0644,
				  .origin = (char *)origin };
	if (type == TREE_SYMLINK)
		ent.target = "elsewhere";
	return tree_add(t, &ent, replace, e);
}

static void test_sort_and_parents(void **state)
{
	struct tree t;
	ingot_error e = { 0 };
	(void)state;
	tree_init(&t);
	/* inserted in a scrambled order; "a/b/c" and "a" are implied */
	assert_int_equal(add(&t, "z/\xc3\xa9", TREE_FILE, "x", false, &e), 0);
	assert_int_equal(add(&t, "a/b/c/d", TREE_FILE, "x", false, &e), 0);
	assert_int_equal(add(&t, "a/b.c", TREE_FILE, "x", false, &e), 0);
	assert_int_equal(add(&t, "A", TREE_FILE, "x", false, &e), 0);
	assert_int_equal(add(&t, "a/b-c", TREE_FILE, "x", false, &e), 0);
	assert_int_equal(add(&t, "a/b", TREE_DIR, "x", false, &e), 0);
	assert_int_equal(tree_finalize(&t, &e), 0);
	/* strcmp order of full paths: '-' (0x2d) < '.' (0x2e) < '/' (0x2f), so
	 * "a/b-c" and "a/b.c" sort before "a/b/c"; 'A' < 'a'; UTF-8 bytes last. */
	assert_int_equal(t.n, 9);
	const char *got[9];
	for (size_t i = 0; i < t.n; i++)
		got[i] = t.v[i].path;
	assert_string_equal(got[0], "A");
	assert_string_equal(got[1], "a");
	assert_string_equal(got[2], "a/b");
	assert_string_equal(got[3], "a/b-c");
	assert_string_equal(got[4], "a/b.c");
	assert_string_equal(got[5], "a/b/c");
	assert_string_equal(got[6], "a/b/c/d");
	assert_string_equal(got[7], "z");
	assert_string_equal(got[8], "z/\xc3\xa9");
	for (size_t i = 1; i < t.n; i++)
		assert_true(strcmp(t.v[i - 1].path, t.v[i].path) < 0);
	struct tree_entry *p = tree_find(&t, "a/b/c");
	assert_non_null(p);
	assert_true(p->implicit);
	assert_int_equal(p->type, TREE_DIR);
	assert_int_equal(p->mode, 0755);
	assert_int_equal(p->uid, 0);
	assert_false(tree_find(&t, "a/b")->implicit);
	assert_null(tree_find(&t, "a/b/c/d/e"));
	assert_int_equal(tree_count(&t, TREE_DIR), 4);
	assert_int_equal(tree_count(&t, TREE_FILE), 5);
	tree_free(&t);
}

static void test_conflict_and_replace(void **state)
{
	struct tree t;
	ingot_error e = { 0 };
	(void)state;
	tree_init(&t);
	assert_int_equal(add(&t, "etc/x", TREE_FILE, "first", false, &e), 0);
	assert_int_equal(add(&t, "etc/x", TREE_FILE, "second", false, &e), -EEXIST);
	assert_string_equal(e.msg, "second: path 'etc/x' also written by 'first' (mark one artifact 'replace: true' to say which wins)");
	assert_int_equal(add(&t, "etc/x", TREE_SYMLINK, "third", true, &e), 0);
	struct tree_entry *x = tree_find(&t, "etc/x");
	assert_string_equal(x->origin, "third");
	assert_int_equal(x->type, TREE_SYMLINK);
	assert_string_equal(x->target, "elsewhere");
	/* directories merge; the later mode wins and it stops being implicit */
	struct tree_entry d = { .path = "etc", .type = TREE_DIR, .mode = 0700, .origin = "dirs" };
	assert_int_equal(add(&t, "etc", TREE_DIR, "a", false, &e), 0);
	assert_int_equal(tree_add(&t, &d, false, &e), 0);
	assert_int_equal(tree_find(&t, "etc")->mode, 0700);
	assert_int_equal(t.n, 2);
	tree_free(&t);
}

static void test_under_non_directory(void **state)
{
	struct tree t;
	ingot_error e = { 0 };
	(void)state;
	tree_init(&t);
	assert_int_equal(add(&t, "lib", TREE_SYMLINK, "links", false, &e), 0);
	assert_int_equal(add(&t, "lib/evil", TREE_FILE, "pkg", false, &e), 0);
	assert_int_equal(tree_finalize(&t, &e), -ENOTDIR);
	assert_string_equal(e.msg, "pkg: 'lib/evil' goes through 'lib', which is a symlink from 'links', not a directory");
	tree_free(&t);

	tree_init(&t);
	assert_int_equal(add(&t, "a/f", TREE_FILE, "one", false, &e), 0);
	assert_int_equal(add(&t, "a/f/g/h", TREE_FILE, "two", false, &e), 0);
	assert_int_equal(tree_finalize(&t, &e), -ENOTDIR);
	assert_string_equal(e.msg, "two: 'a/f/g/h' goes through 'a/f', which is a file from 'one', not a directory");
	tree_free(&t);
}

static void test_bad_paths(void **state)
{
	struct tree t;
	ingot_error e = { 0 };
	static const char *const badp[] = { "", "/etc", "a//b", "a/./b", "../x", "a/..", "a/" };
	(void)state;
	tree_init(&t);
	for (size_t i = 0; i < sizeof(badp) / sizeof(badp[0]); i++)
		assert_true(add(&t, badp[i], TREE_FILE, "x", false, &e) < 0);
	assert_int_equal(t.n, 0);
	tree_free(&t);
}

/* 200k entries: the hash index keeps add + find linear overall. */
static void test_many(void **state)
{
	struct tree t;
	ingot_error e = { 0 };
	char p[64];
	(void)state;
	tree_init(&t);
	for (unsigned i = 0; i < 200000; i++) {
		snprintf(p, sizeof(p), "d%u/f%u", i % 1000, i);
		assert_int_equal(add(&t, p, TREE_FILE, "x", false, &e), 0);
	}
	assert_int_equal(add(&t, "d7/f7", TREE_FILE, "y", false, &e), -EEXIST);
	for (unsigned i = 0; i < 200000; i += 997) {
		snprintf(p, sizeof(p), "d%u/f%u", i % 1000, i);
		assert_non_null(tree_find(&t, p));
	}
	assert_int_equal(tree_finalize(&t, &e), 0);
	assert_int_equal(t.n, 201000);
	snprintf(p, sizeof(p), "d%u/f%u", 123, 4123);
	assert_string_equal(tree_find(&t, p)->path, p);
	assert_non_null(tree_find(&t, "d999"));
	tree_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sort_and_parents),
		cmocka_unit_test(test_conflict_and_replace),
		cmocka_unit_test(test_under_non_directory),
		cmocka_unit_test(test_bad_paths),
		cmocka_unit_test(test_many),
	};
	return cmocka_run_group_tests_name("tree", tests, NULL, NULL);
}
