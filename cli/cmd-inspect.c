/* ingot inspect: list what a squashfs image contains. */
#include <ctype.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "image/inspect.h"
#include "image/inspect-doc.h"
#include "cli/cli.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/escape.h"
#include "lib/fileio.h"
#include "lib/json.h"

static const struct cli_command inspect_cmd = {
	.name = "inspect",
	.summary = "list an image's files, or describe a manifest or envelope",
	.synopsis =
	"    ingot inspect [--json] IMAGE\n"
	"    ingot inspect [--json] MANIFEST.json | ENVELOPE.dsse.json\n",
	.description =
	"    Reads a squashfs image (NAME.sqfs) with libsquashfs and prints one line per\n"
	"    entry, sorted by path in byte order (the manifest's order):\n"
	"\n"
	"      MODE UID/GID SIZE SHA256 PATH [-> TARGET]\n"
	"\n"
	"    MODE is ls-style (drwxr-xr-x); SIZE is the content length of files and\n"
	"    MAJOR,MINOR for devices (0 otherwise); SHA256 is the sha256 of a file's\n"
	"    content, as the manifest's files[].sha256, and '-' for anything else.\n"
	"    Every file's data is read and decompressed, so a damaged compressed block\n"
	"    is found. The root directory itself is not listed. Bytes outside printable\n"
	"    ASCII in paths are shown as \\ooo octal escapes.\n"
	"\n"
	"    Given a manifest or a DSSE envelope (a JSON file), prints what it claims:\n"
	"    recipe, serial, expiry, image digest, verity root, the tuple, and for an\n"
	"    envelope the signers' key ids (marked \"not verified\": use\n"
	"    'ingot verify-manifest' to check them against a keyring).\n",
	.more =
	"EXIT STATUS\n"
	"    0   the image was read completely\n"
	"    1   the image is unreadable, truncated or corrupted (one line on stderr),\n"
	"        or the JSON document is not a manifest or envelope\n"
	"    64  usage error\n"
	"\n"
	"EXAMPLES\n"
	"    ingot inspect out/h100.sqfs\n"
	"    ingot inspect out/h100.sqfs | grep ' /usr/lib/firmware/'\n"
	"    ingot inspect --json out/h100.sqfs | jq -r '.files[] | select(.type==\"file\") | .sha256'\n",
};

static void print_escaped(const char *s)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_add_escaped_octal(&sb, s, strlen(s));
	fwrite(sb.buf, 1, sb.len, stdout);
}

static int print_line(const struct image_entry *ent, void *user, ingot_error *e)
{
	char mode[11], hex[SHA256_HEX_LEN + 1] = "-";

	(void)user; (void)e;
	image_mode_string(ent->type, ent->mode, mode);
	printf("%s %u/%u ", mode, ent->uid, ent->gid);
	if (ent->type == TREE_CHR || ent->type == TREE_BLK)
		printf("%u,%u ", ent->rdev_major, ent->rdev_minor);
	else
		printf("%llu ", (unsigned long long)ent->size);
	if (ent->type == TREE_FILE)
		hex_encode(ent->sha256, 32, hex);
	printf("%s ", hex);
	print_escaped(ent->path);
	if (ent->target) {
		fputs(" -> ", stdout);
		print_escaped(ent->target);
	}
	putchar('\n');
	return 0;
}

static int add_json(const struct image_entry *ent, void *user, ingot_error *e)
{
	json_t *o = image_entry_to_json(ent);

	if (!o || json_array_append_new(user, o) < 0)
		return ingot_fail(e, -EINVAL, "%s: cannot represent in JSON (not UTF-8?)",
				  ent->path);
	return 0;
}

static json_t *summary_json(const struct image_summary *s)
{
	char mode[8];

	snprintf(mode, sizeof(mode), "%04o", s->root_mode);
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:{s:s, s:I, s:I}}",
			 "compression", s->compression, "block_size", (json_int_t)s->block_size,
			 "mtime", (json_int_t)s->mtime, "inodes", (json_int_t)s->inodes,
			 "bytes_used", (json_int_t)s->bytes_used, "size", (json_int_t)s->file_size,
			 "root", "mode", mode, "uid", (json_int_t)s->root_uid,
			 "gid", (json_int_t)s->root_gid);
}

/* JSON documents start with '{'; squashfs images with "hsqs". */
static int looks_like_json(const char *path)
{
	_cleanup_close_ int fd = open_regular(path, 0, NULL, NULL);
	char buf[64];
	ssize_t n;

	if (fd < 0 || (n = read(fd, buf, sizeof(buf))) <= 0)
		return 0;
	for (ssize_t i = 0; i < n; i++)
		if (!isspace((unsigned char)buf[i]))
			return buf[i] == '{';
	return 0;
}

int cmd_inspect(int argc, char **argv)
{
	struct image_summary sum;
	ingot_error e = { 0 };
	bool json = false;
	int c, r;
	const struct cli_option opts[] = {
		OPT__JSON(&json,
			 "print {\"image\": {...}, \"files\": [...]} as canonical JSON;\n"
			 "files[] items have the manifest's fields (path, type, mode,\n"
			 "uid, gid, size, sha256, target) plus mtime and, for devices,\n"
			 "major and minor"),
		OPT_END(),
	};

	if ((c = cli_parse(&inspect_cmd, opts, argc, argv, &optind)) >= 0)
		return c;
	if (argc - optind != 1)
		return cli_usage_error("inspect", "expected one IMAGE argument, got %d",
				       argc - optind);
	if (looks_like_json(argv[optind])) {
		/* Manifests and DSSE envelopes: who signed, expiry, tuple. */
		r = inspect_document(argv[optind], stdout, json, &e);
		return r < 0 ? cli_error(&e, EXIT_FAILURE_) : EXIT_OK;
	}
	if (!json) {
		r = image_list(argv[optind], print_line, NULL, NULL, &e);
		if (fflush(stdout) != 0 && r == 0)
			r = ingot_fail(&e, -EIO, "writing to stdout failed");
		return r < 0 ? cli_error(&e, EXIT_FAILURE_) : EXIT_OK;
	}

	_cleanup_json_ json_t *files = json_array();
	_cleanup_json_ json_t *doc = NULL;
	_cleanup_free_ char *text = NULL;
	if (!files)
		return cli_error(&(ingot_error){ .msg = "out of memory" }, EXIT_FAILURE_);
	r = image_list(argv[optind], add_json, files, &sum, &e);
	if (r < 0)
		return cli_error(&e, EXIT_FAILURE_);
	doc = json_pack("{s:o, s:O}", "image", summary_json(&sum), "files", files);
	text = doc ? json_canonical(doc, NULL) : NULL;
	if (!text)
		return cli_error(&(ingot_error){ .msg = "out of memory" }, EXIT_FAILURE_);
	fputs(text, stdout);
	if (fflush(stdout) != 0)
		return cli_error(&(ingot_error){ .msg = "writing to stdout failed" }, EXIT_FAILURE_);
	return EXIT_OK;
}
