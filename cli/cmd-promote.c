/* ingot promote: promote an image to a ring when the ring's policy is met. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/evidence.h"
#include "ops/promote.h"
#include "cli/cli.h"
#include "keys/envelope.h"
#include "lib/time.h"
#include "verify/promotion.h"

static const char promote_help[] =
"NAME\n"
"    ingot promote - promote an image to a ring (lab, canary, production)\n"
"\n"
"SYNOPSIS\n"
"    ingot promote --manifest M --ring RING --evidence DIR --key KEY [--key KEY]...\n"
"                  [--rings DIR] [--promotions DIR] [--now TIME]\n"
"\n"
"DESCRIPTION\n"
"    Reads the ring's policy (DIR/RING.yaml, see docs/promote.md) and checks, for\n"
"    the image named by the manifest M:\n"
"      evidence  for each kind the policy lists, a statement in the evidence DIR\n"
"                (*" EVIDENCE_SUFFIX ") signed by the threshold of the kind's\n"
"                keyring, whose subject is this image and whose result meets the\n"
"                bars (busbw at large messages, node count, DCGM level and pass)\n"
"      soak      the image was promoted to the previous ring at least the\n"
"                policy's soak time before --now\n"
"      keys      the given keys meet the ring's promotion keyring threshold\n"
"    If all hold, writes PROMOTIONS/RING-SERIAL" PROMOTION_SUFFIX ": an in-toto\n"
"    Statement (" PROMOTION_PREDICATE_TYPE ") with the ring, the next\n"
"    serial, the image, the policy's digest, the previous ring's promotion and\n"
"    the digests of the evidence used, signed by every KEY.  With rollback\n"
"    evidence (the candidate rolled back to the ring's previous image) and\n"
"    retire-previous-after: rollback, it also retires that previous image.\n"
"    Otherwise nothing is written and every unmet requirement is named.\n"
"\n"
"OPTIONS\n"
"    --manifest M       the image's manifest or signed envelope\n"
"    --ring RING        the ring to promote to\n"
"    --evidence DIR     evidence statements (ingot evidence add)\n"
"    --key KEY          promotion key (repeat to meet a threshold above 1)\n"
"    --rings DIR        ring policies (default recipes/rings)\n"
"    --promotions DIR   promotion statements, read and written (default promotions)\n"
"    --now TIME         RFC 3339 or epoch seconds (default: the clock)\n"
"\n"
"EXIT STATUS\n"
"    0   promoted\n"
"    1   failure (key refused, I/O)\n"
"    2   a policy, keyring or manifest is malformed\n"
"    3   refused: the policy is not met (each reason named)\n"
"    64  usage error\n";

enum { OPT_MANIFEST = 256, OPT_RING, OPT_EVIDENCE, OPT_KEY, OPT_RINGS, OPT_PROMOTIONS, OPT_NOW };

int cmd_promote(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "manifest", required_argument, NULL, OPT_MANIFEST },
		{ "ring", required_argument, NULL, OPT_RING },
		{ "evidence", required_argument, NULL, OPT_EVIDENCE },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "rings", required_argument, NULL, OPT_RINGS },
		{ "promotions", required_argument, NULL, OPT_PROMOTIONS },
		{ "now", required_argument, NULL, OPT_NOW },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct promote_opts o = { .rings_dir = "recipes/rings", .promotions_dir = "promotions",
				  .now = time(NULL) };
	const char *keypaths[SIGN_MAX_KEYS];
	struct signing_key *keys[SIGN_MAX_KEYS];
	struct promote_result res;
	ingot_error e = { 0 };
	size_t n_keys = 0;
	int c, r;

	if (cli_wants_help(argc, argv)) {
		fputs(promote_help, stdout);
		return EXIT_OK;
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_MANIFEST: o.manifest_path = optarg; break;
		case OPT_RING: o.ring = optarg; break;
		case OPT_EVIDENCE: o.evidence_dir = optarg; break;
		case OPT_KEY:
			if (n_keys == SIGN_MAX_KEYS)
				return cli_usage_error("promote", "--key: at most %d keys", SIGN_MAX_KEYS);
			keypaths[n_keys++] = optarg;
			break;
		case OPT_RINGS: o.rings_dir = optarg; break;
		case OPT_PROMOTIONS: o.promotions_dir = optarg; break;
		case OPT_NOW:
			if (time_parse(optarg, &o.now) < 0)
				return cli_usage_error("promote", "--now: expected RFC 3339 or epoch "
						       "seconds, got '%s'", optarg);
			break;
		default: return cli_usage_error("promote", "unknown or incomplete option '%s'",
						argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("promote", "unexpected argument '%s'", argv[optind]);
	if (!o.manifest_path || !o.ring || !o.evidence_dir || !n_keys)
		return cli_usage_error("promote", "--manifest, --ring, --evidence and --key are required");
	if ((r = cli_load_keys(keypaths, n_keys, keys)) != 0)
		return r;
	r = promote_image(&o, keys, n_keys, &res, &e);
	cli_free_keys(keys, n_keys);
	if (r < 0)
		return cli_error(&e, EXIT_FAILURE_);
	printf("%s: promoted to %s, serial %llu, %zu evidence statement(s)%s%.16s%s\n", res.path,
	       o.ring, res.serial, res.n_evidence, *res.retired ? "; retired " : "", res.retired,
	       *res.retired ? "..." : "");
	promote_result_free(&res);
	return EXIT_OK;
}
