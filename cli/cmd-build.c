/* ingot build: the thin front of builder/build.h. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "builder/build.h"
#include "cli/cli.h"
#include "lib/digest.h"

#define BUILD_MAX_VARS 64

static const struct cli_command build_cmd = {
	.name = "build",
	.summary = "build a pool image, its dm-verity tree and manifest from a recipe",
	.synopsis =
	"    ingot build RECIPE -o OUTDIR [--store DIR] [--workers N] [--key KEY]\n"
	"                [--rules DIR] [--date YYYY-MM-DD] [--no-lint] [--max-entries N]\n"
	"                [--max-unpacked-bytes N[K|M|G|T]] [--set NAME=VALUE]... [--quiet]\n",
	.description =
	"    Reads the YAML recipe (see docs/builder.md), checks its tuple against the\n"
	"    version-chain rules, unpacks every artifact into the content-addressed store\n"
	"    (refusing any whose bytes do not match its sha256 pin; a warm store does not\n"
	"    read an unchanged artifact again), stages the image tree, and writes into\n"
	"    OUTDIR:\n"
	"\n"
	"        NAME.sqfs                squashfs image, byte-identical for equal recipes\n"
	"        NAME.verity              dm-verity hash tree (veritysetup format 1)\n"
	"        NAME.manifest.json       every digest of the build (docs/CONTRACTS.md)\n"
	"        NAME.spdx.json           SPDX 2.3 SBOM: the artifacts as packages, every file\n"
	"                                 with its sha256 (docs/builder.md)\n"
	"        NAME.manifest.dsse.json  DSSE envelope signed with --key (only with --key)\n"
	"\n"
	"    NAME is the recipe's name. Files are written under temporary names and\n"
	"    renamed into place only when the whole build succeeded: a failed or\n"
	"    interrupted build leaves no file under an output name. Nothing of the build\n"
	"    machine (clock, user, host name, locale, TZ, umask, directory order, thread\n"
	"    count) reaches the outputs; every timestamp is the recipe's epoch.\n"
	"\n"
	"    On success a summary goes to stdout: image path, sha256, size, file count,\n"
	"    verity root hash. When stderr is a terminal, per-artifact progress\n"
	"    (\"artifact I/N NAME BYTES\") goes to stderr.\n"
	"\n"
	"    A source: or sha256: value may name ${NAME}, given with --set NAME=VALUE:\n"
	"    a recipe file for bytes another step makes (recipes/real/). The pins are\n"
	"    checked on the bytes as for any other artifact.\n",
	.more =
	"ENVIRONMENT\n"
	"    SOURCE_DATE_EPOCH  replaces the recipe's epoch, only if the recipe says\n"
	"                       allow-source-date-epoch: true\n"
	"    XDG_CACHE_HOME     parent of the default store\n"
	"\n"
	"EXIT STATUS\n"
	"    0   the outputs were written\n"
	"    1   the build failed: invalid recipe, artifact missing or not matching its\n"
	"        pin, hostile archive, path conflict, lint error, I/O error\n"
	"    64  usage error\n"
	"\n"
	"EXAMPLES\n"
	"    ingot build recipes/demo.yaml -o out/demo --store out/store\n"
	"    ingot build pool.yaml -o /srv/images -j 4 --key release.key\n"
	"    SOURCE_DATE_EPOCH=1767225600 ingot build pool.yaml -o out\n",
};

static void progress(void *ctx, size_t done, size_t total, const char *name, uint64_t bytes, bool cached)
{
	(void)ctx;
	fprintf(stderr, "artifact %zu/%zu %s %llu%s\n", done, total, name, (unsigned long long)bytes,
		cached ? " (cached)" : "");
}

static bool date_ok(const char *s)
{
	return strlen(s) == 10 && s[4] == '-' && s[7] == '-' &&
	       strspn(s, "0123456789") == 4 && strspn(s + 5, "0123456789") == 2 &&
	       strspn(s + 8, "0123456789") == 2;
}

/* A positive integer; with suffixes, K, M, G or T multiply by 1024^n. */
static int parse_count(const char *s, bool suffixes, uint64_t *out)
{
	static const char units[] = "KMGT";
	const char *u;
	char *end;
	unsigned long long n;
	unsigned shift = 0;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || errno || n < 1)
		return -EINVAL;
	if (*end && suffixes && end[1] == '\0' && (u = strchr(units, *end)))
		shift = 10 * (unsigned)(u - units + 1);
	else if (*end)
		return -EINVAL;
	if (n > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)n << shift;
	return 0;
}

static const char *parse_entries(const char *arg, void *value)
{
	return parse_count(arg, false, value) < 0 ? "a positive integer" : NULL;
}

static const char *parse_bytes(const char *arg, void *value)
{
	return parse_count(arg, true, value) < 0 ?
	       "a positive integer with an optional K, M, G or T suffix" : NULL;
}

int cmd_build(int argc, char **argv)
{
	struct build_opts o = { .workers = 1 };
	const char *vars[BUILD_MAX_VARS + 1] = { NULL };
	struct cli_list varlist = { vars, 0, BUILD_MAX_VARS };
	struct build_result res;
	ingot_error e = { 0 };
	char today[16], hex[SHA256_HEX_LEN + 1];
	bool quiet = false;
	int c;

	const struct cli_option opts[] = {
		OPT__OUTPUT(&o.outdir, "OUTDIR",
			   "directory for the outputs (created if missing); required"),
		OPT__STORE(&o.store,
			   "artifact store (default $XDG_CACHE_HOME/ingot, else\n~/.cache/ingot)"),
		OPT__WORKERS(&o.workers,
			     "threads for unpacking and compression, 1..64 (default 1);\n"
			     "the outputs are identical for every N"),
		OPT__KEY('k', &o.key,
			   "sign the manifest with this private key (PEM, from\n`ingot keys generate`)"),
		OPT_STRING(0, "rules", &o.rules_dir, "DIR",
			   "lint rules directory (default: the installed rules)"),
		OPT_STRING(0, "date", &o.date, "DATE",
			   "date the lint rules are evaluated at (default: today, UTC)"),
		OPT_LIST(0, "set", &varlist, "NAME=VALUE",
			 "the value of ${NAME} in the recipe's source: and sha256:\n"
			 "fields (repeat for each; a reference without one is an error)"),
		OPT_FLAG(0, "no-lint", &o.no_lint, "skip the tuple lint and the kernel ABI check"),
		OPT_CALLBACK(0, "max-entries", &o.max_entries, "N",
			     "refuse an artifact with more than N entries (default\n"
			     "1048576), a guard against archive bombs", parse_entries),
		OPT_CALLBACK(0, "max-unpacked-bytes", &o.max_unpacked_bytes, "N[K|M|G|T]",
			     "refuse a build whose artifacts unpack to more than N\n"
			     "bytes of files, all together (default: the recipe's\n"
			     "max-unpacked-bytes, else 32G); an entry whose declared\n"
			     "size crosses it is refused before it is read", parse_bytes),
		OPT__QUIET(&quiet, "print nothing on success"),
		OPT_END(),
	};

	if ((c = cli_parse(&build_cmd, opts, argc, argv, &optind)) >= 0)
		return c;
	if (optind >= argc)
		return cli_usage_error("build", "missing RECIPE");
	if (optind + 1 != argc)
		return cli_usage_error("build", "expected one RECIPE, got %d arguments", argc - optind);
	if (!o.outdir)
		return cli_usage_error("build", "missing -o OUTDIR");
	if (o.date && !date_ok(o.date))
		return cli_usage_error("build", "--date: expected YYYY-MM-DD, got '%s'", o.date);
	o.recipe = argv[optind];
	for (size_t i = 0; i < varlist.n; i++) {
		const char *eq = strchr(vars[i], '=');
		if (!eq || eq == vars[i])
			return cli_usage_error("build", "--set: expected NAME=VALUE, got '%s'", vars[i]);
	}
	o.vars = vars;
	o.n_vars = varlist.n;
	if (!o.date) {
		time_t now = time(NULL);
		struct tm tm;
		strftime(today, sizeof(today), "%Y-%m-%d", gmtime_r(&now, &tm));
		o.date = today;
	}
	o.source_date_epoch = getenv("SOURCE_DATE_EPOCH");
	/* The store's block and file caches hold a descriptor per segment
	 * (up to 1024 + 512) for the whole build; ingot uses no select(), so
	 * the soft limit (often 1024) may rise to the hard one.  If it cannot,
	 * a segment that does not open is only a cache miss. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* glibc gives each allocating thread an arena of its own (up to 8 per
	 * CPU), and raises its mmap threshold after every large free, so
	 * freed multi-MiB buffers stay in the heap: at 4 GiB a rebuild's peak
	 * then varied from 58 to 68 MiB.  One arena per worker (at least two)
	 * and a fixed threshold: 57-59 MiB every run, no time lost measurably
	 * (docs/bench.md).  Process tuning, so here in the front, not the
	 * library. */
	mallopt(M_ARENA_MAX, o.workers > 2 ? (int)o.workers : 2);
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	if (!quiet && isatty(STDERR_FILENO))
		o.progress = progress;

	if (ingot_build(&o, &res, &e) < 0) {
		build_result_free(&res);
		return cli_error(&e, EXIT_FAILURE_);
	}
	for (size_t i = 0; i < res.lint_warnings; i++)
		fprintf(stderr, "ingot: warning: %s\n", res.warnings[i]);
	if (res.cache_segments_ignored)
		fprintf(stderr, "ingot: warning: store: the file cache has %llu segments more than a build reads (256): their files were compressed again; 'ingot store gc RECIPE...' compacts it\n",
			(unsigned long long)res.cache_segments_ignored);
	if (!quiet) {
		hex_encode(res.image_sha256, 32, hex);
		printf("image     %s\n", res.image_path);
		printf("sha256    %s\n", hex);
		printf("size      %llu bytes\n", (unsigned long long)res.image_size);
		printf("files     %zu (%zu entries)\n", res.files, res.entries);
		hex_encode(res.verity_root, 32, hex);
		printf("verity    %s\n", res.verity_path);
		printf("root      %s\n", hex);
		printf("manifest  %s\n", res.manifest_path);
		printf("sbom      %s\n", res.sbom_path);
		if (res.envelope_path)
			printf("envelope  %s\n", res.envelope_path);
		printf("artifacts %zu (%zu from cache)\n", res.artifacts, res.artifacts_cached);
		if (res.blocks_reused + res.blocks_compressed)
			printf("blocks    %llu compressed, %llu from the block cache\n",
			       (unsigned long long)res.blocks_compressed, (unsigned long long)res.blocks_reused);
		if (res.files_reused)
			printf("reused    %llu files from the file cache\n", (unsigned long long)res.files_reused);
	}
	build_result_free(&res);
	return EXIT_OK;
}
