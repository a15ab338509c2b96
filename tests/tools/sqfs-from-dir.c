/* Test and benchmark tool: pack a directory into a squashfs image with
 * ingot's writer (builder/image.c), optionally with its dm-verity tree.
 *
 *   sqfs-from-dir [-c COMP] [-l LEVEL] [-b BLOCK] [-j WORKERS] [-m MTIME]
 *                 [--all-root] [-V VERITY [--salt HEX]] -s STORE DIR IMAGE
 *
 * Every file's bytes go into the content-addressed store STORE first,
 * exactly as `ingot build` stages them; then the staging tree is written.
 * Prints key=value lines (image_size, inodes, write_seconds and, with -V,
 * sha256, root_hash, salt, uuid, data_blocks, verity_seconds) on stdout;
 * the *_seconds values time image_write and verity_build alone, for
 * benchmarks (bench/). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "builder/image.h"
#include "builder/store.h"
#include "builder/tree.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"

struct walk {
	struct tree *t;
	struct store *s;
	bool all_root;
	ingot_error *e;
};

static int add_file(struct walk *w, const char *abs, struct tree_entry *ent)
{
	_cleanup_close_ int fd = open(abs, O_RDONLY | O_CLOEXEC);
	struct store_writer sw;
	uint8_t buf[1 << 16];
	int r;

	if (fd < 0)
		return ingot_fail(w->e, -errno, "%s: %s", abs, strerror(errno));
	r = store_writer_begin(w->s, &sw, w->e);
	if (r < 0)
		return r;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			store_writer_abort(&sw);
			return ingot_fail(w->e, -errno, "%s: %s", abs, strerror(errno));
		}
		if (n == 0)
			break;
		r = store_writer_write(&sw, buf, (size_t)n, w->e);
		if (r < 0) {
			store_writer_abort(&sw);
			return r;
		}
	}
	ent->loc.fresh = true;   /* hashed on its way in, as a build's unpacked files are */
	return store_writer_commit(&sw, ent->sha256, &ent->size, w->e);
}

static int walk_dir(struct walk *w, const char *root, const char *rel)
{
	_cleanup_free_ char *dirpath = *rel ? path_join(root, rel) : strdup(root);
	DIR *d = dirpath ? opendir(dirpath) : NULL;
	struct dirent *de;
	int r = 0;

	if (!d)
		return ingot_fail(w->e, -errno, "%s: %s", dirpath ? dirpath : root, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		_cleanup_free_ char *relp = NULL, *abs = NULL, *target = NULL;
		struct tree_entry ent = { 0 };
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		relp = *rel ? path_join(rel, de->d_name) : strdup(de->d_name);
		abs = relp ? path_join(root, relp) : NULL;
		if (!abs) {
			r = ingot_fail(w->e, -ENOMEM, "out of memory");
			break;
		}
		if (lstat(abs, &st) < 0) {
			r = ingot_fail(w->e, -errno, "%s: %s", abs, strerror(errno));
			break;
		}
		ent.path = relp;
		ent.mode = st.st_mode & 07777;
		ent.uid = w->all_root ? 0 : st.st_uid;
		ent.gid = w->all_root ? 0 : st.st_gid;
		ent.origin = "sqfs-from-dir";
		switch (st.st_mode & S_IFMT) {
		case S_IFDIR: ent.type = TREE_DIR; break;
		case S_IFREG:
			ent.type = TREE_FILE;
			r = add_file(w, abs, &ent);
			break;
		case S_IFLNK:
			ent.type = TREE_SYMLINK;
			target = calloc(1, (size_t)st.st_size + 1);
			if (!target || readlink(abs, target, (size_t)st.st_size + 1) != st.st_size)
				r = ingot_fail(w->e, -EIO, "%s: readlink failed", abs);
			ent.target = target;
			break;
		case S_IFCHR: case S_IFBLK:
			ent.type = S_ISCHR(st.st_mode) ? TREE_CHR : TREE_BLK;
			ent.rdev_major = major(st.st_rdev);
			ent.rdev_minor = minor(st.st_rdev);
			break;
		case S_IFIFO: ent.type = TREE_FIFO; break;
		case S_IFSOCK: ent.type = TREE_SOCK; break;
		default:
			r = ingot_fail(w->e, -EINVAL, "%s: unsupported file type", abs);
		}
		if (r == 0)
			r = tree_add(w->t, &ent, false, w->e);
		if (r == 0 && ent.type == TREE_DIR)
			r = walk_dir(w, root, relp);
		if (r < 0)
			break;
	}
	closedir(d);
	return r;
}

static void usage(FILE *f)
{
	fputs("usage: sqfs-from-dir [-c COMP] [-l LEVEL] [-b BLOCK] [-j WORKERS] [-m MTIME]\n"
	      "                     [--all-root] [-V VERITY [--salt HEX]] -s STORE DIR IMAGE\n", f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "store", required_argument, NULL, 's' },
		{ "compression", required_argument, NULL, 'c' },
		{ "level", required_argument, NULL, 'l' },
		{ "block-size", required_argument, NULL, 'b' },
		{ "workers", required_argument, NULL, 'j' },
		{ "mtime", required_argument, NULL, 'm' },
		{ "all-root", no_argument, NULL, 'R' },
		{ "verity", required_argument, NULL, 'V' },
		{ "salt", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct image_opts io = { .compression = "zstd", .block_size = 131072, .workers = 1 };
	const char *store_root = NULL, *verity_path = NULL, *salt_hex = NULL;
	_cleanup_atomic_ struct atomic_file img = { .fd = -1 };
	_cleanup_atomic_ struct atomic_file ver = { .fd = -1 };
	struct image_info ii;
	struct verity_info vi;
	struct store s = { 0 };
	struct tree t;
	ingot_error e = { 0 };
	uint8_t salt[32] = { 0 };
	bool all_root = false;
	struct timespec t0, t1, t2;
	int c, r;

	while ((c = getopt_long(argc, argv, "s:c:l:b:j:m:V:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': store_root = optarg; break;
		case 'c': io.compression = optarg; break;
		case 'l': io.level = atoi(optarg); break;
		case 'b': io.block_size = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'j': io.workers = (unsigned)atoi(optarg); break;
		case 'm': io.mtime = strtoull(optarg, NULL, 0); break;
		case 'R': all_root = true; break;
		case 'V': verity_path = optarg; break;
		case 'S': salt_hex = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 64;
		}
	}
	if (argc - optind != 2 || !store_root) {
		usage(stderr);
		return 64;
	}
	if (salt_hex && (strlen(salt_hex) != 64 || hex_decode(salt_hex, salt, 32) < 0)) {
		fprintf(stderr, "sqfs-from-dir: --salt: expected 64 hex digits\n");
		return 64;
	}

	tree_init(&t);
	r = store_open(&s, store_root, &e);
	if (r == 0) {
		struct walk w = { .t = &t, .s = &s, .all_root = all_root, .e = &e };
		r = walk_dir(&w, argv[optind], "");
	}
	if (r == 0)
		r = tree_finalize(&t, &e);
	if (r == 0)
		r = atomic_open(&img, argv[optind + 1], 0644, &e);
	/* The store is ready before the writer runs, as it is for a build
	 * that finds it filled: its writeback must not be timed as the
	 * writer's (gensquashfs, too, packs a tree already on disk). */
	if (r == 0)
		syncfs(img.fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (r == 0)
		r = image_write(&t, &s, &io, img.fd, argv[optind + 1], &ii, &e);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	t2 = t1;
	if (r == 0 && verity_path) {
		r = atomic_open(&ver, verity_path, 0644, &e);
		if (r == 0)
			r = verity_build(img.fd, argv[optind + 1], ver.fd, verity_path, salt, 32,
					 &vi, &e);
		clock_gettime(CLOCK_MONOTONIC, &t2);
		if (r == 0)
			r = atomic_commit(&ver, &e);
	}
	if (r == 0)
		r = atomic_commit(&img, &e);
	tree_free(&t);
	store_close(&s);
	if (r < 0) {
		fprintf(stderr, "sqfs-from-dir: %s\n", e.msg);
		return 1;
	}
	printf("image_size=%llu\ninodes=%llu\nwrite_seconds=%.3f\n", (unsigned long long)ii.size,
	       (unsigned long long)ii.inodes,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (verity_path) {
		char hex[65], uuid[37];
		hex_encode(vi.image_sha256, 32, hex);
		printf("sha256=%s\n", hex);
		hex_encode(vi.root_hash, 32, hex);
		printf("root_hash=%s\n", hex);
		hex_encode(vi.salt, vi.salt_len, hex);
		printf("salt=%s\n", hex);
		verity_uuid_string(vi.uuid, uuid);
		printf("uuid=%s\ndata_blocks=%llu\nverity_seconds=%.3f\n", uuid,
		       (unsigned long long)vi.data_blocks,
		       (double)(t2.tv_sec - t1.tv_sec) + (double)(t2.tv_nsec - t1.tv_nsec) / 1e9);
	}
	return 0;
}
