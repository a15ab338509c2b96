/* libFuzzer harness: the squashfs image reader behind `ingot inspect`
 * (image/inspect.h image_list): the input is the image's bytes.
 * Superblock cross-checks, table bounds, the directory walk, inode count,
 * file data through the data reader.  Besides "no crash, no leak, no
 * huge allocation" (rss_limit_mb), a listing that succeeds must be
 * internally consistent: absolute paths in strictly ascending order. */
#include <fcntl.h>
#include "tests/fuzz/fuzz_common.h"
#include "image/inspect.h"
#include "lib/fileio.h"

static char image_path[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	snprintf(image_path, sizeof(image_path), "%s/image.sqfs", fuzz_scratch_dir());
	return 0;
}

struct seen {
	char *last;
	size_t n;
};

static int check_entry(const struct image_entry *ent, void *user, ingot_error *e)
{
	struct seen *s = user;

	(void)e;
	if (ent->path[0] != '/' || (s->last && strcmp(s->last, ent->path) >= 0))
		abort();
	free(s->last);
	s->last = strdup(ent->path);
	if (!s->last)
		abort();
	s->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen s = { 0 };
	struct image_summary sum;
	ingot_error e = { 0 };
	int fd = open(image_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || write_all(fd, data, size) < 0 || close(fd) < 0)
		abort();
	if (image_list(image_path, check_entry, &s, &sum, &e) == 0) {
		/* every inode but the root is listed at least once */
		if (sum.inodes == 0 || s.n + 1 < sum.inodes)
			abort();
		fuzz_note("image", NULL);
	} else {
		if (!e.msg[0])
			abort();   /* a refusal says why */
		fuzz_note("image", e.msg);
	}
	free(s.last);
	return 0;
}
