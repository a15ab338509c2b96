#include "verify/filecheck.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "lib/digest.h"
#include "lib/fileio.h"

struct entry {
	const char *path;
	struct manifest_entry f;
};

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

static int ignored(const char *path, const char *const *ignore)
{
	for (size_t i = 0; ignore && ignore[i]; i++)
		if (fnmatch(ignore[i], path, 0) == 0)
			return 1;
	return 0;
}

static const char *type_of(mode_t m)
{
	if (S_ISREG(m)) return "file";
	if (S_ISDIR(m)) return "dir";
	if (S_ISLNK(m)) return "symlink";
	if (S_ISCHR(m)) return "char";
	if (S_ISBLK(m)) return "block";
	if (S_ISFIFO(m)) return "fifo";
	if (S_ISSOCK(m)) return "socket";
	return "unknown";
}

/* Past FILES_LIST_MAX a list stops growing and the details say so. */
static void truncate_details(struct files_result *r)
{
	r->truncated = true;
	json_object_set_new(r->details, "truncated", json_true());
}

static void add_path(struct files_result *r, int list, const char *path)
{
	const char *cat = list == FILES_MISSING ? "missing" : "extra";
	json_t *arr = r->listed[list];
	if (json_array_size(arr) < FILES_LIST_MAX)
		json_array_append_new(arr, json_string(path));
	else
		truncate_details(r);
	if (json_array_size(r->evidence) < FILES_LIST_MAX) {
		_cleanup_free_ char *line = xasprintf("%s: %s", cat, path);
		json_array_append_new(r->evidence, json_string(line));
	}
}

static void add_change(struct files_result *r, const char *path, const char *field,
		       const char *expected, const char *got)
{
	json_t *arr = r->listed[FILES_CHANGED];
	if (json_array_size(arr) < FILES_LIST_MAX)
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s}", "path", path,
			"field", field, "expected", expected, "got", got));
	else
		truncate_details(r);
	if (json_array_size(r->evidence) < FILES_LIST_MAX) {
		_cleanup_free_ char *line = xasprintf("changed: %s: %s: manifest %s, node %s", path,
						      field, expected, got);
		json_array_append_new(r->evidence, json_string(line));
	}
}

/* Compare one present manifest entry (lstat'ed into st) with the node;
 * returns the number of differences recorded.  Counting the entry as
 * changed is check_entry's job alone, so no early return can record a
 * difference that the counts (and the verdict) miss. */
static int compare_entry(const char *host, const struct stat *st, const struct manifest_entry *m,
			 const char *path, struct files_result *r)
{
	const char *type = m->type, *mode = m->mode_text;
	int diffs = 0;
	char got[128], want[128];

	if (strcmp(type, type_of(st->st_mode))) {
		/* Nothing else is comparable across types. */
		add_change(r, path, "type", type, type_of(st->st_mode));
		return 1;
	}
	snprintf(got, sizeof(got), "%04o", (unsigned)(st->st_mode & 07777));
	if (mode && m->mode != (st->st_mode & 07777)) {
		add_change(r, path, "mode", mode, got);
		diffs++;
	}
	json_int_t uid = m->uid, gid = m->gid;
	if ((json_int_t)st->st_uid != uid) {
		snprintf(want, sizeof(want), "%lld", (long long)uid);
		snprintf(got, sizeof(got), "%u", (unsigned)st->st_uid);
		add_change(r, path, "uid", want, got);
		diffs++;
	}
	if ((json_int_t)st->st_gid != gid) {
		snprintf(want, sizeof(want), "%lld", (long long)gid);
		snprintf(got, sizeof(got), "%u", (unsigned)st->st_gid);
		add_change(r, path, "gid", want, got);
		diffs++;
	}
	if (!strcmp(type, "file")) {
		const char *sha = m->sha256_hex;
		uint8_t d[32];
		char hex[65];
		uint64_t size = 0;
		ingot_error fe = { 0 };
		json_int_t msize = m->size;
		if ((json_int_t)st->st_size != msize) {
			snprintf(want, sizeof(want), "%lld", (long long)msize);
			snprintf(got, sizeof(got), "%lld", (long long)st->st_size);
			add_change(r, path, "size", want, got);
			diffs++;
		}
		if (sha256_file(host, d, &size, &fe) < 0) {
			add_change(r, path, "sha256", sha ? sha : "?", "unreadable");
			diffs++;
		} else {
			hex_encode(d, 32, hex);
			if (!sha || strcmp(sha, hex)) {
				add_change(r, path, "sha256", sha ? sha : "?", hex);
				diffs++;
			}
		}
	} else if (!strcmp(type, "char") || !strcmp(type, "block")) {
		json_int_t ma = m->major, mi = m->minor;
		if ((json_int_t)major(st->st_rdev) != ma || (json_int_t)minor(st->st_rdev) != mi) {
			snprintf(want, sizeof(want), "%lld:%lld", (long long)ma, (long long)mi);
			snprintf(got, sizeof(got), "%u:%u", major(st->st_rdev), minor(st->st_rdev));
			add_change(r, path, "device", want, got);
			diffs++;
		}
	} else if (!strcmp(type, "symlink")) {
		const char *target = m->target;
		char buf[4097];
		ssize_t n = readlink(host, buf, sizeof(buf) - 1);
		buf[n < 0 ? 0 : n] = '\0';
		if (!target || strcmp(target, buf)) {
			add_change(r, path, "target", target ? target : "?", buf);
			diffs++;
		}
	}
	return diffs;
}

/* One manifest entry: missing, or compared and counted as changed. */
static int check_entry(const char *root, const struct manifest_entry *m, const char *path,
		       struct files_result *r, ingot_error *e)
{
	_cleanup_free_ char *host = path_join(root, path + 1);
	struct stat st;

	if (!host)
		return ingot_fail(e, -ENOMEM, "files: out of memory");
	if (lstat(host, &st) < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return ingot_fail(e, -errno, "files: %s: cannot stat: %s", path,
					  strerror(errno));
		r->missing++;
		add_path(r, FILES_MISSING, path);
		return 0;
	}
	if (compare_entry(host, &st, m, path, r) > 0)
		r->changed++;
	return 0;
}

/* Entries in a directory the manifest owns that the manifest does not list. */
static int scan_extra(const char *root, const char *dir, const struct entry *v, size_t n,
		      const char *const *ignore, struct files_result *r, ingot_error *e)
{
	_cleanup_free_ char *host = path_join(root, dir[1] ? dir + 1 : "");
	DIR *d = host ? opendir(host) : NULL;
	struct dirent *de;
	if (!host)
		return ingot_fail(e, -ENOMEM, "files: out of memory");
	if (!d) {
		/* Gone or no longer a directory: check_entry reported it.  Any
		 * other failure leaves the directory unchecked: not a pass. */
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return ingot_fail(e, -errno, "files: %s: cannot list: %s", dir, strerror(errno));
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		_cleanup_free_ char *p = xasprintf("%s/%s", strcmp(dir, "/") ? dir : "", de->d_name);
		struct entry key = { .path = p };
		if (bsearch(&key, v, n, sizeof(*v), entry_cmp) || ignored(p, ignore))
			continue;
		r->extra++;
		add_path(r, FILES_EXTRA, p);
	}
	closedir(d);
	return 0;
}

int files_check(const char *root, const struct manifest *m, const char *const *ignore,
		struct files_result *out, ingot_error *e)
{
	size_t n = m->n_files, i, next = 0;
	_cleanup_free_ struct entry *v = NULL;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!(m->have & MF_FILES))
		return ingot_fail(e, -EINVAL, "manifest: field 'files': expected an array");
	v = xcalloc(n ? n : 1, sizeof(*v));
	json_t *changed = json_array(), *missing = json_array(), *extra = json_array();
	out->details = changed && missing && extra ?
		json_pack("{s:O, s:O, s:O, s:b}", "missing", missing, "extra", extra, "changed", changed,
			  "truncated", 0) : NULL;
	/* details holds the lists; the result writes to them directly */
	out->listed[FILES_CHANGED] = changed;
	out->listed[FILES_MISSING] = missing;
	out->listed[FILES_EXTRA] = extra;
	json_decref(changed);
	json_decref(missing);
	json_decref(extra);
	out->evidence = json_array();
	if (!out->details || !out->evidence) {
		files_result_free(out);
		return ingot_fail(e, -ENOMEM, "files: out of memory");
	}
	for (i = 0; i < n && manifest_next_entry(m, &next, &v[i].f); i++) {
		const char *path = v[i].f.path;
		/* A verified manifest passed the schema; an unverified one is
		 * still checked, so this is not only the schema's word. */
		if (!path || path[0] != '/' || strstr(path, "/../") || !v[i].f.type || !v[i].f.has_ids) {
			files_result_free(out);
			return ingot_fail(e, -EINVAL, "manifest: files[%zu]: expected path (absolute), "
					  "type, uid and gid", i);
		}
		v[i].path = path;
	}
	qsort(v, n, sizeof(*v), entry_cmp);
	for (i = 0; i < n && !err; i++) {
		if (ignored(v[i].path, ignore))
			continue;
		out->checked++;
		err = check_entry(root, &v[i].f, v[i].path, out, e);
		if (!err && !strcmp(v[i].f.type, "dir"))
			err = scan_extra(root, v[i].path, v, n, ignore, out, e);
	}
	if (err) {
		files_result_free(out);
		return err;
	}
	return 0;
}

bool files_result_clean(const struct files_result *r)
{
	if (r->missing || r->extra || r->changed || r->truncated)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(r->listed); i++)
		if (json_array_size(r->listed[i]))
			return false;
	return json_array_size(r->evidence) == 0;
}

void files_result_free(struct files_result *r)
{
	json_decref(r->details);
	json_decref(r->evidence);
	r->details = r->evidence = NULL;
	memset(r->listed, 0, sizeof(r->listed));
}
