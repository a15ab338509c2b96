/* ingot evidence add: parse a test tool's output into a signed statement. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/evidence.h"
#include "cli/cli.h"
#include "keys/envelope.h"
#include "lib/time.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "verify/promotion.h"

enum { EVIDENCE_EXIT_REFUSED = 2 };

static const struct cli_command evidence_cmd = {
	.name = "evidence",
	.summary = "record signed test evidence about an image",
	.synopsis =
	"    ingot evidence add --manifest M --kind nccl-tests|dcgm-diag|custom|rollback\n"
	"                       --from FILE --key KEY [--key KEY]... [-o OUT] [--level N]\n"
	"                       [--node NAME] [--topology LABEL] [--date TIME]\n",
	.description =
	"    Parses FILE, the output of a real test tool, and writes an in-toto Statement\n"
	"    (predicateType " EVIDENCE_PREDICATE_TYPE ") whose subject is the\n"
	"    image named by the manifest M (its file and sha256) and whose predicate is\n"
	"    the parsed result plus node, topology, NCCL version and date; signed (DSSE)\n"
	"    by each KEY, the test runner's.  Kinds:\n"
	"      nccl-tests  stdout of all_reduce_perf: every row of the size/busbw table,\n"
	"                  out-of-place and in-place, #wrong, out-of-bounds, the average\n"
	"                  bus bandwidth, ranks, hosts and GPU models\n"
	"      dcgm-diag   dcgmi diag -r N -j JSON (give N with --level): every test's\n"
	"                  status (worst over GPUs), warnings, pass/fail counts\n"
	"      custom      any JSON object the runner produces\n"
	"      rollback    a rollback drill: {\"result\": \"pass\"|\"fail\",\n"
	"                  \"rolled_back_to\": IMAGE-SHA256}\n"
	"    Bad input is refused naming the file, the line (or JSON field) and what was\n"
	"    expected; nothing is written then.\n",
	.more =
	"EXIT STATUS\n"
	"    0   written\n"
	"    1   failure (key refused, I/O)\n"
	"    2   the manifest or the tool output was refused\n"
	"    64  usage error\n",
};

static const char *parse_level(const char *arg, void *value)
{
	if (strlen(arg) != 1 || *arg < '1' || *arg > '4')
		return "1 to 4";
	*(unsigned *)value = (unsigned)(*arg - '0');
	return NULL;
}


static char *default_output(const char *from)
{
	const char *base = strrchr(from, '/');
	base = base ? base + 1 : from;
	const char *dot = strrchr(base, '.');
	int n = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
	return xasprintf("%.*s" EVIDENCE_SUFFIX, n, base);
}

void cli_free_keys(struct signing_key **keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		signing_key_free(keys[i]);
}

int cli_load_keys(const char *const *paths, size_t n, struct signing_key **keys)
{
	ingot_error e = { 0 };
	for (size_t i = 0; i < n; i++)
		if (signing_key_load(paths[i], &keys[i], &e) < 0) {
			cli_free_keys(keys, i);
			return cli_error(&e, EXIT_FAILURE_);
		}
	return 0;
}

static int evidence_add(int argc, char **argv)
{
	struct evidence_opts o = { .date = time(NULL) };
	const char *keypaths[SIGN_MAX_KEYS];
	struct signing_key *keys[SIGN_MAX_KEYS];
	_cleanup_free_ char *defout = NULL;
	_cleanup_json_ json_t *env = NULL;
	const char *out = NULL;
	ingot_error e = { 0 };
	size_t n_keys = 0;
	int c, r;

	struct cli_list keylist = { keypaths, 0, SIGN_MAX_KEYS };
	const struct cli_option opts[] = {
		OPT_STRING(0, "manifest", &o.manifest_path, "M",
			   "the image's manifest or its signed envelope"),
		OPT_STRING(0, "kind", &o.kind, "KIND", "see above"),
		OPT_STRING(0, "from", &o.from, "FILE", "the tool's output"),
		OPT__KEYS(&keylist,
			 "runner's private key (repeat for more signatures); an\n"
			 "encrypted key's passphrase comes from INGOT_KEY_PASSPHRASE"),
		OPT__OUTPUT(&out, "OUT",
			   "output (default: FILE's base name + " EVIDENCE_SUFFIX "\n"
			   "in the current directory)"),
		OPT_CALLBACK(0, "level", &o.dcgm_level, "N",
			     "dcgmi diag -r level (1-4; required for dcgm-diag)", parse_level),
		OPT_STRING(0, "node", &o.node, "NAME",
			   "node the test ran on (default: first host in the output,\n"
			   "else this host)"),
		OPT_STRING(0, "topology", &o.topology, "LABEL",
			   "free-form, e.g. \"2x HGX H100, 8x400G NDR\""),
		OPT_CALLBACK(0, "date", &o.date, "TIME", "RFC 3339 or epoch (default: now)",
			     cli_parse_time),
		OPT_END(),
	};

	if ((c = cli_parse(&evidence_cmd, opts, argc, argv, &optind)) >= 0)
		return c;
	n_keys = keylist.n;
	if (optind < argc)
		return cli_usage_error("evidence", "unexpected argument '%s'", argv[optind]);
	if (!o.manifest_path || !o.kind || !o.from || !n_keys)
		return cli_usage_error("evidence", "--manifest, --kind, --from and --key are required");
	if (!strcmp(o.kind, "dcgm-diag") && !o.dcgm_level)
		return cli_usage_error("evidence", "--kind dcgm-diag needs --level N (dcgmi diag -r N)");
	if (!out)
		out = defout = default_output(o.from);
	if ((r = cli_load_keys(keypaths, n_keys, keys)) != 0)
		return r;

	r = evidence_create(&o, keys, n_keys, &env, &e);
	cli_free_keys(keys, n_keys);
	if (r < 0)
		return cli_error(&e, r == -ENOENT || r == -EACCES || r == -EIO || r == -ENOMEM
				 ? EXIT_FAILURE_ : EVIDENCE_EXIT_REFUSED);
	if (json_write_file(out, env, 0644, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	printf("%s: %s evidence, signed by %zu key(s)\n", out, o.kind, n_keys);
	return EXIT_OK;
}

int cmd_evidence(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "add"))
		return evidence_add(argc - 1, argv + 1);
	if (cli_wants_help(argc, argv))
		return evidence_add(argc, argv);   /* its table gives the help */
	return cli_usage_error("evidence", "expected the subcommand 'add'");
}
