/* ingot store: look after the artifact store a build keeps. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/gc.h"
#include "builder/store.h"
#include "cli/cli.h"

static const struct cli_command store_cmd = {
	.name = "store",
	.summary = "garbage-collect and check the artifact store",
	.synopsis =
	"    ingot store gc [--store DIR] [--dry-run] [-j N] RECIPE...\n"
	"    ingot store verify [--store DIR]\n",
	.description =
	"    The store (docs/builder.md, \"The store\") is the cache ingot build keeps:\n"
	"    artifacts unpacked by pin, blobs by sha256, the compressed-block and file\n"
	"    caches. It only grows; a pipeline that builds every day needs gc.\n"
	"\n"
	"    gc keeps what builds of the given recipes use and removes the rest: each\n"
	"    recipe's artifacts (their listings and packs, file artifacts' blobs), the\n"
	"    blobs of every file its image holds, and the file cache's entries for those\n"
	"    files, compacted into one segment per compressor (a build reads at most 256\n"
	"    segments: a store used for hundreds of builds needs this to keep its\n"
	"    file cache useful). The block cache (blocks/) is removed whole: it is keyed\n"
	"    by data block and cannot be tied to a recipe, and the file cache already\n"
	"    serves every unchanged file. Every recipe is resolved first, as ingot build\n"
	"    would (an artifact not in the store yet is unpacked into it); if one\n"
	"    fails, nothing is removed. gc takes the store's lock exclusively and\n"
	"    refuses while a build holds it; a build started during a gc waits for it.\n"
	"    What gc removes costs a later build time, never correctness: the store\n"
	"    is a cache. A summary of what was kept and removed goes to stdout.\n"
	"    gc never follows a symbolic link and removes nothing outside the store:\n"
	"    a symlink, FIFO or device found in it is left in place, counted on the\n"
	"    'skipped' line, and the first is named in a warning on stderr.\n"
	"\n"
	"    verify re-hashes every blob and reports the first whose bytes do not\n"
	"    match its name, or that is not a regular file (a symlink is not\n"
	"    followed).\n",
	.more =
	"ENVIRONMENT\n"
	"    SOURCE_DATE_EPOCH  as for ingot build (a recipe's inline files)\n"
	"    XDG_CACHE_HOME     parent of the default store\n"
	"\n"
	"EXIT STATUS\n"
	"    0   done (gc), or every blob matches (verify)\n"
	"    1   failure: a recipe that does not load or resolve, the store in use, an\n"
	"        I/O error, a damaged blob\n"
	"    64  usage error\n"
	"\n"
	"EXAMPLES\n"
	"    ingot store gc --store /var/cache/ingot pools/h100.yaml pools/mi300x.yaml\n"
	"    ingot store gc --dry-run recipes/demo.yaml\n"
	"    ingot store verify --store out/store\n",
};

static void print_bytes(const char *what, uint64_t b)
{
	printf("%-10s%.1f MiB\n", what, (double)b / (1024.0 * 1024.0));
}

static int store_gc_main(const struct store_gc_opts *o)
{
	struct store_gc_stats st;
	ingot_error e = { 0 };

	if (store_gc(o, &st, &e) < 0) {
		store_gc_stats_free(&st);
		return cli_error(&e, EXIT_FAILURE_);
	}
	if (st.skipped)
		fprintf(stderr, "ingot: warning: store gc: %s, not followed and left in place (%llu such entr%s: "
			"not the store's; remove them yourself)\n", st.skipped_first,
			(unsigned long long)st.skipped, st.skipped == 1 ? "y" : "ies");
	printf("%s\n", o->dry_run ? "dry run: nothing removed" : "store gc done");
	printf("artifacts %llu kept, %llu removed\n", (unsigned long long)st.artifacts_kept,
	       (unsigned long long)st.artifacts_removed);
	printf("blobs     %llu kept, %llu removed\n", (unsigned long long)st.blobs_kept,
	       (unsigned long long)st.blobs_removed);
	printf("files     %llu file-cache entries kept, %llu removed (%llu segments read, %llu damaged)\n",
	       (unsigned long long)st.files_kept, (unsigned long long)st.files_removed,
	       (unsigned long long)st.file_segments, (unsigned long long)st.file_segments_damaged);
	printf("blocks    %llu block-cache segments removed\n", (unsigned long long)st.block_segments_removed);
	printf("skipped   %llu entries not the store's (symbolic links, special files), left in place\n",
	       (unsigned long long)st.skipped);
	print_bytes("before", st.bytes_before);
	print_bytes("after", st.bytes_after);
	store_gc_stats_free(&st);
	return fflush(stdout) ? EXIT_FAILURE_ : EXIT_OK;
}

static int store_verify_main(const char *root)
{
	struct store s = { 0 };
	ingot_error e = { 0 };
	uint64_t checked = 0;
	int r;

	if ((r = store_open(&s, root, &e)) >= 0)
		r = store_verify(&s, &checked, &e);
	store_close(&s);
	if (r < 0)
		return cli_error(&e, EXIT_FAILURE_);
	printf("%llu blobs match their names\n", (unsigned long long)checked);
	return EXIT_OK;
}

int cmd_store(int argc, char **argv)
{
	struct store_gc_opts o = { .workers = 1 };
	int c;
	const struct cli_option opts[] = {
		OPT__STORE(&o.store,
			   "the store (default $XDG_CACHE_HOME/ingot, else ~/.cache/ingot)"),
		OPT_FLAG('n', "dry-run", &o.dry_run, "gc: count what would go, remove nothing"),
		OPT__WORKERS(&o.workers,
			     "gc: threads that unpack an artifact not yet in the store"),
		OPT_END(),
	};

	if ((c = cli_parse(&store_cmd, opts, argc, argv, &optind)) >= 0)
		return c;
	if (optind >= argc)
		return cli_usage_error("store", "missing subcommand (gc or verify)");
	if (!strcmp(argv[optind], "gc")) {
		if (optind + 1 >= argc)
			return cli_usage_error("store", "gc: expected at least one RECIPE to keep");
		o.recipes = (const char *const *)argv + optind + 1;
		o.n_recipes = (size_t)(argc - optind - 1);
		o.source_date_epoch = getenv("SOURCE_DATE_EPOCH");
		return store_gc_main(&o);
	}
	if (!strcmp(argv[optind], "verify")) {
		if (optind + 1 != argc)
			return cli_usage_error("store", "verify: unexpected argument '%s'", argv[optind + 1]);
		if (o.dry_run || o.workers != 1)
			return cli_usage_error("store", "verify: --dry-run and --workers are gc's options");
		return store_verify_main(o.store);
	}
	return cli_usage_error("store", "unknown subcommand '%s' (expected gc or verify)", argv[optind]);
}
